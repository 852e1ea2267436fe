//! The command line: `:` commands, recipe names and their completion, and
//! starting a task.

use tui_textarea::TextArea;

use crate::tui::event::Effect;
use crate::tui::line_commands::{find_line_command, LineCommand, LINE_COMMANDS};
use crate::tui::state::{AppState, ListView, LogEntry, Outcome, ReflectionView, RunStatus};
use crate::tui::task::set_field_focus;

use super::conversation::{ask_resume, begin_run, new_conversation, send_message};
use super::debugging::{act_at_stop, debug_command, stopped};
use super::export::export_as;
use super::log::{push_log, target_text};
use super::named::{named_recipe, recipe_list};
use super::recording::record_command;
use super::sessions::open_sessions;
use super::view::restyle_fields;

/// Enter on the `:` line: a command of the workbench (found in
/// [`LINE_COMMANDS`], the table help lists), else an action run by hand.
/// A refused line stays open with the reason above it, for correcting.
pub(super) fn submit_command_line(state: &mut AppState, effects: &mut Vec<Effect>) {
    let line = state
        .command_line
        .as_ref()
        .map(|f| f.lines().join(" "))
        .unwrap_or_default();
    let line = line.trim().trim_start_matches(':').trim().to_string();
    if line.is_empty() {
        state.command_line = None;
        return;
    }
    if let Some((spec, rest)) = find_line_command(&line) {
        let usage = || format!("usage: {} ({})", spec.usage(), spec.about);
        let mut args = rest.split_whitespace();
        match spec.command {
            LineCommand::New if rest.is_empty() => new_conversation(state, effects),
            LineCommand::Sessions if rest.is_empty() => open_sessions(state, effects),
            LineCommand::Resume if args.clone().count() <= 1 => {
                ask_resume(state, args.next().map(std::path::PathBuf::from), effects)
            }
            LineCommand::State if args.next() == Some("save") && args.clone().count() <= 1 => {
                if !refuse_while_running(state) {
                    state.command_line = None;
                    state.notice(false, "saving the state…".into());
                    effects.push(Effect::SaveState(args.next().map(std::path::PathBuf::from)));
                }
            }
            LineCommand::Recipe => {
                if !refuse_while_running(state) {
                    start_recipe(state, rest, effects);
                }
            }
            LineCommand::Export => export_as(state, rest, effects),
            LineCommand::Record => record_command(state, rest, effects),
            LineCommand::Debug => debug_command(state, rest, effects),
            _ => state.notice(true, usage()),
        }
        return;
    }
    if stopped(state) {
        // At a debugger's stop an action runs on the recipe's own page.
        match state.catalog.parse_command(&line) {
            Ok(action) => act_at_stop(state, action, effects),
            Err(error) => state.notice(true, error.to_string()),
        }
        return;
    }
    if refuse_while_running(state) {
        return;
    }
    match state.catalog.parse_command(&line) {
        Ok(action) => {
            state.command_line = None;
            let id = state.next_action_id;
            state.next_action_id += 1;
            let entry = LogEntry {
                manual_id: Some(id),
                params: action.params().to_string(),
                ..LogEntry::row(
                    action.name(),
                    target_text(state, action.target()),
                    Outcome::Pending,
                )
            };
            push_log(state, entry);
            state.status.notice = None;
            effects.push(Effect::RunAction { id, action });
        }
        // The line stays open so the person can fix it.
        Err(error) => state.notice(true, error.to_string()),
    }
}

/// Says why nothing runs by hand while the agent runs; true when it does.
fn refuse_while_running(state: &mut AppState) -> bool {
    let running = state.run_active();
    if running {
        state.notice(
            true,
            "the agent is running; stop it (s) before running actions by hand".into(),
        );
    }
    running
}

/// `:recipe NAME [PARAM=VALUE]…`: runs a loaded recipe like an agent run,
/// with its parameters (a value with spaces in quotes, as on the `:`
/// line for actions) checked against what it declares before anything
/// runs.
pub(super) fn start_recipe(state: &mut AppState, rest: &str, effects: &mut Vec<Effect>) {
    let Some((recipe, params)) = named_recipe(state, rest) else {
        return;
    };
    let name = recipe.name.as_str();
    state.command_line = None;
    state.status.run = RunStatus::Running;
    state.status.step = 0;
    state.status.max_steps = 0;
    state.recipe = Some(name.to_string());
    state.recipe_began = false;
    state.recipe_subgoals.clear();
    state.reflection = ReflectionView::default();
    state.reflection_view = ListView::default();
    state.notice(false, format!("running recipe {name} (s stops it)"));
    effects.push(Effect::RunRecipe {
        name: name.to_string(),
        params,
        approval: state.status.approval,
    });
}

