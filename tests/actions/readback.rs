//! Reading the page back from its own world: what it recorded in
//! `window.seen`, any value of that world, and an element's index by its
//! words.

use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use serde_json::Value;
use webagent::browser::Tab;
use webagent::dom::PageState;

/// Evaluates `expression` in the page's own world.
pub(crate) async fn page_js(tab: &Tab, expression: &str) -> Value {
    let mut params = EvaluateParams::new(expression);
    params.return_by_value = Some(true);
    params.await_promise = Some(true);
    let resp = tab.page().execute(params).await.expect("evaluating");
    resp.result.result.value.clone().unwrap_or(Value::Null)
}

/// What the page recorded in `window.seen`, in order.
pub(crate) async fn seen(tab: &Tab) -> Vec<String> {
    let v = page_js(tab, "window.seen || []").await;
    serde_json::from_value(v).unwrap_or_default()
}

/// The index of the element whose text is exactly `text`; the test fails
/// with the listing when there is none.
pub(crate) fn index_of(state: &PageState, text: &str) -> u32 {
    state
        .elements
        .iter()
        .find(|e| e.text == text)
        .map(|e| e.index.0 as u32)
        .unwrap_or_else(|| panic!("no element {text:?} in\n{}", state.listing))
}
