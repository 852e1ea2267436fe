//! What the listing leaves out and what it keeps: hidden, transparent and
//! empty elements, what a modal, a sticky header or a fixed scrim covers,
//! disabled controls, shadow roots and frames of both origins, the kinds
//! of interactive element, and the star on what is new.

use webagent::browser::ObserveOptions;

use crate::listed::{find, texts};
use crate::support::chromium::shared;
use crate::support::pages::bare_page;
use crate::support::tab::{observe, with_page};

#[test]
fn hidden_transparent_and_empty_elements_are_not_listed() {
    let html = bare_page(
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
    with_page("/hidden", &html, |tab, _| async move {
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
    let html = bare_page(
        r#"<button>Behind</button>
        <div style="height:3000px"></div><button>FarBehind</button>
        <div style="position:fixed;inset:0;background:rgba(0,0,0,.5)">
          <div style="margin:100px auto;width:300px;background:#fff"><button>Confirm</button></div>
        </div>"#,
    );
    with_page("/modal", &html, |tab, _| async move {
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
    let html = bare_page(
        r#"<header style="position:sticky;top:0;height:120px;background:#eee;z-index:5"><a href="/home">Home</a></header>
        <div style="height:400px"></div>
        <button style="display:block;height:40px">UnderHeader</button>
        <button style="display:block;height:40px">Below</button>
        <div style="height:3000px"></div>"#,
    );
    with_page("/sticky", &html, |tab, _| async move {
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
    let html = bare_page(
        r#"<button disabled>Pay</button><fieldset disabled><input name="card" placeholder="Card"></fieldset>
        <label><input type="checkbox" name="terms" checked> I agree</label><select name="size"><option>S</option><option selected>M</option></select>"#,
    );
    with_page("/disabled", &html, |tab, _| async move {
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
        .html("/frame-inner", bare_page("<button>InFrame</button>"));
    // The same server under another host name is another origin.
    let other = format!("http://localhost:{}/frame-inner", s.server.addr().port());
    let html = bare_page(&format!(
        r#"<div id="host"></div>
        <iframe src="/frame-inner" width="300" height="100"></iframe>
        <iframe src="{other}" width="300" height="100"></iframe>
        <script>
          const root = document.getElementById('host').attachShadow({{mode:'open'}});
          root.innerHTML = '<button>InShadow</button><div id="deep"></div>';
          root.getElementById('deep').attachShadow({{mode:'open'}}).innerHTML = '<a href="/deep">Deeper</a>';
        </script>"#
    ));
    with_page("/frames", &html, |tab, _| async move {
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
    let html = bare_page(
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
    with_page("/kinds", &html, |tab, _| async move {
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
    let html = bare_page(r#"<button>Old</button><div id="slot"></div>"#);
    with_page("/new", &html, |tab, _| async move {
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
fn margin_elements_under_a_fixed_scrim_are_left_out() {
    let mut buttons = String::new();
    for i in 0..60 {
        buttons.push_str(&format!(
            "<button style=\"display:block;height:40px;margin:0\">B{i}</button>"
        ));
    }
    let html = bare_page(&format!(
        "{buttons}<div style=\"position:fixed;left:0;right:0;bottom:0;height:50vh;background:rgba(0,0,0,.5)\"><button>Close</button></div>"
    ));
    with_page("/scrim", &html, |tab, _| async move {
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
