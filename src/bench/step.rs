//! `webagent bench step`.

use super::percentile;
use crate::actions::Catalog;
use crate::browser::act::{ExecOptions, Executor};
use crate::browser::{BrowserSession, ObserveOptions, Tab};
use crate::config::BrowserOpts;
use crate::serve::PageServer;
use anyhow::Context;
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, CaptureScreenshotParams,
};
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use serde_json::{json, Value};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Flags of `webagent bench step`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Steps to time (clicks and fills alternate); as many bare round trips.
    #[arg(long, default_value_t = 200)]
    pub runs: usize,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also take the model's marked screenshot after each step (capture,
    /// JPEG encode in Chromium, base64 for the request) and report the time
    /// it adds to the step, next to a plain `Page.captureScreenshot` of the
    /// same viewport (Chromium's floor).
    #[arg(long)]
    pub vision: bool,
    /// The screenshot's width in pixels, with --vision.
    #[arg(long, value_name = "PX", default_value_t = crate::vision::default_image_width())]
    pub image_width: u32,
    /// The browser to use.
    #[command(flatten)]
    pub browser: BrowserOpts,
}

/// Runs `webagent bench step`.
pub fn bench(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let runtime = crate::session::runtime()?;
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

/// Characters in the long fill: a pasted paragraph, the size at which
/// typing key by key would show.
const LONG_FILL_CHARS: usize = 2_000;

/// Times `input_text` of [`LONG_FILL_CHARS`] characters into the page's
/// field (the action and its settle, not the observation after it), one
/// run for every ten steps and at least ten, after two to warm up. Its
/// baseline, taking turns with it: the same action with the value put in
/// at once and no key events, as `input_text` did before it typed keys
/// ([`ExecOptions::type_keys`] off).
async fn long_fills(tab: &Tab, catalog: &Catalog, runs: usize) -> anyhow::Result<(Value, Value)> {
    let sentence = "The Quick brown fox, 42 times: jumps over the lazy dog! ";
    let typing = Executor::new(tab, ExecOptions::default());
    let at_once = Executor::new(
        tab,
        ExecOptions {
            type_keys: false,
            ..ExecOptions::default()
        },
    );
    let (mut fills, mut inserts) = (Spread::default(), Spread::default());
    let warmup = 2;
    for i in 0..((runs / 10).max(10) + warmup) * 2 {
        // Each fill differs from the last, so the field's value changes.
        let text: String = format!(
            "{i} {}",
            sentence.repeat(LONG_FILL_CHARS / sentence.len() + 1)
        )
        .chars()
        .take(LONG_FILL_CHARS)
        .collect();
        let state = tab.observe(&ObserveOptions::default()).await?;
        let index = input_index(&state)?;
        let action = catalog
            .parse(&json!({"input_text": {"index": index, "text": text}}))
            .map_err(|e| anyhow::anyhow!("building the long fill: {e}"))?;
        let (executor, spread) = if i % 2 == 0 {
            (&typing, &mut fills)
        } else {
            (&at_once, &mut inserts)
        };
        let started = Instant::now();
        let result = executor.execute(&action, Some(&state)).await;
        let took = started.elapsed();
        if !result.is_ok() {
            anyhow::bail!("long fill {i} failed: {}", serde_json::to_string(&result)?);
        }
        if i >= warmup * 2 {
            spread.push(took.as_secs_f64() * 1000.0);
        }
    }
    Ok((fills.summary(), inserts.summary()))
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
    let (mut vision, mut vision_step, mut image_kb, mut bare) = (
        Spread::default(),
        Spread::default(),
        Spread::default(),
        Spread::default(),
    );
    let shot_request = crate::vision::ShotRequest::step(args.image_width);
    let colors = crate::browser::shot::MarkColors::default();
    let mut picture_size = (0, 0);
    let warmup = 5;
    for i in 0..runs + warmup {
        // Fills go by index, the way the model names elements.
        let index = input_index(&state)?;
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
        // With vision the step goes on: the marked picture, encoded, and
        // turned into the data URL the request carries.
        let seen = if args.vision {
            // Chromium's own floor: a plain viewport JPEG, no clip, no
            // marks, nothing encoded on our side.
            let before = Instant::now();
            let plain = CaptureScreenshotParams::builder()
                .format(CaptureScreenshotFormat::Jpeg)
                .quality(75)
                .build();
            tab.with_timeout(
                "taking a plain screenshot",
                tab.call_timeout(),
                tab.page().execute(plain),
            )
            .await?;
            let floor = before.elapsed();
            let before = Instant::now();
            let shot =
                crate::browser::shot::capture(&tab, Some(&state), &shot_request, &colors).await?;
            let url = shot.data_url();
            picture_size = (shot.width, shot.height);
            Some((before.elapsed(), url.len(), floor))
        } else {
            None
        };
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
        if let Some((took, chars, floor)) = seen {
            bare.push(ms(floor));
            vision.push(ms(took));
            vision_step.push(ms(total + took));
            image_kb.push(chars as f64 / 1024.0);
        }
        act.push(ms(acted) - settle_ms);
        settle.push(settle_ms);
        observe.push(ms(total - acted));
        eval.push(ms(round_trip));
    }
    let (long_fill, long_insert) = long_fills(&tab, &catalog, runs).await?;
    let long_ratio = long_fill["median"].as_f64().unwrap_or(0.0)
        / long_insert["median"].as_f64().unwrap_or(1.0).max(0.001);
    let step_s = step.summary();
    let eval_s = eval.summary();
    let ratio = step_s["median"].as_f64().unwrap_or(0.0)
        / eval_s["median"].as_f64().unwrap_or(1.0).max(0.001);
    let vision_report = args.vision.then(|| {
        let added = vision.summary();
        let with = vision_step.summary();
        let without = step_s["median"].as_f64().unwrap_or(0.0);
        json!({
            "viewport": [1280, 800],
            "image": [picture_size.0, picture_size.1],
            "added_ms": added,
            "plain_capture_ms": bare.summary(),
            "step_with_vision_ms": with,
            "data_url_kb": image_kb.summary(),
            "ratio_with_to_without": (with["median"].as_f64().unwrap_or(0.0) / without.max(0.001) * 100.0).round() / 100.0,
            "target_added_median_ms": 60,
        })
    });
    let report = json!({
        "runs": runs,
        "step_ms": step_s,
        "click_step_ms": click_steps.summary(),
        "fill_step_ms": fill_steps.summary(),
        "act_ms": act.summary(),
        "settle_ms": settle.summary(),
        "observe_ms": observe.summary(),
        "evaluate_ms": eval_s,
        "long_fill_ms": long_fill,
        "long_insert_ms": long_insert,
        "ratio_long_fill_to_insert": (long_ratio * 100.0).round() / 100.0,
        "ratio_step_to_evaluate": (ratio * 10.0).round() / 10.0,
        "target_median_ms": 50,
        "vision": vision_report,
    });
    if let Err(err) = tab.close().await {
        tracing::debug!(%err, "closing the bench tab");
    }
    if args.json {
        println!("{report}");
        return Ok(ExitCode::SUCCESS);
    }
    println!("step = act + settle + observe, {runs} runs (clicks and fills alternate); a long fill is the act and its settle alone");
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
        ("fill 2,000 chars (ms)", "long_fill_ms"),
        ("  at once, no keys (ms)", "long_insert_ms"),
    ] {
        let s = &report[key];
        println!(
            "{label:<22} {:>9.2} {:>9.2} {:>9.2}",
            s["median"].as_f64().unwrap_or(0.0),
            s["p10"].as_f64().unwrap_or(0.0),
            s["p90"].as_f64().unwrap_or(0.0)
        );
    }
    println!(
        "fill 2,000 chars / the same at once without keys: {long_ratio:.2}x; goal at most 2x: {}",
        if long_ratio <= 2.0 { "met" } else { "NOT met" }
    );
    let median = report["step_ms"]["median"].as_f64().unwrap_or(0.0);
    println!(
        "step / evaluate: {:.1}x; target median < 50 ms: {}",
        ratio,
        if median < 50.0 { "met" } else { "NOT met" }
    );
    if let Some(v) = &report["vision"].as_object() {
        let (w, h) = (picture_size.0, picture_size.1);
        println!("\nwith vision: the marked screenshot after each step ({w}×{h} JPEG from a 1280×800 viewport, as a data URL)");
        for (label, key) in [
            ("added (ms)", "added_ms"),
            ("  plain capture (ms)", "plain_capture_ms"),
            ("step with vision (ms)", "step_with_vision_ms"),
            ("data URL (kB)", "data_url_kb"),
        ] {
            let s = &v[key];
            println!(
                "{label:<22} {:>9.2} {:>9.2} {:>9.2}",
                s["median"].as_f64().unwrap_or(0.0),
                s["p10"].as_f64().unwrap_or(0.0),
                s["p90"].as_f64().unwrap_or(0.0)
            );
        }
        let added = v["added_ms"]["median"].as_f64().unwrap_or(0.0);
        println!(
            "step with / without vision: {:.2}x; target added median <= 60 ms: {}",
            v["ratio_with_to_without"].as_f64().unwrap_or(0.0),
            if added <= 60.0 { "met" } else { "NOT met" }
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The index of the benchmark page's input, as the model would name it.
fn input_index(state: &crate::dom::PageState) -> anyhow::Result<usize> {
    state
        .elements
        .iter()
        .find(|e| e.tag == "input")
        .map(|e| e.index.0)
        .context("the benchmark page lists no input")
}
