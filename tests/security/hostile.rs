//! Hostile pages that try to wedge the session: a `_blank` link to a
//! refused host, dialogs while a page loads, and a page that busy-loops.

use webagent::actions::{ActionResult, FailureReason};

use crate::sides::{away_hits, away_page, click_text, shared, with_env};
use crate::support::pages::page;

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
