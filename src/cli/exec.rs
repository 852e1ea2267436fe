//! `webagent exec` (open a page and run actions on it, observing after
//! each) and `webagent bench step` (the non-LLM part of an agent step
//! against a bare `Runtime.evaluate` round trip).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::flags::{parse_mode, parse_page_url, RunFlags, SessionFlags};
use super::headless::start_reporting;
use super::observe::observation_json;
use crate::actions::{ActionResult, Catalog};
use crate::dom::PageState;
use crate::environment::{ApprovalMode, Environment, EnvironmentError, HeadlessApprover};
use crate::session::{Errand, Session};

/// Flags of `webagent exec`.
#[derive(Debug, clap::Args)]
pub struct ExecArgs {
    /// The page to open.
    #[arg(value_parser = parse_page_url)]
    pub url: String,
    /// Actions to run in order, each as the JSON the model would emit, e.g.
    /// '{"click":{"index":3}}' (the TUI's one-line form, `click 3`, works
    /// too).
    #[arg(required = true, value_name = "ACTION")]
    pub actions: Vec<String>,
    /// Print one JSON line per action: {"action","params","result","url","ms"}.
    #[arg(long)]
    pub json: bool,
    /// After the actions, print the final observation (as `observe --json`
    /// prints it with --json, as the listing otherwise).
    #[arg(long)]
    pub observe: bool,
    /// Accept confirm() and prompt() dialogs instead of dismissing them.
    #[arg(long)]
    pub accept_dialogs: bool,
    /// How long a click or fill keeps waiting for its element to be ready.
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    pub timeout_ms: u64,
    /// When to ask before an action: never, risky (commit and dangerous
    /// actions) or always. Nobody is at hand to ask, so asking means
    /// refusing unless --yes, as in `run` and `recipe run` (default:
    /// config `agent.approve`, risky).
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub approve: Option<ApprovalMode>,
    /// Approve every action that would need approval.
    #[arg(long)]
    pub yes: bool,
    /// Write the model's screenshot of the page after each action (marked,
    /// secrets blanked) into DIR, as 01-click.jpg, 02-input_text.jpg, …
    #[arg(long, value_name = "DIR")]
    pub screenshot: Option<std::path::PathBuf>,
    /// Config, scripts, sitemaps, secrets, browser.
    #[command(flatten)]
    pub session: SessionFlags,
}

/// Runs `webagent exec`; exits 0 when every action succeeded, 1 otherwise.
pub fn run(args: ExecArgs) -> anyhow::Result<ExitCode> {
    let run = RunFlags {
        approve: args.approve,
        max_steps: None,
    };
    let mut prepared = match args.session.prepare(run) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    prepared.exec.action_timeout = Duration::from_millis(args.timeout_ms);
    prepared.exec.accept_dialogs = args.accept_dialogs;
    let runtime = super::runtime()?;
    runtime.block_on(async move {
        let (session, reporter) = match start_reporting(prepared, Some(&args.url)).await {
            Ok(started) => started,
            Err(code) => return Ok(code),
        };
        let code = exec_command(&args, session).await;
        let _ = reporter.await;
        code
    })
}

/// Reads one ACTION argument: JSON when it looks like JSON, the one-line
/// command syntax otherwise. A bad action is a failed result, not an error,
/// so the remaining actions still run.
fn parse_action(catalog: &Catalog, text: &str) -> Result<crate::actions::Action, ActionResult> {
    let trimmed = text.trim();
    if trimmed.starts_with('{') {
        let value: Value = serde_json::from_str(trimmed).map_err(|e| {
            ActionResult::invalid_params(format!("the action is not valid JSON: {e}"))
        })?;
        catalog.parse(&value).map_err(|e| e.to_result())
    } else {
        catalog.parse_command(trimmed).map_err(|e| e.to_result())
    }
}

