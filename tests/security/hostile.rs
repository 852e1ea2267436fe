//! Hostile pages that try to wedge the session: a `_blank` link to a
//! refused host, dialogs while a page loads, and a page that busy-loops.

use std::time::Duration;

use serde_json::json;
use webagent::actions::{ActionResult, FailureReason};
use webagent::browser::act::ExecOptions;
use webagent::browser::{Driver, ObserveOptions};
use webagent::events::{Event, EventSink};
use webagent::secrets::Secrets;

use crate::sides::{
    away_hits, away_page, click_text, goes_on_to, shared, with_env, with_env_options,
};
use crate::support::pages::page;
use crate::support::tab::action;

#[test]
fn a_blank_link_to_a_refused_host_is_blocked_and_the_opener_stays_usable() {
    let target = away_page("/blank-refused");
    let html = page(
        "Opener",
        &format!(
            "<a href=\"{target}\" target=\"_blank\">Away in a new tab</a>\
             <button onclick=\"document.title='still mine'\">Stay</button>"
        ),
    );
    let away_url = target.clone();
    with_env("/blank-refused-start", &html, |mut env| async move {
        let result = click_text(&mut env, "Away in a new tab").await;
        match &result {
            ActionResult::Failure {
                reason: FailureReason::Blocked,
                message,
            } => {
                assert!(message.contains(&away_url), "names the URL: {message}");
                assert!(message.contains("allowed domains"), "says why: {message}");
                assert!(!message.contains("browser is gone"), "{message}");
            }
            other => panic!("expected blocked, got {other:?}"),
        }
        let result = click_text(&mut env, "Stay").await;
        assert!(result.is_ok(), "the next action works: {result:?}");
        let state = env.observe().await.expect("observing the opener");
        assert_eq!(state.title, "still mine");
        let s = shared();
        let tabs = s.session.tabs().await.expect("listing tabs");
        assert!(
            tabs.iter().all(|t| !t.url.starts_with(&away_url)),
            "no tab stays on the refused URL: {tabs:?}"
        );
    });
    assert_eq!(away_hits("/blank-refused"), 0);
}

/// Observes the start page with an event sink on `env`: the driver, the
/// page's text, and the notices the driver sent (one a line).
async fn first_look(env: Driver) -> (Driver, String, String) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut env = env.with_events(EventSink::new(tx, Secrets::new()));
    let state = env.observe().await.expect("observing the start page");
    let mut said = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let Event::Error { error, .. } = event {
            said.push(error);
        }
    }
    (env, state.page_text.text, said.join("\n"))
}

#[test]
fn an_alert_while_the_start_page_loads_is_answered_and_the_page_opens() {
    let html = page(
        "Alerting",
        "<p>loaded past the alert</p><script>alert('welcome')</script>",
    );
    with_env("/alert-on-load", &html, |env| async move {
        let (_, text, said) = first_look(env).await;
        assert!(text.contains("loaded past the alert"), "{text}");
        assert!(said.contains("1 dialog"), "the dialog is reported: {said}");
        assert!(said.contains("welcome"), "with its text: {said}");
    });
}

#[test]
fn several_dialogs_in_a_row_while_the_start_page_loads_are_all_answered() {
    let html = page(
        "Nagging",
        "<p id=\"out\">waiting</p><script>\
         alert('one'); const ok = confirm('two'); const name = prompt('three');\
         document.getElementById('out').textContent = 'answered ' + ok + ' ' + name;\
         </script>",
    );
    with_env("/dialogs-on-load", &html, |env| async move {
        let (mut env, text, said) = first_look(env).await;
        // confirm and prompt are dismissed unless configured otherwise.
        assert!(text.contains("answered false null"), "{text}");
        assert!(said.contains("3 dialogs"), "all three are reported: {said}");
        let result = env
            .execute(&action(json!({"scroll": {"direction": "down"}})))
            .await;
        assert!(result.is_ok(), "the next action works: {result:?}");
    });
}

/// Makes the page's own script spin forever: the evaluation that starts
/// it never answers, and nothing else the renderer is asked after it does.
async fn spin(env: &Driver) {
    let forever = env.tab().page().evaluate("while (true) {}");
    let started = tokio::time::timeout(Duration::from_millis(300), forever).await;
    assert!(started.is_err(), "the loop holds the page: {started:?}");
}

#[test]
fn a_page_that_busy_loops_ends_the_action_with_timeout_and_the_next_one_works() {
    let s = shared();
    let exec = ExecOptions {
        action_timeout: Duration::from_secs(2),
        navigation_timeout: Duration::from_secs(3),
        ..ExecOptions::default()
    };
    let next = s.home.url("/after-busy");
    s.home
        .html("/after-busy", page("After", "<p>a fresh page</p>"));
    let html = page("Busy", "<p>about to spin</p><button>Spin</button>");
    with_env_options("/busy", &html, exec, |env| async move {
        let mut env = env.with_observe_options(ObserveOptions {
            timeout: Duration::from_secs(3),
            ..ObserveOptions::default()
        });
        env.observe().await.expect("observing before the loop");
        spin(&env).await;
        let result = env
            .execute(&action(json!({"scroll": {"direction": "down"}})))
            .await;
        match &result {
            ActionResult::Failure {
                reason: FailureReason::Timeout,
                message,
            } => assert!(
                message.contains("renderer was stopped") && message.contains("/busy"),
                "says what was done: {message}"
            ),
            other => panic!("expected timeout, got {other:?}"),
        }
        let state = match env.observe().await {
            Ok(state) => state,
            Err(error) => panic!("the next observation works: {}", error.message),
        };
        assert!(
            state.url.ends_with("/busy"),
            "a fresh tab of the same URL: {}",
            state.url
        );
        assert!(state.listing.contains("Spin"), "{}", state.listing);

        // The same when the page stops answering while it is observed.
        spin(&env).await;
        let error = env
            .observe()
            .await
            .expect_err("a page that spins cannot be observed");
        assert!(!error.fatal, "{}", error.message);
        assert!(
            error.message.contains("renderer was stopped"),
            "{}",
            error.message
        );
        goes_on_to(&mut env, &next, "a fresh page").await;
    });
}
