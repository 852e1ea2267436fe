//! The sessions view and its read-only replays: listing past sessions as
//! the service reads them, searching them, opening one in the panes and
//! stepping through it, and leaving it for a resume or a fresh run of its
//! task.

use std::sync::Arc;

use tui_textarea::TextArea;

use crate::events::{TraceFile, TraceReadError, TraceSummary};
use crate::tui::error::TraceListError;
use crate::tui::event::Effect;
use crate::tui::keys::Command;
use crate::tui::layout::sessions_rows;
use crate::tui::state::{
    AppState, ListView, LiveView, Pane, ReflectionView, Replay, ReplayData, RunStatus, SessionsView,
};
use crate::tui::task::set_field_focus;
use crate::tui::text::clip;
use crate::vision::Screenshot;

use super::conversation::{ask_resume, begin_run, busy};
use super::export::ask_export_name;
use super::view::{moved, request_picture, set_focus};

/// `S` or `:sessions`: opens the list; the service fills it.
pub(super) fn open_sessions(state: &mut AppState, effects: &mut Vec<Effect>) {
    state.close_replay();
    state.command_line = None;
    state.sessions_opened += 1;
    state.sessions = Some(SessionsView::new(state.sessions_opened));
    effects.push(Effect::ListSessions {
        generation: state.sessions_opened,
    });
}

/// The traces are listed (or not).
pub(super) fn sessions_listed(
    state: &mut AppState,
    generation: u64,
    files: Result<Vec<TraceFile>, TraceListError>,
) {
    let view = match state.sessions.as_mut() {
        Some(view) if view.generation == generation => view,
        _ => match state.replay.as_mut().and_then(|r| r.back.as_mut()) {
            Some(view) if view.generation == generation => view,
            _ => return,
        },
    };
    match files {
        Ok(files) => view.listed(files),
        Err(error) => {
            view.listing = false;
            view.error = Some(error.to_string());
        }
    }
    let rows = sessions_rows(state.size);
    if let Some(view) = state.sessions.as_mut() {
        let len = view.shown.len();
        view.list.follow(len, rows);
    }
}

/// More traces were read.
pub(super) fn sessions_read(
    state: &mut AppState,
    generation: u64,
    from: usize,
    summaries: Vec<TraceSummary>,
) {
    let view = match state.sessions.as_mut() {
        Some(view) if view.generation == generation => view,
        _ => match state.replay.as_mut().and_then(|r| r.back.as_mut()) {
            Some(view) if view.generation == generation => view,
            _ => return,
        },
    };
    view.summarized(from, summaries);
}

/// A key in the list of past sessions.
pub(super) fn on_sessions_key(state: &mut AppState, command: Command, effects: &mut Vec<Effect>) {
    let rows = sessions_rows(state.size);
    let Some(view) = state.sessions.as_mut() else {
        return;
    };
    match command {
        Command::Cancel => state.sessions = None,
        Command::Search => {
            let mut field = TextArea::new(vec![view.query.clone()]);
            field.move_cursor(tui_textarea::CursorMove::End);
            set_field_focus(&mut field, true, &state.theme);
            view.search = Some(field);
        }
        Command::Submit => {
            let Some(row) = view.selected() else {
                return;
            };
            if let Some(problem) = &row.problem {
                let text = format!("{} does not read: {problem}", row.file.name);
                state.notice(true, text);
                return;
            }
            let path = row.file.path.clone();
            state.notice(false, format!("opening {}…", path.display()));
            effects.push(Effect::OpenTrace(path));
        }
        Command::Resume => {
            let Some(path) = view.selected().map(|r| r.file.path.clone()) else {
                return;
            };
            ask_resume(state, Some(path), effects);
        }
        movement => {
            let len = view.shown.len();
            if let Some(target) = moved(&view.list, movement, len, rows) {
                view.list.move_to(target, len, rows);
            }
        }
    }
}

/// A key while the search over past sessions is typed.
pub(super) fn on_search_key(state: &mut AppState, command: Command) {
    let Some(view) = state.sessions.as_mut() else {
        return;
    };
    match command {
        Command::Submit => {
            view.search = None;
        }
        Command::Cancel => {
            view.search = None;
            view.query.clear();
            view.refilter();
        }
        _ => {}
    }
}

/// The search field changed: the list follows at once.
pub(super) fn search_typed(state: &mut AppState) {
    let rows = sessions_rows(state.size);
    if let Some(view) = state.sessions.as_mut() {
        if let Some(field) = &view.search {
            view.query = field.lines().join(" ");
        }
        view.refilter();
        let len = view.shown.len();
        view.list.follow(len, rows);
    }
}

