//! The one place state changes: an event in, state updated, effects out.
//! Nothing here waits; the services carry out the effects.

use crossterm::event::KeyEvent;
use serde_json::Value;
use tui_textarea::TextArea;

use crate::actions::{Action, ActionResult, Target};
use crate::agent::{ApprovalDecision, ApprovalMode};
use crate::dom::element_line;
use crate::events::Event;

use super::app::{
    AppState, ApprovalModal, AskModal, BrowserStatus, ListView, LoadState, LogEntry, Modal, Notice,
    Outcome, Pane, ReflectionView, RunStatus,
};
use super::draw::clip;
use super::event::{AppEvent, Effect};
use super::keymap::{Command, KeyContext};
use super::task::set_field_focus;
use super::{modals, reflection, sitemap_tree};

/// What the model is told when the person skips an action.
const SKIPPED: &str =
    "the person skipped this action; do not repeat it, choose another way or ask the user";

/// Applies one event to the state and returns the work it asks for.
pub fn update(state: &mut AppState, event: AppEvent) -> Vec<Effect> {
    let mut effects = Vec::new();
    match event {
        AppEvent::Key(key) => on_key(state, key, &mut effects),
        AppEvent::Resize(columns, rows) => {
            state.size = (columns, rows);
            refollow(state);
            request_picture(state, &mut effects);
        }
        AppEvent::Paste(text) => {
            if let Some(field) = active_field(state) {
                field.insert_str(text.replace(['\r', '\n'], " "));
            }
        }
        AppEvent::BrowserReady { url } => {
            state.status.browser = BrowserStatus::Ready;
            state.status.url = url;
        }
        AppEvent::BrowserFailed(why) => {
            notice(state, true, format!("browser: {why}"));
            state.status.browser = BrowserStatus::Failed(why);
        }
        AppEvent::Page(page) => {
            let same_page = state.page.as_ref().is_some_and(|p| p.url == page.url);
            if !same_page {
                // A new page starts at the top of its listing.
                state.elements = ListView::default();
            }
            state.status.url = page.url.clone();
            state.page = Some(*page);
            let (len, rows) = (state.element_count(), state.visible_rows(Pane::Elements));
            state.elements.follow(len, rows);
        }
        AppEvent::Picture(shot) => {
            state.pictures_seen += 1;
            // The last rendering stays up until this one is ready, so the
            // pane never blinks empty.
            state.picture.shot = Some(std::sync::Arc::new(*shot));
            request_picture(state, &mut effects);
        }
        AppEvent::PictureRendered(rendered) => {
            if state.picture.requested == Some(rendered.key) {
                state.picture.rendered = Some(*rendered);
            }
        }
        AppEvent::ActionFinished { id, result, ms } => {
            if let Some(entry) = state.log.iter_mut().find(|e| e.manual_id == Some(id)) {
                entry.outcome = outcome_of(&result);
                entry.ms = Some(ms);
            }
            if let ActionResult::Failure { reason, message } = &result {
                notice(state, true, format!("{reason}: {message}"));
            }
            log_side_effects(state, &result);
        }
        AppEvent::Agent(event) => on_agent_event(state, *event),
        AppEvent::ApprovalRequested { request, reply } => {
            notice(
                state,
                false,
                format!("step {} waits for your approval", request.step),
            );
            state.modal = Some(Modal::Approval(Box::new(ApprovalModal {
                request: *request,
                reply: Some(reply),
                editor: None,
                error: None,
                picking: false,
            })));
        }
        AppEvent::AskUser { question, reply } => {
            let mut answer = TextArea::default();
            set_field_focus(&mut answer, true, &state.theme);
            state.modal = Some(Modal::AskUser(Box::new(AskModal {
                question,
                answer,
                reply: Some(reply),
            })));
        }
        AppEvent::RunEnded { error } => {
            let never_started = state.status.step == 0 && state.status.max_steps == 0;
            if never_started && error.is_some() {
                state.status.run = RunStatus::Idle;
            } else if matches!(
                state.status.run,
                RunStatus::Running | RunStatus::Paused | RunStatus::Stopping
            ) {
                state.status.run = RunStatus::Finished { success: false };
            }
            if let Some(error) = error {
                notice(state, true, error);
            }
            state.reflection.streaming = false;
            state.recipe = None;
            state.recipe_began = false;
            state.recipe_subgoals.clear();
        }
        AppEvent::Sitemaps { sitemaps, error } => {
            state.status.sitemaps = match error {
                Some(error) => LoadState::Failed(error),
                None => LoadState::Loaded(sitemaps.len()),
            };
            state.sitemaps = sitemaps;
            let len = sitemap_tree::rows(state).len();
            let rows = state.visible_rows(Pane::Sitemap);
            state.sitemap_view.follow(len, rows);
        }
        AppEvent::ThemeReloaded(Ok(theme)) => {
            notice(state, false, format!("theme {} loaded", theme.name));
            state.theme = theme;
            state.status.theme_error = None;
            restyle_fields(state);
        }
        AppEvent::ThemeReloaded(Err(error)) => {
            state.status.theme_error = Some(format!("{error} (keeping the last good theme)"));
        }
        AppEvent::ScriptsLoaded { catalog, recipes } => {
            state.catalog = *catalog;
            state.recipes = recipes;
        }
        AppEvent::Exported(Ok(path)) => {
            // Also a log row: the watcher's reload notice for the new file
            // follows at once and would hide the status line's message.
            push_log(
                state,
                LogEntry {
                    step: None,
                    manual_id: None,
                    action: "export".into(),
                    params: String::new(),
                    target: path.display().to_string(),
                    outcome: Outcome::Ok,
                    ms: None,
                    record: None,
                    raw_response: String::new(),
                },
            );
            notice(
                state,
                false,
                format!("session exported as a recipe: {}", path.display()),
            );
        }
        AppEvent::Exported(Err(why)) => notice(state, true, format!("export failed: {why}")),
        AppEvent::Notice { error, text } => notice(state, error, text),
    }
    effects
}

