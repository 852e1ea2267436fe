//! A past session shown read-only in the usual panes: the log lists its
//! steps, and the step under the log's cursor fills the listing, the
//! reflection and the page pane as they were. The live session's panes
//! are put aside meanwhile and come back when the replay closes.
//!
//! [`ReplayData::from_events`] turns a trace into what the panes show;
//! it runs off the loop's thread, as reading the trace does.

use std::path::{Path, PathBuf};

use crossterm::event::KeyCode;
use serde_json::Value;

use crate::dom::PageState;
use crate::events::{EndReason, Event, ScreenshotRecord, TokenUsage};

use super::app::{AppState, ListView, LogEntry, Outcome, ReflectionView, RunStatus};
use super::draw::clip;
use super::keymap::{Binding, Command, KeyBinding, KeyContext};
use super::page::{PictureJobKey, RenderedPicture};
use super::sessions::SessionsView;

/// The replay's own keys, over the panes' keys.
pub const KEYS: &[Binding] = &[
    Binding::new(
        KeyContext::Replay,
        KeyBinding::plain(KeyCode::Esc),
        Command::Cancel,
        "back to the list of sessions",
    )
    .hinted(),
    Binding::new(
        KeyContext::Replay,
        KeyBinding::char('E'),
        Command::ExportSession,
        "export this session as a recipe",
    )
    .hinted(),
    Binding::new(
        KeyContext::Replay,
        KeyBinding::char('r'),
        Command::Resume,
        "resume its run",
    )
    .hinted(),
    Binding::new(
        KeyContext::Replay,
        KeyBinding::char('R'),
        Command::RunAgain,
        "run its task again, fresh, from its first page",
    )
    .hinted(),
];

/// The log's row kinds that are not actions, as their `action` word.
pub mod rows {
    /// A run began with this task.
    pub const TASK: &str = "task";
    /// The person's message to the agent.
    pub const MESSAGE: &str = "you say";
    /// The person asked for a step again.
    pub const RETRY: &str = "retry";
    /// The run continues another.
    pub const RESUMED: &str = "resumed";
    /// A fresh conversation began.
    pub const NEW: &str = "new";
    /// The run ended other than by `done`.
    pub const END: &str = "end";
    /// A recipe step that no longer ran was handed to the agent.
    pub const HEALED: &str = "healed";
}

/// The log row of a healed (or not healed) recipe step: what changed and
/// what it cost, the sub-goal in the row's detail.
pub fn healed_row(heal: &crate::events::HealRecord) -> LogEntry {
    let change = if heal.success {
        format!("{} → {}", heal.old, heal.new)
    } else {
        format!("{} → not healed", heal.old)
    };
    let outcome = if heal.success {
        Outcome::Ok
    } else {
        Outcome::Failed {
            reason: "not healed".into(),
            message: heal.failure.clone(),
        }
    };
    LogEntry {
        step: Some(heal.step),
        params: format!(
            "{} model calls, {} tokens; asked: {}",
            heal.model_calls, heal.usage.total_tokens, heal.sub_goal
        ),
        ..LogEntry::row(rows::HEALED, change, outcome)
    }
}

/// What a log row of a replay shows in the other panes.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayRow {
    /// Which listing the step saw (an index into
    /// [`ReplayData::listings`]).
    pub listing: Option<usize>,
    /// The page it was on.
    pub url: String,
    /// Its picture, when the trace stored one: the file and its record.
    pub picture: Option<(PathBuf, ScreenshotRecord)>,
}

/// A trace made ready for the panes.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayData {
    /// The trace.
    pub path: PathBuf,
    /// Its file name.
    pub name: String,
    /// The first task.
    pub task: String,
    /// The page its first run started on.
    pub start_url: String,
    /// The model of the first run.
    pub model: String,
    /// Tokens of every run.
    pub tokens: TokenUsage,
    /// Steps of every run.
    pub steps: usize,
    /// The step limit of the first run.
    pub max_steps: usize,
    /// How it ended (`done`, `unfinished`, …).
    pub outcome: String,
    /// The log rows: tasks, steps, messages, retries.
    pub log: Vec<LogEntry>,
    /// What each log row shows in the other panes.
    pub rows: Vec<ReplayRow>,
    /// Every listing the trace recorded, split in lines.
    pub listings: Vec<Vec<String>>,
}

