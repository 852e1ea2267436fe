//! Recording the person's actions into a recipe (`:record`): starting and
//! stopping the recorder, each step as it lands, the person's edits
//! (undo, a step's goal, a parameter's name, the locator picker's line and
//! an assertion picked on an element), and the file at the end.

use crate::browser::record::Input;
use crate::script::export::action_line;
use crate::script::{assertion_step, Recording};
use crate::tui::element_detail;
use crate::tui::event::Effect;
use crate::tui::state::{AppState, LogEntry, Outcome};

use super::log::push_log;

/// The recipe name a recording gets when the person gives none.
const DEFAULT_NAME: &str = "recorded";

/// `:record [NAME] | stop | undo | goal N TEXT | rename OLD NEW`. A line
/// that cannot run stays open with the reason above it.
pub(super) fn record_command(state: &mut AppState, rest: &str, effects: &mut Vec<Effect>) {
    let mut words = rest.split_whitespace();
    let first = words.next().unwrap_or_default();
    if matches!(first, "stop" | "undo" | "goal" | "rename") && state.recording.is_none() {
        state.notice(
            true,
            "nothing is being recorded; `:record NAME` starts a recording".into(),
        );
        return;
    }
    match first {
        "stop" => {
            state.command_line = None;
            state.notice(false, "stopping the recording…".into());
            effects.push(Effect::Record(false));
        }
        "undo" => {
            let Some(recording) = state.recording.as_mut() else {
                return;
            };
            state.command_line = None;
            let text = match recording.undo() {
                Some(_) => format!(
                    "took the last step back; {} left",
                    crate::words::counted(recording.steps().len(), "step", "steps")
                ),
                None => "no step to take back".to_string(),
            };
            state.notice(false, text);
        }
        "goal" => {
            let Some(recording) = state.recording.as_mut() else {
                return;
            };
            let number = words.next().and_then(|n| n.parse::<usize>().ok());
            let goal = words.collect::<Vec<_>>().join(" ");
            match number {
                Some(n) if !goal.is_empty() && recording.set_goal(n, &goal) => {
                    state.command_line = None;
                    state.notice(false, format!("step {n}'s goal: {goal}"));
                }
                _ => {
                    let text = format!(
                        "usage: record goal N TEXT, N a step from 1 to {}",
                        recording.steps().len()
                    );
                    state.notice(true, text);
                }
            }
        }
        "rename" => {
            let Some(recording) = state.recording.as_mut() else {
                return;
            };
            match (words.next(), words.next(), words.next()) {
                (Some(from), Some(to), None) => match recording.rename_param(from, to) {
                    Ok(()) => {
                        state.command_line = None;
                        state.notice(false, format!("the parameter {from} is now {to}"));
                    }
                    Err(why) => state.notice(true, why),
                },
                _ => state.notice(true, "usage: record rename OLD NEW".into()),
            }
        }
        name => {
            if words.next().is_some() {
                state.notice(
                    true,
                    "usage: record [NAME] | stop | undo | goal N TEXT | rename OLD NEW".into(),
                );
                return;
            }
            let name = if name.is_empty() { DEFAULT_NAME } else { name };
            start_recording(state, name, effects);
        }
    }
}

/// Starts recording into the recipe `name`, unless a recording or a run
/// is going on or the name cannot be a new recipe's.
pub(super) fn start_recording(state: &mut AppState, name: &str, effects: &mut Vec<Effect>) {
    if let Some(recording) = &state.recording {
        let text = format!(
            "already recording {}; `:record stop` saves it",
            recording.name()
        );
        state.notice(true, text);
        return;
    }
    if state.run_active() {
        state.notice(
            true,
            "the agent is running; stop it (s) before recording".into(),
        );
        return;
    }
    if !crate::words::is_snake_case(name) {
        state.notice(
            true,
            "usage: record NAME, NAME a snake_case word (sign_in) that names the recipe and its file"
                .into(),
        );
        return;
    }
    if let Some(clash) = state.recipes.iter().find(|r| r.name == name) {
        let text = format!(
            "a recipe named `{name}` is loaded already ({}); pick another name",
            clash.file
        );
        state.notice(true, text);
        return;
    }
    state.command_line = None;
    let url = state
        .page
        .as_ref()
        .map(|p| p.url.clone())
        .unwrap_or_else(|| state.status.url.clone());
    state.recording = Some(Recording::new(name, &url));
    state.notice(
        false,
        format!("recording {name}: act on the page; `:record stop` saves it"),
    );
    effects.push(Effect::Record(true));
}

