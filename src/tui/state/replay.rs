//! A past session as the state holds it while it is shown read-only in
//! the panes: the trace made ready for them ([`ReplayData`], built off the
//! loop's thread from the trace's events), the row shown, and the live
//! session's panes put aside meanwhile ([`LiveView`]; the state trades them
//! back when the replay closes).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::dom::PageState;
use crate::events::{place_before_its_steps, EndReason, Event, ScreenshotRecord, TokenUsage};
use crate::vision::Screenshot;

use super::list::ListView;
use super::log::{healed_row, rows, LogEntry, Outcome};
use super::picture::{PictureJobKey, RenderedPicture};
use super::reflection::ReflectionView;
use super::sessions::SessionsView;
use super::status::RunStatus;
use crate::tui::text::clip;

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
        // Where the rows of the run being read begin.
        let mut run_start = 0usize;
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
                    run_start = data.log.len();
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
                    let mut entry = LogEntry::row(
                        &name,
                        target_of(&params, lines),
                        Outcome::from(&record.result),
                    );
                    entry.step = Some(record.index);
                    entry.params = if params.is_null() {
                        String::new()
                    } else {
                        params.to_string()
                    };
                    entry.ms = Some(record.timings.act_ms);
                    entry.wait_ms = (record.timings.wait_ms > 0).then_some(record.timings.wait_ms);
                    entry.raw_response = record.raw_response.clone();
                    entry.within = record.within;
                    entry.record = Some(record.clone());
                    let r = row(&url, listing, &picture);
                    let place = place_before_its_steps(
                        record.index,
                        data.log[run_start..].iter().map(|e| e.within),
                    );
                    match place {
                        Some(at) => data.insert(run_start + at, entry, r),
                        None => data.push(entry, r),
                    }
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

    fn insert(&mut self, at: usize, entry: LogEntry, row: ReplayRow) {
        self.log.insert(at, entry);
        self.rows.insert(at, row);
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
    pub(super) page: Option<PageState>,
    pub(super) elements: ListView,
    pub(super) reflection: ReflectionView,
    pub(super) reflection_view: ListView,
    pub(super) log: Vec<LogEntry>,
    pub(super) log_view: ListView,
    pub(super) run_log_start: usize,
    pub(super) url: String,
    pub(super) step: usize,
    pub(super) max_steps: usize,
    pub(super) model: String,
    pub(super) tokens: TokenUsage,
    pub(super) run: RunStatus,
    pub(super) shot: Option<Arc<Screenshot>>,
    pub(super) rendered: Option<RenderedPicture>,
    pub(super) requested: Option<PictureJobKey>,
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