impl ReplayData {
    /// The panes' view of `events`, the trace at `path` (pictures are
    /// files beside it).
    pub fn from_events(path: &Path, events: &[Event]) -> ReplayData {
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut data = ReplayData {
            path: path.to_path_buf(),
            name: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            task: String::new(),
            start_url: String::new(),
            model: String::new(),
            tokens: TokenUsage::default(),
            steps: 0,
            max_steps: 0,
            outcome: "empty".into(),
            log: Vec::new(),
            rows: Vec::new(),
            listings: Vec::new(),
        };
        let mut url = String::new();
        let mut listing: Option<usize> = None;
        let mut picture: Option<(PathBuf, ScreenshotRecord)> = None;
        let mut run_steps = 0usize;
        for event in events {
            let row = |url: &str, listing, picture: &Option<_>| ReplayRow {
                listing,
                url: url.to_string(),
                picture: picture.clone(),
            };
            match event {
                Event::RunStarted {
                    task,
                    url: start,
                    model,
                    max_steps,
                } => {
                    if data.task.is_empty() {
                        data.task = task.clone();
                        data.start_url = start.clone();
                        data.model = model.clone();
                        data.max_steps = *max_steps;
                    }
                    url = start.clone();
                    listing = None;
                    picture = None;
                    data.steps += run_steps;
                    run_steps = 0;
                    data.outcome = "unfinished".into();
                    let r = row(&url, listing, &picture);
                    data.push(LogEntry::row(rows::TASK, task.clone(), Outcome::Ok), r);
                }
                Event::Observation(o) => {
                    url = o.url.clone();
                    listing = None;
                    picture = None;
                }
                Event::Listing(l) => {
                    url = l.url.clone();
                    data.listings
                        .push(l.listing.lines().map(str::to_string).collect());
                    listing = Some(data.listings.len() - 1);
                }
                Event::Screenshot(shot) if shot.purpose == "step" => {
                    picture = shot.file.as_ref().map(|f| (dir.join(f), shot.clone()));
                }
                Event::Step(record) => {
                    run_steps = run_steps.max(record.index);
                    if let Some(usage) = record.usage {
                        data.tokens.add(usage);
                    }
                    let (name, params) =
                        match record.action.as_object().and_then(|o| o.iter().next()) {
                            Some((name, params)) => (name.clone(), params.clone()),
                            None => ("(none)".to_string(), Value::Null),
                        };
                    let lines = listing.and_then(|i| data.listings.get(i));
                    let mut entry =
                        LogEntry::row(&name, target_of(&params, lines), outcome_of(&record.result));
                    entry.step = Some(record.index);
                    entry.params = if params.is_null() {
                        String::new()
                    } else {
                        params.to_string()
                    };
                    entry.ms = Some(record.timings.act_ms);
                    entry.wait_ms = (record.timings.wait_ms > 0).then_some(record.timings.wait_ms);
                    entry.raw_response = record.raw_response.clone();
                    entry.record = Some(record.clone());
                    let r = row(&url, listing, &picture);
                    data.push(entry, r);
                }
                Event::PersonMessage { step, text } => {
                    let mut entry = LogEntry::row(rows::MESSAGE, text.clone(), Outcome::Ok);
                    entry.step = Some(*step);
                    let r = row(&url, listing, &picture);
                    data.push(entry, r);
                }
                Event::StepRetried { step, reason } => {
                    let mut entry = LogEntry::row(rows::RETRY, reason.clone(), Outcome::Ok);
                    entry.step = Some(*step);
                    let r = row(&url, listing, &picture);
                    data.push(entry, r);
                }
                Event::Healed(heal) => {
                    let r = row(&url, listing, &picture);
                    data.push(healed_row(heal), r);
                }
                Event::Resumed(record) => {
                    let text = format!("continues {} at step {}", record.from, record.step);
                    let r = row(&url, listing, &picture);
                    data.push(LogEntry::row(rows::RESUMED, text, Outcome::Ok), r);
                    run_steps = record.step.saturating_sub(1);
                }
                Event::Done {
                    success,
                    text,
                    reason,
                    steps,
                    ..
                } => {
                    run_steps = run_steps.max(*steps);
                    data.outcome = if *success { "done" } else { "not done" }.into();
                    if *reason != EndReason::Done {
                        let outcome = Outcome::Failed {
                            reason: format!("{reason:?}").to_lowercase(),
                            message: text.clone(),
                        };
                        let r = row(&url, listing, &picture);
                        data.push(LogEntry::row(rows::END, text.clone(), outcome), r);
                    }
                }
                _ => {}
            }
        }
        data.steps += run_steps;
        data
    }

