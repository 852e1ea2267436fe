//! The command line: an action run from it and logged, saving state,
//! downloads and tabs an action caused, a bad command, completion, the
//! scripts' custom actions, recipes with their parameters, and exporting
//! a session as a recipe.

use std::path::PathBuf;

use crossterm::event::KeyCode;
use serde_json::json;
use webagent::actions::{ActionResult, Catalog, Target};
use webagent::environment::ApprovalMode;
use webagent::events::{Event, TokenUsage};
use webagent::script::PickedElement;
use webagent::tui::app::{Outcome, RunStatus};
use webagent::tui::{AppEvent, Effect, SessionExportError};

use crate::bench::{step_record, with_acme_scripts, Bench};
use crate::support::scratch::scratch_dir;

#[test]
fn a_command_line_action_runs_and_lands_in_the_log() {
    let mut bench = Bench::on_orders(80, 24);
    bench.key(KeyCode::Char(':'));
    bench.type_text("click 4");
    bench.key(KeyCode::Enter);
    bench.idle();
    let id = match bench.effects.as_slice() {
        [Effect::RunAction { id, action }] => {
            assert_eq!(action.to_json(), json!({"click": {"index": 4}}));
            *id
        }
        other => panic!("expected one action, got {other:?}"),
    };
    assert_eq!(bench.state().log[0].outcome, Outcome::Pending);
    assert!(bench.state().command_line.is_none());
    bench.send(AppEvent::ActionFinished {
        id,
        result: ActionResult::ok(),
        ms: 87,
    });
    bench.idle();
    let screen = bench.screen();
    let row = screen
        .lines()
        .find(|l| l.contains("click") && l.contains("87ms"))
        .unwrap_or_else(|| panic!("log row:\n{screen}"));
    assert!(row.contains("Refund"), "target text in the row: {row}");
    assert!(row.contains(" ok "), "{row}");
}

#[test]
fn state_save_on_the_command_line_asks_the_browser_to_save_and_shows_the_outcome() {
    let mut bench = Bench::on_orders(200, 48);
    bench.app.state.status.sign_in = Some("state .webagent/state.json".into());
    bench.key(KeyCode::Char(':'));
    bench.type_text("state save signed-in.json");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(
        matches!(
            bench.effects.as_slice(),
            [Effect::SaveState(Some(path))] if path == &PathBuf::from("signed-in.json")
        ),
        "{:?}",
        bench.effects
    );
    assert!(bench.state().command_line.is_none());
    bench.send(AppEvent::Notice {
        error: false,
        text: "saved 2 cookies and the local storage of 1 origins to signed-in.json".into(),
    });
    bench.idle();
    let screen = bench.screen();
    assert!(screen.contains("saved 2 cookies"), "{screen}");
    // The status line says what keeps the sign-ins.
    assert!(screen.contains("state .webagent/state.json"), "{screen}");

    // A wrong form keeps the line open and shows the usage.
    bench.effects.clear();
    bench.key(KeyCode::Char(':'));
    bench.type_text("state load x");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    let notice = bench.state().status.notice.clone().expect("a notice");
    assert!(
        notice.error && notice.text.contains("state save"),
        "{notice:?}"
    );
}

#[test]
fn a_download_and_a_tab_an_action_caused_show_in_the_log_and_status() {
    let mut bench = Bench::on_orders(120, 30);
    bench.send(AppEvent::ActionFinished {
        id: 41,
        result: ActionResult::ok_with(json!({
            "downloads": [{
                "file": ".webagent/downloads/orders.csv",
                "name": "orders.csv",
                "size": 31,
                "type": "text/csv",
                "state": "completed",
                "url": "http://127.0.0.1:8080/orders.csv"
            }],
            "new_tab": {"url": "http://127.0.0.1:8080/report", "title": "Report", "switched": true}
        })),
        ms: 12,
    });
    bench.idle();
    let screen = bench.screen();
    let row = screen
        .lines()
        .find(|l| l.contains("download"))
        .unwrap_or_else(|| panic!("a download row:\n{screen}"));
    assert!(row.contains("orders.csv"), "{row}");
    assert!(
        screen.contains("a tab opened: http://127.0.0.1:8080/report"),
        "{screen}"
    );
}

