//! Action execution against a real Chromium, on pages this test serves on
//! 127.0.0.1. One browser for the whole binary; each test opens its own tab.
//! Pages record what they saw (clicks, values, events) in `window.seen`,
//! read back from the page's own world, so the assertions are about what the
//! page noticed, not what the executor claims.
//!
//! Without Chromium these tests fail with the install command; they never
//! skip.

#[path = "../support/mod.rs"]
mod support;

mod clicks;
mod exec;
mod navigation;
mod next_listing;
mod pointer;
mod policy;
mod reading;
mod typing;

use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use serde_json::Value;
use webagent::browser::Tab;
use webagent::dom::PageState;

/// Evaluates `expression` in the page's own world.
async fn page_js(tab: &Tab, expression: &str) -> Value {
    let mut params = EvaluateParams::new(expression);
    params.return_by_value = Some(true);
    params.await_promise = Some(true);
    let resp = tab.page().execute(params).await.expect("evaluating");
    resp.result.result.value.clone().unwrap_or(Value::Null)
}

async fn seen(tab: &Tab) -> Vec<String> {
    let v = page_js(tab, "window.seen || []").await;
    serde_json::from_value(v).unwrap_or_default()
}

fn index_of(state: &PageState, text: &str) -> u32 {
    state
        .elements
        .iter()
        .find(|e| e.text == text)
        .map(|e| e.index.0 as u32)
        .unwrap_or_else(|| panic!("no element {text:?} in\n{}", state.listing))
}
