//! The site in a real Chromium through webagent's own observer and
//! executor: the login page's fields, the refund dialog, every page
//! fitting the window, an order placed through the form, and the search
//! box filtering as one types.

use serde_json::json;
use webagent::browser::Tab;
use webagent::demo::{DEMO_EMAIL, DEMO_PASSWORD, FIRST_ORDER_ID};

use crate::client::{repo_file, site};
use crate::support::chromium::{runtime, shared};
use crate::support::tab::{act_ok, observe};

async fn sign_in_in_browser(tab: &Tab) {
    act_ok(
        tab,
        None,
        json!({"input_text": {"selector": "#email", "text": DEMO_EMAIL}}),
    )
    .await;
    act_ok(
        tab,
        None,
        json!({"input_text": {"selector": "#password", "text": DEMO_PASSWORD}}),
    )
    .await;
    act_ok(tab, None, json!({"click": {"selector": "#sign-in"}})).await;
}

#[test]
fn the_login_page_lists_its_fields_and_signing_in_reaches_the_dashboard() {
    let site = site();
    let session = &shared().session;
    let shots = repo_file("target/demo-screens");
    runtime().block_on(async {
        let tab = session
            .new_tab(&site.url("/"))
            .await
            .expect("opening the demo");
        let state = observe(&tab).await;
        assert!(state.url.ends_with("/login"), "{}", state.url);
        let email = state
            .elements
            .iter()
            .find(|e| e.tag == "input" && e.attribute("type") == Some("email"));
        let password = state
            .elements
            .iter()
            .find(|e| e.tag == "input" && e.attribute("type") == Some("password"));
        let button = state
            .elements
            .iter()
            .find(|e| e.tag == "button" && e.text == "Sign in");
        assert!(
            email.is_some() && password.is_some() && button.is_some(),
            "{}",
            state.listing
        );

        sign_in_in_browser(&tab).await;
        let state = observe(&tab).await;
        assert!(state.url.ends_with("/dashboard"), "{}", state.url);
        assert!(state.title.starts_with("Dashboard"), "{}", state.title);
        assert!(state.listing.contains("New order"), "{}", state.listing);

        std::fs::create_dir_all(&shots).expect("making the screenshot dir");
        let file = shots.join("dashboard.png");
        act_ok(
            &tab,
            None,
            json!({"screenshot": {"path": file.to_string_lossy(), "full_page": false}}),
        )
        .await;
        let png = std::fs::read(&file).expect("the screenshot was written");
        assert!(
            png.starts_with(b"\x89PNG") && png.len() > 20_000,
            "{} bytes",
            png.len()
        );
        let _ = tab.close().await;
    });
}

#[test]
fn refunding_in_the_browser_goes_through_the_in_page_dialog() {
    let site = site();
    let session = &shared().session;
    let shots = repo_file("target/demo-screens");
    runtime().block_on(async {
        let tab = session.new_tab(&site.url("/orders?status=shipped")).await.expect("opening the demo");
        sign_in_in_browser(&tab).await;
        let state = observe(&tab).await;
        assert!(state.url.contains("/orders?status=shipped"), "back where it started: {}", state.url);
        let first = state
            .elements
            .iter()
            .find(|e| {
                e.attribute("href")
                    .and_then(|h| h.strip_prefix("/orders/"))
                    .is_some_and(|id| id.parse::<u32>().is_ok())
            })
            .unwrap_or_else(|| panic!("no order link: {}", state.listing));
        let order_path = first.attribute("href").unwrap_or_default().to_string();
        act_ok(&tab, Some(&state), json!({"click": {"index": first.index.0}})).await;

        let state = observe(&tab).await;
        assert!(state.url.ends_with(&order_path), "{} is not {order_path}", state.url);
        act_ok(&tab, None, json!({"click": {"selector": "#refund-order"}})).await;
        let state = observe(&tab).await;
        assert!(state.listing.contains("Yes, refund"), "dialog shown: {}", state.listing);
        std::fs::create_dir_all(&shots).expect("making the screenshot dir");
        act_ok(&tab, None, json!({"screenshot": {"path": shots.join("refund-dialog.png").to_string_lossy(), "full_page": false}})).await;

        act_ok(&tab, None, json!({"click": {"selector": "#confirm-yes"}})).await;
        let state = observe(&tab).await;
        assert!(state.page_text.text.contains("Refund issued"), "{}", state.page_text.text);
        assert!(state.listing.contains("Refund"), "{}", state.listing);
        let refund = state.elements.iter().find(|e| e.attribute("id") == Some("refund-order"));
        assert!(
            refund.is_none_or(|e| e.attribute("disabled").is_some()),
            "refund is no longer offered: {}",
            state.listing
        );
        let _ = tab.close().await;
    });
}

