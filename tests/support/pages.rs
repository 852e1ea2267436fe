//! The HTML documents tests serve: a body wrapped in a page, written once
//! so every binary serves the same markup around its own content.

/// The document around `body`, titled `title`, with `head` after the
/// title.
pub fn document(title: &str, head: &str, body: &str) -> String {
    format!(
        "<!doctype html><html><head><title>{title}</title>{head}</head><body>{body}</body></html>"
    )
}

/// A plain page titled `title`.
pub fn page(title: &str, body: &str) -> String {
    document(title, "", body)
}

/// No margin and a known font, so boxes sit where a test's markup puts
/// them.
const BARE_STYLE: &str = "<style>body{margin:0;font:16px sans-serif}</style>";

/// A page with no margin and a 16px sans-serif font, titled `t`, for tests
/// that place elements by pixel.
pub fn bare_page(body: &str) -> String {
    document("t", BARE_STYLE, body)
}

/// A [`bare_page`] whose script starts with `window.seen = []`, where the
/// page records what it noticed (clicks, values, events) for the test to
/// read back.
pub fn seen_page(body: &str) -> String {
    document(
        "t",
        &format!("{BARE_STYLE}<script>window.seen = [];</script>"),
        body,
    )
}
