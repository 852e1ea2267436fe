//! Forms, files, waiting and navigation: submitting, uploading, waiting
//! for an element, going back, forward and reloading, same-document
//! navigations, and navigations the allowed domains refuse.

use serde_json::json;
use webagent::actions::FailureReason;
use webagent::browser::{BrowserSession, LaunchOptions};

use crate::readback::{index_of, page_js, seen};
use crate::support::chromium::shared;
use crate::support::pages::seen_page;
use crate::support::tab::{
    act, act_on, assert_ok, failure, in_front, observe, quick_options, with_page_in_front,
};

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