fn notice(state: &mut AppState, error: bool, text: String) {
    state.status.notice = Some(Notice { error, text });
}

fn outcome_of(result: &ActionResult) -> Outcome {
    match result {
        ActionResult::Success { .. } => Outcome::Ok,
        ActionResult::Failure { reason, message } => Outcome::Failed {
            reason: reason.as_str().to_string(),
            message: message.clone(),
        },
    }
}

/// The text field keys go to now, if any.
fn active_field(state: &mut AppState) -> Option<&mut TextArea<'static>> {
    if let Some(field) = state.command_line.as_mut() {
        return Some(field);
    }
    match state.modal.as_mut() {
        Some(Modal::Approval(m)) if !m.picking => m.editor.as_mut(),
        Some(Modal::AskUser(m)) => Some(&mut m.answer),
        Some(_) => None,
        None if state.focus == Pane::Task => Some(&mut state.task),
        None => None,
    }
}

fn restyle_fields(state: &mut AppState) {
    let theme = state.theme.clone();
    let task_focused = state.focus == Pane::Task && state.modal.is_none();
    set_field_focus(&mut state.task, task_focused, &theme);
    if let Some(field) = state.command_line.as_mut() {
        set_field_focus(field, true, &theme);
    }
}

fn set_focus(state: &mut AppState, pane: Pane) {
    state.focus = pane;
    restyle_fields(state);
}

/// Keeps every list's cursor visible after a resize or new content.
fn refollow(state: &mut AppState) {
    let rows = state.visible_rows(Pane::Elements);
    state.elements.follow(state.element_count(), rows);
    let rows = state.visible_rows(Pane::Log);
    state.log_view.follow(state.log.len(), rows);
    let rows = state.visible_rows(Pane::Sitemap);
    let len = sitemap_tree::rows(state).len();
    state.sitemap_view.follow(len, rows);
}

/// Where a list cursor goes for a movement command.
fn moved(view: &ListView, command: Command, len: usize, rows: usize) -> Option<usize> {
    let at = view.cursor;
    Some(match command {
        Command::Up => at.saturating_sub(1),
        Command::Down => at + 1,
        Command::PageUp => at.saturating_sub(rows),
        Command::PageDown => at + rows,
        Command::Top => 0,
        Command::Bottom => len.saturating_sub(1),
        _ => return None,
    })
}

