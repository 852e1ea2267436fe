//! A whole run on a served shop: signing in by the sitemap and ordering
//! until done, what every request carries, the normalizer's repairs over
//! the wire, a denied approval and the step limit.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use webagent::actions::{ActionResult, Catalog, FailureReason};
use webagent::agent::AGENT_TOOL_NAME;
use webagent::environment::ApprovalMode;
use webagent::events::{EndReason, Event};
use webagent::secrets::Secrets;
use webagent::serve::Response;
use webagent::sitemap::Sitemap;

use crate::answers::{done, reply, step_args, streamed};
use crate::run::{run_agent, Setup};
use crate::support::chromium::shared;
use crate::support::llm_server::{text_completion, tool_call_completion, tool_call_events, Reply};
use crate::support::pages::page;

/// The Acme-like app: sign in (a real form POST setting a cookie), a
/// dashboard behind it, and a new-order form whose submissions are kept.
fn serve_shop(orders: Arc<Mutex<Vec<String>>>, logins: Arc<Mutex<Vec<String>>>) -> String {
    let s = shared();
    let signed_in = |req: &webagent::serve::Request| {
        req.headers
            .get("cookie")
            .is_some_and(|c| c.contains("session=ada"))
    };
    s.server.handle("/shop/login", move |req| {
        if req.method == "POST" {
            let body = String::from_utf8_lossy(&req.body).into_owned();
            logins
                .lock()
                .expect("a lock no test thread poisoned")
                .push(body.clone());
            if body.contains("user=ada") && body.contains("password=s3cr3t-pw") {
                return Response::html("")
                    .with_status(303)
                    .with_header("Location", "/shop/dashboard")
                    .with_header("Set-Cookie", "session=ada; Path=/");
            }
            return Response::html(page("Sign in", "<p>Wrong user or password.</p>"));
        }
        Response::html(page(
            "Sign in",
            "<h1>Sign in</h1><form method=post action=/shop/login>\
             <label>User <input id=user name=user></label>\
             <label>Password <input id=password name=password type=password></label>\
             <button id=signin>Sign in</button></form>",
        ))
    });
    s.server.handle("/shop/dashboard", move |req| {
        if !signed_in(req) {
            return Response::html(page("Sign in first", "<p>Please sign in.</p>"));
        }
        Response::html(page(
            "Dashboard",
            "<h1>Welcome, ada</h1><a href=/shop/orders>Orders</a>",
        ))
    });
    s.server.handle("/shop/orders/new", move |req| {
        if !signed_in(req) {
            return Response::html(page("Sign in first", "<p>Please sign in.</p>"));
        }
        Response::html(page(
            "New order",
            "<h1>New order</h1><form id=order method=post action=/shop/orders>\
             <label>Item <input id=item name=item></label>\
             <button id=create>Create order</button></form>",
        ))
    });
    s.server.handle("/shop/orders", move |req| {
        if req.method == "POST" {
            let body = String::from_utf8_lossy(&req.body).into_owned();
            let mut orders = orders.lock().expect("a lock no test thread poisoned");
            orders.push(body);
            let id = orders.len();
            return Response::html("")
                .with_status(303)
                .with_header("Location", &format!("/shop/orders/{id}"));
        }
        Response::html(page("Orders", "<h1>Orders</h1>"))
    });
    s.server.handle("/shop/orders/1", |_req| {
        Response::html(page("Order 1", "<h1>Order 1 created</h1>"))
    });
    s.server.origin()
}

fn shop_sitemap(origin: &str) -> Sitemap {
    Sitemap::parse(
        &format!(
            "title: Shop\norigin: {origin}\nchildren:\n  shop:\n    title: Shop home\n    children:\n      login:\n        title: Sign in\n        keywords: [login]\n        notes: Use the account ada.\n      dashboard:\n        title: Dashboard\n        requiresAuth: true\n      orders:\n        title: Orders\n        requiresAuth: true\n        children:\n          new:\n            title: New order\n            description: Create an order\n            keywords: [create order]\n            instructions: Type the item name, then submit the form.\n"
        ),
        Path::new("shop.yaml"),
    )
    .expect("the test sitemap is valid")
}

