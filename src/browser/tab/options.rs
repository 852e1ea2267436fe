//! What an observation lists and its limits, as the caller sets them and
//! as the observer's `observe` call takes them.

use std::time::Duration;

/// Which part of the page an observation lists, and its limits.
#[derive(Debug, Clone, PartialEq)]
pub struct ObserveOptions {
    /// Walk the whole page instead of the viewport plus a margin.
    pub full_page: bool,
    /// The margin around the viewport in CSS pixels; `None` is half a
    /// viewport height.
    pub margin_px: Option<f64>,
    /// The most page-text characters to keep.
    pub text_limit: usize,
    /// Count elements with click-like listeners (added after the tab was
    /// opened by webagent) as interactive.
    pub click_listeners: bool,
    /// The time limit for the observation.
    pub timeout: Duration,
}

impl Default for ObserveOptions {
    fn default() -> Self {
        ObserveOptions {
            full_page: false,
            margin_px: None,
            text_limit: 4000,
            click_listeners: true,
            timeout: Duration::from_secs(30),
        }
    }
}

/// The observer's options as its `observe` call takes them.
pub(super) fn observer_options(opts: &ObserveOptions) -> serde_json::Value {
    serde_json::json!({
        "fullPage": opts.full_page,
        "marginPx": opts.margin_px.unwrap_or(-1.0),
        "textLimit": opts.text_limit,
        "listeners": opts.click_listeners,
    })
}
