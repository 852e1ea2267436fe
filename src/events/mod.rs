//! The one event type every part of webagent emits, its JSON form, and the
//! trace file each run leaves behind.
//!
//! The first six kinds follow the agent event protocol the project grew
//! from (`text`, `tool_call`, `tool_result`, `action_request` with a
//! `correlationId`, `error` with `fatal`, `done`); the rest describe what
//! this program adds: a whole step with its reflection and timings, an
//! observation summary, an approval decision and hot reloads. Every event
//! serializes as one JSON object whose `type` names its kind in
//! snake_case, which is what `webagent run --json` prints one per line and
//! what the trace file holds.

mod history;
mod trace;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use crate::actions::{ActionResult, Risk};
use crate::secrets::Secrets;

pub use history::{
    list_traces, read_trace, summarize_trace, TraceFile, TraceOutcome, TraceReadError, TraceSummary,
};
pub use trace::{TraceWriter, DEFAULT_SESSIONS_DIR};

/// Where a session's events go: the one masking point every event passes
/// on its way to the trace, `--json`, the step log and the workbench's
/// panes. Whoever emits holds a clone; a secret value in an event (the
/// model echoing one, an error quoting a URL) leaves as its placeholder.
#[derive(Clone)]
pub struct EventSink {
    tx: UnboundedSender<Event>,
    secrets: Secrets,
    /// Recordings that also keep what is sent (masked, as sent).
    copies: Vec<Recording>,
}

/// A copy of the events a sink sends from some moment on, for a caller
/// that turns a run into a recipe (the task cache, a healed step) while
/// the events still go where they always go.
#[derive(Clone, Default)]
pub struct Recording(std::sync::Arc<std::sync::Mutex<Vec<Event>>>);

impl Recording {
    /// Everything recorded so far, leaving the recording empty.
    pub fn take(&self) -> Vec<Event> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn push(&self, event: Event) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(event);
    }
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSink")
            .field("secrets", &self.secrets)
            .finish_non_exhaustive()
    }
}

impl EventSink {
    /// Events sent here reach `tx`, each with the values of `secrets`
    /// masked.
    pub fn new(tx: UnboundedSender<Event>, secrets: Secrets) -> Self {
        EventSink {
            tx,
            secrets,
            copies: Vec::new(),
        }
    }

    /// The same sink, also keeping a copy of what it sends from now on in
    /// the returned [`Recording`].
    pub fn recording(&self) -> (EventSink, Recording) {
        let recording = Recording::default();
        let mut sink = self.clone();
        sink.copies.push(recording.clone());
        (sink, recording)
    }

    /// A sink with no secrets and the receiver of what it is sent (tests,
    /// benchmarks, a run whose events nobody reads).
    pub fn detached() -> (Self, UnboundedReceiver<Event>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (EventSink::new(tx, Secrets::new()), rx)
    }

    /// Sends `event`, masked. A closed receiver (the run outlived its
    /// reader) is not an error.
    pub fn send(&self, event: Event) {
        let event = event.masked(&self.secrets);
        for copy in &self.copies {
            copy.push(event.clone());
        }
        if self.tx.send(event).is_err() {
            tracing::debug!("no one is listening to this session's events any more");
        }
    }

    /// The same sink (masking, copies) sending to `tx` instead: a named
    /// session's events that its attached workbench is not to be sent
    /// again (the person's own actions, already in its log).
    pub fn sending_to(&self, tx: UnboundedSender<Event>) -> Self {
        EventSink {
            tx,
            secrets: self.secrets.clone(),
            copies: self.copies.clone(),
        }
    }

    /// The same sink with `secrets` masked (a sub-run of a session).
    pub fn with_secrets(&self, secrets: Secrets) -> Self {
        EventSink {
            tx: self.tx.clone(),
            secrets,
            copies: self.copies.clone(),
        }
    }
}

