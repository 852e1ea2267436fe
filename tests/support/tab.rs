//! A served page in a fresh tab of the binary's browser, and observing and
//! acting on it the way the agent does: the built-in catalog parses an
//! action, the executor runs it against an observation.

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use serde_json::{json, Value};
use webagent::actions::{Action, ActionResult, Catalog, FailureReason};
use webagent::browser::act::{ExecOptions, Executor};
use webagent::browser::{BrowserSession, Driver, ObserveOptions, Tab};
use webagent::dom::PageState;
use webagent::script::{ScriptEnvironment, Scripts};
use webagent::serve::PageServer;
use webagent::sitemap::SitemapSet;

use super::chromium::{runtime, shared};

/// Serves `html` at `path` on `server`, opens it in a fresh tab of
/// `session` and runs `body` with the tab and the page's address, on the
/// binary's runtime.
pub fn with_page_on<F, Fut>(
    session: &BrowserSession,
    server: &PageServer,
    path: &str,
    html: &str,
    body: F,
) where
    F: FnOnce(Tab, String) -> Fut,
    Fut: Future<Output = ()>,
{
    server.html(path, html.to_string());
    let url = server.url(path);
    runtime().block_on(async {
        let tab = session.new_tab(&url).await.expect("opening the test page");
        body(tab, url).await;
    });
}

/// [`with_page_on`] the binary's shared browser and page server.
pub fn with_page<F, Fut>(path: &str, html: &str, body: F)
where
    F: FnOnce(Tab, String) -> Fut,
    Fut: Future<Output = ()>,
{
    let s = shared();
    with_page_on(&s.session, &s.server, path, html, body);
}

/// [`with_page`] in its turn (see [`in_front`]).
pub fn with_page_in_front<F, Fut>(path: &str, html: &str, body: F)
where
    F: FnOnce(Tab, String) -> Fut,
    Fut: Future<Output = ()>,
{
    let _turn = in_front();
    with_page(path, html, body);
}

/// Takes this test's turn in front until the guard drops. Only the tab in
/// front paints frames, and real mouse events wait for a frame, so tests
/// that move the mouse take turns: each runs alone in the newest tab.
pub fn in_front() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    // A test that failed while holding the turn leaves nothing broken.
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// The page as the agent sees it, with the default options.
pub async fn observe(tab: &Tab) -> PageState {
    tab.observe(&ObserveOptions::default())
        .await
        .expect("observing")
}

/// `action` parsed by the built-in catalog; the test fails if it is
/// refused.
pub fn action(value: Value) -> Action {
    Catalog::builtin().parse(&value).expect("a valid action")
}

/// Options that give an action 1.2 s, so a test of one that cannot
/// succeed fails fast.
pub fn quick_options() -> ExecOptions {
    ExecOptions {
        action_timeout: Duration::from_millis(1200),
        ..ExecOptions::default()
    }
}

/// Runs `action` against a fresh observation, with [`quick_options`].
pub async fn act(tab: &Tab, action: Value) -> ActionResult {
    act_with(tab, action, quick_options()).await
}

/// Runs `action` against a fresh observation, with `opts`.
pub async fn act_with(tab: &Tab, action: Value, opts: ExecOptions) -> ActionResult {
    let state = observe(tab).await;
    act_on(tab, &state, action, opts).await
}

/// Runs `action` against `state`, the observation its `index` refers to.
/// An action the catalog refuses comes back as the failure the agent
/// would get.
pub async fn act_on(
    tab: &Tab,
    state: &PageState,
    action: Value,
    opts: ExecOptions,
) -> ActionResult {
    execute(tab, Some(state), action, opts).await
}

/// Runs `action` with the default options and fails the test unless it
/// succeeded; `state` is the observation an `index` refers to (none for a
/// selector). Returns what the action answered.
pub async fn act_ok(tab: &Tab, state: Option<&PageState>, action: Value) -> Value {
    let said = action.to_string();
    let result = execute(tab, state, action, ExecOptions::default()).await;
    assert!(result.is_ok(), "{said}: {result:?}");
    result.data().cloned().unwrap_or_default()
}

/// The page's whole text as `read_page` gives it, read part after part
/// from the start; `state` is the observation whose indices must stay
/// valid.
pub async fn read_whole_page(tab: &Tab, state: &PageState) -> String {
    let mut text = String::new();
    let mut offset = 0;
    loop {
        let part = act_ok(tab, Some(state), json!({"read_page": {"offset": offset}})).await;
        text.push_str(part["text"].as_str().expect("a part's text"));
        match part["next_offset"].as_u64() {
            Some(next) if next > offset => offset = next,
            Some(next) => panic!("read_page goes back to {next} from {offset}"),
            None => return text,
        }
    }
}

async fn execute(
    tab: &Tab,
    state: Option<&PageState>,
    action: Value,
    opts: ExecOptions,
) -> ActionResult {
    let action = match Catalog::builtin().parse(&action) {
        Ok(a) => a,
        Err(e) => return e.to_result(),
    };
    Executor::new(tab, opts).execute(&action, state).await
}

/// The test fails unless `result` is a success.
pub fn assert_ok(result: &ActionResult) {
    assert!(result.is_ok(), "expected success, got {result:?}");
}

/// Why `result` failed and what it said; the test fails on a success.
pub fn failure(result: &ActionResult) -> (FailureReason, String) {
    match result {
        ActionResult::Failure { reason, message } => (*reason, message.clone()),
        ActionResult::Success { data } => panic!("expected a failure, got success {data:?}"),
    }
}

/// The agent's driver on `tab`, with `options` and no sitemaps.
pub fn driver(tab: Tab, options: ExecOptions) -> Driver {
    Driver::new(tab, options, Arc::new(RwLock::new(SitemapSet::new())))
}

/// A [`driver`] on `tab` with the default options, under `scripts`'
/// custom actions.
pub fn script_environment(tab: Tab, scripts: &Scripts) -> ScriptEnvironment {
    ScriptEnvironment::new(driver(tab, ExecOptions::default()), scripts.clone())
}