#[test]
fn signs_in_goes_by_the_sitemap_fills_and_submits_until_done() {
    let orders = Arc::new(Mutex::new(Vec::new()));
    let logins = Arc::new(Mutex::new(Vec::new()));
    let origin = serve_shop(orders.clone(), logins.clone());
    let mut secrets = Secrets::new();
    secrets.insert("password", "s3cr3t-pw");
    let replies = vec![
        streamed(
            "type the user name",
            json!({"input_text": {"selector": "#user", "text": "ada"}}),
        ),
        reply(
            "type the password",
            json!({"input_text": {"selector": "#password", "text": "<secret>password</secret>"}}),
        ),
        streamed("sign in", json!({"click": {"selector": "#signin"}})),
        reply(
            "open the new order page",
            json!({"goto_page": {"name": "new order"}}),
        ),
        streamed(
            "type the item",
            json!({"input_text": {"selector": "#item", "text": "3 blue widgets"}}),
        ),
        reply(
            "create the order",
            json!({"submit_form": {"selector": "#order"}}),
        ),
        done("Order 1 was created for 3 blue widgets.", true),
    ];
    let run = run_agent(
        &format!("{origin}/shop/login"),
        "Sign in as ada and order 3 blue widgets",
        replies,
        Setup {
            approval: ApprovalMode::Risky,
            yes: true,
            sitemap: Some(shop_sitemap(&origin)),
            secrets,
            ..Setup::default()
        },
    );
    assert_eq!(run.outcome.reason, EndReason::Done, "{:?}", run.outcome);
    assert!(run.outcome.success);
    assert_eq!(run.outcome.steps, 7);
    assert_eq!(run.outcome.text, "Order 1 was created for 3 blue widgets.");
    for step in run.steps() {
        assert!(
            step.result.is_ok(),
            "step {} failed: {:?}",
            step.index,
            step.result
        );
        assert!(step.repairs.is_empty(), "{:?}", step.repairs);
    }
    // The page really changed: signed in with the secret, order submitted.
    assert_eq!(
        logins
            .lock()
            .expect("a lock no test thread poisoned")
            .as_slice(),
        ["user=ada&password=s3cr3t-pw"]
    );
    assert_eq!(
        orders
            .lock()
            .expect("a lock no test thread poisoned")
            .as_slice(),
        ["item=3+blue+widgets"]
    );
    assert!(
        run.final_text.contains("Order 1 created"),
        "{}",
        run.final_text
    );
    // Sign-in click and form submission are commits, approved by --yes.
    let approvals: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Approval(a) => Some((a.step, a.decision.to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(
        approvals,
        [(3, "approved".to_string()), (6, "approved".to_string())]
    );
    // The secret never reaches the model or the events.
    for request in &run.requests {
        assert!(!request.body.contains("s3cr3t-pw"));
    }
    let events_text = serde_json::to_string(&run.events).unwrap();
    assert!(!events_text.contains("s3cr3t-pw"));
    assert!(events_text.contains("<secret>password</secret>"));
    // goto_page went by the sitemap, whose node instructions the model saw.
    assert!(run
        .prompt(4)
        .contains("You are on: /shop/orders/new (New order)"));
    assert!(run
        .prompt(4)
        .contains("Instructions for this page: Type the item name"));
    assert!(run
        .prompt(0)
        .contains("Notes for this page: Use the account ada."));
    // A streamed answer shows its reflection as it arrives.
    let streamed_text: String = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Text { content } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        streamed_text.contains("next goal: type the user name"),
        "{streamed_text}"
    );
    // Events come in protocol order for an executed step (streamed text
    // interleaves while the model writes): what a resume reads to know
    // how far a killed step got.
    let kinds: Vec<&str> = run
        .events
        .iter()
        .map(Event::kind)
        .filter(|k| *k != "text" && *k != "model_waiting")
        .collect();
    let first_step = &kinds[..kinds.iter().position(|k| *k == "step_ended").unwrap() + 1];
    assert_eq!(
        first_step,
        [
            "run_started",
            "run_settings",
            "observation",
            "listing",
            "tool_call",
            "action_request",
            "tool_result",
            "step",
            "step_ended"
        ]
    );
    assert_eq!(kinds.last(), Some(&"done"));
}

#[test]
fn every_request_carries_the_forced_tool_the_catalog_the_sitemap_and_the_history() {
    let orders = Arc::new(Mutex::new(Vec::new()));
    let logins = Arc::new(Mutex::new(Vec::new()));
    let origin = serve_shop(orders, logins);
    let replies = vec![
        reply("look at the form", json!({"scroll": {"direction": "down"}})),
        reply("think it over", json!({"think": {"reasoning": "plan"}})),
        done("nothing to do", true),
    ];
    let run = run_agent(
        &format!("{origin}/shop/login"),
        "Look around",
        replies,
        Setup {
            sitemap: Some(shop_sitemap(&origin)),
            ..Setup::default()
        },
    );
    assert!(run.outcome.success, "{:?}", run.outcome);
    assert_eq!(run.requests.len(), 3);
    let catalog = Catalog::builtin();
    for (i, request) in run.requests.iter().enumerate() {
        let body = request.json();
        assert_eq!(
            body["tool_choice"],
            json!({"type": "function", "function": {"name": AGENT_TOOL_NAME}})
        );
        let tool = &body["tools"][0]["function"];
        assert_eq!(tool["name"], AGENT_TOOL_NAME);
        let properties = &tool["parameters"]["properties"];
        for field in ["evaluation_previous_goal", "memory", "next_goal"] {
            assert_eq!(properties[field]["type"], "string", "{field}");
        }
        let branches = properties["action"]["anyOf"].as_array().expect("a union");
        let names: Vec<String> = branches
            .iter()
            .filter_map(|b| b["required"][0].as_str().map(str::to_owned))
            .collect();
        // Every action the model is offered (answer_dialogs is the
        // person's).
        let offered: Vec<String> = catalog
            .specs()
            .iter()
            .filter(|s| s.for_the_model())
            .map(|s| s.name.clone())
            .collect();
        assert_eq!(names, offered, "request {i}");
        assert!(!names.iter().any(|n| n == "answer_dialogs"));
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(system.contains("# Output format"));
        let prompt = run.prompt(i);
        assert!(prompt.contains("## Site map"), "request {i}");
        assert!(prompt.contains("/shop/orders/new"));
        assert!(prompt.contains(&format!("Step {} of 12.", i + 1)));
    }
    // Later requests remind the model of its earlier reflections.
    let third = run.prompt(2);
    assert!(third.contains("next goal: look at the form"));
    assert!(third.contains("memory: remembering while: look at the form"));
    assert!(third.contains("evaluation: judged before: think it over"));
    assert!(third.contains("action: think {\"reasoning\":\"plan\"}"));
    assert!(!run.prompt(0).contains("look at the form"));
}

#[test]
fn each_normalizer_repair_arrives_over_the_wire_and_is_recorded() {
    let s = shared();
    s.server.html(
        "/repairs",
        page(
            "Counter",
            "<button id=b onclick=\"c.textContent=+c.textContent+1\">Add</button>\
             <p>Count: <span id=c>0</span></p>",
        ),
    );
    let click_b = json!({"click": {"selector": "#b"}});
    let fenced = format!(
        "Here is my step:\n```json\n{}\n```",
        step_args("json in text", click_b.clone())
    );
    let double = Value::String(step_args("double encoded", click_b.clone()).to_string());
    let nested =
        json!({"name": AGENT_TOOL_NAME, "arguments": step_args("nested", click_b.clone())});
    let replies = vec![
        Reply::json(200, text_completion(&fenced)),
        Reply::json(
            200,
            tool_call_completion("click_element_by_index", &json!({"selector": "#b"})),
        ),
        Reply::json(200, tool_call_completion(AGENT_TOOL_NAME, &double)),
        Reply::sse(tool_call_events(AGENT_TOOL_NAME, &nested, 5)),
        Reply::json(
            200,
            tool_call_completion(AGENT_TOOL_NAME, &json!({"action": click_b})),
        ),
        Reply::json(
            200,
            tool_call_completion(
                AGENT_TOOL_NAME,
                &json!({"evaluation_previous_goal": "a", "memory": "b", "next_goal": "c"}),
            ),
        ),
        reply("bare value", json!({"click": "#b"})),
        reply("wrong case", json!({"CLICK": {"selector": "#b"}})),
        reply("alias", json!({"scroll_down": {}})),
        reply(
            "strings for numbers",
            json!({"scroll": {"direction": "up", "pages": "0.5"}}),
        ),
        reply("unknown action", json!({"teleport": {"to": "mars"}})),
        done("clicked seven times", true),
    ];
    let run = run_agent(
        &s.server.url("/repairs"),
        "Click Add seven times",
        replies,
        Setup::default(),
    );
    assert!(run.outcome.success, "{:?}", run.outcome);
    let steps = run.steps();
    assert_eq!(steps.len(), 12);
    let expect = [
        "message text",
        "as the tool instead of agent_step",
        "encoded 1 time(s) too many",
        "wrapper was removed",
        "reflection fields missing",
        "(step 6 has no action)",
        "a bare value was taken as `selector`",
        "`CLICK` was read as `click`",
        "`scroll_down` was read as `scroll`",
        "the string \"0.5\" was read as 0.5",
    ];
    for (step, phrase) in steps.iter().zip(expect) {
        if step.index == 6 {
            // No action: nothing is invented in its place.
            continue;
        }
        assert!(
            step.repairs.iter().any(|r| r.contains(phrase)),
            "step {}: expected a repair with {phrase:?}, got {:?}",
            step.index,
            step.repairs
        );
        assert!(
            step.result.is_ok(),
            "step {}: {:?}",
            step.index,
            step.result
        );
    }
    assert_eq!(steps[5].action, Value::Null);
    assert_eq!(steps[5].result.reason(), Some(FailureReason::InvalidParams));
    assert!(run.prompt(6).contains("no `action`"), "{}", run.prompt(6));
    assert_eq!(steps[8].action["scroll"]["direction"], "down");
    // The button really was clicked by the seven repaired clicks.
    assert!(run.final_text.contains("Count: 7"), "{}", run.final_text);
    // What could not be repaired is an error the model reads next step.
    assert_eq!(
        steps[10].result.reason(),
        Some(FailureReason::InvalidParams)
    );
    assert!(run
        .prompt(11)
        .contains("failed (invalid_params): unknown action `teleport`"));
}

#[test]
fn a_denied_approval_is_what_the_model_sees_and_nothing_is_submitted() {
    let s = shared();
    let posted = Arc::new(Mutex::new(0usize));
    let counter = posted.clone();
    s.server.handle("/deny", move |req| {
        if req.method == "POST" {
            *counter.lock().expect("a lock no test thread poisoned") += 1;
            return Response::html(page("Sent", "<p>Sent!</p>"));
        }
        Response::html(page(
            "Form",
            "<form method=post action=/deny><input id=q name=q><button id=send>Send</button></form>",
        ))
    });
    let replies = vec![
        reply("send the form", json!({"click": {"selector": "#send"}})),
        reply(
            "ask the person",
            json!({"ask_user": {"question": "May I send it?"}}),
        ),
        done("the person did not approve sending", false),
    ];
    let run = run_agent(
        &s.server.url("/deny"),
        "Send the form",
        replies,
        Setup {
            approval: ApprovalMode::Risky,
            yes: false,
            ..Setup::default()
        },
    );
    assert_eq!(run.outcome.reason, EndReason::Done);
    assert!(!run.outcome.success);
    let steps = run.steps();
    assert_eq!(steps[0].result.reason(), Some(FailureReason::Denied));
    assert!(run
        .events
        .iter()
        .any(|e| matches!(e, Event::Approval(a) if a.decision == webagent::events::Verdict::Denied && a.step == 1)));
    assert!(
        run.prompt(1).contains("failed (denied)"),
        "{}",
        run.prompt(1)
    );
    assert_eq!(
        *posted.lock().expect("a lock no test thread poisoned"),
        0,
        "the form must not be sent"
    );
    assert!(!run.final_text.contains("Sent!"));
    // Nobody can answer headless.
    assert_eq!(
        steps[1].result,
        ActionResult::ok_with(json!({"answer": "no answer available"}))
    );
    assert!(run.prompt(2).contains("no answer available"));
}

#[test]
fn the_step_limit_ends_the_run_as_failed_with_a_summary() {
    let s = shared();
    s.server.html(
        "/limit",
        page(
            "Long",
            &format!("<div style=height:4000px>{}</div>", "text ".repeat(50)),
        ),
    );
    let replies = vec![
        reply("scroll a bit", json!({"scroll": {"direction": "down"}})),
        reply("scroll more", json!({"scroll": {"direction": "down"}})),
        reply("keep scrolling", json!({"scroll": {"direction": "down"}})),
    ];
    let run = run_agent(
        &s.server.url("/limit"),
        "Find the end of the page",
        replies,
        Setup {
            max_steps: 3,
            ..Setup::default()
        },
    );
    assert!(!run.outcome.success);
    assert_eq!(run.outcome.reason, EndReason::MaxSteps);
    assert_eq!(run.outcome.steps, 3);
    assert_eq!(run.requests.len(), 3);
    assert!(
        run.outcome.text.contains("step limit of 3"),
        "{}",
        run.outcome.text
    );
    assert!(
        run.outcome.text.contains("keep scrolling"),
        "{}",
        run.outcome.text
    );
    assert!(run.prompt(1).contains("Only 1 more step after this one"));
    assert!(run.prompt(2).contains("This is the last step"));
    match run.events.last() {
        Some(Event::Done {
            success,
            reason,
            steps,
            ..
        }) => {
            assert!(!success);
            assert_eq!(*reason, EndReason::MaxSteps);
            assert_eq!(*steps, 3);
        }
        other => panic!("the run must end with done, got {other:?}"),
    }
}
