//! The part of `webagent bench step` about settling: a step whose action
//! changes nothing, a step whose action opens UI late (a submenu that
//! appears 300 ms after the hover), and a step whose click opens a panel
//! that animates its height for 400 ms. The first shows that waiting for
//! late UI and animations costs nothing when an action starts neither; the
//! others that one step is enough to list what opens late or slowly, and
//! what that step costs.

use std::time::Instant;

use anyhow::Context;
use serde_json::{json, Value};

use crate::actions::Catalog;
use crate::browser::act::{ExecOptions, Executor};
use crate::browser::{LaunchOptions, ObserveOptions};
use crate::serve::PageServer;

/// How long the page waits before it opens the submenu.
const OPEN_DELAY_MS: u64 = 300;

/// How long the panel takes to open.
const ANIMATION_MS: u64 = 400;

/// A menu whose submenu opens 300 ms after the pointer enters it, a button
/// that does nothing, a button that closes the submenu again, and an
/// accordion whose panel grows for 400 ms (and shuts at once).
fn late_page() -> String {
    format!(
        "<!doctype html><html><head><title>Late</title><style>\
         @keyframes grow {{ from {{ height: 0 }} to {{ height: 120px }} }}\
         #panel {{ overflow: hidden; height: 0 }} #panel.open {{ height: 120px; animation: grow {ANIMATION_MS}ms linear }}\
         </style></head><body>\
         <button id=\"grow\" onclick=\"panel.classList.add('open')\">Open panel</button>\
         <button id=\"shut\" onclick=\"panel.classList.remove('open')\">Shut panel</button>\
         <div id=\"panel\"><p>Panel text</p><p><a href=\"#a\">Upper link</a></p>\
         <p><a href=\"#b\">Lower link</a></p></div>\
         <button id=\"noop\">Nothing happens</button>\
         <button id=\"reset\" onclick=\"sub.hidden = true\">Close menus</button>\
         <div id=\"file\" role=\"menuitem\" aria-haspopup=\"true\" \
         onmouseenter=\"setTimeout(() => {{ sub.hidden = false; }}, {OPEN_DELAY_MS})\">File</div>\
         <ul id=\"sub\" role=\"menu\" hidden><li role=\"menuitem\">Export as PDF</li>\
         <li role=\"menuitem\">Print</li></ul></body></html>"
    )
}

fn summary(values: &mut [f64]) -> Value {
    values.sort_by(f64::total_cmp);
    let at = |p: f64| super::round2(super::percentile(values, p));
    json!({"median": at(50.0), "p10": at(10.0), "p90": at(90.0)})
}

/// Times `runs` no-op clicks and `runs` late-opening hovers (each followed
/// by an observation) in a browser of its own, and returns the figures.
pub async fn measure(launch: LaunchOptions, runs: usize) -> anyhow::Result<Value> {
    let server = PageServer::start().await?;
    server.html("/late", late_page());
    let session = crate::browser::BrowserSession::start(launch).await?;
    let tab = session.new_tab(&server.url("/late")).await?;
    let executor = Executor::new(&tab, ExecOptions::default());
    let catalog = Catalog::builtin();
    let parse = |v: Value| {
        catalog
            .parse(&v)
            .map_err(|e| anyhow::anyhow!("building {v}: {e}"))
    };
    let noop = parse(json!({"click": {"selector": "#noop"}}))?;
    let reset = parse(json!({"click": {"selector": "#reset"}}))?;
    let hover = parse(json!({"hover": {"selector": "#file"}}))?;
    let grow = parse(json!({"click": {"selector": "#grow"}}))?;
    let shut = parse(json!({"click": {"selector": "#shut"}}))?;
    let observe = ObserveOptions::default();
    let mut state = tab.observe(&observe).await?;
    let (mut noop_ms, mut late_ms, mut grow_ms) = (Vec::new(), Vec::new(), Vec::new());
    let (mut listed, mut whole) = (0usize, 0usize);
    let warmup = 3;
    for i in 0..runs + warmup {
        let started = Instant::now();
        let result = executor.execute(&noop, Some(&state)).await;
        anyhow::ensure!(result.is_ok(), "the no-op click failed: {result:?}");
        state = tab.observe(&observe).await?;
        let noop_step = started.elapsed().as_secs_f64() * 1000.0;

        // The pointer leaves the menu (onto the button) and the menu
        // closes, so each hover opens it anew.
        let result = executor.execute(&reset, Some(&state)).await;
        anyhow::ensure!(result.is_ok(), "closing the menu failed: {result:?}");
        state = tab.observe(&observe).await?;
        let started = Instant::now();
        let result = executor.execute(&hover, Some(&state)).await;
        anyhow::ensure!(result.is_ok(), "the hover failed: {result:?}");
        state = tab.observe(&observe).await?;
        let late_step = started.elapsed().as_secs_f64() * 1000.0;
        let late_listed = state.elements.iter().any(|e| e.text == "Export as PDF");

        let result = executor.execute(&shut, Some(&state)).await;
        anyhow::ensure!(result.is_ok(), "shutting the panel failed: {result:?}");
        state = tab.observe(&observe).await?;
        let started = Instant::now();
        let result = executor.execute(&grow, Some(&state)).await;
        anyhow::ensure!(result.is_ok(), "opening the panel failed: {result:?}");
        state = tab.observe(&observe).await?;
        let grow_step = started.elapsed().as_secs_f64() * 1000.0;
        if i < warmup {
            continue;
        }
        noop_ms.push(noop_step);
        late_ms.push(late_step);
        grow_ms.push(grow_step);
        if late_listed {
            listed += 1;
        }
        if state.elements.iter().any(|e| e.text == "Lower link") {
            whole += 1;
        }
    }
    tab.close().await.context("closing the late-UI tab")?;
    Ok(json!({
        "runs": runs,
        "noop_click_step_ms": summary(&mut noop_ms),
        "late_ui_hover_step_ms": summary(&mut late_ms),
        "late_ui_delay_ms": OPEN_DELAY_MS,
        "late_ui_listed_after_one_step": listed,
        "animated_panel_click_step_ms": summary(&mut grow_ms),
        "animation_ms": ANIMATION_MS,
        "animated_panel_whole_after_one_step": whole,
    }))
}

/// Prints the figures under the step table (or as one JSON line).
pub fn print(report: &Value, as_json: bool) {
    if as_json {
        println!("{}", json!({"settling": report}));
        return;
    }
    let runs = report["runs"].as_u64().unwrap_or(0);
    println!();
    println!(
        "settling, {runs} runs each (a click that changes nothing; a hover whose submenu opens {} ms later; a click on a panel that grows for {} ms)",
        report["late_ui_delay_ms"], report["animation_ms"]
    );
    println!("{:<24} {:>9} {:>9} {:>9}", "", "median", "p10", "p90");
    for (label, key) in [
        ("no-op click step (ms)", "noop_click_step_ms"),
        ("late-UI hover step (ms)", "late_ui_hover_step_ms"),
        ("animated panel step (ms)", "animated_panel_click_step_ms"),
    ] {
        let s = &report[key];
        println!(
            "{label:<24} {:>9.2} {:>9.2} {:>9.2}",
            s["median"].as_f64().unwrap_or(0.0),
            s["p10"].as_f64().unwrap_or(0.0),
            s["p90"].as_f64().unwrap_or(0.0)
        );
    }
    println!(
        "submenu listed after one step, without a wait: {}/{runs}",
        report["late_ui_listed_after_one_step"]
    );
    println!(
        "panel listed whole (its lower link) after one step: {}/{runs}",
        report["animated_panel_whole_after_one_step"]
    );
}
