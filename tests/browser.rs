//! The observation against a real Chromium, on pages this test serves on
//! 127.0.0.1. One browser for the whole binary (started on first use, in a
//! static with its own runtime); each test opens its own tab.
//!
//! Without Chromium these tests fail with the install command; they never
//! skip.

use std::future::Future;
use std::time::Duration;

use webagent::browser::{
    BrowserError, BrowserSession, LaunchOptions, ObserveOptions, SessionStatus, Tab,
};
use webagent::dom::{ElementIndex, InteractiveElement, PageState};

#[path = "support/chromium.rs"]
mod chromium;
use chromium::shared;

/// Serves `html` at `path`, opens it in a fresh tab and runs `body`.
fn with_page<F, Fut>(path: &str, html: &str, body: F)
where
    F: FnOnce(Tab) -> Fut,
    Fut: Future<Output = ()>,
{
    let s = shared();
    s.server.html(path, html.to_string());
    let url = s.server.url(path);
    s.runtime.block_on(async {
        let tab = s
            .session
            .new_tab(&url)
            .await
            .expect("opening the test page");
        body(tab).await;
    });
}

fn page(body: &str) -> String {
    format!("<!doctype html><html><head><title>t</title><style>body{{margin:0;font:16px sans-serif}}</style></head><body>{body}</body></html>")
}

async fn observe(tab: &Tab) -> PageState {
    tab.observe(&ObserveOptions::default())
        .await
        .expect("observing")
}

fn texts(state: &PageState) -> Vec<String> {
    state.elements.iter().map(|e| e.text.clone()).collect()
}

fn find<'a>(state: &'a PageState, text: &str) -> Option<&'a InteractiveElement> {
    state.elements.iter().find(|e| e.text == text)
}

#[test]
fn hidden_transparent_and_empty_elements_are_not_listed() {
    let html = page(
        r#"<button>Shown</button>
        <button style="display:none">NoneSelf</button>
        <div style="display:none"><button>NoneParent</button></div>
        <button style="visibility:hidden">HiddenSelf</button>
        <div style="visibility:hidden"><button>HiddenParent</button><button style="visibility:visible">VisibleAgain</button></div>
        <button style="opacity:0">Clear</button>
        <div style="opacity:0"><div><button>ClearAncestor</button></div></div>
        <a href="/x" style="display:block;width:0;height:0;overflow:hidden">Empty</a>
        <details><summary>More</summary><p>SecretText</p></details>
        <p style="visibility:hidden">InvisibleText</p>"#,
    );
    with_page("/hidden", &html, |tab| async move {
        let state = observe(&tab).await;
        let listed = texts(&state);
        assert!(listed.contains(&"Shown".to_string()), "{listed:?}");
        assert!(listed.contains(&"VisibleAgain".to_string()), "{listed:?}");
        // Text the reader cannot see is not page text either.
        assert!(
            state.page_text.text.contains("Shown"),
            "{}",
            state.page_text.text
        );
        assert!(
            !state.page_text.text.contains("SecretText"),
            "{}",
            state.page_text.text
        );
        assert!(
            !state.page_text.text.contains("InvisibleText"),
            "{}",
            state.page_text.text
        );
        for gone in [
            "NoneSelf",
            "NoneParent",
            "HiddenSelf",
            "HiddenParent",
            "Clear",
            "ClearAncestor",
            "Empty",
        ] {
            assert!(
                !listed.contains(&gone.to_string()),
                "{gone} listed: {}",
                state.listing
            );
        }
    });
}

#[test]
fn a_modal_overlay_hides_what_it_covers_but_not_its_own_controls() {
    let html = page(
        r#"<button>Behind</button>
        <div style="height:3000px"></div><button>FarBehind</button>
        <div style="position:fixed;inset:0;background:rgba(0,0,0,.5)">
          <div style="margin:100px auto;width:300px;background:#fff"><button>Confirm</button></div>
        </div>"#,
    );
    with_page("/modal", &html, |tab| async move {
        let state = tab
            .observe(&ObserveOptions {
                full_page: true,
                ..Default::default()
            })
            .await
            .expect("observing");
        let listed = texts(&state);
        assert!(listed.contains(&"Confirm".to_string()), "{}", state.listing);
        assert!(!listed.contains(&"Behind".to_string()), "{}", state.listing);
        assert!(
            !listed.contains(&"FarBehind".to_string()),
            "{}",
            state.listing
        );
    });
}

#[test]
fn a_sticky_header_hides_what_scrolled_under_it_only() {
    let html = page(
        r#"<header style="position:sticky;top:0;height:120px;background:#eee;z-index:5"><a href="/home">Home</a></header>
        <div style="height:400px"></div>
        <button style="display:block;height:40px">UnderHeader</button>
        <button style="display:block;height:40px">Below</button>
        <div style="height:3000px"></div>"#,
    );
    with_page("/sticky", &html, |tab| async move {
        let first = observe(&tab).await;
        assert!(find(&first, "UnderHeader").is_some(), "{}", first.listing);
        // Scroll so the first button sits entirely under the header.
        tab.eval("window.scrollTo(0, 440); window.scrollY")
            .await
            .expect("scrolling");
        let state = observe(&tab).await;
        assert!(find(&state, "Home").is_some(), "{}", state.listing);
        assert!(find(&state, "Below").is_some(), "{}", state.listing);
        assert!(find(&state, "UnderHeader").is_none(), "{}", state.listing);
    });
}

#[test]
fn disabled_controls_are_listed_and_say_so() {
    let html = page(
        r#"<button disabled>Pay</button><fieldset disabled><input name="card" placeholder="Card"></fieldset>
        <label><input type="checkbox" name="terms" checked> I agree</label><select name="size"><option>S</option><option selected>M</option></select>"#,
    );
    with_page("/disabled", &html, |tab| async move {
        let state = observe(&tab).await;
        let pay = find(&state, "Pay").expect("Pay is listed");
        assert_eq!(pay.attribute("disabled"), Some(""));
        let card = state
            .elements
            .iter()
            .find(|e| e.attribute("name") == Some("card"))
            .expect("card input listed");
        assert_eq!(card.attribute("disabled"), Some(""), "{}", state.listing);
        assert!(
            state
                .listing
                .contains("<input type=\"checkbox\" name=\"terms\" checked label=\"I agree\" />"),
            "{}",
            state.listing
        );
        let size = state
            .elements
            .iter()
            .find(|e| e.tag == "select")
            .expect("select listed");
        assert_eq!(size.attribute("value"), Some("M"));
        assert!(size.text.contains("S | M"), "{}", size.text);
    });
}