/// Scrolls text (reflection, inspector, help) for a movement command.
fn scrolled(offset: usize, command: Command, rows: usize, lines: usize) -> usize {
    let max = lines.saturating_sub(1);
    match command {
        Command::Up => offset.saturating_sub(1),
        Command::Down => (offset + 1).min(max),
        Command::PageUp => offset.saturating_sub(rows),
        Command::PageDown => (offset + rows).min(max),
        Command::Top => 0,
        Command::Bottom => max,
        _ => offset,
    }
}

/// Moves the listing cursor and asks for the element to be outlined.
fn move_elements(state: &mut AppState, command: Command, effects: &mut Vec<Effect>) {
    let (len, rows) = (state.element_count(), state.visible_rows(Pane::Elements));
    if let Some(target) = moved(&state.elements, command, len, rows) {
        let before = state.elements.cursor;
        state.elements.move_to(target, len, rows);
        if state.elements.cursor != before {
            highlight_cursor(state, effects);
            request_picture(state, effects);
        }
    }
}

fn highlight_cursor(state: &AppState, effects: &mut Vec<Effect>) {
    if let Some(element) = state
        .page
        .as_ref()
        .and_then(|p| p.elements.get(state.elements.cursor))
    {
        if let Ok(index) = u32::try_from(element.index.0) {
            effects.push(Effect::Highlight(index));
        }
    }
}

/// Asks for the picture to be fitted into the page pane, with the
/// element under the listing's cursor outlined, unless that exact
/// rendering was already asked for.
fn request_picture(state: &mut AppState, effects: &mut Vec<Effect>) {
    if !state.picture.visible {
        return;
    }
    let Some(shot) = state.picture.shot.clone() else {
        return;
    };
    let area = super::draw::areas_with(state.area(), true).page;
    let (columns, rows) = super::page::picture_cells(area);
    if columns == 0 || rows == 0 {
        return;
    }
    let selected = state
        .page
        .as_ref()
        .and_then(|p| p.elements.get(state.elements.cursor))
        .map(|e| e.index.0);
    let mark = selected.and_then(|i| shot.marks.iter().find(|m| m.index == i).copied());
    let key = super::page::PictureJobKey {
        picture: state.pictures_seen,
        columns,
        rows,
        outline: mark.map(|m| m.index),
    };
    if state.picture.requested == Some(key) {
        return;
    }
    state.picture.requested = Some(key);
    let color = match state.theme.palette.warn {
        ratatui::style::Color::Rgb(r, g, b) => [r, g, b],
        _ => [235, 203, 139],
    };
    effects.push(Effect::RenderPicture(super::page::PictureJob {
        key,
        shot,
        outline: mark.map(|m| (m, color)),
    }));
}

fn run_active(state: &AppState) -> bool {
    matches!(
        state.status.run,
        RunStatus::Running | RunStatus::Paused | RunStatus::Stopping
    )
}

