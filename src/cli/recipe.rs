//! `webagent recipe run|check`, `webagent export` and `webagent bench
//! script`.
//!
//! `recipe run` behaves like `webagent run` without the model: the same
//! events (step log or `--json` lines), a trace file, the approval gate,
//! exit 0 on success, 1 when the recipe fails, 2 for bad usage.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::observe::BrowserOpts;
use crate::actions::ActionResult;
use crate::agent::browser_env::BrowserEnvironment;
use crate::agent::{AgentConfig, ApprovalMode, HeadlessApprover};
use crate::browser::act::ExecOptions;
use crate::browser::{BrowserError, BrowserSession};
use crate::events::{EndReason, Event, TokenUsage, TraceWriter, DEFAULT_SESSIONS_DIR};
use crate::llm::{LlmClient, LlmConfig};
use crate::script::host::LlmSubAgent;
use crate::script::{
    export_recipe, CancelFlag, HostCall, Limits, RecipeHost, ScriptEnvironment, ScriptError,
    ScriptHost, ScriptWatcher, Scripts,
};
use crate::sitemap::SitemapSet;

/// Exit code for bad usage or configuration.
const EXIT_USAGE: u8 = 2;

/// The recipe subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum RecipeCommand {
    /// Run a recipe headless, like `webagent run` without the model.
    Run(Box<RunArgs>),
    /// Compile script files and list the actions and recipes they declare.
    Check(CheckArgs),
}

/// Flags of `webagent recipe run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The script file that declares the recipe.
    pub file: PathBuf,
    /// Which recipe to run (needed when the file declares several).
    #[arg(long, value_name = "NAME")]
    pub recipe: Option<String>,
    /// The page to start on (the recipe may navigate itself).
    #[arg(long)]
    pub url: Option<String>,
    /// More script files or directories whose custom actions the recipe
    /// may call (repeatable); edits apply while the recipe runs.
    #[arg(long, value_name = "PATH")]
    pub recipes: Vec<PathBuf>,
    /// When to ask before a step: never, risky or always. Headless, asking
    /// means refusing unless --yes.
    #[arg(long, value_name = "MODE", default_value = "risky", value_parser = parse_mode)]
    pub approve: ApprovalMode,
    /// Approve every step that would need approval.
    #[arg(long)]
    pub yes: bool,
    /// Print every event as one JSON object per line.
    #[arg(long)]
    pub json: bool,
    /// Where trace files go.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_SESSIONS_DIR)]
    pub sessions_dir: PathBuf,
    /// The model for `agent("…")` sub-goals (default: WEBAGENT_MODEL).
    #[arg(long)]
    pub model: Option<String>,
    /// The API root for `agent("…")` sub-goals (default: OPENAI_BASE_URL).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The browser to use.
    #[command(flatten)]
    pub browser: BrowserOpts,
}

/// Flags of `webagent recipe check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Script files to compile.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

fn parse_mode(text: &str) -> Result<ApprovalMode, String> {
    text.parse()
}

/// Runs a recipe subcommand.
pub fn run(command: RecipeCommand) -> anyhow::Result<ExitCode> {
    match command {
        RecipeCommand::Check(args) => Ok(check(&args)),
        RecipeCommand::Run(args) => {
            let runtime = super::runtime()?;
            runtime.block_on(run_recipe(*args))
        }
    }
}

