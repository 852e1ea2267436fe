//! The loop at an approval and a question: the decision sent to the
//! waiting agent, edited parameters checked by the catalog, another
//! element picked, skip and stop, and the answer to ask-user.

use crossterm::event::KeyCode;
use serde_json::json;
use tokio::sync::oneshot;
use webagent::environment::ApprovalDecision;
use webagent::tui::app::Modal;
use webagent::tui::{AppEvent, Effect};

use crate::bench::{approval_request, Bench};

#[test]
fn approving_sends_the_decision_to_the_waiting_agent() {
    let mut bench = Bench::on_orders(80, 24);
    let (reply, mut answer) = oneshot::channel();
    bench.send(AppEvent::ApprovalRequested {
        request: Box::new(approval_request()),
        reply,
    });
    bench.key(KeyCode::Char('y'));
    bench.idle();
    assert!(bench.state().modal.is_none());
    let decision = match bench.effects.pop() {
        Some(Effect::Decide { reply, decision }) => {
            reply.send(decision.clone()).expect("receiver alive");
            decision
        }
        other => panic!("expected a decision, got {other:?}"),
    };
    assert_eq!(decision, ApprovalDecision::Approve { note: None });
    assert_eq!(answer.try_recv().ok(), Some(decision));
}

#[test]
fn edited_parameters_are_validated_before_use() {
    let mut bench = Bench::on_orders(80, 24);
    let (reply, _rx) = oneshot::channel();
    bench.send(AppEvent::ApprovalRequested {
        request: Box::new(approval_request()),
        reply,
    });
    bench.key(KeyCode::Char('e'));
    // The editor holds {"click": {"index": 5}} pretty-printed; change 5 to 7.
    bench.key(KeyCode::Down);
    bench.key(KeyCode::Down);
    bench.key(KeyCode::End);
    bench.key(KeyCode::Backspace);
    bench.type_text("7");
    bench.ctrl('s');
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::Decide {
            decision: ApprovalDecision::Edit(action),
            ..
        }] => assert_eq!(action.to_json(), json!({"click": {"index": 7}})),
        other => panic!("expected an edit, got {other:?}"),
    }
}

#[test]
fn an_invalid_edit_is_refused_with_the_catalogs_reason() {
    let mut bench = Bench::on_orders(80, 24);
    let (reply, _rx) = oneshot::channel();
    bench.send(AppEvent::ApprovalRequested {
        request: Box::new(approval_request()),
        reply,
    });
    bench.key(KeyCode::Char('e'));
    bench.key(KeyCode::Down);
    bench.key(KeyCode::Down);
    bench.key(KeyCode::End);
    bench.key(KeyCode::Backspace);
    bench.type_text("\"x\"");
    bench.ctrl('s');
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    match &bench.state().modal {
        Some(Modal::Approval(m)) => {
            let error = m.error.clone().expect("a reason");
            assert!(error.contains("index"), "{error}");
        }
        other => panic!("approval still open, got {other:?}"),
    }
}

#[test]
fn picking_another_element_retargets_the_action() {
    let mut bench = Bench::on_orders(80, 24);
    let (reply, _rx) = oneshot::channel();
    bench.send(AppEvent::ApprovalRequested {
        request: Box::new(approval_request()),
        reply,
    });
    bench.key(KeyCode::Char('p'));
    // The cursor starts on [5], the model's choice; one up is [4].
    bench.key(KeyCode::Char('k'));
    bench.key(KeyCode::Enter);
    bench.idle();
    // Back in the approval with the new target: nothing is decided until
    // the person approves it.
    assert!(
        !bench
            .effects
            .iter()
            .any(|e| matches!(e, Effect::Decide { .. })),
        "picking alone decides nothing"
    );
    assert!(matches!(bench.state().modal, Some(Modal::Approval(_))));
    bench.key(KeyCode::Char('y'));
    bench.idle();
    match bench.effects.last() {
        Some(Effect::Decide {
            decision: ApprovalDecision::Edit(action),
            ..
        }) => assert_eq!(action.to_json(), json!({"click": {"index": 4}})),
        other => panic!("expected an edit, got {other:?}"),
    }
}

#[test]
fn skip_and_stop_answer_the_agent() {
    for (key, expect_stop) in [('n', false), ('x', true)] {
        let mut bench = Bench::on_orders(80, 24);
        let (reply, _rx) = oneshot::channel();
        bench.send(AppEvent::ApprovalRequested {
            request: Box::new(approval_request()),
            reply,
        });
        bench.key(KeyCode::Char(key));
        bench.idle();
        match bench.effects.as_slice() {
            [Effect::Decide { decision, .. }] => {
                if expect_stop {
                    assert_eq!(*decision, ApprovalDecision::Stop);
                } else {
                    assert!(
                        matches!(decision, ApprovalDecision::Deny { reason } if reason.contains("skipped"))
                    );
                }
            }
            other => panic!("expected a decision, got {other:?}"),
        }
    }
}

#[test]
fn a_page_dialog_while_recording_is_accepted_with_enter_and_dismissed_with_esc() {
    let mut bench = Bench::on_orders(100, 30);
    let (reply, _rx) = oneshot::channel();
    bench.send(AppEvent::PageDialog {
        kind: "confirm".into(),
        message: "Cancel order 1003?".into(),
        reply,
    });
    bench.idle();
    let screen = bench.screen();
    assert!(screen.contains("The page asks"), "{screen}");
    assert!(screen.contains("Cancel order 1003?"), "{screen}");
    // A confirm has nothing to type: Enter on the empty field accepts.
    bench.key(KeyCode::Enter);
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::Answer { answer, .. }] => assert_eq!(answer.as_deref(), Some("")),
        other => panic!("expected an answer, got {other:?}"),
    }
    bench.effects.clear();
    let (reply, _rx) = oneshot::channel();
    bench.send(AppEvent::PageDialog {
        kind: "prompt".into(),
        message: "Your name?".into(),
        reply,
    });
    bench.type_text("Ada");
    bench.key(KeyCode::Esc);
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::Answer { answer, .. }] => assert_eq!(answer, &None, "Esc dismisses"),
        other => panic!("expected an answer, got {other:?}"),
    }
}

#[test]
fn the_answer_to_ask_user_goes_back_to_the_model() {
    let mut bench = Bench::on_orders(80, 24);
    let (reply, _rx) = oneshot::channel();
    bench.send(AppEvent::AskUser {
        question: "Which warehouse?".into(),
        reply,
    });
    bench.type_text("Berlin");
    bench.key(KeyCode::Enter);
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::Answer { answer, .. }] => assert_eq!(answer.as_deref(), Some("Berlin")),
        other => panic!("expected an answer, got {other:?}"),
    }
    assert!(bench.state().modal.is_none());
}
