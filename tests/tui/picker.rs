//! The locator picker opened from elsewhere than the listing: on the
//! target of an action waiting for approval (which stays pending), on
//! the element a past session's step acted on, on the element under an
//! Alt+click on the page pane's picture, and on an element picked in a
//! headed window while recording.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Margin, Rect};
use serde_json::json;
use tokio::sync::oneshot;
use webagent::actions::{ActionResult, Target};
use webagent::dom::{ElementIndex, ElementState, Locator};
use webagent::environment::ApprovalDecision;
use webagent::events::Event;
use webagent::script::{LocatorReport, PickedElement};
use webagent::tui::app::Modal;
use webagent::tui::replay::ReplayData;
use webagent::tui::{AppEvent, Effect};
use webagent::vision::{Mark, Screenshot};

use crate::bench::{approval_request, step_record, Bench};

/// What the page answers for the Cancel order button.
fn cancel_report() -> LocatorReport {
    LocatorReport {
        locators: vec![
            (Locator::Id("cancel".into()), 1),
            (
                Locator::Role {
                    role: "button".into(),
                    name: "Cancel order".into(),
                },
                2,
            ),
        ],
        line: r#"click(["id:cancel", "role:button:Cancel order", "css:#cancel"]);"#.into(),
        facts: json!({"tag": "button", "id": "cancel", "css": "#cancel"}),
        state: Some(ElementState {
            visible: true,
            text: "Cancel order".into(),
            value: None,
            checked: None,
        }),
        count: None,
    }
}

/// The one pick the effects ask the page about.
fn asked(bench: &Bench) -> (u64, PickedElement) {
    match bench.effects.as_slice() {
        [Effect::PickLocators { pick, element }] => (*pick, element.clone()),
        other => panic!("expected the page asked for locators, got {other:?}"),
    }
}

