//! What the workbench keeps of a session: every run's events, for the
//! panes, one trace file per run, and the record a session exports as a
//! recipe.

use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use tokio::sync::mpsc;

use crate::actions::{Action, ActionResult};
use crate::agent::Conversation;
use crate::events::{Event, StepRecord, TraceWriter};
use crate::script::{recipe_from_events_with, ExportOptions, Scripts};
use crate::sitemap::SitemapSet;

use super::super::error::SessionExportError;
use super::super::event::AppEvent;

/// The session's events so far, for exporting it as a recipe. Step
/// numbers restart with every run, so they are renumbered to follow on
/// from what is already recorded.
#[derive(Debug, Default)]
pub struct SessionRecord {
    events: Vec<Event>,
    last_step: usize,
}

impl SessionRecord {
    /// Where the next run's step numbers start (its step 1 is this + 1).
    pub fn base(&self) -> usize {
        self.last_step
    }

    /// Records a run's event, its step numbers shifted by `base`.
    pub fn record(&mut self, base: usize, event: &Event) {
        let mut event = event.clone();
        match &mut event {
            Event::Step(step) => {
                step.index += base;
                if let Some(within) = step.within.as_mut() {
                    *within += base;
                }
                self.last_step = self.last_step.max(step.index);
            }
            Event::Observation(summary) => summary.step += base,
            _ => {}
        }
        self.events.push(event);
    }

    /// Records an action typed by hand as a step of its own.
    pub fn record_manual(&mut self, action: &Action, result: &ActionResult, ms: u64) {
        self.last_step += 1;
        let step = StepRecord::taken(
            self.last_step,
            action.to_json(),
            result.clone(),
            String::new(),
            (ms, 0),
        );
        self.events.push(Event::Step(step));
    }

    /// Every event recorded.
    pub fn events(&self) -> &[Event] {
        &self.events
    }
}

/// Writes `events` as the recipe `name` in `dir/<name>.rhai` and returns
/// its path; a file already there is never replaced.
pub fn export_session(
    events: &[Event],
    dir: &std::path::Path,
    name: &str,
) -> Result<PathBuf, SessionExportError> {
    let options = ExportOptions {
        name: Some(name),
        ..Default::default()
    };
    let source = recipe_from_events_with(events, "a webagent workbench session", options)
        .ok_or(SessionExportError::NothingToReplay)?;
    std::fs::create_dir_all(dir).map_err(|source| SessionExportError::CreateDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    let path = dir.join(format!("{name}.rhai"));
    let mut file = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
    {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(SessionExportError::Exists { path })
        }
        Err(source) => return Err(SessionExportError::Write { path, source }),
    };
    std::io::Write::write_all(&mut file, source.as_bytes()).map_err(|source| {
        SessionExportError::Write {
            path: path.clone(),
            source,
        }
    })?;
    Ok(path)
}

/// Tells the loop which custom actions and recipes are loaded.
pub(super) fn send_scripts(scripts: &Scripts, tx: &Sender<AppEvent>) {
    match scripts.catalog() {
        Ok(catalog) => {
            let _ = tx.send(AppEvent::ScriptsLoaded {
                catalog: Box::new(catalog),
                recipes: scripts.recipes(),
                files: scripts.file_count(),
            });
        }
        Err(error) => {
            let _ = tx.send(AppEvent::Notice {
                error: true,
                text: format!("the scripts' actions do not fit the catalog: {error}"),
            });
        }
    }
}

