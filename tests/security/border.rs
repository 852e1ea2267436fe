//! The allowed domains as a border: the agent's navigation, redirect
//! chains, meta refreshes, script, `window.open`, popups, data URLs, an
//! iframe and a blob document never reach a blocked host.

use std::time::Duration;

use serde_json::json;
use webagent::actions::{ActionResult, FailureReason};
use webagent::serve::Response;

use crate::sides::{away_hits, away_page, click_text, shared, with_env};
use crate::support::pages::page;
use crate::support::tab::action;
use crate::support::wait::eventually;

fn assert_blocked(result: &ActionResult, url: &str) {
    match result {
        ActionResult::Failure { reason, message } => {
            assert_eq!(*reason, FailureReason::Blocked, "{message}");
            assert!(message.contains(url), "the message names {url}: {message}");
        }
        other => panic!("expected blocked for {url}, got {other:?}"),
    }
}

#[test]
fn the_agents_navigate_to_a_blocked_host_is_refused() {
    let target = away_page("/direct");
    with_env(
        "/direct-start",
        &page("Start", "<p>start</p>"),
        |mut env| async move {
            env.observe().await.expect("observing");
            let result = env
                .execute(&action(json!({"navigate": {"url": target}})))
                .await;
            assert_blocked(&result, &target);
            let state = env.observe().await.expect("observing after");
            assert!(
                state.url.ends_with("/direct-start"),
                "stayed: {}",
                state.url
            );
            // A navigation inside the allowed origin still works.
            let home = shared().home.url("/direct-start");
            let again = env
                .execute(&action(json!({"navigate": {"url": home}})))
                .await;
            assert!(again.is_ok(), "{again:?}");
        },
    );
    assert_eq!(away_hits("/direct"), 0, "the blocked host saw no request");
}

#[test]
fn a_redirect_chain_ending_on_a_blocked_host_does_not_load() {
    let s = shared();
    let target = away_page("/landing");
    let hop2 = s.home.url("/hop2");
    let to_away = target.clone();
    s.home.handle("/hop1", move |_| {
        Response::html("")
            .with_status(302)
            .with_header("Location", &hop2)
    });
    s.home.handle("/hop2", move |_| {
        Response::html("")
            .with_status(302)
            .with_header("Location", &to_away)
    });
    let hop1 = s.home.url("/hop1");
    with_env(
        "/redirect-start",
        &page("Start", "<p>start</p>"),
        |mut env| async move {
            env.observe().await.expect("observing");
            let result = env
                .execute(&action(json!({"navigate": {"url": hop1}})))
                .await;
            assert_blocked(&result, &target);
        },
    );
    assert_eq!(
        away_hits("/landing"),
        0,
        "the last hop never reached its host"
    );
}

#[test]
fn a_meta_refresh_to_a_blocked_host_does_not_load() {
    let target = away_page("/refreshed");
    let html = page(
        "Refresh",
        &format!("<meta http-equiv=\"refresh\" content=\"0;url={target}\"><p>refreshing</p>"),
    );
    let guard_target = target.clone();
    with_env("/refresh", &html, |mut env| async move {
        let guard = env.tab().guard().expect("a list is set").clone();
        let seen =
            eventually(|| guard.blocked_since(0).iter().any(|b| b.url == guard_target)).await;
        assert!(seen, "the refresh was refused and logged");
        let state = env.observe().await.expect("observing");
        assert!(
            !state.page_text.text.contains("blocked host"),
            "{}",
            state.page_text.text
        );
    });
    assert_eq!(away_hits("/refreshed"), 0);
}

#[test]
fn location_assignment_by_script_is_stopped_and_the_click_is_blocked() {
    let target = away_page("/scripted");
    let html = page(
        "Script",
        &format!("<button onclick=\"location = '{target}'\">Leave</button>"),
    );
    with_env("/script", &html, |mut env| async move {
        let result = click_text(&mut env, "Leave").await;
        assert_blocked(&result, &target);
        let state = env.observe().await.expect("observing");
        // Not Chromium's error page: the agent keeps its place.
        assert!(state.url.ends_with("/script"), "{}", state.url);
        assert!(state.listing.contains("Leave"), "{}", state.listing);
        assert!(
            !state.page_text.text.contains("blocked host"),
            "{}",
            state.page_text.text
        );
    });
    assert_eq!(away_hits("/scripted"), 0);
}

