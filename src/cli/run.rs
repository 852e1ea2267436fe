//! `webagent run`: one task, headless, from the command line. Prints a
//! readable step log (or, with `--json`, every event as one JSON line),
//! appends every event to a trace file, and exits 0 only when the model
//! finished with success.

use std::process::ExitCode;

use tokio::sync::mpsc;

use super::flags::{RunFlags, SessionFlags};
use crate::agent::HeadlessApprover;
use crate::events::{EndReason, Event, TraceWriter};
use crate::llm::stop_pair;
use crate::session::{print_events, Prepared};

/// Exit code for bad usage or configuration.
const EXIT_USAGE: u8 = 2;

/// Flags of `webagent run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// What the agent should do, in plain words.
    pub task: String,
    /// The page to start on.
    #[arg(long)]
    pub url: String,
    /// Approve every action that would need approval.
    #[arg(long)]
    pub yes: bool,
    /// Print every event as one JSON object per line instead of the step
    /// log.
    #[arg(long)]
    pub json: bool,
    /// Approval mode and step limit.
    #[command(flatten)]
    pub run: RunFlags,
    /// Config, model, scripts, sitemaps, secrets, browser.
    #[command(flatten)]
    pub session: SessionFlags,
}

/// Runs `webagent run`.
pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    if let Err(reason) = check(&args) {
        eprintln!("error: {reason}");
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let prepared = match args.session.prepare(args.run) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let runtime = super::runtime()?;
    runtime.block_on(run_command(args, prepared))
}

/// What is wrong with the flags themselves.
fn check(args: &RunArgs) -> Result<(), String> {
    if args.task.trim().is_empty() {
        return Err("the task is empty; say what the agent should do".into());
    }
    if args.run.max_steps == Some(0) {
        return Err("--max-steps must be at least 1".into());
    }
    let url = url::Url::parse(&args.url).map_err(|e| {
        format!(
            "--url {:?} is not an absolute URL ({e}); write it like http://127.0.0.1:8080/",
            args.url
        )
    })?;
    if url.cannot_be_a_base() && url.scheme() != "about" {
        return Err(format!("--url {:?} is not a page address", args.url));
    }
    Ok(())
}

async fn run_command(args: RunArgs, prepared: Prepared) -> anyhow::Result<ExitCode> {
    // The browser first: when it cannot start, nothing else (trace file,
    // watchers) has been created. Events wait in the channel meanwhile.
    let (events_tx, events_rx) = mpsc::unbounded_channel::<Event>();
    let sessions_dir = prepared.config.paths.sessions.clone();
    let mut session = match prepared.start(Some(&args.url), events_tx).await {
        Ok(session) => session,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(if error.is_usage() {
                EXIT_USAGE
            } else {
                1
            }));
        }
    };
    let trace = match TraceWriter::create(&sessions_dir) {
        Ok(trace) => trace,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    let trace_path = trace.path().to_path_buf();
    let printer = tokio::spawn(print_events(events_rx, trace, args.json, false));
    let outcome = if let Err(error) = session.opened.clone() {
        let _ = session.events.send(Event::Error { error, fatal: true });
        None
    } else {
        let (stop_handle, stop_signal) = stop_pair();
        // Ctrl-C stops the run cleanly: the step in flight ends, `done` is
        // written, the trace is complete.
        let ctrl_c = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                stop_handle.stop();
            }
        });
        let setup = session.agent_setup();
        let mut agent = setup.agent(
            &mut session.environment,
            Box::new(HeadlessApprover { yes: args.yes }),
            stop_signal,
        );
        let outcome = agent.run(&args.task).await;
        ctrl_c.abort();
        Some(outcome)
    };
    drop(session);
    let printed = printer.await;
    if !args.json {
        eprintln!("trace: {}", trace_path.display());
    }
    if let Ok(Err(error)) = printed {
        eprintln!("warning: {error:#}");
    }
    Ok(match outcome {
        Some(outcome) => {
            let outcome = outcome?;
            if outcome.success && outcome.reason == EndReason::Done {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        None => ExitCode::from(1),
    })
}
