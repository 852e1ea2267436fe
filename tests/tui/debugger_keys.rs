//! The recipe debugger's update, without a browser: `:debug NAME` asks
//! for a debugged run, each stop asks for the variables and the listing,
//! the keys become the debugger's commands (and are refused where they
//! mean nothing), a `:` action at a stop goes to the recipe, and a
//! restart runs the recipe again with its breakpoints.

use crossterm::event::KeyCode;
use serde_json::json;
use webagent::script::{DebugCommand, DebugReport, Stop, StopReason};
use webagent::tui::app::Pane;
use webagent::tui::{AppEvent, Effect};

use crate::bench::{with_acme_scripts, Bench};

/// A stop of `orders_overview` at `line`.
fn stop(line: usize, reason: StopReason, error: Option<&str>) -> AppEvent {
    AppEvent::Debug(DebugReport::Stopped(Stop {
        file: "recipes/acme.rhai".into(),
        line,
        column: 5,
        reason,
        source: format!("    line {line};"),
        error: error.map(str::to_string),
    }))
}

/// The debugger commands among the effects, which are cleared.
fn commands(bench: &mut Bench) -> Vec<DebugCommand> {
    bench.idle();
    bench
        .effects
        .drain(..)
        .filter_map(|e| match e {
            Effect::Debug(command) => Some(command),
            _ => None,
        })
        .collect()
}

fn notice(bench: &Bench) -> (bool, String) {
    let notice = bench.state().status.notice.clone().expect("a notice");
    (notice.error, notice.text)
}

/// A workbench debugging `orders_overview`, stopped at its entry (line 3)
/// with its source read.
fn debugging() -> Bench {
    let mut bench = Bench::on_orders(120, 40);
    with_acme_scripts(&mut bench);
    bench.key(KeyCode::Char(':'));
    bench.type_text("debug orders_overview");
    bench.key(KeyCode::Enter);
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::StartDebug { start, .. }] => {
            assert_eq!(start.name, "orders_overview");
            assert!(start.file.ends_with("recipes/acme.rhai"), "{start:?}");
        }
        other => panic!("expected a debugged run, got {other:?}"),
    }
    bench.effects.clear();
    assert_eq!(bench.state().focus, Pane::Sitemap);
    let source: String = (1..=12).map(|n| format!("    line {n};\n")).collect();
    bench.send(AppEvent::DebugSource(source));
    bench.send(stop(3, StopReason::Entry, None));
    assert_eq!(
        commands(&mut bench),
        [DebugCommand::Vars, DebugCommand::Listing]
    );
    bench
}

#[test]
fn keys_set_breakpoints_and_step_and_a_failed_step_takes_retry_skip_and_actions() {
    let mut bench = debugging();
    let screen = bench.screen();
    assert!(
        screen.contains("Debug orders_overview · line 3 · entry"),
        "{screen}"
    );
    assert!(screen.contains("▶  3     line 3;"), "{screen}");

    // The source cursor starts on the stop; b toggles the line under it.
    bench.key(KeyCode::Char('j'));
    bench.key(KeyCode::Char('b'));
    assert_eq!(commands(&mut bench), [DebugCommand::Break(4)]);
    bench.key(KeyCode::Char('b'));
    assert_eq!(commands(&mut bench), [DebugCommand::Clear(4)]);
    bench.key(KeyCode::Char('b'));
    assert_eq!(commands(&mut bench), [DebugCommand::Break(4)]);
    assert!(bench.screen().contains("●   4     line 4;"));

    // Retry and skip answer a failed step only.
    bench.key(KeyCode::Char('r'));
    assert_eq!(commands(&mut bench), []);
    assert_eq!(
        notice(&bench),
        (
            true,
            "r and x answer a failed step; this stop is not one".into()
        )
    );

    // A step runs the recipe; a second key waits for the next stop.
    bench.key(KeyCode::Char('n'));
    assert_eq!(commands(&mut bench), [DebugCommand::StepOver]);
    bench.key(KeyCode::Char('c'));
    assert_eq!(commands(&mut bench), []);
    assert!(notice(&bench).1.contains("the recipe is running"));

    bench.send(stop(
        4,
        StopReason::Failure,
        Some("no element matches `#late`"),
    ));
    assert_eq!(
        commands(&mut bench),
        [DebugCommand::Vars, DebugCommand::Listing]
    );
    let mut vars = serde_json::Map::new();
    vars.insert("greeting".into(), json!("hello"));
    bench.send(AppEvent::Debug(DebugReport::Vars(vars)));
    bench.idle();
    let screen = bench.screen();
    assert!(
        screen.contains("failed: no element matches `#late`"),
        "{screen}"
    );
    assert!(screen.contains("greeting = \"hello\""), "{screen}");

    // A `:` action at the stop goes to the recipe, on its page.
    bench.key(KeyCode::Char(':'));
    bench.type_text("click 4");
    bench.key(KeyCode::Enter);
    match commands(&mut bench).as_slice() {
        [DebugCommand::Act(action)] => {
            assert_eq!(action.to_json(), json!({"click": {"index": 4}}))
        }
        other => panic!("expected the action at the stop, got {other:?}"),
    }
    bench.send(AppEvent::Debug(DebugReport::Acted(json!({"ok": true}))));
    assert_eq!(commands(&mut bench), [DebugCommand::Listing]);
    bench.key(KeyCode::Char('x'));
    assert_eq!(commands(&mut bench), [DebugCommand::Skip]);
}

#[test]
fn a_saved_edit_is_restarted_from_the_top_with_the_breakpoints() {
    let mut bench = debugging();
    bench.key(KeyCode::Char('b'));
    assert_eq!(commands(&mut bench), [DebugCommand::Break(3)]);
    let edited: String = (1..=12).map(|n| format!("    edited {n};\n")).collect();
    bench.send(AppEvent::DebugSource(edited));
    bench.idle();
    assert!(bench
        .screen()
        .contains("acme.rhai was saved: R restarts from the top"));
    // The run goes on with the old code until the person restarts.
    assert!(bench.screen().contains("▶  3     line 3;"));

    bench.key(KeyCode::Char('R'));
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::StopRun]),
        "{:?}",
        bench.effects
    );
    bench.effects.clear();
    bench.send(AppEvent::RunEnded { error: None });
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::StartDebug { start, .. }] if start.name == "orders_overview"),
        "{:?}",
        bench.effects
    );
    bench.effects.clear();
    bench.send(stop(3, StopReason::Entry, None));
    assert_eq!(
        commands(&mut bench),
        [
            DebugCommand::Break(3),
            DebugCommand::Vars,
            DebugCommand::Listing
        ]
    );
    assert!(bench.screen().contains("●▶  3     edited 3;"));
}