#[test]
fn a_bad_command_keeps_the_line_open_and_says_why() {
    let mut bench = Bench::on_orders(80, 24);
    bench.key(KeyCode::Char(':'));
    bench.type_text("clik 4");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    assert!(bench.state().command_line.is_some());
    let notice = bench
        .state()
        .status
        .notice
        .clone()
        .expect("an error notice");
    assert!(notice.error);
    assert!(notice.text.contains("clik"), "{}", notice.text);
}

/// What the `:` line says (its rows above it, joined), and the line: the
/// message is the rows from the one starting with its mark.
fn line_and_message(bench: &Bench) -> (String, String) {
    let screen = bench.screen();
    let rows: Vec<&str> = screen.lines().collect();
    let Some((line, above)) = rows.split_last() else {
        panic!("an empty screen");
    };
    let start = above
        .iter()
        .rposition(|r| r.starts_with("› ") || r.starts_with("✗ "))
        .unwrap_or_else(|| panic!("no message above the line:\n{screen}"));
    let message: Vec<&str> = above[start..].iter().map(|r| r.trim_end()).collect();
    (message.join(" "), line.trim_end().to_string())
}

#[test]
fn tab_shows_the_parameters_above_the_line_for_actions_commands_and_recipes() {
    for (w, h) in crate::bench::sizes() {
        let mut bench = Bench::on_orders(w, h);
        with_acme_scripts(&mut bench);
        bench.key(KeyCode::Char(':'));
        bench.type_text("inp");
        bench.key(KeyCode::Tab);
        bench.idle();
        let (message, line) = line_and_message(&bench);
        assert_eq!(line, ":input_text");
        assert!(
            message.starts_with("› input_text <target> <text>"),
            "{w}x{h}: {message}"
        );
        // The workbench's own commands complete from the same table.
        bench.key(KeyCode::Esc);
        bench.key(KeyCode::Char(':'));
        bench.type_text("res");
        bench.key(KeyCode::Tab);
        bench.idle();
        let (message, line) = line_and_message(&bench);
        assert_eq!(line, ":resume");
        assert!(
            message.starts_with("› resume [TRACE] · continue a run"),
            "{w}x{h}: {message}"
        );
        // A recipe's name completes to the parameters it declares.
        bench.key(KeyCode::Esc);
        bench.key(KeyCode::Char(':'));
        bench.type_text("recipe new_o");
        bench.key(KeyCode::Tab);
        bench.idle();
        let (message, line) = line_and_message(&bench);
        assert_eq!(line, ":recipe new_order");
        assert!(message.contains("new_order_refunded"), "{w}x{h}: {message}");
        bench.key(KeyCode::Tab);
        bench.idle();
        let (message, line) = line_and_message(&bench);
        assert_eq!(line, ":recipe new_order");
        assert!(
            message.contains("customer (string") && message.contains("quantity (integer"),
            "{w}x{h}: {message}"
        );
    }
}

#[test]
fn tab_completes_action_names_and_shows_their_usage() {
    let mut bench = Bench::on_orders(160, 48);
    bench.key(KeyCode::Char(':'));
    bench.type_text("inp");
    bench.key(KeyCode::Tab);
    bench.idle();
    let line = bench
        .state()
        .command_line
        .as_ref()
        .map(|f| f.lines().join(""));
    assert_eq!(line.as_deref(), Some("input_text "));
    let usage = bench
        .state()
        .status
        .notice
        .clone()
        .expect("usage shown")
        .text;
    assert!(usage.starts_with("input_text <target> <text>"), "{usage}");
    // Typing goes on after the completion, and the action runs.
    bench.type_text("4 \"hello\"");
    bench.key(KeyCode::Enter);
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::RunAction { action, .. }] => assert_eq!(
            action.to_json(),
            json!({"input_text": {"index": 4, "text": "hello", "clear": true}})
        ),
        other => panic!("expected the action, got {other:?}"),
    }
    // Several candidates are listed.
    bench.key(KeyCode::Char(':'));
    bench.type_text("s");
    bench.key(KeyCode::Tab);
    bench.idle();
    let listed = bench
        .state()
        .status
        .notice
        .clone()
        .expect("candidates")
        .text;
    assert!(
        listed.contains("scroll") && listed.contains("screenshot"),
        "{listed}"
    );
}

