//! Action execution against a real Chromium, on pages this test serves on
//! 127.0.0.1. One browser for the whole binary; each test opens its own tab.
//! Pages record what they saw (clicks, values, events) in `window.seen`,
//! read back from the page's own world, so the assertions are about what the
//! page noticed, not what the executor claims.
//!
//! Without Chromium these tests fail with the install command; they never
//! skip.

use std::future::Future;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use serde_json::{json, Value};
use webagent::actions::{ActionResult, Catalog, FailureReason};
use webagent::browser::act::{ExecOptions, Executor};
use webagent::browser::{BrowserSession, LaunchOptions, ObserveOptions, Tab};
use webagent::dom::PageState;
use webagent::serve::PageServer;

struct Shared {
    runtime: tokio::runtime::Runtime,
    session: BrowserSession,
    server: PageServer,
}

static SHARED: OnceLock<Result<Shared, String>> = OnceLock::new();

fn shared() -> &'static Shared {
    let shared = SHARED.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let (session, server) = runtime.block_on(async {
            let server = PageServer::start().await.map_err(|e| e.to_string())?;
            // Tests run in parallel, each in its own tab, and only one tab
            // is in front: keep the others' timers and frames running.
            let options = LaunchOptions {
                extra_args: vec![
                    "--disable-background-timer-throttling".into(),
                    "--disable-renderer-backgrounding".into(),
                    "--disable-backgrounding-occluded-windows".into(),
                ],
                ..LaunchOptions::default()
            };
            let session = BrowserSession::start(options)
                .await
                .map_err(|e| e.to_string())?;
            Ok::<_, String>((session, server))
        })?;
        Ok(Shared {
            runtime,
            session,
            server,
        })
    });
    match shared {
        Ok(s) => s,
        Err(e) => panic!("the action tests need Chromium: {e}"),
    }
}

/// Only the tab in front paints frames, and real mouse events wait for a
/// frame, so the tests take turns: each runs alone in the newest tab.
static TURN: Mutex<()> = Mutex::new(());

/// Serves `html` at `path`, opens it in a fresh tab and runs `body`.
fn with_page<F, Fut>(path: &str, html: &str, body: F)
where
    F: FnOnce(Tab, String) -> Fut,
    Fut: Future<Output = ()>,
{
    // A test that failed while holding the turn leaves nothing broken.
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let s = shared();
    s.server.html(path, html.to_string());
    let url = s.server.url(path);
    s.runtime.block_on(async {
        let tab = s
            .session
            .new_tab(&url)
            .await
            .expect("opening the test page");
        body(tab, url).await;
    });
}

/// A page whose script starts with `window.seen = []`.
fn page(body: &str) -> String {
    format!(
        "<!doctype html><html><head><title>t</title><style>body{{margin:0;font:16px sans-serif}}</style>\
         <script>window.seen = [];</script></head><body>{body}</body></html>"
    )
}

fn options() -> ExecOptions {
    ExecOptions {
        action_timeout: Duration::from_millis(1200),
        ..ExecOptions::default()
    }
}

async fn observe(tab: &Tab) -> PageState {
    tab.observe(&ObserveOptions::default())
        .await
        .expect("observing")
}

/// Parses `action` with the catalog and runs it against a fresh observation.
async fn act(tab: &Tab, action: Value) -> ActionResult {
    act_with(tab, action, options()).await
}

async fn act_with(tab: &Tab, action: Value, opts: ExecOptions) -> ActionResult {
    let state = observe(tab).await;
    act_on(tab, &state, action, opts).await
}

async fn act_on(tab: &Tab, state: &PageState, action: Value, opts: ExecOptions) -> ActionResult {
    let action = match Catalog::builtin().parse(&action) {
        Ok(a) => a,
        Err(e) => return e.to_result(),
    };
    Executor::new(tab, opts).execute(&action, Some(state)).await
}

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

fn assert_ok(result: &ActionResult) {
    assert!(result.is_ok(), "expected success, got {result:?}");
}

fn failure(result: &ActionResult) -> (FailureReason, String) {
    match result {
        ActionResult::Failure { reason, message } => (*reason, message.clone()),
        ActionResult::Success { data } => panic!("expected a failure, got success {data:?}"),
    }
}

// ---- clicks ----