#[test]
fn shadow_roots_and_iframes_of_both_origins_are_walked() {
    let s = shared();
    s.server
        .html("/frame-inner", page("<button>InFrame</button>"));
    // The same server under another host name is another origin.
    let other = format!("http://localhost:{}/frame-inner", s.server.addr().port());
    let html = page(&format!(
        r#"<div id="host"></div>
        <iframe src="/frame-inner" width="300" height="100"></iframe>
        <iframe src="{other}" width="300" height="100"></iframe>
        <script>
          const root = document.getElementById('host').attachShadow({{mode:'open'}});
          root.innerHTML = '<button>InShadow</button><div id="deep"></div>';
          root.getElementById('deep').attachShadow({{mode:'open'}}).innerHTML = '<a href="/deep">Deeper</a>';
        </script>"#
    ));
    with_page("/frames", &html, |tab| async move {
        let state = observe(&tab).await;
        let shadow = find(&state, "InShadow").expect("shadow button listed");
        assert!(shadow.in_shadow_root);
        assert!(
            find(&state, "Deeper").is_some_and(|e| e.in_shadow_root),
            "{}",
            state.listing
        );
        let inner = find(&state, "InFrame").expect("same-origin frame content listed");
        let frame = inner.frame.expect("frame index set");
        let frame_el = &state.elements[frame.0];
        assert_eq!(frame_el.tag, "iframe");
        assert!(!frame_el.cross_origin_frame);
        assert_eq!(inner.parent, Some(frame));
        // The cross-origin frame is observed in its own process and its
        // button is listed under its <iframe> too.
        let buttons: Vec<_> = state
            .elements
            .iter()
            .filter(|e| e.text == "InFrame")
            .collect();
        assert_eq!(buttons.len(), 2, "{}", state.listing);
        let far = buttons[1].frame.expect("the frame's index");
        let far_frame = state
            .elements
            .iter()
            .find(|e| e.index == far)
            .expect("iframe");
        assert_eq!(far_frame.tag, "iframe");
        assert!(
            far_frame
                .attribute("src")
                .is_some_and(|s| s.contains("localhost")),
            "{}",
            state.listing
        );
        assert!(
            state.elements.iter().all(|e| !e.cross_origin_frame),
            "{}",
            state.listing
        );
    });
}

#[test]
fn editable_pointer_listener_and_scrollable_elements_are_interactive() {
    let html = page(
        r#"<div contenteditable="true">Notes <b>bold</b></div>
        <div style="cursor:pointer">Card <span>with child</span></div>
        <div id="l">Listener</div>
        <div id="h">Handler</div>
        <div>Plain</div>
        <div style="height:60px;overflow:auto"><p style="height:400px">Long</p></div>
        <script>
          document.getElementById('l').addEventListener('click', () => {});
          document.getElementById('h').onclick = () => {};
        </script>"#,
    );
    with_page("/kinds", &html, |tab| async move {
        let state = observe(&tab).await;
        let listed = texts(&state);
        assert!(
            listed.contains(&"Notes bold".to_string()),
            "{}",
            state.listing
        );
        // The child inherits the cursor; only the card itself is listed.
        assert!(
            listed.contains(&"Card with child".to_string()),
            "{}",
            state.listing
        );
        assert!(
            !listed.contains(&"with child".to_string()),
            "{}",
            state.listing
        );
        assert!(
            listed.contains(&"Listener".to_string()),
            "{}",
            state.listing
        );
        assert!(listed.contains(&"Handler".to_string()), "{}", state.listing);
        assert!(!listed.contains(&"Plain".to_string()), "{}", state.listing);
        let scroller = find(&state, "Long").expect("scroll container listed");
        assert!(
            scroller
                .attribute("scrollable")
                .is_some_and(|v| v.contains("below")),
            "{}",
            state.listing
        );
    });
}

#[test]
fn elements_added_since_the_last_observation_are_starred() {
    let html = page(r#"<button>Old</button><div id="slot"></div>"#);
    with_page("/new", &html, |tab| async move {
        let first = observe(&tab).await;
        assert!(!first.listing.contains('*'), "{}", first.listing);
        tab.eval("document.getElementById('slot').innerHTML = '<button>Fresh</button>'; 1")
            .await
            .expect("changing the page");
        let second = observe(&tab).await;
        assert!(!find(&second, "Old").expect("old listed").is_new);
        let fresh = find(&second, "Fresh").expect("new listed");
        assert!(fresh.is_new);
        assert!(
            second
                .listing
                .contains(&format!("*[{}]<button>Fresh</button>", fresh.index)),
            "{}",
            second.listing
        );
        let third = observe(&tab).await;
        assert!(!third.listing.contains('*'), "{}", third.listing);
    });
}

#[test]
fn a_long_page_lists_the_viewport_band_and_counts_what_was_left_out() {
    let mut items = String::new();
    for i in 0..3000 {
        items.push_str(&format!("<li><a href=\"#i{i}\">item {i}</a></li>"));
    }
    let html = page(&format!("<ul>{items}</ul>"));
    with_page("/long", &html, |tab| async move {
        let top = observe(&tab).await;
        assert!(top.elements.len() < 200, "listed {}", top.elements.len());
        assert!(top.left_out.below > 1000, "{:?}", top.left_out);
        assert!(top.listing.starts_with("[top of page]"), "{}", top.listing);
        assert!(
            top.listing.contains("page sections below not listed"),
            "{}",
            top.listing
        );
        tab.eval("window.scrollTo(0, document.body.scrollHeight / 2); 1")
            .await
            .expect("scrolling");
        let middle = observe(&tab).await;
        assert!(middle.left_out.above > 500, "{:?}", middle.left_out);
        assert!(
            middle.listing.contains("page sections above not listed"),
            "{}",
            middle.listing
        );
        assert!(middle.scroll.pages_above() > 1.0);
        let full = tab
            .observe(&ObserveOptions {
                full_page: true,
                ..Default::default()
            })
            .await
            .expect("full observation");
        assert_eq!(full.elements.len(), 3000);
        assert_eq!(full.left_out.above + full.left_out.below, 0);
        // The page text is clipped and says so.
        assert!(full.page_text.clipped);
        assert!(full
            .page_text
            .for_model()
            .ends_with("[page text clipped at 4000 characters]"));
    });
}

#[test]
fn a_long_table_lists_its_cells_in_the_band_and_a_cell_moved_away_by_its_own_box() {
    // Cells of a row inside the band are not measured one by one (a cell
    // lies within its row); a cell taken out of the table's layout is.
    let mut rows = String::new();
    for r in 0..300 {
        rows.push_str(&format!(
            "<tr><td>row {r}</td><td><input name=\"r{r}a\"></td><td><input name=\"r{r}b\"></td></tr>"
        ));
    }
    let html = page(&format!(
        "<table><tr><td>moved</td><td style=\"position:absolute;top:6000px;cursor:pointer\" onclick=\"1\">far cell</td></tr>{rows}</table>"
    ));
    with_page("/long-table", &html, |tab| async move {
        let top = observe(&tab).await;
        let fields = top.elements.iter().filter(|e| e.tag == "input").count();
        assert!((40..400).contains(&fields), "listed {fields} fields");
        assert!(find(&top, "far cell").is_none(), "{}", top.listing);
        assert!(top.left_out.below > 200, "{:?}", top.left_out);
        // Every row inside the band has both its fields listed.
        let names: Vec<&str> = top
            .elements
            .iter()
            .filter_map(|e| {
                e.attributes
                    .iter()
                    .find(|(k, _)| k == "name")
                    .map(|(_, v)| v.as_str())
            })
            .collect();
        assert!(
            names.contains(&"r0a") && names.contains(&"r0b"),
            "{names:?}"
        );
        let last = (fields / 2 - 1).to_string();
        assert!(names.contains(&format!("r{last}b").as_str()), "{names:?}");
    });
}

#[test]
fn a_fixed_widget_inside_a_far_away_container_is_still_listed() {
    let mut items = String::new();
    for i in 0..500 {
        items.push_str(&format!("<p>paragraph {i}</p>"));
    }
    let html = page(&format!(
        r#"<main>{items}</main>
        <footer><p>Footer</p><button style="position:fixed;right:8px;bottom:8px;width:60px;height:40px">Chat</button></footer>"#
    ));
    with_page("/stray-fixed", &html, |tab| async move {
        let state = observe(&tab).await;
        assert!(state.left_out.below > 0, "{:?}", state.left_out);
        assert!(find(&state, "Chat").is_some(), "{}", state.listing);
        assert!(find(&state, "Footer").is_none());
    });
}

/// The texts an observation taken in webagent's world with `opts` lists,
/// and how many hit tests (`elementFromPoint`) it made.
async fn listed_and_hit_tests(tab: &Tab, opts: &str) -> (Vec<String>, u64) {
    let counted = tab
        .eval(&format!(
            r#"(() => {{
              const proto = Document.prototype, real = proto.elementFromPoint;
              let hits = 0;
              proto.elementFromPoint = function (x, y) {{ hits += 1; return real.call(this, x, y); }};
              try {{
                const state = JSON.parse(globalThis.__webagentObserver.observe({opts}));
                return {{ texts: state.elements.map((e) => e.text || ''), hits }};
              }} finally {{ proto.elementFromPoint = real; }}
            }})()"#
        ))
        .await
        .expect("observing in the world");
    let texts = counted["texts"]
        .as_array()
        .expect("texts")
        .iter()
        .map(|t| t.as_str().unwrap_or_default().to_string())
        .collect();
    (texts, counted["hits"].as_u64().expect("hits"))
}