fn command_line_text(bench: &Bench) -> Option<String> {
    bench
        .state()
        .command_line
        .as_ref()
        .map(|f| f.lines().join(""))
}

#[test]
fn custom_actions_from_the_scripts_run_and_complete_on_the_command_line() {
    let mut bench = Bench::on_orders(160, 48);
    // Before the scripts load, the name is unknown and the line says so.
    bench.key(KeyCode::Char(':'));
    bench.type_text("refund_order 1003");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    bench.key(KeyCode::Esc);
    with_acme_scripts(&mut bench);

    bench.key(KeyCode::Char(':'));
    bench.type_text("refu");
    bench.key(KeyCode::Tab);
    bench.idle();
    assert_eq!(command_line_text(&bench).as_deref(), Some("refund_order "));
    let usage = bench.state().status.notice.clone().expect("usage").text;
    assert!(usage.starts_with("refund_order"), "{usage}");
    bench.type_text("1003");
    bench.key(KeyCode::Enter);
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::RunAction { action, .. }] => {
            assert_eq!(action.to_json(), json!({"refund_order": {"id": 1003}}))
        }
        other => panic!("expected the custom action, got {other:?}"),
    }
    assert_eq!(bench.state().log[0].action, "refund_order");

    // A script running for a hand-typed action is cancelled by the stop key.
    bench.effects.clear();
    bench.key(KeyCode::Char('s'));
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::CancelScript]),
        "{:?}",
        bench.effects
    );

    // A reload that drops the file takes its actions off the line again.
    bench.effects.clear();
    bench.send(AppEvent::ScriptsLoaded {
        catalog: Box::new(Catalog::builtin()),
        recipes: Vec::new(),
        files: 0,
    });
    bench.key(KeyCode::Char(':'));
    bench.type_text("sign_in");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    let notice = bench.state().status.notice.clone().expect("refused");
    assert!(
        notice.error && notice.text.contains("sign_in"),
        "{notice:?}"
    );
}

#[test]
fn a_recipe_runs_from_the_command_line_with_its_steps_in_the_log() {
    let mut bench = Bench::on_orders(160, 48);
    with_acme_scripts(&mut bench);
    // R opens the line on `recipe ` and lists what is loaded.
    bench.key(KeyCode::Char('R'));
    bench.idle();
    assert_eq!(command_line_text(&bench).as_deref(), Some("recipe "));
    let listed = bench.state().status.notice.clone().expect("listed").text;
    assert!(
        listed.contains("new_order_refunded") && listed.contains("orders_overview"),
        "{listed}"
    );
    // An unknown name is refused with what exists; Tab completes.
    bench.type_text("nosuch");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    let refused = bench.state().status.notice.clone().expect("refused");
    assert!(
        refused.error && refused.text.contains("orders_overview"),
        "{refused:?}"
    );
    bench.key(KeyCode::Esc);
    bench.key(KeyCode::Char(':'));
    bench.type_text("recipe orders_o");
    bench.key(KeyCode::Tab);
    bench.idle();
    assert_eq!(
        command_line_text(&bench).as_deref(),
        Some("recipe orders_overview ")
    );
    bench.key(KeyCode::Enter);
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::RunRecipe {
            name,
            params,
            approval,
        }] => {
            assert_eq!(name, "orders_overview");
            assert!(params.is_empty(), "it takes none: {params:?}");
            assert_eq!(*approval, ApprovalMode::Risky);
        }
        other => panic!("expected the recipe to start, got {other:?}"),
    }
    assert_eq!(bench.state().status.run, RunStatus::Running);
    assert!(bench.state().command_line.is_none());
    let model = bench.state().status.model.clone();

    // Its steps arrive as agent-like events without observations.
    bench.send(AppEvent::agent(Event::RunStarted {
        task: "recipe orders_overview".into(),
        url: "http://127.0.0.1:8080/".into(),
        model: "none (recipe)".into(),
        max_steps: 0,
    }));
    bench.send(AppEvent::agent(Event::ToolCall {
        name: "navigate".into(),
        parameters: json!({"url": "/orders"}),
    }));
    bench.send(AppEvent::agent(Event::ToolResult {
        name: "navigate".into(),
        result: ActionResult::ok(),
    }));
    bench.send(AppEvent::agent(Event::ToolCall {
        name: "click".into(),
        parameters: json!({"selector": "#filter"}),
    }));
    bench.idle();
    let steps: Vec<(Option<usize>, String)> = bench
        .state()
        .log
        .iter()
        .map(|e| (e.step, e.action.clone()))
        .collect();
    assert_eq!(
        steps,
        [
            (Some(1), "navigate".to_string()),
            (Some(2), "click".to_string())
        ]
    );
    assert_eq!(bench.state().log[0].outcome, Outcome::Ok);
    assert_eq!(bench.state().log[1].target, "#filter");
    assert_eq!(
        bench.state().status.model,
        model,
        "the configured model stays"
    );

    // The stop key stops the recipe like a run.
    bench.effects.clear();
    bench.key(KeyCode::Char('s'));
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::StopRun]),
        "{:?}",
        bench.effects
    );
    bench.send(AppEvent::agent(Event::Done {
        success: false,
        text: "stopped by the person".into(),
        reason: webagent::events::EndReason::Stopped,
        steps: 2,
        usage: TokenUsage::default(),
    }));
    bench.send(AppEvent::RunEnded { error: None });
    bench.idle();
    assert_eq!(
        bench.state().status.run,
        RunStatus::Finished { success: false }
    );
    assert!(bench.state().recipe.is_none());
    assert!(bench.screen().contains("stopped by the person"));
}