/// Everything that can go wrong writing a trace.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// The sessions directory could not be created.
    #[error("could not create the sessions directory {}: {source}; pass another directory or fix its permissions", path.display())]
    CreateDir {
        /// The directory.
        path: std::path::PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The trace file could not be opened or written.
    #[error("could not write the trace file {}: {source}", path.display())]
    Write {
        /// The trace file.
        path: std::path::PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// An event could not be turned into JSON (a number that is not finite).
    #[error("could not encode an event as JSON: {0}")]
    Encode(#[from] serde_json::Error),
}

/// One thing that happened during a run.
// A step record is the biggest event and one is sent per step, next to a
// handful of smaller ones; boxing it would cost an allocation per step and
// a `Box` in every match on events for no measurable gain.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A run began.
    RunStarted {
        /// The task as the person gave it.
        task: String,
        /// The page the run starts on.
        url: String,
        /// The model asked.
        model: String,
        /// The step limit.
        max_steps: usize,
    },
    /// A piece of text the model streamed (its reflection as it arrives,
    /// or a notice such as a retry).
    Text {
        /// The new text.
        content: String,
    },
    /// A line a script wrote with `log(…)`: the person's to read, apart
    /// from the model's words (a healing model streams during a recipe).
    ScriptLog {
        /// The line, without its newline.
        line: String,
    },
    /// The agent is about to run an action (the model's call, after
    /// normalizing).
    ToolCall {
        /// The action's catalog name.
        name: String,
        /// Its parameters, defaults filled in.
        parameters: Value,
    },
    /// An action finished.
    ToolResult {
        /// The action's catalog name.
        name: String,
        /// What it returned.
        result: ActionResult,
    },
    /// An action handed to whoever executes it (the browser), with an id
    /// that pairs it with its result.
    ActionRequest {
        /// Pairs the request with its result (`step-3`).
        #[serde(rename = "correlationId")]
        correlation_id: String,
        /// The action's catalog name.
        action: String,
        /// Its parameters.
        parameters: Value,
    },
    /// Something went wrong.
    Error {
        /// What, in words a person can act on.
        error: String,
        /// Whether the run stops because of it.
        fatal: bool,
    },
    /// The run ended.
    Done {
        /// Whether the task was accomplished (false for a step limit, a
        /// stop or a fatal error too).
        success: bool,
        /// The model's final text, or why the run ended without one.
        text: String,
        /// Why the run ended.
        reason: EndReason,
        /// Steps taken.
        steps: usize,
        /// Tokens used by all model calls of the run.
        usage: TokenUsage,
    },
    /// One whole step: what the model thought, did, and what came of it.
    Step(StepRecord),
    /// What the agent saw at the start of a step.
    Observation(ObservationSummary),
    /// A decision at the approval gate.
    Approval(ApprovalRecord),
    /// A sitemap file was (re)loaded or failed to.
    SitemapReloaded {
        /// The file.
        file: String,
        /// The error that kept the last good version, if it failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A script file was (re)loaded or failed to.
    ScriptReloaded {
        /// The file.
        file: String,
        /// The error that kept the last good version, if it failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// The file was deleted: its actions and recipes are gone (not a
        /// failure; nothing of it is kept).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        removed: bool,
    },
    /// A picture of the page was taken for the model (with the listing's
    /// marks). The image itself travels beside the JSON: a trace stores it
    /// once as a file and names the file here.
    Screenshot(ScreenshotRecord),
    /// How a run was set up, right after its `run_started`: what resuming
    /// it needs besides its steps.
    RunSettings(RunSettings),
    /// The approval mode changed while the run went on (the person
    /// switched it); it holds from the next action on.
    ApprovalModeChanged {
        /// `never`, `risky` or `always`.
        mode: String,
    },
    /// The element listing the model was shown at a step, as it was, so a
    /// replay shows what the model saw.
    Listing(ListingRecord),
    /// The person's own words to the agent while it worked; sent with the
    /// request of `step`, outside the page's fence.
    PersonMessage {
        /// The step whose request carried it.
        step: usize,
        /// What the person wrote.
        text: String,
    },
    /// The model handed the page to a person: the run ends here until
    /// they hand it back. The page is named as it was at the wall.
    HandOver {
        /// The step that handed over.
        step: usize,
        /// What the person is needed for, in the model's words.
        reason: String,
        /// The page at the wall.
        url: String,
        /// Its title.
        title: String,
    },
    /// The person asked the model again for a step: the attempt before
    /// stays in the trace, the next `step` events of this index are the
    /// new attempt.
    StepRetried {
        /// The step asked again.
        step: usize,
        /// What was asked again (a failed step, or a proposal at the
        /// approval).
        reason: String,
    },
    /// Every action of a step has run (or was refused): a run resumed
    /// from the trace starts after it.
    StepEnded {
        /// The step.
        step: usize,
    },
    /// This run continues another run, whose trace is named; the record
    /// carries what that run had reached, so this trace stands alone.
    Resumed(ResumeRecord),
    /// A recipe step that no longer ran as recorded was handed to the
    /// agent as a sub-goal: what it was asked, what it cost, and what
    /// takes the step's place.
    Healed(HealRecord),
    /// What the task cache did for a run: a miss recorded the run, a hit
    /// replayed it, a heal repaired the replay, a refresh redid the task.
    Cache(CacheRecord),
    /// The model has not answered yet: sent each second while a call
    /// waits, so a person sees how long, and which attempt. It is progress,
    /// not history: traces keep only some (see [`Event::is_kept`]).
    ModelWaiting {
        /// The request waited on, from 1.
        attempt: u32,
        /// The most requests the call makes, as far as is known now.
        max_attempts: u32,
        /// Seconds since this request was sent.
        seconds: u64,
        /// The seconds it may take before it times out.
        limit: u64,
    },
    /// A healed recipe's repaired version was written (or not: the person
    /// declined it, or it could not be written).
    RecipeRewritten {
        /// The file written, or that would have been.
        file: String,
        /// Steps that were healed.
        healed: usize,
        /// Whether it was written.
        written: bool,
        /// Why not, when it was not.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
}

impl Event {
    /// The event as one line of JSON (no trailing newline).
    pub fn to_json_line(&self) -> Result<String, EventError> {
        Ok(serde_json::to_string(self)?)
    }

    /// Whether the event is kept in a trace and printed by `--json` and
    /// the step log: every one but most seconds of a wait for the model,
    /// which only a live view (the workbench) shows each of. A wait is
    /// kept every 15 s, or six times within a shorter time limit, so a
    /// long one is never silent and a short one is not a wall of lines.
    pub fn is_kept(&self) -> bool {
        match self {
            Event::ModelWaiting { seconds, limit, .. } => {
                *seconds > 0 && seconds % (limit / 6).clamp(1, 15) == 0
            }
            _ => true,
        }
    }

    /// The `type` word of this event (`step`, `done`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            Event::RunStarted { .. } => "run_started",
            Event::Text { .. } => "text",
            Event::ScriptLog { .. } => "script_log",
            Event::ToolCall { .. } => "tool_call",
            Event::ToolResult { .. } => "tool_result",
            Event::ActionRequest { .. } => "action_request",
            Event::Error { .. } => "error",
            Event::Done { .. } => "done",
            Event::Step(_) => "step",
            Event::Observation(_) => "observation",
            Event::Approval(_) => "approval",
            Event::SitemapReloaded { .. } => "sitemap_reloaded",
            Event::ScriptReloaded { .. } => "script_reloaded",
            Event::Screenshot(_) => "screenshot",
            Event::RunSettings(_) => "run_settings",
            Event::ApprovalModeChanged { .. } => "approval_mode_changed",
            Event::Listing(_) => "listing",
            Event::PersonMessage { .. } => "person_message",
            Event::HandOver { .. } => "hand_over",
            Event::StepRetried { .. } => "step_retried",
            Event::StepEnded { .. } => "step_ended",
            Event::Resumed(_) => "resumed",
            Event::Healed(_) => "healed",
            Event::Cache(_) => "cache",
            Event::RecipeRewritten { .. } => "recipe_rewritten",
            Event::ModelWaiting { .. } => "model_waiting",
        }
    }

    /// The event with every secret value masked in its text. A
    /// screenshot's image is bytes, which a JSON round trip would lose;
    /// secrets in it were blanked before the capture, so only its URL is
    /// masked.
    pub fn masked(self, secrets: &crate::secrets::Secrets) -> Event {
        match self {
            Event::Screenshot(mut shot) => {
                shot.url = secrets.mask(&shot.url);
                Event::Screenshot(shot)
            }
            other => secrets.masked(other),
        }
    }
}

/// A screenshot as events carry it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScreenshotRecord {
    /// The step whose prompt it belongs to.
    pub step: usize,
    /// The page.
    pub url: String,
    /// `step` for the marked viewport each step carries, `requested` for
    /// the picture a `screenshot` action asked for.
    pub purpose: String,
    /// Whether it went to the model (false once a server refused images).
    pub sent: bool,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The listed elements' boxes drawn on it, in its pixels.
    #[serde(default)]
    pub marks: Vec<crate::vision::Mark>,
    /// Text fields blanked because they showed a secret.
    #[serde(default)]
    pub masked: usize,
    /// Capture and encoding, in milliseconds.
    pub capture_ms: f64,
    /// The prompt tokens it is counted as.
    pub tokens: u64,
    /// The image file beside the trace (`<trace>.images/step-3.jpg`), set
    /// when the trace wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The encoded image; never part of the JSON.
    #[serde(skip)]
    pub image: Option<std::sync::Arc<[u8]>>,
}