#[test]
fn l_in_the_approval_modal_shows_the_targets_locators_and_esc_returns_to_the_pending_approval() {
    let mut bench = Bench::on_orders(120, 40);
    let (reply, mut answer) = oneshot::channel();
    bench.send(AppEvent::ApprovalRequested {
        request: Box::new(approval_request()),
        reply,
    });
    bench.idle();
    bench.effects.clear();
    bench.key(KeyCode::Char('L'));
    bench.idle();
    let (pick, element) = asked(&bench);
    assert_eq!(
        element,
        PickedElement::Target(Target::Index {
            index: ElementIndex(5)
        })
    );
    let screen = bench.screen();
    assert!(
        screen.contains("[5]<button>Cancel order</button>"),
        "{screen}"
    );
    assert!(
        screen.contains("reading the locators from the page"),
        "{screen}"
    );
    bench.send(AppEvent::Locators {
        pick,
        report: Ok(cancel_report()),
    });
    bench.idle();
    let screen = bench.screen();
    let row = |text: &str| {
        screen
            .lines()
            .find(|l| l.contains(text))
            .unwrap_or_else(|| panic!("no {text} on:\n{screen}"))
            .to_string()
    };
    assert!(row("id:cancel").contains("unique"), "{screen}");
    assert!(
        row("role:button:Cancel order").contains("matches several (2)"),
        "{screen}"
    );
    assert!(
        screen.contains(r#"click(["id:cancel", "role:button:Cancel order", "css:#cancel"]);"#),
        "{screen}"
    );
    assert!(
        answer.try_recv().is_err(),
        "the picker decided nothing for the person"
    );
    bench.key(KeyCode::Esc);
    bench.idle();
    assert!(
        matches!(bench.state().modal, Some(Modal::Approval(_))),
        "{:?}",
        bench.state().modal
    );
    assert!(
        bench.screen().contains("Approve step 3?"),
        "{}",
        bench.screen()
    );
    bench.effects.clear();
    bench.key(KeyCode::Char('y'));
    bench.idle();
    match bench.effects.pop() {
        Some(Effect::Decide { reply, decision }) => {
            assert_eq!(decision, ApprovalDecision::Approve { note: None });
            reply.send(decision).expect("the agent still waits");
        }
        other => panic!("expected the approval decided, got {other:?}"),
    }
    assert!(answer.try_recv().is_ok());
}

#[test]
fn l_on_a_past_sessions_step_checks_the_locators_it_kept_and_a_step_with_no_element_says_so() {
    let mut bench = Bench::on_orders(120, 40);
    let facts = json!({"tag": "button", "id": "ship", "text": "Ship", "css": "#ship", "url": "http://127.0.0.1:8080/orders/1042"});
    let mut clicked = step_record();
    clicked.index = 1;
    clicked.result = ActionResult::ok_with(json!({"locator": facts}));
    let mut waited = step_record();
    waited.index = 2;
    waited.action = json!({"wait": {"seconds": 1}});
    let events = vec![
        Event::RunStarted {
            task: "ship order 1042".into(),
            url: "http://127.0.0.1:8080/orders/1042".into(),
            model: "gpt-4o-mini".into(),
            max_steps: 10,
        },
        Event::Step(clicked),
        Event::Step(waited),
    ];
    let path = std::path::PathBuf::from("sessions/2026-11-29T10-00-00-ship.jsonl");
    bench.send(AppEvent::TraceOpened(Ok(Box::new(
        ReplayData::from_events(&path, &events),
    ))));
    bench.idle();
    assert!(bench.screen().contains("REPLAY"), "{}", bench.screen());
    // The cursor starts on the first step.
    bench.effects.clear();
    bench.key(KeyCode::Char('L'));
    bench.idle();
    let (pick, element) = asked(&bench);
    assert_eq!(element, PickedElement::Facts(facts));
    assert!(
        bench
            .screen()
            .contains("step 1's element, <button> \"Ship\""),
        "{}",
        bench.screen()
    );
    let mut report = cancel_report();
    report.locators = vec![(Locator::Id("ship".into()), 0)];
    bench.send(AppEvent::Locators {
        pick,
        report: Ok(report),
    });
    bench.idle();
    let screen = bench.screen();
    assert!(
        screen
            .lines()
            .any(|l| l.contains("id:ship") && l.contains("matches none")),
        "{screen}"
    );
    bench.key(KeyCode::Esc);
    bench.key(KeyCode::Down);
    bench.idle();
    bench.effects.clear();
    bench.key(KeyCode::Char('L'));
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    let notice = bench
        .state()
        .status
        .notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default();
    assert_eq!(
        notice,
        "step 2 acted on no element it kept locators for; L needs one that did"
    );
}

/// Shows the page pane with a `width`×`height` picture marked with
/// `marks`, drawn into its cells; the pane's inside and the cells the
/// picture takes.
fn with_picture(bench: &mut Bench, width: u32, height: u32, marks: Vec<Mark>) -> (Rect, Rect) {
    bench.key(KeyCode::Char('v'));
    bench.send(AppEvent::Picture(Box::new(Screenshot {
        image: Arc::from(Vec::new()),
        mime: "image/jpeg",
        width,
        height,
        scale: 1.0,
        marks,
        masked: 0,
        capture_ms: 1.0,
    })));
    bench.idle();
    let job = bench
        .effects
        .iter()
        .rev()
        .find_map(|e| match e {
            Effect::RenderPicture(job) => Some(job.clone()),
            _ => None,
        })
        .expect("the picture to be drawn");
    let picker = ratatui_image::picker::Picker::from_fontsize((10, 20));
    let rendered = webagent::tui::page::render(&picker, &image::RgbImage::new(width, height), &job)
        .expect("drawn in half-blocks");
    let used = rendered.protocol.area();
    bench.send(AppEvent::PictureRendered(Box::new(rendered)));
    bench.idle();
    bench.effects.clear();
    let (columns, rows) = bench.state().size;
    let pane = webagent::tui::layout::areas_with(Rect::new(0, 0, columns, rows), true).page;
    (pane.inner(Margin::new(1, 1)), used)
}

fn alt_click(bench: &mut Bench, column: u16, row: u16) {
    bench.send(AppEvent::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column,
        row,
        modifiers: KeyModifiers::ALT,
    }));
    bench.idle();
}

