//! `webagent run`: one task, headless, from the command line. Prints a
//! readable step log (or, with `--json`, every event as one JSON line),
//! appends every event to a trace file, and exits 0 only when the model
//! finished with success.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use anyhow::Context;
use tokio::sync::mpsc;

use super::observe::BrowserOpts;
use crate::actions::ActionResult;
use crate::agent::browser_env::BrowserEnvironment;
use crate::agent::{Agent, AgentConfig, ApprovalMode, HeadlessApprover, Secrets};
use crate::browser::act::ExecOptions;
use crate::browser::{BrowserError, BrowserSession};
use crate::config::{Config, Overrides};
use crate::events::{EndReason, Event, TraceWriter};
use crate::llm::{stop_pair, LlmClient};
use crate::sitemap::{Sitemap, SitemapEvent, SitemapSet, SitemapWatcher};

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
    /// A sitemap file or directory (repeatable); the one matching the
    /// page's origin is shown to the model, and edits apply at the next
    /// step.
    #[arg(long, value_name = "PATH")]
    pub sitemap: Vec<PathBuf>,
    /// A Rhai script file or directory (repeatable) whose custom actions
    /// the model may call; edits apply to the next call.
    #[arg(long, value_name = "PATH")]
    pub recipes: Vec<PathBuf>,
    /// The step limit (default: config `agent.max_steps`, 40).
    #[arg(long, value_name = "N")]
    pub max_steps: Option<usize>,
    /// When to ask before an action: never, risky (commit and dangerous
    /// actions) or always. Headless, asking means refusing unless --yes
    /// (default: config `agent.approve`, risky).
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub approve: Option<ApprovalMode>,
    /// Approve every action that would need approval.
    #[arg(long)]
    pub yes: bool,
    /// The model (default: WEBAGENT_MODEL, then config `llm.model`,
    /// gpt-4o-mini).
    #[arg(long)]
    pub model: Option<String>,
    /// The API root of an OpenAI-compatible server (default:
    /// OPENAI_BASE_URL, then config `llm.base_url`, the OpenAI API).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Print every event as one JSON object per line instead of the step
    /// log.
    #[arg(long)]
    pub json: bool,
    /// Where trace files go (default: config `paths.sessions`,
    /// .webagent/sessions).
    #[arg(long, value_name = "DIR")]
    pub sessions_dir: Option<PathBuf>,
    /// A secret the model may type but never sees: `NAME` takes the value
    /// of the environment variable NAME (repeatable). The model writes
    /// `<secret>NAME</secret>`.
    #[arg(long, value_name = "NAME")]
    pub secret: Vec<String>,
    /// A dotenv file (NAME=value lines) whose every entry is a secret
    /// (default: config `secrets_file`). Config `secrets:` adds more.
    #[arg(long, value_name = "FILE")]
    pub secrets_file: Option<PathBuf>,
    /// Read this config file instead of ./webagent.yaml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Let the model run JavaScript in the page (always asks in risky and
    /// always modes).
    #[arg(long)]
    pub allow_javascript: bool,
    /// The browser to use.
    #[command(flatten)]
    pub browser: BrowserOpts,
}

fn parse_mode(text: &str) -> Result<ApprovalMode, String> {
    text.parse()
}

/// A problem with the flags or configuration: exit 2 with the reason.
#[derive(Debug)]
struct UsageError(String);