impl ScreenshotRecord {
    /// The record of `shot`, taken at `step` on `url`.
    pub fn new(
        step: usize,
        url: &str,
        purpose: &str,
        sent: bool,
        shot: &crate::vision::Screenshot,
    ) -> Self {
        ScreenshotRecord {
            step,
            url: url.to_string(),
            purpose: purpose.to_string(),
            sent,
            width: shot.width,
            height: shot.height,
            marks: shot.marks.clone(),
            masked: shot.masked,
            capture_ms: (shot.capture_ms * 10.0).round() / 10.0,
            tokens: shot.tokens(),
            file: None,
            image: Some(std::sync::Arc::clone(&shot.image)),
        }
    }

    /// The picture again, for a pane that draws it.
    pub fn screenshot(&self) -> Option<crate::vision::Screenshot> {
        Some(crate::vision::Screenshot {
            image: std::sync::Arc::clone(self.image.as_ref()?),
            mime: "image/jpeg",
            width: self.width,
            height: self.height,
            scale: 0.0,
            marks: self.marks.clone(),
            masked: self.masked,
            capture_ms: self.capture_ms,
        })
    }
}

/// How a run was set up: what a resume rebuilds besides the steps.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RunSettings {
    /// The approval mode at the start (`never`, `risky`, `always`).
    pub approval: String,
    /// The persistent browser profile the session used, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The state file (cookies, local storage) the session used, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Whether the run follows up on the earlier tasks of its trace (a
    /// fresh conversation forgets them).
    #[serde(default)]
    pub follow_up: bool,
    /// The sites each bound secret was limited to (an exported recipe
    /// keeps them).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub secret_sites: std::collections::BTreeMap<String, Vec<String>>,
}

