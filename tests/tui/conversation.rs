//! The session as a conversation: every action of a list its own log
//! row, messages to a running agent, asking again, follow-up tasks, an
//! MCP client's calls numbered like steps, and the sessions view.

use crossterm::event::KeyCode;
use serde_json::json;
use tokio::sync::oneshot;
use webagent::actions::ActionResult;
use webagent::environment::ApprovalDecision;
use webagent::events::{
    Event, ObservationSummary, Reflection, StepRecord, StepTimings, TokenUsage,
};
use webagent::tui::app::Outcome;
use webagent::tui::{AppEvent, Effect};

use crate::bench::{approval_request, step_record, Bench};
use crate::support::scratch::scratch_dir;

/// A step record of `action` at `index`, its own time and the person's
/// wait apart.
fn list_step(index: usize, action: serde_json::Value, act_ms: u64, wait_ms: u64) -> StepRecord {
    StepRecord {
        index,
        action,
        timings: StepTimings {
            observe_ms: 5,
            llm_ms: 700,
            act_ms,
            wait_ms,
        },
        usage: None,
        ..step_record()
    }
}

fn feed_run_start(bench: &Bench, step: usize) {
    bench.send(AppEvent::agent(Event::RunStarted {
        task: "sign in".into(),
        url: "http://127.0.0.1:8080/login".into(),
        model: "gpt-4o-mini".into(),
        max_steps: 40,
    }));
    bench.send(AppEvent::agent(Event::Observation(ObservationSummary {
        step,
        url: "http://127.0.0.1:8080/login".into(),
        title: "Sign in".into(),
        elements: 3,
        new_elements: 0,
        listing_chars: 90,
    })));
}

fn feed_action(bench: &Bench, record: StepRecord) {
    let (name, parameters) = record
        .action
        .as_object()
        .and_then(|o| o.iter().next())
        .map(|(k, v)| (k.clone(), v.clone()))
        .expect("an action");
    bench.send(AppEvent::agent(Event::ToolCall {
        name: name.clone(),
        parameters,
    }));
    bench.send(AppEvent::agent(Event::ToolResult {
        name,
        result: record.result.clone(),
    }));
    bench.send(AppEvent::agent(Event::Step(record)));
}

#[test]
fn every_action_of_a_list_is_its_own_log_row_with_its_own_result_and_time() {
    let mut bench = Bench::on_orders(120, 30);
    feed_run_start(&bench, 1);
    feed_action(
        &bench,
        list_step(
            1,
            json!({"input_text": {"selector": "#user", "text": "ann"}}),
            31,
            0,
        ),
    );
    feed_action(
        &bench,
        list_step(
            1,
            json!({"input_text": {"selector": "#pass", "text": "pw"}}),
            27,
            0,
        ),
    );
    feed_action(
        &bench,
        list_step(1, json!({"click": {"selector": "#login"}}), 84, 4873),
    );
    bench.idle();
    type Row = (Option<usize>, String, Option<u64>, Option<u64>);
    let rows: Vec<Row> = bench
        .state()
        .log
        .iter()
        .map(|e| (e.step, e.action.clone(), e.ms, e.wait_ms))
        .collect();
    assert_eq!(
        rows,
        vec![
            (Some(1), "input_text".to_string(), Some(31), None),
            (Some(1), "input_text".to_string(), Some(27), None),
            (Some(1), "click".to_string(), Some(84), Some(4873)),
        ]
    );
    let screen = bench.screen();
    let click = screen
        .lines()
        .find(|l| l.contains("#login") && l.contains("  1 click"))
        .unwrap_or_else(|| panic!("no click row:\n{screen}"));
    assert!(click.contains("84ms +you 4.9s"), "the wait apart: {click}");
    assert!(screen.contains("#pass"), "{screen}");
}

#[test]
fn the_task_field_talks_to_a_running_agent_and_marks_the_message_once_read() {
    let mut bench = Bench::on_orders(120, 30);
    bench.key(KeyCode::Char('t'));
    bench.type_text("export the orders");
    bench.key(KeyCode::Enter);
    feed_run_start(&bench, 1);
    bench.idle();
    bench.effects.clear();
    // The field kept the focus: the message is typed straight in.
    bench.type_text("the export button is in the ⋯ menu");
    bench.key(KeyCode::Enter);
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::Steer(text)] => assert_eq!(text, "the export button is in the ⋯ menu"),
        other => panic!("expected the message for the agent, got {other:?}"),
    }
    let screen = bench.screen();
    let row = screen
        .lines()
        .find(|l| l.contains("you say"))
        .unwrap_or_else(|| panic!("the message is in the log:\n{screen}"));
    assert!(row.contains("waiting"), "{row}");
    assert!(screen.contains("Message to the agent"), "{screen}");
    // The agent's next request carried it.
    bench.send(AppEvent::agent(Event::PersonMessage {
        step: 2,
        text: "the export button is in the ⋯ menu".into(),
    }));
    bench.idle();
    let message = bench
        .state()
        .log
        .iter()
        .find(|e| e.action == "you say")
        .expect("the row");
    assert_eq!((message.step, &message.outcome), (Some(2), &Outcome::Ok));
    assert_eq!(bench.state().log.len(), 1, "one row, not two");
    assert!(bench.screen().contains("sent"), "{}", bench.screen());
}