#[test]
fn the_export_key_reports_the_file_or_why_not() {
    let mut bench = Bench::on_orders(80, 24);
    with_acme_scripts(&mut bench);
    bench.key(KeyCode::Char('E'));
    bench.idle();
    // The name is asked for; one a loaded recipe has is refused, and the
    // line stays for another.
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    bench.type_text("orders_overview");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    let notice = bench.state().status.notice.clone().expect("a refusal");
    assert!(
        notice
            .text
            .contains("a recipe named `orders_overview` is loaded already"),
        "{notice:?}"
    );
    assert!(bench.state().command_line.is_some());
    for _ in 0.."orders_overview".len() {
        bench.key(KeyCode::Backspace);
    }
    bench.type_text("weekly_check");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::ExportSession { name }] if name == "weekly_check"),
        "{:?}",
        bench.effects
    );
    bench.send(AppEvent::Exported(Ok(PathBuf::from(
        "recipes/session-1763771000.rhai",
    ))));
    bench.idle();
    assert!(
        bench.screen().contains("recipes/session-1763771000.rhai"),
        "{}",
        bench.screen()
    );
    let row = &bench.state().log[0];
    assert_eq!(
        (row.action.as_str(), row.target.as_str()),
        ("export", "recipes/session-1763771000.rhai")
    );
    bench.send(AppEvent::Exported(Err(
        SessionExportError::NothingToReplay.into()
    )));
    bench.idle();
    let notice = bench.state().status.notice.clone().expect("failure shown");
    assert!(notice.error, "{notice:?}");
    assert!(notice.text.contains("nothing to replay yet"), "{notice:?}");
}

#[test]
fn a_recipes_parameters_are_given_on_the_command_line_and_checked_before_it_runs() {
    let mut bench = Bench::on_orders(160, 48);
    with_acme_scripts(&mut bench);
    let run = |bench: &mut Bench, line: &str| {
        bench.key(KeyCode::Char(':'));
        bench.type_text(line);
        bench.key(KeyCode::Enter);
        bench.idle();
    };
    // A name the recipe does not declare, and a value of the wrong type,
    // are refused with what it takes; nothing starts.
    run(&mut bench, "recipe new_order quantity=many colour=red");
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    let refused = bench.state().status.notice.clone().expect("refused");
    assert!(refused.error, "{refused:?}");
    for part in [
        "unknown parameter `colour`",
        "`quantity`",
        "customer",
        "integer",
    ] {
        assert!(refused.text.contains(part), "{part}: {}", refused.text);
    }
    assert_ne!(bench.state().status.run, RunStatus::Running);
    bench.key(KeyCode::Esc);
    // Given values are read as the declared types; a quoted value keeps
    // its spaces; the rest take their defaults.
    run(
        &mut bench,
        r#"recipe new_order customer="Mary Jackson" quantity=3"#,
    );
    match bench.effects.as_slice() {
        [Effect::RunRecipe { name, params, .. }] => {
            assert_eq!(name, "new_order");
            assert_eq!(params.get("customer"), Some(&json!("Mary Jackson")));
            assert_eq!(params.get("quantity"), Some(&json!(3)));
            assert_eq!(params.get("product"), Some(&json!("Mechanical keyboard")));
        }
        other => panic!("expected the recipe to start, got {other:?}"),
    }
    assert_eq!(bench.state().status.run, RunStatus::Running);
}

