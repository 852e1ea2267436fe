//! `webagent run`: one task, headless, from the command line. Prints a
//! readable step log (or, with `--json`, every event as one JSON line),
//! appends every event to a trace file, and exits 0 only when the model
//! finished with success (6 when it handed the page to a person).

use std::process::ExitCode;

use anyhow::Context as _;

use super::exit::{run_exit, EXIT_USAGE};
use super::flags::{parse_page_url, HeadlessFlags};
use super::headless::Headless;
use crate::agent::Prior;
use crate::interrupt::Interrupt;
use crate::llm::stop_pair;
use crate::script::CancelFlag;
use crate::session::{Bare, Oversight, Prepared, TaskCache};

/// Flags of `webagent run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// What the agent should do, in plain words.
    pub task: String,
    /// The page to start on.
    #[arg(long, value_parser = parse_page_url, required_unless_present = "session_name")]
    pub url: Option<String>,
    /// Run the task in the named session (`webagent session start`), from
    /// the page its last command left, and leave the page where the run
    /// ends; its model and approval rules apply.
    #[arg(long = "session", value_name = "NAME", conflicts_with_all = ["url", "cache", "yes", "approve", "max_steps"])]
    pub session_name: Option<String>,
    /// Replay the task's stored recipe with no model call when the cache
    /// holds one for this task and start route; else record the run and
    /// store it. `--cache` alone uses .webagent/cache (default: config
    /// `agent.cache`, off).
    #[arg(long, value_name = "DIR", num_args = 0..=1, require_equals = true,
          default_missing_value = crate::session::cache::DEFAULT_CACHE_DIR)]
    pub cache: Option<std::path::PathBuf>,
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
    if let Some(name) = &args.session_name {
        let request = crate::daemon::Request::Run {
            task: args.task.clone(),
            json: args.flags.json,
        };
        return Ok(super::session_client::forward(name, &request));
    }
    let prepared = match args.flags.session.prepare(args.flags.run) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    // Without a model the run could only fail, after Chromium started and
    // the default endpoint was tried; a task the cache holds needs none.
    let cached = args.cache.is_some() || prepared.config.agent.cache.is_some();
    if let (false, Err(error)) = (cached, prepared.model()) {
        eprintln!("error: {error}");
        return Ok(ExitCode::from(EXIT_USAGE));
    }
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
    // The address itself was read as the flags were (`parse_page_url`).
    Ok(())
}

async fn run_command(args: RunArgs, prepared: Prepared) -> anyhow::Result<ExitCode> {
    // Listening before the browser starts: a SIGTERM from then on ends
    // the run cleanly instead of killing the process with Chromium left.
    let interrupt = Interrupt::listen().context("listening for Ctrl-C and SIGTERM")?;
    let mut headless = match Headless::start(prepared, args.url.as_deref(), args.flags.json).await {
        Ok(headless) => headless,
        Err(code) => return Ok(code),
    };
    let (stop_handle, stop_signal) = stop_pair();
    let cancel = CancelFlag::new();
    // Ctrl-C or SIGTERM stops the run cleanly: the step in flight ends,
    // `done` is written, the trace is complete (a replay's script is
    // cancelled), and Chromium is closed.
    let ctrl_c = {
        let cancel = cancel.clone();
        interrupt.spawn_then(move || {
            stop_handle.stop();
            cancel.cancel();
        })
    };
    let session = &mut headless.session;
    let mut oversight = Oversight::headless(args.flags.yes);
    oversight.stop = stop_signal;
    oversight.cancel = cancel;
    if let Some(dir) = args
        .cache
        .clone()
        .or_else(|| session.config.agent.cache.clone())
    {
        let cache = TaskCache::new(dir);
        let outcome = session
            .run_task_cached(&args.task, &cache, oversight, &Bare)
            .await;
        ctrl_c.abort();
        let code = run_exit(outcome.reason, outcome.success);
        return Ok(headless.finish_with(code).await);
    }
    let outcome = session
        .run_agent(&args.task, Prior::fresh(), oversight, &Bare)
        .await;
    ctrl_c.abort();
    let code = match &outcome {
        Ok(outcome) => run_exit(outcome.reason, outcome.success),
        Err(_) => ExitCode::from(1),
    };
    let code = headless.finish_with(code).await;
    outcome?;
    Ok(code)
}
