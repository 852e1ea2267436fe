//! A payment field and its button inside a frame of another origin (a
//! process of its own in Chromium): a person's trusted input there is
//! recorded, and the recipe replays with no model on a second app, where
//! the frame's layout moved its button.

use std::sync::{Arc, Mutex};

use chromiumoxide::cdp::browser_protocol::input::DispatchMouseEventType;
use serde_json::json;
use webagent::actions::Catalog;
use webagent::browser::record::{Input, Recorder};
use webagent::browser::Tab;
use webagent::dom::Locator;
use webagent::environment::Environment;
use webagent::script::{Recording, Scripts};
use webagent::serve::{PageServer, Response};

use super::recorded::{inputs, mouse, type_text, until};
use super::support::chromium::shared;
use super::support::cli::said;
use super::support::pages::page;
use super::support::tab::{in_front, script_environment};
use super::{output, scratch, webagent_in, ws};

/// A shop whose card form lives in a frame served under `localhost`, while
/// the shop is on `127.0.0.1`: another origin, so another process. The
/// frame's field and button sit at fixed places in it, for the person's
/// pointer; `moved` puts a notice above the form and the button in a box
/// (its CSS path names nothing then, its test id still names it).
struct PayApp {
    server: PageServer,
    paid: Arc<Mutex<Vec<String>>>,
}

impl PayApp {
    async fn start(moved: bool) -> PayApp {
        let server = PageServer::start().await.expect("a page server");
        let port = server.addr().port();
        server.html(
            "/pay",
            page(
                "Checkout",
                &format!(
                    r#"<h1>Checkout</h1><p>Total: 12 €</p>
<iframe id="card-frame" src="http://localhost:{port}/card" style="width:320px;height:160px;border:0"></iframe>"#
                ),
            ),
        );
        let button = r#"<button data-testid="pay" style="display:block;margin-top:10px;height:24px">Pay</button>"#;
        let (notice, button) = match moved {
            true => (
                "<p>Cards are checked at once.</p>",
                format!("<div>{button}</div>"),
            ),
            false => ("", button.to_string()),
        };
        server.html(
            "/card",
            format!(
                r#"<!doctype html><html><head><title>Card</title></head><body style="margin:0">{notice}
<form action="/paid" method="get" style="position:absolute;left:0;top:40px;margin:0">
<label>Card number <input id="card" name="card" style="width:150px"></label>
{button}</form></body></html>"#
            ),
        );
        let paid = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&paid);
        server.handle("/paid", move |request| {
            seen.lock()
                .expect("a lock no test thread poisoned")
                .push(request.query.clone());
            Response::html(page("Paid", "<p>Thank you</p>"))
        });
        PayApp { server, paid }
    }

    /// Waits (ten seconds at most) for the frame's form to arrive.
    async fn paid_once(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while self.paid().is_empty() && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    fn paid(&self) -> Vec<String> {
        self.paid
            .lock()
            .expect("a lock no test thread poisoned")
            .clone()
    }
}

/// A point in the card frame, given in the frame's own pixels, in the
/// tab's viewport (the top document sees the `<iframe>`'s box, not what is
/// inside it).
async fn in_frame(tab: &Tab, (x, y): (f64, f64)) -> (f64, f64) {
    let frame: Vec<f64> = tab
        .page()
        .evaluate(
            "(() => { const r = document.getElementById('card-frame').getBoundingClientRect();
              return [r.x, r.y]; })()",
        )
        .await
        .expect("the frame's box")
        .into_value()
        .expect("two numbers");
    (frame[0] + x, frame[1] + y)
}

/// A person's click at a point of the card frame.
async fn click_in_frame(tab: &Tab, at: (f64, f64)) {
    let at = in_frame(tab, at).await;
    for kind in [
        DispatchMouseEventType::MouseMoved,
        DispatchMouseEventType::MousePressed,
        DispatchMouseEventType::MouseReleased,
    ] {
        mouse(tab, kind, at).await;
    }
}

/// Whether Chromium runs the card frame in a process of its own: the top
/// document cannot read it.
async fn frame_is_far(tab: &Tab) -> bool {
    tab.page()
        .evaluate(
            "(() => { try { return !document.getElementById('card-frame').contentDocument; }
              catch (_) { return true; } })()",
        )
        .await
        .expect("asking the page")
        .into_value()
        .expect("a boolean")
}

