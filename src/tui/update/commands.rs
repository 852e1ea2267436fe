//! The command line: `:` commands, recipe names and their completion, and
//! starting a task.

use tui_textarea::TextArea;

use crate::script::params::{parse_assignment, resolve_params};
use crate::tui::event::Effect;
use crate::tui::state::{AppState, ListView, LogEntry, Outcome, ReflectionView, RunStatus};
use crate::tui::task::set_field_focus;

use super::conversation::{ask_resume, begin_run, new_conversation, send_message};
use super::log::{push_log, target_text};
use super::sessions::open_sessions;
use super::view::restyle_fields;

/// Enter on the `:` line: a command of the workbench (`new`, `sessions`,
/// `resume`, `state save`, `recipe`), else an action run by hand.
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
    let mut words = line.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some("new"), None, _) => return new_conversation(state, effects),
        (Some("sessions"), None, _) => return open_sessions(state, effects),
        (Some("resume"), path, None) => {
            return ask_resume(state, path.map(std::path::PathBuf::from), effects)
        }
        (Some("resume"), Some(_), Some(_)) => {
            state.notice(
                true,
                "usage: resume [TRACE] (default: the latest unfinished run)".into(),
            );
            return;
        }
        _ => {}
    }
    if state.run_active() {
        state.notice(
            true,
            "the agent is running; stop it (s) before running actions by hand".into(),
        );
        return;
    }
    if line == "state" || line.starts_with("state ") {
        let mut words = line.split_whitespace().skip(1);
        match (words.next(), words.next(), words.next()) {
            (Some("save"), file, None) => {
                state.command_line = None;
                state.notice(false, "saving the state…".into());
                effects.push(Effect::SaveState(file.map(std::path::PathBuf::from)));
            }
            _ => state.notice(
                true,
                "usage: state save [FILE] (default: the --state file)".into(),
            ),
        }
        return;
    }
    if line == "recipe" || line.starts_with("recipe ") {
        start_recipe(state, line["recipe".len()..].trim(), effects);
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

/// The loaded recipes with their descriptions, for the status line.
pub(super) fn recipe_list(state: &AppState) -> String {
    if state.recipes.is_empty() {
        return "no recipes are loaded: put .rhai files in the recipes directory (--recipes)"
            .into();
    }
    let names: Vec<String> = state
        .recipes
        .iter()
        .map(|r| format!("{}: {}", r.name, r.description))
        .collect();
    format!("recipes · {}", names.join(" · "))
}

/// `:recipe NAME [PARAM=VALUE]…`: runs a loaded recipe like an agent run,
/// with its parameters (a value with spaces in quotes, as on the `:`
/// line for actions) checked against what it declares before anything
/// runs.
pub(super) fn start_recipe(state: &mut AppState, rest: &str, effects: &mut Vec<Effect>) {
    let mut words = crate::actions::command_words(rest).into_iter();
    let name = words.next().unwrap_or_default();
    let name = name.as_str();
    if name.is_empty() {
        let listed = recipe_list(state);
        state.notice(true, format!("which recipe? {listed}"));
        return;
    }
    let Some(recipe) = state.recipes.iter().find(|r| r.name == name) else {
        let available: Vec<&str> = state.recipes.iter().map(|r| r.name.as_str()).collect();
        let available = if available.is_empty() {
            "none".to_string()
        } else {
            available.join(", ")
        };
        state.notice(
            true,
            format!("no recipe named `{name}` is loaded; available: {available}"),
        );
        return;
    };
    let mut given = serde_json::Map::new();
    for word in words {
        match parse_assignment(&word) {
            Ok((key, value)) => {
                given.insert(key, value);
            }
            Err(_) => {
                state.notice(true, format!("`{word}`: write a parameter as NAME=VALUE"));
                return;
            }
        }
    }
    let params = match resolve_params(&recipe.name, &recipe.params, &given) {
        Ok(params) => params,
        Err(why) => {
            state.notice(true, why.to_string());
            return;
        }
    };
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

/// Completes a recipe name after `recipe `.
pub(super) fn complete_recipe(state: &mut AppState, prefix: &str) {
    let matches: Vec<String> = state
        .recipes
        .iter()
        .map(|r| r.name.clone())
        .filter(|n| n.starts_with(prefix))
        .collect();
    match matches.as_slice() {
        [] => {
            let listed = recipe_list(state);
            state.notice(true, format!("no recipe starts with `{prefix}`; {listed}"));
        }
        [only] => {
            let mut field = TextArea::new(vec![format!("recipe {only}")]);
            set_field_focus(&mut field, true, &state.theme);
            field.move_cursor(tui_textarea::CursorMove::End);
            state.command_line = Some(field);
            state.notice(false, "Enter runs it".into());
        }
        several => state.notice(false, several.join("  ")),
    }
}

/// Completes the action name as far as it is unambiguous; a complete
/// name shows its usage, several candidates are listed.
pub(super) fn complete_command(state: &mut AppState) {
    let Some(field) = state.command_line.as_ref() else {
        return;
    };
    let line = field.lines().join(" ");
    let word = line.trim_start();
    if let Some(prefix) = word.strip_prefix("recipe ") {
        let prefix = prefix.trim().to_string();
        complete_recipe(state, &prefix);
        return;
    }
    if word.contains(char::is_whitespace) {
        // Past the name: show how the rest is written.
        let name = word.split_whitespace().next().unwrap_or_default();
        if let Some(spec) = state.catalog.get(name) {
            let usage = spec.usage();
            state.notice(false, usage);
        }
        return;
    }
    let matches: Vec<String> = state
        .catalog
        .names()
        .into_iter()
        .chain(std::iter::once("recipe"))
        .filter(|n| n.starts_with(word))
        .map(str::to_string)
        .collect();
    let Some(first) = matches.first() else {
        state.notice(true, format!("no action starts with `{word}`"));
        return;
    };
    let common = matches.iter().fold(first.clone(), |prefix, name| {
        prefix
            .chars()
            .zip(name.chars())
            .take_while(|(a, b)| a == b)
            .map(|(a, _)| a)
            .collect()
    });
    let mut completed = common.clone();
    if matches.len() == 1 {
        completed.push(' ');
    }
    let mut field = TextArea::new(vec![completed]);
    set_field_focus(&mut field, true, &state.theme);
    field.move_cursor(tui_textarea::CursorMove::End);
    field.set_placeholder_text("action and parameters, e.g. click 12 · Esc closes");
    state.command_line = Some(field);
    if matches.len() == 1 {
        if let Some(spec) = state.catalog.get(&common) {
            let usage = spec.usage();
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