/// The listing the model read at one step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListingRecord {
    /// The step.
    pub step: usize,
    /// The page.
    pub url: String,
    /// Its title.
    pub title: String,
    /// The listing text exactly as the model got it.
    pub listing: String,
}

/// A finished task of a conversation, as a follow-up is told of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EarlierTask {
    /// The task as the person gave it.
    pub task: String,
    /// Whether it was accomplished.
    pub success: bool,
    /// Why it ended.
    pub reason: EndReason,
    /// The model's final text, or why the run ended without one.
    pub text: String,
    /// Steps it took.
    pub steps: usize,
}

/// One earlier step as a resumed run is reminded of it: the same facts
/// the model read in its history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriorStep {
    /// The step's number.
    pub step: usize,
    /// The model's reflection.
    pub reflection: Reflection,
    /// The action as `name {params}`.
    pub action: String,
    /// What came of it, as the model read it.
    pub result: String,
    /// The page it acted on.
    pub url: String,
}

/// What a resumed run starts from: the run it continues, as far as its
/// trace shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResumeRecord {
    /// The trace of the run it continues.
    pub from: String,
    /// The step it resumes at (the first that had not finished).
    pub step: usize,
    /// Steps already taken, as the model reads them.
    #[serde(default)]
    pub history: Vec<PriorStep>,
    /// Finished tasks of the same conversation, oldest first.
    #[serde(default)]
    pub earlier: Vec<EarlierTask>,
    /// The person's messages so far, each with the step that carried it.
    #[serde(default)]
    pub messages: Vec<(usize, String)>,
    /// Tokens the run had used.
    #[serde(default)]
    pub usage: TokenUsage,
    /// What the model is told about the interruption.
    #[serde(default)]
    pub note: String,
}