#[test]
fn before_the_first_frame_stray_fixed_widgets_are_found_by_style_without_a_hit_test() {
    // A hit test before a document's first frame makes Chromium build the
    // paint properties of the whole page, so the first look searches the
    // skipped containers by style instead, and must find what the hit
    // tests find later: the widget at a corner, not the one elsewhere.
    let mut items = String::new();
    for i in 0..300 {
        items.push_str(&format!("<p>paragraph {i}</p>"));
    }
    let html = page(&format!(
        r#"<main>{items}</main>
        <footer><p>Footer</p>
          <div><button style="position:fixed;right:8px;bottom:8px;width:60px;height:40px">Chat</button></div>
          <div style="display:none"><button style="position:fixed;left:8px;bottom:8px">Hidden</button></div>
          <span style="position:fixed;left:300px;top:300px"><button>Elsewhere</button></span>
        </footer>"#
    ));
    with_page("/stray-by-style", &html, |tab| async move {
        let (by_hits, hits) = listed_and_hit_tests(&tab, "{}").await;
        assert!(hits > 0, "after the first frame the search hit-tests");
        assert!(by_hits.iter().any(|t| t == "Chat"), "{by_hits:?}");
        let (by_style, hits) = listed_and_hit_tests(&tab, "{beforeFirstFrame: true}").await;
        assert_eq!(hits, 0, "no hit test before the first frame");
        assert_eq!(by_style, by_hits, "both searches list the same widgets");
    });
    // Past the limit of elements to read, the search falls back on hit tests.
    let mut rows = String::new();
    for i in 0..2500 {
        rows.push_str(&format!("<div><span>row {i}</span></div>"));
    }
    let html = page(&format!(
        r#"<main style="height:3000px">top</main><footer>{rows}
        <button style="position:fixed;right:8px;bottom:8px;width:60px;height:40px">Chat</button></footer>"#
    ));
    with_page("/stray-many", &html, |tab| async move {
        let (texts, hits) = listed_and_hit_tests(&tab, "{beforeFirstFrame: true}").await;
        assert!(hits > 0, "too many skipped elements to read");
        assert!(texts.iter().any(|t| t == "Chat"), "{texts:?}");
    });
}

#[test]
fn fields_in_the_cells_of_a_table_are_measured_only_when_they_may_lie_elsewhere() {
    // A field in a cell of a row inside the band is taken as inside it too,
    // without its box, unless its position moves it, and it is listed only
    // if it has a size; a layer over some cells still covers them.
    let mut rows = String::new();
    for r in 0..6 {
        rows.push_str(&format!(
            r#"<tr><td><input aria-label="plain {r}"></td>
            <td><input aria-label="moved {r}" style="position:relative;top:4000px"></td>
            <td><input aria-label="empty {r}" style="width:0;height:0;padding:0;border:0"></td></tr>"#
        ));
    }
    let html = page(&format!(
        r#"<table>{rows}</table>
        <div style="position:absolute;left:0;top:0;width:100%;height:40px;background:#fff"></div>"#
    ));
    with_page("/cell-fields", &html, |tab| async move {
        let state = observe(&tab).await;
        let labels: Vec<&str> = state
            .elements
            .iter()
            .filter_map(|e| e.attributes.iter().find(|(k, _)| k == "aria-label"))
            .map(|(_, v)| v.as_str())
            .collect();
        assert!(labels.contains(&"plain 5"), "{}", state.listing);
        assert!(!labels.iter().any(|l| l.starts_with("moved")), "{labels:?}");
        assert!(!labels.iter().any(|l| l.starts_with("empty")), "{labels:?}");
        assert!(
            !labels.contains(&"plain 0"),
            "covered by the layer: {labels:?}"
        );
    });
}