/// Runs `webagent run`.
pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let loaded = match super::config::load(args.config.as_deref(), &overrides(&args)) {
        Ok(loaded) => loaded,
        Err(code) => return Ok(code),
    };
    let prepared = match prepare(&args, loaded) {
        Ok(prepared) => prepared,
        Err(UsageError(reason)) => {
            eprintln!("error: {reason}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    let runtime = super::runtime()?;
    runtime.block_on(run_command(args, prepared))
}

/// The flags that override configuration.
fn overrides(args: &RunArgs) -> Overrides {
    Overrides {
        model: args.model.clone(),
        base_url: args.base_url.clone(),
        max_steps: args.max_steps,
        approve: args.approve,
        allow_javascript: args.allow_javascript,
        sessions_dir: args.sessions_dir.clone(),
        sitemaps: args.sitemap.clone(),
        secrets_file: args.secrets_file.clone(),
        ..super::config::browser_overrides(&args.browser)
    }
}

/// What is checked before anything starts.
struct Prepared {
    llm: LlmClient,
    sitemaps: SitemapSet,
    secrets: Secrets,
    config: Config,
}

fn prepare(args: &RunArgs, loaded: super::config::Loaded) -> Result<Prepared, UsageError> {
    if args.task.trim().is_empty() {
        return Err(UsageError(
            "the task is empty; say what the agent should do".into(),
        ));
    }
    if args.max_steps == Some(0) {
        return Err(UsageError("--max-steps must be at least 1".into()));
    }
    let url = url::Url::parse(&args.url).map_err(|e| {
        UsageError(format!(
            "--url {:?} is not an absolute URL ({e}); write it like http://127.0.0.1:8080/",
            args.url
        ))
    })?;
    if url.cannot_be_a_base() && url.scheme() != "about" {
        return Err(UsageError(format!(
            "--url {:?} is not a page address",
            args.url
        )));
    }
    let config = loaded.config;
    let llm =
        LlmClient::new(config.llm_config(&loaded.env)).map_err(|e| UsageError(e.to_string()))?;
    let mut sitemaps = SitemapSet::new();
    for path in &config.sitemap_paths() {
        if path.is_dir() {
            // The watcher loads directories; only files are checked here.
            continue;
        }
        let sitemap = Sitemap::load(path).map_err(|e| UsageError(format!("--sitemap: {e}")))?;
        sitemaps.insert(sitemap);
    }
    let mut secrets = config
        .resolve_secrets(&loaded.env)
        .map_err(|e| UsageError(e.to_string()))?;
    for name in &args.secret {
        let value = std::env::var(name).map_err(|_| {
            UsageError(format!(
                "--secret {name}: the environment variable {name} is not set (or not UTF-8)"
            ))
        })?;
        if value.is_empty() {
            return Err(UsageError(format!(
                "--secret {name}: the environment variable {name} is empty"
            )));
        }
        secrets.insert(name.clone(), value);
    }
    crate::config::redact::mask_in_logs(&secrets);
    Ok(Prepared {
        llm,
        sitemaps,
        secrets,
        config,
    })
}

async fn run_command(args: RunArgs, prepared: Prepared) -> anyhow::Result<ExitCode> {
    // The browser first: when it cannot start, nothing else (trace file,
    // watcher) has been created.
    let config = &prepared.config;
    let session = match BrowserSession::start(config.launch_options()).await {
        Ok(session) => session,
        Err(error @ (BrowserError::ChromeNotFound { .. } | BrowserError::ChromeMissingAt(_))) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
        Err(error) => return Err(error).context("starting the browser"),
    };
    let trace = match TraceWriter::create(&config.paths.sessions) {
        Ok(trace) => trace,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    let (events_tx, events_rx) = mpsc::unbounded_channel::<Event>();
    let trace_path = trace.path().to_path_buf();
    let printer = tokio::spawn(print_events(events_rx, trace, args.json));

    // Sitemaps: the files were checked above; the watcher keeps them
    // current and reports reloads as events.
    let sitemap_paths = config.sitemap_paths();
    let (shared, watcher) = if sitemap_paths.is_empty() {
        (Arc::new(RwLock::new(prepared.sitemaps)), None)
    } else {
        let tx = events_tx.clone();
        let watcher = SitemapWatcher::start(&sitemap_paths, move |event| {
            let event = match event {
                SitemapEvent::Reloaded { file, .. } => Event::SitemapReloaded {
                    file: file.display().to_string(),
                    error: None,
                },
                SitemapEvent::Error {
                    file,
                    line,
                    column,
                    message,
                } => Event::SitemapReloaded {
                    file: file.display().to_string(),
                    error: Some(format!("{}:{line}:{column}: {message}", file.display())),
                },
                SitemapEvent::Loaded { .. } | SitemapEvent::Removed { .. } => return,
            };
            let _ = tx.send(event);
        });
        match watcher {
            Ok(watcher) => (watcher.sitemaps(), Some(watcher)),
            Err(error) => {
                tracing::warn!(%error, "sitemap watcher did not start; using the files as loaded");
                (Arc::new(RwLock::new(prepared.sitemaps)), None)
            }
        }
    };

    let tab = session.new_tab("about:blank").await?;
    if let Err(error) = tab.navigate(&args.url, Duration::from_secs(60)).await {
        let _ = events_tx.send(Event::Error {
            error: format!("could not open {}: {error}", args.url),
            fatal: true,
        });
        drop(events_tx);
        drop(watcher);
        let _ = printer.await;
        return Ok(ExitCode::from(1));
    }
    let exec = ExecOptions {
        allow_javascript: config.allow_javascript,
        ..ExecOptions::default()
    };
    let scripts = crate::script::Scripts::default();
    let script_watcher = if args.recipes.is_empty() {
        None
    } else {
        let tx = events_tx.clone();
        let started =
            crate::script::ScriptWatcher::start(scripts.clone(), &args.recipes, move |event| {
                for event in event.to_events() {
                    let _ = tx.send(event);
                }
            });
        match started {
            Ok(watcher) => Some(watcher),
            Err(error) => {
                let _ = events_tx.send(Event::Error {
                    error: format!("--recipes: {error}"),
                    fatal: false,
                });
                None
            }
        }
    };
    let catalog = match scripts.catalog() {
        Ok(catalog) => catalog,
        Err(error) => {
            let _ = events_tx.send(Event::Error {
                error: format!("--recipes: {error}; running with the built-in actions only"),
                fatal: false,
            });
            crate::actions::Catalog::builtin()
        }
    };
    // Wrapped so custom actions run and every targeted result records a
    // locator, which makes the trace exportable as a recipe.
    // The same client serves the agent and `extract`; page text sent for an
    // extraction is masked like the agent's prompts. Navigations the page
    // starts itself that the allowed domains refuse become events.
    let llm = Arc::new(prepared.llm);
    let environment = crate::script::ScriptEnvironment::new(
        BrowserEnvironment::new(tab, exec.clone(), shared.clone())
            .with_observe_options(config.observe_options())
            .with_llm(Arc::clone(&llm), prepared.secrets.clone())
            .with_events(events_tx.clone()),
        scripts,
        exec,
    );
    let (stop_handle, stop_signal) = stop_pair();
    let mut agent = Agent::new(
        llm,
        environment,
        Box::new(HeadlessApprover { yes: args.yes }),
        events_tx,
    )
    .with_catalog(catalog)
    .with_sitemaps(shared)
    .with_stop(stop_signal)
    .with_config(AgentConfig {
        max_steps: config.agent.max_steps,
        approval: config.agent.approve,
        secrets: prepared.secrets,
    });
    // Ctrl-C stops the run cleanly: the step in flight ends, `done` is
    // written, the trace is complete.
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stop_handle.stop();
        }
    });
    let outcome = agent.run(&args.task).await;
    ctrl_c.abort();
    drop(agent);
    drop(watcher);
    drop(script_watcher);
    let printed = printer.await;
    if !args.json {
        eprintln!("trace: {}", trace_path.display());
    }
    if let Ok(Err(error)) = printed {
        eprintln!("warning: {error:#}");
    }
    let outcome = outcome?;
    Ok(if outcome.success && outcome.reason == EndReason::Done {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Writes every event to the trace and prints it, until the agent and the
/// watcher have dropped their senders.
async fn print_events(
    mut events: mpsc::UnboundedReceiver<Event>,
    mut trace: TraceWriter,
    json: bool,
) -> anyhow::Result<()> {
    let mut trace_failed = false;
    // Approval lines wait for their step's line, so each step reads in
    // order: reflection, action, approval, result.
    let mut pending_approvals: Vec<String> = Vec::new();
    while let Some(event) = events.recv().await {
        if !trace_failed {
            if let Err(error) = trace.write(&event) {
                // Keep running: the printed log still shows everything.
                eprintln!("warning: {error}; the trace stops here");
                trace_failed = true;
            }
        }
        let mut stdout = std::io::stdout().lock();
        let written = if json {
            writeln!(stdout, "{}", event.to_json_line()?)
        } else {
            match (&event, step_log_line(&event)) {
                (Event::Approval(_), Some(text)) => {
                    pending_approvals.push(text);
                    Ok(())
                }
                (Event::Step(_), Some(text)) => {
                    let text = match text.find("\n  result: ") {
                        Some(at) if !pending_approvals.is_empty() => format!(
                            "{}\n{}{}",
                            &text[..at],
                            pending_approvals.join("\n"),
                            &text[at..]
                        ),
                        _ => text,
                    };
                    pending_approvals.clear();
                    writeln!(stdout, "{text}")
                }
                (_, Some(text)) => writeln!(stdout, "{text}"),
                (_, None) => Ok(()),
            }
        };
        // A closed pipe (`| head`) ends printing, not the run.
        if written.and_then(|()| stdout.flush()).is_err() {
            break;
        }
    }
    Ok(())
}

/// The readable form of an event, or `None` for those the log leaves out
/// (streamed text, protocol echoes of what the step line shows).
fn step_log_line(event: &Event) -> Option<String> {
    match event {
        Event::RunStarted {
            task,
            url,
            model,
            max_steps,
        } => Some(format!(
            "task: {task}\nstart: {url}  (model {model}, at most {max_steps} steps)"
        )),
        Event::Observation(o) => Some(format!(
            "\nstep {}  {}  ({} elements, {} new)",
            o.step, o.url, o.elements, o.new_elements
        )),
        Event::Step(step) => {
            let mut text = String::new();
            let r = &step.reflection;
            for (label, value) in [
                ("eval", &r.evaluation_previous_goal),
                ("memory", &r.memory),
                ("goal", &r.next_goal),
            ] {
                if !value.trim().is_empty() {
                    text.push_str(&format!("  {label}: {}\n", value.trim()));
                }
            }
            for repair in &step.repairs {
                text.push_str(&format!("  repaired: {repair}\n"));
            }
            let action = match step.action.as_object().and_then(|o| o.iter().next()) {
                Some((name, params)) => format!("{name} {params}"),
                None => "(none)".to_string(),
            };
            text.push_str(&format!("  action: {action}\n"));
            let outcome = match &step.result {
                ActionResult::Success { data: None } => "ok".to_string(),
                ActionResult::Success { data: Some(data) } => {
                    format!("ok {}", crate::agent::prompt::clip(&data.to_string(), 200))
                }
                ActionResult::Failure { reason, message } => format!("FAILED {reason}: {message}"),
            };
            text.push_str(&format!(
                "  result: {outcome}  (observe {} ms, model {} ms, act {} ms)",
                step.timings.observe_ms, step.timings.llm_ms, step.timings.act_ms
            ));
            Some(text)
        }
        Event::Approval(a) => Some(format!(
            "  approval: {} ({} action on {}){}",
            a.decision,
            a.risk,
            a.url,
            a.note
                .as_deref()
                .map(|n| format!(": {n}"))
                .unwrap_or_default()
        )),
        Event::Error { error, fatal } => Some(format!(
            "  {}: {error}",
            if *fatal { "error" } else { "warning" }
        )),
        Event::SitemapReloaded { file, error } | Event::ScriptReloaded { file, error } => {
            Some(match error {
                None => format!("  reloaded {file}"),
                Some(error) => format!("  reload failed, keeping the last good version: {error}"),
            })
        }
        Event::Done {
            success,
            text,
            reason,
            steps,
            usage,
        } => Some(format!(
            "\n{}: {text}\n({steps} steps, {} tokens, ended by {})",
            if *success { "done" } else { "not done" },
            usage.total_tokens,
            match reason {
                EndReason::Done => "done",
                EndReason::MaxSteps => "the step limit",
                EndReason::Stopped => "a stop",
                EndReason::Fatal => "an error",
            }
        )),
        Event::Text { .. }
        | Event::ToolCall { .. }
        | Event::ToolResult { .. }
        | Event::ActionRequest { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{Reflection, StepRecord, StepTimings, TokenUsage};
    use serde_json::json;

    #[test]
    fn a_step_reads_as_reflection_action_and_result() {
        let step = Event::Step(StepRecord {
            index: 2,
            reflection: Reflection {
                evaluation_previous_goal: "Success: the form opened".into(),
                memory: String::new(),
                next_goal: "send it".into(),
            },
            action: json!({"click": {"index": 4}}),
            result: ActionResult::denied("not approved"),
            repairs: vec!["the action name `Click` was read as `click`".into()],
            timings: StepTimings {
                observe_ms: 5,
                llm_ms: 700,
                act_ms: 1,
            },
            usage: None,
            prompt_chars: 3000,
            prompt: String::new(),
            raw_response: String::new(),
        });
        let text = step_log_line(&step).unwrap();
        assert_eq!(
            text,
            "  eval: Success: the form opened\n  goal: send it\n  repaired: the action name `Click` was read as `click`\n  action: click {\"index\":4}\n  result: FAILED denied: not approved  (observe 5 ms, model 700 ms, act 1 ms)"
        );
        let done = Event::Done {
            success: false,
            text: "gave up".into(),
            reason: EndReason::MaxSteps,
            steps: 40,
            usage: TokenUsage {
                total_tokens: 1234,
                ..TokenUsage::default()
            },
        };
        assert_eq!(
            step_log_line(&done).unwrap(),
            "\nnot done: gave up\n(40 steps, 1234 tokens, ended by the step limit)"
        );
        assert!(step_log_line(&Event::Text {
            content: "x".into()
        })
        .is_none());
    }
}