fn on_key(state: &mut AppState, key: KeyEvent, effects: &mut Vec<Effect>) {
    let context = state.key_context();
    let command = state.keymap.lookup(context, &key);
    let Some(command) = command else {
        if context.takes_text() {
            if let Some(field) = active_field(state) {
                field.input(key);
            }
        }
        return;
    };
    if command == Command::Quit {
        quit(state, effects);
        return;
    }
    match context {
        KeyContext::CommandLine => match command {
            Command::Submit => submit_command_line(state, effects),
            Command::Cancel => state.command_line = None,
            Command::Complete => complete_command(state),
            _ => {}
        },
        KeyContext::Task => match command {
            Command::Submit => start_task(state, effects),
            Command::Cancel => set_focus(state, Pane::Elements),
            _ => {}
        },
        KeyContext::Approval => on_approval_key(state, command, effects),
        KeyContext::ApprovalEdit => match command {
            Command::Submit => submit_edit(state, effects),
            Command::Cancel => {
                if let Some(Modal::Approval(m)) = state.modal.as_mut() {
                    m.editor = None;
                    m.error = None;
                }
            }
            _ => {}
        },
        KeyContext::Picking => match command {
            Command::Submit => pick_element(state, effects),
            Command::Cancel => {
                if let Some(Modal::Approval(m)) = state.modal.as_mut() {
                    m.picking = false;
                }
            }
            movement => move_elements(state, movement, effects),
        },
        KeyContext::AskUser => match command {
            Command::Submit => answer_question(state, true, effects),
            Command::Cancel => answer_question(state, false, effects),
            _ => {}
        },
        KeyContext::Inspector | KeyContext::Help => {
            let (lines, rows) = match &state.modal {
                Some(Modal::Inspector { entry, .. }) => {
                    let (_, body, _) = modals::inspector_layout(state.size);
                    let total = state.log.get(*entry).map_or(0, |e| {
                        modals::inspector_lines(e, &state.theme, body.width).len()
                    });
                    // Offsets run to the one that shows the last page, so
                    // End lands on the end of the prompt, not past it.
                    let max = modals::inspector_max_scroll(total, state.size);
                    (max + 1, usize::from(body.height).max(1))
                }
                _ => (
                    modals::help_lines(state).len(),
                    usize::from(state.size.1 / 2).max(1),
                ),
            };
            match (command, state.modal.as_mut()) {
                (Command::Cancel, _) => state.modal = None,
                (_, Some(Modal::Inspector { scroll, .. }) | Some(Modal::Help { scroll })) => {
                    *scroll = scrolled(*scroll, command, rows, lines);
                }
                _ => {}
            }
        }
        _ => on_pane_key(state, command, effects),
    }
}

fn quit(state: &mut AppState, effects: &mut Vec<Effect>) {
    // Whoever waits on the person is answered first, so the agent task
    // ends cleanly instead of waiting on a dropped channel.
    match state.modal.take() {
        Some(Modal::Approval(mut m)) => {
            if let Some(reply) = m.reply.take() {
                effects.push(Effect::Decide {
                    reply,
                    decision: ApprovalDecision::Stop,
                });
            }
        }
        Some(Modal::AskUser(mut m)) => {
            if let Some(reply) = m.reply.take() {
                effects.push(Effect::Answer {
                    reply,
                    answer: None,
                });
            }
        }
        _ => {}
    }
    if run_active(state) {
        effects.push(Effect::StopRun);
    }
    state.quit = true;
    effects.push(Effect::Quit);
}

