//! Action execution against a real Chromium, on pages this test serves on
//! 127.0.0.1. One browser for the whole binary; each test opens its own tab.
//! Pages record what they saw (clicks, values, events) in `window.seen`,
//! read back from the page's own world, so the assertions are about what the
//! page noticed, not what the executor claims.
//!
//! Without Chromium these tests fail with the install command; they never
//! skip.

mod support;

use std::time::Duration;

use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use serde_json::{json, Value};
use support::chromium::shared;
use support::cli::run_webagent;
use support::llm_server;
use support::pages::seen_page;
use support::tab::{
    act, act_on, act_with, assert_ok, failure, in_front, observe, quick_options, with_page_in_front,
};
use webagent::actions::{ActionResult, Catalog, FailureReason};
use webagent::browser::act::{ExecOptions, Executor};
use webagent::browser::{BrowserSession, LaunchOptions, ObserveOptions, Tab};
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

// ---- clicks ----

#[test]
fn click_by_index_lands_on_the_listed_button() {
    let html = seen_page(
        r#"<button onclick="seen.push('one')">One</button>
        <button onclick="seen.push('two')">Two</button>"#,
    );
    with_page_in_front("/click", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let two = index_of(&state, "Two");
        let result = act_on(
            &tab,
            &state,
            json!({"click": {"index": two}}),
            quick_options(),
        )
        .await;
        assert_ok(&result);
        assert_eq!(seen(&tab).await, vec!["two"]);
        let data = result.data().expect("data");
        assert!(data.get("settle_ms").is_some(), "{data}");
        assert_eq!(data["navigated"], json!(false));
    });
}

#[test]
fn click_events_are_trusted_mouse_events_at_the_element() {
    let html = seen_page(
        r#"<button id="b" style="margin:40px;width:120px;height:40px">Go</button>
        <script>
          for (const t of ['mousemove','mousedown','mouseup','click']) {
            b.addEventListener(t, (e) => seen.push(t + ':' + e.isTrusted));
          }
        </script>"#,
    );
    with_page_in_front("/trusted", &html, |tab, _| async move {
        assert_ok(&act(&tab, json!({"click": {"selector": "#b"}})).await);
        let log = seen(&tab).await;
        for t in ["mousedown:true", "mouseup:true", "click:true"] {
            assert!(log.contains(&t.to_string()), "{log:?}");
        }
    });
}

