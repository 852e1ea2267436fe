//! Clicks: by index and by selector, past sticky headers and modals, on
//! moving targets, inside frames and shadow roots, within the time limit,
//! and what a click starts (a navigation, a request, a dialog). Overlays
//! draw without catching a click.

use std::time::Duration;

use serde_json::json;
use webagent::actions::FailureReason;
use webagent::browser::act::ExecOptions;

use crate::readback::{index_of, page_js, seen};
use crate::support::chromium::shared;
use crate::support::pages::seen_page;
use crate::support::tab::{
    act, act_on, act_with, assert_ok, failure, observe, quick_options, with_page_in_front,
};

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
