//! The recipe debugger in the workbench (`:debug NAME`, `recipe run FILE
//! --debug`): starting a debugged run, what the recipe reports at each
//! stop, the person's keys (breakpoints, steps, retry, skip, restart), a
//! `:` action at a stop, and an edit of the recipe's file.
//!
//! The run is the same as `--debug=cli`'s (the session's recipe road
//! with a debugger attached); only the controller differs: keys here,
//! JSON lines there. At each stop the workbench asks for the variables
//! and for the listing, whose observation goes through the run's own
//! environment, so the element list and the page pane show the page as
//! it is at the stop.

use crate::actions::Action;
use crate::script::{DebugCommand, DebugReport, StopReason};
use crate::tui::debugger::reason_text;
use crate::tui::event::Effect;
use crate::tui::keys::Command;
use crate::tui::layout::{debugger_areas, rows_inside};
use crate::tui::state::{
    AppState, DebugStart, DebugView, ListView, Pane, ReflectionView, RunStatus,
};

/// `:debug NAME [PARAM=VALUE]…`: the loaded recipe NAME under the
/// debugger, its parameters checked as `:recipe` checks them.
pub(super) fn debug_command(state: &mut AppState, rest: &str, effects: &mut Vec<Effect>) {
    let Some((recipe, params)) = super::named::named_recipe(state, rest) else {
        return;
    };
    let start = DebugStart {
        name: recipe.name.clone(),
        file: recipe.file.clone().into(),
        params,
    };
    state.command_line = None;
    start_debugging(state, start, effects);
}

/// Starts a debugged run of `start` (from `:debug`, or at once for
/// `recipe run FILE --debug`), unless a run is going on.
pub(super) fn start_debugging(state: &mut AppState, start: DebugStart, effects: &mut Vec<Effect>) {
    if state.run_active() {
        state.notice(
            true,
            "a run is going on; stop it (s) before debugging a recipe".into(),
        );
        return;
    }
    let breakpoints = state
        .debugger
        .take()
        .map(|d| d.breakpoints)
        .unwrap_or_default();
    let mut view = DebugView::new(start.clone());
    view.breakpoints = breakpoints;
    state.debugger = Some(view);
    state.status.run = RunStatus::Running;
    state.status.step = 0;
    state.status.max_steps = 0;
    state.recipe = Some(start.name.clone());
    state.recipe_began = false;
    state.recipe_subgoals.clear();
    state.reflection = ReflectionView::default();
    state.reflection_view = ListView::default();
    if state.focus != Pane::Task {
        // The source pane has the sitemap's place and its keys.
        state.focus = Pane::Sitemap;
    }
    state.notice(
        false,
        format!(
            "debugging {}: it stops at its first line (? lists the keys)",
            start.name
        ),
    );
    effects.push(Effect::StartDebug {
        start,
        approval: state.status.approval,
    });
}

/// What the debugged recipe reported.
pub(super) fn debug_report(state: &mut AppState, report: DebugReport, effects: &mut Vec<Effect>) {
    let Some(debug) = state.debugger.as_mut() else {
        return;
    };
    match report {
        DebugReport::Stopped(stop) => {
            if stop.reason == StopReason::Entry {
                // A restart keeps the breakpoints of the run before it.
                for line in &debug.breakpoints {
                    effects.push(Effect::Debug(DebugCommand::Break(*line)));
                }
            }
            let text = match &stop.error {
                Some(error) => format!(
                    "line {} failed: {error} (r retries, x skips, : acts by hand)",
                    stop.line
                ),
                None => format!(
                    "stopped at line {} ({}): {}",
                    stop.line,
                    reason_text(stop.reason),
                    stop.source.trim()
                ),
            };
            let failed = stop.error.is_some();
            debug.vars.clear();
            debug.stop = Some(stop);
            follow_stop(state);
            state.notice(failed, text);
            effects.push(Effect::Debug(DebugCommand::Vars));
            // Observed through the run's environment: the panes show the
            // page as it is now.
            effects.push(Effect::Debug(DebugCommand::Listing));
        }
        DebugReport::Vars(vars) => debug.vars = vars,
        // The listing's observation already reached the panes.
        DebugReport::Listing(_) => {}
        DebugReport::Acted(result) => {
            let ok = result.get("ok").and_then(serde_json::Value::as_bool) == Some(true);
            let text = if ok {
                "the action ran at the stop".to_string()
            } else {
                format!("the action at the stop failed: {result}")
            };
            state.notice(!ok, text);
            effects.push(Effect::Debug(DebugCommand::Listing));
        }
        DebugReport::Refused(why) => state.notice(true, why),
        // The run's `log` events already show each line in the log.
        DebugReport::Log(_) => {}
    }
}

