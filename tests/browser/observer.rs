//! The observer itself: it survives a navigation the page starts, an
//! index reaches its own node or says it is gone, selectors run in its
//! world, the page can neither see nor break it, and `observe` prints
//! its JSON.

use std::time::Duration;

use webagent::browser::BrowserError;
use webagent::dom::ElementIndex;

use crate::listed::find;
use crate::support::chromium::shared;
use crate::support::pages::bare_page;
use crate::support::tab::{observe, with_page};

#[test]
fn observing_survives_a_navigation_the_page_starts_itself() {
    let s = shared();
    s.server
        .html("/landed", bare_page("<button>Landed</button>"));
    let html = bare_page(
        r#"<button>Leaving</button><script>setTimeout(() => { location.href = '/landed'; }, 150);</script>"#,
    );
    with_page("/leaving", &html, |tab, _| async move {
        // Observe back to back while the page replaces its document: every
        // observation must succeed, on one document or the other.
        // Bounded by time, not by a count: a fast machine can make hundreds
        // of observations before the page's timer fires.
        let mut landed = false;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
        while std::time::Instant::now() < deadline {
            let state = observe(&tab).await;
            if find(&state, "Landed").is_some() {
                assert!(state.url.ends_with("/landed"), "{}", state.url);
                landed = true;
                break;
            }
            // Either the old page, or the new one before its body parsed.
            assert!(
                state.elements.iter().all(|e| e.text == "Leaving"),
                "{}",
                state.listing
            );
        }
        assert!(landed, "the page never navigated");
    });
}

#[test]
fn an_index_reaches_its_own_node_or_reports_it_gone() {
    let html =
        bare_page(r#"<div id="box"><button id="b">Buy</button></div><button>Other</button>"#);
    with_page("/stale", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let buy = find(&state, "Buy").expect("Buy listed").index;
        let id = tab
            .eval_on_index(
                state.observation,
                buy,
                "(el) => el.id",
                serde_json::json!({}),
            )
            .await
            .expect("reaching the element");
        assert_eq!(id, serde_json::json!("b"));
        // Replace the node with an identical-looking one: the index must not
        // reach the replacement.
        tab.eval("document.getElementById('box').innerHTML = '<button id=\"b\">Buy</button>'; 1")
            .await
            .expect("replacing");
        let err = tab
            .eval_on_index(
                state.observation,
                buy,
                "(el) => el.id",
                serde_json::json!({}),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(err, BrowserError::ElementGone { index, .. } if index == buy.0),
            "{err}"
        );
        // A newer observation makes the old indices stale.
        let newer = observe(&tab).await;
        let err = tab
            .eval_on_index(
                state.observation,
                ElementIndex(0),
                "(el) => 1",
                serde_json::json!({}),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(err, BrowserError::StaleObservation { .. }),
            "{err}"
        );
        let missing = tab
            .eval_on_index(
                newer.observation,
                ElementIndex(99),
                "(el) => 1",
                serde_json::json!({}),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(missing, BrowserError::UnknownIndex { .. }),
            "{missing}"
        );
        // After a reload the world and its map are new: gone, not reached.
        tab.navigate(&tab.url().await.expect("url"), Duration::from_secs(30))
            .await
            .expect("reloading");
        let err = tab
            .eval_on_index(
                newer.observation,
                ElementIndex(0),
                "(el) => 1",
                serde_json::json!({}),
            )
            .await
            .unwrap_err();
        assert!(matches!(err, BrowserError::ElementGone { .. }), "{err}");
    });
}

#[test]
fn selectors_run_in_the_same_world_and_bad_ones_are_reported() {
    let html = bare_page(r#"<input name="q" value="x"><input name="q" value="y">"#);
    with_page("/selector", &html, |tab, _| async move {
        let values = tab
            .eval_on_selector(
                "input[name=q]",
                "(els) => els.map(e => e.value)",
                serde_json::json!({}),
            )
            .await
            .expect("selector");
        assert_eq!(values, serde_json::json!(["x", "y"]));
        let err = tab
            .eval_on_selector("input[", "(els) => els.length", serde_json::json!({}))
            .await
            .unwrap_err();
        assert!(matches!(err, BrowserError::Selector { .. }), "{err}");
    });
}

#[test]
fn the_page_cannot_see_or_break_the_observer() {
    let html = bare_page(
        r#"<button>Safe</button><script>
        // A hostile page: replaces DOM methods in its own world.
        Element.prototype.getBoundingClientRect = () => ({top:0,left:0,right:0,bottom:0,width:0,height:0});
        window.getComputedStyle = () => ({display:'none'});
        </script>"#,
    );
    with_page("/hostile", &html, |tab, _| async move {
        let state = observe(&tab).await;
        assert!(find(&state, "Safe").is_some(), "{}", state.listing);
        // The observer's global lives only in the isolated world.
        let seen = tab
            .page()
            .evaluate("typeof globalThis.__webagentObserver")
            .await
            .expect("main-world evaluate")
            .into_value::<String>()
            .expect("string");
        assert_eq!(seen, "undefined");
    });
}

#[test]
fn observe_cli_prints_the_json_shape() {
    let s = shared();
    s.server.html(
        "/cli",
        bare_page(r#"<h1>Orders</h1><button>Ship</button><a href="/o/1">Order 1</a>"#),
    );
    let ws = s
        .session
        .websocket_url()
        .expect("launched session has an address");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
        .args([
            "--log-file",
            "/dev/null",
            "observe",
            "--json",
            "--connect",
            &ws,
        ])
        .arg(s.server.url("/cli"))
        .output()
        .expect("running webagent");
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["url"], s.server.url("/cli"));
    assert_eq!(v["title"], "t");
    let elements = v["elements"].as_array().expect("elements array");
    assert_eq!(elements.len(), 2);
    assert_eq!(elements[0]["index"], 0);
    assert_eq!(elements[0]["tag"], "button");
    assert_eq!(elements[0]["text"], "Ship");
    assert_eq!(elements[1]["attributes"]["href"], "/o/1");
    for key in ["is_new", "in_shadow_root", "frame"] {
        assert!(elements[0].get(key).is_some(), "missing {key}");
    }
    assert!(v["listing"]
        .as_str()
        .expect("listing")
        .contains("[0]<button>Ship</button>"));
    assert!(v["page_text"].as_str().expect("text").contains("Orders"));
    assert!(v["scroll"]["pages_below"].is_number());
    assert!(v["extract_ms"].as_f64().expect("extract_ms") > 0.0);
    let tabs = v["tabs"].as_array().expect("tabs array");
    assert_eq!(
        tabs.iter().filter(|t| t["current"] == true).count(),
        1,
        "{tabs:?}"
    );

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
        .args([
            "--log-file",
            "/dev/null",
            "observe",
            "--repeat",
            "3",
            "--connect",
            &ws,
        ])
        .arg(s.server.url("/cli"))
        .output()
        .expect("running webagent");
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["elements"], 2);
    assert!(v["extract_ms"]["min"].as_f64() <= v["extract_ms"]["median"].as_f64());
    assert!(v["chars"].as_u64().expect("chars") > 20);
}