#[test]
fn an_alt_click_on_the_page_picture_picks_the_smallest_listed_box_there_else_the_pages_element() {
    let mut bench = Bench::on_orders(160, 48);
    // Refund's box is the picture's left half; Cancel order's, inside it,
    // the top-left quarter; nothing is listed on the right half.
    let (inside, used) = with_picture(
        &mut bench,
        800,
        400,
        vec![
            Mark {
                index: 4,
                x: 0,
                y: 0,
                width: 400,
                height: 400,
                new: false,
            },
            Mark {
                index: 5,
                x: 0,
                y: 0,
                width: 400,
                height: 200,
                new: false,
            },
        ],
    );
    alt_click(&mut bench, inside.x, inside.y);
    let (_, element) = asked(&bench);
    assert_eq!(
        element,
        PickedElement::Target(Target::Index {
            index: ElementIndex(5)
        }),
        "the smaller box wins"
    );
    assert!(
        matches!(
            bench.state().modal,
            Some(Modal::Element { position: 4, .. })
        ),
        "as A on its row: {:?}",
        bench.state().modal
    );
    assert!(
        !bench
            .effects
            .iter()
            .any(|e| matches!(e, Effect::PaneInput(_))),
        "the page was not clicked"
    );
    bench.key(KeyCode::Esc);
    bench.effects.clear();
    alt_click(&mut bench, inside.x, inside.y + used.height - 1);
    let (_, element) = asked(&bench);
    assert_eq!(
        element,
        PickedElement::Target(Target::Index {
            index: ElementIndex(4)
        })
    );
    bench.key(KeyCode::Esc);
    bench.effects.clear();
    alt_click(
        &mut bench,
        inside.x + used.width - 1,
        inside.y + used.height - 1,
    );
    match asked(&bench) {
        (_, PickedElement::Point { x, y }) => {
            assert!(x > 780.0 && x < 800.0 && y > 380.0 && y < 400.0, "{x}, {y}");
        }
        other => panic!("expected the page asked at a point, got {other:?}"),
    }
    assert!(
        matches!(bench.state().modal, Some(Modal::Locators { .. })),
        "{:?}",
        bench.state().modal
    );
    let screen = bench.screen();
    assert!(screen.contains("the element at (79"), "{screen}");
    assert!(
        screen.contains("reading the locators from the page"),
        "{screen}"
    );
}

#[test]
fn an_element_picked_in_a_headed_window_opens_the_assertion_picker_and_its_number_records_it() {
    let mut bench = Bench::on_orders(120, 40);
    bench.key(KeyCode::Char(':'));
    bench.type_text("record checks");
    bench.key(KeyCode::Enter);
    bench.idle();
    bench.effects.clear();
    let facts = json!({"tag": "h1", "text": "Order 1042", "role": "heading", "accessibleName": "Order 1042", "css": "body > h1"});
    bench.send(AppEvent::Recorded(Box::new(
        webagent::browser::record::Input::Pick {
            facts: facts.clone(),
        },
    )));
    bench.idle();
    let (pick, element) = asked(&bench);
    assert_eq!(element, PickedElement::Facts(facts.clone()));
    assert_eq!(
        bench.state().recording.as_ref().map(|r| r.steps().len()),
        Some(0),
        "a pick is no step"
    );
    let report = LocatorReport {
        locators: vec![(
            Locator::Role {
                role: "heading".into(),
                name: "Order 1042".into(),
            },
            1,
        )],
        line: r#"click(["role:heading:Order 1042", "css:body > h1"]);"#.into(),
        facts,
        state: Some(ElementState {
            visible: true,
            text: "Order 1042".into(),
            value: None,
            checked: None,
        }),
        count: None,
    };
    bench.send(AppEvent::Locators {
        pick,
        report: Ok(report),
    });
    bench.idle();
    assert!(
        bench.screen().contains("2  text equals: \"Order 1042\""),
        "{}",
        bench.screen()
    );
    bench.key(KeyCode::Char('2'));
    bench.idle();
    let notice = bench
        .state()
        .status
        .notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default();
    assert_eq!(
        notice,
        r#"recorded step 1: expect_text(["role:heading:Order 1042", "text:Order 1042", "css:body > h1"], "Order 1042");"#
    );
    assert!(bench.state().modal.is_none());
}

#[test]
fn while_a_run_has_the_page_l_on_the_listing_says_so_and_asks_nothing() {
    let mut bench = Bench::on_orders(120, 40);
    bench.app.state.status.run = webagent::tui::app::RunStatus::Running;
    bench.key(KeyCode::Char('L'));
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    assert!(bench.state().modal.is_none());
    assert_eq!(
        bench
            .state()
            .status
            .notice
            .as_ref()
            .map(|n| n.text.as_str()),
        Some("the run has the page; L reads it once the run ends, or at an approval")
    );
}
