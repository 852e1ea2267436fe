//! The mouse beyond a click: hover, scrolling the page and a container,
//! drag and drop onto HTML5 handlers and pointer-driven sliders, and
//! sortable lists reordered by dragging.

use serde_json::json;
use webagent::actions::{ActionResult, FailureReason};
use webagent::browser::Tab;

use crate::readback::{index_of, page_js, seen};
use crate::support::pages::seen_page;
use crate::support::tab::{
    act, act_on, assert_ok, failure, observe, quick_options, with_page_in_front,
};

#[test]
fn hover_moves_the_mouse_onto_the_element() {
    let html = seen_page(
        r#"<div id="menu" style="width:120px;height:40px;background:#ddd" onmouseenter="seen.push('enter')">Menu</div>"#,
    );
    with_page_in_front("/hover", &html, |tab, _| async move {
        assert_ok(&act(&tab, json!({"hover": {"selector": "#menu"}})).await);
        assert_eq!(seen(&tab).await, vec!["enter"]);
    });
}

#[test]
fn scroll_moves_the_page_and_a_nested_container() {
    let mut rows = String::new();
    for i in 0..60 {
        rows.push_str(&format!("<p style='margin:0;height:30px'>Row {i}</p>"));
    }
    let html = seen_page(&format!(
        r#"<div id="box" style="height:150px;overflow:auto;border:1px solid">{rows}</div>
        <div style="height:3000px"></div>"#
    ));
    with_page_in_front("/scroll", &html, |tab, _| async move {
        let result = act(
            &tab,
            json!({"scroll": {"direction": "down", "selector": "#box"}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(page_js(&tab, "box.scrollTop").await, json!(150));
        assert_eq!(
            page_js(&tab, "scrollY").await,
            json!(0),
            "the page moved too"
        );
        let result = act(&tab, json!({"scroll": {"direction": "down", "pages": 2}})).await;
        assert_ok(&result);
        let height = page_js(&tab, "innerHeight").await.as_f64().unwrap_or(0.0);
        assert_eq!(page_js(&tab, "scrollY").await.as_f64(), Some(height * 2.0));
        assert_ok(&act(&tab, json!({"scroll": {"direction": "up", "pages": 10}})).await);
        assert_eq!(page_js(&tab, "scrollY").await, json!(0));
    });
}

#[test]
fn scroll_to_brings_a_far_element_into_view() {
    let html = seen_page(r#"<div style="height:4000px"></div><p id="far">Far away</p>"#);
    with_page_in_front("/scrollto", &html, |tab, _| async move {
        assert_ok(&act(&tab, json!({"scroll_to": {"selector": "#far"}})).await);
        let top = page_js(&tab, "far.getBoundingClientRect().top")
            .await
            .as_f64()
            .unwrap_or(-1.0);
        let height = page_js(&tab, "innerHeight").await.as_f64().unwrap_or(0.0);
        assert!(top >= 0.0 && top < height, "top {top} of {height}");
    });
}

#[test]
fn drag_and_drop_reaches_html5_drop_handlers() {
    let html = seen_page(
        r#"<div id="card" draggable="true" style="width:80px;height:40px;background:#9cf">Card</div>
        <div id="bin" style="margin-top:100px;width:200px;height:100px;background:#fc9">Bin</div>
        <script>
          card.addEventListener('dragstart', (e) => e.dataTransfer.setData('text/plain', 'card-1'));
          bin.addEventListener('dragover', (e) => e.preventDefault());
          bin.addEventListener('drop', (e) => { e.preventDefault(); seen.push('drop:' + e.dataTransfer.getData('text/plain')); });
        </script>"#,
    );
    with_page_in_front("/dnd", &html, |tab, _| async move {
        let result = act(
            &tab,
            json!({"drag_and_drop": {"from": {"selector": "#card"}, "to": {"selector": "#bin"}}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(seen(&tab).await, vec!["drop:card-1"]);
        assert_eq!(result.data().expect("data")["mode"], json!("html5"));
    });
}

#[test]
fn drag_and_drop_moves_a_pointer_driven_slider() {
    let html = seen_page(
        r#"<div id="track" style="position:relative;width:400px;height:20px;background:#eee;margin:40px">
          <div id="knob" style="position:absolute;left:0;top:0;width:20px;height:20px;background:#36c"></div></div>
        <div id="end" style="position:absolute;left:340px;top:40px;width:20px;height:20px"></div>
        <script>
          let dragging = false;
          knob.addEventListener('mousedown', () => { dragging = true; });
          addEventListener('mousemove', (e) => { if (dragging) { knob.style.left = (e.clientX - 50) + 'px'; seen.push('move'); } });
          addEventListener('mouseup', () => { if (dragging) seen.push('up'); dragging = false; });
        </script>"#,
    );
    with_page_in_front("/slider", &html, |tab, _| async move {
        let result = act(
            &tab,
            json!({"drag_and_drop": {"from": {"selector": "#knob"}, "to": {"selector": "#end"}}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(result.data().expect("data")["mode"], json!("mouse"));
        let log = seen(&tab).await;
        assert!(log.iter().filter(|e| *e == "move").count() >= 3, "{log:?}");
        assert_eq!(log.last().map(String::as_str), Some("up"));
        let left = page_js(&tab, "parseFloat(knob.style.left)")
            .await
            .as_f64()
            .unwrap_or(0.0);
        assert!(left > 250.0, "the knob only got to {left}");
    });
}

/// A sortable list in the style of jQuery UI: one mousedown listener on the
/// list, and the dragged item trades places with a neighbour only once the
/// pointer passes that neighbour's midpoint.
const MOUSE_SORTABLE: &str = r#"<ul id="list" style="list-style:none;margin:20px;padding:0;width:200px">
  <li class="item" style="height:40px;background:#eee;margin:2px 0;cursor:default">Alpha</li>
  <li class="item" style="height:40px;background:#ddd;margin:2px 0;cursor:default">Bravo</li>
  <li class="item" style="height:40px;background:#ccc;margin:2px 0;cursor:default">Charlie</li>
  <li class="item" style="height:40px;background:#bbb;margin:2px 0;cursor:default">Delta</li>
</ul>
<script>
  const order = () => Array.from(list.children).map((li) => li.textContent.trim()).join(',');
  let held = null;
  list.addEventListener('mousedown', (e) => { held = e.target.closest('li'); e.preventDefault(); });
  addEventListener('mousemove', (e) => {
    if (!held) return;
    for (const other of list.children) {
      if (other === held) continue;
      const r = other.getBoundingClientRect();
      if (e.clientX < r.left || e.clientX > r.right || e.clientY < r.top || e.clientY > r.bottom) continue;
      const mid = r.top + r.height / 2;
      const heldIsAbove = held.compareDocumentPosition(other) & Node.DOCUMENT_POSITION_FOLLOWING;
      if (heldIsAbove && e.clientY > mid) other.after(held);
      else if (!heldIsAbove && e.clientY < mid) other.before(held);
    }
  });
  addEventListener('mouseup', () => { if (held) seen.push(order()); held = null; });
</script>"#;

/// The same list with HTML5 drag and drop (`draggable=true`), reordering on
/// dragover past the midpoint.
const HTML5_SORTABLE: &str = r#"<ul id="list" style="list-style:none;margin:20px;padding:0;width:200px">
  <li draggable="true" style="height:40px;background:#eee;margin:2px 0">Alpha</li>
  <li draggable="true" style="height:40px;background:#ddd;margin:2px 0">Bravo</li>
  <li draggable="true" style="height:40px;background:#ccc;margin:2px 0">Charlie</li>
  <li draggable="true" style="height:40px;background:#bbb;margin:2px 0">Delta</li>
</ul>
<script>
  let dragged = null;
  list.addEventListener('dragstart', (e) => { dragged = e.target.closest('li'); e.dataTransfer.setData('text/plain', 'x'); });
  list.addEventListener('dragover', (e) => {
    e.preventDefault();
    const over = e.target.closest && e.target.closest('li');
    if (!dragged || !over || over === dragged) return;
    const r = over.getBoundingClientRect();
    const below = dragged.compareDocumentPosition(over) & Node.DOCUMENT_POSITION_FOLLOWING;
    if (below && e.clientY > r.top + r.height / 2) over.after(dragged);
    else if (!below && e.clientY < r.top + r.height / 2) over.before(dragged);
  });
  list.addEventListener('drop', (e) => e.preventDefault());
</script>"#;

async fn list_order(tab: &Tab) -> String {
    page_js(
        tab,
        "Array.from(document.querySelectorAll('#list li')).map((li) => li.textContent.trim()).join(',')",
    )
    .await
    .as_str()
    .unwrap_or_default()
    .to_string()
}

/// Drags the item named `from` onto the item named `to`, both by their
/// listed index.
async fn drag_item(tab: &Tab, from: &str, to: &str) -> ActionResult {
    let state = observe(tab).await;
    let action = json!({"drag_and_drop": {
        "from": {"index": index_of(&state, from)},
        "to": {"index": index_of(&state, to)},
    }});
    act_on(tab, &state, action, quick_options()).await
}

#[test]
fn a_mouse_sortable_list_is_reordered_down_and_up_by_index() {
    with_page_in_front(
        "/sortable-mouse",
        &seen_page(MOUSE_SORTABLE),
        |tab, _| async move {
            // The items are numbered although only the list has a listener.
            let down = drag_item(&tab, "Alpha", "Charlie").await;
            assert_ok(&down);
            assert_eq!(list_order(&tab).await, "Bravo,Charlie,Alpha,Delta");
            let said = down.data().expect("data")["order"].to_string();
            assert!(said.contains("position 1 to 3"), "{said}");
            let up = drag_item(&tab, "Delta", "Bravo").await;
            assert_ok(&up);
            assert_eq!(list_order(&tab).await, "Delta,Bravo,Charlie,Alpha");
            // By selector: `li:nth-child(1)` names another item once the
            // list reordered; the check follows the dragged one.
            let by_selector = act(
                &tab,
                json!({"drag_and_drop": {
                    "from": {"selector": "#list li:nth-child(1)"},
                    "to": {"selector": "#list li:nth-child(3)"},
                }}),
            )
            .await;
            assert_ok(&by_selector);
            assert_eq!(list_order(&tab).await, "Bravo,Charlie,Delta,Alpha");
        },
    );
}

#[test]
fn an_html5_sortable_list_is_reordered_down_and_up() {
    with_page_in_front(
        "/sortable-html5",
        &seen_page(HTML5_SORTABLE),
        |tab, _| async move {
            let down = drag_item(&tab, "Bravo", "Delta").await;
            assert_ok(&down);
            assert_eq!(down.data().expect("data")["mode"], json!("html5"));
            assert_eq!(list_order(&tab).await, "Alpha,Charlie,Delta,Bravo");
            let up = drag_item(&tab, "Delta", "Alpha").await;
            assert_ok(&up);
            assert_eq!(list_order(&tab).await, "Delta,Alpha,Charlie,Bravo");
        },
    );
}

#[test]
fn a_list_that_ignores_the_drag_is_reported_as_not_reordered() {
    let html = seen_page(
        r#"<ul id="list" style="list-style:none;padding:0;width:200px">
        <li class="i" style="height:40px">One</li><li class="i" style="height:40px">Two</li><li class="i" style="height:40px">Three</li></ul>
        <script>list.addEventListener('mousedown', () => {});</script>"#,
    );
    with_page_in_front("/sortable-inert", &html, |tab, _| async move {
        let result = drag_item(&tab, "One", "Three").await;
        let (reason, message) = failure(&result);
        assert_eq!(reason, FailureReason::NotInteractive);
        assert!(message.contains("did not reorder"), "{message}");
    });
}