#[test]
fn a_selector_with_several_matches_uses_the_first_visible_and_says_how_many() {
    let html = seen_page(
        r#"<button class="x" style="display:none" onclick="seen.push('hidden')">A</button>
        <button class="x" onclick="seen.push('b')">B</button>
        <button class="x" onclick="seen.push('c')">C</button>"#,
    );
    with_page_in_front("/several", &html, |tab, _| async move {
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
    let html = seen_page(
        r#"<header style="position:sticky;top:0;height:120px;background:#ccc;z-index:5">Header</header>
        <div style="height:1500px"></div>
        <button id="t" onclick="seen.push('t')">Target</button>
        <div style="height:1500px"></div>
        <script>
          // Leave the button just under the header.
          scrollTo(0, t.offsetTop - 60);
        </script>"#,
    );
    with_page_in_front("/sticky", &html, |tab, _| async move {
        let result = act(&tab, json!({"click": {"selector": "#t"}})).await;
        assert_ok(&result);
        assert_eq!(seen(&tab).await, vec!["t"]);
    });
}

#[test]
fn a_target_under_a_modal_fails_and_names_the_modal() {
    let html = seen_page(
        r#"<button id="t" onclick="seen.push('t')">Target</button>
        <div id="backdrop" class="modal-backdrop" style="position:fixed;inset:0;background:rgba(0,0,0,.4)">
          <div style="background:#fff;width:200px;margin:200px auto">Please confirm</div>
        </div>"#,
    );
    with_page_in_front("/modal", &html, |tab, _| async move {
        let (reason, message) = failure(&act(&tab, json!({"click": {"selector": "#t"}})).await);
        assert_eq!(reason, FailureReason::NotInteractive);
        assert!(message.contains("covered by"), "{message}");
        assert!(message.contains("backdrop"), "{message}");
        assert!(seen(&tab).await.is_empty());
    });
}

#[test]
fn a_disabled_button_is_not_interactive() {
    let html = seen_page(r#"<button id="t" disabled onclick="seen.push('t')">Target</button>"#);
    with_page_in_front("/disabled", &html, |tab, _| async move {
        let (reason, message) = failure(&act(&tab, json!({"click": {"selector": "#t"}})).await);
        assert_eq!(reason, FailureReason::NotInteractive);
        assert!(message.contains("disabled"), "{message}");
        assert!(seen(&tab).await.is_empty());
    });
}

#[test]
fn a_hidden_element_is_not_visible() {
    let html = seen_page(
        r#"<button id="t" style="display:none" onclick="seen.push('t')">Target</button>"#,
    );
    with_page_in_front("/hidden", &html, |tab, _| async move {
        let (reason, _) = failure(&act(&tab, json!({"click": {"selector": "#t"}})).await);
        assert_eq!(reason, FailureReason::NotVisible);
    });
}

#[test]
fn a_selector_matching_nothing_is_not_found() {
    with_page_in_front(
        "/nothing",
        &seen_page("<p>empty</p>"),
        |tab, _| async move {
            let (reason, message) =
                failure(&act(&tab, json!({"click": {"selector": "#missing"}})).await);
            assert_eq!(reason, FailureReason::NotFound);
            assert!(message.contains("#missing"), "{message}");
        },
    );
}

#[test]
fn an_element_removed_after_the_observation_is_reported_gone() {
    let html = seen_page(r#"<button id="t" onclick="seen.push('t')">Target</button>"#);
    with_page_in_front("/detached", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let index = index_of(&state, "Target");
        // The page replaces the button with an identical one.
        page_js(
            &tab,
            "const n = t.cloneNode(true); t.replaceWith(n); n.onclick = () => seen.push('new');",
        )
        .await;
        let result = act_on(
            &tab,
            &state,
            json!({"click": {"index": index}}),
            quick_options(),
        )
        .await;
        let (reason, message) = failure(&result);
        assert_eq!(reason, FailureReason::NotFound);
        assert!(message.contains("no longer"), "{message}");
        assert!(seen(&tab).await.is_empty(), "the look-alike was clicked");
    });
}

#[test]
fn an_index_from_an_older_observation_is_refused() {
    let html = seen_page(r#"<button onclick="seen.push('t')">Target</button>"#);
    with_page_in_front("/stale", &html, |tab, _| async move {
        let old = observe(&tab).await;
        let index = index_of(&old, "Target");
        let _newer = observe(&tab).await;
        let (reason, message) = failure(
            &act_on(
                &tab,
                &old,
                json!({"click": {"index": index}}),
                quick_options(),
            )
            .await,
        );
        assert_eq!(reason, FailureReason::NotFound);
        assert!(message.contains("latest"), "{message}");
        assert!(seen(&tab).await.is_empty());
    });
}

#[test]
fn a_moving_target_is_clicked_once_it_stops() {
    let html = seen_page(
        r#"<button id="t" style="position:absolute;left:0;top:50px" onclick="seen.push('t:' + moving)">Target</button>
        <script>
          let moving = true, x = 0;
          const timer = setInterval(() => { x += 7; t.style.left = x + 'px'; }, 8);
          setTimeout(() => { clearInterval(timer); moving = false; }, 400);
        </script>"#,
    );
    with_page_in_front("/moving", &html, |tab, _| async move {
        let result = act(&tab, json!({"click": {"selector": "#t"}})).await;
        assert_ok(&result);
        assert_eq!(seen(&tab).await, vec!["t:false"]);
    });
}

#[test]
fn a_target_that_keeps_moving_fails_without_a_click() {
    let html = seen_page(
        r#"<button id="t" style="position:absolute;left:0;top:50px" onclick="seen.push('t')">Target</button>
        <script>
          let x = 0;
          (function step() { x = (x + 9) % 500; t.style.left = x + 'px'; requestAnimationFrame(step); })();
        </script>"#,
    );
    with_page_in_front("/restless", &html, |tab, _| async move {
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
    let html = seen_page(
        r#"<button id="t" onclick="seen.push('t')">Target</button>
        <div id="cover" style="position:fixed;inset:0;background:#eee"></div>
        <script>setTimeout(() => cover.remove(), 900);</script>"#,
    );
    with_page_in_front("/late", &html, |tab, _| async move {
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
        seen_page("<h1>Arrived</h1><script>addEventListener('load', () => fetch('/next-data').then((r) => r.text()).then((t) => document.body.insertAdjacentHTML('beforeend', '<p>' + t + '</p>')))</script>"),
    );
    s.server.page("/next-data", "text/plain", "late part");
    let html = seen_page(r#"<a href="/next">Next page</a>"#);
    with_page_in_front("/navigates", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let link = index_of(&state, "Next page");
        let result = act_on(
            &tab,
            &state,
            json!({"click": {"index": link}}),
            quick_options(),
        )
        .await;
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
    let html = seen_page(
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
    with_page_in_front("/react", &html, |tab, _| async move {
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
        assert_eq!(result.data().expect("data")["repaired"], json!(false));
        assert_eq!(page_js(&tab, "appState.name").await, json!("Ann Lee"));
        assert_eq!(
            page_js(&tab, "document.getElementById('name').value").await,
            json!("Ann Lee")
        );
    });
}

#[test]
fn input_text_without_clear_appends() {
    let html = seen_page(r#"<input id="q" value="hello">"#);
    with_page_in_front("/append", &html, |tab, _| async move {
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
    let html = seen_page(
        r#"<textarea id="t">x</textarea>
        <script>
          t.addEventListener('input', (e) => seen.push('input:' + e.isTrusted));
          t.addEventListener('change', () => seen.push('change:' + t.value));
        </script>"#,
    );
    with_page_in_front("/vue", &html, |tab, _| async move {
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
    let html = seen_page(r#"<input id="r" readonly value="fixed">"#);
    with_page_in_front("/readonly", &html, |tab, _| async move {
        let (reason, message) =
            failure(&act(&tab, json!({"input_text": {"selector": "#r", "text": "x"}})).await);
        assert_eq!(reason, FailureReason::NotInteractive);
        assert!(message.contains("read-only"), "{message}");
        assert_eq!(page_js(&tab, "r.value").await, json!("fixed"));
    });
}

#[test]
fn set_text_replaces_a_contenteditable() {
    let html = seen_page(
        r#"<div id="ed" contenteditable="true" style="min-height:40px">old <b>text</b></div>
        <script>ed.addEventListener('input', () => seen.push('input'));</script>"#,
    );
    with_page_in_front("/editable", &html, |tab, _| async move {
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
    let html = seen_page(
        r#"<input id="q" value="something">
        <script>q.addEventListener('input', () => seen.push('input:' + q.value));</script>"#,
    );
    with_page_in_front("/clear", &html, |tab, _| async move {
        assert_ok(&act(&tab, json!({"clear_input": {"selector": "#q"}})).await);
        assert_eq!(page_js(&tab, "q.value").await, json!(""));
        assert_eq!(seen(&tab).await, vec!["input:"]);
    });
}

// ---- select, keys ----

#[test]
fn select_option_by_value_and_by_visible_text() {
    let html = seen_page(
        r#"<select id="s"><option value="a">Apple</option><option value="b">Banana</option><option value="c">Cherry pie</option></select>
        <script>s.addEventListener('change', () => seen.push('change:' + s.value));
        s.addEventListener('input', () => seen.push('input'));</script>"#,
    );
    with_page_in_front("/select", &html, |tab, _| async move {
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
    let html = seen_page(
        r#"<form id="f" onsubmit="event.preventDefault(); seen.push('submit:' + q.value)">
          <input id="q" value="old words"></form>"#,
    );
    with_page_in_front("/keys", &html, |tab, _| async move {
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

// ---- frames and shadow roots ----

#[test]
fn clicks_land_inside_a_same_origin_iframe_and_a_shadow_root() {
    let s = shared();
    s.server.html(
        "/inner",
        "<!doctype html><body style='margin:0'><div style='height:60px'></div>\
         <button onclick=\"parent.seen.push('framed')\">Framed</button></body>",
    );
    let html = seen_page(
        r#"<div style="height:80px"></div>
        <iframe src="/inner" style="width:300px;height:200px;border:10px solid #999;padding:5px"></iframe>
        <div id="host"></div>
        <script>
          const root = host.attachShadow({mode: 'open'});
          root.innerHTML = '<button>Shadowed</button>';
          root.querySelector('button').onclick = () => seen.push('shadow');
          addEventListener('load', () => seen.push('loaded'));
        </script>"#,
    );
    with_page_in_front("/frames", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let framed = index_of(&state, "Framed");
        let shadowed = index_of(&state, "Shadowed");
        assert_ok(
            &act_on(
                &tab,
                &state,
                json!({"click": {"index": framed}}),
                quick_options(),
            )
            .await,
        );
        let state = observe(&tab).await;
        assert_ok(
            &act_on(
                &tab,
                &state,
                json!({"click": {"index": shadowed}}),
                quick_options(),
            )
            .await,
        );
        assert_eq!(seen(&tab).await, vec!["loaded", "framed", "shadow"]);
    });
}

// ---- hover, scroll ----

#[test]
fn hover_moves_the_mouse_onto_the_element() {
    let html = seen_page(
        r#"<div id="menu" style="width:120px;height:40px;background:#ddd" onmouseenter="seen.push('enter')">Menu</div>"#,
    );
    with_page_in_front("/hover", &html, |tab, _| async move {
        assert_ok(&act(&tab, json!({"hover": {"selector": "#menu"}})).await);
        assert_eq!(seen(&tab).await, vec!["enter"]);
    });
}

#[test]
fn scroll_moves_the_page_and_a_nested_container() {
    let mut rows = String::new();
    for i in 0..60 {
        rows.push_str(&format!("<p style='margin:0;height:30px'>Row {i}</p>"));
    }
    let html = seen_page(&format!(
        r#"<div id="box" style="height:150px;overflow:auto;border:1px solid">{rows}</div>
        <div style="height:3000px"></div>"#
    ));
    with_page_in_front("/scroll", &html, |tab, _| async move {
        let result = act(
            &tab,
            json!({"scroll": {"direction": "down", "selector": "#box"}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(page_js(&tab, "box.scrollTop").await, json!(150));
        assert_eq!(
            page_js(&tab, "scrollY").await,
            json!(0),
            "the page moved too"
        );
        let result = act(&tab, json!({"scroll": {"direction": "down", "pages": 2}})).await;
        assert_ok(&result);
        let height = page_js(&tab, "innerHeight").await.as_f64().unwrap_or(0.0);
        assert_eq!(page_js(&tab, "scrollY").await.as_f64(), Some(height * 2.0));
        assert_ok(&act(&tab, json!({"scroll": {"direction": "up", "pages": 10}})).await);
        assert_eq!(page_js(&tab, "scrollY").await, json!(0));
    });
}

#[test]
fn scroll_to_brings_a_far_element_into_view() {
    let html = seen_page(r#"<div style="height:4000px"></div><p id="far">Far away</p>"#);
    with_page_in_front("/scrollto", &html, |tab, _| async move {
        assert_ok(&act(&tab, json!({"scroll_to": {"selector": "#far"}})).await);
        let top = page_js(&tab, "far.getBoundingClientRect().top")
            .await
            .as_f64()
            .unwrap_or(-1.0);
        let height = page_js(&tab, "innerHeight").await.as_f64().unwrap_or(0.0);
        assert!(top >= 0.0 && top < height, "top {top} of {height}");
    });
}

// ---- drag and drop, upload ----

#[test]
fn drag_and_drop_reaches_html5_drop_handlers() {
    let html = seen_page(
        r#"<div id="card" draggable="true" style="width:80px;height:40px;background:#9cf">Card</div>
        <div id="bin" style="margin-top:100px;width:200px;height:100px;background:#fc9">Bin</div>
        <script>
          card.addEventListener('dragstart', (e) => e.dataTransfer.setData('text/plain', 'card-1'));
          bin.addEventListener('dragover', (e) => e.preventDefault());
          bin.addEventListener('drop', (e) => { e.preventDefault(); seen.push('drop:' + e.dataTransfer.getData('text/plain')); });
        </script>"#,
    );
    with_page_in_front("/dnd", &html, |tab, _| async move {
        let result = act(
            &tab,
            json!({"drag_and_drop": {"from": {"selector": "#card"}, "to": {"selector": "#bin"}}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(seen(&tab).await, vec!["drop:card-1"]);
        assert_eq!(result.data().expect("data")["mode"], json!("html5"));
    });
}

#[test]
fn drag_and_drop_moves_a_pointer_driven_slider() {
    let html = seen_page(
        r#"<div id="track" style="position:relative;width:400px;height:20px;background:#eee;margin:40px">
          <div id="knob" style="position:absolute;left:0;top:0;width:20px;height:20px;background:#36c"></div></div>
        <div id="end" style="position:absolute;left:340px;top:40px;width:20px;height:20px"></div>
        <script>
          let dragging = false;
          knob.addEventListener('mousedown', () => { dragging = true; });
          addEventListener('mousemove', (e) => { if (dragging) { knob.style.left = (e.clientX - 50) + 'px'; seen.push('move'); } });
          addEventListener('mouseup', () => { if (dragging) seen.push('up'); dragging = false; });
        </script>"#,
    );
    with_page_in_front("/slider", &html, |tab, _| async move {
        let result = act(
            &tab,
            json!({"drag_and_drop": {"from": {"selector": "#knob"}, "to": {"selector": "#end"}}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(result.data().expect("data")["mode"], json!("mouse"));
        let log = seen(&tab).await;
        assert!(log.iter().filter(|e| *e == "move").count() >= 3, "{log:?}");
        assert_eq!(log.last().map(String::as_str), Some("up"));
        let left = page_js(&tab, "parseFloat(knob.style.left)")
            .await
            .as_f64()
            .unwrap_or(0.0);
        assert!(left > 250.0, "the knob only got to {left}");
    });
}

#[test]
fn upload_file_sets_the_file_and_a_missing_file_is_invalid() {
    let dir = std::env::temp_dir().join(format!("webagent-upload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("report.txt");
    std::fs::write(&file, "hello upload").expect("writing the file");
    let html = seen_page(
        r#"<input type="file" id="f">
        <script>f.addEventListener('change', async () => seen.push(f.files[0].name + ':' + await f.files[0].text()));</script>"#,
    );
    with_page_in_front("/upload", &html, |tab, _| async move {
        let path = file.to_string_lossy().to_string();
        assert_ok(
            &act(
                &tab,
                json!({"upload_file": {"selector": "#f", "path": path}}),
            )
            .await,
        );
        // The change handler reads the file asynchronously.
        page_js(
            &tab,
            "new Promise((r) => { const w = () => seen.length ? r() : setTimeout(w, 10); w(); })",
        )
        .await;
        assert_eq!(seen(&tab).await, vec!["report.txt:hello upload"]);
        let (reason, message) = failure(
            &act(
                &tab,
                json!({"upload_file": {"selector": "#f", "path": "/no/such/file.pdf"}}),
            )
            .await,
        );
        assert_eq!(reason, FailureReason::InvalidParams);
        assert!(message.contains("/no/such/file.pdf"), "{message}");
        let (reason, _) = failure(
            &act(
                &tab,
                json!({"upload_file": {"selector": "body", "path": path}}),
            )
            .await,
        );
        assert_eq!(reason, FailureReason::InvalidParams);
    });
}

// ---- forms, waiting, navigation ----

#[test]
fn submit_form_submits_and_follows_the_navigation() {
    let s = shared();
    s.server.html("/thanks", seen_page("<h1>Thanks</h1>"));
    let html = seen_page(
        r#"<form action="/thanks" method="get"><input name="who" id="who" required><button>Send</button></form>"#,
    );
    with_page_in_front("/form", &html, |tab, _| async move {
        let (reason, message) =
            failure(&act(&tab, json!({"submit_form": {"selector": "#who"}})).await);
        assert_eq!(reason, FailureReason::NotInteractive);
        assert!(message.contains("who"), "{message}");
        assert_ok(
            &act(
                &tab,
                json!({"input_text": {"selector": "#who", "text": "Ann"}}),
            )
            .await,
        );
        let result = act(&tab, json!({"submit_form": {"selector": "#who"}})).await;
        assert_ok(&result);
        let data = result.data().expect("data");
        assert_eq!(data["navigated"], json!(true));
        assert!(
            data["url"]
                .as_str()
                .unwrap_or("")
                .contains("/thanks?who=Ann"),
            "{data}"
        );
    });
}

#[test]
fn wait_for_sees_an_element_appear_and_times_out_on_one_that_never_does() {
    let html = seen_page(
        r#"<script>setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p id="late">Here now</p>'), 300);</script>"#,
    );
    with_page_in_front("/waitfor", &html, |tab, _| async move {
        let result = act(
            &tab,
            json!({"wait_for": {"selector": "#late", "timeout_ms": 3000}}),
        )
        .await;
        assert_ok(&result);
        let result = act(
            &tab,
            json!({"wait_for": {"text": "Here now", "timeout_ms": 1000}}),
        )
        .await;
        assert_ok(&result);
        let (reason, message) = failure(
            &act(
                &tab,
                json!({"wait_for": {"selector": "#never", "timeout_ms": 300}}),
            )
            .await,
        );
        assert_eq!(reason, FailureReason::Timeout);
        assert!(message.contains("#never"), "{message}");
        assert_ok(&act(&tab, json!({"wait": {"seconds": 0.1}})).await);
    });
}

#[test]
fn navigate_back_forward_and_reload() {
    let s = shared();
    s.server.html("/second", seen_page("<h1>Second page</h1>"));
    let html = seen_page("<h1>First page</h1>");
    with_page_in_front("/first", &html, |tab, url| async move {
        let result = act(&tab, json!({"navigate": {"url": "/second"}})).await;
        assert_ok(&result);
        assert!(tab.url().await.expect("url").ends_with("/second"));
        let result = act(&tab, json!({"back": {}})).await;
        assert_ok(&result);
        assert_eq!(tab.url().await.expect("url"), url);
        assert_eq!(result.data().expect("data")["navigated"], json!(true));
        assert_ok(&act(&tab, json!({"forward": {}})).await);
        assert!(tab.url().await.expect("url").ends_with("/second"));
        let (reason, _) = failure(&act(&tab, json!({"forward": {}})).await);
        assert_eq!(reason, FailureReason::Navigation);
        page_js(&tab, "window.marker = 1").await;
        assert_ok(&act(&tab, json!({"reload": {}})).await);
        assert_eq!(
            page_js(&tab, "window.marker === undefined").await,
            json!(true)
        );
        let state = observe(&tab).await;
        assert!(state.page_text.text.contains("Second page"));
        let (reason, _) =
            failure(&act(&tab, json!({"navigate": {"url": "http://127.0.0.1:9/"}})).await);
        assert_eq!(reason, FailureReason::Navigation);
    });
}

#[test]
fn read_page_and_screenshot() {
    let html = seen_page("<h1>Report</h1><p>Revenue grew by 12 percent.</p>");
    with_page_in_front("/read", &html, |tab, _| async move {
        let result = act(&tab, json!({"read_page": {}})).await;
        assert_ok(&result);
        let text = result.data().expect("data")["text"]
            .as_str()
            .unwrap_or("")
            .to_string();
        assert!(text.contains("Revenue grew by 12 percent."), "{text}");
        let file = std::env::temp_dir().join(format!("webagent-shot-{}.png", std::process::id()));
        let path = file.to_string_lossy().to_string();
        assert_ok(
            &act(
                &tab,
                json!({"screenshot": {"path": path, "full_page": true}}),
            )
            .await,
        );
        let bytes = std::fs::read(&file).expect("the screenshot file");
        assert_eq!(&bytes[1..4], b"PNG");
    });
}

// ---- overlays ----

#[test]
fn overlays_draw_without_moving_the_layout_or_catching_clicks() {
    let html = seen_page(
        r#"<button id="b" onclick="seen.push('b')" style="margin:50px">Press</button><p id="p">Text below</p>"#,
    );
    with_page_in_front("/overlays", &html, |tab, _| async move {
        let layout = "JSON.stringify([b.getBoundingClientRect(), p.getBoundingClientRect(), document.documentElement.scrollHeight])";
        let before = page_js(&tab, layout).await;
        for action in [
            json!({"highlight": {"selector": "#b", "label": "here"}}),
            json!({"border": {"selector": "#b", "color": "red"}}),
            json!({"spotlight": {"selector": "#b"}}),
            json!({"inject": {"selector": "#p", "text": "a note"}}),
            json!({"show_subtitle": {"text": "Step 1: press the button"}}),
        ] {
            assert_ok(&act(&tab, action).await);
        }
        assert_eq!(
            page_js(&tab, layout).await,
            before,
            "overlays moved the layout"
        );
        assert_eq!(
            page_js(&tab, "document.querySelectorAll('webagent-overlay').length").await,
            json!(1)
        );
        // The layer covers the button but lets the click through.
        assert_ok(&act(&tab, json!({"click": {"selector": "#b"}})).await);
        assert_eq!(seen(&tab).await, vec!["b"]);
        // The page's own listing does not gain the overlay's text.
        let state = observe(&tab).await;
        assert!(
            !state.page_text.text.contains("Step 1"),
            "{}",
            state.page_text.text
        );
        let cleared = act(&tab, json!({"clear_overlays": {}})).await;
        assert_ok(&cleared);
        assert_eq!(cleared.data().expect("data")["removed"], json!(5));
        assert_eq!(
            page_js(&tab, "document.querySelectorAll('webagent-overlay').length").await,
            json!(0)
        );
    });
}

// ---- policy and parameters ----

#[test]
fn execute_javascript_is_blocked_unless_enabled() {
    let html = seen_page("<p>js</p>");
    with_page_in_front("/js", &html, |tab, _| async move {
        let (reason, _) = failure(
            &act(
                &tab,
                json!({"execute_javascript": {"script": "window.ran = true"}}),
            )
            .await,
        );
        assert_eq!(reason, FailureReason::Blocked);
        assert_eq!(page_js(&tab, "window.ran === undefined").await, json!(true));
        let opts = ExecOptions {
            allow_javascript: true,
            ..quick_options()
        };
        let result = act_with(
            &tab,
            json!({"execute_javascript": {"script": "window.ran = 40 + 2"}}),
            opts,
        )
        .await;
        assert_ok(&result);
        assert_eq!(result.data().expect("data")["value"], json!(42));
    });
}

#[test]
fn forbidden_selectors_and_bad_parameters_are_invalid_params() {
    let html = seen_page(r#"<button onclick="seen.push('x')">X</button>"#);
    with_page_in_front("/invalid", &html, |tab, _| async move {
        for action in [
            json!({"click": {"selector": "button:has(span)"}}),
            json!({"click": {"selector": "*"}}),
            json!({"click": {}}),
            json!({"input_text": {"selector": "#a"}}),
        ] {
            let (reason, _) = failure(&act(&tab, action.clone()).await);
            assert_eq!(reason, FailureReason::InvalidParams, "{action}");
        }
        assert!(seen(&tab).await.is_empty());
    });
}

#[test]
fn actions_without_a_browser_part_answer_without_acting() {
    let html = seen_page("<p>plain</p>");
    with_page_in_front("/plain", &html, |tab, _| async move {
        let (reason, message) =
            failure(&act(&tab, json!({"goto_page": {"name": "billing"}})).await);
        assert_eq!(reason, FailureReason::NotFound);
        assert!(message.contains("sitemap"), "{message}");
        // The browser's part of `extract` is reading the page; the model
        // answers on the agent's side (tests/agent.rs).
        let read = act(&tab, json!({"extract": {"instruction": "prices"}})).await;
        assert_eq!(read.data().map(|d| d["text"].clone()), Some(json!("plain")));
        let done = act(&tab, json!({"done": {"text": "finished", "success": true}})).await;
        assert_eq!(
            done.data(),
            Some(&json!({"text": "finished", "success": true}))
        );
        assert_ok(&act(&tab, json!({"think": {"reasoning": "look first"}})).await);
        let state = observe(&tab).await;
        let action = Catalog::builtin()
            .parse(&json!({"click": {"index": 0}}))
            .expect("parsing");
        let result = Executor::new(&tab, quick_options())
            .execute(&action, None)
            .await;
        assert_eq!(result.reason(), Some(FailureReason::NotFound));
        drop(state);
    });
}

// ---- the exec command ----

#[test]
fn exec_prints_one_json_line_per_action_and_exits_by_outcome() {
    let s = shared();
    s.server.html(
        "/exec",
        seen_page(
            r#"<button onclick="document.title = 'pressed'">Press</button><input id="name">"#,
        ),
    );
    let url = s.server.url("/exec");
    let out = run_webagent(&[
        "exec",
        &url,
        r#"{"click":{"index":0}}"#,
        r##"{"input_text":{"selector":"#name","text":"Ann"}}"##,
        "--json",
        "--observe",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert_eq!(lines[0]["action"], json!("click"));
    assert_eq!(lines[0]["params"], json!({"index": 0}));
    assert_eq!(lines[0]["result"]["ok"], json!(true));
    assert_eq!(lines[0]["url"], json!(url));
    assert!(lines[0]["ms"].as_f64().is_some());
    assert_eq!(lines[1]["params"]["text"], json!("Ann"));
    assert_eq!(lines[2]["type"], json!("observation"));
    assert_eq!(lines[2]["title"], json!("pressed"));
    assert!(
        lines[2]["listing"].as_str().unwrap_or("").contains("Ann"),
        "{}",
        lines[2]
    );

    let out = run_webagent(&[
        "exec",
        &url,
        r##"{"click":{"selector":"#missing"}}"##,
        r#"{"click":{"index":0}}"#,
        "--json",
        "--timeout-ms",
        "200",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(
        lines.len(),
        2,
        "a failure must not stop the later actions: {stdout}"
    );
    assert_eq!(lines[0]["result"]["reason"], json!("not_found"));
    assert_eq!(lines[1]["result"]["ok"], json!(true));
}

#[test]
fn exec_goto_page_uses_the_sitemap_given_by_flag() {
    let s = shared();
    s.server
        .html("/exec-site/billing", seen_page("<h1>Billing settings</h1>"));
    s.server.html("/exec-site", seen_page("<h1>Start</h1>"));
    let dir = std::env::temp_dir().join(format!("webagent-exec-sitemap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    std::fs::write(
        dir.join("site.yaml"),
        "title: Home\nchildren:\n  exec-site:\n    title: Site\n    children:\n      billing:\n        title: Billing\n        keywords: [invoices]\n",
    )
    .expect("writing the sitemap");
    let url = s.server.url("/exec-site");
    let with_sitemap = run_webagent(&[
        "exec",
        &url,
        "goto_page invoices",
        "--json",
        "--sitemap",
        dir.to_str().expect("a UTF-8 temp path"),
    ]);
    let stdout = String::from_utf8_lossy(&with_sitemap.stdout);
    assert_eq!(with_sitemap.status.code(), Some(0), "{stdout}");
    let line: Value = serde_json::from_str(stdout.trim()).expect("a JSON line");
    assert_eq!(line["url"], json!(s.server.url("/exec-site/billing")));

    // A broken sitemap is a configuration error naming the file, not a run
    // without it.
    std::fs::write(dir.join("site.yaml"), "title: [unclosed\n").expect("writing");
    let broken = run_webagent(&[
        "exec",
        &url,
        "read_page",
        "--sitemap",
        dir.to_str().unwrap_or_default(),
    ]);
    assert_eq!(broken.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&broken.stderr).contains("site.yaml"),
        "{}",
        String::from_utf8_lossy(&broken.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn goto_page_searches_the_sitemap_and_navigates() {
    use webagent::sitemap::{Sitemap, SitemapSet};
    let s = shared();
    s.server
        .html("/settings/billing", seen_page("<h1>Billing settings</h1>"));
    let yaml = format!(
        "origin: {}\ntitle: Home\nchildren:\n  settings:\n    title: Settings\n    children:\n      billing:\n        title: Billing\n        keywords: [invoices, payment]\n  orders:\n    title: Orders\n    children:\n      ':id':\n        title: Order detail\n",
        s.server.origin()
    );
    let sitemap = Sitemap::from_yaml_str(&yaml).expect("the sitemap parses");
    let mut set = SitemapSet::new();
    set.insert(sitemap);
    with_page_in_front("/home", &seen_page("<p>home</p>"), |tab, _| async move {
        let state = observe(&tab).await;
        let executor = Executor::new(&tab, quick_options()).with_sitemaps(&set);
        let action = Catalog::builtin()
            .parse(&json!({"goto_page": {"name": "invoices"}}))
            .expect("parsing");
        let result = executor.execute(&action, Some(&state)).await;
        assert_ok(&result);
        assert!(tab.url().await.expect("url").ends_with("/settings/billing"));
        assert_eq!(
            result.data().expect("data")["page"]["title"],
            json!("Billing")
        );
        let action = Catalog::builtin()
            .parse(&json!({"goto_page": {"name": "order detail"}}))
            .expect("parsing");
        let result = executor.execute(&action, Some(&state)).await;
        assert_eq!(
            result.reason(),
            Some(FailureReason::InvalidParams),
            "{result:?}"
        );
    });
}

#[test]
fn settling_waits_for_a_request_the_click_started() {
    let s = shared();
    s.server
        .page("/api/total", "application/json", "{\"total\": 17}");
    let html = seen_page(
        r#"<button onclick="fetch('/api/total').then((r) => r.json()).then((j) => { out.textContent = 'Total ' + j.total; })">Load</button>
        <p id="out"></p>"#,
    );
    with_page_in_front("/fetching", &html, |tab, _| async move {
        let result = act(&tab, json!({"click": {"selector": "button"}})).await;
        assert_ok(&result);
        // No waiting here: the executor's settle already covered it.
        let state = observe(&tab).await;
        assert!(
            state.page_text.text.contains("Total 17"),
            "{}",
            state.page_text.text
        );
    });
}

#[test]
fn same_document_navigation_by_fragment_and_history_api() {
    let html = seen_page(
        r#"<button onclick="history.pushState({}, '', '/pushed-here')">Push</button>
        <div style="height:3000px"></div><h2 id="sec">Section</h2>"#,
    );
    with_page_in_front("/samedoc", &html, |tab, url| async move {
        let result = act(&tab, json!({"navigate": {"url": "#sec"}})).await;
        assert_ok(&result);
        assert_eq!(result.data().expect("data")["navigated"], json!(true));
        assert!(tab.url().await.expect("url").ends_with("#sec"));
        assert!(page_js(&tab, "scrollY").await.as_f64().unwrap_or(0.0) > 1000.0);
        let result = act(&tab, json!({"back": {}})).await;
        assert_ok(&result);
        assert_eq!(tab.url().await.expect("url"), url);
        page_js(&tab, "scrollTo(0, 0)").await;
        let result = act(&tab, json!({"click": {"selector": "button"}})).await;
        assert_ok(&result);
        let data = result.data().expect("data");
        assert_eq!(data["navigated"], json!(true), "{data}");
        assert!(
            data["url"].as_str().unwrap_or("").ends_with("/pushed-here"),
            "{data}"
        );
    });
}

#[test]
fn input_text_reaches_fields_in_a_frame_and_a_shadow_root() {
    let s = shared();
    s.server.html(
        "/inner-form",
        "<!doctype html><body><input id='inner' placeholder='Framed field'></body>",
    );
    let html = seen_page(
        r#"<iframe id="fr" src="/inner-form" style="width:300px;height:80px"></iframe>
        <div id="host"></div>
        <script>
          host.attachShadow({mode: 'open'}).innerHTML = '<input placeholder="Shadow field">';
        </script>"#,
    );
    with_page_in_front("/frame-form", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let find = |placeholder: &str| {
            state
                .elements
                .iter()
                .find(|e| e.attribute("placeholder") == Some(placeholder))
                .map(|e| e.index.0 as u32)
                .unwrap_or_else(|| panic!("no {placeholder} in\n{}", state.listing))
        };
        let (framed, shadowed) = (find("Framed field"), find("Shadow field"));
        let result = act_on(
            &tab,
            &state,
            json!({"input_text": {"index": framed, "text": "in the frame"}}),
            quick_options(),
        )
        .await;
        assert_ok(&result);
        assert_eq!(result.data().expect("data")["repaired"], json!(false));
        let state = observe(&tab).await;
        let result = act_on(
            &tab,
            &state,
            json!({"input_text": {"index": shadowed, "text": "in the shadow"}}),
            quick_options(),
        )
        .await;
        assert_ok(&result);
        // Typed, not patched in through the value setter afterwards.
        assert_eq!(result.data().expect("data")["repaired"], json!(false));
        assert_eq!(
            page_js(&tab, "fr.contentDocument.getElementById('inner').value").await,
            json!("in the frame")
        );
        assert_eq!(
            page_js(&tab, "host.shadowRoot.querySelector('input').value").await,
            json!("in the shadow")
        );
    });
}

#[test]
fn dialogs_opened_by_an_action_are_answered_and_reported() {
    let html = seen_page(
        r#"<button id="del" onclick="seen.push('confirm:' + confirm('Delete the order?'))">Delete</button>
        <button id="hi" onclick="alert('Saved'); seen.push('after alert')">Save</button>"#,
    );
    with_page_in_front("/dialogs", &html, |tab, _| async move {
        let result = act(&tab, json!({"click": {"selector": "#del"}})).await;
        assert_ok(&result);
        let dialogs = &result.data().expect("data")["dialogs"];
        assert_eq!(
            dialogs,
            &json!([{"type": "confirm", "message": "Delete the order?", "accepted": false}])
        );
        let opts = ExecOptions {
            accept_dialogs: true,
            ..quick_options()
        };
        assert_ok(&act_with(&tab, json!({"click": {"selector": "#del"}}), opts).await);
        let result = act(&tab, json!({"click": {"selector": "#hi"}})).await;
        assert_ok(&result);
        assert_eq!(
            result.data().expect("data")["dialogs"][0]["type"],
            json!("alert")
        );
        assert_eq!(
            seen(&tab).await,
            vec!["confirm:false", "confirm:true", "after alert"]
        );
    });
}

#[test]
fn extract_reads_the_page_and_the_model_answers_from_it_with_the_schema() {
    use llm_server::{tool_call_completion, LlmServer, Reply};
    use std::sync::Arc;
    use webagent::agent::ModelExtractor;
    use webagent::environment::Extractor;
    use webagent::llm::{LlmClient, LlmConfig};
    let html = seen_page("<h1>Plans</h1><p>Basic costs 9 dollars. Pro costs 29 dollars.</p>");
    with_page_in_front("/extract", &html, |tab, _| async move {
        let answer =
            json!({"plans": [{"name": "Basic", "price": 9}, {"name": "Pro", "price": 29}]});
        let server = LlmServer::start(vec![Reply::json(
            200,
            tool_call_completion("extract_result", &answer),
        )])
        .await;
        let client = LlmClient::new(LlmConfig {
            base_url: server.base_url(),
            streaming: false,
            ..LlmConfig::default()
        })
        .expect("a client");
        let state = observe(&tab).await;
        let schema = json!({"type": "object", "properties": {"plans": {"type": "array"}}});
        let action = Catalog::builtin()
            .parse(
                &json!({"extract": {"instruction": "list the plans and prices", "schema": schema}}),
            )
            .expect("parsing");
        // The browser reads the page; the model's side answers from it.
        let read = Executor::new(&tab, quick_options())
            .execute(&action, Some(&state))
            .await;
        let page = read.data().expect("the page text").clone();
        assert!(
            page["text"]
                .as_str()
                .unwrap_or_default()
                .contains("Pro costs 29"),
            "{page}"
        );
        let extractor = ModelExtractor::new(Arc::new(client), Default::default());
        let result = extractor
            .extract("list the plans and prices", Some(&schema), &page)
            .await;
        assert_eq!(result.data(), Some(&answer), "{result:?}");
        let sent = server.requests()[0].json();
        let text = sent.to_string();
        assert!(text.contains("Pro costs 29 dollars"), "{text}");
        assert!(text.contains("list the plans and prices"), "{text}");
        assert_eq!(sent["tools"][0]["function"]["parameters"], schema);
    });
}

#[test]
fn navigations_the_allowed_domains_refuse_are_blocked() {
    let s = shared();
    let origin = s.server.origin();
    let port = s.server.addr().port();
    s.server.html(
        "/guarded",
        seen_page(&format!(
            r#"<a href="http://localhost:{port}/elsewhere">Elsewhere</a>"#
        )),
    );
    let url = s.server.url("/guarded");
    let _turn = in_front();
    s.runtime.block_on(async {
        // A browser of its own: the allowed list is fixed at launch.
        let mut session = BrowserSession::start(LaunchOptions {
            allowed_domains: vec![origin.clone()],
            ..LaunchOptions::default()
        })
        .await
        .expect("a guarded browser");
        let tab = session.new_tab(&url).await.expect("opening the page");
        let (reason, message) =
            failure(&act(&tab, json!({"navigate": {"url": "http://example.com/"}})).await);
        assert_eq!(reason, FailureReason::Blocked, "{message}");
        let state = observe(&tab).await;
        let link = index_of(&state, "Elsewhere");
        let result = act_on(
            &tab,
            &state,
            json!({"click": {"index": link}}),
            quick_options(),
        )
        .await;
        let (reason, message) = failure(&result);
        assert_eq!(reason, FailureReason::Blocked, "{message}");
        assert!(message.contains("localhost"), "{message}");
        // The refused load shows Chromium's error page, never the other site.
        let now = tab.url().await.expect("url");
        assert!(!now.contains("localhost"), "the tab reached {now}");
        session.shutdown();
    });
}

// ---- sortable lists, written dates, late menus ----

/// A sortable list in the style of jQuery UI: one mousedown listener on the
/// list, and the dragged item trades places with a neighbour only once the
/// pointer passes that neighbour's midpoint.
const MOUSE_SORTABLE: &str = r#"<ul id="list" style="list-style:none;margin:20px;padding:0;width:200px">
  <li class="item" style="height:40px;background:#eee;margin:2px 0;cursor:default">Alpha</li>
  <li class="item" style="height:40px;background:#ddd;margin:2px 0;cursor:default">Bravo</li>
  <li class="item" style="height:40px;background:#ccc;margin:2px 0;cursor:default">Charlie</li>
  <li class="item" style="height:40px;background:#bbb;margin:2px 0;cursor:default">Delta</li>
</ul>
<script>
  const order = () => Array.from(list.children).map((li) => li.textContent.trim()).join(',');
  let held = null;
  list.addEventListener('mousedown', (e) => { held = e.target.closest('li'); e.preventDefault(); });
  addEventListener('mousemove', (e) => {
    if (!held) return;
    for (const other of list.children) {
      if (other === held) continue;
      const r = other.getBoundingClientRect();
      if (e.clientX < r.left || e.clientX > r.right || e.clientY < r.top || e.clientY > r.bottom) continue;
      const mid = r.top + r.height / 2;
      const heldIsAbove = held.compareDocumentPosition(other) & Node.DOCUMENT_POSITION_FOLLOWING;
      if (heldIsAbove && e.clientY > mid) other.after(held);
      else if (!heldIsAbove && e.clientY < mid) other.before(held);
    }
  });
  addEventListener('mouseup', () => { if (held) seen.push(order()); held = null; });
</script>"#;

/// The same list with HTML5 drag and drop (`draggable=true`), reordering on
/// dragover past the midpoint.
const HTML5_SORTABLE: &str = r#"<ul id="list" style="list-style:none;margin:20px;padding:0;width:200px">
  <li draggable="true" style="height:40px;background:#eee;margin:2px 0">Alpha</li>
  <li draggable="true" style="height:40px;background:#ddd;margin:2px 0">Bravo</li>
  <li draggable="true" style="height:40px;background:#ccc;margin:2px 0">Charlie</li>
  <li draggable="true" style="height:40px;background:#bbb;margin:2px 0">Delta</li>
</ul>
<script>
  let dragged = null;
  list.addEventListener('dragstart', (e) => { dragged = e.target.closest('li'); e.dataTransfer.setData('text/plain', 'x'); });
  list.addEventListener('dragover', (e) => {
    e.preventDefault();
    const over = e.target.closest && e.target.closest('li');
    if (!dragged || !over || over === dragged) return;
    const r = over.getBoundingClientRect();
    const below = dragged.compareDocumentPosition(over) & Node.DOCUMENT_POSITION_FOLLOWING;
    if (below && e.clientY > r.top + r.height / 2) over.after(dragged);
    else if (!below && e.clientY < r.top + r.height / 2) over.before(dragged);
  });
  list.addEventListener('drop', (e) => e.preventDefault());
</script>"#;

async fn list_order(tab: &Tab) -> String {
    page_js(
        tab,
        "Array.from(document.querySelectorAll('#list li')).map((li) => li.textContent.trim()).join(',')",
    )
    .await
    .as_str()
    .unwrap_or_default()
    .to_string()
}

/// Drags the item named `from` onto the item named `to`, both by their
/// listed index.
async fn drag_item(tab: &Tab, from: &str, to: &str) -> ActionResult {
    let state = observe(tab).await;
    let action = json!({"drag_and_drop": {
        "from": {"index": index_of(&state, from)},
        "to": {"index": index_of(&state, to)},
    }});
    act_on(tab, &state, action, quick_options()).await
}

#[test]
fn a_mouse_sortable_list_is_reordered_down_and_up_by_index() {
    with_page_in_front(
        "/sortable-mouse",
        &seen_page(MOUSE_SORTABLE),
        |tab, _| async move {
            // The items are numbered although only the list has a listener.
            let down = drag_item(&tab, "Alpha", "Charlie").await;
            assert_ok(&down);
            assert_eq!(list_order(&tab).await, "Bravo,Charlie,Alpha,Delta");
            let said = down.data().expect("data")["order"].to_string();
            assert!(said.contains("position 1 to 3"), "{said}");
            let up = drag_item(&tab, "Delta", "Bravo").await;
            assert_ok(&up);
            assert_eq!(list_order(&tab).await, "Delta,Bravo,Charlie,Alpha");
            // By selector: `li:nth-child(1)` names another item once the
            // list reordered; the check follows the dragged one.
            let by_selector = act(
                &tab,
                json!({"drag_and_drop": {
                    "from": {"selector": "#list li:nth-child(1)"},
                    "to": {"selector": "#list li:nth-child(3)"},
                }}),
            )
            .await;
            assert_ok(&by_selector);
            assert_eq!(list_order(&tab).await, "Bravo,Charlie,Delta,Alpha");
        },
    );
}

#[test]
fn an_html5_sortable_list_is_reordered_down_and_up() {
    with_page_in_front(
        "/sortable-html5",
        &seen_page(HTML5_SORTABLE),
        |tab, _| async move {
            let down = drag_item(&tab, "Bravo", "Delta").await;
            assert_ok(&down);
            assert_eq!(down.data().expect("data")["mode"], json!("html5"));
            assert_eq!(list_order(&tab).await, "Alpha,Charlie,Delta,Bravo");
            let up = drag_item(&tab, "Delta", "Alpha").await;
            assert_ok(&up);
            assert_eq!(list_order(&tab).await, "Delta,Alpha,Charlie,Bravo");
        },
    );
}

#[test]
fn a_list_that_ignores_the_drag_is_reported_as_not_reordered() {
    let html = seen_page(
        r#"<ul id="list" style="list-style:none;padding:0;width:200px">
        <li class="i" style="height:40px">One</li><li class="i" style="height:40px">Two</li><li class="i" style="height:40px">Three</li></ul>
        <script>list.addEventListener('mousedown', () => {});</script>"#,
    );
    with_page_in_front("/sortable-inert", &html, |tab, _| async move {
        let result = drag_item(&tab, "One", "Three").await;
        let (reason, message) = failure(&result);
        assert_eq!(reason, FailureReason::NotInteractive);
        assert!(message.contains("did not reorder"), "{message}");
    });
}

#[test]
fn dates_and_times_written_as_people_write_them_land_in_the_field() {
    let html = seen_page(
        r#"<input id="d" type="date"><input id="t" type="time"><input id="dt" type="datetime-local">
        <input id="m" type="month"><input id="w" type="week"><input id="c" type="color"><input id="r" type="range" min="0" max="10">
        <script>for (const el of document.querySelectorAll('input')) el.addEventListener('change', () => seen.push(el.id + '=' + el.value));</script>"#,
    );
    with_page_in_front("/dates", &html, |tab, _| async move {
        let cases = [
            ("#d", "10/11/2011", "2011-10-11"),
            ("#d", "11.10.2011", "2011-10-11"),
            ("#d", "October 11, 2011", "2011-10-11"),
            ("#d", "2012-02-29", "2012-02-29"),
            ("#t", "8:04 PM", "20:04"),
            ("#t", "20:04", "20:04"),
            ("#t", "12:15 am", "00:15"),
            ("#dt", "10/11/2011 8:04 PM", "2011-10-11T20:04"),
            ("#dt", "2011-10-11T08:30", "2011-10-11T08:30"),
            ("#m", "October 2011", "2011-10"),
            ("#w", "2011-10-11", "2011-W41"),
            ("#c", "#F80", "#ff8800"),
            ("#c", "rebeccapurple", "#663399"),
            ("#r", "7", "7"),
        ];
        for (selector, written, stored) in cases {
            let result = act(
                &tab,
                json!({"input_text": {"selector": selector, "text": written}}),
            )
            .await;
            assert_ok(&result);
            assert_eq!(
                result.data().expect("data")["value"],
                json!(stored),
                "{written}"
            );
            let id = &selector[1..];
            let log = seen(&tab).await;
            assert_eq!(
                log.last().map(String::as_str),
                Some(format!("{id}={stored}").as_str()),
                "{written}: {log:?}"
            );
        }
        // Unreadable text fails, names the format, and leaves the field.
        let result = act(
            &tab,
            json!({"input_text": {"selector": "#d", "text": "next tuesday-ish"}}),
        )
        .await;
        let (reason, message) = failure(&result);
        assert_eq!(reason, FailureReason::InvalidParams);
        assert!(message.contains("YYYY-MM-DD"), "{message}");
        assert_eq!(page_js(&tab, "d.value").await, json!("2012-02-29"));
        // A value the field refuses (out of range) is a failure too.
        let result = act(
            &tab,
            json!({"input_text": {"selector": "#r", "text": "50"}}),
        )
        .await;
        let (reason, message) = failure(&result);
        assert_eq!(reason, FailureReason::InvalidParams);
        assert!(message.contains("max 10"), "{message}");
    });
}

#[test]
fn a_submenu_that_opens_late_after_hover_is_in_the_next_listing() {
    let html = seen_page(
        r#"<nav><div id="file" tabindex="0" role="menuitem" aria-haspopup="true">File</div>
        <ul id="sub" role="menu" style="display:none"><li role="menuitem">Export as PDF</li><li role="menuitem">Print</li></ul></nav>
        <script>
          file.addEventListener('mouseenter', () => setTimeout(() => { sub.style.display = 'block'; }, 300));
        </script>"#,
    );
    with_page_in_front("/late-menu", &html, |tab, _| async move {
        let before = observe(&tab).await;
        assert!(find_text(&before, "Export as PDF").is_none());
        let result = act_on(
            &tab,
            &before,
            json!({"hover": {"index": index_of(&before, "File")}}),
            quick_options(),
        )
        .await;
        assert_ok(&result);
        let after = observe(&tab).await;
        assert!(
            find_text(&after, "Export as PDF").is_some(),
            "{}",
            after.listing
        );
    });
}

#[test]
fn suggestions_that_arrive_late_after_typing_are_in_the_next_listing() {
    let html = seen_page(
        r#"<input id="q" role="combobox" placeholder="City" autocomplete="off"><ul id="hints" role="listbox"></ul>
        <script>
          let timer = 0;
          q.addEventListener('input', () => {
            clearTimeout(timer);
            timer = setTimeout(() => {
              hints.innerHTML = '';
              for (const city of ['Paris', 'Parma', 'Pavia'].filter((c) => c.toLowerCase().startsWith(q.value.toLowerCase()))) {
                const li = document.createElement('li');
                li.setAttribute('role', 'option');
                li.textContent = city;
                hints.appendChild(li);
              }
            }, 300);
          });
        </script>"#,
    );
    with_page_in_front("/late-hints", &html, |tab, _| async move {
        let result = act(
            &tab,
            json!({"input_text": {"selector": "#q", "text": "par"}}),
        )
        .await;
        assert_ok(&result);
        let after = observe(&tab).await;
        assert!(find_text(&after, "Parma").is_some(), "{}", after.listing);
        assert!(find_text(&after, "Pavia").is_none(), "{}", after.listing);
    });
}

fn find_text<'a>(
    state: &'a PageState,
    text: &str,
) -> Option<&'a webagent::dom::InteractiveElement> {
    state.elements.iter().find(|e| e.text == text)
}

// ---- the first look at a new document ----

/// Navigates with the action a driver runs (its first look on) and
/// observes as the driver does right after.
async fn navigate_and_observe(tab: &Tab, url: &str) -> PageState {
    let opts = ExecOptions {
        first_look: Some(ObserveOptions::default()),
        ..quick_options()
    };
    let result = act_with(tab, json!({"navigate": {"url": url}}), opts).await;
    assert_ok(&result);
    observe(tab).await
}

#[test]
fn the_first_listing_after_a_navigation_has_what_the_page_renders_right_after_its_load() {
    // Each page adds a button once it has loaded, by a way a page queues
    // work for later: an animation frame, a timer, a message to itself
    // (React's scheduler), an idle callback. The first look, taken in the
    // load task, must not list the page before that.
    let later = |how: &str| {
        seen_page(&format!(
            r#"<h1>Loading</h1><div id="app"></div>
            <script>
              const add = () => {{ const b = document.createElement('button'); b.textContent = 'Rendered {how}'; app.append(b); }};
              const channel = new MessageChannel();
              channel.port1.onmessage = add;
              addEventListener('load', () => {{
                const how = '{how}';
                if (how === 'by frame') requestAnimationFrame(add);
                if (how === 'by timer') setTimeout(add, 0);
                if (how === 'by message') channel.port2.postMessage(null);
                if (how === 'when idle') requestIdleCallback(add);
              }});
            </script>"#
        ))
    };
    let s = shared();
    let mut urls = Vec::new();
    for (path, how) in [
        ("/later-frame", "by frame"),
        ("/later-timer", "by timer"),
        ("/later-message", "by message"),
        ("/later-idle", "when idle"),
    ] {
        s.server.html(path, later(how));
        urls.push((s.server.url(path), how));
    }
    s.server.html(
        "/ready",
        seen_page(r#"<h1>Ready</h1><button onclick="seen.push('pressed')">Press</button>"#),
    );
    let ready = s.server.url("/ready");
    with_page_in_front("/start", &seen_page("<p>start</p>"), |tab, _| async move {
        for (url, how) in urls {
            let state = navigate_and_observe(&tab, &url).await;
            let wanted = format!("Rendered {how}");
            assert!(
                state.elements.iter().any(|e| e.text == wanted),
                "{how}: {}",
                state.listing
            );
        }
        // A page done at its load is listed by its first look, and the
        // listing's indices reach the page: the look's world is the tab's.
        let before = tab.first_looks_used();
        let state = navigate_and_observe(&tab, &ready).await;
        assert_eq!(state.observation, 1, "the first look was listed");
        assert_eq!(
            tab.first_looks_used(),
            before + 1,
            "the first look answered"
        );
        let press = index_of(&state, "Press");
        let result = act_on(
            &tab,
            &state,
            json!({"click": {"index": press}}),
            quick_options(),
        )
        .await;
        assert_ok(&result);
        assert_eq!(seen(&tab).await, vec!["pressed"]);
    });
}

#[test]
fn a_first_look_is_used_when_it_answers_long_after_the_navigation() {
    // Chromium answers the navigation at the load event, and the look after
    // the load listeners, in the same task: a look that takes long (a big
    // table on a busy machine) answers well after the navigation. The page
    // stands in for one by holding up the look's question to its hook.
    let s = shared();
    s.server.html(
        "/slow-look",
        seen_page(
            r#"<h1>Slow</h1><button>Go on</button>
            <script>
              document.addEventListener('webagent:busy?', () => {
                const until = performance.now() + 400;
                while (performance.now() < until) {}
              });
            </script>"#,
        ),
    );
    let url = s.server.url("/slow-look");
    with_page_in_front(
        "/slow-look-start",
        &seen_page("<p>start</p>"),
        |tab, _| async move {
            let before = tab.first_looks_used();
            let state = navigate_and_observe(&tab, &url).await;
            assert!(
                state.elements.iter().any(|e| e.text == "Go on"),
                "{}",
                state.listing
            );
            assert_eq!(
                tab.first_looks_used(),
                before + 1,
                "the first look answered"
            );
        },
    );
}

#[test]
fn a_first_look_asked_after_the_page_was_shown_is_taken_only_if_nothing_changed_since_its_load() {
    // A small page can finish loading before the question reaches it. The
    // look is then taken at once if the page is still as its load left it,
    // and refused if it changed since.
    let html = seen_page(
        r#"<button>Steady</button><div id="app"></div>
        <script>
          addEventListener('load', () => {
            if (location.hash === '#changing') setTimeout(() => {
              const b = document.createElement('button'); b.textContent = 'Added'; app.append(b);
            }, 0);
          });
        </script>"#,
    );
    with_page_in_front("/shown-before-asked", &html, |tab, url| async move {
        let ask = "globalThis.__webagentAct.firstLook({fullPage: false, marginPx: -1, textLimit: 4000, listeners: true})";
        // Loaded through the tab, so the helper saw the document start.
        tab.navigate(&format!("{url}?steady"), Duration::from_secs(10))
            .await
            .expect("loading the steady page");
        let steady = tab.eval(ask).await.expect("asking for the first look");
        assert_eq!(steady["early"], json!(true), "{steady}");
        let listing = steady["observation"]
            .as_str()
            .expect("the observation's JSON");
        assert!(listing.contains("Steady"), "{listing}");

        tab.navigate(&format!("{url}?changing#changing"), Duration::from_secs(10))
            .await
            .expect("loading the changing page");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while tab
            .eval("document.querySelectorAll('button').length")
            .await
            .ok()
            != Some(json!(2))
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the page never added its button"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let changed = tab.eval(ask).await.expect("asking for the first look");
        assert_eq!(changed["early"], json!(false), "{changed}");
    });
}

#[test]
fn observations_after_navigations_between_sites_reach_the_new_document() {
    // Chromium numbers contexts per renderer process, so after a navigation
    // into another site's process the number of the old page's world can
    // name some context of the new page (its frames have several), one
    // without the observer. Every
    // observation must still reach webagent's world in the new document,
    // with or without a first look.
    let s = shared();
    s.server.html(
        "/site",
        seen_page(
            r#"<h1 id="host"></h1><button>Here</button><script>host.textContent = location.host</script>
            <iframe srcdoc="<p>one</p>"></iframe><iframe srcdoc="<p>two</p>"></iframe>"#,
        ),
    );
    let near = s.server.url("/site");
    let far = near.replacen("127.0.0.1", "localhost", 1);
    with_page_in_front(
        "/sites-start",
        &seen_page("<p>start</p>"),
        |tab, _| async move {
            for round in 0..6 {
                for (url, look) in [(&near, false), (&far, false), (&near, true), (&far, true)] {
                    let to = format!("{url}?round={round}");
                    let opts = ExecOptions {
                        first_look: look.then(ObserveOptions::default),
                        ..quick_options()
                    };
                    let result = act_with(&tab, json!({"navigate": {"url": to}}), opts).await;
                    assert_ok(&result);
                    let state = observe(&tab).await;
                    assert_eq!(state.url, to, "round {round}: {}", state.listing);
                    assert!(
                        state.elements.iter().any(|e| e.text == "Here"),
                        "{}",
                        state.listing
                    );
                }
            }
        },
    );
}

// ---- selecting text, typing into widgets ----

#[test]
fn select_text_highlights_a_paragraph_with_a_real_drag_the_page_sees() {
    let html = seen_page(
        r#"<main><h1>Notes</h1>
        <p>First paragraph, about nothing in particular.</p>
        <p>Second paragraph: lorem ipsum dolor sit amet, <b>consectetur</b> adipiscing elit, sed tristique nunc.</p>
        <p>Third paragraph ends with tristique cursus euismod.</p></main>
        <p><a href="/elsewhere">A link that must not be followed</a></p>
        <script>
          let last = '';
          document.addEventListener('selectionchange', () => { last = String(getSelection()); });
          document.addEventListener('mouseup', (e) => {
            seen.push((e.isTrusted ? 'trusted ' : 'synthetic ') + 'mouseup: ' + String(getSelection()));
          });
          window.lastSelection = () => last;
        </script>"#,
    );
    with_page_in_front("/select-text", &html, |tab, url| async move {
        // A paragraph that is no listed element, by selector: its whole text.
        let result = act(
            &tab,
            json!({"select_text": {"selector": "main > p:nth-child(3)"}}),
        )
        .await;
        assert_ok(&result);
        let second = "Second paragraph: lorem ipsum dolor sit amet, consectetur adipiscing elit, sed tristique nunc.";
        let data = result.data().cloned().unwrap_or_default();
        assert_eq!(data["selected"], second, "{data}");
        assert!(
            data.get("drag_selected").is_none(),
            "the drag itself selected it: {data}"
        );
        assert_eq!(
            seen(&tab).await,
            vec![format!("trusted mouseup: {second}")],
            "the page's own mouseup saw the drag and the selection"
        );
        assert_eq!(page_js(&tab, "window.lastSelection()").await, second);
        // A passage quoted by its start and end, anywhere on the page.
        page_js(&tab, "seen.length = 0").await;
        let result = act(
            &tab,
            json!({"select_text": {"text": "lorem ipsum…adipiscing elit"}}),
        )
        .await;
        assert_ok(&result);
        let passage = "lorem ipsum dolor sit amet, consectetur adipiscing elit";
        assert_eq!(result.data().unwrap()["selected"], passage);
        assert!(result.data().unwrap().get("drag_selected").is_none());
        assert_eq!(
            seen(&tab).await,
            vec![format!("trusted mouseup: {passage}")]
        );
        // Words within a target: the third paragraph's, not the second's.
        let result = act(
            &tab,
            json!({"select_text": {"selector": "main > p:nth-child(4)", "text": "tristique cursus"}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(result.data().unwrap()["selected"], "tristique cursus");
        let range_in_third = page_js(
            &tab,
            "getSelection().anchorNode.parentElement === document.querySelector('main > p:nth-child(4)')",
        )
        .await;
        assert_eq!(range_in_third, true);
        // A link's text is selected without following it.
        let state = observe(&tab).await;
        let link = index_of(&state, "A link that must not be followed");
        let result = act_on(
            &tab,
            &state,
            json!({"select_text": {"index": link}}),
            quick_options(),
        )
        .await;
        assert_ok(&result);
        assert_eq!(
            result.data().unwrap()["selected"],
            "A link that must not be followed",
            "{result:?}"
        );
        assert!(
            result.data().unwrap().get("drag_selected").is_none(),
            "a drag from beside the link selected it: {result:?}"
        );
        assert_eq!(page_js(&tab, "location.href").await, url);
        // Nothing to select, or text the page does not show.
        let (reason, message) = failure(&act(&tab, json!({"select_text": {}})).await);
        assert_eq!(reason, FailureReason::InvalidParams, "{message}");
        let (reason, message) = failure(
            &act(
                &tab,
                json!({"select_text": {"text": "words nowhere on the page"}}),
            )
            .await,
        );
        assert_eq!(reason, FailureReason::NotFound, "{message}");
        assert!(message.contains("words nowhere on the page"), "{message}");
    });
}

#[test]
fn select_text_reaches_text_inside_a_components_shadow_root() {
    let html = seen_page(
        r#"<main><p>Page text before the card.</p>
        <x-card id="card"><span slot="title">Slotted title words</span></x-card></main>
        <script>
          const root = card.attachShadow({mode: 'open'});
          root.innerHTML = '<h2><slot name="title"></slot></h2><p>First inner paragraph.</p>' +
            '<p id="two">Second inner paragraph with tristique words.</p>';
          document.addEventListener('mouseup', (e) => {
            seen.push((e.isTrusted ? 'trusted ' : 'synthetic ') + 'mouseup: ' + String(getSelection()));
          });
        </script>"#,
    );
    with_page_in_front("/select-shadow", &html, |tab, _| async move {
        // Quoted: the component's own paragraph, by a real drag.
        let inner = "Second inner paragraph with tristique words.";
        let result = act(&tab, json!({"select_text": {"text": inner}})).await;
        assert_ok(&result);
        let data = result.data().cloned().unwrap_or_default();
        assert_eq!(data["selected"], inner, "{data}");
        assert!(data.get("drag_selected").is_none(), "{data}");
        assert_eq!(seen(&tab).await, vec![format!("trusted mouseup: {inner}")]);
        // Within a target reached through the shadow root.
        let result = act(
            &tab,
            json!({"select_text": {"selector": "#card >>> #two", "text": "tristique"}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(result.data().unwrap()["selected"], "tristique");
        // The page's own text where the component's slot shows it.
        let result = act(
            &tab,
            json!({"select_text": {"text": "Slotted title words"}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(result.data().unwrap()["selected"], "Slotted title words");
        // One range cannot run from the page into the component.
        let (reason, message) = failure(
            &act(
                &tab,
                json!({"select_text": {"text": "before the card…First inner"}}),
            )
            .await,
        );
        assert_eq!(reason, FailureReason::InvalidParams, "{message}");
        assert!(message.contains("shadow root"), "{message}");
    });
}

#[test]
fn input_text_types_into_a_keydown_terminal_key_by_key() {
    let html = seen_page(
        r#"<div id="term" tabindex="0" style="font:14px monospace;background:#111;color:#eee;height:200px">
          <pre id="out"></pre><span id="line"></span></div>
        <div id="label">Not focusable</div>
        <script>
          let line = '';
          term.addEventListener('keydown', (e) => {
            if (!e.isTrusted) return;
            if (e.key === 'Enter') {
              out.textContent += '$ ' + line + '\n' + (line.startsWith('echo ') ? line.slice(5) : 'unknown: ' + line) + '\n';
              seen.push(line);
              line = '';
            } else if (e.key.length === 1) {
              line += e.key;
            }
            document.getElementById('line').textContent = line;
            e.preventDefault();
          });
        </script>"#,
    );
    with_page_in_front("/terminal", &html, |tab, _| async move {
        let result = act(
            &tab,
            json!({"input_text": {"selector": "#term", "text": "echo Hello, World!\necho two\n"}}),
        )
        .await;
        assert_ok(&result);
        let data = result.data().cloned().unwrap_or_default();
        assert_eq!(data["typed"], "keystrokes", "{data}");
        assert_eq!(data["keystrokes"], 28, "{data}");
        assert_eq!(seen(&tab).await, vec!["echo Hello, World!", "echo two"]);
        let after = observe(&tab).await;
        assert!(
            after.page_text.text.contains("Hello, World!"),
            "{}",
            after.page_text.text
        );
        // Only an element that cannot take focus is refused, and says so.
        let (reason, message) = failure(
            &act(
                &tab,
                json!({"input_text": {"selector": "#label", "text": "x"}}),
            )
            .await,
        );
        assert_eq!(reason, FailureReason::NotInteractive, "{message}");
        assert!(message.contains("cannot take focus"), "{message}");
    });
}

#[test]
fn an_accordion_still_opening_after_a_click_is_listed_whole_in_the_next_observation() {
    // Four panels that take 400 ms to open, each animated another way: a
    // CSS transition, CSS keyframes, the Web Animations API, and a script
    // that changes a stylesheet rule each frame (no DOM mutation at all).
    let body = |n: usize| {
        format!(
            "<p>Panel {n} opens. Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua duis. Sed tristique nunc, cursus euismod {n}.</p>\
             <p><a href=\"#a{n}\">First link {n}</a></p><p><a href=\"#b{n}\">Lower link {n}</a></p>"
        )
    };
    let html = seen_page(&format!(
        r#"<style>
          .panel {{ overflow: hidden; height: 0; }}
          #p1.open {{ height: 220px; transition: height 400ms linear; }}
          @keyframes grow {{ from {{ height: 0 }} to {{ height: 220px }} }}
          #p2.open {{ height: 220px; animation: grow 400ms linear; }}
          .inner {{ height: 220px; }}
        </style>
        <style id="rule">#p4 {{ height: 0px; }}</style>
        <button id="h1">Section 1</button><div class="panel" id="p1"><div class="inner">{}</div></div>
        <button id="h2">Section 2</button><div class="panel" id="p2"><div class="inner">{}</div></div>
        <button id="h3">Section 3</button><div class="panel" id="p3"><div class="inner">{}</div></div>
        <button id="h4">Section 4</button><div class="panel" id="p4"><div class="inner">{}</div></div>
        <script>
          h1.onclick = () => p1.classList.add('open');
          h2.onclick = () => p2.classList.add('open');
          h3.onclick = () => {{
            p3.animate([{{ height: '0px' }}, {{ height: '220px' }}], {{ duration: 400, fill: 'forwards' }});
          }};
          h4.onclick = () => {{
            const rule = document.getElementById('rule').sheet.cssRules[0];
            const start = performance.now();
            const step = (now) => {{
              const t = Math.min(1, (now - start) / 400);
              rule.style.height = (220 * t) + 'px';
              if (t < 1) requestAnimationFrame(step);
            }};
            requestAnimationFrame(step);
          }};
        </script>"#,
        body(1),
        body(2),
        body(3),
        body(4)
    ));
    with_page_in_front("/accordion", &html, |tab, _| async move {
        for n in 1..=4 {
            let before = observe(&tab).await;
            assert!(find_text(&before, &format!("Lower link {n}")).is_none());
            let result = act_on(
                &tab,
                &before,
                json!({"click": {"index": index_of(&before, &format!("Section {n}"))}}),
                quick_options(),
            )
            .await;
            assert_ok(&result);
            let after = observe(&tab).await;
            assert!(
                find_text(&after, &format!("Lower link {n}")).is_some(),
                "panel {n}: {result:?}\n{}",
                after.listing
            );
            let sentence = format!("duis. Sed tristique nunc, cursus euismod {n}.");
            assert!(
                after.page_text.text.contains(&sentence),
                "panel {n}: {result:?}\n{}",
                after.page_text.text
            );
        }
    });
}