fn on_pane_key(state: &mut AppState, command: Command, effects: &mut Vec<Effect>) {
    match command {
        Command::Help => state.modal = Some(Modal::Help { scroll: 0 }),
        Command::FocusNext => set_focus(state, state.focus.cycle(true)),
        Command::FocusPrev => set_focus(state, state.focus.cycle(false)),
        Command::FocusTask => set_focus(state, Pane::Task),
        Command::CommandLine => {
            let mut field = TextArea::default();
            set_field_focus(&mut field, true, &state.theme);
            field.set_placeholder_text("action and parameters, e.g. click 12 · Esc closes");
            state.command_line = Some(field);
        }
        Command::CycleApproval => {
            let next = match state.status.approval {
                ApprovalMode::Never => ApprovalMode::Risky,
                ApprovalMode::Risky => ApprovalMode::Always,
                ApprovalMode::Always => ApprovalMode::Never,
            };
            state.status.approval = next;
            notice(state, false, format!("approval mode: {}", next.as_str()));
            effects.push(Effect::SetApprovalMode(next));
        }
        Command::StopRun => {
            if run_active(state) {
                state.status.run = RunStatus::Stopping;
                effects.push(Effect::StopRun);
            } else if state
                .log
                .iter()
                .any(|e| e.manual_id.is_some() && e.outcome == Outcome::Pending)
            {
                // A hand-typed custom action may be a script in a loop.
                notice(state, false, "cancelling the running script".into());
                effects.push(Effect::CancelScript);
            } else {
                notice(state, true, "no run, recipe or script to stop".into());
            }
        }
        Command::PickRecipe => {
            let mut field = TextArea::new(vec!["recipe ".to_string()]);
            set_field_focus(&mut field, true, &state.theme);
            field.move_cursor(tui_textarea::CursorMove::End);
            state.command_line = Some(field);
            let listed = recipe_list(state);
            notice(state, state.recipes.is_empty(), listed);
        }
        Command::ExportSession => {
            notice(state, false, "exporting the session as a recipe…".into());
            effects.push(Effect::ExportSession);
        }
        Command::PauseResume => match state.status.run {
            RunStatus::Running => {
                state.status.run = RunStatus::Paused;
                notice(
                    state,
                    false,
                    "paused before the next step (p resumes)".into(),
                );
                effects.push(Effect::SetPaused(true));
            }
            RunStatus::Paused => {
                state.status.run = RunStatus::Running;
                notice(state, false, "resumed".into());
                effects.push(Effect::SetPaused(false));
            }
            _ => notice(state, true, "no run to pause".into()),
        },
        Command::TogglePage => {
            state.picture.visible = !state.picture.visible;
            state.picture.requested = None;
            refollow(state);
            effects.push(Effect::ShowPage(state.picture.visible));
            request_picture(state, effects);
        }
        Command::NextTheme => {
            let next = if state.theme.name == "light" {
                "dark"
            } else {
                "light"
            };
            effects.push(Effect::LoadTheme(next.to_string()));
        }
        Command::Inspect if state.focus == Pane::Log => {
            if state.log_view.cursor < state.log.len() {
                state.modal = Some(Modal::Inspector {
                    entry: state.log_view.cursor,
                    scroll: 0,
                });
            }
        }
        Command::Submit if state.focus == Pane::Elements => highlight_cursor(state, effects),
        movement => match state.focus {
            Pane::Elements => move_elements(state, movement, effects),
            Pane::Log => {
                let (len, rows) = (state.log.len(), state.visible_rows(Pane::Log));
                if let Some(target) = moved(&state.log_view, movement, len, rows) {
                    state.log_view.move_to(target, len, rows);
                }
            }
            Pane::Sitemap => {
                let len = sitemap_tree::rows(state).len();
                let rows = state.visible_rows(Pane::Sitemap);
                if let Some(target) = moved(&state.sitemap_view, movement, len, rows) {
                    state.sitemap_view.move_to(target, len, rows);
                }
            }
            Pane::Reflection => {
                let lines = reflection::lines(state).len();
                let rows = state.visible_rows(Pane::Reflection);
                state.reflection_view.offset =
                    scrolled(state.reflection_view.offset, movement, rows, lines);
            }
            Pane::Task => {}
        },
    }
}