#[test]
fn a_session_exports_as_a_recipe_that_compiles() {
    use webagent::tui::services::{export_session, SessionRecord};
    let dir = scratch_dir("export");
    // Nothing done yet: a clear refusal, no file.
    let empty = export_session(&[], &dir, "empty");
    assert!(
        empty
            .as_ref()
            .is_err_and(|why| why.to_string().contains("nothing to replay")),
        "{empty:?}"
    );
    let catalog = Catalog::builtin();
    let mut record = SessionRecord::default();
    let navigate = catalog
        .parse_command("navigate http://127.0.0.1:8080/login")
        .expect("navigate parses");
    record.record_manual(&navigate, &ActionResult::ok(), 40);
    let fill = catalog
        .parse_command("input_text 0 \"admin@acme.test\"")
        .expect("input_text parses");
    let located = ActionResult::ok_with(json!({"locator": {
        "id": "email", "tag": "input", "url": "http://127.0.0.1:8080/login"
    }}));
    record.record_manual(&fill, &located, 12);
    // A later run's steps follow on instead of restarting at 1.
    let base = record.base();
    let mut step = step_record();
    step.index = 1;
    step.result = ActionResult::Failure {
        reason: webagent::actions::FailureReason::NotFound,
        message: "gone".into(),
    };
    record.record(base, &Event::Step(step));
    let numbers: Vec<usize> = record
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::Step(s) => Some(s.index),
            _ => None,
        })
        .collect();
    assert_eq!(numbers, [1, 2, 3]);

    let path = export_session(record.events(), &dir, "sign_in_by_hand").expect("exported");
    assert_eq!(path, dir.join("sign_in_by_hand.rhai"));
    // A second export of that name never replaces the file.
    let again = export_session(record.events(), &dir, "sign_in_by_hand");
    assert!(
        again
            .as_ref()
            .is_err_and(|why| why.to_string().contains("exists already")),
        "{again:?}"
    );
    let source = std::fs::read_to_string(&path).expect("the file was written");
    // Portable: the path on whatever origin the recipe runs against.
    assert!(source.contains("navigate(\"/login\")"), "{source}");
    assert!(source.contains("admin@acme.test"), "{source}");
    assert!(
        source.contains("\"id:email\""),
        "by id, not index:\n{source}"
    );
    assert!(source.contains("step 3"), "{source}");
    // The file is a recipe the script engine accepts.
    let scripts = webagent::script::Scripts::default();
    let summary = scripts.load_file(&path).expect("the export compiles");
    assert_eq!(summary.recipes, ["sign_in_by_hand"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The message the status line shows now.
fn notice(bench: &Bench) -> String {
    bench
        .state()
        .status
        .notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default()
}

#[test]
fn record_starts_takes_steps_and_edits_and_stop_asks_for_the_file() {
    let mut bench = Bench::on_orders(120, 40);
    let run = |bench: &mut Bench, line: &str| {
        bench.effects.clear();
        bench.key(KeyCode::Char(':'));
        bench.type_text(line);
        bench.key(KeyCode::Enter);
        bench.idle();
    };
    run(&mut bench, "record stop");
    assert!(
        notice(&bench).contains("nothing is being recorded"),
        "{}",
        notice(&bench)
    );
    assert!(
        bench.state().command_line.is_some(),
        "the line stays for a fix"
    );
    bench.key(KeyCode::Esc);

    run(&mut bench, "record Sign-In");
    assert!(notice(&bench).contains("snake_case"), "{}", notice(&bench));
    bench.key(KeyCode::Esc);
    run(&mut bench, "record sign_in");
    assert!(
        matches!(bench.effects.as_slice(), [Effect::Record(true)]),
        "{:?}",
        bench.effects
    );
    let facts = |id: &str| json!({"tag": "input", "id": id, "name": id, "css": format!("#{id}")});
    bench.send(AppEvent::Recorded(Box::new(
        webagent::browser::record::Input::Fill {
            facts: facts("email"),
            value: Some("ada@example.test".into()),
        },
    )));
    bench.send(AppEvent::Recorded(Box::new(
        webagent::browser::record::Input::Click {
            facts: facts("terms"),
        },
    )));
    bench.idle();
    assert!(
        bench.screen().contains("Recording sign_in · 2 steps"),
        "{}",
        bench.screen()
    );
    run(&mut bench, "record rename email login");
    assert_eq!(notice(&bench), "the parameter email is now login");
    run(&mut bench, "record goal 9 nothing");
    assert!(
        notice(&bench).contains("N a step from 1 to 2"),
        "{}",
        notice(&bench)
    );
    bench.key(KeyCode::Esc);
    run(&mut bench, "record undo");
    assert!(notice(&bench).contains("1 step left"), "{}", notice(&bench));
    run(&mut bench, "record stop");
    assert!(
        matches!(bench.effects.as_slice(), [Effect::Record(false)]),
        "{:?}",
        bench.effects
    );
    bench.effects.clear();
    bench.send(AppEvent::RecordingStopped);
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::SaveRecording { name, source }] => {
            assert_eq!(name, "sign_in");
            assert!(source.contains("params.login"), "{source}");
            assert!(!source.contains("id:terms"), "{source}");
        }
        other => panic!("expected the recipe to be saved, got {other:?}"),
    }
    assert!(bench.state().recording.is_none());
}

