//! The approval gate and stops, with a scripted environment: these are
//! about the loop's decisions, not the browser, so no tab is needed.
//! Recipe steps pass the same gate as agent steps.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use webagent::actions::{Action, Catalog, FailureReason};
use webagent::agent::Agent;
use webagent::agent::AGENT_TOOL_NAME;
use webagent::browser::Driver;
use webagent::environment::{
    ApprovalDecision, ApprovalMode, ApprovalRequest, HeadlessApprover, Masked, Road,
};
use webagent::events::{EndReason, Event, EventSink};
use webagent::llm::{stop_pair, LlmClient, LlmConfig};

use crate::answers::{done, reply, step_args};
use crate::run::fast_retries;
use crate::scripted::{run_gate, run_gate_steps, taken, ScriptedApprover, ScriptedEnvironment};
use crate::support::chromium::shared;
use crate::support::llm_server::{text_completion, tool_call_completion, LlmServer, Reply};

#[test]
fn answers_without_a_usable_action_run_nothing_and_end_the_run_after_three_in_a_row() {
    let cut_off = json!({
        "choices": [{
            "message": {"role": "assistant", "content": null, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": AGENT_TOOL_NAME, "arguments": step_args("cut", json!({"click": {"index": 0}})).to_string()}
            }]},
            "finish_reason": "length"
        }]
    })
    .to_string();
    let run = run_gate_steps(
        &["http://a.test/invoice"],
        vec![
            // No action at all.
            Reply::json(
                200,
                tool_call_completion(
                    AGENT_TOOL_NAME,
                    &json!({"evaluation_previous_goal": "a", "memory": "b", "next_goal": "c"}),
                ),
            ),
            // A broken wrapper, once read as input_text on `function`.
            Reply::json(
                200,
                tool_call_completion(AGENT_TOOL_NAME, &json!({"type": "function"})),
            ),
            // A usable answer resets the count.
            reply("think", json!({"think": {"reasoning": "look again"}})),
            // Nonsense keys, as a small model without a grammar writes.
            Reply::json(
                200,
                tool_call_completion(AGENT_TOOL_NAME, &json!({"arg1": 20, "arg2": 3.5})),
            ),
            reply("teleport", json!({"teleport": {"to": "mars"}})),
            // Cut at max_tokens: not a success, whatever parses.
            Reply::json(200, cut_off),
            done("never reached", true),
        ],
        vec![approve()],
        10,
    );
    assert_eq!(run.outcome.reason, EndReason::Fatal, "{:?}", run.outcome);
    assert!(!run.outcome.success);
    // Six answers: the usable third one restarted the count, and nothing
    // was asked after the sixth.
    assert_eq!(run.requests.len(), 6);
    assert!(run.executed.is_empty(), "ran {:?}", run.executed);
    assert!(run.asked.is_empty(), "{:?}", run.asked);
    let fatal: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Error { error, fatal: true } => Some(error.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(fatal.len(), 1, "{fatal:?}");
    assert!(fatal[0].contains("3 answers in a row"), "{}", fatal[0]);
    assert!(
        fatal[0].contains("agent.max_invalid_answers"),
        "{}",
        fatal[0]
    );
    assert!(fatal[0].contains("finish_reason: length"), "{}", fatal[0]);
    assert_eq!(run.outcome.text, fatal[0]);
    // The model was told, each time, what was wrong and the shape expected.
    let prompt = |i: usize| {
        run.requests[i].json()["messages"][1]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert!(prompt(1).contains("no `action`"), "{}", prompt(1));
    assert!(
        prompt(2).contains("\"action\": {\"click\""),
        "{}",
        prompt(2)
    );
    assert!(prompt(4).contains("`arg1`, `arg2`"), "{}", prompt(4));
    assert!(
        prompt(5).contains("unknown action `teleport`"),
        "{}",
        prompt(5)
    );
}

#[test]
fn a_page_too_large_for_the_context_window_is_cut_to_fit_with_a_note() {
    let s = shared();
    let run = s.runtime.block_on(async {
        let llm_server = LlmServer::start(vec![done("seen", true)]).await;
        let mut config = LlmConfig::default()
            .with_base_url(llm_server.base_url())
            .with_retry(fast_retries());
        config.context_window = Some(8192);
        let llm = Arc::new(LlmClient::new(config).expect("client"));
        let mut environment = ScriptedEnvironment::new(&["http://a.test/list"], Arc::default());
        environment.page.listing = (0..20_000)
            .map(|i| format!("[{i}]<div>Open item {i}</div>\n"))
            .collect();
        environment.page.page_text.text = "detail ".repeat(5_000);
        let mut agent = Agent::new(llm, environment, headless_road(true));
        let outcome = agent.run("Open item 3").await.expect("runs");
        (outcome, llm_server.requests())
    });
    let (outcome, requests) = run;
    assert!(outcome.success, "{outcome:?}");
    let body = requests[0].json();
    let user = body["messages"][1]["content"].as_str().unwrap_or_default();
    assert!(
        user.contains("[0]<div>Open item 0</div>"),
        "the start of the list stays"
    );
    assert!(
        user.contains("element lines left out to fit"),
        "{}",
        &user[user.len() - 600..]
    );
    assert!(user.contains("characters of page text left out"));
    // The prompt and the answer's bound fit the window by webagent's own
    // estimate.
    let prompt_chars: usize = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().chars().count())
        .sum::<usize>()
        + body["tools"][0].to_string().chars().count();
    let max_tokens = body["max_tokens"].as_u64().expect("a bound");
    assert!(
        webagent::llm::estimate_tokens(prompt_chars) + max_tokens <= 8192,
        "{prompt_chars} chars + {max_tokens}"
    );
}

