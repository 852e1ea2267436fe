//! `webagent bench cache`: what the task cache saves on the demo's
//! create-order task (sign in, fill the order form, create it), all in one
//! run against a scripted model that answers after a fixed delay, standing
//! in for a real one:
//!
//! 1. the first run, a cache miss: the agent does the task (one action per
//!    model call) and its run is stored;
//! 2. the same task again, a hit: the stored recipe replays;
//! 3. the recipe the miss exported, run directly (`recipe run`): the
//!    baseline a hit is held to.
//!
//! Each run starts signed out on the same page. Goals: a hit makes no
//! model call, takes a tenth of the miss's time or less, and at most 1.5×
//! the direct recipe's.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::actions::Catalog;
use crate::browser::LaunchOptions;
use crate::config::Config;
use crate::demo::{DemoSite, DEMO_EMAIL, DEMO_PASSWORD};
use crate::environment::{ApprovalMode, Environment};
use crate::events::CacheState;
use crate::serve::{PageServer, Response};
use crate::session::{Bare, Oversight, Prepared, RecipeChoice, ReplayOptions, Session, TaskCache};

/// Flags of `webagent bench cache`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Milliseconds the scripted model waits before each answer.
    #[arg(long, default_value_t = 800)]
    pub delay_ms: u64,
    /// Hits and direct runs to take the median of (a navigating click's
    /// settling varies from run to run).
    #[arg(long, default_value_t = 7)]
    pub runs: usize,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// The browser to use.
    #[command(flatten)]
    pub browser: crate::config::BrowserOpts,
}

/// The task the bench runs.
pub const TASK: &str = "Create an order for Mary Jackson: 3 USB-C docks";

/// One kind of run's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFigures {
    /// `miss`, `hit`, `recipe`.
    pub name: &'static str,
    /// Requests the model server received.
    pub model_calls: usize,
    /// Tokens those calls used.
    pub tokens: u64,
    /// Wall time (the median, for repeated runs).
    pub wall: Duration,
    /// The fastest and slowest of repeated runs.
    pub spread: (Duration, Duration),
}

/// The three runs' figures.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheFigures {
    /// The model's delay per call.
    pub delay: Duration,
    /// Hits and direct runs measured.
    pub runs: usize,
    /// The first run.
    pub miss: RunFigures,
    /// The replays from the cache.
    pub hit: RunFigures,
    /// The exported recipe run directly.
    pub recipe: RunFigures,
}

/// A chat-completions server that answers each request with the next
/// scripted action after `delay`, and counts what it was asked.
struct ScriptedModel {
    server: PageServer,
    requests: Arc<AtomicUsize>,
    tokens: Arc<AtomicUsize>,
}

impl ScriptedModel {
    async fn start(delay: Duration, actions: Vec<Value>) -> anyhow::Result<ScriptedModel> {
        let server = PageServer::start().await?;
        let script = Arc::new(Mutex::new(VecDeque::from(actions)));
        let requests = Arc::new(AtomicUsize::new(0));
        let tokens = Arc::new(AtomicUsize::new(0));
        let (counted, spent) = (Arc::clone(&requests), Arc::clone(&tokens));
        server.handle("/v1/chat/completions", move |request| {
            counted.fetch_add(1, Ordering::Relaxed);
            let next = script.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
            let Some(action) = next else {
                return Response::text("the bench's script has no more answers").with_status(500);
            };
            // Tokens as a server would roughly count them.
            let prompt = request.body.len() / 4;
            spent.fetch_add(prompt + 40, Ordering::Relaxed);
            let arguments = json!({
                "evaluation_previous_goal": "the page shows what the last step aimed at",
                "memory": "creating the order",
                "next_goal": "go on with the order",
                "action": action,
            });
            let body = json!({
                "id": "chatcmpl-bench",
                "object": "chat.completion",
                "created": 1_700_000_000,
                "model": "bench-model",
                "choices": [{
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": null,
                        "tool_calls": [{
                            "id": "call_bench",
                            "type": "function",
                            "function": {
                                "name": crate::agent::AGENT_TOOL_NAME,
                                "arguments": arguments.to_string(),
                            },
                        }],
                    },
                    "finish_reason": "tool_calls",
                }],
                "usage": {"prompt_tokens": prompt, "completion_tokens": 40, "total_tokens": prompt + 40},
            });
            Response::new("application/json", body.to_string()).after(delay)
        });
        Ok(ScriptedModel {
            server,
            requests,
            tokens,
        })
    }

    fn counts(&self) -> (usize, u64) {
        (
            self.requests.load(Ordering::Relaxed),
            self.tokens.load(Ordering::Relaxed) as u64,
        )
    }
}