#[test]
fn click_by_index_lands_on_the_listed_button() {
    let html = page(
        r#"<button onclick="seen.push('one')">One</button>
        <button onclick="seen.push('two')">Two</button>"#,
    );
    with_page("/click", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let two = index_of(&state, "Two");
        let result = act_on(&tab, &state, json!({"click": {"index": two}}), options()).await;
        assert_ok(&result);
        assert_eq!(seen(&tab).await, vec!["two"]);
        let data = result.data().expect("data");
        assert!(data.get("settle_ms").is_some(), "{data}");
        assert_eq!(data["navigated"], json!(false));
    });
}

#[test]
fn click_events_are_trusted_mouse_events_at_the_element() {
    let html = page(
        r#"<button id="b" style="margin:40px;width:120px;height:40px">Go</button>
        <script>
          for (const t of ['mousemove','mousedown','mouseup','click']) {
            b.addEventListener(t, (e) => seen.push(t + ':' + e.isTrusted));
          }
        </script>"#,
    );
    with_page("/trusted", &html, |tab, _| async move {
        assert_ok(&act(&tab, json!({"click": {"selector": "#b"}})).await);
        let log = seen(&tab).await;
        for t in ["mousedown:true", "mouseup:true", "click:true"] {
            assert!(log.contains(&t.to_string()), "{log:?}");
        }
    });
}

#[test]
fn a_selector_with_several_matches_uses_the_first_visible_and_says_how_many() {
    let html = page(
        r#"<button class="x" style="display:none" onclick="seen.push('hidden')">A</button>
        <button class="x" onclick="seen.push('b')">B</button>
        <button class="x" onclick="seen.push('c')">C</button>"#,
    );
    with_page("/several", &html, |tab, _| async move {
        let result = act(&tab, json!({"click": {"selector": "button.x"}})).await;
        assert_ok(&result);
        assert_eq!(seen(&tab).await, vec!["b"]);
        let data = result.data().expect("data");
        assert_eq!(data["matched"], json!(3));
        assert_eq!(data["used"], json!(1));
    });
}

#[test]
fn a_target_under_a_sticky_header_is_scrolled_clear_and_clicked() {
    let html = page(
        r#"<header style="position:sticky;top:0;height:120px;background:#ccc;z-index:5">Header</header>
        <div style="height:1500px"></div>
        <button id="t" onclick="seen.push('t')">Target</button>
        <div style="height:1500px"></div>
        <script>
          // Leave the button just under the header.
          scrollTo(0, t.offsetTop - 60);
        </script>"#,
    );
    with_page("/sticky", &html, |tab, _| async move {
        let result = act(&tab, json!({"click": {"selector": "#t"}})).await;
        assert_ok(&result);
        assert_eq!(seen(&tab).await, vec!["t"]);
    });
}

#[test]
fn a_target_under_a_modal_fails_and_names_the_modal() {
    let html = page(
        r#"<button id="t" onclick="seen.push('t')">Target</button>
        <div id="backdrop" class="modal-backdrop" style="position:fixed;inset:0;background:rgba(0,0,0,.4)">
          <div style="background:#fff;width:200px;margin:200px auto">Please confirm</div>
        </div>"#,
    );
    with_page("/modal", &html, |tab, _| async move {
        let (reason, message) = failure(&act(&tab, json!({"click": {"selector": "#t"}})).await);
        assert_eq!(reason, FailureReason::NotInteractive);
        assert!(message.contains("covered by"), "{message}");
        assert!(message.contains("backdrop"), "{message}");
        assert!(seen(&tab).await.is_empty());
    });
}

