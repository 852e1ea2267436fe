//! `webagent exec` (open a page and run actions on it, observing after
//! each) and `webagent bench step` (the non-LLM part of an agent step
//! against a bare `Runtime.evaluate` round trip).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::exit::EXIT_USAGE;
use super::flags::{parse_mode, parse_page_url, SessionFlags};
use super::headless::start_reporting;
use super::observe::observation_json;
use super::output::Output;
use crate::actions::{ActionResult, Catalog, FailureReason};
use crate::daemon::Request;
use crate::dom::PageState;
use crate::environment::{ApprovalMode, Approver, Environment, EnvironmentError, HeadlessApprover};
use crate::events::{Event, StepRecord};
use crate::mcp::ClientView;
use crate::session::{ApproverFactory, Errand, Session};

/// Flags of `webagent exec`.
#[derive(Debug, clap::Args)]
pub struct ExecArgs {
    /// The page to open (with --session there is none: every word is an
    /// action).
    #[arg(value_name = "URL")]
    pub url: Option<String>,
    /// Actions to run in order, each as the JSON the model would emit, e.g.
    /// '{"click":{"index":3}}' (the TUI's one-line form, `click 3`, works
    /// too).
    #[arg(value_name = "ACTION")]
    pub actions: Vec<String>,
    /// Act on the page of the named session (`webagent session start`)
    /// instead of opening one: indices are those of its last listing, and
    /// its approval rules apply (exit 3 when refused, 4 when there is no
    /// such session, 5 when it is gone).
    #[arg(long = "session", value_name = "NAME", conflicts_with_all = ["approve", "yes", "accept_dialogs"])]
    pub session_name: Option<String>,
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
    if let Some(name) = &args.session_name {
        let actions: Vec<String> = args.url.iter().chain(&args.actions).cloned().collect();
        if actions.is_empty() {
            eprintln!("error: give at least one ACTION to run in session `{name}`");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
        let request = Request::Exec {
            actions,
            json: args.json,
            observe: args.observe,
            screenshot: args
                .screenshot
                .as_deref()
                .map(super::session_client::absolute),
        };
        return Ok(super::session_client::forward(name, &request));
    }
    let url = match args.url.as_deref().map(parse_page_url) {
        Some(Ok(url)) => url,
        Some(Err(error)) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
        None => {
            eprintln!("error: give the page to open (URL) or --session NAME");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    if args.actions.is_empty() {
        eprintln!("error: give at least one ACTION to run on {url}");
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let prepared =
        match args
            .session
            .prepare_for_actions(args.approve, args.timeout_ms, args.accept_dialogs)
        {
            Ok(prepared) => prepared,
            Err(code) => return Ok(code),
        };
    let runtime = super::runtime()?;
    runtime.block_on(async move {
        let (session, reporter) = match start_reporting(prepared, Some(&url)).await {
            Ok(started) => started,
            Err(code) => return Ok(code),
        };
        let request = ExecRequest {
            actions: &args.actions,
            json: args.json,
            observe: args.observe,
            screenshot: args.screenshot.as_deref(),
            approvers: headless_approvers(args.yes),
            steps_after: None,
        };
        let code = exec_command(&request, session).await;
        let _ = reporter.await;
        Ok(code)
    })
}

/// What `exec` is asked to do, whoever runs it: the one-shot command or
/// a session process.
pub struct ExecRequest<'a> {
    /// The actions, as given.
    pub actions: &'a [String],
    /// One JSON line per action.
    pub json: bool,
    /// Print the page after the actions.
    pub observe: bool,
    /// Where a screenshot goes after each action.
    pub screenshot: Option<&'a std::path::Path>,
    /// Who approves what would need approval: the headless rules (`--yes`
    /// or refusing), or a session's attached person.
    pub approvers: ApproverFactory,
    /// Record each action as a step of the session's trace, numbered on
    /// from this one (a named session's trace exports as a recipe); `None`
    /// for a command with no trace.
    pub steps_after: Option<usize>,
}

impl std::fmt::Debug for ExecRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecRequest")
            .field("actions", &self.actions)
            .field("json", &self.json)
            .field("observe", &self.observe)
            .field("steps_after", &self.steps_after)
            .finish_non_exhaustive()
    }
}

/// The headless rules: approve everything with `yes` (`--yes`), refuse
/// what needs approval otherwise.
pub fn headless_approvers(yes: bool) -> ApproverFactory {
    Arc::new(move || Box::new(HeadlessApprover { yes }) as Box<dyn Approver>)
}

/// How the actions of one `exec` ended.
#[derive(Debug)]
pub struct ExecEnd {
    /// Every action succeeded.
    pub all_ok: bool,
    /// An action was refused, by the policy or at the approval.
    pub refused: bool,
    /// The browser is gone for good: why (already said as an error).
    pub gone: Option<EnvironmentError>,
    /// Actions that ran (recorded as steps with `steps_after`).
    pub steps: usize,
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

/// An action whose indices are a session's numbering, with the page's
/// current ones instead; an index the session's listing no longer has is
/// the usual failure naming it.
fn in_page_numbering(
    catalog: &Catalog,
    view: &ClientView,
    action: crate::actions::Action,
) -> Result<crate::actions::Action, ActionResult> {
    let mut params = action.params();
    view.translate(&mut params)
        .map_err(|gone| ActionResult::not_found(gone.to_string()))?;
    catalog
        .parse_call(action.name(), params)
        .map_err(|e| e.to_result())
}

/// Observes, once more after a short pause if the page was between
/// documents: `Ok(None)` when there is still nothing to observe, an error
/// when the browser is gone for good (nothing more can run).
pub async fn observe_now(
    session: &mut Session,
    out: &mut Output,
) -> Result<Option<PageState>, EnvironmentError> {
    for attempt in 0..2 {
        match session.environment.observe().await {
            Ok(state) => return Ok(Some(state)),
            Err(err) if err.fatal => return Err(err),
            Err(err) => {
                // Said on stderr: a reload after a crash, or a browser
                // attached again, is news to the person running actions.
                out.err(&format!("warning: {}", err.message));
                tracing::warn!(%err, attempt, "observing after an action failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    Ok(None)
}

async fn exec_command(request: &ExecRequest<'_>, mut session: Session) -> ExitCode {
    let mut out = Output::Console;
    let mut state = match observe_now(&mut session, &mut out).await {
        Ok(state) => state,
        Err(error) => {
            // A browser gone for good: one error line, and no action runs
            // against nothing.
            out.err(&format!("error: {}", error.message));
            session.close().await;
            return ExitCode::FAILURE;
        }
    };
    let end = exec_actions(request, &mut session, &mut state, None, &mut out).await;
    // An attached browser outlives this command; leave it as it was.
    session.close().await;
    if end.all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Runs the actions of `request` in `session`, from the page last
/// observed (`state`, kept current), and says each outcome on `out`. With
/// a session's `view`, indices are in its numbering and the final listing
/// is printed in it.
pub async fn exec_actions(
    request: &ExecRequest<'_>,
    session: &mut Session,
    state: &mut Option<PageState>,
    mut view: Option<&mut ClientView>,
    out: &mut Output,
) -> ExecEnd {
    let mut end = ExecEnd {
        all_ok: true,
        refused: false,
        gone: None,
        steps: 0,
    };
    for (number, text) in request.actions.iter().enumerate() {
        let started = Instant::now();
        let catalog = session.catalog();
        let parsed = parse_action(&catalog, text).and_then(|action| match view.as_deref() {
            Some(view) => in_page_numbering(&catalog, view, action),
            None => Ok(action),
        });
        let (name, params, result) = match parsed {
            Ok(action) => {
                let (name, params) = (action.name().to_string(), action.params());
                let recorded = action.to_json();
                let step = request.steps_after.unwrap_or_default() + end.steps + 1;
                // The road asks whoever approves for the command: the
                // headless rules of `run` and `recipe run` (without --yes
                // asking is refusing), or a person attached to the session.
                let errand = Errand {
                    step,
                    page: state.as_ref(),
                    goal: "an action given to `webagent exec`",
                };
                let passage = session.perform(action, (request.approvers)(), errand).await;
                let result = passage.result().clone();
                end.steps += 1;
                if request.steps_after.is_some() {
                    let ms = started.elapsed().as_millis() as u64;
                    session.events.send(Event::Step(StepRecord::taken(
                        step,
                        recorded,
                        result.clone(),
                        String::new(),
                        (ms, 0),
                    )));
                }
                (name, params, result)
            }
            Err(result) => (text.clone(), Value::Null, result),
        };
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        end.all_ok &= result.is_ok();
        end.refused |= matches!(
            &result,
            ActionResult::Failure {
                reason: FailureReason::Denied | FailureReason::Blocked,
                ..
            }
        );
        // Observe after an action when something needs the page: the next
        // action, whose indices refer to the latest listing, the listing
        // asked for, or a picture. After the last one nothing does yet; the
        // page is left unknown, and a session observes it when the next
        // command needs it (the `observe` a caller runs next anyway, or
        // the next `exec`, before its indices are read). A command costs
        // its action, not a listing nobody reads.
        let page_needed =
            number + 1 < request.actions.len() || request.observe || request.screenshot.is_some();
        let gone = match page_needed {
            false => {
                *state = None;
                None
            }
            true => match observe_now(session, out).await {
                Ok(now) => {
                    *state = now;
                    None
                }
                Err(error) => {
                    *state = None;
                    Some(error)
                }
            },
        };
        if let (Some(view), Some(page)) = (view.as_deref_mut(), state.as_ref()) {
            view.number(page);
        }
        let url = match (&*state, &gone) {
            (Some(s), _) => s.url.clone(),
            (None, None) => session.environment.current_url().await.unwrap_or_default(),
            (None, Some(_)) => String::new(),
        };
        let picture = match request.screenshot {
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
                let labels = view.as_deref().map(ClientView::labels).unwrap_or_default();
                picture_after(session, &file, labels, out).await
            }
            _ => None,
        };
        if request.json {
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
            out.line(&line.to_string());
        } else {
            print_human(out, &name, &params, &result, ms);
        }
        if let Some(error) = gone {
            out.err(&format!("error: {}", error.message));
            end.all_ok = false;
            end.gone = Some(error);
            return end;
        }
    }
    if request.observe {
        let shown = match (state.as_ref(), view) {
            (Some(page), Some(view)) => Some(view.shown(page)),
            (Some(page), None) => Some(page.clone()),
            (None, _) => None,
        };
        match shown {
            Some(s) if request.json => {
                let mut line = json!({"type": "observation"});
                let observed = observation_json(&s);
                if let (Value::Object(line), Value::Object(obs)) = (&mut line, observed) {
                    line.extend(obs);
                }
                out.line(&line.to_string());
            }
            Some(s) => {
                out.line(&s.url);
                out.line(&s.title);
                out.out(&s.listing);
            }
            None => {
                out.err("error: the page could not be observed after the actions");
                end.all_ok = false;
            }
        }
    }
    end
}

/// The model's picture of the page as last observed, written to `file`
/// and marked with `labels` (a session's numbering); a failure is a
/// warning, the actions go on.
async fn picture_after(
    session: &mut Session,
    file: &std::path::Path,
    labels: std::collections::HashMap<usize, usize>,
    out: &mut Output,
) -> Option<std::path::PathBuf> {
    let width = session.config.llm.image_width;
    let written =
        super::observe::write_screenshot(&mut session.environment, file, width, labels).await;
    match written {
        Ok(_) => Some(file.to_path_buf()),
        Err(error) => {
            out.err(&format!(
                "warning: no screenshot after this action: {error}"
            ));
            None
        }
    }
}

fn print_human(out: &mut Output, name: &str, params: &Value, result: &ActionResult, ms: f64) {
    let params = if params.is_null() {
        String::new()
    } else {
        format!(" {params}")
    };
    match result {
        ActionResult::Success { data } => {
            let data = data.as_ref().map(|d| format!(" → {d}")).unwrap_or_default();
            out.line(&format!("ok   {name}{params} ({ms:.0} ms){data}"));
        }
        ActionResult::Failure { reason, message } => {
            out.line(&format!(
                "FAIL {name}{params} ({ms:.0} ms): {reason}: {message}"
            ));
        }
    }
}