/// A recipe step handed to the agent because it no longer ran as
/// recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealRecord {
    /// The step's number in the recipe.
    pub step: usize,
    /// The recipe's line that failed.
    pub line: usize,
    /// Why it failed: the locators tried and what the page showed, or the
    /// page a location check expected.
    pub failure: String,
    /// What the agent was asked to do.
    pub sub_goal: String,
    /// Whether the agent did it.
    pub success: bool,
    /// Model calls the healing made.
    pub model_calls: usize,
    /// Tokens they used.
    pub usage: TokenUsage,
    /// The step's first recorded locator (or the page it expected).
    pub old: String,
    /// What replaces it: the new first locator, or the new lines.
    pub new: String,
}

/// What the task cache did for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheState {
    /// No recipe was stored for the task: the agent did it, and its run
    /// was stored.
    Miss,
    /// The stored recipe replayed without a model call.
    Hit,
    /// The stored recipe replayed, some steps healed by the agent; the
    /// repaired recipe is stored.
    Healed,
    /// The stored recipe failed and healing did not save it: the agent did
    /// the task anew and its run replaced the stored one.
    Refreshed,
}

impl CacheState {
    /// The word logs and the status line show.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheState::Miss => "miss",
            CacheState::Hit => "hit",
            CacheState::Healed => "healed",
            CacheState::Refreshed => "refreshed",
        }
    }
}

/// The cache's report on one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheRecord {
    /// What happened.
    pub state: CacheState,
    /// The entry's key (a hash of the task and the start route).
    pub key: String,
    /// The task.
    pub task: String,
    /// The start page's route (its path, or sitemap route).
    pub route: String,
    /// The stored recipe.
    pub recipe: String,
    /// Model calls the run made (0 for a hit).
    pub model_calls: usize,
    /// Tokens they used.
    pub usage: TokenUsage,
    /// Whether the task ended done.
    pub success: bool,
    /// Anything worth saying (why a run was not stored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The model called `done`.
    Done,
    /// The step limit was reached without `done`.
    MaxSteps,
    /// The person stopped the run.
    Stopped,
    /// An error the run cannot continue after (a rejected API key, a
    /// browser that went away).
    Fatal,
    /// The model handed the page to a person (`hand_over`); the run
    /// continues when they hand it back (`webagent resume`, or the
    /// workbench's hand-back key).
    HandOver,
}

/// Tokens counted by the server (or estimated when it sent no count),
/// summed or for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Tokens of the prompts.
    pub prompt_tokens: u64,
    /// Tokens of the answers.
    pub completion_tokens: u64,
    /// Their sum.
    pub total_tokens: u64,
    /// Prompt tokens the server served from its prefix cache, where it
    /// reports them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_tokens: u64,
    /// True when some of these counts are estimates from the text's length
    /// because the server sent none.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl TokenUsage {
    /// Adds another count to this one.
    pub fn add(&mut self, other: TokenUsage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.total_tokens += other.total_tokens;
        self.cached_tokens += other.cached_tokens;
        self.estimated |= other.estimated;
    }
}

/// The model's reflection before it acts.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Reflection {
    /// How the previous step went, judged from the new page state.
    pub evaluation_previous_goal: String,
    /// What the model wants to remember across steps.
    pub memory: String,
    /// What this step is meant to achieve.
    pub next_goal: String,
}

/// Milliseconds spent in each phase of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StepTimings {
    /// Observing the page.
    pub observe_ms: u64,
    /// The model call, retries included.
    pub llm_ms: u64,
    /// The action's own execution (the wait for the person's approval is
    /// `wait_ms`, apart).
    pub act_ms: u64,
    /// Waiting for the person to approve the action.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub wait_ms: u64,
}

