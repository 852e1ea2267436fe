//! The Acme demo site, as a person and an agent meet it: over plain HTTP
//! (sign-in, gates, order rules, filters, settings) and in a real Chromium
//! through webagent's own observer and executor. One runtime and one
//! browser for the whole binary; every test starts its own site so the
//! orders one test ships are not another's.
//!
//! Without Chromium the browser tests fail with the install command; they
//! never skip.

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};

use serde_json::json;
use support::chromium::{runtime, shared};
use support::tab::{act_ok, observe};
use webagent::browser::Tab;
use webagent::demo::{
    DemoSite, DEMO_EMAIL, DEMO_PASSWORD, FIRST_ORDER_ID, MEMBER_EMAIL, PAGE_PATHS,
};
use webagent::sitemap::Sitemap;

// ---------------------------------------------------------------- shared --

fn site() -> DemoSite {
    runtime()
        .block_on(DemoSite::start())
        .expect("starting the demo site")
}

// ------------------------------------------------------- a tiny client --

/// One HTTP answer.
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn location(&self) -> &str {
        self.header("location").unwrap_or("")
    }

    /// The `data-status` of the order on a detail page (the badge in the title).
    fn order_status(&self) -> &str {
        let title = self
            .body
            .split(r#"data-testid="order-title""#)
            .nth(1)
            .unwrap_or("");
        title
            .split(r#"data-status=""#)
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or("")
    }

    /// The order numbers of the rows on an orders list.
    fn order_ids(&self) -> Vec<u32> {
        self.body
            .split(r#"data-order-id=""#)
            .skip(1)
            .filter_map(|rest| rest.split('"').next()?.parse().ok())
            .collect()
    }
}

/// A browser-like client: keeps the session cookie, does not follow
/// redirects (tests look at them).
struct Client {
    addr: SocketAddr,
    cookie_name: String,
    cookie: Option<String>,
}

impl Client {
    fn new(site: &DemoSite) -> Client {
        Client {
            addr: site.addr(),
            cookie_name: site.session_cookie(),
            cookie: None,
        }
    }

    fn send(&mut self, method: &str, path: &str, body: &str) -> Reply {
        let mut stream = TcpStream::connect(self.addr).expect("connecting to the demo");
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            self.addr
        );
        if let Some(cookie) = &self.cookie {
            head.push_str(&format!("Cookie: {}={cookie}\r\n", self.cookie_name));
        }
        if method == "POST" {
            head.push_str("Content-Type: application/x-www-form-urlencoded\r\n");
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).expect("sending");
        stream.write_all(body.as_bytes()).expect("sending");
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).expect("reading");
        let raw = String::from_utf8(raw).expect("the demo answers UTF-8");
        let (head, body) = raw.split_once("\r\n\r\n").expect("a complete answer");
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|s| s.parse().ok())
            .expect("a status line");
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect();
        let reply = Reply {
            status,
            headers,
            body: body.to_string(),
        };
        if let Some(set) = reply.header("set-cookie") {
            let value = set
                .split(';')
                .next()
                .and_then(|p| p.split_once('='))
                .map(|(_, v)| v.to_string())
                .unwrap_or_default();
            self.cookie = (!value.is_empty()).then_some(value);
        }
        reply
    }

    fn get(&mut self, path: &str) -> Reply {
        self.send("GET", path, "")
    }

    fn post(&mut self, path: &str, fields: &[(&str, &str)]) -> Reply {
        let body: String = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(fields)
            .finish();
        self.send("POST", path, &body)
    }

    fn sign_in(&mut self, email: &str) -> &mut Client {
        let reply = self.post(
            "/login",
            &[("email", email), ("password", DEMO_PASSWORD), ("next", "")],
        );
        assert_eq!(reply.status, 303, "sign-in failed: {}", reply.body);
        assert!(self.cookie.is_some(), "no session cookie: {reply:?}");
        self
    }

    /// Creates an order and returns its number.
    fn create_order(&mut self, customer: &str) -> u32 {
        let reply = self.post(
            "/orders/new",
            &[
                ("customer", customer),
                ("product", "KB-01"),
                ("quantity", "2"),
                ("notes", "Leave at the door"),
            ],
        );
        assert_eq!(reply.status, 303, "{}", reply.body);
        reply
            .location()
            .strip_prefix("/orders/")
            .and_then(|rest| rest.split('?').next())
            .and_then(|id| id.parse().ok())
            .unwrap_or_else(|| panic!("not an order URL: {}", reply.location()))
    }
}

fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

// ---------------------------------------------------------- HTTP tests --

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

// ------------------------------------------------------- browser tests --

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

// ------------------------------------------------------------- the CLI --

/// Kills the child if the test fails before it stops it itself.
struct ChildGuard(std::process::Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn demo_serve_only_prints_the_url_serves_and_stops_on_ctrl_c() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};

    let log = std::env::temp_dir().join(format!("webagent-demo-test-{}.log", std::process::id()));
    let child = Command::new(env!("CARGO_BIN_EXE_webagent"))
        .args(["demo", "--serve-only", "--log-file"])
        .arg(&log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting webagent demo");
    let mut child = ChildGuard(child);
    let stdout = child.0.stdout.take().expect("piped stdout");
    let mut lines = std::io::BufReader::new(stdout).lines();
    let url = lines.next().and_then(Result::ok).unwrap_or_default();
    let addr: SocketAddr = url
        .strip_prefix("http://")
        .and_then(|rest| rest.trim_end_matches('/').parse().ok())
        .unwrap_or_else(|| panic!("the first line is not the site URL: {url:?}"));
    assert!(addr.ip().is_loopback(), "{addr}");
    let hint = lines.next().and_then(Result::ok).unwrap_or_default();
    assert!(hint.contains(DEMO_EMAIL), "{hint}");

    let mut client = Client {
        addr,
        cookie_name: format!("acme_session_{}", addr.port()),
        cookie: None,
    };
    let login = client.get("/login");
    assert_eq!(login.status, 200);
    assert!(login.body.contains("Sign in"));

    let status = Command::new("kill")
        .args(["-INT", &child.0.id().to_string()])
        .status()
        .expect("sending SIGINT");
    assert!(status.success());
    let exit = child.0.wait().expect("waiting for webagent demo");
    assert!(exit.success(), "Ctrl-C should end it cleanly: {exit:?}");
    assert!(
        TcpStream::connect(addr).is_err(),
        "still listening after exit"
    );
    let _ = std::fs::remove_file(&log);
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