    fn push(&mut self, entry: LogEntry, row: ReplayRow) {
        self.log.push(entry);
        self.rows.push(row);
    }
}

fn outcome_of(result: &crate::actions::ActionResult) -> Outcome {
    match result {
        crate::actions::ActionResult::Success { .. } => Outcome::Ok,
        crate::actions::ActionResult::Failure { reason, message } => Outcome::Failed {
            reason: reason.as_str().to_string(),
            message: message.clone(),
        },
    }
}

/// What a recorded action targeted: its listing line, found by index in
/// the listing of its step, or its selector.
fn target_of(params: &Value, listing: Option<&Vec<String>>) -> String {
    if let Some(index) = params.get("index").and_then(Value::as_u64) {
        let mark = format!("[{index}]<");
        let line = listing.and_then(|lines| {
            lines
                .iter()
                .map(|l| l.trim_start().trim_start_matches('*'))
                .find(|l| l.starts_with(&mark))
        });
        return match line {
            Some(line) => clip(line, 80),
            None => format!("[{index}]"),
        };
    }
    params
        .get("selector")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The live session's panes, put aside while a replay is shown.
#[derive(Debug, Default)]
pub struct LiveView {
    page: Option<PageState>,
    elements: ListView,
    reflection: ReflectionView,
    reflection_view: ListView,
    log: Vec<LogEntry>,
    log_view: ListView,
    run_log_start: usize,
    url: String,
    step: usize,
    max_steps: usize,
    model: String,
    tokens: TokenUsage,
    run: RunStatus,
    shot: Option<std::sync::Arc<crate::vision::Screenshot>>,
    rendered: Option<RenderedPicture>,
    requested: Option<PictureJobKey>,
}

impl LiveView {
    /// Trades what the panes show with what this holds.
    pub fn swap(&mut self, state: &mut AppState) {
        std::mem::swap(&mut self.page, &mut state.page);
        std::mem::swap(&mut self.elements, &mut state.elements);
        std::mem::swap(&mut self.reflection, &mut state.reflection);
        std::mem::swap(&mut self.reflection_view, &mut state.reflection_view);
        std::mem::swap(&mut self.log, &mut state.log);
        std::mem::swap(&mut self.log_view, &mut state.log_view);
        std::mem::swap(&mut self.run_log_start, &mut state.run_log_start);
        std::mem::swap(&mut self.url, &mut state.status.url);
        std::mem::swap(&mut self.step, &mut state.status.step);
        std::mem::swap(&mut self.max_steps, &mut state.status.max_steps);
        std::mem::swap(&mut self.model, &mut state.status.model);
        std::mem::swap(&mut self.tokens, &mut state.status.tokens);
        std::mem::swap(&mut self.run, &mut state.status.run);
        std::mem::swap(&mut self.shot, &mut state.picture.shot);
        std::mem::swap(&mut self.rendered, &mut state.picture.rendered);
        std::mem::swap(&mut self.requested, &mut state.picture.requested);
    }
}

/// A past session in the panes.
#[derive(Debug)]
pub struct Replay {
    /// The trace as the panes show it (its log is in the log pane).
    pub data: ReplayData,
    /// The listing lines of the row shown.
    pub listing: Vec<String>,
    /// The log row whose step the panes show.
    pub shown: Option<usize>,
    /// The live session's panes, back when the replay closes.
    pub live: LiveView,
    /// The list it was opened from, back on Esc.
    pub back: Option<SessionsView>,
}
