//! The command line: `:` commands, recipe names and their completion, and
//! starting a task; what an action's result adds to the log.

use super::*;
use crate::script::params::{parse_assignment, resolve_params};

/// The listed element an action targets, as the log and approval show it.
pub(super) fn target_text(state: &AppState, target: Option<&Target>) -> String {
    match target {
        Some(Target::Index { index }) => state
            .page
            .as_ref()
            .and_then(|p| p.elements.iter().find(|e| e.index == *index))
            .map(|e| clip(&element_line(e), 80))
            .unwrap_or_else(|| format!("[{index}]")),
        Some(Target::Selector { selector }) => selector.to_string(),
        None => String::new(),
    }
}

pub(super) fn push_log(state: &mut AppState, entry: LogEntry) {
    let was_at_end = state.log.is_empty() || state.log_view.cursor + 1 >= state.log.len();
    state.log.push(entry);
    let (len, rows) = (state.log.len(), state.visible_rows(Pane::Log));
    if was_at_end {
        state.log_view.move_to(len - 1, len, rows);
    }
}

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
            notice(
                state,
                true,
                "usage: resume [TRACE] (default: the latest unfinished run)".into(),
            );
            return;
        }
        _ => {}
    }
    if run_active(state) {
        notice(
            state,
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
                notice(state, false, "saving the state…".into());
                effects.push(Effect::SaveState(file.map(std::path::PathBuf::from)));
            }
            _ => notice(
                state,
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
        Err(error) => notice(state, true, error.to_string()),
    }
}

/// What an action caused beyond its page, as the result reports it: a
/// log row per downloaded file, a notice for a tab it opened.
pub(super) fn log_side_effects(state: &mut AppState, result: &ActionResult) {
    let ActionResult::Success { data: Some(data) } = result else {
        return;
    };
    let downloads = data.get("downloads").and_then(|d| d.as_array());
    for download in downloads.into_iter().flatten() {
        let text = |key: &str| download.get(key).and_then(|v| v.as_str()).unwrap_or("");
        let size = download.get("size").and_then(|v| v.as_u64()).unwrap_or(0);
        let outcome = if text("state") == "completed" {
            Outcome::Ok
        } else {
            Outcome::Failed {
                reason: text("state").to_string(),
                message: format!("the download of {} did not complete", text("url")),
            }
        };
        push_log(
            state,
            LogEntry {
                params: format!("{size} bytes, {}", text("type")),
                ..LogEntry::row("download", text("file"), outcome)
            },
        );
    }
    if let Some(tab) = data.get("new_tab") {
        let url = tab.get("url").and_then(|v| v.as_str()).unwrap_or_default();
        let switched = tab.get("switched").and_then(|v| v.as_bool()) == Some(true);
        notice(
            state,
            false,
            format!(
                "a tab opened: {url}{}",
                if switched { " (now driven)" } else { "" }
            ),
        );
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
        notice(state, true, format!("which recipe? {listed}"));
        return;
    }
    let Some(recipe) = state.recipes.iter().find(|r| r.name == name) else {
        let available: Vec<&str> = state.recipes.iter().map(|r| r.name.as_str()).collect();
        let available = if available.is_empty() {
            "none".to_string()
        } else {
            available.join(", ")
        };
        notice(
            state,
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
                notice(
                    state,
                    true,
                    format!("`{word}`: write a parameter as NAME=VALUE"),
                );
                return;
            }
        }
    }
    let params = match resolve_params(&recipe.name, &recipe.params, &given) {
        Ok(params) => params,
        Err(why) => {
            notice(state, true, why.to_string());
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
    notice(state, false, format!("running recipe {name} (s stops it)"));
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
            notice(
                state,
                true,
                format!("no recipe starts with `{prefix}`; {listed}"),
            );
        }
        [only] => {
            let mut field = TextArea::new(vec![format!("recipe {only}")]);
            set_field_focus(&mut field, true, &state.theme);
            field.move_cursor(tui_textarea::CursorMove::End);
            state.command_line = Some(field);
            notice(state, false, "Enter runs it".into());
        }
        several => notice(state, false, several.join("  ")),
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
            notice(state, false, usage);
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
        notice(state, true, format!("no action starts with `{word}`"));
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
            notice(state, false, usage);
        }
    } else {
        notice(state, false, matches.join("  "));
    }
}

pub(super) fn start_task(state: &mut AppState, effects: &mut Vec<Effect>) {
    let task = state.task.lines().join("\n").trim().to_string();
    if task.is_empty() {
        notice(
            state,
            true,
            "the task is empty: say what the agent should do".into(),
        );
        return;
    }
    if run_active(state) {
        if state.recipe.is_some() || state.status.run == RunStatus::Stopping {
            notice(
                state,
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
        notice(
            state,
            true,
            "no model is configured: set OPENAI_API_KEY (or OPENAI_BASE_URL / --base-url for a \
             local server); `:` actions work without one"
                .into(),
        );
        return;
    }
    state.task = TextArea::default();
    begin_run(state, task, false, None, effects);
}