fn approve() -> ApprovalDecision {
    ApprovalDecision::Approve { note: None }
}

#[test]
fn an_approval_is_asked_again_when_the_page_changed_meanwhile() {
    // The URL is read at the start, when asking, after the answer (now a
    // different page), when asking again, and after the second answer.
    let urls = [
        "http://a.test/invoice",
        "http://a.test/invoice",
        "http://a.test/elsewhere",
        "http://a.test/elsewhere",
        "http://a.test/elsewhere",
    ];
    let run = run_gate(
        &urls,
        vec![
            reply("pay", json!({"click": {"index": 0}})),
            done("paid", true),
        ],
        vec![approve(), approve()],
    );
    assert!(run.outcome.success, "{:?}", run.outcome);
    assert_eq!(run.asked.len(), 2, "asked again after the page changed");
    assert_eq!(run.asked[0].url, "http://a.test/invoice");
    assert_eq!(run.asked[1].url, "http://a.test/elsewhere");
    assert_eq!(
        run.executed.len(),
        1,
        "the action ran once, after the second yes"
    );
}

#[test]
fn an_edited_action_runs_instead_of_the_proposed_one() {
    let edited = Catalog::builtin()
        .parse(&json!({"input_text": {"index": 0, "text": "edited by the person"}}))
        .unwrap();
    let run = run_gate(
        &["http://a.test/"],
        vec![
            reply(
                "type",
                json!({"input_text": {"index": 0, "text": "from the model"}}),
            ),
            reply("ask", json!({"ask_user": {"question": "which amount?"}})),
            done("typed", true),
        ],
        vec![ApprovalDecision::Edit(edited.clone())],
    );
    assert!(run.outcome.success, "{:?}", run.outcome);
    assert_eq!(run.executed, std::slice::from_ref(&edited));
    let step = run
        .events
        .iter()
        .find_map(|e| match e {
            Event::Step(s) if s.index == 1 => Some(s.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(step.action, edited.to_json(), "the step records what ran");
    assert!(run.events.iter().any(
        |e| matches!(e, Event::Approval(a) if a.decision == webagent::events::Verdict::Edited)
    ));
    // A person at the keyboard answers ask_user, and the model reads it.
    let third: Value = run.requests[2].json();
    let prompt = third["messages"][1]["content"].as_str().unwrap();
    assert!(prompt.contains("answer to: which amount?"), "{prompt}");
}

#[test]
fn stop_at_the_approval_ends_the_run_without_acting() {
    let run = run_gate(
        &["http://a.test/"],
        vec![
            reply("pay", json!({"click": {"index": 0}})),
            done("x", true),
        ],
        vec![ApprovalDecision::Stop],
    );
    assert_eq!(run.outcome.reason, EndReason::Stopped);
    assert!(!run.outcome.success);
    assert!(run.executed.is_empty());
    assert_eq!(run.requests.len(), 1, "no further model call after a stop");
    assert!(matches!(
        run.events.last(),
        Some(Event::Done {
            reason: EndReason::Stopped,
            ..
        })
    ));
}

#[test]
fn a_stop_cancels_the_model_call_in_flight() {
    let s = shared();
    s.runtime.block_on(async {
        let llm_server = LlmServer::start(vec![Reply::Hang]).await;
        let llm = Arc::new(
            LlmClient::new(LlmConfig::default().with_base_url(llm_server.base_url()))
                .expect("client"),
        );
        let (stop, signal) = stop_pair();
        let mut agent = Agent::new(
            llm,
            ScriptedEnvironment::new(&["http://a.test/"], Arc::new(Mutex::new(Vec::new()))),
            headless_road(false),
        )
        .with_stop(signal);
        let run = agent.run("wait forever");
        let stopper = async {
            llm_server.wait_for_requests(1).await;
            stop.stop();
        };
        let (outcome, ()) = tokio::join!(run, stopper);
        let outcome = outcome.expect("runs");
        assert_eq!(outcome.reason, EndReason::Stopped);
        assert_eq!(outcome.steps, 0);
        tokio::time::timeout(Duration::from_secs(10), llm_server.wait_for_abandoned(1))
            .await
            .expect("the hanging request was dropped");
    });
}

/// A road for a run without a person: approvals refused unless `yes`,
/// events to nobody.
fn headless_road(yes: bool) -> Road {
    let (events, _rx) = EventSink::detached();
    Road::new(
        Catalog::builtin(),
        Box::new(HeadlessApprover { yes }),
        ApprovalMode::Risky,
        events,
    )
}

/// The TUI runs the agent on a task of its own, so a run on the real
/// browser must be `Send`; this fails to compile otherwise.
#[allow(dead_code)]
fn a_browser_run_can_be_spawned(agent: &mut Agent<Masked<Driver>>) {
    fn spawnable<T: Send>(_: &T) {}
    spawnable(&agent.run("task"));
}

#[test]
fn an_answer_with_no_call_and_no_json_is_an_error_the_model_reads_next() {
    let run = run_gate(
        &["http://a.test/"],
        vec![
            Reply::json(
                200,
                text_completion("I think I should click the Pay button."),
            ),
            done("paid", true),
        ],
        Vec::new(),
    );
    assert!(run.outcome.success, "{:?}", run.outcome);
    let first = run
        .events
        .iter()
        .find_map(|e| match e {
            Event::Step(s) if s.index == 1 => Some(s.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(first.result.reason(), Some(FailureReason::InvalidParams));
    assert_eq!(first.action, Value::Null);
    assert!(run.executed.is_empty());
    let second: Value = run.requests[1].json();
    let prompt = second["messages"][1]["content"].as_str().unwrap();
    assert!(
        prompt.contains("your answer had no agent_step call"),
        "{prompt}"
    );
}

/// Runs `source`'s recipe `main` on a scripted environment, approving
/// with `decisions`.
fn run_scripted_recipe(
    source: &str,
    urls: &[&str],
    decisions: Vec<ApprovalDecision>,
) -> (Result<Value, String>, Vec<Action>, Vec<ApprovalRequest>) {
    use webagent::script::{CancelFlag, RecipeHost, Scripts};
    let scripts = Scripts::default();
    scripts
        .load_source("gate.rhai", source)
        .expect("the recipe loads");
    let executed = Arc::new(Mutex::new(Vec::new()));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let environment = ScriptedEnvironment::new(urls, Arc::clone(&executed));
    let approver = ScriptedApprover {
        decisions: decisions.into(),
        asked: Arc::clone(&asked),
    };
    let (events, _rx) = EventSink::detached();
    let road = Road::new(
        scripts.catalog().expect("the catalog"),
        Box::new(approver),
        ApprovalMode::Always,
        events,
    );
    let mut host = RecipeHost::new(environment, road);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let returned = runtime
        .block_on(scripts.run_recipe(Some("main"), &mut host, &CancelFlag::new()))
        .map_err(|e| e.to_string());
    (returned, taken(&executed), taken(&asked))
}

#[test]
fn a_recipe_step_is_asked_again_when_the_page_changed_during_its_approval() {
    let (returned, executed, asked) = run_scripted_recipe(
        "recipe(\"main\", \"pays\");\nfn main() { click(\"#pay\"); \"paid\" }\n",
        // Asked on the cart; by the answer the page is elsewhere.
        &["http://shop.test/cart", "http://shop.test/elsewhere"],
        vec![
            ApprovalDecision::Approve { note: None },
            ApprovalDecision::Approve { note: None },
        ],
    );
    assert_eq!(returned, Ok(json!("paid")));
    assert_eq!(asked.len(), 2, "asked once per page: {asked:?}");
    assert_eq!(asked[0].url, "http://shop.test/cart");
    assert_eq!(asked[1].url, "http://shop.test/elsewhere");
    assert_eq!(executed.len(), 1, "{executed:?}");
}

#[test]
fn a_persons_edit_to_a_recipe_step_is_validated_before_it_runs() {
    let source = "action(\"archive\", #{ description: \"Archives an order\", \
                  params: #{ id: #{ type: \"integer\" } }, risk: \"commit\" });\n\
                  fn archive(p) { click(\"#archive\"); p.id }\n\
                  recipe(\"main\", \"archives\");\nfn main() { run_action(\"archive\", #{ id: 3 }) }\n";
    // The edit says the id is a word: the schema wants a number.
    let edited = Action::Custom(webagent::actions::CustomAction {
        name: "archive".into(),
        params: json!({"id": "three"}),
        risk: webagent::actions::Risk::Commit,
    });
    let (returned, executed, asked) = run_scripted_recipe(
        source,
        &["http://shop.test/orders/3"],
        vec![ApprovalDecision::Edit(edited)],
    );
    let error = returned.expect_err("the invalid edit does not run");
    assert!(error.contains("the person's edit is not valid"), "{error}");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(executed.is_empty(), "nothing ran: {executed:?}");
}

/// Travels the custom action `peek` (declared `read`, its handler submits
/// a form) along a road in risky mode whose person answers `decision`.
fn travel_peek(
    decision: ApprovalDecision,
) -> (
    webagent::environment::Passage,
    Vec<Action>,
    Vec<ApprovalRequest>,
) {
    travel_custom("read", ApprovalMode::Risky, vec![decision])
}

/// Travels the custom action `peek`, declared with `risk`, whose handler
/// clicks and then submits a form, along a road in `mode` whose person
/// answers `decisions` in turn: how it ended, what ran, what was asked.
fn travel_custom(
    risk: &str,
    mode: ApprovalMode,
    decisions: Vec<ApprovalDecision>,
) -> (
    webagent::environment::Passage,
    Vec<Action>,
    Vec<ApprovalRequest>,
) {
    use webagent::script::{CancelFlag, Scripts};
    let scripts = Scripts::default();
    scripts
        .load_source(
            "peek.rhai",
            &format!(
                "action(\"peek\", #{{ description: \"Reads the order\", risk: \"{risk}\" }});\n\
                 fn peek() {{ run_action(\"submit_form\", #{{ selector: \"#order\" }}); \"peeked\" }}\n"
            ),
        )
        .expect("the action loads");
    let catalog = scripts.catalog().expect("the catalog");
    let peek = catalog.parse(&json!({"peek": {}})).expect("peek parses");
    let executed = Arc::new(Mutex::new(Vec::new()));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let mut environment =
        ScriptedEnvironment::new(&["http://shop.test/order"], Arc::clone(&executed));
    let approver = ScriptedApprover {
        decisions: decisions.into(),
        asked: Arc::clone(&asked),
    };
    let (events, _rx) = EventSink::detached();
    let mut road = Road::new(catalog, Box::new(approver), mode, events)
        .with_scripts(scripts, CancelFlag::new());
    let page = environment.page.clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let passage = runtime.block_on(road.travel(&mut environment, 1, peek, &page, "read the order"));
    (passage, taken(&executed), taken(&asked))
}

#[test]
fn approving_a_custom_action_covers_its_steps_up_to_its_own_risk_unless_asked_for_each() {
    // A commit action approved: its submit is not asked about again.
    let (passage, executed, asked) = travel_custom(
        "commit",
        ApprovalMode::Always,
        vec![ApprovalDecision::Approve { note: None }],
    );
    let names: Vec<&str> = asked.iter().map(|r| r.action.name()).collect();
    assert_eq!(names, ["peek"], "asked once, about the custom action");
    assert_eq!(executed.len(), 1, "{executed:?}");
    assert!(passage.result().is_ok(), "{passage:?}");

    // The person chose to be asked about each step.
    let (_, executed, asked) = travel_custom(
        "commit",
        ApprovalMode::Always,
        vec![
            ApprovalDecision::ApproveAskingEachStep,
            ApprovalDecision::Approve { note: None },
        ],
    );
    let names: Vec<&str> = asked.iter().map(|r| r.action.name()).collect();
    assert_eq!(names, ["peek", "submit_form"]);
    assert_eq!(executed.len(), 1, "{executed:?}");

    // A read action's approval does not reach a commit among its steps.
    let (_, executed, asked) = travel_custom(
        "read",
        ApprovalMode::Always,
        vec![
            ApprovalDecision::Approve { note: None },
            ApprovalDecision::Deny {
                reason: "not that".into(),
            },
        ],
    );
    let names: Vec<&str> = asked.iter().map(|r| r.action.name()).collect();
    assert_eq!(names, ["peek", "submit_form"]);
    assert!(executed.is_empty(), "the refused submit ran: {executed:?}");
}

#[test]
fn approvals_for_the_rest_of_the_run_stop_the_questions_but_not_the_policy() {
    use webagent::environment::Policy;
    let executed = Arc::new(Mutex::new(Vec::new()));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let mut environment =
        ScriptedEnvironment::new(&["http://shop.test/order"], Arc::clone(&executed));
    let approver = ScriptedApprover {
        decisions: vec![
            ApprovalDecision::ApproveNameForRun,
            ApprovalDecision::ApproveAllForRun,
        ]
        .into(),
        asked: Arc::clone(&asked),
    };
    let (events, _rx) = EventSink::detached();
    let catalog = Catalog::builtin();
    let policy = Policy::default();
    let mut road = Road::new(
        catalog.clone(),
        Box::new(approver),
        ApprovalMode::Always,
        events,
    )
    .with_policy(policy);
    let page = environment.page.clone();
    let action = |value: Value| catalog.parse(&value).expect("a valid action");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let passages = runtime.block_on(async {
        let mut passages = Vec::new();
        for value in [
            json!({"click": {"index": 1}}),
            json!({"click": {"index": 2}}),
            json!({"back": {}}),
            json!({"submit_form": {"selector": "#order"}}),
            json!({"execute_javascript": {"script": "1"}}),
        ] {
            passages.push(
                road.travel(&mut environment, 1, action(value), &page, "tidy up")
                    .await,
            );
        }
        passages
    });
    let names: Vec<String> = taken(&asked)
        .iter()
        .map(|r| r.action.name().to_string())
        .collect();
    assert_eq!(
        names,
        ["click", "back"],
        "the second click passed on the first's approval, everything after `back` on its"
    );
    assert_eq!(taken(&executed).len(), 4);
    assert!(
        !passages[4].result().is_ok(),
        "the policy still refuses: {:?}",
        passages[4]
    );
}

#[test]
fn a_read_declared_custom_action_s_inner_commit_is_put_to_the_person_on_its_own() {
    let (passage, executed, asked) = travel_peek(ApprovalDecision::Approve { note: None });
    assert_eq!(
        asked.len(),
        1,
        "asked about the inner submit only: {asked:?}"
    );
    assert_eq!(asked[0].action.name(), "submit_form");
    assert!(
        asked[0].next_goal.contains("custom action `peek`"),
        "{}",
        asked[0].next_goal
    );
    assert_eq!(executed.len(), 1, "{executed:?}");
    assert_eq!(executed[0].name(), "submit_form");
    assert_eq!(
        passage.result(),
        &webagent::actions::ActionResult::ok_with(json!("peeked"))
    );

    let (passage, executed, asked) = travel_peek(ApprovalDecision::Deny {
        reason: "not now".into(),
    });
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(executed.is_empty(), "the refused submit ran: {executed:?}");
    let refused = serde_json::to_value(passage.result()).expect("a result is JSON");
    assert!(
        refused["message"]
            .as_str()
            .unwrap_or("")
            .contains("submit_form failed (denied): not now"),
        "{refused}"
    );
}