#[test]
fn r_asks_again_for_a_failed_step_and_for_another_proposal_at_the_approval() {
    let mut bench = Bench::on_orders(120, 30);
    bench.key(KeyCode::Char('t'));
    bench.type_text("pay");
    bench.key(KeyCode::Enter);
    bench.key(KeyCode::Esc);
    feed_run_start(&bench, 2);
    feed_action(
        &bench,
        StepRecord {
            result: ActionResult::not_found("no element matches #pay-now"),
            ..list_step(2, json!({"click": {"selector": "#pay-now"}}), 5, 0)
        },
    );
    bench.idle();
    bench.effects.clear();
    bench.key(KeyCode::Char('r'));
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::RetryStep(2)]),
        "{:?}",
        bench.effects
    );
    // Asked again, step 2 ran: nothing failed to ask again for.
    feed_action(&bench, list_step(2, json!({"click": {"index": 3}}), 5, 0));
    bench.idle();
    bench.effects.clear();
    bench.key(KeyCode::Char('r'));
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    let notice = bench.state().status.notice.clone().expect("why not");
    assert!(notice.text.contains("did not fail"), "{notice:?}");
    // At the approval, r answers the agent: ask the model again.
    let (reply, _answer) = oneshot::channel();
    bench.send(AppEvent::ApprovalRequested {
        request: Box::new(approval_request()),
        reply,
    });
    bench.key(KeyCode::Char('r'));
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::Decide { decision, .. }] => assert_eq!(*decision, ApprovalDecision::Retry),
        other => panic!("expected the retry decision, got {other:?}"),
    }
    let rows: Vec<&str> = bench
        .state()
        .log
        .iter()
        .map(|e| e.action.as_str())
        .collect();
    assert_eq!(rows, ["click", "click"], "the failed attempt stays");
}

#[test]
fn a_finished_task_is_followed_up_until_n_starts_fresh() {
    let mut bench = Bench::on_orders(120, 30);
    bench.key(KeyCode::Char('t'));
    bench.type_text("ship order 1003");
    bench.key(KeyCode::Enter);
    bench.key(KeyCode::Esc);
    feed_run_start(&bench, 1);
    bench.send(AppEvent::agent(Event::Done {
        success: true,
        text: "shipped".into(),
        reason: webagent::events::EndReason::Done,
        steps: 1,
        usage: TokenUsage::default(),
    }));
    bench.idle();
    assert!(
        bench.screen().contains("follows up on 1 earlier task"),
        "{}",
        bench.screen()
    );
    bench.effects.clear();
    bench.key(KeyCode::Char('N'));
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::NewConversation]),
        "{:?}",
        bench.effects
    );
    assert!(!bench.screen().contains("follows up"), "{}", bench.screen());
    // `:new` says the same through the command line.
    bench.effects.clear();
    bench.key(KeyCode::Char(':'));
    bench.type_text("new");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::NewConversation]),
        "{:?}",
        bench.effects
    );
}

#[test]
fn an_mcp_clients_calls_are_numbered_like_steps_from_one() {
    let mut bench = Bench::on_orders(120, 30);
    bench.app.state.mcp = true;
    for n in 1..=2 {
        feed_action(
            &bench,
            StepRecord {
                reflection: Reflection {
                    next_goal: "MCP client claude-code asks: click 3".into(),
                    ..Reflection::default()
                },
                ..list_step(n, json!({"click": {"index": 3}}), 9, 0)
            },
        );
    }
    bench.idle();
    let steps: Vec<Option<usize>> = bench.state().log.iter().map(|e| e.step).collect();
    assert_eq!(steps, [Some(1), Some(2)]);
    assert!(
        bench.screen().contains("MCP client claude-code"),
        "{}",
        bench.screen()
    );
}

