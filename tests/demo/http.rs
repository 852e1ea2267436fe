//! The site over plain HTTP, as a person's browser without script meets
//! it: sign-in and gates, the sitemap's pages, order rules (refund after
//! shipping, cancel before), filters, settings, escaping, unique ids, and
//! the server's own start and stop.

use std::net::TcpStream;

use webagent::demo::{
    DemoSite, DEMO_EMAIL, DEMO_PASSWORD, FIRST_ORDER_ID, MEMBER_EMAIL, PAGE_PATHS,
};
use webagent::sitemap::Sitemap;

use crate::client::{repo_file, site, Client};
use crate::support::chromium::runtime;

#[test]
fn signing_in_with_the_shown_credentials_returns_to_the_gated_page() {
    let site = site();
    let mut client = Client::new(&site);

    let root = client.get("/");
    assert_eq!((root.status, root.location()), (303, "/login"));

    let gated = client.get("/orders?status=paid");
    assert_eq!(gated.status, 303);
    assert_eq!(gated.location(), "/login?next=%2Forders%3Fstatus%3Dpaid");

    let login = client.get(gated.location());
    assert_eq!(login.status, 200);
    assert!(login.body.contains(DEMO_EMAIL), "credentials are shown");
    assert!(login
        .body
        .contains(r#"name="next" value="/orders?status=paid""#));

    let wrong = client.post(
        "/login",
        &[
            ("email", DEMO_EMAIL),
            ("password", "nope"),
            ("next", "/orders"),
        ],
    );
    assert_eq!(wrong.status, 401);
    assert!(wrong.body.contains("Wrong email or password"));
    assert!(
        wrong.body.contains(&format!(r#"value="{DEMO_EMAIL}""#)),
        "email kept"
    );
    assert!(client.cookie.is_none());

    let ok = client.post(
        "/login",
        &[
            ("email", DEMO_EMAIL),
            ("password", DEMO_PASSWORD),
            ("next", "/orders?status=paid"),
        ],
    );
    assert_eq!((ok.status, ok.location()), (303, "/orders?status=paid"));
    let orders = client.get("/orders?status=paid");
    assert_eq!(orders.status, 200);
    assert!(orders.body.contains("Ada Admin"), "signed-in user shown");

    assert_eq!(client.get("/").location(), "/dashboard");
    assert_eq!(client.get("/login").location(), "/dashboard");

    let out = client.post("/logout", &[]);
    assert_eq!((out.status, out.location()), (303, "/login"));
    assert_eq!(client.get("/dashboard").status, 303, "signed out again");
}

#[test]
fn next_never_leaves_the_site() {
    let site = site();
    let mut client = Client::new(&site);
    for next in [
        "//evil.test/x",
        "https://evil.test",
        "/\\evil.test",
        "/login",
    ] {
        let reply = client.post(
            "/login",
            &[
                ("email", DEMO_EMAIL),
                ("password", DEMO_PASSWORD),
                ("next", next),
            ],
        );
        assert_eq!(reply.location(), "/dashboard", "next={next}");
    }
}

#[test]
fn every_sitemap_page_exists_and_every_gate_holds() {
    let sitemap = Sitemap::load(&repo_file("sitemaps/acme.yaml")).expect("loading acme.yaml");
    let site = site();
    let mut anonymous = Client::new(&site);
    let mut admin = Client::new(&site);
    admin.sign_in(DEMO_EMAIL);
    let mut member = Client::new(&site);
    member.sign_in(MEMBER_EMAIL);
    let order = FIRST_ORDER_ID.to_string();

    let mut checked = 0;
    for page in sitemap.pages().filter(|p| p.pattern != "/") {
        let path = page.pattern.replace(":id", &order);
        let signed_out = anonymous.get(&path);
        if page.gated {
            assert_eq!(signed_out.status, 303, "{path} is not gated");
            let expected = format!(
                "/login?next={}",
                url::form_urlencoded::byte_serialize(path.as_bytes()).collect::<String>()
            );
            assert_eq!(signed_out.location(), expected);
        } else {
            assert_eq!(signed_out.status, 200, "{path} should be public");
        }
        let as_admin = admin.get(&path);
        let as_member = member.get(&path);
        if path == "/login" {
            // Signed in already: the sign-in page sends you on.
            assert_eq!((as_admin.status, as_admin.location()), (303, "/dashboard"));
            assert_eq!(
                (as_member.status, as_member.location()),
                (303, "/dashboard")
            );
        } else {
            assert_eq!(as_admin.status, 200, "{path} as admin: {}", as_admin.body);
            let expected = if page.node.requires_admin { 403 } else { 200 };
            assert_eq!(as_member.status, expected, "{path} as a member");
        }
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} pages in the sitemap");

    // And the other way round: every page the app serves is in the sitemap.
    for path in PAGE_PATHS {
        let resolved = sitemap
            .resolve(&path.replace(":id", &order))
            .unwrap_or_else(|| panic!("{path} is missing from acme.yaml"));
        assert_eq!(resolved.pattern, *path);
    }
}

#[test]
fn a_new_order_redirects_to_its_detail_and_escapes_what_was_typed() {
    let site = site();
    let mut client = Client::new(&site);
    client.sign_in(DEMO_EMAIL);

    let form = client.get("/orders/new");
    assert!(form.body.contains(r#"name="customer""#) && form.body.contains("Mechanical keyboard"));

    let refused = client.post(
        "/orders/new",
        &[("customer", ""), ("product", ""), ("quantity", "0")],
    );
    assert_eq!(refused.status, 422);
    assert!(refused.body.contains("Enter the customer&#39;s name."));
    assert!(refused
        .body
        .contains("Quantity must be a whole number from 1 to 99."));

    let id = client.create_order("<script>alert(1)</script> Ltd");
    assert_eq!(id, FIRST_ORDER_ID + 25, "numbers continue after the seed");
    let detail = client.get(&format!("/orders/{id}?notice=created"));
    assert_eq!(detail.status, 200);
    assert!(detail.body.contains("Order created."));
    assert!(detail
        .body
        .contains("&lt;script&gt;alert(1)&lt;/script&gt; Ltd"));
    assert!(
        !detail.body.contains("<script>alert(1)"),
        "user text is escaped"
    );
    assert!(detail.body.contains("$258.00"), "2 × $129.00");
    assert_eq!(detail.order_status(), "pending");

    let listed = client.get("/orders");
    assert_eq!(listed.order_ids().first(), Some(&id), "newest first");
}

#[test]
fn refund_needs_the_order_shipped_first_and_asks_before_refunding() {
    let site = site();
    let mut client = Client::new(&site);
    client.sign_in(DEMO_EMAIL);
    let id = client.create_order("Refund Tester");
    let path = format!("/orders/{id}");

    let detail = client.get(&path);
    assert!(
        detail
            .body
            .contains(r#"id="refund-order" data-testid="refund-order" disabled"#),
        "refund is disabled before shipping"
    );
    assert!(detail
        .body
        .contains("Refunds are available once the order has shipped."));

    let early = client.post(&path, &[("op", "refund"), ("confirm", "yes")]);
    assert_eq!(early.status, 409);
    assert!(early.body.contains("Refund was refused"));
    assert_eq!(early.order_status(), "pending");

    let shipped = client.post(&path, &[("op", "ship")]);
    assert_eq!(shipped.location(), format!("{path}?notice=ship"));
    let detail = client.get(&path);
    assert_eq!(detail.order_status(), "shipped");
    assert!(detail
        .body
        .contains(r#"data-confirm-title="Refund this order?""#));

    // Posting without the confirmation step gets the step, not the refund.
    let ask = client.post(&path, &[("op", "refund")]);
    assert_eq!(ask.status, 200);
    assert!(
        ask.body.contains("Please confirm")
            && ask.body.contains("Refund $258.00 to Refund Tester?")
    );
    assert_eq!(client.get(&path).order_status(), "shipped");

    let refunded = client.post(&path, &[("op", "refund"), ("confirm", "yes")]);
    assert_eq!(refunded.status, 303);
    let detail = client.get(&path);
    assert_eq!(detail.order_status(), "refunded");
    assert!(detail
        .body
        .contains("This order has already been refunded."));
}

#[test]
fn cancel_works_only_before_shipping() {
    let site = site();
    let mut client = Client::new(&site);
    client.sign_in(DEMO_EMAIL);

    let open = client.create_order("Cancel Before");
    let done = client.post(
        &format!("/orders/{open}"),
        &[("op", "cancel"), ("confirm", "yes")],
    );
    assert_eq!(done.status, 303);
    let detail = client.get(&format!("/orders/{open}"));
    assert_eq!(detail.order_status(), "cancelled");
    assert!(detail.body.contains("Cancelled orders cannot be shipped."));

    let sent = client.create_order("Cancel After");
    client.post(&format!("/orders/{sent}"), &[("op", "ship")]);
    let late = client.post(
        &format!("/orders/{sent}"),
        &[("op", "cancel"), ("confirm", "yes")],
    );
    assert_eq!(late.status, 409);
    assert!(late
        .body
        .contains("Shipped orders cannot be cancelled; refund them instead."));
    assert_eq!(late.order_status(), "shipped");
}

#[test]
fn the_orders_list_filters_by_status_and_search() {
    let site = site();
    let mut client = Client::new(&site);
    client.sign_in(DEMO_EMAIL);

    let all = client.get("/orders");
    assert_eq!(all.order_ids().len(), 25);
    assert!(all.body.contains("25 orders"));

    let shipped = client.get("/orders?status=shipped");
    let ids = shipped.order_ids();
    assert!(!ids.is_empty() && ids.len() < 25, "{ids:?}");
    let rows = shipped.body.matches("<tr data-order-row").count();
    let shipped_badges = shipped
        .body
        .matches(r#"<span class="badge shipped" data-status="shipped">"#)
        .count();
    assert_eq!(rows, shipped_badges, "only shipped rows");
    assert!(shipped
        .body
        .contains(r#"<option value="shipped" selected>"#));

    let ada = client.get("/orders?q=lovelace");
    assert_eq!(ada.order_ids(), [FIRST_ORDER_ID]);
    assert!(
        ada.body.contains(r#"value="lovelace""#),
        "search kept in the box"
    );

    let by_number = client.get(&format!("/orders?q=%23{}", FIRST_ORDER_ID + 1));
    assert_eq!(by_number.order_ids(), [FIRST_ORDER_ID + 1]);

    let none = client.get("/orders?status=refunded&q=lovelace");
    assert!(none.order_ids().is_empty());
    assert!(none.body.contains("No orders match these filters."));
}

#[test]
fn settings_invite_a_member_and_show_a_new_api_key_once() {
    let site = site();
    let mut client = Client::new(&site);
    client.sign_in(DEMO_EMAIL);

    let bad = client.post(
        "/settings/team",
        &[("email", "not an email"), ("role", "member")],
    );
    assert_eq!(bad.status, 422);
    assert!(bad.body.contains("Enter a valid email address"));
    let invited = client.post(
        "/settings/team",
        &[("email", "lin@acme.test"), ("role", "viewer")],
    );
    assert_eq!(invited.location(), "/settings/team?notice=invited");
    let team = client.get(invited.location());
    assert!(
        team.body.contains(r#"data-member="lin@acme.test""#)
            && team.body.contains("Invitation sent.")
    );

    let created = client.post(
        "/settings/api-keys",
        &[("op", "create"), ("name", "CI runner")],
    );
    assert_eq!(created.status, 303);
    let keys = client.get(created.location());
    assert!(keys.body.contains("CI runner"));
    assert!(
        keys.body.contains(r#"data-testid="new-key">acme_live_"#),
        "secret shown"
    );
    let again = client.get("/settings/api-keys");
    assert!(
        !again.body.contains(r#"data-testid="new-key""#),
        "secret shown only once"
    );

    let revoked = client.post("/settings/api-keys", &[("op", "revoke"), ("key", "1")]);
    assert_eq!(revoked.status, 303);
    let keys = client.get("/settings/api-keys");
    assert!(!keys.body.contains(r#"data-testid="revoke-key-1""#));
    assert!(keys.body.contains("Revoked"));

    let upgraded = client.post(
        "/settings/billing",
        &[("op", "change"), ("plan", "pro"), ("confirm", "yes")],
    );
    assert_eq!(upgraded.status, 303);
    assert!(client
        .get("/settings/billing")
        .body
        .contains(r#"data-testid="current-plan">Pro<"#));

    let mut member = Client::new(&site);
    member.sign_in(MEMBER_EMAIL);
    let billing = member.post("/settings/billing", &[("op", "cancel")]);
    assert_eq!(billing.status, 403);
    assert!(billing
        .body
        .contains("Only administrators can open billing."));
}

#[test]
fn unknown_orders_get_a_page_not_a_crash() {
    let site = site();
    let mut client = Client::new(&site);
    client.sign_in(DEMO_EMAIL);
    assert_eq!(client.get("/orders/99999").status, 404);
    let put = client.send("PUT", "/orders", "");
    assert_eq!(put.status, 405);
}

#[test]
fn dropping_the_site_stops_serving() {
    let site = site();
    let addr = site.addr();
    assert_eq!(Client::new(&site).get("/login").status, 200);
    drop(site);
    // The accept loop notices the stop on its next turn; poll briefly.
    let stopped = (0..200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        TcpStream::connect(addr).is_err()
    });
    assert!(stopped, "{addr} still accepts connections");
}

#[test]
fn text_typed_anywhere_comes_back_escaped() {
    let site = site();
    let mut client = Client::new(&site);
    let evil = r#""><img src=x onerror=alert(1)>"#;
    let escaped = "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;";

    let login = client.post(
        "/login",
        &[("email", evil), ("password", "x"), ("next", evil)],
    );
    assert_eq!(login.status, 401);
    let search = {
        client.sign_in(DEMO_EMAIL);
        client.get(&format!(
            "/orders?q={}",
            url::form_urlencoded::byte_serialize(evil.as_bytes()).collect::<String>()
        ))
    };
    let invite = client.post("/settings/team", &[("email", evil), ("role", "member")]);
    client.post("/settings/api-keys", &[("op", "create"), ("name", evil)]);
    let keys = client.get("/settings/api-keys");
    client.post(
        "/settings/profile",
        &[("name", evil), ("language", "en"), ("timezone", "UTC")],
    );
    let profile = client.get("/settings/profile");

    for (page, reply) in [
        ("login", &login),
        ("search", &search),
        ("invite", &invite),
        ("api keys", &keys),
        ("profile", &profile),
    ] {
        assert!(reply.body.contains(escaped), "{page}: text missing");
        assert!(
            !reply.body.contains("<img src=x"),
            "{page}: markup got through"
        );
    }
}

#[test]
fn ids_are_unique_on_every_page_so_recipes_can_rely_on_them() {
    let site = site();
    let mut client = Client::new(&site);
    client.sign_in(DEMO_EMAIL);
    let shipped = FIRST_ORDER_ID.to_string();
    let paid = (FIRST_ORDER_ID + 5).to_string();
    let mut pages: Vec<String> = PAGE_PATHS
        .iter()
        .filter(|p| **p != "/login")
        .map(|p| p.replace(":id", &shipped))
        .collect();
    pages.push(format!("/orders/{paid}"));
    pages.push("/orders?status=paid".into());
    for path in pages {
        let reply = client.get(&path);
        assert_eq!(reply.status, 200, "{path}");
        let mut ids: Vec<&str> = reply
            .body
            .split(" id=\"")
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .collect();
        let total = ids.len();
        assert!(total >= 3, "{path} has only {total} ids");
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), total, "{path} repeats an id");
    }
}

#[test]
fn a_taken_port_is_reported_with_what_to_do() {
    let site = site();
    let taken = runtime().block_on(DemoSite::start_on(site.addr().port()));
    let message = taken.expect_err("the port is in use").to_string();
    assert!(message.contains("--port"), "{message}");
}