/// Scrolls the source pane to the line the recipe stopped on.
fn follow_stop(state: &mut AppState) {
    let rows = source_rows(state);
    let Some(debug) = state.debugger.as_mut() else {
        return;
    };
    if let Some(line) = debug.stop_here().map(|s| s.line) {
        let len = debug.source.len().max(line);
        debug.cursor.move_to(line.saturating_sub(1), len, rows);
    }
}

/// Rows the source pane shows.
fn source_rows(state: &AppState) -> usize {
    rows_inside(debugger_areas(state.area(), state.picture.visible).0)
}

/// The recipe's file as read: at the start, and after each save. A save
/// while it runs waits for the person's choice: restart runs it, going
/// on keeps running the code the run started with.
pub(super) fn debug_source(state: &mut AppState, text: String) {
    let Some(debug) = state.debugger.as_mut() else {
        return;
    };
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    if debug.source.is_empty() {
        debug.source = lines;
        follow_stop(state);
        return;
    }
    if lines == debug.source {
        debug.edited = None;
        return;
    }
    debug.edited = Some(lines);
    let file = debug.start.file.display().to_string();
    state.notice(
        false,
        format!(
            "{file} was saved: R restarts from the top with it; c, n, e, u go on with the code \
             the run started with"
        ),
    );
}

/// A key of the debugger's layer.
pub(super) fn on_debug_key(state: &mut AppState, command: Command, effects: &mut Vec<Effect>) {
    let Some(debug) = state.debugger.as_mut() else {
        return;
    };
    let failed = debug
        .stop
        .as_ref()
        .is_some_and(|s| s.reason == StopReason::Failure);
    let go = match command {
        Command::ToggleBreakpoint => {
            let line = debug.cursor_line();
            let command = if debug.breakpoints.remove(&line) {
                DebugCommand::Clear(line)
            } else {
                debug.breakpoints.insert(line);
                DebugCommand::Break(line)
            };
            let set = matches!(command, DebugCommand::Break(_));
            effects.push(Effect::Debug(command));
            let text = if set {
                format!("breakpoint on line {line}")
            } else {
                format!("no breakpoint on line {line}")
            };
            state.notice(false, text);
            return;
        }
        Command::Restart => {
            debug.restarting = true;
            state.notice(false, "restarting from the top…".into());
            state.status.run = RunStatus::Stopping;
            effects.push(Effect::StopRun);
            return;
        }
        Command::ContinueRun => DebugCommand::Continue,
        Command::StepOver => DebugCommand::StepOver,
        Command::StepInto => DebugCommand::StepInto,
        Command::StepOut => DebugCommand::StepOut,
        Command::RetryFailed | Command::SkipFailed if !failed => {
            state.notice(
                true,
                "r and x answer a failed step; this stop is not one".into(),
            );
            return;
        }
        Command::RetryFailed => DebugCommand::Retry,
        Command::SkipFailed => DebugCommand::Skip,
        _ => return,
    };
    if debug.stop.take().is_none() {
        state.notice(
            true,
            "the recipe is running; it takes this at its next stop".into(),
        );
        return;
    }
    if debug.edited.is_some() {
        state.notice(
            false,
            "going on with the code the run started with (R restarts with the saved file)".into(),
        );
    } else {
        state.status.notice = None;
    }
    effects.push(Effect::Debug(go));
}

/// Moves the source pane's cursor (the sitemap's place and keys).
pub(super) fn move_source_cursor(state: &mut AppState, command: Command) {
    let rows = source_rows(state);
    let Some(debug) = state.debugger.as_mut() else {
        return;
    };
    let len = debug.source.len();
    if let Some(target) = super::view::moved(&debug.cursor, command, len, rows) {
        debug.cursor.move_to(target, len, rows);
    }
}

/// A `:` action at a stop: it runs there, on the recipe's page and
/// road (`DebugCommand::Act`), and shows in the log as the run's step.
pub(super) fn act_at_stop(state: &mut AppState, action: Action, effects: &mut Vec<Effect>) {
    state.command_line = None;
    state.notice(false, format!("running {} at the stop…", action.name()));
    effects.push(Effect::Debug(DebugCommand::Act(action)));
}

/// Whether the debugged recipe is stopped (a `:` action runs there).
pub(super) fn stopped(state: &AppState) -> bool {
    state.debugger.as_ref().is_some_and(|d| d.stop.is_some())
}

/// The debugged run ended: a restart starts it again from its file as
/// saved, keeping the breakpoints; otherwise the panes go back.
pub(super) fn debug_ended(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Some(debug) = state.debugger.take() else {
        return;
    };
    if !debug.restarting {
        return;
    }
    state.status.run = RunStatus::Idle;
    let source = debug.edited.clone().unwrap_or_else(|| debug.source.clone());
    let start = debug.start.clone();
    // The new run takes its breakpoints from the view it replaces.
    state.debugger = Some(debug);
    start_debugging(state, start, effects);
    if let Some(view) = state.debugger.as_mut() {
        view.source = source;
    }
}