#[test]
fn the_locator_picker_shows_each_locator_checked_and_copies_the_line() {
    let mut bench = Bench::on_orders(120, 40);
    bench.key(KeyCode::Char('L'));
    bench.idle();
    let pick = match bench.effects.as_slice() {
        [Effect::PickLocators {
            pick,
            element: PickedElement::Target(Target::Index { index }),
        }] => {
            assert_eq!(
                Some(*index),
                bench.state().page.as_ref().map(|p| p.elements[0].index)
            );
            *pick
        }
        other => panic!("expected the locators to be asked for, got {other:?}"),
    };
    assert!(
        bench
            .screen()
            .contains("reading the locators from the page"),
        "{}",
        bench.screen()
    );
    bench.key(KeyCode::Char('y'));
    bench.idle();
    assert!(
        notice(&bench).contains("no recipe line yet"),
        "{}",
        notice(&bench)
    );
    let line = r#"click(["id:refund", "role:button:Refund", "css:#refund"]);"#;
    bench.send(AppEvent::Locators {
        pick,
        report: Ok(webagent::script::LocatorReport {
            locators: vec![
                (webagent::dom::Locator::Id("refund".into()), 1),
                (
                    webagent::dom::Locator::Role {
                        role: "button".into(),
                        name: "Refund".into(),
                    },
                    3,
                ),
                (webagent::dom::Locator::Css("#gone".into()), 0),
            ],
            line: line.into(),
            facts: serde_json::json!({"tag": "button", "id": "refund", "css": "#refund"}),
            state: None,
            count: None,
        }),
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
    assert!(row("id:refund").contains("unique"), "{screen}");
    assert!(
        row("role:button:Refund").contains("matches several (3)"),
        "{screen}"
    );
    assert!(row("css:#gone").contains("matches none"), "{screen}");
    assert!(screen.contains(line), "{screen}");
    bench.effects.clear();
    bench.key(KeyCode::Char('y'));
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::Copy(copied)] if copied == line),
        "{:?}",
        bench.effects
    );
}

