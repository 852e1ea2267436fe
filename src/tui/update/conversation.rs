//! The session as a conversation: the person's messages to a running
//! agent, asking again for a failed step, starting fresh, resuming a run
//! from its trace, and the sessions view with its read-only replays.

use super::*;

use crate::events::TraceSummary;
use crate::session::ResumePlan;

use super::super::replay::{rows, LiveView, Replay, ReplayData};
use super::super::sessions::{self, SessionsView};

/// Sends the task field's text to the running agent as the person's
/// words. It shows in the log at once, waiting, and is marked when the
/// model's request carries it.
pub(super) fn send_message(state: &mut AppState, text: String, effects: &mut Vec<Effect>) {
    state.task = TextArea::default();
    set_field_focus(&mut state.task, true, &state.theme);
    push_log(
        state,
        LogEntry::row(rows::MESSAGE, text.clone(), Outcome::Pending),
    );
    notice(
        state,
        false,
        "sent: the model reads it with its next request".into(),
    );
    effects.push(Effect::Steer(text));
}

/// Whether a run is in progress, saying so: what starts another waits
/// for it to end.
fn busy(state: &mut AppState) -> bool {
    let running = run_active(state);
    if running {
        notice(
            state,
            true,
            "a run is in progress; stop it (s) first".into(),
        );
    }
    running
}

/// The run's last step, when it failed: the one the model may be asked
/// for again.
fn failed_step(state: &AppState) -> Option<usize> {
    let start = state.run_log_start.min(state.log.len());
    let last = state.log[start..]
        .iter()
        .rev()
        .find(|e| e.step.is_some() && e.record.is_some())?;
    matches!(last.outcome, Outcome::Failed { .. })
        .then_some(last.step)
        .flatten()
}

/// `r`: asks the model again for the run's failed step.
pub(super) fn retry_failed_step(state: &mut AppState, effects: &mut Vec<Effect>) {
    if !run_active(state) || state.recipe.is_some() {
        notice(
            state,
            true,
            "no agent run is going: type a follow-up task, or :resume a past run".into(),
        );
        return;
    }
    match failed_step(state) {
        Some(step) => {
            notice(
                state,
                false,
                format!("asking the model again for step {step}"),
            );
            effects.push(Effect::RetryStep(step));
        }
        None => notice(
            state,
            true,
            "the run's last step did not fail: nothing to ask again".into(),
        ),
    }
}

/// `N` or `:new`: the next task starts a fresh conversation.
pub(super) fn new_conversation(state: &mut AppState, effects: &mut Vec<Effect>) {
    if busy(state) {
        return;
    }
    state.command_line = None;
    state.conversation_tasks = 0;
    push_log(
        state,
        LogEntry::row(rows::NEW, "a fresh conversation begins", Outcome::Ok),
    );
    notice(
        state,
        false,
        "new conversation: the next task starts with no memory of the earlier ones".into(),
    );
    effects.push(Effect::NewConversation);
}

/// `:resume [TRACE]`: reads the trace off the loop; the run starts when
/// its plan is back.
pub(super) fn ask_resume(
    state: &mut AppState,
    path: Option<std::path::PathBuf>,
    effects: &mut Vec<Effect>,
) {
    if busy(state) {
        return;
    }
    if state.status.model.is_empty() {
        notice(
            state,
            true,
            "no model is configured: a resumed run needs one (set OPENAI_API_KEY or --base-url)"
                .into(),
        );
        return;
    }
    state.command_line = None;
    notice(state, false, "reading the trace…".into());
    effects.push(Effect::ReadResume(path));
}

/// The trace is read: the run continues where it stopped.
pub(super) fn resume_ready(
    state: &mut AppState,
    plan: Result<Box<ResumePlan>, String>,
    effects: &mut Vec<Effect>,
) {
    let plan = match plan {
        Ok(plan) => plan,
        Err(why) => {
            notice(state, true, why);
            return;
        }
    };
    if busy(state) {
        return;
    }
    close_replay(state);
    state.sessions = None;
    if let Some(mode) = plan.approval() {
        state.status.approval = mode;
    }
    state.conversation_tasks = plan.conversation.earlier().len();
    state.status.run = RunStatus::Running;
    state.status.step = plan.point.prior.next_step.saturating_sub(1);
    state.reflection = ReflectionView::default();
    state.reflection_view = ListView::default();
    set_focus(state, Pane::Elements);
    notice(
        state,
        false,
        format!(
            "resuming `{}` at step {} ({})",
            clip(&plan.point.task, 60),
            plan.point.prior.next_step,
            plan.trace.display()
        ),
    );
    effects.push(Effect::Resume {
        approval: state.status.approval,
        plan,
    });
}

