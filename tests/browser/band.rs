//! Long pages: the viewport band that is listed and the count of what was
//! left out, long tables, fixed widgets far away, stray fixed widgets
//! before the first frame, fields in table cells, and an inner scroll
//! area on the whole page.

use webagent::browser::{ObserveOptions, Tab};

use crate::listed::find;
use crate::support::pages::bare_page;
use crate::support::tab::{observe, with_page};

#[test]
fn a_long_page_lists_the_viewport_band_and_counts_what_was_left_out() {
    let mut items = String::new();
    for i in 0..3000 {
        items.push_str(&format!("<li><a href=\"#i{i}\">item {i}</a></li>"));
    }
    let html = bare_page(&format!("<ul>{items}</ul>"));
    with_page("/long", &html, |tab, _| async move {
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
    let html = bare_page(&format!(
        "<table><tr><td>moved</td><td style=\"position:absolute;top:6000px;cursor:pointer\" onclick=\"1\">far cell</td></tr>{rows}</table>"
    ));
    with_page("/long-table", &html, |tab, _| async move {
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
    let html = bare_page(&format!(
        r#"<main>{items}</main>
        <footer><p>Footer</p><button style="position:fixed;right:8px;bottom:8px;width:60px;height:40px">Chat</button></footer>"#
    ));
    with_page("/stray-fixed", &html, |tab, _| async move {
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
    let html = bare_page(&format!(
        r#"<main>{items}</main>
        <footer><p>Footer</p>
          <div><button style="position:fixed;right:8px;bottom:8px;width:60px;height:40px">Chat</button></div>
          <div style="display:none"><button style="position:fixed;left:8px;bottom:8px">Hidden</button></div>
          <span style="position:fixed;left:300px;top:300px"><button>Elsewhere</button></span>
        </footer>"#
    ));
    with_page("/stray-by-style", &html, |tab, _| async move {
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
    let html = bare_page(&format!(
        r#"<main style="height:3000px">top</main><footer>{rows}
        <button style="position:fixed;right:8px;bottom:8px;width:60px;height:40px">Chat</button></footer>"#
    ));
    with_page("/stray-many", &html, |tab, _| async move {
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
    let html = bare_page(&format!(
        r#"<table>{rows}</table>
        <div style="position:absolute;left:0;top:0;width:100%;height:40px;background:#fff"></div>"#
    ));
    with_page("/cell-fields", &html, |tab, _| async move {
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
fn the_whole_page_lists_the_links_of_an_inner_scroll_area() {
    let mut links = String::new();
    for i in 0..120 {
        links.push_str(&format!("<li><a href=\"/ch{i}\">Chapter {i}</a></li>"));
    }
    let html = bare_page(&format!(
        "<nav style=\"position:fixed;left:0;top:0;bottom:0;width:250px\"><div style=\"position:absolute;inset:0;overflow-y:auto\"><ol>{links}</ol></div></nav>\
         <main style=\"margin-left:260px\"><p>Intro</p></main>"
    ));
    with_page("/book", &html, |tab, _| async move {
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
            .filter(|e| e.tag == "a" && e.text.starts_with("Chapter "))
            .count();
        assert_eq!(chapters, 120, "{}", state.listing);
    });
}
