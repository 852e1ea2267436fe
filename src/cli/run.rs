//! `webagent run`: one task, headless, from the command line. Prints a
//! readable step log (or, with `--json`, every event as one JSON line),
//! appends every event to a trace file, and exits 0 only when the model
//! finished with success.

use std::process::ExitCode;

use super::flags::HeadlessFlags;
use super::headless::{Headless, EXIT_USAGE};
use crate::environment::HeadlessApprover;
use crate::events::EndReason;
use crate::llm::stop_pair;
use crate::session::Prepared;

/// Flags of `webagent run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// What the agent should do, in plain words.
    pub task: String,
    /// The page to start on.
    #[arg(long)]
    pub url: String,
    /// Approvals, output, config, model, scripts, sitemaps, secrets,
    /// browser.
    #[command(flatten)]
    pub flags: HeadlessFlags,
}

/// Runs `webagent run`.
pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    if let Err(reason) = check(&args) {
        eprintln!("error: {reason}");
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let prepared = match args.flags.session.prepare(args.flags.run) {
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
    if args.flags.run.max_steps == Some(0) {
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
    let mut headless =
        match Headless::start(prepared, Some(&args.url), args.flags.json, false).await {
            Ok(headless) => headless,
            Err(code) => return Ok(code),
        };
    let (stop_handle, stop_signal) = stop_pair();
    // Ctrl-C stops the run cleanly: the step in flight ends, `done` is
    // written, the trace is complete.
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stop_handle.stop();
        }
    });
    let session = &mut headless.session;
    let outcome = session
        .agent_setup()
        .agent(
            &mut session.environment,
            Box::new(HeadlessApprover {
                yes: args.flags.yes,
            }),
            stop_signal,
        )
        .run(&args.task)
        .await;
    ctrl_c.abort();
    let success = matches!(&outcome, Ok(o) if o.success && o.reason == EndReason::Done);
    let code = headless.finish(success).await;
    outcome?;
    Ok(code)
}