/// One thing the person did on the page: a step of the recipe.
pub(super) fn recorded(state: &mut AppState, input: Input) {
    let url = state.status.url.clone();
    let Some(recording) = state.recording.as_mut() else {
        return;
    };
    let Some(number) = recording.push(input, &url) else {
        return;
    };
    if let Some(line) = recording.line(number) {
        state.notice(false, format!("recorded step {number}: {line}"));
    }
}

/// Every input has arrived: the recipe is written, unless nothing in it
/// replays.
pub(super) fn recording_stopped(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Some(recording) = state.recording.take() else {
        return;
    };
    match recording.source(Some(&state.sitemaps)) {
        Some(source) => {
            state.notice(false, format!("saving the recipe {}…", recording.name()));
            effects.push(Effect::SaveRecording {
                name: recording.name().to_string(),
                source,
            });
        }
        None => state.notice(
            true,
            format!(
                "nothing was recorded that replays; the recipe {} was not written",
                recording.name()
            ),
        ),
    }
}

/// The recipe's file was written, or why not.
pub(super) fn recording_saved(state: &mut AppState, saved: Result<std::path::PathBuf, String>) {
    match saved {
        Ok(path) => {
            // A log row too: the reload notice for the new file follows at
            // once and takes the status line.
            push_log(
                state,
                LogEntry::row("record", path.display().to_string(), Outcome::Ok),
            );
            state.notice(
                false,
                format!("recording saved as a recipe: {}", path.display()),
            );
        }
        Err(why) => state.notice(true, format!("the recording was not saved: {why}")),
    }
}

/// `i` in the element view: the locator picker's line becomes the
/// recording's next step, as if the person had acted on the element;
/// with nothing recorded, `i` closes the view.
pub(crate) fn insert_line(state: &mut AppState) {
    if state.recording.is_none() {
        super::picker::close(state);
        return;
    }
    let report = match state.locators.as_ref().and_then(|p| p.report.as_ref()) {
        Some(Ok(report)) => report.clone(),
        _ => {
            state.notice(true, "no recipe line yet: the page has not answered".into());
            return;
        }
    };
    let facts = report.facts.clone();
    let input = if report.line.starts_with("fill(") {
        Input::Fill {
            facts,
            value: Some(String::new()),
        }
    } else if report.line.starts_with("select(") {
        Input::Select {
            facts,
            text: String::new(),
        }
    } else {
        Input::Click { facts }
    };
    super::picker::close(state);
    recorded(state, input);
}

/// A number in the element view: the assertion of that number, prefilled
/// from the page, becomes the recording's next step; with nothing
/// recorded, its line goes to the clipboard, as `y` copies the picker's.
pub(crate) fn pick_assertion(state: &mut AppState, number: u8, effects: &mut Vec<Effect>) {
    let (expectation, locators) = match element_detail::assertion(state, number) {
        Ok(picked) => picked,
        Err(why) => {
            state.notice(true, format!("no such assertion here: {why}"));
            return;
        }
    };
    let facts = match state.locators.as_ref().and_then(|p| p.report.as_ref()) {
        Some(Ok(report)) => Some(report.facts.clone()),
        _ => None,
    };
    let url = state
        .page
        .as_ref()
        .map(|p| p.url.clone())
        .unwrap_or_else(|| state.status.url.clone());
    super::picker::close(state);
    match state.recording.as_mut() {
        Some(recording) => {
            recording.push_assertion(&expectation, facts, &locators, &url);
            let number = recording.steps().len();
            if let Some(line) = recording.line(number) {
                state.notice(false, format!("recorded step {number}: {line}"));
            }
        }
        None => {
            let step = assertion_step(&expectation, facts, &locators, &url);
            let Some(line) = action_line(&step.action, step.facts.as_ref(), None) else {
                state.notice(true, "that assertion has no recipe line".into());
                return;
            };
            effects.push(Effect::Copy(line.clone()));
            state.notice(false, format!("on the clipboard: {line}"));
        }
    }
}
