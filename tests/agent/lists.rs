//! Several actions in one step: a form filled and submitted in one model
//! call, a list that stops at a navigation or a renumbered target, a
//! denied action that ends the list, and the same road for highlighting
//! and a terminal.

use serde_json::{json, Value};
use webagent::environment::ApprovalDecision;
use webagent::events::Event;

use crate::answers::{done, reply};
use crate::run::{run_agent, run_on_page, Setup};
use crate::scripted::run_gate_steps;
use crate::support::chromium::shared;
use crate::support::listing;
use crate::support::pages::page;

#[test]
fn the_demo_order_form_is_filled_and_submitted_in_one_model_call() {
    let s = shared();
    let site = s
        .runtime
        .block_on(webagent::demo::DemoSite::start())
        .expect("the demo starts");
    // The demo's own field ids; the scripted model targets them by
    // selector, as a model may for elements it can name.
    let sign_in = json!([
        {"input_text": {"selector": "#email", "text": webagent::demo::DEMO_EMAIL}},
        {"input_text": {"selector": "#password", "text": webagent::demo::DEMO_PASSWORD}},
        {"click": {"selector": "#sign-in"}}
    ]);
    let order = json!([
        {"input_text": {"selector": "#customer", "text": "Mary Jackson"}},
        {"select_option": {"selector": "#product", "text": "USB-C dock — $89.50"}},
        {"input_text": {"selector": "#quantity", "text": "3"}},
        {"input_text": {"selector": "#notes", "text": "Gift wrap, please"}},
        {"click": {"selector": "#create-order"}}
    ]);
    let run = run_agent(
        &site.url("/orders/new"),
        "Create an order for Mary Jackson: 3 USB-C docks, gift wrapped",
        vec![
            reply("sign in", sign_in),
            reply("fill the order and create it", order),
            done("order created", true),
        ],
        Setup::default(),
    );
    assert!(run.outcome.success, "{:?}\n{:?}", run.outcome, run.errors());
    // Sign-in is one call; the six-field form, filled and submitted, one
    // more; then done.
    assert_eq!(run.requests.len(), 3);
    let steps = run.steps();
    let names: Vec<(usize, String)> = steps
        .iter()
        .map(|s| (s.index, split_name(&s.action)))
        .collect();
    assert_eq!(
        names,
        [
            (1, "input_text".to_string()),
            (1, "input_text".into()),
            (1, "click".into()),
            (2, "input_text".into()),
            (2, "select_option".into()),
            (2, "input_text".into()),
            (2, "input_text".into()),
            (2, "click".into()),
            (3, "done".into()),
        ],
        "each action is its own entry"
    );
    assert!(steps.iter().all(|s| s.result.is_ok()), "{steps:#?}");
    assert!(
        run.final_text.contains("Mary Jackson"),
        "{}",
        run.final_text
    );
    // The export replays every action of the list.
    let recipe =
        webagent::script::recipe_from_events(&run.events, "an order").expect("the run exports");
    assert!(recipe.contains("Gift wrap, please"), "{recipe}");
    assert!(recipe.contains("create-order"), "{recipe}");
}

fn split_name(action: &Value) -> String {
    action
        .as_object()
        .and_then(|o| o.keys().next().cloned())
        .unwrap_or_default()
}