#[test]
fn a_script_error_of_several_lines_shows_its_first_and_goes_whole_into_the_log() {
    let mut bench = Bench::on_orders(120, 40);
    let error = "recipes/first.rhai:7:5: fill takes fill(target, text); it was called with 1 argument (a string)\n  7 |     fill(\"#email\");\n    |     ^";
    bench.send(AppEvent::RunEnded {
        error: Some(error.into()),
    });
    bench.idle();
    assert_eq!(
        notice(&bench),
        "recipes/first.rhai:7:5: fill takes fill(target, text); it was called with 1 argument (a string) (Enter on the log's last row shows it whole)"
    );
    let row = bench.state().log.last().expect("a log row").clone();
    assert_eq!(row.action, "error");
    match &row.outcome {
        Outcome::Failed { message, .. } => assert_eq!(message, error),
        other => panic!("expected the error in the log, got {other:?}"),
    }
}

#[test]
fn an_assertion_picked_on_an_element_is_recorded_prefilled_from_the_page_and_i_inserts_the_line() {
    let mut bench = Bench::on_orders(120, 40);
    bench.key(KeyCode::Char(':'));
    bench.type_text("record checks");
    bench.key(KeyCode::Enter);
    bench.idle();
    bench.effects.clear();
    bench.key(KeyCode::Char('A'));
    bench.idle();
    let pick = match bench.effects.as_slice() {
        [Effect::PickLocators { pick, .. }] => *pick,
        other => panic!("expected the element to be read, got {other:?}"),
    };
    let report = webagent::script::LocatorReport {
        locators: vec![(webagent::dom::Locator::Id("refund".into()), 1)],
        line: r#"click(["id:refund", "css:#refund"]);"#.into(),
        facts: serde_json::json!({"tag": "button", "id": "refund", "css": "#refund"}),
        state: Some(webagent::dom::ElementState {
            visible: true,
            text: "Refund".into(),
            value: None,
            checked: None,
        }),
        count: Some((webagent::dom::Locator::Css("#actions > button".into()), 3)),
    };
    bench.send(AppEvent::Locators {
        pick,
        report: Ok(report.clone()),
    });
    bench.idle();
    let screen = bench.screen();
    for row in [
        "Assertions (press the number to record it)",
        "2  text equals: \"Refund\"",
        "4  value equals: it is no field, so it has no value",
        "6  count: 3 (css:#actions > button)",
    ] {
        assert!(screen.contains(row), "no `{row}` on:\n{screen}");
    }
    bench.key(KeyCode::Char('2'));
    bench.idle();
    assert_eq!(
        notice(&bench),
        r#"recorded step 1: expect_text(["id:refund", "css:#refund"], "Refund");"#
    );
    bench.key(KeyCode::Char('L'));
    bench.send(AppEvent::Locators {
        pick: pick + 1,
        report: Ok(report),
    });
    bench.idle();
    bench.key(KeyCode::Char('i'));
    bench.idle();
    assert_eq!(
        notice(&bench),
        r#"recorded step 2: click(["id:refund", "css:#refund"]);"#
    );
    let recording = bench.state().recording.as_ref().expect("still recording");
    assert_eq!(recording.steps().len(), 2);
}

#[test]
fn while_the_page_pane_has_the_keys_they_type_into_the_page_until_ctrl_o_gives_them_back() {
    use webagent::browser::record::PaneInput;
    let mut bench = Bench::on_orders(120, 40);
    bench.app.state.picture.visible = true;
    // What a click on the picture leaves behind.
    bench.app.state.picture.keyboard = true;
    bench.type_text("a:");
    bench.key(KeyCode::Enter);
    bench.key(KeyCode::Esc);
    bench.idle();
    let sent: Vec<String> = bench
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::PaneInput(PaneInput::Type(text)) => Some(format!("type {text}")),
            Effect::PaneInput(PaneInput::Press(chord)) => Some(format!("press {chord}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        sent,
        ["type a", "type :", "press Enter", "press Escape"],
        "{:?}",
        bench.effects
    );
    assert!(bench.state().command_line.is_none(), "`:` went to the page");
    assert_eq!(
        bench.state().status.approval,
        ApprovalMode::Risky,
        "`a` went to the page"
    );
    bench.effects.clear();
    bench.ctrl('o');
    bench.key(KeyCode::Char(':'));
    bench.idle();
    assert!(!bench.state().picture.keyboard);
    assert!(
        !bench
            .effects
            .iter()
            .any(|e| matches!(e, Effect::PaneInput(_))),
        "{:?}",
        bench.effects
    );
    assert!(
        bench.state().command_line.is_some(),
        "`:` is the workbench's again"
    );
}
