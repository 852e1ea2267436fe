//! The frame of a headless command that runs something in a session
//! (`run`, `recipe run`): the session started, its events printed and
//! written to a trace as they happen, and the ending reported the same
//! way whatever ran.

use std::path::PathBuf;
use std::process::ExitCode;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::exit::EXIT_USAGE;
use crate::events::{Event, EventError, TraceWriter};
use crate::session::{print_events, Prepared, Session};

/// Starts the session on `url` with its events going to `events`, then
/// its trace file: the browser first, so a browser that cannot start
/// leaves no trace file behind. On failure the reason is printed and the
/// exit code comes back (2 for what the person must fix).
pub async fn start_traced(
    prepared: Prepared,
    url: Option<&str>,
    events: mpsc::UnboundedSender<Event>,
) -> Result<(Session, TraceWriter), ExitCode> {
    let sessions_dir = prepared.config.paths.sessions.clone();
    let session = prepared.start(url, events).await.map_err(|error| {
        eprintln!("error: {error}");
        ExitCode::from(if error.is_usage() { EXIT_USAGE } else { 1 })
    })?;
    let trace = TraceWriter::create(&sessions_dir).map_err(|error| {
        eprintln!("error: {error}");
        ExitCode::from(EXIT_USAGE)
    })?;
    Ok((session, trace))
}

/// Starts the session on `url` for a command whose stdout is its own
/// (`exec`, `state save`): what the session reports by itself (a
/// navigation the allowed domains refused, a reload) goes to stderr. A
/// first page that does not open is an error. On failure the reason is
/// printed and the exit code comes back.
pub async fn start_reporting(
    prepared: Prepared,
    url: Option<&str>,
) -> Result<(Session, JoinHandle<()>), ExitCode> {
    let (events, mut reports) = mpsc::unbounded_channel::<Event>();
    let reporter = tokio::spawn(async move {
        while let Some(event) = reports.recv().await {
            if let Some(line) = crate::session::log_line(&event) {
                eprintln!("{}", line.trim_start());
            }
        }
    });
    let session = prepared.start(url, events).await.map_err(|error| {
        eprintln!("error: {error}");
        ExitCode::from(if error.is_usage() { EXIT_USAGE } else { 1 })
    })?;
    if let Err(error) = &session.opened {
        eprintln!("error: {error}");
        return Err(ExitCode::from(1));
    }
    Ok((session, reporter))
}

/// A started session whose events are being printed.
pub struct Headless {
    /// The session.
    pub session: Session,
    printer: JoinHandle<Result<(), EventError>>,
    trace: PathBuf,
    json: bool,
}

impl Headless {
    /// Starts the session on `url`, then the trace file and the printer
    /// (`json` lines or the step log). The browser comes first: when it cannot start, no trace
    /// file is left behind. When the first page does not open, that is
    /// the run's fatal error and the command's exit code comes back.
    pub async fn start(
        prepared: Prepared,
        url: Option<&str>,
        json: bool,
    ) -> Result<Headless, ExitCode> {
        let (events, events_rx) = mpsc::unbounded_channel::<Event>();
        let (session, trace) = start_traced(prepared, url, events).await?;
        let headless = Headless {
            trace: trace.path().to_path_buf(),
            printer: tokio::spawn(print_events(events_rx, trace, json)),
            session,
            json,
        };
        if let Err(error) = headless.session.opened.clone() {
            headless.session.events.send(Event::Error {
                error: error.to_string(),
                fatal: true,
            });
            return Err(headless.finish(false).await);
        }
        Ok(headless)
    }

    /// Closes the session, waits until every event is printed, names the
    /// trace, and gives the exit code: 0 for `success`, 1 otherwise.
    pub async fn finish(self, success: bool) -> ExitCode {
        let code = if success {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        };
        self.finish_with(code).await
    }

    /// [`Headless::finish`], giving `code`.
    pub async fn finish_with(self, code: ExitCode) -> ExitCode {
        self.session.close().await;
        let printed = self.printer.await;
        if !self.json {
            eprintln!("trace: {}", self.trace.display());
        }
        if let Ok(Err(error)) = printed {
            eprintln!("warning: {error:#}");
        }
        code
    }
}