/// A trace was read: its session replaces the live panes until closed.
pub(super) fn trace_opened(
    state: &mut AppState,
    opened: Result<Box<ReplayData>, TraceReadError>,
    effects: &mut Vec<Effect>,
) {
    let data = match opened {
        Ok(data) => *data,
        Err(why) => {
            state.notice(true, why.to_string());
            return;
        }
    };
    state.close_replay();
    let back = state.sessions.take();
    let mut live = LiveView::default();
    state.trade_live(&mut live);
    state.log = data.log.clone();
    state.status.model = data.model.clone();
    state.status.tokens = data.tokens;
    state.status.max_steps = data.max_steps;
    state.status.url = data.start_url.clone();
    state.status.run = RunStatus::Finished {
        success: data.outcome == "done",
    };
    let first = data
        .log
        .iter()
        .position(|e| e.record.is_some())
        .unwrap_or(0);
    let title = format!(
        "{}: `{}`, {}, {}; j/k step through it",
        data.name,
        clip(&data.task, 50),
        crate::words::counted(data.steps, "step", "steps"),
        data.outcome
    );
    state.replay = Some(Box::new(Replay {
        data,
        listing: Vec::new(),
        shown: None,
        live,
        back,
    }));
    let rows = state.visible_rows(Pane::Log);
    let len = state.log.len();
    state.log_view.move_to(first, len, rows);
    set_focus(state, Pane::Log);
    show_replay_row(state, effects);
    state.notice(false, title);
}

/// Fills the listing, the reflection, the status and the page pane with
/// the step under the log's cursor, as it was.
pub(super) fn show_replay_row(state: &mut AppState, effects: &mut Vec<Effect>) {
    let at = state.log_view.cursor;
    let Some(replay) = state.replay.as_mut() else {
        return;
    };
    if replay.shown == Some(at) {
        return;
    }
    let Some(row) = replay.data.rows.get(at).cloned() else {
        return;
    };
    replay.shown = Some(at);
    replay.listing = row
        .listing
        .and_then(|i| replay.data.listings.get(i))
        .cloned()
        .unwrap_or_default();
    let entry = state.log.get(at).cloned();
    let step = entry.as_ref().and_then(|e| e.step).unwrap_or(0);
    state.status.step = step;
    state.status.url = row.url.clone();
    state.elements = ListView::default();
    state.reflection_view = ListView::default();
    state.reflection = match entry.as_ref().and_then(|e| e.record.as_ref()) {
        Some(record) => ReflectionView {
            step,
            evaluation: record.reflection.evaluation_previous_goal.clone(),
            memory: record.reflection.memory.clone(),
            next_goal: record.reflection.next_goal.clone(),
            action: Some(
                match record.action.as_object().and_then(|o| o.iter().next()) {
                    Some((name, params)) => format!("{name} {params}"),
                    None => "(none)".to_string(),
                },
            ),
            ..ReflectionView::default()
        },
        None => ReflectionView {
            step,
            ..ReflectionView::default()
        },
    };
    state.picture.shot = None;
    state.picture.rendered = None;
    state.picture.requested = None;
    if let Some((file, record)) = row.picture {
        effects.push(Effect::LoadReplayPicture {
            row: at,
            file,
            record: Box::new(record),
        });
    }
}

/// A replayed step's picture is read: shown when its row still is.
pub(super) fn replay_picture(
    state: &mut AppState,
    row: usize,
    shot: Option<Box<Screenshot>>,
    effects: &mut Vec<Effect>,
) {
    let shown = state.replay.as_ref().and_then(|r| r.shown);
    if shown != Some(row) {
        return;
    }
    match shot {
        Some(shot) => {
            state.pictures_seen += 1;
            state.picture.shot = Some(Arc::new(*shot));
            request_picture(state, effects);
        }
        None => state.notice(true, "the step's picture could not be read".into()),
    }
}

/// One of a replay's own keys.
pub(super) fn on_replay_key(state: &mut AppState, command: Command, effects: &mut Vec<Effect>) {
    let Some(replay) = state.replay.as_ref() else {
        return;
    };
    let path = replay.data.path.clone();
    match command {
        Command::Cancel => {
            let back = state.replay.as_mut().and_then(|r| r.back.take());
            state.close_replay();
            state.sessions = back;
        }
        // The name is asked on the `:` line; the replay stays on screen,
        // and it is the replay that is exported.
        Command::ExportSession => ask_export_name(state),
        Command::Resume => ask_resume(state, Some(path), effects),
        Command::RunAgain => {
            let (task, url) = (replay.data.task.clone(), replay.data.start_url.clone());
            if task.is_empty() || replay.data.max_steps == 0 {
                state.notice(
                    true,
                    "this session has no agent task to run again (a recipe or an MCP client's \
                     calls)"
                        .into(),
                );
                return;
            }
            if busy(state) {
                return;
            }
            if state.status.model.is_empty() {
                state.notice(true, "no model is configured to run the task".into());
                return;
            }
            state.close_replay();
            state.conversation_tasks = 0;
            begin_run(state, task, true, (!url.is_empty()).then_some(url), effects);
        }
        _ => {}
    }
}