/// The model's answers for the task: one action per call, then done.
fn script() -> Vec<Value> {
    vec![
        json!({"input_text": {"selector": "#email", "text": DEMO_EMAIL}}),
        json!({"input_text": {"selector": "#password", "text": DEMO_PASSWORD}}),
        json!({"click": {"selector": "#sign-in"}}),
        json!({"input_text": {"selector": "#customer", "text": "Mary Jackson"}}),
        json!({"select_option": {"selector": "#product", "text": "USB-C dock — $89.50"}}),
        json!({"input_text": {"selector": "#quantity", "text": "3"}}),
        json!({"click": {"selector": "#create-order"}}),
        json!({"done": {"text": "created the order for Mary Jackson", "success": true}}),
    ]
}

/// Signs out and opens the new-order page (the sign-in page it sends a
/// stranger to), so every run starts alike.
async fn reset(session: &mut Session, site: &DemoSite) -> anyhow::Result<()> {
    let catalog = Catalog::builtin();
    for path in ["/logout", "/orders/new"] {
        let action = catalog.parse(&json!({"navigate": {"url": site.url(path)}}))?;
        let result = session.environment.execute(&action).await;
        anyhow::ensure!(result.is_ok(), "opening {path}: {result:?}");
    }
    Ok(())
}

/// The median, fastest and slowest of `walls`.
fn median(mut walls: Vec<Duration>) -> (Duration, (Duration, Duration)) {
    walls.sort();
    let at = |i: usize| walls.get(i).copied().unwrap_or_default();
    (
        at(walls.len() / 2),
        (at(0), at(walls.len().saturating_sub(1))),
    )
}

/// Runs the three kinds of run on the demo.
pub async fn measure(
    launch: LaunchOptions,
    delay: Duration,
    runs: usize,
) -> anyhow::Result<CacheFigures> {
    let site = DemoSite::start().await?;
    let model = ScriptedModel::start(delay, script()).await?;
    let dir = std::env::temp_dir().join(format!(
        "webagent-bench-cache-{}-{}",
        std::process::id(),
        crate::totp::now()
    ));
    let mut config = Config::builtin();
    config.browser.executable = launch.chrome.clone();
    config.browser.connect = launch.connect.clone();
    config.paths.sitemaps = Vec::new();
    config.agent.approve = ApprovalMode::Never;
    config.llm.base_url = model.server.url("/v1");
    config.llm.streaming = false;
    config.llm.max_retries = 0;
    config.llm.vision = crate::vision::VisionMode::Never;
    let prepared =
        Prepared::new(config, &Default::default(), &[], &[]).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (events, mut drained) = mpsc::unbounded_channel();
    tokio::spawn(async move { while drained.recv().await.is_some() {} });
    let mut session = prepared
        .start(Some(&site.url("/orders/new")), events)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let cache = TaskCache::new(dir.join("cache"));
    let measured = runs_on(&mut session, &site, &model, &cache, &dir, runs.max(1)).await;
    session.close().await;
    let _ = std::fs::remove_dir_all(&dir);
    let (miss, hit, recipe) = measured?;
    Ok(CacheFigures {
        delay,
        runs: runs.max(1),
        miss,
        hit,
        recipe,
    })
}