#[test]
fn a_disabled_button_is_not_interactive() {
    let html = page(r#"<button id="t" disabled onclick="seen.push('t')">Target</button>"#);
    with_page("/disabled", &html, |tab, _| async move {
        let (reason, message) = failure(&act(&tab, json!({"click": {"selector": "#t"}})).await);
        assert_eq!(reason, FailureReason::NotInteractive);
        assert!(message.contains("disabled"), "{message}");
        assert!(seen(&tab).await.is_empty());
    });
}

#[test]
fn a_hidden_element_is_not_visible() {
    let html =
        page(r#"<button id="t" style="display:none" onclick="seen.push('t')">Target</button>"#);
    with_page("/hidden", &html, |tab, _| async move {
        let (reason, _) = failure(&act(&tab, json!({"click": {"selector": "#t"}})).await);
        assert_eq!(reason, FailureReason::NotVisible);
    });
}

#[test]
fn a_selector_matching_nothing_is_not_found() {
    with_page("/nothing", &page("<p>empty</p>"), |tab, _| async move {
        let (reason, message) =
            failure(&act(&tab, json!({"click": {"selector": "#missing"}})).await);
        assert_eq!(reason, FailureReason::NotFound);
        assert!(message.contains("#missing"), "{message}");
    });
}

#[test]
fn an_element_removed_after_the_observation_is_reported_gone() {
    let html = page(r#"<button id="t" onclick="seen.push('t')">Target</button>"#);
    with_page("/detached", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let index = index_of(&state, "Target");
        // The page replaces the button with an identical one.
        page_js(
            &tab,
            "const n = t.cloneNode(true); t.replaceWith(n); n.onclick = () => seen.push('new');",
        )
        .await;
        let result = act_on(&tab, &state, json!({"click": {"index": index}}), options()).await;
        let (reason, message) = failure(&result);
        assert_eq!(reason, FailureReason::NotFound);
        assert!(message.contains("no longer"), "{message}");
        assert!(seen(&tab).await.is_empty(), "the look-alike was clicked");
    });
}

#[test]
fn an_index_from_an_older_observation_is_refused() {
    let html = page(r#"<button onclick="seen.push('t')">Target</button>"#);
    with_page("/stale", &html, |tab, _| async move {
        let old = observe(&tab).await;
        let index = index_of(&old, "Target");
        let _newer = observe(&tab).await;
        let (reason, message) =
            failure(&act_on(&tab, &old, json!({"click": {"index": index}}), options()).await);
        assert_eq!(reason, FailureReason::NotFound);
        assert!(message.contains("latest"), "{message}");
        assert!(seen(&tab).await.is_empty());
    });
}

#[test]
fn a_moving_target_is_clicked_once_it_stops() {
    let html = page(
        r#"<button id="t" style="position:absolute;left:0;top:50px" onclick="seen.push('t:' + moving)">Target</button>
        <script>
          let moving = true, x = 0;
          const timer = setInterval(() => { x += 7; t.style.left = x + 'px'; }, 8);
          setTimeout(() => { clearInterval(timer); moving = false; }, 400);
        </script>"#,
    );
    with_page("/moving", &html, |tab, _| async move {
        let result = act(&tab, json!({"click": {"selector": "#t"}})).await;
        assert_ok(&result);
        assert_eq!(seen(&tab).await, vec!["t:false"]);
    });
}

#[test]
fn a_target_that_keeps_moving_fails_without_a_click() {
    let html = page(
        r#"<button id="t" style="position:absolute;left:0;top:50px" onclick="seen.push('t')">Target</button>
        <script>
          let x = 0;
          (function step() { x = (x + 9) % 500; t.style.left = x + 'px'; requestAnimationFrame(step); })();
        </script>"#,
    );
    with_page("/restless", &html, |tab, _| async move {
        let opts = ExecOptions {
            action_timeout: Duration::from_millis(500),
            ..ExecOptions::default()
        };
        let (reason, message) =
            failure(&act_with(&tab, json!({"click": {"selector": "#t"}}), opts).await);
        assert_eq!(reason, FailureReason::Timeout);
        assert!(message.contains("moving"), "{message}");
        assert!(seen(&tab).await.is_empty());
    });
}

#[test]
fn no_click_lands_after_the_time_limit() {
    // The cover goes away only after the action's limit: the page must never
    // see the click, not even later.
    let html = page(
        r#"<button id="t" onclick="seen.push('t')">Target</button>
        <div id="cover" style="position:fixed;inset:0;background:#eee"></div>
        <script>setTimeout(() => cover.remove(), 900);</script>"#,
    );
    with_page("/late", &html, |tab, _| async move {
        let opts = ExecOptions {
            action_timeout: Duration::from_millis(400),
            ..ExecOptions::default()
        };
        let (reason, message) =
            failure(&act_with(&tab, json!({"click": {"selector": "#t"}}), opts).await);
        assert_eq!(reason, FailureReason::NotInteractive);
        assert!(message.contains("cover"), "{message}");
        // Wait until well after the cover is gone.
        page_js(
            &tab,
            "new Promise((r) => { const w = () => document.getElementById('cover') ? setTimeout(w, 20) : setTimeout(r, 300); w(); })",
        )
        .await;
        assert!(seen(&tab).await.is_empty(), "a late click landed");
    });
}

#[test]
fn a_click_that_navigates_waits_for_the_new_page_and_reports_it() {
    let s = shared();
    // The new page fills in part of itself from a request after loading:
    // settling waits for the request and the DOM change it causes.
    s.server.html(
        "/next",
        page("<h1>Arrived</h1><script>addEventListener('load', () => fetch('/next-data').then((r) => r.text()).then((t) => document.body.insertAdjacentHTML('beforeend', '<p>' + t + '</p>')))</script>"),
    );
    s.server.page("/next-data", "text/plain", "late part");
    let html = page(r#"<a href="/next">Next page</a>"#);
    with_page("/navigates", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let link = index_of(&state, "Next page");
        let result = act_on(&tab, &state, json!({"click": {"index": link}}), options()).await;
        assert_ok(&result);
        let data = result.data().expect("data");
        assert_eq!(data["navigated"], json!(true), "{data}");
        assert!(
            data["url"].as_str().unwrap_or("").ends_with("/next"),
            "{data}"
        );
        let after = observe(&tab).await;
        assert!(
            after.page_text.text.contains("Arrived"),
            "{}",
            after.page_text.text
        );
        assert!(
            after.page_text.text.contains("late part"),
            "{}",
            after.page_text.text
        );
    });
}

// ---- text input ----

#[test]
fn input_text_reaches_a_react_style_controlled_field() {
    // React keeps the last value it knows in a tracker set through the
    // instance's value setter, and only reports a change when the DOM value
    // differs from it. Setting `.value` from script therefore goes unseen;
    // real typing is seen.
    let html = page(
        r#"<input id="name"><p id="state"></p>
        <script>
          const el = document.getElementById('name');
          const proto = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value');
          let tracked = '';
          Object.defineProperty(el, 'value', {
            get() { return proto.get.call(this); },
            set(v) { tracked = String(v); proto.set.call(this, v); },
          });
          window.appState = { name: '' };
          el.addEventListener('input', () => {
            const now = el.value;
            if (now !== tracked) { tracked = now; appState.name = now; state.textContent = now; }
          });
          // Controlled: render the state back into the field.
          el.addEventListener('input', () => { el.value = appState.name; });
        </script>"#,
    );
    with_page("/react", &html, |tab, _| async move {
        page_js(
            &tab,
            "document.getElementById('name').value = 'old'; appState.name = 'old'; 1",
        )
        .await;
        let result = act(
            &tab,
            json!({"input_text": {"selector": "#name", "text": "Ann Lee"}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(page_js(&tab, "appState.name").await, json!("Ann Lee"));
        assert_eq!(
            page_js(&tab, "document.getElementById('name').value").await,
            json!("Ann Lee")
        );
    });
}

#[test]
fn input_text_without_clear_appends() {
    let html = page(r#"<input id="q" value="hello">"#);
    with_page("/append", &html, |tab, _| async move {
        let result = act(
            &tab,
            json!({"input_text": {"selector": "#q", "text": " world", "clear": false}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(page_js(&tab, "q.value").await, json!("hello world"));
    });
}

#[test]
fn input_text_fires_input_and_change_like_a_vue_v_model() {
    let html = page(
        r#"<textarea id="t">x</textarea>
        <script>
          t.addEventListener('input', (e) => seen.push('input:' + e.isTrusted));
          t.addEventListener('change', () => seen.push('change:' + t.value));
        </script>"#,
    );
    with_page("/vue", &html, |tab, _| async move {
        assert_ok(
            &act(
                &tab,
                json!({"input_text": {"selector": "#t", "text": "line"}}),
            )
            .await,
        );
        let log = seen(&tab).await;
        assert!(log.contains(&"input:true".to_string()), "{log:?}");
        assert!(log.contains(&"change:line".to_string()), "{log:?}");
    });
}

#[test]
fn input_text_on_a_read_only_field_is_not_interactive() {
    let html = page(r#"<input id="r" readonly value="fixed">"#);
    with_page("/readonly", &html, |tab, _| async move {
        let (reason, message) =
            failure(&act(&tab, json!({"input_text": {"selector": "#r", "text": "x"}})).await);
        assert_eq!(reason, FailureReason::NotInteractive);
        assert!(message.contains("read-only"), "{message}");
        assert_eq!(page_js(&tab, "r.value").await, json!("fixed"));
    });
}

#[test]
fn set_text_replaces_a_contenteditable() {
    let html = page(
        r#"<div id="ed" contenteditable="true" style="min-height:40px">old <b>text</b></div>
        <script>ed.addEventListener('input', () => seen.push('input'));</script>"#,
    );
    with_page("/editable", &html, |tab, _| async move {
        assert_ok(
            &act(
                &tab,
                json!({"set_text": {"selector": "#ed", "text": "brand new"}}),
            )
            .await,
        );
        assert_eq!(
            page_js(&tab, "ed.innerText.trim()").await,
            json!("brand new")
        );
        assert!(seen(&tab).await.contains(&"input".to_string()));
    });
}

#[test]
fn clear_input_empties_the_field_and_tells_the_page() {
    let html = page(
        r#"<input id="q" value="something">
        <script>q.addEventListener('input', () => seen.push('input:' + q.value));</script>"#,
    );
    with_page("/clear", &html, |tab, _| async move {
        assert_ok(&act(&tab, json!({"clear_input": {"selector": "#q"}})).await);
        assert_eq!(page_js(&tab, "q.value").await, json!(""));
        assert_eq!(seen(&tab).await, vec!["input:"]);
    });
}

// ---- select, keys ----

#[test]
fn select_option_by_value_and_by_visible_text() {
    let html = page(
        r#"<select id="s"><option value="a">Apple</option><option value="b">Banana</option><option value="c">Cherry pie</option></select>
        <script>s.addEventListener('change', () => seen.push('change:' + s.value));
        s.addEventListener('input', () => seen.push('input'));</script>"#,
    );
    with_page("/select", &html, |tab, _| async move {
        assert_ok(
            &act(
                &tab,
                json!({"select_option": {"selector": "#s", "value": "b"}}),
            )
            .await,
        );
        assert_eq!(page_js(&tab, "s.value").await, json!("b"));
        assert_ok(
            &act(
                &tab,
                json!({"select_option": {"selector": "#s", "text": "Cherry pie"}}),
            )
            .await,
        );
        assert_eq!(page_js(&tab, "s.value").await, json!("c"));
        assert_eq!(
            seen(&tab).await,
            vec!["input", "change:b", "input", "change:c"]
        );
        let (reason, message) = failure(
            &act(
                &tab,
                json!({"select_option": {"selector": "#s", "text": "Durian"}}),
            )
            .await,
        );
        assert_eq!(reason, FailureReason::InvalidParams);
        assert!(message.contains("Banana"), "{message}");
    });
}

#[test]
fn control_a_then_typing_replaces_and_enter_submits() {
    let html = page(
        r#"<form id="f" onsubmit="event.preventDefault(); seen.push('submit:' + q.value)">
          <input id="q" value="old words"></form>"#,
    );
    with_page("/keys", &html, |tab, _| async move {
        page_js(&tab, "q.focus(); 1").await;
        assert_ok(&act(&tab, json!({"press_keys": {"keys": "Control+A"}})).await);
        assert_ok(
            &act(
                &tab,
                json!({"input_text": {"selector": "#q", "text": "new", "clear": false}}),
            )
            .await,
        );
        // input_text without clear appends at the end, so select again and
        // type over the selection with keys.
        assert_eq!(page_js(&tab, "q.value").await, json!("old wordsnew"));
        page_js(&tab, "q.focus(); 1").await;
        assert_ok(&act(&tab, json!({"press_keys": {"keys": "Control+A"}})).await);
        assert_ok(&act(&tab, json!({"press_keys": {"keys": "x"}})).await);
        assert_eq!(page_js(&tab, "q.value").await, json!("x"));
        assert_ok(
            &act(
                &tab,
                json!({"press_keys": {"keys": "Backspace", "repeat": 1}}),
            )
            .await,
        );
        assert_ok(&act(&tab, json!({"press_keys": {"keys": "z", "repeat": 3}})).await);
        assert_eq!(page_js(&tab, "q.value").await, json!("zzz"));
        assert_ok(&act(&tab, json!({"press_keys": {"keys": "Enter"}})).await);
        assert_eq!(seen(&tab).await, vec!["submit:zzz"]);
    });
}