#[test]
fn a_list_stops_at_a_navigation_and_at_a_renumbered_target() {
    let s = shared();
    s.server.html(
        "/list-nav",
        page(
            "Links",
            "<input id=a placeholder=First><a id=go href=/list-landed>Go</a><input id=b placeholder=Second>",
        ),
    );
    s.server.html(
        "/list-landed",
        page("Landed", "<input id=c placeholder=Third>"),
    );
    let run = run_agent(
        &s.server.url("/list-nav"),
        "type, follow, type",
        vec![
            reply(
                "type then follow then type",
                json!([
                    {"input_text": {"selector": "#a", "text": "one"}},
                    {"click": {"selector": "#go"}},
                    {"input_text": {"selector": "#b", "text": "two"}}
                ]),
            ),
            done("stopped", true),
        ],
        Setup::default(),
    );
    let steps = run.steps();
    assert_eq!(steps.len(), 3, "two ran, then done: {steps:#?}");
    assert_eq!(split_name(&steps[1].action), "click");
    let next = run.prompt(1);
    assert!(
        next.contains("not run: input_text") && next.contains("the page changed to"),
        "the model is told what did not run and why:\n{next}"
    );

    // A click that inserts a row above the next target renumbers it.
    s.server.html(
        "/list-renumber",
        page(
            "Rows",
            "<button id=add onclick=\"document.body.insertAdjacentHTML('afterbegin', '<button>New row</button>')\">Add</button>\
             <input id=name placeholder=Name>",
        ),
    );
    let observed = s.runtime.block_on(async {
        let tab = s
            .session
            .new_tab(&s.server.url("/list-renumber"))
            .await
            .expect("a tab");
        let state = tab
            .observe(&webagent::browser::ObserveOptions::default())
            .await
            .expect("observed");
        let _ = tab.close().await;
        state.listing
    });
    let name = listing::index_of(&observed, "Name");
    let add = listing::index_of(&observed, "Add");
    let run = run_agent(
        &s.server.url("/list-renumber"),
        "add a row and type a name",
        vec![
            reply(
                "add then type",
                json!([
                    {"click": {"index": add}},
                    {"input_text": {"index": name, "text": "Ada"}}
                ]),
            ),
            done("stopped", true),
        ],
        Setup::default(),
    );
    let steps = run.steps();
    assert_eq!(
        steps.len(),
        2,
        "the click ran, the typing did not: {steps:#?}"
    );
    let next = run.prompt(1);
    assert!(
        next.contains(&format!("element {name} is now")),
        "renumbering is named:\n{next}"
    );
    assert!(!run.final_text.contains("Ada"));
}

#[test]
fn a_denied_action_in_the_middle_of_a_list_ends_the_list() {
    let run = run_gate_steps(
        &["http://a.test/invoice"],
        vec![
            reply(
                "think, pay, think",
                json!([
                    {"think": {"reasoning": "first"}},
                    {"submit_form": {"selector": "#pay"}},
                    {"think": {"reasoning": "never"}}
                ]),
            ),
            done("stopped", true),
        ],
        vec![ApprovalDecision::Deny {
            reason: "not today".into(),
        }],
        4,
    );
    let thoughts = run
        .events
        .iter()
        .filter(|e| matches!(e, Event::Step(s) if split_name(&s.action) == "think"))
        .count();
    assert_eq!(thoughts, 1, "the third action did not run");
    assert!(run.executed.is_empty(), "{:?}", run.executed);
    let prompt = run.requests[1].json()["messages"][1]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(prompt.contains("not today"), "{prompt}");
    assert!(prompt.contains("not run: think"), "{prompt}");
}

#[test]
fn the_model_highlights_a_paragraph_and_types_into_a_terminal_through_the_same_road() {
    let body = r#"<main><p>First paragraph.</p>
        <p>Second paragraph: lorem ipsum dolor sit amet, sed tristique nunc.</p></main>
        <p id="said">nothing selected</p>
        <div id="term" tabindex="0" style="height:80px;background:#111;color:#eee"><pre id="out"></pre></div>
        <script>
          document.addEventListener('mouseup', (e) => {
            said.textContent = (e.isTrusted ? 'trusted' : 'synthetic') + ' selection: ' + getSelection();
          });
          let line = '';
          term.addEventListener('keydown', (e) => {
            if (e.key === 'Enter') { out.textContent += 'ran ' + line + '\n'; line = ''; }
            else if (e.key.length === 1) line += e.key;
          });
        </script>"#;
    let run = run_on_page(
        "/agent-select",
        body,
        "Highlight the second paragraph, then run `ls` in the terminal",
        vec![
            reply(
                "highlight the second paragraph",
                json!({"select_text": {"text": "Second paragraph:…tristique nunc."}}),
            ),
            reply(
                "run ls",
                json!({"input_text": {"selector": "#term", "text": "ls\n"}}),
            ),
            done("Highlighted and ran ls", true),
        ],
        Setup::default(),
    );
    assert!(run.outcome.success, "{}", run.outcome.text);
    assert!(
        run.final_text.contains(
            "trusted selection: Second paragraph: lorem ipsum dolor sit amet, sed tristique nunc."
        ),
        "{}",
        run.final_text
    );
    assert!(run.final_text.contains("ran ls"), "{}", run.final_text);
    // The model reads back what was selected, and that it typed keys.
    let second = run.prompt(1);
    assert!(
        second.contains("Second paragraph: lorem ipsum dolor sit amet, sed tristique nunc."),
        "{second}"
    );
    assert!(run.prompt(2).contains("keystrokes"), "{}", run.prompt(2));
}