#[test]
fn a_field_and_a_button_in_a_frame_of_another_origin_are_recorded_and_replayed_there() {
    let s = shared();
    let dir = scratch("recorded-far-frame");
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let (first, second) = s
        .runtime
        .block_on(async { (PayApp::start(false).await, PayApp::start(true).await) });

    let source = {
        let _turn = in_front();
        s.runtime.block_on(async {
            let url = first.server.url("/pay");
            let tab = s.session.new_tab(&url).await.expect("a tab");
            until(&tab, "document.readyState === 'complete'").await;
            assert!(
                frame_is_far(&tab).await,
                "the card frame should be of another origin"
            );
            let mut recorder = Recorder::start(&tab).await.expect("the recorder starts");
            // The field (the label's words come first on its line), then
            // the button below it.
            click_in_frame(&tab, (200.0, 52.0)).await;
            type_text(&tab, "4242 4242").await;
            click_in_frame(&tab, (20.0, 84.0)).await;
            let got = inputs(&mut recorder, 2).await;
            let mut recording = Recording::new("pay", &url);
            for input in got.clone() {
                recording.push(input, &url);
            }
            assert!(
                matches!(&got[0], Input::Fill { value: Some(v), .. } if v == "4242 4242"),
                "{got:#?}"
            );
            first.paid_once().await;
            let _ = tab.close().await;
            recording.source(None).expect("a recipe")
        })
    };
    assert_eq!(
        first.paid(),
        vec!["card=4242+4242".to_string()],
        "the person paid once"
    );
    for line in [
        r#"fill(["id:card", "role:textbox:Card number", "label:Card number", "name:card", "css:#card-frame >>> #card"], params.card);"#,
        r#"click(["testid:pay", "role:button:Pay", "text:Pay", "css:#card-frame >>> body:nth-child(2) > form > button:nth-child(2)"]);"#,
    ] {
        assert!(source.contains(line), "no `{line}` in:\n{source}");
    }
    // The steps happened on the shop's page, not at the frame's address.
    assert!(!source.contains("localhost"), "{source}");
    std::fs::write(dir.join("pay.rhai"), &source).expect("the recipe written");

    let mut command = webagent_in(&dir);
    command
        .args(["recipe", "run", "pay.rhai", "--yes", "--connect", &ws()])
        .args(["--url", &second.server.url("/pay")])
        .args(["--param", "card=5555 4444"]);
    let out = output(command);
    assert_eq!(out.status.code(), Some(0), "{}\n{source}", said(&out));
    assert_eq!(
        second.paid(),
        vec!["card=5555+4444".to_string()],
        "the replay paid in the second app's frame: {}",
        said(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_agent_s_step_in_a_frame_of_another_origin_keeps_facts_that_find_its_element_there_again() {
    let s = shared();
    s.runtime.block_on(async {
        let app = PayApp::start(false).await;
        let url = app.server.url("/pay");
        let tab = s.session.new_tab(&url).await.expect("a tab");
        until(&tab, "document.readyState === 'complete'").await;
        let mut env = script_environment(tab, &Scripts::default());
        let state = env.observe().await.expect("an observation");
        let card = state
            .elements
            .iter()
            .find(|e| e.attribute("name") == Some("card"))
            .unwrap_or_else(|| panic!("the frame's field is listed:\n{}", state.listing));
        let action = Catalog::builtin()
            .parse(&json!({"input_text": {"index": card.index.0, "text": "1111"}}))
            .expect("an action");
        let result = env.execute(&action).await;
        assert!(result.is_ok(), "{result:?}");
        let data = serde_json::to_value(&result).expect("a result");
        let facts = &data["data"]["locator"];
        // The path enters the frame as an action's selector does, and the
        // step's page is the shop's.
        assert_eq!(facts["css"], "#card-frame >>> #card", "{facts}");
        assert_eq!(facts["url"], url.as_str(), "{facts}");
        // Found again there by its locators: by its id, in the frame.
        let found = env
            .locate(&Locator::from_facts(facts))
            .await
            .expect("found again");
        assert_eq!(found.selector, "#card-frame >>> #card");
        assert_eq!(found.matched, "id:card");
        assert_eq!(found.state.map(|s| s.value), Some(Some("1111".to_string())));
    });
}

#[test]
fn a_field_still_being_typed_into_in_a_frame_of_another_origin_gives_its_fill_when_the_recording_stops(
) {
    let s = shared();
    let _turn = in_front();
    s.runtime.block_on(async {
        let app = PayApp::start(false).await;
        let url = app.server.url("/pay");
        let tab = s.session.new_tab(&url).await.expect("a tab");
        until(&tab, "document.readyState === 'complete'").await;
        let recorder = Recorder::start(&tab).await.expect("the recorder starts");
        click_in_frame(&tab, (200.0, 52.0)).await;
        type_text(&tab, "4000").await;
        let rest = recorder.stop(&tab).await;
        assert!(
            rest.iter().any(|input| matches!(
                input,
                Input::Fill { facts, value: Some(v) }
                    if v == "4000" && facts["css"] == "#card-frame >>> #card"
            )),
            "{rest:#?}"
        );
        let _ = tab.close().await;
    });
}