#[test]
fn the_sessions_view_lists_searches_and_replays_a_trace_read_only() {
    use webagent::bench::tui::{synthetic_task, write_synthetic_traces};
    use webagent::tui::replay::ReplayData;
    let dir = scratch_dir("sessions-view");
    write_synthetic_traces(&dir, 30).expect("traces written");
    std::fs::write(
        dir.join("20990101T000000Z-1.jsonl"),
        "{\"type\":\"run_started\",\"task\":\"t\",\"url\":\"u\",\"model\":\"m\",\"max_steps\":1}\nnot json\n",
    )
    .expect("a broken trace");
    let mut bench = Bench::on_orders(120, 40);
    bench.key(KeyCode::Char('S'));
    bench.idle();
    let generation = match bench.effects.as_slice() {
        [Effect::ListSessions { generation }] => *generation,
        other => panic!("expected the listing asked for, got {other:?}"),
    };
    webagent::tui::services::read_sessions(
        &dir,
        generation,
        &std::sync::atomic::AtomicU64::new(generation),
        &bench.tx,
    );
    bench.idle();
    let screen = bench.screen();
    assert!(screen.contains("Past sessions 31"), "{screen}");
    let rows: Vec<&str> = screen.lines().filter(|l| l.contains("2026-")).collect();
    assert!(
        rows[0].contains(&synthetic_task(29, 30)),
        "newest first:\n{screen}"
    );
    assert!(
        screen.contains("does not read: line 2:"),
        "the broken one says why:\n{screen}"
    );
    bench.key(KeyCode::Char('/'));
    bench.type_text("blender");
    bench.idle();
    assert!(bench.screen().contains("· 1 match"), "{}", bench.screen());
    bench.key(KeyCode::Enter);
    bench.key(KeyCode::Enter);
    bench.idle();
    let path = match bench.effects.last() {
        Some(Effect::OpenTrace(path)) => path.clone(),
        other => panic!("expected the trace opened, got {other:?}"),
    };
    let events = webagent::events::read_trace(&path).expect("it reads");
    bench.send(AppEvent::TraceOpened(Ok(Box::new(
        ReplayData::from_events(&path, &events),
    ))));
    bench.idle();
    let screen = bench.screen();
    assert!(screen.contains("REPLAY"), "{screen}");
    assert!(screen.contains("goal of step 1 of trace 15"), "{screen}");
    assert!(
        screen.contains("Elements as recorded at step 1"),
        "{screen}"
    );
    bench.key(KeyCode::Char('j'));
    bench.idle();
    let screen = bench.screen();
    assert!(screen.contains("goal of step 2 of trace 15"), "{screen}");
    assert!(
        screen.contains("Elements as recorded at step 2"),
        "{screen}"
    );
    assert!(
        screen.contains("[3]<button>Ship order</button>"),
        "{screen}"
    );
    bench.effects.clear();
    bench.key(KeyCode::Char('E'));
    bench.type_text("from_the_past");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::ExportTrace { path: p, name }] if *p == path && name == "from_the_past"),
        "{:?}",
        bench.effects
    );
    // Esc goes back to the list, again to the live panes as they were.
    bench.key(KeyCode::Esc);
    bench.idle();
    assert!(
        bench.screen().contains("Past sessions 31"),
        "{}",
        bench.screen()
    );
    bench.key(KeyCode::Esc);
    bench.idle();
    let screen = bench.screen();
    assert!(!screen.contains("REPLAY"), "{screen}");
    assert!(
        screen.contains("Refund</button>"),
        "the live listing is back:\n{screen}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn keys_typed_as_an_approval_opens_go_to_the_task_field_until_the_person_pauses() {
    let mut bench = Bench::on_orders(120, 30);
    // A grace longer than the test, so the held keys do not depend on
    // how fast the machine is; a grace of zero below stands for a pause.
    bench.app.state.typing_grace = std::time::Duration::from_secs(3600);
    bench.key(KeyCode::Char('t'));
    bench.type_text("ship order 1003");
    bench.key(KeyCode::Enter);
    feed_run_start(&bench, 1);
    bench.idle();
    bench.effects.clear();
    // The person goes on typing a message; the approval opens mid-word.
    bench.type_text("please sa");
    bench.idle();
    let (reply, _answer) = oneshot::channel();
    bench.send(AppEvent::ApprovalRequested {
        request: Box::new(approval_request()),
        reply,
    });
    bench.type_text("y yes");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(
        bench.effects.is_empty(),
        "no decision and no message: {:?}",
        bench.effects
    );
    assert_eq!(bench.state().task.lines(), ["please say yes"]);
    let notice = bench.state().status.notice.clone().expect("what was held");
    assert!(
        notice.text.contains("`y yes` went to the task field")
            && notice.text.contains("the approval dialog"),
        "{}",
        notice.text
    );
    assert!(
        bench.screen().contains("Approve step"),
        "{}",
        bench.screen()
    );
    // After a pause the same key is the dialog's.
    bench.app.state.typing_grace = std::time::Duration::ZERO;
    bench.key(KeyCode::Char('y'));
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::Decide { decision, .. }] => {
            assert_eq!(*decision, ApprovalDecision::Approve { note: None })
        }
        other => panic!("expected the approval, got {other:?}"),
    }
    assert_eq!(bench.state().task.lines(), ["please say yes"]);
}