/// One step as recorded in the trace and shown in the step inspector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// 1 for the first step.
    pub index: usize,
    /// The model's reflection.
    pub reflection: Reflection,
    /// The action that ran, as `{"name": {params}}`; `null` when the
    /// model's answer could not be turned into one.
    pub action: Value,
    /// What the action returned (or the error the model will see).
    pub result: ActionResult,
    /// Every repair the normalizer made to the model's answer.
    pub repairs: Vec<String>,
    /// Time spent per phase.
    pub timings: StepTimings,
    /// Tokens of this step's model call, when the server reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
    /// Characters of the prompt sent (system and user message together).
    pub prompt_chars: usize,
    /// The messages exactly as sent, each headed by its role (`## system`,
    /// `## user`), so a step can be inspected after the run; empty in
    /// traces written before it was recorded.
    #[serde(default)]
    pub prompt: String,
    /// The model's answer as received (the whole SSE text when it
    /// streamed), for judging what the normalizer repaired.
    #[serde(default)]
    pub raw_response: String,
    /// The step of the custom action this step ran inside, when a
    /// handler took it: logs and reports nest it under that step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<usize>,
    /// What the person decided when asked about this step's action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<PersonDecision>,
}

impl StepRecord {
    /// The record of an action no model chose this time (a recipe's step,
    /// a custom action's): `action` as `{"name": {params}}`, taken for
    /// `goal`, `act_ms` its own time and `wait_ms` the person's.
    pub fn taken(
        index: usize,
        action: Value,
        result: ActionResult,
        goal: String,
        (act_ms, wait_ms): (u64, u64),
    ) -> Self {
        StepRecord {
            index,
            reflection: Reflection {
                next_goal: goal,
                ..Reflection::default()
            },
            action,
            result,
            repairs: Vec::new(),
            timings: StepTimings {
                act_ms,
                wait_ms,
                ..StepTimings::default()
            },
            usage: None,
            prompt_chars: 0,
            prompt: String::new(),
            raw_response: String::new(),
            within: None,
            person: None,
        }
    }
}

/// Tells, reading a trace's step records in order, which records are
/// custom actions whose own steps were recorded before them: a replay
/// runs those steps and leaves the custom action's call out.
#[derive(Debug, Default)]
pub struct Wrappers {
    wrapped: std::collections::BTreeSet<usize>,
}

impl Wrappers {
    /// Whether `record` is such a custom action. A step the model's
    /// custom action took carries the model's step number as its own and
    /// as `within`; it is a step, never the wrapper.
    pub fn is_wrapper(&mut self, record: &StepRecord) -> bool {
        let wrapper = record.within != Some(record.index) && self.wrapped.remove(&record.index);
        if let Some(outer) = record.within {
            self.wrapped.insert(outer);
        }
        wrapper
    }
}

/// Where a custom action's step record belongs among the records before
/// it. Its handler's steps are recorded first (the action's own result
/// comes last), yet a reader wants the action first with its steps under
/// it: it goes before the first record whose `within` names it. `None`:
/// none does, and it stays where it is.
pub fn place_before_its_steps(
    index: usize,
    earlier: impl IntoIterator<Item = Option<usize>>,
) -> Option<usize> {
    earlier.into_iter().position(|within| within == Some(index))
}

/// A person's decision at a step's approval, as the step's record keeps
/// it: what the log marks and what the model is told it did not choose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonDecision {
    /// What was decided.
    pub verdict: Verdict,
    /// The action as proposed, when the person changed it before it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed: Option<Value>,
}

/// What one observation found, in numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObservationSummary {
    /// The step it belongs to.
    pub step: usize,
    /// The page URL.
    pub url: String,
    /// The page title.
    pub title: String,
    /// Listed interactive elements.
    pub elements: usize,
    /// Of those, how many are new since the previous observation.
    pub new_elements: usize,
    /// Characters of the listing text.
    pub listing_chars: usize,
}

