//! A page taller than its body: `html, body { height: 100% }` with content
//! that overflows the body's box, as admin frameworks and app shells have
//! it. Scrolled down, what shows lies outside the body's own box, and the
//! listing and the page text still hold it.

use webagent::browser::Tab;
use webagent::dom::PageState;

use crate::listed::find;
use crate::support::pages::document;
use crate::support::tab::{observe, with_page};

/// A list of 120 orders, one 32 px row each, and a paginator at its end,
/// in a body one viewport high.
fn orders_page() -> String {
    let mut rows = String::new();
    for n in 1..=120 {
        rows.push_str(&format!(
            "<tr data-n=\"{n}\"><td><a href=\"/orders/{n}/\">Order {n}</a></td><td>Customer {n}</td></tr>"
        ));
    }
    document(
        "Orders",
        "<style>html,body{height:100%;margin:0;font:16px sans-serif}tr{height:32px}</style>",
        &format!(
            "<div id=\"container\"><h1>Orders</h1><table>{rows}</table>\
             <p class=\"paginator\"><a href=\"?p=1\">1</a> <a href=\"?p=2\">2</a> <a href=\"?p=2\">Next</a></p></div>"
        ),
    )
}

/// The numbers of the rows wholly inside the viewport now.
async fn rows_in_view(tab: &Tab) -> Vec<u64> {
    let rows = tab
        .eval(
            "Array.from(document.querySelectorAll('tr')).filter((r) => { \
               const b = r.getBoundingClientRect(); return b.top >= 0 && b.bottom <= innerHeight; \
             }).map((r) => Number(r.dataset.n))",
        )
        .await
        .expect("reading the rows in view");
    serde_json::from_value(rows).expect("row numbers")
}

fn assert_rows_listed(state: &PageState, rows: &[u64], viewports: u32) {
    assert!(
        rows.len() >= 10,
        "{viewports} viewports down: rows in view {rows:?}"
    );
    for n in rows {
        let order = format!("Order {n}");
        assert!(
            find(state, &order).is_some(),
            "{viewports} viewports down: {order} is in view but not listed:\n{}",
            state.listing
        );
        assert!(
            state.page_text.text.contains(&format!("Customer {n}")),
            "{viewports} viewports down: Customer {n} is not in the page text:\n{}",
            state.page_text.text
        );
    }
}

#[test]
fn a_body_of_one_viewport_lists_what_overflows_it_when_scrolled_down() {
    with_page("/tall-body", &orders_page(), |tab, _| async move {
        for viewports in [2, 3, 4] {
            tab.eval(&format!(
                "window.scrollTo(0, {viewports} * innerHeight); window.scrollY"
            ))
            .await
            .expect("scrolling");
            let state = observe(&tab).await;
            assert!(
                state.scroll.pages_above() > 1.5,
                "{viewports} viewports down: {:?}",
                state.scroll
            );
            assert!(
                !state.listing.contains("(no interactive elements in view)"),
                "{viewports} viewports down:\n{}",
                state.listing
            );
            assert_rows_listed(&state, &rows_in_view(&tab).await, viewports);
            // What lies above the band is left out and said to be.
            assert!(
                state.listing.contains("page sections above not listed"),
                "{}",
                state.listing
            );
            if viewports == 4 {
                // Near the end of the page: the paginator, and nothing
                // below left out.
                for page in ["1", "2", "Next"] {
                    assert!(
                        find(&state, page).is_some(),
                        "the paginator's {page:?} is not listed:\n{}",
                        state.listing
                    );
                }
                assert!(
                    !state.listing.contains("below not listed"),
                    "{}",
                    state.listing
                );
            }
        }
        // At the very end: the last rows and the paginator, and the
        // listing says the page ends there.
        tab.eval("window.scrollTo(0, document.documentElement.scrollHeight); window.scrollY")
            .await
            .expect("scrolling to the end");
        let state = observe(&tab).await;
        assert!(find(&state, "Order 120").is_some(), "{}", state.listing);
        assert!(find(&state, "Next").is_some(), "{}", state.listing);
        assert!(
            state.listing.ends_with("[end of page]\n"),
            "{}",
            state.listing
        );
    });
}