#[test]
fn window_open_to_a_blocked_host_leaves_no_tab_on_it() {
    let target = away_page("/popup");
    let html = page(
        "Opener",
        &format!("<button onclick=\"window.open('{target}')\">Open</button>"),
    );
    let popup_url = target.clone();
    with_env("/opener", &html, |mut env| async move {
        let _ = click_text(&mut env, "Open").await;
        let s = shared();
        let guard = env.tab().guard().expect("a list is set").clone();
        let refused =
            eventually(|| guard.blocked_since(0).iter().any(|b| b.url == popup_url)).await;
        assert!(refused, "the popup's URL was refused");
        let mut on_away = true;
        for _ in 0..100 {
            let tabs = s.session.tabs().await.expect("listing tabs");
            on_away = tabs.iter().any(|t| t.url.starts_with(&popup_url));
            if !on_away {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(!on_away, "no tab stays on the blocked URL");
    });
    assert_eq!(away_hits("/popup"), 0, "the popup's request never left");
}

#[test]
fn popups_inside_the_allowed_domains_open_and_blank_targets_outside_do_not() {
    let s = shared();
    s.home
        .html("/popup-ok", page("Popup fine", "<p>allowed popup</p>"));
    let allowed = s.home.url("/popup-ok");
    let target = away_page("/blank-target");
    let html = page(
        "Opener",
        &format!(
            "<button onclick=\"window.open('{allowed}')\">Open allowed</button>\
             <a href=\"{target}\" target=\"_blank\">New window away</a>"
        ),
    );
    let (allowed_url, away_url) = (allowed.clone(), target.clone());
    with_env("/opener-mixed", &html, |mut env| async move {
        let result = click_text(&mut env, "Open allowed").await;
        assert!(result.is_ok(), "{result:?}");
        let _ = click_text(&mut env, "New window away").await;
        let guard = env.tab().guard().expect("a list is set").clone();
        let refused = eventually(|| guard.blocked_since(0).iter().any(|b| b.url == away_url)).await;
        assert!(refused, "the _blank link's URL was refused");
        let mut allowed_open = false;
        for _ in 0..100 {
            let tabs = s.session.tabs().await.expect("listing tabs");
            allowed_open = tabs.iter().any(|t| t.url == allowed_url);
            if allowed_open {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(allowed_open, "the allowed popup stays open");
    });
    assert_eq!(away_hits("/blank-target"), 0);
}

#[test]
fn data_urls_are_refused_as_links_and_as_navigation() {
    let html = page(
        "Data",
        "<a href=\"data:text/html,<title>pwned</title><h1>pwned</h1>\">Open data</a>",
    );
    with_env("/data", &html, |mut env| async move {
        let _ = click_text(&mut env, "Open data").await;
        let state = env.observe().await.expect("observing");
        assert!(state.url.ends_with("/data"), "stayed: {}", state.url);
        assert!(
            !state.page_text.text.contains("pwned"),
            "{}",
            state.page_text.text
        );
        let result = env
            .execute(&action(
                json!({"navigate": {"url": "data:text/html,<h1>pwned</h1>"}}),
            ))
            .await;
        assert_blocked(&result, "data:text/html");
        let result = env
            .execute(&action(json!({"navigate": {"url": "javascript:alert(1)"}})))
            .await;
        assert_eq!(result.reason(), Some(FailureReason::Blocked), "{result:?}");
    });
}

#[test]
fn an_iframe_cannot_take_the_top_page_to_a_blocked_host() {
    let s = shared();
    let target = away_page("/framed");
    s.home.html(
        "/frame-inner",
        page(
            "Inner",
            &format!("<button onclick=\"top.location = '{target}'\">Escape</button>"),
        ),
    );
    let outer = page(
        "Outer",
        "<iframe src=\"/frame-inner\" width=400 height=200></iframe>",
    );
    with_env("/frame-outer", &outer, |mut env| async move {
        let result = click_text(&mut env, "Escape").await;
        assert_blocked(&result, &target);
        let state = env.observe().await.expect("observing");
        assert!(state.url.ends_with("/frame-outer"), "{}", state.url);
    });
    assert_eq!(away_hits("/framed"), 0);
}

#[test]
fn a_blob_document_the_page_makes_is_left_at_once() {
    let html = page(
        "Blob",
        "<button onclick=\"location = window.URL.createObjectURL(new Blob(['<title>pwned</title><h1>pwned</h1>'], {type: 'text/html'}))\">Blob</button>",
    );
    with_env("/blob", &html, |mut env| async move {
        // A blob: document never reaches the network, so interception
        // cannot stop it; the environment notices it after the action and
        // puts the page back.
        let result = click_text(&mut env, "Blob").await;
        assert_blocked(&result, "blob:");
        let state = env.observe().await.expect("observing");
        assert!(
            !state.page_text.text.contains("pwned"),
            "{} {}",
            state.url,
            state.page_text.text
        );
        assert!(state.url.ends_with("/blob"), "{}", state.url);
    });
}