/// Observes, once more after a short pause if the page was between
/// documents: `Ok(None)` when there is still nothing to observe, an error
/// when the browser is gone for good (nothing more can run).
async fn observe_now(session: &mut Session) -> Result<Option<PageState>, EnvironmentError> {
    for attempt in 0..2 {
        match session.environment.observe().await {
            Ok(state) => return Ok(Some(state)),
            Err(err) if err.fatal => return Err(err),
            Err(err) => {
                // Said on stderr: a reload after a crash, or a browser
                // attached again, is news to the person running actions.
                eprintln!("warning: {}", err.message);
                tracing::warn!(%err, attempt, "observing after an action failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    Ok(None)
}

/// Ends the command on a browser that is gone for good: one error line,
/// and no further action runs against nothing.
async fn give_up(session: Session, error: EnvironmentError) -> anyhow::Result<ExitCode> {
    eprintln!("error: {}", error.message);
    session.close().await;
    Ok(ExitCode::FAILURE)
}

async fn exec_command(args: &ExecArgs, mut session: Session) -> anyhow::Result<ExitCode> {
    let mut state = match observe_now(&mut session).await {
        Ok(state) => state,
        Err(error) => return give_up(session, error).await,
    };
    let mut all_ok = true;
    for (number, text) in args.actions.iter().enumerate() {
        let started = Instant::now();
        let catalog = session.catalog();
        let (name, params, result) = match parse_action(&catalog, text) {
            Ok(action) => {
                let (name, params) = (action.name().to_string(), action.params());
                // The headless rules of `run` and `recipe run`: the road
                // asks, and without --yes asking is refusing.
                let errand = Errand {
                    step: number + 1,
                    page: state.as_ref(),
                    goal: "an action given to `webagent exec`",
                };
                let approver = Box::new(HeadlessApprover { yes: args.yes });
                let passage = session.perform(action, approver, errand).await;
                (name, params, passage.result().clone())
            }
            Err(result) => (text.clone(), Value::Null, result),
        };
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        all_ok &= result.is_ok();
        // Observe after every action so the next one's indices refer to
        // the latest listing.
        let gone = match observe_now(&mut session).await {
            Ok(now) => {
                state = now;
                None
            }
            Err(error) => {
                state = None;
                Some(error)
            }
        };
        let url = match (&state, &gone) {
            (Some(s), _) => s.url.clone(),
            (None, None) => session.environment.current_url().await.unwrap_or_default(),
            (None, Some(_)) => String::new(),
        };
        let picture = match &args.screenshot {
            Some(dir) if state.is_some() => {
                let safe: String = name
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || c == '_' {
                            c
                        } else {
                            '-'
                        }
                    })
                    .take(40)
                    .collect();
                let file = dir.join(format!("{:02}-{safe}.jpg", number + 1));
                picture_after(&mut session, &file).await
            }
            _ => None,
        };
        if args.json {
            let mut line = json!({
                "action": name,
                "params": params,
                "result": result,
                "url": url,
                "ms": (ms * 10.0).round() / 10.0,
            });
            if let (Some(file), Value::Object(fields)) = (&picture, &mut line) {
                fields.insert("screenshot".into(), Value::from(file.display().to_string()));
            }
            println!("{line}");
        } else {
            print_human(&name, &params, &result, ms);
        }
        if let Some(error) = gone {
            return give_up(session, error).await;
        }
    }
    if args.observe {
        match &state {
            Some(s) if args.json => {
                let mut line = json!({"type": "observation"});
                let observed = observation_json(s);
                if let (Value::Object(line), Value::Object(obs)) = (&mut line, observed) {
                    line.extend(obs);
                }
                println!("{line}");
            }
            Some(s) => {
                println!("{}", s.url);
                println!("{}", s.title);
                print!("{}", s.listing);
            }
            None => anyhow::bail!("the page could not be observed after the actions"),
        }
    }
    // An attached browser outlives this command; leave it as it was.
    session.close().await;
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The model's picture of the page as last observed, written to `file`;
/// a failure is a warning, the actions go on.
async fn picture_after(
    session: &mut Session,
    file: &std::path::Path,
) -> Option<std::path::PathBuf> {
    let width = session.config.llm.image_width;
    let written = super::observe::write_screenshot(&mut session.environment, file, width).await;
    match written {
        Ok(_) => Some(file.to_path_buf()),
        Err(error) => {
            eprintln!("warning: no screenshot after this action: {error}");
            None
        }
    }
}

fn print_human(name: &str, params: &Value, result: &ActionResult, ms: f64) {
    let params = if params.is_null() {
        String::new()
    } else {
        format!(" {params}")
    };
    match result {
        ActionResult::Success { data } => {
            let data = data.as_ref().map(|d| format!(" → {d}")).unwrap_or_default();
            println!("ok   {name}{params} ({ms:.0} ms){data}");
        }
        ActionResult::Failure { reason, message } => {
            println!("FAIL {name}{params} ({ms:.0} ms): {reason}: {message}");
        }
    }
}
