//! `webagent exec` (open a page and run actions on it, observing after
//! each) and `webagent bench step` (the non-LLM part of an agent step
//! against a bare `Runtime.evaluate` round trip).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::flags::{RunFlags, SessionFlags};
use super::observe::{observation_json, BrowserOpts};
use crate::actions::{ActionResult, Catalog};
use crate::agent::Environment;
use crate::browser::act::{ExecOptions, Executor};
use crate::browser::{BrowserSession, ObserveOptions};
use crate::dom::PageState;
use crate::events::Event;
use crate::serve::PageServer;
use crate::session::Session;
use anyhow::Context;

/// Flags of `webagent exec`.
#[derive(Debug, clap::Args)]
pub struct ExecArgs {
    /// The page to open.
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
    /// Config, scripts, sitemaps, secrets, browser.
    #[command(flatten)]
    pub session: SessionFlags,
}

/// Runs `webagent exec`; exits 0 when every action succeeded, 1 otherwise.
pub fn run(args: ExecArgs) -> anyhow::Result<ExitCode> {
    let mut prepared = match args.session.prepare(RunFlags::default()) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    prepared.exec.action_timeout = Duration::from_millis(args.timeout_ms);
    prepared.exec.accept_dialogs = args.accept_dialogs;
    let runtime = super::runtime()?;
    runtime.block_on(async move {
        // What the session reports on its own (a navigation the page
        // started that the allowed domains refused, a reload) goes to
        // stderr, so stdout stays one line per action.
        let (events, mut reports) = mpsc::unbounded_channel::<Event>();
        let reporter = tokio::spawn(async move {
            while let Some(event) = reports.recv().await {
                if let Some(line) = crate::session::log_line(&event) {
                    eprintln!("{}", line.trim_start());
                }
            }
        });
        let session = match prepared.start(Some(&args.url), events).await {
            Ok(session) => session,
            Err(error) => {
                eprintln!("error: {error}");
                return Ok(ExitCode::from(if error.is_usage() { 2 } else { 1 }));
            }
        };
        if let Err(error) = &session.opened {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(1));
        }
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
/// documents; `None` when there is still nothing to observe.
async fn observe_now(session: &mut Session) -> Option<PageState> {
    for attempt in 0..2 {
        match session.environment.observe().await {
            Ok(state) => return Some(state),
            Err(err) => {
                tracing::warn!(%err, attempt, "observing after an action failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    None
}

async fn exec_command(args: &ExecArgs, mut session: Session) -> anyhow::Result<ExitCode> {
    let mut state = observe_now(&mut session).await;
    let mut all_ok = true;
    for text in &args.actions {
        let started = Instant::now();
        let catalog = session.catalog();
        let (name, params, result) = match parse_action(&catalog, text) {
            Ok(action) => {
                let result = session.act(&action).await;
                (action.name().to_string(), action.params(), result)
            }
            Err(result) => (text.clone(), Value::Null, result),
        };
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        all_ok &= result.is_ok();
        // Observe after every action so the next one's indices refer to
        // the latest listing.
        state = observe_now(&mut session).await;
        let url = session.secrets.mask(&match &state {
            Some(s) => s.url.clone(),
            None => session.environment.current_url().await.unwrap_or_default(),
        });
        if args.json {
            let line = json!({
                "action": name,
                "params": params,
                "result": result,
                "url": url,
                "ms": (ms * 10.0).round() / 10.0,
            });
            println!("{line}");
        } else {
            print_human(&name, &params, &result, ms);
        }
    }
    if args.observe {
        match &state {
            Some(s) if args.json => {
                let mut line = json!({"type": "observation"});
                let observed = session.secrets.masked(observation_json(s));
                if let (Value::Object(line), Value::Object(obs)) = (&mut line, observed) {
                    line.extend(obs);
                }
                println!("{line}");
            }
            Some(s) => {
                println!("{}", session.secrets.mask(&s.url));
                println!("{}", session.secrets.mask(&s.title));
                print!("{}", session.secrets.mask(&s.listing));
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

/// Flags of `webagent bench step`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Steps to time (clicks and fills alternate); as many bare round trips.
    #[arg(long, default_value_t = 200)]
    pub runs: usize,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// The browser to use.
    #[command(flatten)]
    pub browser: BrowserOpts,
}

/// Runs `webagent bench step`.
pub fn bench(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let runtime = super::runtime()?;
    runtime.block_on(bench_command(args))
}

/// The benchmark page: a form the size of a simple real page, a button whose
/// handler updates the DOM, and a field.
fn step_page() -> String {
    let mut html = String::from(
        "<!doctype html><html><head><title>Step</title></head><body>\
         <h1>Orders</h1><p id=\"count\">0 clicks</p>\
         <button id=\"more\" onclick=\"this.dataset.n = (+this.dataset.n || 0) + 1; \
         count.textContent = this.dataset.n + ' clicks'\">Add one</button>\
         <label>Note <input id=\"note\" name=\"note\"></label><ul>",
    );
    for i in 0..20 {
        html.push_str(&format!("<li><a href=\"#item{i}\">Item {i}</a></li>"));
    }
    html.push_str("</ul></body></html>");
    html
}

/// p-th percentile of sorted values (nearest rank).
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

#[derive(Debug, Default)]
struct Spread {
    values: Vec<f64>,
}

impl Spread {
    fn push(&mut self, v: f64) {
        self.values.push(v);
    }

    fn summary(&mut self) -> Value {
        self.values.sort_by(f64::total_cmp);
        let r = |v: f64| (v * 100.0).round() / 100.0;
        json!({
            "median": r(percentile(&self.values, 50.0)),
            "p10": r(percentile(&self.values, 10.0)),
            "p90": r(percentile(&self.values, 90.0)),
        })
    }
}

async fn bench_command(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let server = PageServer::start().await?;
    server.html("/step", step_page());
    let session = BrowserSession::start(args.browser.launch_options()).await?;
    let tab = session.new_tab(&server.url("/step")).await?;
    let executor = Executor::new(&tab, ExecOptions::default());
    let catalog = Catalog::builtin();
    let click = catalog
        .parse(&json!({"click": {"selector": "#more"}}))
        .map_err(|e| anyhow::anyhow!("building the click: {e}"))?;
    let mut state = tab.observe(&ObserveOptions::default()).await?;
    let runs = args.runs.max(1);
    let (mut click_steps, mut fill_steps) = (Spread::default(), Spread::default());
    let (mut step, mut act, mut settle, mut observe, mut eval) = (
        Spread::default(),
        Spread::default(),
        Spread::default(),
        Spread::default(),
        Spread::default(),
    );
    let warmup = 5;
    for i in 0..runs + warmup {
        // Fills go by index, the way the model names elements.
        let index = state
            .elements
            .iter()
            .find(|e| e.tag == "input")
            .map(|e| e.index.0)
            .context("the benchmark page lists no input")?;
        let action = if i % 2 == 0 {
            click.clone()
        } else {
            catalog
                .parse(&json!({"input_text": {"index": index, "text": format!("note {i}")}}))
                .map_err(|e| anyhow::anyhow!("building the fill: {e}"))?
        };
        let started = Instant::now();
        let result = executor.execute(&action, Some(&state)).await;
        let acted = started.elapsed();
        if !result.is_ok() {
            anyhow::bail!(
                "step {i} ({action}) failed: {}",
                serde_json::to_string(&result)?
            );
        }
        state = tab.observe(&ObserveOptions::default()).await?;
        let total = started.elapsed();
        // The bare round trip, in the same loop so load shifts both alike.
        let before = Instant::now();
        tab.with_timeout(
            "evaluating 1",
            tab.call_timeout(),
            tab.page().execute(EvaluateParams::new("1")),
        )
        .await?;
        let round_trip = before.elapsed();
        if i < warmup {
            continue;
        }
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let settle_ms = result
            .data()
            .and_then(|d| d.get("settle_ms"))
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        step.push(ms(total));
        if i % 2 == 0 {
            click_steps.push(ms(total));
        } else {
            fill_steps.push(ms(total));
        }
        act.push(ms(acted) - settle_ms);
        settle.push(settle_ms);
        observe.push(ms(total - acted));
        eval.push(ms(round_trip));
    }
    let step_s = step.summary();
    let eval_s = eval.summary();
    let ratio = step_s["median"].as_f64().unwrap_or(0.0)
        / eval_s["median"].as_f64().unwrap_or(1.0).max(0.001);
    let report = json!({
        "runs": runs,
        "step_ms": step_s,
        "click_step_ms": click_steps.summary(),
        "fill_step_ms": fill_steps.summary(),
        "act_ms": act.summary(),
        "settle_ms": settle.summary(),
        "observe_ms": observe.summary(),
        "evaluate_ms": eval_s,
        "ratio_step_to_evaluate": (ratio * 10.0).round() / 10.0,
        "target_median_ms": 50,
    });
    if let Err(err) = tab.close().await {
        tracing::debug!(%err, "closing the bench tab");
    }
    if args.json {
        println!("{report}");
        return Ok(ExitCode::SUCCESS);
    }
    println!("step = act + settle + observe, {runs} runs (clicks and fills alternate)");
    println!("{:<22} {:>9} {:>9} {:>9}", "", "median", "p10", "p90");
    // act, settle and observe are over all steps.
    for (label, key) in [
        ("step (ms)", "step_ms"),
        ("  click steps (ms)", "click_step_ms"),
        ("  fill steps (ms)", "fill_step_ms"),
        ("  act (ms)", "act_ms"),
        ("  settle (ms)", "settle_ms"),
        ("  observe (ms)", "observe_ms"),
        ("Runtime.evaluate (ms)", "evaluate_ms"),
    ] {
        let s = &report[key];
        println!(
            "{label:<22} {:>9.2} {:>9.2} {:>9.2}",
            s["median"].as_f64().unwrap_or(0.0),
            s["p10"].as_f64().unwrap_or(0.0),
            s["p90"].as_f64().unwrap_or(0.0)
        );
    }
    let median = report["step_ms"]["median"].as_f64().unwrap_or(0.0);
    println!(
        "step / evaluate: {:.1}x; target median < 50 ms: {}",
        ratio,
        if median < 50.0 { "met" } else { "NOT met" }
    );
    Ok(ExitCode::SUCCESS)
}
