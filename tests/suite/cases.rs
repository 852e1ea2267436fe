//! Suites as the tests write and run them: the recipes the cases use,
//! `suite.yaml` with numbered cases, `webagent test` attached to the
//! shared browser, each finished case's status, and the outcome pages
//! served once per binary.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::Value;
use webagent::serve::Response;

use crate::support::chromium::shared;
use crate::support::cli::webagent;

/// The recipes the test suites run.
pub(crate) const RECIPES: &str = r##"
recipe("greet", "Clicks the greeting button");
fn greet() { click("#greet"); text() }

recipe("noop", "Does nothing but say where it is");
fn noop() { url() }

recipe("stall", "Waits for something that never comes");
fn stall() { wait_for("never shows up", 60000); "came" }

recipe("together", "Waits until both isolation cases are on their pages");
fn together() { wait_for("both here", 20000); text() }
"##;

/// Runs `webagent test` in `dir` with `args`, attached to the shared
/// browser.
pub(crate) fn webagent_test(dir: &Path, args: &[&str]) -> Output {
    let ws = shared()
        .session
        .websocket_url()
        .expect("the shared browser's address");
    webagent()
        .current_dir(dir)
        .env_remove("WEBAGENT_CONFIG")
        .arg("test")
        .args(args)
        .args(["--connect", &ws])
        .output()
        .expect("the webagent binary runs")
}

/// Writes the test recipes and `suite.yaml` into `dir`: cases `case 1`
/// to `case N`, each with the flow-map body `case` (`url: …, recipe: …`).
pub(crate) fn numbered_cases(dir: &Path, n: usize, case: &str) {
    std::fs::write(dir.join("steps.rhai"), RECIPES).expect("recipes");
    let mut suite = String::from("cases:\n");
    for k in 1..=n {
        suite.push_str(&format!("  - {{name: case {k}, {case}}}\n"));
    }
    std::fs::write(dir.join("suite.yaml"), suite).expect("a suite");
}

/// Each finished case's name and status.
pub(crate) fn finished(events: &[Value]) -> BTreeMap<String, String> {
    events
        .iter()
        .filter(|e| e["type"] == "case_finished")
        .map(|e| {
            (
                e["name"].as_str().unwrap_or_default().to_string(),
                e["status"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Serves the pages of the outcome test: a greeting, and a page that
/// fails on every other visit (odd ones), so a case's first attempt fails
/// and its retry passes. Once per binary: tests run side by side, and
/// registering again would restart the count under a running case.
pub(crate) fn serve_outcome_pages() {
    static SERVED: std::sync::Once = std::sync::Once::new();
    SERVED.call_once(serve_outcome_pages_now);
}

/// Registers the outcome pages; [`serve_outcome_pages`] does it once.
pub(crate) fn serve_outcome_pages_now() {
    let server = &shared().server;
    server.html(
        "/hello",
        "<!doctype html><title>Hello</title><button id=greet onclick=\"out.textContent = 'Hello, tester'\">Greet</button><p id=out></p>",
    );
    let visits = Arc::new(AtomicUsize::new(0));
    server.handle("/flaky", move |_| {
        let n = visits.fetch_add(1, Ordering::SeqCst) + 1;
        let word = if n % 2 == 1 { "warming up" } else { "ready" };
        Response::html(format!("<!doctype html><title>Flaky</title><p>{word}</p>"))
    });
}
