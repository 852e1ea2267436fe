//! `webagent bench script`.

use crate::actions::ActionResult;
use crate::script::{CancelFlag, HostCall, HostError, Limits, ScriptHost, Scripts};
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
    Ok(ExitCode::SUCCESS)
}
