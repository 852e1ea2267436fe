//! A tab that stays usable: a page that never answers, a click into one,
//! a renderer crash, and a tab closed during an action.

use std::time::Duration;

use serde_json::json;
use webagent::actions::FailureReason;
use webagent::browser::act::ExecOptions;

use crate::sides::{click_text, goes_on_to, shared, with_env, with_env_options};
use crate::support::pages::page;
use crate::support::tab::action;

#[test]
fn a_page_that_never_answers_ends_with_timeout_and_the_run_goes_on() {
    let s = shared();
    let hanging = format!("http://localhost:{}/never", s.hanging_port);
    let exec = ExecOptions {
        navigation_timeout: Duration::from_secs(3),
        ..ExecOptions::default()
    };
    let next = s.home.url("/after-hang");
    s.home
        .html("/after-hang", page("After", "<p>still here</p>"));
    with_env_options(
        "/hang-start",
        &page("Start", "<p>start</p>"),
        exec,
        |mut env| async move {
            env.observe().await.expect("observing");
            let result = env
                .execute(&action(json!({"navigate": {"url": hanging}})))
                .await;
            assert_eq!(result.reason(), Some(FailureReason::Timeout), "{result:?}");
            goes_on_to(&mut env, &next, "still here").await;
        },
    );
}

#[test]
fn a_click_into_a_page_that_never_answers_does_not_wedge_the_tab() {
    let s = shared();
    let hanging = format!("http://localhost:{}/never-click", s.hanging_port);
    let exec = ExecOptions {
        navigation_timeout: Duration::from_secs(3),
        ..ExecOptions::default()
    };
    let next = s.home.url("/after-click-hang");
    s.home.html(
        "/after-click-hang",
        page("After", "<p>back in business</p>"),
    );
    let html = page("Start", &format!("<a href=\"{hanging}\">Stuck link</a>"));
    with_env_options("/click-hang", &html, exec, |mut env| async move {
        let result = click_text(&mut env, "Stuck link").await;
        assert_eq!(result.reason(), Some(FailureReason::Timeout), "{result:?}");
        goes_on_to(&mut env, &next, "back in business").await;
    });
}

#[test]
fn a_renderer_crash_is_reported_and_the_page_comes_back() {
    use chromiumoxide::cdp::browser_protocol::page::CrashParams;
    with_env(
        "/crash",
        &page("Crash", "<button>Survivor</button>"),
        |mut env| async move {
            env.observe().await.expect("observing");
            // Page.crash never answers: the renderer it would answer from dies.
            let crash = env.tab().page().execute(CrashParams::default());
            let _ = tokio::time::timeout(Duration::from_secs(2), crash).await;
            let first = env.observe().await;
            let error = first.expect_err("a crashed page cannot be observed");
            assert!(
                !error.fatal,
                "a crash is not the end of the run: {}",
                error.message
            );
            let state = env.observe().await.expect("observing after the reload");
            assert!(state.listing.contains("Survivor"), "{}", state.listing);
        },
    );
}

#[test]
fn a_tab_closed_during_an_action_ends_it_and_the_next_step_gets_a_tab() {
    let html = page("Closing", "<p>waiting for nothing</p>");
    with_env("/closing", &html, |mut env| async move {
        env.observe().await.expect("observing");
        let page = env.tab().page().clone();
        let closer = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            page.close().await
        });
        let waiting = action(json!({"wait_for": {"text": "never shows up", "timeout_ms": 8000}}));
        let result = env.execute(&waiting).await;
        assert!(!result.is_ok(), "the action cannot succeed on a closed tab");
        let _ = closer.await;
        // The next observation reports the loss (or recovers at once);
        // the one after sees the page again, in a new tab.
        let state = match env.observe().await {
            Ok(state) => state,
            Err(error) => {
                assert!(!error.fatal, "{}", error.message);
                env.observe().await.expect("observing in the new tab")
            }
        };
        assert!(state.url.ends_with("/closing"), "{}", state.url);
        assert!(state.page_text.text.contains("waiting for nothing"));
    });
}