/// Completes a recipe name after `recipe `; a whole name shows the
/// parameters it takes.
pub(super) fn complete_recipe(state: &mut AppState, prefix: &str) {
    let mut matches: Vec<String> = state
        .recipes
        .iter()
        .map(|r| r.name.clone())
        .filter(|n| n.starts_with(prefix))
        .collect();
    if matches.iter().any(|n| n == prefix) {
        // A whole name is the one meant, even when longer names begin so.
        matches.retain(|n| n == prefix);
    }
    match matches.as_slice() {
        [] => {
            let listed = recipe_list(state);
            state.notice(true, format!("no recipe starts with `{prefix}`; {listed}"));
        }
        [only] => {
            replace_line(state, format!("recipe {only} "));
            let params: Vec<String> = state
                .recipes
                .iter()
                .find(|r| &r.name == only)
                .map(|r| r.params.iter().map(|p| p.summary()).collect())
                .unwrap_or_default();
            let text = if params.is_empty() {
                format!("recipe {only}: takes no parameters; Enter runs it")
            } else {
                format!("recipe {only} NAME=VALUE…: {}", params.join(", "))
            };
            state.notice(false, text);
        }
        several => {
            let common = common_prefix(several);
            replace_line(state, format!("recipe {common}"));
            state.notice(false, several.join("  "));
        }
    }
}

/// The longest start all of `names` share.
fn common_prefix(names: &[String]) -> String {
    let first = names.first().cloned().unwrap_or_default();
    names.iter().fold(first, |prefix, name| {
        prefix
            .chars()
            .zip(name.chars())
            .take_while(|(a, b)| a == b)
            .map(|(a, _)| a)
            .collect()
    })
}

/// The `:` line, holding `text` with the cursor at its end.
fn replace_line(state: &mut AppState, text: String) {
    let mut field = TextArea::new(vec![text]);
    set_field_focus(&mut field, true, &state.theme);
    field.move_cursor(tui_textarea::CursorMove::End);
    field.set_placeholder_text(COMMAND_LINE_PLACEHOLDER);
    state.command_line = Some(field);
}

/// What the empty `:` line says.
pub(super) const COMMAND_LINE_PLACEHOLDER: &str =
    "an action or command, e.g. click 12 · Tab completes · Esc closes";

/// How a name of the line is written, with its arguments: a workbench
/// command from [`LINE_COMMANDS`], or an action of the catalog.
fn usage_of(state: &AppState, name: &str) -> Option<String> {
    if let Some(spec) = LINE_COMMANDS.iter().find(|c| c.word() == name) {
        return Some(format!("{} · {}", spec.usage(), spec.about));
    }
    state.catalog.get(name).map(|spec| spec.usage())
}

/// Completes the name as far as it is unambiguous; a complete name shows
/// how its arguments are written, several candidates are listed.
pub(super) fn complete_command(state: &mut AppState) {
    let Some(field) = state.command_line.as_ref() else {
        return;
    };
    let line = field.lines().join(" ");
    let word = line.trim_start();
    if let Some(prefix) = word.strip_prefix("recipe ") {
        let prefix = prefix.trim().to_string();
        if !prefix.contains(char::is_whitespace) {
            complete_recipe(state, &prefix);
            return;
        }
    }
    if word.contains(char::is_whitespace) {
        // Past the name: show how the rest is written.
        let name = word.split_whitespace().next().unwrap_or_default();
        match usage_of(state, name) {
            Some(usage) => state.notice(false, usage),
            None => state.notice(true, format!("no action or command is named `{name}`")),
        }
        return;
    }
    let matches: Vec<String> = LINE_COMMANDS
        .iter()
        .map(|c| c.word())
        .chain(state.catalog.names())
        .filter(|n| n.starts_with(word))
        .map(str::to_string)
        .collect();
    if matches.is_empty() {
        state.notice(true, format!("no action or command starts with `{word}`"));
        return;
    }
    let common = common_prefix(&matches);
    let mut completed = common.clone();
    if matches.len() == 1 {
        completed.push(' ');
    }
    replace_line(state, completed);
    if matches.len() == 1 {
        if let Some(usage) = usage_of(state, &common) {
            state.notice(false, usage);
        }
    } else {
        state.notice(false, matches.join("  "));
    }
}

/// Enter in the task field: a new task, or words for the running agent.
pub(super) fn start_task(state: &mut AppState, effects: &mut Vec<Effect>) {
    let task = state.task.lines().join("\n").trim().to_string();
    if task.is_empty() {
        state.notice(
            true,
            "the task is empty: say what the agent should do".into(),
        );
        return;
    }
    if state.run_active() {
        if state.recipe.is_some() || state.status.run == RunStatus::Stopping {
            state.notice(
                true,
                "a recipe is running (or the run is stopping): there is no model to tell".into(),
            );
            return;
        }
        // While the agent works, the field talks to it.
        send_message(state, task, effects);
        return;
    }
    if state.status.model.is_empty() {
        // The task stays in the field for when a model is configured.
        state.notice(
            true,
            "no model is configured: set OPENAI_API_KEY (or OPENAI_BASE_URL / --base-url for a \
             local server); `:` actions work without one"
                .into(),
        );
        return;
    }
    state.task = TextArea::default();
    restyle_fields(state);
    begin_run(state, task, false, None, effects);
}