#[test]
fn observing_survives_a_navigation_the_page_starts_itself() {
    let s = shared();
    s.server.html("/landed", page("<button>Landed</button>"));
    let html = page(
        r#"<button>Leaving</button><script>setTimeout(() => { location.href = '/landed'; }, 150);</script>"#,
    );
    with_page("/leaving", &html, |tab| async move {
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
    let html = page(r#"<div id="box"><button id="b">Buy</button></div><button>Other</button>"#);
    with_page("/stale", &html, |tab| async move {
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
    let html = page(r#"<input name="q" value="x"><input name="q" value="y">"#);
    with_page("/selector", &html, |tab| async move {
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
    let html = page(
        r#"<button>Safe</button><script>
        // A hostile page: replaces DOM methods in its own world.
        Element.prototype.getBoundingClientRect = () => ({top:0,left:0,right:0,bottom:0,width:0,height:0});
        window.getComputedStyle = () => ({display:'none'});
        </script>"#,
    );
    with_page("/hostile", &html, |tab| async move {
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
        page(r#"<h1>Orders</h1><button>Ship</button><a href="/o/1">Order 1</a>"#),
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

/// A TCP relay to the shared browser whose connections can be cut, to see
/// what a session does when its connection drops.
struct Relay {
    port: u16,
    cut: tokio::sync::watch::Sender<u64>,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    async fn start(target: std::net::SocketAddr) -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding the relay");
        let port = listener.local_addr().expect("relay address").port();
        let (cut, cuts) = tokio::sync::watch::channel(0u64);
        let task = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let mut cuts = cuts.clone();
                cuts.borrow_and_update();
                tokio::spawn(async move {
                    let Ok(mut upstream) = tokio::net::TcpStream::connect(target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut upstream) => {}
                        _ = cuts.changed() => {}
                    }
                });
            }
        });
        Relay { port, cut, task }
    }

    fn cut_connections(&self) {
        self.cut.send_modify(|n| *n += 1);
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[test]
fn a_dropped_connection_is_reported_and_the_session_can_reattach() {
    let s = shared();
    let ws = s
        .session
        .websocket_url()
        .expect("launched session has an address");
    let rest = ws.strip_prefix("ws://").expect("ws url");
    let (authority, path) = rest.split_once('/').expect("ws path");
    let target: std::net::SocketAddr = authority.parse().expect("browser address");
    s.runtime.block_on(async {
        let relay = Relay::start(target).await;
        let through_relay = format!("ws://127.0.0.1:{}/{path}", relay.port);
        let mut session = BrowserSession::start(LaunchOptions {
            connect: Some(through_relay),
            ..LaunchOptions::default()
        })
        .await
        .expect("attaching through the relay");
        assert_eq!(session.status(), SessionStatus::Running);
        let disconnected = session.disconnected();
        relay.cut_connections();
        let reason = tokio::time::timeout(Duration::from_secs(20), disconnected)
            .await
            .expect("the drop is noticed");
        assert!(!reason.is_empty());
        assert!(matches!(session.status(), SessionStatus::Disconnected(_)));
        let err = session.new_tab("about:blank").await.unwrap_err();
        assert!(matches!(err, BrowserError::Disconnected(_)), "{err}");
        session.relaunch().await.expect("re-attaching");
        assert_eq!(session.status(), SessionStatus::Running);
        s.server.html("/again", page("<button>Again</button>"));
        let tab = session
            .new_tab(&s.server.url("/again"))
            .await
            .expect("a tab after re-attaching");
        let state = observe(&tab).await;
        assert!(find(&state, "Again").is_some(), "{}", state.listing);
        tab.close().await.expect("closing");
    });
}

#[test]
fn attaching_to_nothing_fails_with_the_address() {
    let s = shared();
    let err = s
        .runtime
        .block_on(BrowserSession::start(LaunchOptions {
            connect: Some("ws://127.0.0.1:9/devtools/browser/none".into()),
            ..LaunchOptions::default()
        }))
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("ws://127.0.0.1:9/devtools/browser/none"),
        "{text}"
    );
}

// ---- names, margins, whole page, text and the browser's own defects ----

/// A screenshot as the model gets it, written to a file and decoded from
/// there, as a person or a test reads a saved picture.
async fn saved_picture(
    tab: &Tab,
    state: &PageState,
    secrets: Vec<String>,
    name: &str,
) -> (webagent::vision::Screenshot, image::RgbImage) {
    let mut request = webagent::vision::ShotRequest::step(1024);
    request.secrets = secrets
        .into_iter()
        .map(webagent::secrets::SecretValue::from)
        .collect();
    let shot = webagent::browser::shot::capture(
        tab,
        Some(state),
        &request,
        &webagent::browser::shot::MarkColors::default(),
    )
    .await
    .expect("a screenshot");
    let file = std::env::temp_dir().join(format!("webagent-{name}-{}.jpg", std::process::id()));
    std::fs::write(&file, &shot.image).expect("writing the picture");
    let decoded = image::load_from_memory(&std::fs::read(&file).expect("reading it back"))
        .expect("a JPEG")
        .to_rgb8();
    let _ = std::fs::remove_file(&file);
    (shot, decoded)
}

/// Whether a pixel is within JPEG's error of `#rrggbb`.
fn near(pixel: &image::Rgb<u8>, hex: &str) -> bool {
    let want: Vec<i32> = (0..3)
        .map(|i| i32::from_str_radix(&hex[1 + 2 * i..3 + 2 * i], 16).unwrap_or(0))
        .collect();
    pixel
        .0
        .iter()
        .zip(want)
        .all(|(got, want)| (i32::from(*got) - want).abs() <= 40)
}

#[test]
fn marks_are_drawn_at_the_listed_boxes_in_the_listing_colours_and_leave_no_trace() {
    // Boxes at known places on a white page, far enough apart that no
    // label lands on another box.
    let html = page(
        r#"<div style="background:#fff;height:800px">
        <button id=a style="position:absolute;left:100px;top:100px;width:200px;height:60px;border:0;background:#fff">Alpha</button>
        <a href="/x" style="position:absolute;left:500px;top:300px;width:160px;height:40px;display:block;color:#000">Beta</a>
        <input id=c style="position:absolute;left:800px;top:500px;width:300px;height:40px;border:1px solid #ddd;box-sizing:border-box">
        </div>"#,
    );
    with_page("/marks", &html, |tab| async move {
        let before = tab
            .eval("[document.documentElement.scrollWidth, document.documentElement.scrollHeight, document.body.getBoundingClientRect().height]")
            .await
            .expect("layout");
        let state = observe(&tab).await;
        assert_eq!(state.elements.len(), 3, "{}", state.listing);
        let (shot, img) = saved_picture(&tab, &state, Vec::new(), "marks").await;
        // 1280 CSS pixels scaled to 1024.
        assert_eq!((shot.width, shot.height), (1024, 640));
        assert_eq!((img.width(), img.height()), (1024, 640));
        assert_eq!(shot.marks.len(), 3, "{:?}", shot.marks);
        let scale = 1024.0 / 1280.0;
        let listed = webagent::browser::shot::MarkColors::default().listed;
        for (mark, (left, top, width, height)) in shot.marks.iter().zip([
            (100.0, 100.0, 200.0, 60.0),
            (500.0, 300.0, 160.0, 40.0),
            (800.0, 500.0, 300.0, 40.0),
        ]) {
            let at = |v: f64| (v * scale).round() as u32;
            assert_eq!(
                (mark.x, mark.y, mark.width, mark.height),
                (at(left), at(top), at(width), at(height)),
                "mark {} sits on its element's box",
                mark.index
            );
            assert!(!mark.new, "nothing is new on a first look");
            // Inside each corner of the box, by one pixel: the outline.
            let right = mark.x + mark.width - 2;
            let bottom = mark.y + mark.height - 2;
            for (x, y) in [
                (mark.x + 1, mark.y + 1),
                (right, mark.y + 1),
                (mark.x + 1, bottom),
                (right, bottom),
            ] {
                let pixel = img.get_pixel(x, y);
                assert!(
                    near(pixel, &listed),
                    "mark {} at ({x}, {y}) is {pixel:?}, not {listed}",
                    mark.index
                );
            }
            // The middle of the box is the page's own.
            let middle = img.get_pixel(mark.x + mark.width / 2, mark.y + mark.height - 8);
            assert!(
                !near(middle, &listed),
                "mark {} is an outline, not a fill",
                mark.index
            );
        }
        // Nothing but the marks: the page's white where no box is.
        let stray = (0..640)
            .flat_map(|y| (0..70).map(move |x| (x, y)))
            .filter(|&(x, y)| !near(img.get_pixel(x, y), "#ffffff"))
            .count();
        assert_eq!(stray, 0, "the layer draws nothing beside the boxes");
        // Gone before anything else happens, and the layout never moved.
        let left = tab
            .eval("document.querySelectorAll('webagent-marks').length")
            .await
            .expect("eval");
        assert_eq!(left, 0);
        let after = tab
            .eval("[document.documentElement.scrollWidth, document.documentElement.scrollHeight, document.body.getBoundingClientRect().height]")
            .await
            .expect("layout");
        assert_eq!(before, after);

        // An element new since the last look is marked in the listing's
        // colour for new elements.
        tab.eval("(() => { const b = document.createElement('button'); b.textContent = 'Gamma'; b.style.cssText = 'position:absolute;left:100px;top:400px;width:120px;height:50px;border:0;background:#fff'; document.body.appendChild(b); return 1; })()")
            .await
            .expect("adding a button");
        let state = observe(&tab).await;
        let gamma = find(&state, "Gamma").expect("listed");
        assert!(gamma.is_new);
        let (shot, img) = saved_picture(&tab, &state, Vec::new(), "marks-new").await;
        let mark = shot
            .marks
            .iter()
            .find(|m| m.index == gamma.index.0)
            .expect("a mark for the new button");
        assert!(mark.new);
        let fresh = webagent::browser::shot::MarkColors::default().fresh;
        let pixel = img.get_pixel(mark.x + mark.width - 2, mark.y + mark.height - 2);
        assert!(near(pixel, &fresh), "{pixel:?} is not {fresh}");
    });
}

#[test]
fn marks_of_a_frame_of_another_origin_sit_on_its_elements_and_keep_their_indices() {
    let s = shared();
    s.server.html(
        "/mark-frame-inner",
        page(r#"<button style="position:absolute;left:20px;top:10px;width:100px;height:40px">Inside</button>"#),
    );
    let other = format!(
        "http://localhost:{}/mark-frame-inner",
        s.server.addr().port()
    );
    let html = page(&format!(
        r#"<button style="position:absolute;left:40px;top:40px;width:120px;height:40px">Before</button>
        <iframe src="{other}" style="position:absolute;left:400px;top:100px;width:300px;height:200px;border:0"></iframe>
        <button style="position:absolute;left:40px;top:400px;width:120px;height:40px">After</button>"#
    ));
    with_page("/mark-frame", &html, |tab| async move {
        let mut state = observe(&tab).await;
        for _ in 0..50 {
            if find(&state, "Inside").is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            state = observe(&tab).await;
        }
        let inside = find(&state, "Inside")
            .expect("the frame's button is listed")
            .index
            .0;
        let after = find(&state, "After").expect("listed").index.0;
        assert!(inside < after, "{}", state.listing);
        let (shot, _) = saved_picture(&tab, &state, Vec::new(), "marks-frame").await;
        let scale = 1024.0 / 1280.0;
        let at = |v: f64| (v * scale).round() as u32;
        let mark = |index: usize| {
            *shot
                .marks
                .iter()
                .find(|m| m.index == index)
                .unwrap_or_else(|| panic!("no mark {index}: {:?}", shot.marks))
        };
        let m = mark(inside);
        assert_eq!(
            (m.x, m.y, m.width, m.height),
            (at(420.0), at(110.0), at(100.0), at(40.0))
        );
        let m = mark(after);
        assert_eq!(
            (m.x, m.y, m.width, m.height),
            (at(40.0), at(400.0), at(120.0), at(40.0))
        );
    });
}

#[test]
fn a_secret_typed_into_a_text_field_is_blanked_in_the_picture() {
    let secret = "hunter2-SECRET";
    let html = page(&format!(
        r#"<input id=key value="{secret}" style="position:absolute;left:100px;top:100px;width:600px;height:80px;font:bold 48px monospace;color:#000;background:#fff;border:1px solid #ccc;padding:0 8px">
        <input id=other value="plain text" style="position:absolute;left:100px;top:300px;width:600px;height:80px;font:bold 48px monospace;color:#000;background:#fff;border:1px solid #ccc;padding:0 8px">"#
    ));
    with_page("/secret-field", &html, |tab| async move {
        let state = observe(&tab).await;
        // Dark pixels inside a field's box (its text), in image pixels.
        let dark = |img: &image::RgbImage, top: f64| {
            let scale = 1024.0 / 1280.0;
            let (x0, y0) = ((110.0 * scale) as u32, ((top + 10.0) * scale) as u32);
            let (x1, y1) = ((690.0 * scale) as u32, ((top + 70.0) * scale) as u32);
            let mut n = 0;
            for y in y0..y1 {
                for x in x0..x1 {
                    let p = img.get_pixel(x, y).0;
                    if u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2]) < 200 {
                        n += 1;
                    }
                }
            }
            n
        };
        // Without the secret known, the field shows it: the check can fail.
        let (_, shown) = saved_picture(&tab, &state, Vec::new(), "secret-shown").await;
        assert!(dark(&shown, 100.0) > 200, "the test page shows its text");
        let (shot, masked) =
            saved_picture(&tab, &state, vec![secret.to_string()], "secret-masked").await;
        assert_eq!(shot.masked, 1);
        assert_eq!(
            dark(&masked, 100.0),
            0,
            "no text of the secret field is left"
        );
        assert!(dark(&masked, 300.0) > 200, "other fields are left alone");
        // The field itself was never touched.
        let value = tab
            .eval("document.getElementById('key').value")
            .await
            .expect("eval");
        assert_eq!(value, secret);
    });
}

#[test]
fn observe_and_exec_write_the_models_pictures_with_typed_secrets_blanked() {
    let s = shared();
    s.server.html(
        "/cli-shot",
        page(
            r#"<button style="position:absolute;left:40px;top:40px;width:200px;height:50px">Ship</button>
            <input id=key style="position:absolute;left:100px;top:200px;width:600px;height:80px;font:bold 48px monospace;color:#000;background:#fff;border:1px solid #ccc;box-sizing:border-box">"#,
        ),
    );
    let ws = s
        .session
        .websocket_url()
        .expect("launched session has an address");
    let dir = std::env::temp_dir().join(format!("webagent-cli-shot-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let webagent = || {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_webagent"));
        command
            .current_dir(std::env::temp_dir())
            .env("WEBAGENT_CONFIG", "/dev/null")
            .args(["--log-file", "/dev/null"]);
        command
    };
    let png = dir.join("observed.png");
    let out = webagent()
        .args(["observe", "--connect", &ws, "--screenshot"])
        .arg(&png)
        .arg(s.server.url("/cli-shot"))
        .output()
        .expect("running webagent observe");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&png).expect("the picture was written");
    assert!(bytes.starts_with(b"\x89PNG"), "a .png name gets a PNG");
    let picture = image::load_from_memory(&bytes).expect("decodes").to_rgb8();
    assert_eq!(picture.dimensions(), (1024, 640));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("2 marks"), "{stderr}");

    // exec: one picture per action, the typed secret not in it.
    let shots = dir.join("steps");
    let out = webagent()
        .env("SHOT_PW", "hunter2-SECRET")
        .args([
            "exec",
            "--json",
            "--connect",
            &ws,
            "--secret",
            "SHOT_PW",
            "--screenshot",
        ])
        .arg(&shots)
        .arg(s.server.url("/cli-shot"))
        .arg(r##"{"input_text": {"selector": "#key", "text": "<secret>SHOT_PW</secret>"}}"##)
        .arg(
            serde_json::json!({"screenshot": {"selector": "#key", "path": dir.join("key.png")}})
                .to_string(),
        )
        .output()
        .expect("running webagent exec");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    assert_eq!(lines.len(), 2);
    let first = lines[0]["screenshot"]
        .as_str()
        .expect("a picture per action");
    assert!(first.ends_with("01-input_text.jpg"), "{first}");
    assert!(lines[1]["screenshot"]
        .as_str()
        .is_some_and(|f| f.ends_with("02-screenshot.jpg")));
    let typed = image::open(first).expect("decodes").to_rgb8();
    // The field's inside, in image pixels: no dark text left.
    let scale = 1024.0 / 1280.0;
    let dark = (((210.0 * scale) as u32)..((270.0 * scale) as u32))
        .flat_map(|y| (((110.0 * scale) as u32)..((690.0 * scale) as u32)).map(move |x| (x, y)))
        .filter(|&(x, y)| {
            let p = typed.get_pixel(x, y).0;
            u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2]) < 200
        })
        .count();
    assert_eq!(dark, 0, "the secret's characters are not in the picture");
    // The action's own PNG of the field: its size, the secret covered too.
    let field = image::open(dir.join("key.png"))
        .expect("the action's PNG")
        .to_rgb8();
    assert_eq!(field.dimensions(), (600, 80));
    let dark = (10..70)
        .flat_map(|y| (10..590).map(move |x| (x, y)))
        .filter(|&(x, y)| {
            let p = field.get_pixel(x, y).0;
            u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2]) < 200
        })
        .count();
    assert_eq!(dark, 0, "the field's own picture does not show the secret");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("1 secret fields blanked"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn line_of(state: &PageState, pick: impl Fn(&InteractiveElement) -> bool) -> &InteractiveElement {
    state
        .elements
        .iter()
        .find(|e| pick(e))
        .unwrap_or_else(|| panic!("no such element in\n{}", state.listing))
}

#[test]
fn icon_only_controls_get_names_a_model_can_tell_apart() {
    let html = page(
        r##"<style>.ico{display:inline-block;width:16px;height:16px;cursor:pointer;background:#c00} .tb button{width:28px;height:28px}</style>
        <div class="row" style="display:flex;gap:8px"><span>Ann Lee: lunch on Friday?</span>
          <span class="trash ico" onclick="this.parentNode.remove()"></span>
          <span class="star ico css-1x2y3z" onclick="this.classList.toggle('on')"></span></div>
        <div class="tb">
          <button type="button" class="ql-bold"></button><button type="button" class="ql-italic"></button>
          <button type="button" class="ql-underline"></button>
          <button type="button"><i class="fa fa-reply"></i></button>
          <button type="button"><svg width="16" height="16"><use href="#icon-archive"></use></svg></button>
          <button type="button"><svg width="16" height="16"><title>Print</title><rect width="16" height="16"></rect></svg></button>
          <span id="send-label">Send now</span><button type="button" aria-labelledby="send-label"></button>
        </div>
        <a href="/std/index.html"><img src="/static/rust-logo.svg" alt="logo" width="40" height="40"></a>
        <a href="/home"><img src="/static/home-page.png" width="40" height="40"></a>"##,
    );
    with_page("/icons", &html, |tab| async move {
        let state = observe(&tab).await;
        let named = |attr: &str, value: &str| {
            state
                .elements
                .iter()
                .any(|e| e.attribute(attr) == Some(value))
        };
        for guess in [
            "trash",
            "star",
            "bold",
            "italic",
            "underline",
            "reply",
            "archive",
            "home page",
        ] {
            assert!(
                named("name~", guess),
                "no name~={guess:?} in\n{}",
                state.listing
            );
        }
        for label in ["Print", "Send now", "logo"] {
            assert!(
                named("label", label),
                "no label={label:?} in\n{}",
                state.listing
            );
        }
        // Framework noise is dropped from guesses.
        assert!(!state.listing.contains("css"), "{}", state.listing);
    });
}

#[test]
fn a_lone_checkbox_is_named_by_its_row_and_sortable_items_are_numbered() {
    let html = page(
        r#"<ul class="todo-list">
          <li><div class="view"><input class="toggle" type="checkbox" checked><label>Buy milk</label><button class="destroy"></button></div></li>
          <li><div class="view"><input class="toggle" type="checkbox"><label>Walk the dog</label><button class="destroy"></button></div></li>
        </ul>
        <p id="hint">Pay by card</p><input type="radio" name="pay" aria-describedby="hint">
        <ol id="sortable"><li>First</li><li>Second</li></ol>
        <script>sortable.addEventListener('mousedown', () => {});</script>"#,
    );
    with_page("/todo", &html, |tab| async move {
        let state = observe(&tab).await;
        let milk = line_of(&state, |e| e.attribute("label") == Some("Buy milk"));
        assert_eq!(milk.tag, "input");
        assert_eq!(milk.attribute("checked"), Some(""));
        let dog = line_of(&state, |e| e.attribute("label") == Some("Walk the dog"));
        assert_eq!(dog.attribute("checked"), None);
        line_of(&state, |e| {
            e.tag == "input" && e.attribute("label") == Some("Pay by card")
        });
        assert_eq!(line_of(&state, |e| e.text == "First").tag, "li");
        assert_eq!(line_of(&state, |e| e.text == "Second").tag, "li");
    });
}

#[test]
fn margin_elements_under_a_fixed_scrim_are_left_out() {
    let mut buttons = String::new();
    for i in 0..60 {
        buttons.push_str(&format!(
            "<button style=\"display:block;height:40px;margin:0\">B{i}</button>"
        ));
    }
    let html = page(&format!(
        "{buttons}<div style=\"position:fixed;left:0;right:0;bottom:0;height:50vh;background:rgba(0,0,0,.5)\"><button>Close</button></div>"
    ));
    with_page("/scrim", &html, |tab| async move {
        let state = observe(&tab).await;
        let rows = (state.scroll.viewport_height / 40.0) as usize;
        assert!(find(&state, "Close").is_some(), "{}", state.listing);
        assert!(find(&state, "B0").is_some(), "{}", state.listing);
        // Under the scrim now, and under it once scrolled into view.
        for hidden in [rows - 2, rows + 2, rows + 5] {
            let name = format!("B{hidden}");
            assert!(
                find(&state, &name).is_none(),
                "{name} listed:\n{}",
                state.listing
            );
        }
    });
}

#[test]
fn the_whole_page_lists_the_links_of_an_inner_scroll_area() {
    let mut links = String::new();
    for i in 0..120 {
        links.push_str(&format!("<li><a href=\"/ch{i}\">Chapter {i}</a></li>"));
    }
    let html = page(&format!(
        "<nav style=\"position:fixed;left:0;top:0;bottom:0;width:250px\"><div style=\"position:absolute;inset:0;overflow-y:auto\"><ol>{links}</ol></div></nav>\
         <main style=\"margin-left:260px\"><p>Intro</p></main>"
    ));
    with_page("/book", &html, |tab| async move {
        let state = tab
            .observe(&ObserveOptions {
                full_page: true,
                ..Default::default()
            })
            .await
            .expect("observing");
        let chapters = state
            .elements
            .iter()
            .filter(|e| e.text.starts_with("Chapter "))
            .count();
        assert_eq!(chapters, 120, "{}", state.listing);
    });
}

#[test]
fn page_text_spacing_editable_regions_and_unscrollable_pages_read_right() {
    let html = page(
        r##"<p>Click <span>Marcella</span>. Then <b>save</b>, please.</p>
        <button>Send <i>now</i>!</button>
        <div contenteditable="true" style="min-height:30px">Notes</div>
        <a href="#main" style="position:absolute;left:-9999px;top:0">Skip to content</a>"##,
    );
    with_page("/text", &html, |tab| async move {
        let state = observe(&tab).await;
        let text = &state.page_text.text;
        assert!(
            text.contains("Click Marcella. Then save, please."),
            "{text}"
        );
        assert!(find(&state, "Send now!").is_some(), "{}", state.listing);
        let notes = find(&state, "Notes").expect("the editable div");
        assert_eq!(notes.attribute("contenteditable"), Some(""));
        assert!(
            state.listing.ends_with("[end of page]\n"),
            "{}",
            state.listing
        );
    });
}

#[test]
fn the_configured_window_is_the_viewport_and_no_stray_blank_tab_is_listed() {
    let s = shared();
    s.server.html("/size", page("<button>Size</button>"));
    s.runtime.block_on(async {
        let session = BrowserSession::start(LaunchOptions::default())
            .await
            .expect("a second browser");
        let tab = session
            .new_tab(&s.server.url("/size"))
            .await
            .expect("opening");
        let state = observe(&tab).await;
        let (width, height) = LaunchOptions::default().window;
        assert_eq!(state.scroll.viewport_width, f64::from(width));
        assert_eq!(state.scroll.viewport_height, f64::from(height));
        assert_eq!(state.tabs.len(), 1, "{:?}", state.tabs);
        assert!(state.tabs[0].url.ends_with("/size"), "{:?}", state.tabs);
    });
}

#[test]
fn a_session_lists_only_its_own_tabs_and_none_hides_another() {
    let s = shared();
    s.server.html(
        "/family",
        page("<a id=out href=/family-child target=_blank>Out</a>"),
    );
    s.server.html("/family-child", page("<p>child</p>"));
    s.server.html("/stranger", page("<p>stranger</p>"));
    s.runtime.block_on(async {
        // Another session on the same browser, as a person's own tabs are
        // when webagent attaches with --cdp.
        let other = BrowserSession::start(LaunchOptions {
            connect: s.session.websocket_url(),
            ..LaunchOptions::default()
        })
        .await
        .expect("attaching a second session");
        let first = s
            .session
            .new_tab(&s.server.url("/family"))
            .await
            .expect("a tab");
        let stranger = other
            .new_tab(&s.server.url("/stranger"))
            .await
            .expect("the other session's tab");
        let second = s
            .session
            .new_tab(&s.server.url("/size-of-nothing"))
            .await
            .expect("a second tab");
        // Opening a tab leaves the earlier ones painting.
        for tab in [&first, &stranger, &second] {
            let state = tab.eval("document.visibilityState").await.expect("eval");
            assert_eq!(state, "visible", "{}", tab.target_id());
        }
        // A real click (a script's click opens no tab without a gesture).
        let state = observe(&first).await;
        let click = webagent::actions::Catalog::builtin()
            .parse(&serde_json::json!({"click": {"selector": "#out"}}))
            .expect("a click");
        let done = webagent::browser::act::Executor::new(&first, Default::default())
            .execute(&click, Some(&state))
            .await;
        assert!(done.is_ok(), "{done:?}");
        let mut urls = Vec::new();
        for _ in 0..100 {
            urls = first
                .open_tabs()
                .await
                .expect("tabs")
                .into_iter()
                .map(|t| t.url)
                .collect::<Vec<_>>();
            if urls.iter().any(|u| u.ends_with("/family-child")) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            urls.iter().any(|u| u.ends_with("/family-child")),
            "a tab the page opened is the session's: {urls:?}"
        );
        assert!(
            !urls.iter().any(|u| u.ends_with("/stranger")),
            "another session's tab is not listed: {urls:?}"
        );
        let theirs = stranger.open_tabs().await.expect("tabs");
        assert_eq!(theirs.len(), 1, "{theirs:?}");
        let _ = stranger.close().await;
        let _ = first.close().await;
        let _ = second.close().await;
    });
}

/// A 16×16 PNG of one colour, for pictures a stylesheet draws.
fn png(rgb: [u8; 3]) -> Vec<u8> {
    let picture = image::RgbImage::from_pixel(16, 16, image::Rgb(rgb));
    let mut bytes = std::io::Cursor::new(Vec::new());
    picture
        .write_to(&mut bytes, image::ImageFormat::Png)
        .expect("encoding a PNG");
    bytes.into_inner()
}

/// Runs an action the way the agent does, against `state`.
async fn act(tab: &Tab, state: &PageState, action: serde_json::Value) -> serde_json::Value {
    let action = webagent::actions::Catalog::builtin()
        .parse(&action)
        .expect("a valid action");
    let result = webagent::browser::act::Executor::new(tab, Default::default())
        .execute(&action, Some(state))
        .await;
    assert!(result.is_ok(), "{result:?}");
    result.data().cloned().unwrap_or_default()
}

#[test]
fn controls_drawn_by_css_are_named_and_each_says_its_row() {
    let s = shared();
    for (name, rgb) in [
        ("reply", [200, 0, 0]),
        ("retweet", [0, 160, 0]),
        ("like", [0, 0, 200]),
        ("more", [90, 90, 90]),
    ] {
        s.server
            .page(&format!("/img/{name}.png"), "image/png", png(rgb));
    }
    // A feed whose classes are generated (they name nothing): each control
    // is known only by the picture its rule draws, in four ways CSS draws
    // one. Then a table whose per-row control is named by its class.
    let posts = [
        ("Jane Doe", "@jane", "Lunch at noon?"),
        ("Omar Quist", "@omar", "Shipping the release today"),
        ("Li Wei", "@liwei", "Who has the projector key?"),
    ];
    let mut feed = String::new();
    for (name, handle, body) in posts {
        feed.push_str(&format!(
            "<div class=\"css-8f2k1x\"><div><b>{name}</b> <span>{handle}</span></div><p>{body}</p>\
             <div class=\"css-a0b1c2\"><span class=\"css-r3p1y0\"></span><span class=\"css-rt9w33\"></span>\
             <span class=\"css-l1k3e7\"></span><span class=\"css-m0r3e1\"></span></div></div>"
        ));
    }
    let html = page(&format!(
        r#"<style>
        .css-a0b1c2 span{{display:inline-block;width:16px;height:16px;margin-right:8px;cursor:pointer}}
        .css-r3p1y0{{content:url(/img/reply.png)}}
        .css-rt9w33{{background-image:url("/img/retweet.png")}}
        .css-l1k3e7::before{{content:url(/img/like.png)}}
        .css-m0r3e1{{mask-image:url(/img/more.png);background:#555}}
        .trash-can{{display:inline-block;width:16px;height:16px;background:#c00}}
        </style>
        <nav><a href="/settings">Settings</a> <button>Help</button></nav>
        <button>Compose</button>
        <div class="feed">{feed}</div>
        <footer><a href="/settings">Settings</a> <button>Help</button></footer>
        <table><tr><td>#1041</td><td>Alice Moss</td><td><span class="trash-can" onclick="1"></span></td></tr>
        <tr><td>#1042</td><td>Bob Lane</td><td><span class="trash-can" onclick="1"></span></td></tr></table>"#
    ));
    with_page("/feed", &html, |tab| async move {
        let state = observe(&tab).await;
        for (_, handle, _) in posts {
            for control in ["reply", "retweet", "like", "more"] {
                let found = state.elements.iter().find(|e| {
                    e.attribute("name~") == Some(control)
                        && e.attribute("in").is_some_and(|row| row.contains(handle))
                });
                assert!(
                    found.is_some(),
                    "no {control} control tied to {handle}'s post in\n{}",
                    state.listing
                );
            }
        }
        for (order, customer) in [("#1041", "Alice Moss"), ("#1042", "Bob Lane")] {
            let row = format!("{order} {customer}");
            line_of(&state, |e| {
                e.attribute("name~") == Some("trash can") && e.attribute("in") == Some(row.as_str())
            });
        }
        // A control that appears once needs no row; nor do two links to
        // one address, nor a control repeated in two unlike regions.
        for plain in ["Compose", "Settings", "Help"] {
            for e in state.elements.iter().filter(|e| e.text == plain) {
                assert_eq!(e.attribute("in"), None, "{}", state.listing);
            }
        }
    });
}

#[test]
fn long_option_lists_are_listed_up_to_the_limit_and_the_rest_counted() {
    let options: String = (0..150)
        .map(|i| format!("<option>Country {i:03}</option>"))
        .collect();
    let chosen: String = (0..20)
        .map(|i| {
            let picked = if i == 3 || i == 17 { " selected" } else { "" };
            format!("<option{picked}>Land {i:02}</option>")
        })
        .collect();
    let roles: String = (0..30)
        .map(|i| format!("<li role=\"option\">Colour {i:02}</li>"))
        .collect();
    let html = page(&format!(
        "<select name=\"country\">{options}</select>\
         <select name=\"lands\" multiple size=\"4\">{chosen}</select>\
         <ul role=\"listbox\" aria-label=\"Colours\" style=\"height:60px;overflow-y:auto;margin:0\">{roles}</ul>"
    ));
    with_page("/options", &html, |tab| async move {
        let state = observe(&tab).await;
        let country = line_of(&state, |e| e.attribute("name") == Some("country"));
        let names: Vec<&str> = country.text.split(" | ").collect();
        assert_eq!(names.len(), 100, "{}", country.text);
        for (i, name) in names.iter().enumerate() {
            let expected = format!("Country {i:03}");
            let name = name.split(" (+").next().unwrap_or(name);
            assert_eq!(name, expected, "{}", country.text);
        }
        assert!(
            country
                .text
                .ends_with("Country 099 (+50 more; select_option takes any option's visible text)"),
            "{}",
            country.text
        );
        let lands = line_of(&state, |e| e.attribute("name") == Some("lands"));
        assert!(lands.text.contains("Land 19"), "{}", lands.text);
        assert_eq!(lands.attribute("value"), Some("Land 03 | Land 17"));
        // The listbox names the options scrolled out of its box.
        let colours = line_of(&state, |e| e.attribute("aria-label") == Some("Colours"));
        assert!(
            colours.text.starts_with("options not listed: ") && colours.text.contains("Colour 29"),
            "{}",
            state.listing
        );
        assert!(find(&state, "Colour 00").is_some(), "{}", state.listing);
        assert!(!colours.text.contains("Colour 00"), "{}", colours.text);
    });
}

#[test]
fn an_icon_inside_a_sentence_is_named_where_the_text_is_read() {
    let html = page(
        r#"<style>.ui-icon{display:inline-block;width:16px;height:16px;background:#333;text-indent:-9999px;overflow:hidden}</style>
        <p id="task">Find and click on the item with the <span class="ui-icon ui-icon-disk"></span> icon.</p>
        <ul role="menu">
          <li role="menuitem"><span class="ui-icon ui-icon-disk"></span>Keep</li>
          <li role="menuitem"><span class="ui-icon ui-icon-trash"></span>Drop</li>
        </ul>
        <button><i class="ui-icon fa-print"></i> Print</button>
        <button class="ui-icon-gear"></button>"#,
    );
    with_page("/icon-text", &html, |tab| async move {
        let state = observe(&tab).await;
        let text = &state.page_text.text;
        assert!(
            text.contains("Find and click on the item with the [icon: disk] icon."),
            "{text}"
        );
        // The same name in an element's text in the listing.
        line_of(&state, |e| e.text == "[icon: disk] Keep");
        line_of(&state, |e| e.text == "[icon: trash] Drop");
        // An icon that says what its words say adds nothing; an icon
        // button alone keeps its guessed name as an attribute.
        assert!(find(&state, "Print").is_some(), "{}", state.listing);
        line_of(&state, |e| {
            e.attribute("name~") == Some("gear") && e.text.is_empty()
        });
    });
}

#[test]
fn a_long_field_value_is_shown_and_read_back_exactly() {
    // 2,000 characters with quotes, a line break, runs of spaces and a
    // trailing space: everything a squeeze or a clip would lose.
    let mut value = String::from("Dear \"team\",\n  ");
    while value.chars().count() < 1_999 {
        value.push_str("we ship  on Friday. ");
    }
    let value: String = value.chars().take(1_999).collect::<String>() + " ";
    assert_eq!(value.chars().count(), 2_000);
    let longer: String = "x".repeat(2_100);
    let html = page(&format!(
        "<label>Notes <textarea name=\"notes\" rows=\"3\" cols=\"60\">\n{value}</textarea></label>\
         <input name=\"code\" value=\"{longer}\"><p>After the form</p>"
    ));
    with_page("/long-value", &html, |tab| async move {
        let state = observe(&tab).await;
        let notes = line_of(&state, |e| e.attribute("name") == Some("notes"));
        assert_eq!(notes.attribute("value"), Some(value.as_str()));
        assert_eq!(notes.attribute("value+"), None);
        let quoted = serde_json::to_string(&value).expect("a JSON string");
        assert!(
            state.listing.contains(&format!(" value={quoted}")),
            "{}",
            state.listing
        );
        let code = line_of(&state, |e| e.attribute("name") == Some("code"));
        assert_eq!(code.attribute("value").map(str::len), Some(2_000));
        assert!(
            state.listing.contains(&format!(
                "value=\"{}\" (+100 more characters)",
                "x".repeat(2_000)
            )),
            "{}",
            state.listing
        );
        // read_page carries the fields' values the same way, and leaves the
        // listing's indices valid.
        let read = act(&tab, &state, serde_json::json!({"read_page": {}})).await;
        let text = read["text"].as_str().unwrap_or_default();
        assert!(
            text.contains(&format!("Notes [textarea: {quoted}]")),
            "{text}"
        );
        assert!(text.contains("(+100 more characters)]"), "{text}");
        assert!(text.contains("After the form"), "{text}");
        act(
            &tab,
            &state,
            serde_json::json!({"click": {"index": notes.index.0}}),
        )
        .await;
    });
}