#[test]
fn every_page_fits_the_window_and_has_its_title() {
    let site = site();
    let session = &shared().session;
    let shots = repo_file("target/demo-screens");
    std::fs::create_dir_all(&shots).expect("making the screenshot dir");
    runtime().block_on(async {
        let tab = session
            .new_tab(&site.url("/login"))
            .await
            .expect("opening the demo");
        let login = shots.join("login.png");
        act_ok(
            &tab,
            None,
            json!({"screenshot": {"path": login.to_string_lossy(), "full_page": false}}),
        )
        .await;
        sign_in_in_browser(&tab).await;
        let order = format!("/orders/{}", FIRST_ORDER_ID + 5);
        let tour = [
            ("/orders", "Orders"),
            ("/orders?status=paid&q=a", "Orders"),
            ("/orders/new", "New order"),
            (order.as_str(), "Order #1006"),
            ("/settings", "Settings"),
            ("/settings/profile", "Profile"),
            ("/settings/team", "Team"),
            ("/settings/billing", "Billing"),
            ("/settings/api-keys", "API keys"),
        ];
        for (path, title) in tour {
            act_ok(&tab, None, json!({"navigate": {"url": path}})).await;
            let state = observe(&tab).await;
            assert_eq!(state.title, format!("{title} · Acme"), "{path}");
            let fits = tab
                .eval("document.documentElement.scrollWidth <= window.innerWidth")
                .await
                .expect("measuring the page");
            assert_eq!(fits, json!(true), "{path} scrolls sideways");
            let name = path
                .trim_start_matches('/')
                .replace(['/', '?', '&', '='], "_");
            let file = shots.join(format!("{name}.png"));
            act_ok(
                &tab,
                None,
                json!({"screenshot": {"path": file.to_string_lossy(), "full_page": false}}),
            )
            .await;
        }
        let _ = tab.close().await;
    });
}

#[test]
fn an_order_placed_through_the_form_opens_its_detail_page() {
    let site = site();
    let session = &shared().session;
    runtime().block_on(async {
        let tab = session
            .new_tab(&site.url("/orders/new"))
            .await
            .expect("opening the demo");
        sign_in_in_browser(&tab).await;
        let state = observe(&tab).await;
        assert!(state.url.ends_with("/orders/new"), "{}", state.url);

        // Submitting empty shows every problem at once and keeps the page.
        act_ok(&tab, None, json!({"click": {"selector": "#create-order"}})).await;
        let state = observe(&tab).await;
        assert!(
            state.page_text.text.contains("Enter the customer's name."),
            "{}",
            state.page_text.text
        );

        act_ok(
            &tab,
            None,
            json!({"input_text": {"selector": "#customer", "text": "Mary Jackson"}}),
        )
        .await;
        act_ok(
            &tab,
            None,
            json!({"select_option": {"selector": "#product", "text": "USB-C dock — $89.50"}}),
        )
        .await;
        act_ok(
            &tab,
            None,
            json!({"input_text": {"selector": "#quantity", "text": "3"}}),
        )
        .await;
        act_ok(
            &tab,
            None,
            json!({"input_text": {"selector": "#notes", "text": "Gift wrap, please"}}),
        )
        .await;
        act_ok(&tab, None, json!({"click": {"selector": "#create-order"}})).await;
        let state = observe(&tab).await;
        let expected = format!("/orders/{}?notice=created", FIRST_ORDER_ID + 25);
        assert!(state.url.ends_with(&expected), "{}", state.url);
        let text = &state.page_text.text;
        for shown in [
            "Order created.",
            "Mary Jackson",
            "USB-C dock",
            "$268.50",
            "Gift wrap, please",
            "Pending",
        ] {
            assert!(text.contains(shown), "{shown} missing from: {text}");
        }
        let _ = tab.close().await;
    });
}

#[test]
fn typing_in_the_search_box_filters_the_list_at_once() {
    let site = site();
    let session = &shared().session;
    runtime().block_on(async {
        let tab = session
            .new_tab(&site.url("/orders"))
            .await
            .expect("opening the demo");
        sign_in_in_browser(&tab).await;
        act_ok(
            &tab,
            None,
            json!({"input_text": {"selector": "#order-search", "text": "hopper"}}),
        )
        .await;
        let state = observe(&tab).await;
        assert!(
            state.url.ends_with("/orders"),
            "not submitted: {}",
            state.url
        );
        let order_links: Vec<&str> = state
            .elements
            .iter()
            .filter_map(|e| e.attribute("href"))
            .filter(|h| {
                h.strip_prefix("/orders/")
                    .is_some_and(|id| id.parse::<u32>().is_ok())
            })
            .collect();
        assert_eq!(
            order_links,
            [format!("/orders/{}", FIRST_ORDER_ID + 1)],
            "{}",
            state.listing
        );
        assert!(
            state.page_text.text.contains("1 order"),
            "{}",
            state.page_text.text
        );
        let _ = tab.close().await;
    });
}
