//! What an action may not do, refused before anything is touched: script
//! unless enabled, forbidden selectors and bad parameters; and actions
//! that need no browser.

use serde_json::json;
use webagent::actions::{Catalog, FailureReason};
use webagent::browser::act::{ExecOptions, Executor};

use crate::readback::{page_js, seen};
use crate::support::pages::seen_page;
use crate::support::tab::{
    act, act_with, assert_ok, failure, observe, quick_options, with_page_in_front,
};

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