fn check(args: &CheckArgs) -> ExitCode {
    let scripts = Scripts::default();
    let mut failed = false;
    for file in &args.files {
        match scripts.check_file(file) {
            Ok(summary) => {
                let list = |names: &[String]| {
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                };
                println!(
                    "{}: actions: {}; recipes: {}",
                    summary.file,
                    list(&summary.actions),
                    list(&summary.recipes)
                );
            }
            Err(error) => {
                failed = true;
                println!("{}", located_text(file, &error));
            }
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `FILE:LINE:COLUMN: message` for every error, even those without a
/// place in the file.
fn located_text(file: &std::path::Path, error: &ScriptError) -> String {
    match error.located() {
        Some(_) => error.to_string(),
        None => format!("{}:0:0: {error}", file.display()),
    }
}

async fn run_recipe(args: RunArgs) -> anyhow::Result<ExitCode> {
    let scripts = Scripts::default();
    // The files are checked before the browser starts, so a typo costs no
    // Chromium launch.
    let mut paths = vec![args.file.clone()];
    paths.extend(args.recipes.iter().cloned());
    for path in &paths {
        let loaded = if path.is_dir() {
            scripts.load_dir(path).into_iter().find_map(Result::err)
        } else {
            scripts.load_file(path).err()
        };
        if let Some(error) = loaded {
            eprintln!("error: {}", located_text(path, &error));
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    }
    if let Some(url) = &args.url {
        if let Err(error) = url::Url::parse(url) {
            eprintln!("error: --url {url:?} is not an absolute URL ({error})");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    }
    let recipes = scripts.recipes();
    let name = match &args.recipe {
        Some(name) => name.clone(),
        None => match recipes.as_slice() {
            [only] => only.name.clone(),
            [] => {
                eprintln!("error: {} declares no recipe", args.file.display());
                return Ok(ExitCode::from(EXIT_USAGE));
            }
            several => {
                let names: Vec<&str> = several.iter().map(|r| r.name.as_str()).collect();
                eprintln!(
                    "error: {} declares several recipes ({}); pick one with --recipe NAME",
                    args.file.display(),
                    names.join(", ")
                );
                return Ok(ExitCode::from(EXIT_USAGE));
            }
        },
    };
    if !recipes.iter().any(|r| r.name == name) {
        eprintln!(
            "error: no recipe named `{name}`; available: {}",
            recipes
                .iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return Ok(ExitCode::from(EXIT_USAGE));
    }

    let session = match BrowserSession::start(args.browser.launch_options()).await {
        Ok(session) => session,
        Err(error @ (BrowserError::ChromeNotFound { .. } | BrowserError::ChromeMissingAt(_))) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
        Err(error) => return Err(error).context("starting the browser"),
    };
    let trace = match TraceWriter::create(&args.sessions_dir) {
        Ok(trace) => trace,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    let trace_path = trace.path().to_path_buf();
    let (events_tx, events_rx) = mpsc::unbounded_channel::<Event>();
    let printer = tokio::spawn(print_events(events_rx, trace, args.json));

    let watcher = {
        let tx = events_tx.clone();
        ScriptWatcher::start(scripts.clone(), &paths, move |event| {
            // The first load was checked above; report changes only.
            if matches!(
                event,
                crate::script::ScriptEvent::Loaded {
                    reloaded: false,
                    ..
                }
            ) {
                return;
            }
            for event in event.to_events() {
                let _ = tx.send(event);
            }
        })
    };
    let watcher = match watcher {
        Ok(watcher) => Some(watcher),
        Err(error) => {
            tracing::warn!(%error, "script watcher did not start; edits will not apply");
            None
        }
    };

    let start_url = args.url.clone().unwrap_or_else(|| "about:blank".into());
    let tab = session.new_tab("about:blank").await?;
    if start_url != "about:blank" {
        if let Err(error) = tab.navigate(&start_url, Duration::from_secs(60)).await {
            let _ = events_tx.send(Event::Error {
                error: format!("could not open {start_url}: {error}"),
                fatal: true,
            });
            drop(events_tx);
            drop(watcher);
            let _ = printer.await;
            return Ok(ExitCode::from(1));
        }
    }
    let exec = ExecOptions::default();
    let sitemaps = Arc::new(RwLock::new(SitemapSet::new()));
    let environment = ScriptEnvironment::new(
        BrowserEnvironment::new(tab, exec.clone(), sitemaps),
        scripts.clone(),
        exec,
    );
    let mut host = RecipeHost::new(
        environment,
        Box::new(HeadlessApprover { yes: args.yes }),
        args.approve,
        events_tx.clone(),
    );
    let mut config = LlmConfig::from_env();
    if let Some(model) = &args.model {
        config.model = model.clone();
    }
    if let Some(base_url) = &args.base_url {
        config.base_url = base_url.clone();
    }
    let model = config.model.clone();
    if config.api_key.is_some() || args.base_url.is_some() {
        if let (Ok(llm), Ok(catalog)) = (LlmClient::new(config), scripts.catalog()) {
            host = host.with_sub_agent(Box::new(LlmSubAgent {
                llm: Arc::new(llm),
                catalog,
                config: AgentConfig {
                    approval: args.approve,
                    ..AgentConfig::default()
                },
                yes: args.yes,
            }));
        }
    }
    let _ = events_tx.send(Event::RunStarted {
        task: format!("recipe {name} ({})", args.file.display()),
        url: start_url,
        model: format!("none (recipe; {model} for agent sub-goals)"),
        max_steps: 0,
    });
    let cancel = CancelFlag::new();
    let ctrl_c = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        })
    };
    let outcome = scripts.run_recipe(Some(&name), &mut host, &cancel).await;
    ctrl_c.abort();
    let steps = host.steps();
    let (success, text, reason) = match outcome {
        Ok(value) => (
            true,
            match value {
                Value::Null => format!("recipe {name} finished"),
                Value::String(text) => text,
                other => other.to_string(),
            },
            EndReason::Done,
        ),
        Err(ScriptError::Cancelled) => (false, "stopped by the person".into(), EndReason::Stopped),
        Err(error) => {
            let stopped = host.stopped();
            let _ = events_tx.send(Event::Error {
                error: error.to_string(),
                fatal: true,
            });
            let reason = if stopped {
                EndReason::Stopped
            } else {
                EndReason::Fatal
            };
            (false, error.to_string(), reason)
        }
    };
    let _ = events_tx.send(Event::Done {
        success,
        text,
        reason,
        steps,
        usage: TokenUsage::default(),
    });
    drop(host);
    drop(events_tx);
    drop(watcher);
    let printed = printer.await;
    if !args.json {
        eprintln!("trace: {}", trace_path.display());
    }
    if let Ok(Err(error)) = printed {
        eprintln!("warning: {error:#}");
    }
    Ok(if success {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Writes every event to the trace and prints it (a step log, or JSON
/// lines), until every sender is gone.
async fn print_events(
    mut events: mpsc::UnboundedReceiver<Event>,
    mut trace: TraceWriter,
    json: bool,
) -> anyhow::Result<()> {
    let mut trace_failed = false;
    while let Some(event) = events.recv().await {
        if !trace_failed {
            if let Err(error) = trace.write(&event) {
                eprintln!("warning: {error}; the trace stops here");
                trace_failed = true;
            }
        }
        let line = if json {
            Some(event.to_json_line()?)
        } else {
            log_line(&event)
        };
        if let Some(line) = line {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`| head`) ends printing, not the run.
            if writeln!(stdout, "{line}")
                .and_then(|()| stdout.flush())
                .is_err()
            {
                break;
            }
        }
    }
    Ok(())
}

/// The readable form of an event for the recipe log.
fn log_line(event: &Event) -> Option<String> {
    match event {
        Event::RunStarted { task, url, .. } => Some(format!("{task}\nstart: {url}")),
        Event::Step(step) => {
            let action = match step.action.as_object().and_then(|o| o.iter().next()) {
                Some((name, params)) => format!("{name} {params}"),
                None => "(none)".to_string(),
            };
            let outcome = match &step.result {
                ActionResult::Success { .. } => "ok".to_string(),
                ActionResult::Failure { reason, message } => format!("FAILED {reason}: {message}"),
            };
            Some(format!(
                "step {}: {action}\n  result: {outcome}  ({} ms)",
                step.index, step.timings.act_ms
            ))
        }
        Event::Approval(a) => Some(format!(
            "  approval: {} ({} on {})",
            a.decision, a.risk, a.url
        )),
        Event::Text { content } => Some(format!("log: {}", content.trim_end())),
        Event::Error { error, .. } => Some(format!("error: {error}")),
        Event::ScriptReloaded { file, error: None } => Some(format!("reloaded {file}")),
        Event::ScriptReloaded {
            file,
            error: Some(error),
        } => Some(format!("reload of {file} failed: {error}")),
        Event::Done {
            success,
            text,
            steps,
            ..
        } => Some(format!(
            "{}: {text} ({steps} steps)",
            if *success { "done" } else { "failed" }
        )),
        _ => None,
    }
}

/// Flags of `webagent export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// The session trace (`.webagent/sessions/<time>.jsonl`).
    pub trace: PathBuf,
    /// Where to write the recipe.
    #[arg(long, value_name = "OUT.rhai")]
    pub recipe: PathBuf,
}

/// Runs `webagent export`.
pub fn export(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let source = match export_recipe(&args.trace) {
        Ok(source) => source,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(1));
        }
    };
    // What is written must load: a recipe that does not compile would only
    // fail later, far from its cause.
    if let Err(error) = Scripts::default().load_source(&args.recipe.display().to_string(), &source)
    {
        eprintln!("error: the exported recipe does not compile ({error}); please report this");
        return Ok(ExitCode::from(1));
    }
    std::fs::write(&args.recipe, &source)
        .with_context(|| format!("writing {}", args.recipe.display()))?;
    println!(
        "wrote {} (recipe `replay`; run it with: webagent recipe run {})",
        args.recipe.display(),
        args.recipe.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Flags of `webagent bench script`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Calls per measurement.
    #[arg(long, default_value_t = 2000)]
    pub calls: u32,
}

/// A host that answers every call at once, so the benchmark measures the
/// script side and the channel, not a browser.
struct InstantHost;

impl ScriptHost for InstantHost {
    async fn handle(&mut self, call: HostCall) -> Result<Value, String> {
        Ok(match call {
            HostCall::Observe => {
                json!({"url": "http://127.0.0.1/", "title": "", "text": "", "elements": []})
            }
            _ => Value::Null,
        })
    }
}

/// The same work as the benchmark's custom action, in plain Rust.
fn add_one(params: &Value) -> ActionResult {
    let n = params.get("n").and_then(Value::as_i64).unwrap_or(0);
    ActionResult::ok_with(json!({ "n": n + 1 }))
}

/// Runs `webagent bench script`: a custom action's call overhead (thread,
/// engine, conversions) and one host round trip, against a plain Rust call.
pub fn bench(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let calls = args.calls.max(1);
    let scripts = Scripts::new(Limits::default(), None);
    scripts
        .load_source(
            "bench.rhai",
            r#"
action("add_one", #{ description: "Adds one", params: #{ n: #{ type: "integer" } }, risk: "read" });
fn add_one(p) { #{ n: p.n + 1 } }
action("ask_url", #{ description: "Reads the URL through the host", risk: "read" });
fn ask_url() { url() }
"#,
        )
        .map_err(|e| anyhow::anyhow!("the benchmark script does not load: {e}"))?;
    let runtime = super::runtime()?;
    let started = Instant::now();
    for i in 0..calls {
        std::hint::black_box(add_one(&json!({ "n": i })));
    }
    let rust = started.elapsed();
    let (script, host) = runtime.block_on(async {
        let mut host = InstantHost;
        let cancel = CancelFlag::new();
        let started = Instant::now();
        for i in 0..calls {
            let result = scripts
                .call_action("add_one", json!({ "n": i }), &mut host, &cancel)
                .await;
            std::hint::black_box(result);
        }
        let script = started.elapsed();
        let started = Instant::now();
        for _ in 0..calls {
            let result = scripts
                .call_action("ask_url", json!({}), &mut host, &cancel)
                .await;
            std::hint::black_box(result);
        }
        (script, started.elapsed())
    });
    let per = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(calls);
    println!("custom action call overhead ({calls} calls each)");
    println!(
        "  plain Rust call:                {:>10.2} µs/call",
        per(rust)
    );
    println!(
        "  script action (no host call):   {:>10.2} µs/call",
        per(script)
    );
    println!(
        "  script action + 1 host call:    {:>10.2} µs/call (host round trip ≈ {:.2} µs)",
        per(host),
        (per(host) - per(script)).max(0.0)
    );
    println!(
        "  ratio script/plain:             {:>10.0}x",
        per(script) / per(rust).max(1e-9)
    );
    Ok(ExitCode::SUCCESS)
}
