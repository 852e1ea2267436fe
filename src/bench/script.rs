//! `webagent bench script`.

use crate::actions::ActionResult;
use crate::script::{
    debug_channel, CancelFlag, DebugCommand, DebugReport, HostCall, HostError, Limits, ScriptHost,
    Scripts,
};
use serde_json::{json, Value};
use std::process::ExitCode;
use std::time::{Duration, Instant};

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
    async fn handle(&mut self, call: HostCall) -> Result<Value, HostError> {
        Ok(match call {
            HostCall::Observe => {
                json!({"url": "http://127.0.0.1/", "title": "", "text": "", "elements": []})
            }
            HostCall::Act(_) => json!({"ok": true}),
            _ => Value::Null,
        })
    }
}

/// The same work as the benchmark's custom action, in plain Rust.
fn add_one(params: &Value) -> ActionResult {
    let n = params.get("n").and_then(Value::as_i64).unwrap_or(0);
    ActionResult::ok_with(json!({ "n": n + 1 }))
}

/// The recipe timed plain and under the debugger: host calls and the
/// script's own work between them, as a recorded recipe has.
const RECIPE: &str = r##"
recipe("fill_many", "Fills a field many times and reads the page");
fn entry(i) { #{ name: `item ${i}`, tags: ["a", "b", "c"], n: i * 2 } }
fn fill_many() {
    let total = 0;
    for i in 0..50 {
        let item = entry(i);
        fill("#q", item.name);
        total += url().len() + item.tags.len() + item.n;
    }
    total
}
"##;

/// Runs `webagent bench script`: a custom action's call overhead (thread,
/// engine, conversions) and one host round trip, against a plain Rust call;
/// then a recipe run with the debugger attached (no breakpoint) against a
/// plain run of the same recipe.
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
    let runtime = crate::session::runtime()?;
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
    let runs = (calls / 40).max(5);
    let (plain, debugged) = runtime.block_on(recipe_runs(runs))?;
    println!("recipe run, 50 host calls each ({runs} runs each, alternating)");
    println!(
        "  plain:                          {:>10.2} ms/run",
        plain.as_secs_f64() * 1e3 / f64::from(runs)
    );
    println!(
        "  debugger attached, no breakpoint: {:>8.2} ms/run",
        debugged.as_secs_f64() * 1e3 / f64::from(runs)
    );
    println!(
        "  ratio debugged/plain:           {:>10.2}x (goal: at most 1.1x)",
        debugged.as_secs_f64() / plain.as_secs_f64().max(1e-9)
    );
    Ok(ExitCode::SUCCESS)
}

/// Times `runs` plain runs of [`RECIPE`] and as many with a debugger that
/// continues from its first stop, alternating so both see the same
/// machine.
async fn recipe_runs(runs: u32) -> anyhow::Result<(Duration, Duration)> {
    let scripts = Scripts::new(Limits::default(), None);
    scripts
        .load_source("bench_recipe.rhai", RECIPE)
        .map_err(|e| anyhow::anyhow!("the benchmark recipe does not load: {e}"))?;
    let cancel = CancelFlag::new();
    let mut host = InstantHost;
    let (mut plain, mut debugged) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..runs {
        let started = Instant::now();
        let out = scripts.run_recipe(None, &mut host, &cancel).await;
        plain += started.elapsed();
        out.map_err(|e| anyhow::anyhow!("the benchmark recipe failed: {e}"))?;

        let (debuggee, mut controller) = debug_channel();
        let attached = scripts.debugged(debuggee);
        // The controller answers every stop (only the entry, with no
        // breakpoint) with `continue`, as a person would.
        let answering = std::thread::spawn(move || {
            while let Some(report) = controller.reports.blocking_recv() {
                if matches!(report, DebugReport::Stopped(_)) {
                    let _ = controller.commands.send(DebugCommand::Continue);
                }
            }
        });
        let started = Instant::now();
        let out = attached.run_recipe(None, &mut host, &cancel).await;
        debugged += started.elapsed();
        drop(attached);
        let _ = answering.join();
        out.map_err(|e| anyhow::anyhow!("the benchmark recipe failed under the debugger: {e}"))?;
    }
    Ok((plain, debugged))
}
