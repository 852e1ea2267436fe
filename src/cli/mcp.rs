//! `webagent mcp`: the session as an MCP server on stdio, for another
//! agent to drive, with or without the workbench beside it.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use tokio::sync::{mpsc, Notify};

use super::exit::EXIT_USAGE;
use super::flags::{parse_page_url, RunFlags, SessionFlags};
use super::headless::start_traced;
use crate::events::Event;
use crate::interrupt::Interrupt;
use crate::llm::stop_pair;
use crate::mcp::{serve_http, serve_session, serve_stdio, WebagentMcp};
use crate::tui::services::WorkbenchOptions;

/// Flags of `webagent mcp`.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// The page to open first (default: about:blank; the client navigates).
    #[arg(long, value_parser = parse_page_url)]
    pub url: Option<String>,
    /// Open the workbench beside the server: the MCP client talks on
    /// stdin/stdout, the workbench draws on the terminal (/dev/tty), and
    /// the person approves, edits or refuses each risky call.
    #[arg(long)]
    pub workbench: bool,
    /// Serve streamable HTTP on 127.0.0.1:PORT instead of stdio (0 picks a
    /// free port; the address is printed on stderr).
    #[arg(long, value_name = "PORT")]
    pub http: Option<u16>,
    /// Without the workbench: approve every call that would need approval
    /// (otherwise such calls are refused, as in a headless run).
    #[arg(long)]
    pub yes: bool,
    /// After an action that changed the page, send the whole page (in the
    /// client's numbering) rather than what changed.
    #[arg(long)]
    pub whole_pages: bool,
    /// Approval mode (who is asked when).
    #[command(flatten)]
    pub run: RunFlags,
    /// Config, scripts (their custom actions become tools), sitemaps,
    /// secrets, browser.
    #[command(flatten)]
    pub session: SessionFlags,
}

/// Runs `webagent mcp`.
pub fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    let prepared = match args.session.prepare(args.run) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let url = args.url.unwrap_or_else(|| "about:blank".into());
    if args.workbench && args.http.is_some() {
        eprintln!("error: --workbench talks MCP on stdio; leave out --http");
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    if args.workbench {
        let mut options = WorkbenchOptions::new(url, prepared);
        options.mcp = true;
        options.mcp_whole_pages = args.whole_pages;
        crate::tui::services::run(options)?;
        return Ok(ExitCode::SUCCESS);
    }
    let runtime = super::runtime()?;
    let ended = runtime.block_on(async move {
        // Listening from the start keeps a signal that comes while Chromium
        // starts; it then ends the session as soon as it is served.
        let interrupt = Interrupt::listen().context("listening for Ctrl-C and SIGTERM")?;
        let (events, events_rx) = mpsc::unbounded_channel::<Event>();
        let (session, trace) = match start_traced(prepared, Some(&url), events).await {
            Ok(started) => started,
            Err(code) => return Ok(code),
        };
        if let Err(error) = &session.opened {
            eprintln!("warning: {error}");
        }
        eprintln!("trace: {}", trace.path().display());
        let tools_changed = Arc::new(Notify::new());
        let recorder = tokio::spawn(crate::mcp::record_events(
            events_rx,
            trace,
            Arc::clone(&tools_changed),
        ));
        let (calls, calls_rx) = mpsc::unbounded_channel();
        let server = WebagentMcp::new(calls, session.scripts.clone());
        server.notify_on(tools_changed);
        let (stop, stop_signal) = stop_pair();
        let answering = tokio::spawn(serve_session(
            session,
            calls_rx,
            args.yes,
            args.whole_pages,
            stop_signal,
        ));
        let serving = async {
            match args.http {
                Some(port) => {
                    serve_http(server, port, |addr| {
                        eprintln!("MCP on http://{addr}/");
                    })
                    .await
                }
                None => serve_stdio(server).await,
            }
        };
        // A signal stops the session, then drops the server as a client
        // that hangs up would: in that order, so the session ends its run
        // as stopped rather than as a client that left.
        let served = {
            tokio::pin!(serving);
            tokio::select! {
                served = &mut serving => served,
                () = interrupt.wait() => {
                    stop.stop();
                    Ok(())
                }
            }
            // The server is dropped here, after the stop.
        };
        // The server is gone, so are the senders of calls: the session ends
        // its run and closes.
        let _ = answering.await;
        let _ = recorder.await;
        served?;
        Ok(ExitCode::SUCCESS)
    });
    // Stdin is read on a blocking thread that cannot be interrupted: after
    // a signal the client may still hold the pipe open, and waiting for
    // that thread would keep the process alive. Everything else is done.
    runtime.shutdown_background();
    ended
}