/// Sends the session's events to the panes. A run (from its
/// `run_started` to its `done`, sub-goals of a recipe included) also goes
/// to the conversation's trace file (follow-ups share it; a fresh
/// conversation opens another), to the session record and to the
/// conversation a follow-up starts from; a reload also refreshes the
/// sitemap tree or the catalog.
///
/// The browser actor owns it and forwards in its own loop, so a run's
/// events are all on their way to the loop before its `RunEnded` is.
pub(super) struct Forwarder {
    /// The loop.
    pub tx: Sender<AppEvent>,
    /// Where each run's trace file goes.
    pub sessions_dir: PathBuf,
    /// The record a session exports from.
    pub record: Arc<Mutex<SessionRecord>>,
    /// The sitemaps as the watcher keeps them, sent again on a reload.
    pub sitemaps: Arc<RwLock<SitemapSet>>,
    /// The scripts, whose catalog is sent again on a reload.
    pub scripts: Scripts,
    /// How many runs are open (a recipe's sub-goal is a run inside one).
    pub depth: usize,
    /// The open run's trace.
    pub trace: Option<TraceWriter>,
    /// Where the open run's step numbers start in the record.
    pub base: usize,
    /// Record and trace every event, runs or not (an MCP client's calls
    /// are the session's steps).
    pub whole_session: bool,
    /// Woken when a script reloads (an MCP server lists custom actions).
    pub tools_changed: Option<Arc<tokio::sync::Notify>>,
    /// The conversation so far, as its runs' events tell it.
    pub conversation: Conversation,
}

impl Forwarder {
    /// Forwards every event waiting in `events` now.
    pub fn drain(&mut self, events: &mut mpsc::UnboundedReceiver<Event>) {
        while let Ok(event) = events.try_recv() {
            self.forward(event);
        }
    }

    /// Forwards every event waiting in `events` now, after an action the
    /// person chose by hand: the road's own events of it (`tool_call`,
    /// `action_request`, `tool_result`, `approval`) go only to the trace,
    /// since the action log already shows the action as the person's own
    /// row; everything else goes on as usual.
    pub fn drain_persons(&mut self, events: &mut mpsc::UnboundedReceiver<Event>) {
        while let Ok(event) = events.try_recv() {
            match event {
                Event::ToolCall { .. }
                | Event::ActionRequest { .. }
                | Event::ToolResult { .. }
                | Event::Approval(_) => self.write_trace(&event),
                other => self.forward(other),
            }
        }
    }

    /// Writes `event` to the trace, when one is open for it.
    fn write_trace(&mut self, event: &Event) {
        if self.whole_session && self.trace.is_none() && self.depth == 0 {
            self.open_trace();
        }
        if self.depth == 0 && !self.whole_session {
            return;
        }
        if let Some(writer) = self.trace.as_mut() {
            if let Err(error) = writer.write(event) {
                tracing::warn!(%error, "the trace stops here");
                self.trace = None;
            }
        }
    }

    /// Forgets the conversation: the next run starts a new trace.
    pub fn new_conversation(&mut self) {
        self.conversation = Conversation::new();
        if !self.whole_session {
            self.trace = None;
        }
    }

    fn open_trace(&mut self) {
        self.base = self
            .record
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .base();
        self.trace = match TraceWriter::create(&self.sessions_dir) {
            Ok(trace) => Some(trace),
            Err(error) => {
                tracing::warn!(%error, "no trace file for this run");
                None
            }
        };
    }

    /// Forwards one event.
    pub fn forward(&mut self, event: Event) {
        if self.whole_session && self.trace.is_none() && self.depth == 0 {
            self.open_trace();
        }
        if matches!(event, Event::RunStarted { .. }) {
            if self.depth == 0 && !self.whole_session {
                if self.trace.is_none() {
                    self.open_trace();
                } else {
                    // A follow-up: its steps go on from the record's.
                    self.base = self
                        .record
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .base();
                }
            }
            self.depth += 1;
        }
        if self.depth > 0 || self.whole_session {
            self.write_trace(&event);
            self.record
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .record(self.base, &event);
            // A recipe's sub-goal (a run inside a run) is part of the
            // recipe's run, not a task of the conversation.
            if self.depth <= 1 {
                self.conversation.apply(&event);
            }
        }
        if matches!(event, Event::Done { .. }) && self.depth > 0 {
            // The trace stays open: a follow-up task goes on in it.
            self.depth -= 1;
        }
        match &event {
            Event::SitemapReloaded { error, .. } => {
                let sitemaps = self
                    .sitemaps
                    .read()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
                let _ = self.tx.send(AppEvent::Sitemaps {
                    sitemaps,
                    error: error.clone(),
                });
            }
            Event::ScriptReloaded { .. } => {
                send_scripts(&self.scripts, &self.tx);
                if let Some(changed) = &self.tools_changed {
                    changed.notify_one();
                }
            }
            _ => {}
        }
        let _ = self.tx.send(AppEvent::agent(event));
    }
}
