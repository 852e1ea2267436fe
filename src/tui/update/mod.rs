//! The one place state changes: an event in, state updated, effects out.
//! Nothing here waits; the services carry out the effects.
//!
//! This file takes the events; its children hold what they do, each a
//! concern of its own, lower files never importing higher ones: the keys
//! (`keypress`) over the command line, the sessions view, the
//! conversation and the approval, over the log rows (`log`) and the
//! panes' focus and cursors (`view`).

mod agent_events;
mod approval;
mod commands;
mod conversation;
mod debugging;
mod export;
mod keypress;
mod log;
mod named;
mod picker;
mod recording;
mod sessions;
mod view;

use std::sync::Arc;

use tui_textarea::TextArea;

use crate::actions::ActionResult;
use crate::tui::event::{AppEvent, Effect};
use crate::tui::sitemap_tree;
use crate::tui::state::{
    AppState, ApprovalModal, AskModal, BrowserStatus, ListView, LoadState, LogEntry, Modal,
    Outcome, Pane, RunStatus,
};
use crate::tui::task::set_field_focus;

use self::agent_events::on_agent_event;
use self::conversation::resume_ready;
use self::keypress::{on_key, quit};
use self::log::{log_side_effects, push_log};
use self::sessions::{replay_picture, sessions_listed, sessions_read, trace_opened};
use self::view::{active_field, refollow, request_picture, restyle_fields};

/// Applies one event to the state and returns the work it asks for.
pub fn update(state: &mut AppState, event: AppEvent) -> Vec<Effect> {
    if state.replay.is_some() {
        match &event {
            AppEvent::ApprovalRequested { .. } | AppEvent::AskUser { .. } => {
                // The person is needed on the live session: it comes back.
                state.close_replay();
                state.notice(
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
                    state.trade_live(&mut replay.live);
                    let effects = apply(state, event);
                    state.trade_live(&mut replay.live);
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
        AppEvent::Terminate => quit(state, &mut effects),
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
            state.notice(true, format!("browser: {why}"));
            state.status.browser = BrowserStatus::Failed(why.to_string());
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
            state.picture.shot = Some(Arc::new(*shot));
            request_picture(state, &mut effects);
        }
        AppEvent::PictureRendered(rendered) => {
            if state.picture.requested == Some(rendered.key) {
                state.picture.rendered = Some(*rendered);
            }
        }
        AppEvent::ActionFinished { id, result, ms } => {
            if let Some(entry) = state.log.iter_mut().find(|e| e.manual_id == Some(id)) {
                entry.outcome = Outcome::from(&result);
                entry.ms = Some(ms);
            }
            if let ActionResult::Failure { reason, message } = &result {
                state.notice(true, format!("{reason}: {message}"));
            }
            log_side_effects(state, &result);
        }
        AppEvent::Agent(event) => on_agent_event(state, *event),
        AppEvent::ApprovalRequested { request, reply } => {
            state.notice(
                false,
                format!("step {} waits for your approval", request.step),
            );
            state.modal = Some(Modal::Approval(Box::new(ApprovalModal {
                request: *request,
                reply: Some(reply),
                editor: None,
                error: None,
                picking: false,
                proposed: None,
                note: None,
            })));
        }
        AppEvent::AskUser { question, reply } => {
            let mut answer = TextArea::default();
            set_field_focus(&mut answer, true, &state.theme);
            state.modal = Some(Modal::AskUser(Box::new(AskModal {
                question,
                answer,
                reply: Some(reply),
                from_page: false,
            })));
        }
        AppEvent::PageDialog {
            kind,
            message,
            reply,
        } => {
            let mut answer = TextArea::default();
            set_field_focus(&mut answer, true, &state.theme);
            let typed = match kind.as_str() {
                "prompt" => " with what you type",
                _ => "",
            };
            let question = format!(
                "The page opened a {kind} dialog:\n\n{message}\n\nEnter accepts it{typed}; Esc dismisses it. Your answer is a step of the recording."
            );
            state.modal = Some(Modal::AskUser(Box::new(AskModal {
                question,
                answer,
                reply: Some(reply),
                from_page: true,
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
                state.notice(true, error);
            }
            state.reflection.streaming = false;
            state.recipe = None;
            state.recipe_began = false;
            state.recipe_subgoals.clear();
            debugging::debug_ended(state, &mut effects);
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
            state.notice(false, format!("theme {} loaded", theme.name));
            state.theme = theme;
            state.status.theme_error = None;
            restyle_fields(state);
        }
        AppEvent::ThemeReloaded(Err(error)) => {
            state.status.theme_error = Some(format!("{error} (keeping the last good theme)"));
        }
        AppEvent::ScriptsLoaded {
            catalog,
            recipes,
            files,
        } => {
            state.catalog = *catalog;
            state.recipes = recipes;
            // The status line counts files, `-` when none is loaded. A
            // reload that failed says so right after this (the last good
            // version stays loaded).
            state.status.scripts = if files == 0 {
                LoadState::default()
            } else {
                LoadState::Loaded(files)
            };
        }
        AppEvent::Exported(Ok(path)) => {
            // Also a log row: the watcher's reload notice for the new file
            // follows at once and would hide the status line's message.
            // (Shown in a replay's log too, where the export began.)
            push_log(
                state,
                LogEntry::row("export", path.display().to_string(), Outcome::Ok),
            );
            state.notice(
                false,
                format!("session exported as a recipe: {}", path.display()),
            );
        }
        AppEvent::Exported(Err(why)) => state.notice(true, format!("export failed: {why}")),
        AppEvent::Notice { error, text } => state.notice(error, text),
        AppEvent::SessionsListed { generation, files } => sessions_listed(state, generation, files),
        AppEvent::SessionsRead {
            generation,
            from,
            summaries,
        } => sessions_read(state, generation, from, summaries),
        AppEvent::TraceOpened(opened) => trace_opened(state, opened, &mut effects),
        AppEvent::ReplayPicture { row, shot } => replay_picture(state, row, shot, &mut effects),
        AppEvent::ResumeReady(plan) => resume_ready(state, plan, &mut effects),
        AppEvent::Recorded(input) => match *input {
            crate::browser::record::Input::Pick { facts } => {
                picker::picked_on_page(state, facts, &mut effects)
            }
            input => recording::recorded(state, input),
        },
        AppEvent::Mouse(mouse) => view::page_mouse(state, mouse, &mut effects),
        AppEvent::Locators { pick, report } => picker::answered(state, pick, report),
        AppEvent::RecordingStopped => recording::recording_stopped(state, &mut effects),
        AppEvent::RecordingSaved(saved) => recording::recording_saved(state, saved),
        AppEvent::StartRecording(name) => recording::start_recording(state, &name, &mut effects),
        AppEvent::StartDebug(start) => debugging::start_debugging(state, start, &mut effects),
        AppEvent::Debug(report) => debugging::debug_report(state, report, &mut effects),
        AppEvent::DebugSource(text) => debugging::debug_source(state, text),
    }
    effects
}