async fn runs_on(
    session: &mut Session,
    site: &DemoSite,
    model: &ScriptedModel,
    cache: &TaskCache,
    dir: &std::path::Path,
    runs: usize,
) -> anyhow::Result<(RunFigures, RunFigures, RunFigures)> {
    // The miss: the agent does the task; its run is stored.
    reset(session, site).await?;
    let started = Instant::now();
    let outcome = session
        .run_task_cached(TASK, cache, Oversight::headless(true), &Bare)
        .await;
    let wall = started.elapsed();
    anyhow::ensure!(
        outcome.state == CacheState::Miss && outcome.success,
        "the first run should be a successful miss: {outcome:?}"
    );
    let (calls, tokens) = model.counts();
    let miss = RunFigures {
        name: "miss",
        model_calls: calls,
        tokens,
        wall,
        spread: (wall, wall),
    };
    // The recipe the miss exported, as `recipe run` would take it.
    let exported = dir.join("exported.rhai");
    std::fs::copy(&outcome.recipe, &exported)?;

    let (mut hits, mut directs) = (Vec::new(), Vec::new());
    let (mut hit_tokens, mut hit_calls) = (0, 0);
    for _ in 0..runs {
        reset(session, site).await?;
        let before = model.counts();
        let started = Instant::now();
        let outcome = session
            .run_task_cached(TASK, cache, Oversight::headless(true), &Bare)
            .await;
        hits.push(started.elapsed());
        anyhow::ensure!(
            outcome.state == CacheState::Hit && outcome.success,
            "a later run should be a hit: {outcome:?}"
        );
        let after = model.counts();
        hit_calls += after.0 - before.0;
        hit_tokens += after.1 - before.1;

        reset(session, site).await?;
        let mut options = ReplayOptions::headless(true);
        options.heal = false;
        options.rewrite = None;
        let started = Instant::now();
        let outcome = session
            .run_recipe(
                RecipeChoice::InFile {
                    file: &exported,
                    name: None,
                },
                Default::default(),
                options,
                &Bare,
            )
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        directs.push(started.elapsed());
        anyhow::ensure!(
            outcome.success,
            "the exported recipe should replay: {outcome:?}"
        );
    }
    let here = session.environment.current_url().await.unwrap_or_default();
    anyhow::ensure!(
        here.contains("/orders/"),
        "the last run should end on the new order's page, not {here}"
    );
    let (hit_wall, hit_spread) = median(hits);
    let (direct_wall, direct_spread) = median(directs);
    Ok((
        miss,
        RunFigures {
            name: "hit",
            model_calls: hit_calls,
            tokens: hit_tokens,
            wall: hit_wall,
            spread: hit_spread,
        },
        RunFigures {
            name: "recipe",
            model_calls: 0,
            tokens: 0,
            wall: direct_wall,
            spread: direct_spread,
        },
    ))
}

/// Prints the figures and the goals, as a table or one JSON object.
pub fn print(figures: &CacheFigures, json: bool) {
    let seconds = |d: Duration| d.as_secs_f64();
    let speedup = seconds(figures.miss.wall) / seconds(figures.hit.wall).max(1e-9);
    let to_direct = seconds(figures.hit.wall) / seconds(figures.recipe.wall).max(1e-9);
    let goals = [
        ("a hit makes no model call", figures.hit.model_calls == 0),
        (
            "a hit is at least 10x faster than the miss",
            speedup >= 10.0,
        ),
        (
            "a hit takes at most 1.5x the exported recipe's time",
            to_direct <= 1.5,
        ),
    ];
    if json {
        let row = |r: &RunFigures| json!({"model_calls": r.model_calls, "tokens": r.tokens, "wall_ms": super::round2(seconds(r.wall) * 1000.0)});
        println!(
            "{}",
            json!({
                "task": TASK,
                "model_delay_ms": figures.delay.as_millis() as u64,
                "miss": row(&figures.miss),
                "hit": row(&figures.hit),
                "recipe": row(&figures.recipe),
                "miss_to_hit": super::round2(speedup),
                "hit_to_recipe": super::round2(to_direct),
                "goals_met": goals.iter().all(|(_, met)| *met),
            })
        );
        return;
    }
    println!(
        "task cache on the demo: {TASK:?}, the model answering after {} ms per call",
        figures.delay.as_millis()
    );
    println!(
        "  {:<28} {:>11} {:>8} {:>12}   fastest – slowest",
        "run", "model calls", "tokens", "wall time"
    );
    for (label, r) in [
        ("miss (agent, recorded)", &figures.miss),
        ("hit (replayed from cache)", &figures.hit),
        ("exported recipe, directly", &figures.recipe),
    ] {
        println!(
            "  {label:<28} {:>11} {:>8} {:>12}   {} – {}",
            r.model_calls,
            r.tokens,
            super::fmt_duration(r.wall),
            super::fmt_duration(r.spread.0),
            super::fmt_duration(r.spread.1)
        );
    }
    println!(
        "  (hits and direct runs: the median of {} each)",
        figures.runs
    );
    println!("  a hit is {speedup:.1}x faster than the miss and takes {to_direct:.2}x the direct recipe's time");
    for (goal, met) in goals {
        println!("  goal: {goal}: {}", if met { "met" } else { "NOT met" });
    }
}

/// Runs `webagent bench cache`.
pub fn bench(args: BenchArgs) -> anyhow::Result<std::process::ExitCode> {
    let runtime = crate::session::runtime()?;
    let figures = runtime.block_on(measure(
        args.browser.launch_options(),
        Duration::from_millis(args.delay_ms),
        args.runs,
    ))?;
    print(&figures, args.json);
    Ok(std::process::ExitCode::SUCCESS)
}