/// The listed element an action targets, as the log and approval show it.
fn target_text(state: &AppState, target: Option<&Target>) -> String {
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

fn push_log(state: &mut AppState, entry: LogEntry) {
    let was_at_end = state.log.is_empty() || state.log_view.cursor + 1 >= state.log.len();
    state.log.push(entry);
    let (len, rows) = (state.log.len(), state.visible_rows(Pane::Log));
    if was_at_end {
        state.log_view.move_to(len - 1, len, rows);
    }
}

fn submit_command_line(state: &mut AppState, effects: &mut Vec<Effect>) {
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
                step: None,
                manual_id: Some(id),
                action: action.name().to_string(),
                params: action.params().to_string(),
                target: target_text(state, action.target()),
                outcome: Outcome::Pending,
                ms: None,
                record: None,
                raw_response: String::new(),
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
fn log_side_effects(state: &mut AppState, result: &ActionResult) {
    let ActionResult::Success { data: Some(data) } = result else {
        return;
    };
    let downloads = data.get("downloads").and_then(|d| d.as_array());
    for download in downloads.into_iter().flatten() {
        let text = |key: &str| download.get(key).and_then(|v| v.as_str()).unwrap_or("");
        let size = download.get("size").and_then(|v| v.as_u64()).unwrap_or(0);
        push_log(
            state,
            LogEntry {
                step: None,
                manual_id: None,
                action: "download".into(),
                params: format!("{size} bytes, {}", text("type")),
                target: text("file").to_string(),
                outcome: if text("state") == "completed" {
                    Outcome::Ok
                } else {
                    Outcome::Failed {
                        reason: text("state").to_string(),
                        message: format!("the download of {} did not complete", text("url")),
                    }
                },
                ms: None,
                record: None,
                raw_response: String::new(),
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
fn recipe_list(state: &AppState) -> String {
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

/// `:recipe NAME`: runs a loaded recipe like an agent run.
fn start_recipe(state: &mut AppState, name: &str, effects: &mut Vec<Effect>) {
    if name.is_empty() {
        let listed = recipe_list(state);
        notice(state, true, format!("which recipe? {listed}"));
        return;
    }
    if !state.recipes.iter().any(|r| r.name == name) {
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
    }
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
        approval: state.status.approval,
    });
}

/// Completes a recipe name after `recipe `.
fn complete_recipe(state: &mut AppState, prefix: &str) {
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
fn complete_command(state: &mut AppState) {
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

fn start_task(state: &mut AppState, effects: &mut Vec<Effect>) {
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
        notice(
            state,
            true,
            "a run is in progress; stop it (s) first".into(),
        );
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
    state.status.run = RunStatus::Running;
    state.status.step = 0;
    state.reflection = ReflectionView::default();
    state.reflection_view = ListView::default();
    set_focus(state, Pane::Elements);
    effects.push(Effect::StartRun {
        task,
        approval: state.status.approval,
    });
}

/// Takes the approval modal's reply channel and closes the modal.
fn decide(state: &mut AppState, decision: ApprovalDecision, effects: &mut Vec<Effect>) {
    if let Some(Modal::Approval(mut m)) = state.modal.take() {
        if let Some(reply) = m.reply.take() {
            effects.push(Effect::Decide { reply, decision });
        }
    }
}

fn on_approval_key(state: &mut AppState, command: Command, effects: &mut Vec<Effect>) {
    match command {
        Command::Approve => decide(state, ApprovalDecision::Approve { note: None }, effects),
        Command::Skip => decide(
            state,
            ApprovalDecision::Deny {
                reason: SKIPPED.into(),
            },
            effects,
        ),
        Command::StopRun => {
            state.status.run = RunStatus::Stopping;
            decide(state, ApprovalDecision::Stop, effects);
        }
        Command::Edit => {
            let theme = state.theme.clone();
            if let Some(Modal::Approval(m)) = state.modal.as_mut() {
                let json =
                    serde_json::to_string_pretty(&m.request.action.to_json()).unwrap_or_default();
                let mut editor = TextArea::new(json.lines().map(str::to_string).collect());
                set_field_focus(&mut editor, true, &theme);
                m.editor = Some(editor);
                m.error = None;
            }
        }
        Command::Pick => {
            let target = match &state.modal {
                Some(Modal::Approval(m)) => m.request.action.target().cloned(),
                _ => None,
            };
            if target.is_none() {
                notice(state, true, "this action has no element to change".into());
                return;
            }
            if let Some(Modal::Approval(m)) = state.modal.as_mut() {
                m.picking = true;
            }
            // Start the cursor on the element the model chose.
            if let Some(Target::Index { index }) = target {
                if let Some(pos) = state
                    .page
                    .as_ref()
                    .and_then(|p| p.elements.iter().position(|e| e.index == index))
                {
                    let (len, rows) = (state.element_count(), state.visible_rows(Pane::Elements));
                    state.elements.move_to(pos, len, rows);
                }
            }
        }
        _ => {}
    }
}

fn submit_edit(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Some(Modal::Approval(m)) = state.modal.as_mut() else {
        return;
    };
    let text = m
        .editor
        .as_ref()
        .map(|e| e.lines().join("\n"))
        .unwrap_or_default();
    let parsed = serde_json::from_str::<Value>(&text)
        .map_err(|e| format!("not JSON: {e}"))
        .and_then(|value| state.catalog.parse(&value).map_err(|e| e.to_string()));
    match parsed {
        Ok(action) => decide(state, ApprovalDecision::Edit(action), effects),
        Err(error) => m.error = Some(error),
    }
}

/// The same action aimed at another listed element.
fn retarget(state: &AppState, action: &Action, index: u32) -> Result<Action, String> {
    let mut json = action.to_json();
    let params = json
        .get_mut(action.name())
        .and_then(Value::as_object_mut)
        .ok_or_else(|| "this action has no parameters to change".to_string())?;
    params.remove("selector");
    params.insert("index".into(), Value::from(index));
    state.catalog.parse(&json).map_err(|e| e.to_string())
}

fn pick_element(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Some(index) = state
        .page
        .as_ref()
        .and_then(|p| p.elements.get(state.elements.cursor))
        .and_then(|e| u32::try_from(e.index.0).ok())
    else {
        notice(state, true, "no element under the cursor".into());
        return;
    };
    let Some(Modal::Approval(m)) = &state.modal else {
        return;
    };
    match retarget(state, &m.request.action, index) {
        Ok(action) => decide(state, ApprovalDecision::Edit(action), effects),
        Err(error) => {
            notice(state, true, error.clone());
            if let Some(Modal::Approval(m)) = state.modal.as_mut() {
                m.picking = false;
                m.error = Some(error);
            }
        }
    }
}

fn answer_question(state: &mut AppState, send: bool, effects: &mut Vec<Effect>) {
    if let Some(Modal::AskUser(mut m)) = state.modal.take() {
        let text = m.answer.lines().join("\n").trim().to_string();
        let answer = (send && !text.is_empty()).then_some(text);
        if let Some(reply) = m.reply.take() {
            effects.push(Effect::Answer { reply, answer });
        }
    }
}

/// The log entry of an agent step, created when first needed.
fn step_entry(state: &mut AppState, step: usize) -> &mut LogEntry {
    let start = state.run_log_start.min(state.log.len());
    let position = state.log[start..].iter().position(|e| e.step == Some(step));
    let at = match position {
        Some(at) => start + at,
        None => {
            push_log(
                state,
                LogEntry {
                    step: Some(step),
                    manual_id: None,
                    action: String::new(),
                    params: String::new(),
                    target: String::new(),
                    outcome: Outcome::Pending,
                    ms: None,
                    record: None,
                    raw_response: String::new(),
                },
            );
            state.log.len() - 1
        }
    };
    &mut state.log[at]
}

fn on_agent_event(state: &mut AppState, event: Event) {
    match event {
        // The picture arrives for the page pane on its own (the
        // workbench's environment sends every one it takes).
        Event::Screenshot(_) => {}
        Event::RunStarted {
            task,
            url,
            max_steps,
            ..
        } if state.recipe.is_some() && state.recipe_began => {
            // `agent("…")` in the recipe: the model's steps get rows of
            // their own, numbered from 1, and the recipe's count resumes
            // after it.
            state.recipe_subgoals.push(state.status.step);
            state.run_log_start = state.log.len();
            state.status.step = 0;
            state.status.url = url;
            state.status.max_steps = max_steps;
            notice(state, false, format!("the recipe asks the model: {task}"));
        }
        Event::RunStarted {
            url,
            model,
            max_steps,
            ..
        } => {
            state.recipe_began = state.recipe.is_some();
            state.status.run = RunStatus::Running;
            state.status.url = url;
            if state.recipe.is_none() {
                // A recipe's "model" is a label; the configured model
                // stays, as it decides whether a task can start.
                state.status.model = model;
            }
            state.status.max_steps = max_steps;
            state.status.step = 0;
            state.run_log_start = state.log.len();
        }
        Event::Observation(o) => {
            state.status.step = o.step;
            state.status.url = o.url;
            let previous = std::mem::take(&mut state.reflection);
            let has_fields = !previous.evaluation.is_empty()
                || !previous.memory.is_empty()
                || !previous.next_goal.is_empty();
            state.reflection = if has_fields {
                ReflectionView {
                    step: o.step,
                    streaming: true,
                    shown_step: Some(previous.shown_step.unwrap_or(previous.step)),
                    ..previous
                }
            } else {
                ReflectionView {
                    step: o.step,
                    streaming: true,
                    ..ReflectionView::default()
                }
            };
            state.reflection.raw.clear();
            state.reflection_view = ListView::default();
        }
        Event::Text { content } => {
            if state.reflection.shown_step.take().is_some() {
                let step = state.reflection.step;
                state.reflection = ReflectionView {
                    step,
                    ..ReflectionView::default()
                };
            }
            state.reflection.push_stream(&content);
        }
        Event::ToolCall { name, parameters } => {
            if state.reflection.shown_step.take().is_some() {
                // The fields on screen are the previous step's; the new
                // action must not be read as following from them.
                let step = state.reflection.step;
                state.reflection = ReflectionView {
                    step,
                    ..ReflectionView::default()
                };
            }
            if state.recipe.is_some() && state.recipe_subgoals.is_empty() {
                // A recipe proposes its steps in order without observing
                // first, so each call opens the next step.
                state.status.step += 1;
            }
            state.reflection.streaming = false;
            state.reflection.action = Some(format!("{name} {parameters}"));
            let target = match parameters.get("index").and_then(Value::as_u64) {
                Some(index) => target_text(
                    state,
                    Some(&Target::Index {
                        index: crate::dom::ElementIndex(
                            usize::try_from(index).unwrap_or(usize::MAX),
                        ),
                    }),
                ),
                None => parameters
                    .get("selector")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            };
            let step = state.status.step;
            let entry = step_entry(state, step);
            entry.action = name;
            entry.params = parameters.to_string();
            entry.target = target;
        }
        Event::ToolResult { result, .. } => {
            let step = state.status.step;
            step_entry(state, step).outcome = outcome_of(&result);
        }
        Event::Step(record) => {
            if let Some(usage) = record.usage {
                state.status.tokens.add(usage);
            }
            let raw = std::mem::take(&mut state.reflection.raw);
            state.reflection.streaming = false;
            state.reflection.shown_step = None;
            state.reflection.evaluation = record.reflection.evaluation_previous_goal.clone();
            state.reflection.memory = record.reflection.memory.clone();
            state.reflection.next_goal = record.reflection.next_goal.clone();
            let (name, params) = match record.action.as_object().and_then(|o| o.iter().next()) {
                Some((name, params)) => (name.clone(), params.to_string()),
                None => ("(none)".to_string(), String::new()),
            };
            state.reflection.action = Some(format!("{name} {params}"));
            let entry = step_entry(state, record.index);
            entry.action = name;
            entry.params = params;
            entry.outcome = outcome_of(&record.result);
            entry.ms = Some(record.timings.act_ms);
            entry.raw_response = raw;
            let result = record.result.clone();
            entry.record = Some(record);
            log_side_effects(state, &result);
        }
        Event::Done { success, text, .. } if !state.recipe_subgoals.is_empty() => {
            if let Some(step) = state.recipe_subgoals.pop() {
                state.status.step = step;
            }
            state.run_log_start = state.log.len();
            state.reflection.streaming = false;
            let outcome = if success { "done" } else { "not done" };
            notice(
                state,
                !success,
                format!("sub-goal {outcome}: {text}; the recipe goes on"),
            );
        }
        Event::Done { success, text, .. } => {
            state.status.run = RunStatus::Finished { success };
            state.recipe = None;
            state.recipe_began = false;
            state.reflection.streaming = false;
            notice(
                state,
                !success,
                if success {
                    format!("done: {text}")
                } else {
                    format!("not done: {text}")
                },
            );
        }
        Event::Error { error, .. } => notice(state, true, error),
        Event::Approval(record) => {
            if record.decision != crate::events::Verdict::Approved || record.note.is_none() {
                notice(
                    state,
                    false,
                    format!("step {}: {}", record.step, record.decision),
                );
            }
        }
        Event::SitemapReloaded { file, error } => match error {
            Some(error) => state.status.sitemaps = LoadState::Failed(error),
            None => notice(state, false, format!("reloaded {file}")),
        },
        Event::ScriptReloaded { file, error } => match error {
            Some(error) => state.status.scripts = LoadState::Failed(error),
            None => {
                let n = match state.status.scripts {
                    LoadState::Loaded(n) => n,
                    _ => 1,
                };
                state.status.scripts = LoadState::Loaded(n);
                notice(state, false, format!("reloaded {file}"));
            }
        },
        Event::ActionRequest { .. } => {}
    }
}
