//! The one place state changes: an event in, state updated, effects out.
//! Nothing here waits; the services carry out the effects.

use crossterm::event::KeyEvent;
use serde_json::Value;
use tui_textarea::TextArea;

use crate::actions::{Action, ActionResult, Target};
use crate::dom::element_line;
use crate::environment::{ApprovalDecision, ApprovalMode};
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

mod agent_events;
mod approval;
mod commands;
mod conversation;

use agent_events::*;
use approval::*;
use commands::*;
use conversation::*;

/// What the model is told when the person skips an action.
const SKIPPED: &str =
    "the person skipped this action; do not repeat it, choose another way or ask the user";

/// Applies one event to the state and returns the work it asks for.
pub fn update(state: &mut AppState, event: AppEvent) -> Vec<Effect> {
    if state.replay.is_some() {
        match &event {
            AppEvent::ApprovalRequested { .. } | AppEvent::AskUser { .. } => {
                // The person is needed on the live session: it comes back.
                close_replay(state);
                notice(
                    state,
                    false,
                    "the replay closed: the live session needs you".into(),
                );
            }
            AppEvent::Page(_)
            | AppEvent::Picture(_)
            | AppEvent::Agent(_)
            | AppEvent::ActionFinished { .. }
            | AppEvent::RunEnded { .. }
            | AppEvent::BrowserReady { .. } => {
                // News of the live session goes to its panes, put aside
                // while the replay is shown.
                if let Some(mut replay) = state.replay.take() {
                    replay.live.swap(state);
                    let effects = apply(state, event);
                    replay.live.swap(state);
                    state.replay = Some(replay);
                    return effects
                        .into_iter()
                        .filter(|e| !matches!(e, Effect::RenderPicture(_) | Effect::Highlight(_)))
                        .collect();
                }
            }
            _ => {}
        }
    }
    apply(state, event)
}

fn apply(state: &mut AppState, event: AppEvent) -> Vec<Effect> {
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
            // (Shown in a replay's log too, where the export began.)
            push_log(
                state,
                LogEntry::row("export", path.display().to_string(), Outcome::Ok),
            );
            notice(
                state,
                false,
                format!("session exported as a recipe: {}", path.display()),
            );
        }
        AppEvent::Exported(Err(why)) => notice(state, true, format!("export failed: {why}")),
        AppEvent::Notice { error, text } => notice(state, error, text),
        AppEvent::SessionsListed { generation, files } => sessions_listed(state, generation, files),
        AppEvent::SessionsRead {
            generation,
            from,
            summaries,
        } => sessions_read(state, generation, from, summaries),
        AppEvent::TraceOpened(opened) => trace_opened(state, opened, &mut effects),
        AppEvent::ReplayPicture { row, shot } => replay_picture(state, row, shot, &mut effects),
        AppEvent::ResumeReady(plan) => resume_ready(state, plan, &mut effects),
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
        None => match state.sessions.as_mut() {
            Some(view) => view.search.as_mut(),
            None if state.focus == Pane::Task => Some(&mut state.task),
            None => None,
        },
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
    let rows = super::sessions::visible_rows(state.size);
    if let Some(view) = state.sessions.as_mut() {
        let len = view.shown.len();
        view.list.follow(len, rows);
    }
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
    if state.replay.is_some() {
        // A recorded listing names no element of the live page.
        return;
    }
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
    let layers = state.key_layers();
    let command = state.keymap.lookup_layered(&layers, &key);
    let Some(command) = command else {
        if context.takes_text() {
            if let Some(field) = active_field(state) {
                field.input(key);
            }
            if context == KeyContext::SessionSearch {
                search_typed(state);
            }
        }
        return;
    };
    if command == Command::Quit {
        quit(state, effects);
        return;
    }
    if layers.first() == Some(&KeyContext::Replay)
        && state.keymap.bound(KeyContext::Replay, &key).is_some()
    {
        on_replay_key(state, command, effects);
        return;
    }
    match context {
        KeyContext::Sessions => on_sessions_key(state, command, effects),
        KeyContext::SessionSearch => on_search_key(state, command),
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
    if matches!(
        command,
        Command::FocusTask | Command::CommandLine | Command::PickRecipe
    ) {
        // Acting on the live session: its panes come back.
        close_replay(state);
    }
    match command {
        Command::Help => state.modal = Some(Modal::Help { scroll: 0 }),
        Command::NewConversation => {
            close_replay(state);
            new_conversation(state, effects);
        }
        Command::OpenSessions => open_sessions(state, effects),
        Command::RetryStep => retry_failed_step(state, effects),
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
                    show_replay_row(state, effects);
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