/// What the approval gate decided for one action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    /// The step it belongs to.
    pub step: usize,
    /// The action as it was proposed, `{"name": {params}}`.
    pub action: Value,
    /// The action's risk on this page.
    pub risk: Risk,
    /// The page the approval is bound to.
    pub url: String,
    /// What was decided.
    pub decision: Verdict,
    /// Why, when the decision was not made by a person (`--yes`, no
    /// terminal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The decision an approval record keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Run as proposed.
    Approved,
    /// Run with the person's changes.
    Edited,
    /// Not run.
    Denied,
    /// The whole run was stopped.
    Stopped,
    /// Not run: the person asked the model for another answer.
    Retried,
}

impl Verdict {
    /// The word the logs show.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Approved => "approved",
            Verdict::Edited => "edited",
            Verdict::Denied => "denied",
            Verdict::Stopped => "stopped",
            Verdict::Retried => "asked again",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn protocol_events_keep_their_wire_names() {
        let request = Event::ActionRequest {
            correlation_id: "step-2".into(),
            action: "click".into(),
            parameters: json!({"index": 3}),
        };
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            json!({"type": "action_request", "correlationId": "step-2", "action": "click", "parameters": {"index": 3}})
        );
        let error = Event::Error {
            error: "bad key".into(),
            fatal: true,
        };
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            json!({"type": "error", "error": "bad key", "fatal": true})
        );
        let result = Event::ToolResult {
            name: "click".into(),
            result: ActionResult::denied("no"),
        };
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({"type": "tool_result", "name": "click", "result": {"ok": false, "reason": "denied", "message": "no"}})
        );
    }

    #[test]
    fn a_step_is_flat_with_its_type_and_reads_back() {
        let step = Event::Step(StepRecord {
            index: 1,
            reflection: Reflection {
                evaluation_previous_goal: "start".into(),
                memory: "m".into(),
                next_goal: "sign in".into(),
            },
            action: json!({"click": {"index": 2}}),
            result: ActionResult::ok(),
            repairs: vec!["x".into()],
            timings: StepTimings {
                observe_ms: 1,
                llm_ms: 2,
                act_ms: 3,
                wait_ms: 0,
            },
            usage: None,
            prompt_chars: 900,
            prompt: "## system\nrules\n\n## user\ntask".into(),
            raw_response: "data: {}".into(),
            within: None,
            person: None,
        });
        let value = serde_json::to_value(&step).unwrap();
        assert_eq!(value["type"], "step");
        assert_eq!(value["reflection"]["next_goal"], "sign in");
        assert_eq!(value["timings"]["llm_ms"], 2);
        assert!(value.get("usage").is_none());
        assert_eq!(value["prompt"], "## system\nrules\n\n## user\ntask");
        assert_eq!(value["raw_response"], "data: {}");
        let back: Event = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(back, step);
        assert_eq!(back.kind(), "step");

        // A trace written before the prompt and answer were recorded
        // still reads, with both empty.
        let mut old = value;
        let fields = old.as_object_mut().unwrap();
        fields.remove("prompt");
        fields.remove("raw_response");
        let Event::Step(back) = serde_json::from_value(old).unwrap() else {
            panic!("not a step");
        };
        assert_eq!(back.prompt, "");
        assert_eq!(back.raw_response, "");
    }

    #[test]
    fn every_kind_word_matches_the_serialized_type() {
        let events = vec![
            Event::RunStarted {
                task: "t".into(),
                url: "u".into(),
                model: "m".into(),
                max_steps: 3,
            },
            Event::Text {
                content: "c".into(),
            },
            Event::ScriptLog { line: "l".into() },
            Event::Done {
                success: false,
                text: "limit".into(),
                reason: EndReason::MaxSteps,
                steps: 3,
                usage: TokenUsage::default(),
            },
            Event::SitemapReloaded {
                file: "a.yaml".into(),
                error: None,
            },
            Event::ScriptReloaded {
                file: "a.rhai".into(),
                error: Some("1:2: bad".into()),
                removed: false,
            },
        ];
        for event in events {
            let value = serde_json::to_value(&event).unwrap();
            assert_eq!(value["type"], event.kind());
        }
    }
}
