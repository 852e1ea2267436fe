//! `webagent resume TRACE`: continues a run from its trace, at the step
//! that did not finish, on the page it was on, with the profile or state
//! file and the approval mode it had (flags given here win). It opens the
//! workbench; `--headless` runs it like `webagent run`.
//!
//! A run the model handed to a person (`hand_over`, exit code 6) goes on
//! once they hand it back: in the workbench with its hand-back key, or
//! with `--headless --headed`, where the page opens in a browser window
//! and Enter on this terminal hands it back.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use super::exit::{run_exit, EXIT_HAND_OVER, EXIT_USAGE};
use super::flags::{RunFlags, SessionFlags};
use super::headless::Headless;
use crate::environment::HeadlessApprover;
use crate::interrupt::Interrupt;
use crate::llm::stop_pair;
use crate::session::{resume_plan, ResumePlan};
use crate::tui::services::{self, WorkbenchOptions};

/// Flags of `webagent resume`.
#[derive(Debug, clap::Args)]
pub struct ResumeArgs {
    /// The trace of the run to continue (`.webagent/sessions/….jsonl`).
    pub trace: PathBuf,
    /// Run headless, printing the step log (or `--json` events), instead
    /// of opening the workbench. A run handed over to a person needs
    /// `--headed` too: Enter on this terminal hands the page back.
    #[arg(long)]
    pub headless: bool,
    /// Headless: approve every action that would need approval.
    #[arg(long, requires = "headless")]
    pub yes: bool,
    /// Headless: print every event as one JSON line.
    #[arg(long, requires = "headless")]
    pub json: bool,
    /// A theme for the workbench (dark, light, a name or a file).
    #[arg(long, value_name = "NAME|FILE")]
    pub theme: Option<String>,
    /// Approval mode and step limit (default: the trace's).
    #[command(flatten)]
    pub run: RunFlags,
    /// Config, model, scripts, sitemaps, secrets, browser (default
    /// profile or state file: the trace's).
    #[command(flatten)]
    pub session: SessionFlags,
}

/// Runs `webagent resume`.
pub fn run(mut args: ResumeArgs) -> anyhow::Result<ExitCode> {
    let plan = match resume_plan(&args.trace) {
        Ok(plan) => plan,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    // What the trace says of the session, unless a flag says otherwise.
    let browser = &mut args.session.browser;
    if browser.profile.is_none() && browser.state.is_none() && browser.connect.is_none() {
        browser.profile = plan.profile();
        browser.state = plan.state();
    }
    if args.run.approve.is_none() {
        args.run.approve = plan.approval();
    }
    if args.run.max_steps.is_none() {
        args.run.max_steps = Some(plan.point.max_steps.max(1));
    }
    let prepared = match args.session.prepare(args.run) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let url = if plan.point.url.is_empty() {
        "about:blank".to_string()
    } else {
        plan.point.url.clone()
    };
    if args.headless {
        if let Some(reason) = &plan.point.prior.handed_back {
            if prepared.config.browser.headless {
                eprintln!(
                    "error: {}: the run was handed over to a person ({reason}); add --headed so \
                     they can act in a browser window, or resume it in the workbench",
                    args.trace.display()
                );
                return Ok(ExitCode::from(EXIT_USAGE));
            }
        }
        let runtime = super::runtime()?;
        return runtime.block_on(headless(plan, url, prepared, args.yes, args.json));
    }
    let mut options = WorkbenchOptions::new(url, prepared);
    options.theme = args.theme;
    options.resume = Some(Box::new(plan));
    services::run(options)?;
    Ok(ExitCode::SUCCESS)
}

async fn headless(
    plan: ResumePlan,
    url: String,
    prepared: crate::session::Prepared,
    yes: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let interrupt = Interrupt::listen().context("listening for Ctrl-C and SIGTERM")?;
    let mut headless = match Headless::start(prepared, Some(&url), json).await {
        Ok(headless) => headless,
        Err(code) => return Ok(code),
    };
    if let Some(reason) = &plan.point.prior.handed_back {
        eprintln!(
            "The agent handed the page over to you: {reason}\nAct in the browser window, then \
             press Enter here to hand it back."
        );
        let waited = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line)
        })
        .await;
        if !matches!(waited, Ok(Ok(n)) if n > 0) {
            eprintln!("error: no Enter came from the terminal; the run was not handed back");
            return Ok(headless.finish_with(ExitCode::from(EXIT_HAND_OVER)).await);
        }
    }
    let (stop_handle, stop_signal) = stop_pair();
    let ctrl_c = interrupt.spawn_then(move || stop_handle.stop());
    let session = &mut headless.session;
    let outcome = session
        .agent_setup()
        .agent(
            &mut session.environment,
            Box::new(HeadlessApprover { yes }),
            stop_signal,
        )
        .run_with(&plan.point.task, plan.point.prior.clone())
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