/// `S` or `:sessions`: opens the list; the service fills it.
pub(super) fn open_sessions(state: &mut AppState, effects: &mut Vec<Effect>) {
    close_replay(state);
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
    files: Result<Vec<crate::events::TraceFile>, String>,
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
            view.error = Some(error);
        }
    }
    let rows = sessions::visible_rows(state.size);
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

pub(super) fn on_sessions_key(state: &mut AppState, command: Command, effects: &mut Vec<Effect>) {
    let rows = sessions::visible_rows(state.size);
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
                notice(state, true, text);
                return;
            }
            let path = row.file.path.clone();
            notice(state, false, format!("opening {}…", path.display()));
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
    let rows = sessions::visible_rows(state.size);
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
    opened: Result<Box<ReplayData>, String>,
    effects: &mut Vec<Effect>,
) {
    let data = match opened {
        Ok(data) => *data,
        Err(why) => {
            notice(state, true, why);
            return;
        }
    };
    close_replay(state);
    let back = state.sessions.take();
    let mut live = LiveView::default();
    live.swap(state);
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
        "{}: `{}`, {} steps, {}; j/k step through it",
        data.name,
        clip(&data.task, 50),
        data.steps,
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
    notice(state, false, title);
}

/// Puts the live panes back, if a replay was shown.
pub(super) fn close_replay(state: &mut AppState) {
    if let Some(mut replay) = state.replay.take() {
        replay.live.swap(state);
        state.picture.requested = None;
    }
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
    shot: Option<Box<crate::vision::Screenshot>>,
    effects: &mut Vec<Effect>,
) {
    let shown = state.replay.as_ref().and_then(|r| r.shown);
    if shown != Some(row) {
        return;
    }
    match shot {
        Some(shot) => {
            state.pictures_seen += 1;
            state.picture.shot = Some(std::sync::Arc::new(*shot));
            request_picture(state, effects);
        }
        None => notice(state, true, "the step's picture could not be read".into()),
    }
}

pub(super) fn on_replay_key(state: &mut AppState, command: Command, effects: &mut Vec<Effect>) {
    let Some(replay) = state.replay.as_ref() else {
        return;
    };
    let path = replay.data.path.clone();
    match command {
        Command::Cancel => {
            let back = state.replay.as_mut().and_then(|r| r.back.take());
            close_replay(state);
            state.sessions = back;
        }
        Command::ExportSession => {
            notice(state, false, "exporting the session as a recipe…".into());
            effects.push(Effect::ExportTrace(path));
        }
        Command::Resume => ask_resume(state, Some(path), effects),
        Command::RunAgain => {
            let (task, url) = (replay.data.task.clone(), replay.data.start_url.clone());
            if task.is_empty() || replay.data.max_steps == 0 {
                notice(
                    state,
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
                notice(state, true, "no model is configured to run the task".into());
                return;
            }
            close_replay(state);
            state.conversation_tasks = 0;
            begin_run(state, task, true, (!url.is_empty()).then_some(url), effects);
        }
        _ => {}
    }
}

/// Starts an agent run on `task` (`fresh`: a new conversation), from
/// `start_url` when given.
pub(super) fn begin_run(
    state: &mut AppState,
    task: String,
    fresh: bool,
    start_url: Option<String>,
    effects: &mut Vec<Effect>,
) {
    state.status.run = RunStatus::Running;
    state.status.step = 0;
    state.reflection = ReflectionView::default();
    state.reflection_view = ListView::default();
    set_focus(state, Pane::Elements);
    effects.push(Effect::StartRun {
        task,
        approval: state.status.approval,
        fresh,
        start_url,
    });
}
