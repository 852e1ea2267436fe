//! The agent: a reflection-before-action loop over any OpenAI-compatible
//! model.
//!
//! Each step observes the page, builds the prompt, calls the model with one
//! forced tool (`agent_step`: `{evaluation_previous_goal, memory,
//! next_goal, action: {name: params}}`), normalizes and validates the
//! answer, passes the approval gate, executes, and records the step. The
//! run ends on `done`, at the step limit, on the person's stop, or on an
//! error it cannot go on after. Everything that happens is sent as
//! [`Event`]s through the channel the caller supplies; the library prints
//! nothing.
//!
//! The loop does not know how actions run: each travels the
//! [`Road`] it was given to an [`Environment`] (a session's browser, a
//! script of pages in tests). The model is only called from this module:
//! each step's request and `extract`'s ([`ModelExtractor`]), both through
//! [`masked_request`].

pub mod conversation;
pub mod normalize;
pub mod prompt;

mod extract;
mod preview;
mod steering;
mod tool;

use std::sync::{Arc, RwLock};
use std::time::Instant;

use serde_json::Value;

use crate::actions::{Action, ActionResult, Target};
use crate::dom::PageState;
use crate::environment::{ApprovalMode, Environment, Passage, Road};
use crate::events::{
    EarlierTask, EndReason, Event, EventSink, ListingRecord, ObservationSummary, Reflection,
    RunSettings, StepRecord, StepTimings, TokenUsage,
};
use crate::llm::{
    chars_for_tokens, ChatMessage, ChatRequest, ChatResponse, FunctionTool, ImagePart, LlmClient,
    LlmError, LlmEvent, StopSignal,
};
use crate::secrets::Secrets;
use crate::sitemap::SitemapSet;
use crate::vision::{default_image_width, Screenshot, ShotRegion, ShotRequest, VisionMode};

pub use conversation::{Conversation, Prior, ResumePoint};
pub use extract::{extract_tool, ModelExtractor, EXTRACT_TOOL};
pub use normalize::{normalize, NormalizeError, NormalizedTurn};
pub use prompt::{
    system_prompt, user_prompt, user_prompt_in, ConversationPrompt, HistoryEntry, StepPrompt,
};
pub use steering::Steering;
pub use tool::{agent_tool, agent_tool_with, FIXED_PART_LIMIT};

/// The name of the one tool the model must call each step.
pub const AGENT_TOOL_NAME: &str = "agent_step";

/// The step limit when none is given (`agent.max_steps` of the built-in
/// defaults).
pub fn default_max_steps() -> usize {
    crate::defaults::number(&["agent", "max_steps"]) as usize
}

/// Actions the model may send as one step's list, when the caller sets no
/// other limit (`agent.max_actions_per_step`).
pub fn default_max_actions() -> usize {
    crate::defaults::number(&["agent", "max_actions_per_step"]) as usize
}

/// Answers in a row without a usable action after which a run ends, when
/// the caller sets no other limit (`agent.max_invalid_answers`).
pub fn default_max_invalid_answers() -> usize {
    crate::defaults::number(&["agent", "max_invalid_answers"]) as usize
}

/// Tokens kept free for the answer when a prompt is fitted into the
/// context window: a step's reflection and action need a few hundred.
const ANSWER_RESERVE_TOKENS: u64 = 1024;

/// Everything that can stop the agent from running at all.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The step limit is zero.
    #[error("the step limit must be at least 1")]
    NoSteps,
}

/// A request to the model with every secret value masked in its text:
/// the one way text leaves for a model (a task the person typed with a
/// value in it, say). Pictures are pixels, covered before the capture.
pub(crate) fn masked_request(mut request: ChatRequest, secrets: &Secrets) -> ChatRequest {
    if secrets.is_empty() {
        return request;
    }
    for message in &mut request.messages {
        message.content = secrets.mask(&message.content);
        for call in &mut message.tool_calls {
            call.arguments = secrets.mask(&call.arguments);
        }
    }
    request
}

/// Settings of one run.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// The step limit.
    pub max_steps: usize,
    /// The secrets of the session: the model is told their names, and
    /// their values are masked in every request it is sent.
    pub secrets: Secrets,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            max_steps: default_max_steps(),
            secrets: Secrets::new(),
        }
    }
}

/// How a run shows the page to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VisionSettings {
    /// When a picture goes with each step (`llm.vision`).
    pub mode: VisionMode,
    /// Its width in pixels (`llm.image_width`).
    pub width: u32,
}

impl Default for VisionSettings {
    /// Text only: a picture costs tokens, so callers opt in.
    fn default() -> Self {
        VisionSettings {
            mode: VisionMode::Never,
            width: default_image_width(),
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// Whether the task was accomplished (only `done` with success true).
    pub success: bool,
    /// The model's final text, or why the run ended without one.
    pub text: String,
    /// Why it ended.
    pub reason: EndReason,
    /// Steps taken.
    pub steps: usize,
    /// Tokens used.
    pub usage: TokenUsage,
}

/// One agent run: the model, the sitemaps, the environment its actions
/// run in, and the road they take there (catalog, policy, approvals,
/// events, `extract`'s model).
pub struct Agent<E: Environment> {
    llm: Arc<LlmClient>,
    sitemaps: Arc<RwLock<SitemapSet>>,
    environment: E,
    road: Road,
    stop: StopSignal,
    config: AgentConfig,
    max_invalid_answers: usize,
    max_actions: usize,
    vision: VisionSettings,
    /// Whether this run sends pictures: decided at its start, turned off
    /// for good when the server refuses one.
    seeing: bool,
    /// Pictures a `screenshot` action took, held for the next step.
    held: Vec<Screenshot>,
    /// The person's messages and retries while the run goes.
    steering: Option<Steering>,
    /// What the trace records of how the session was set up (profile,
    /// state file); the approval mode is read from the road.
    settings: RunSettings,
}

/// What the loop keeps between steps.
struct RunState {
    history: Vec<HistoryEntry>,
    usage: TokenUsage,
    last_reflection: Reflection,
    /// Answers in a row that gave no usable action.
    invalid_in_row: usize,
    /// The tasks this run follows up on.
    earlier: Vec<EarlierTask>,
    /// The memory the last of them left.
    memory: String,
    /// The person's messages so far, with the step that carried each.
    messages: Vec<(usize, String)>,
    /// The last step recorded, when its last action failed: the one the
    /// person may ask for again.
    last_failed: Option<usize>,
    /// The approval mode last written to the trace.
    mode: ApprovalMode,
}

impl RunState {
    /// An ending other than `done`, with the tokens used so far.
    fn outcome(&self, success: bool, text: String, reason: EndReason, steps: usize) -> RunOutcome {
        RunOutcome {
            success,
            text,
            reason,
            steps,
            usage: self.usage,
        }
    }
}

/// What is known of a step as it goes; recorded once its result is.
struct StepDraft {
    index: usize,
    url: String,
    reflection: Reflection,
    /// `{"name": {params}}`, or `null` when there was no action.
    action: Value,
    /// The action as the model reads it in the history.
    shown: String,
    repairs: Vec<String>,
    timings: StepTimings,
    usage: Option<TokenUsage>,
    prompt_chars: usize,
    /// The messages as sent, each headed by its role.
    prompt: String,
    /// The model's answer as received.
    raw_response: String,
}

impl StepDraft {
    fn new(index: usize) -> Self {
        StepDraft {
            index,
            url: String::new(),
            reflection: Reflection::default(),
            action: Value::Null,
            shown: String::new(),
            repairs: Vec::new(),
            timings: StepTimings::default(),
            usage: None,
            prompt_chars: 0,
            prompt: String::new(),
            raw_response: String::new(),
        }
    }

    /// The step's record, with its result.
    fn into_record(self, result: ActionResult) -> StepRecord {
        StepRecord {
            index: self.index,
            reflection: self.reflection,
            action: self.action,
            result,
            repairs: self.repairs,
            timings: self.timings,
            usage: self.usage,
            prompt_chars: self.prompt_chars,
            prompt: self.prompt,
            raw_response: self.raw_response,
        }
    }
}

/// How one step (or one phase of it) ended, for the loop.
enum StepEnd {
    Continue,
    Finished(RunOutcome),
    /// The person asked the model again for this step.
    Retry(usize),
}

/// The model's usable answer to a step: the first action and the rest of
/// its list.
struct Answer {
    action: Action,
    rest: Vec<(Value, Result<Action, String>)>,
}

/// The fixed part of every request of a run.
struct Fixed<'a> {
    task: &'a str,
    system: &'a str,
    tool: &'a FunctionTool,
}

impl<E: Environment> Agent<E> {
    /// An agent with default settings whose actions take `road` to
    /// `environment`; `sitemaps` may be shared with a watcher so edits
    /// apply from the next step on (see [`Agent::with_sitemaps`]).
    pub fn new(llm: Arc<LlmClient>, environment: E, road: Road) -> Self {
        Agent {
            llm,
            sitemaps: Arc::new(RwLock::new(SitemapSet::new())),
            environment,
            road,
            stop: StopSignal::never(),
            config: AgentConfig::default(),
            max_invalid_answers: default_max_invalid_answers(),
            max_actions: default_max_actions(),
            vision: VisionSettings::default(),
            seeing: false,
            held: Vec::new(),
            steering: None,
            settings: RunSettings::default(),
        }
    }

    /// Takes the person's messages and retries from `steering` while it
    /// runs.
    pub fn with_steering(mut self, steering: Steering) -> Self {
        self.steering = Some(steering);
        self
    }

    /// Records these settings (profile, state file) in the trace at the
    /// start of each run, so a resume can rebuild the session.
    pub fn with_settings(mut self, settings: RunSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Shows the model a picture of the page with each step, as `vision`
    /// says (default: never).
    pub fn with_vision(mut self, vision: VisionSettings) -> Self {
        self.vision = vision;
        self
    }

    /// Ends the run after this many answers in a row without a usable
    /// action (`agent.max_invalid_answers`; at least 1).
    pub fn with_max_invalid_answers(mut self, limit: usize) -> Self {
        self.max_invalid_answers = limit.max(1);
        self
    }

    /// How many actions one answer may list (`agent.max_actions_per_step`;
    /// 1 keeps one action per step).
    pub fn with_max_actions(mut self, limit: usize) -> Self {
        self.max_actions = limit.max(1);
        self
    }

    /// Uses these sitemaps.
    pub fn with_sitemaps(mut self, sitemaps: Arc<RwLock<SitemapSet>>) -> Self {
        self.sitemaps = sitemaps;
        self
    }

    /// Stops the run when this signal fires.
    pub fn with_stop(mut self, stop: StopSignal) -> Self {
        self.stop = stop;
        self
    }

    /// Uses these settings.
    pub fn with_config(mut self, config: AgentConfig) -> Self {
        self.config = config;
        self
    }

    /// The environment, for the caller to clean up after the run.
    pub fn environment_mut(&mut self) -> &mut E {
        &mut self.environment
    }

    /// The forced tool: the reflection fields plus the union of every
    /// catalog action.
    pub fn tool(&self) -> FunctionTool {
        agent_tool_with(self.road.catalog(), self.max_actions)
    }

    /// Runs `task` until it ends; the outcome is also sent as a `done`
    /// event.
    pub async fn run(&mut self, task: &str) -> Result<RunOutcome, AgentError> {
        self.run_with(task, Prior::fresh()).await
    }

    /// Runs `task` from `prior`: as a follow-up of earlier tasks, or from
    /// the step a resumed run had reached (the trace then names the one it
    /// continues).
    pub async fn run_with(&mut self, task: &str, prior: Prior) -> Result<RunOutcome, AgentError> {
        if self.config.max_steps == 0 {
            return Err(AgentError::NoSteps);
        }
        let start_url = self.environment.current_url().await.unwrap_or_default();
        self.emit(Event::RunStarted {
            task: task.to_string(),
            url: start_url,
            model: self.llm.config().model.clone(),
            max_steps: self.config.max_steps,
        });
        let mode = self.road.mode();
        self.emit(Event::RunSettings(RunSettings {
            approval: mode.as_str().to_string(),
            follow_up: prior.follow_up,
            ..self.settings.clone()
        }));
        if let Some(record) = prior.resume_record() {
            self.emit(Event::Resumed(record));
        }
        self.seeing = self.vision.mode.enabled_for(&self.llm.config().model);
        self.held.clear();
        if let Some(steering) = &self.steering {
            // A retry asked before this run began is not for it.
            steering.take_retry();
        }
        let system = prompt::system_prompt_with(&self.config.secrets.names(), self.max_actions);
        let tool = self.tool();
        let fixed = Fixed {
            task,
            system: &system,
            tool: &tool,
        };
        let first = prior.next_step.max(1);
        let mut state = RunState {
            history: prior.history,
            usage: prior.usage,
            last_reflection: Reflection::default(),
            invalid_in_row: 0,
            earlier: prior.earlier,
            memory: prior.memory,
            messages: prior.messages,
            last_failed: None,
            mode,
        };
        let mut outcome = None;
        let mut step = first;
        while step <= self.config.max_steps {
            if self.stop.is_stopped() {
                let text = "stopped by the person".to_string();
                outcome = Some(state.outcome(false, text, EndReason::Stopped, step - 1));
                break;
            }
            if let Some(again) = self.retry_asked(&mut state) {
                step = again;
            }
            self.note_mode(&mut state);
            match self.step(step, &fixed, &mut state).await {
                StepEnd::Continue => step += 1,
                StepEnd::Retry(again) => step = again,
                StepEnd::Finished(done) => {
                    outcome = Some(done);
                    break;
                }
            }
        }
        let outcome = match outcome {
            Some(outcome) => outcome,
            None => {
                let summary = limit_summary(self.config.max_steps, &state);
                self.emit(Event::Error {
                    error: format!(
                        "the step limit ({}) was reached before the task was done",
                        self.config.max_steps
                    ),
                    fatal: true,
                });
                state.outcome(false, summary, EndReason::MaxSteps, self.config.max_steps)
            }
        };
        self.emit(Event::Done {
            success: outcome.success,
            text: outcome.text.clone(),
            reason: outcome.reason,
            steps: outcome.steps,
            usage: outcome.usage,
        });
        Ok(outcome)
    }

    /// A retry the person asked for, when it names the step that may be
    /// asked again (the last one, failed); any other is reported and
    /// dropped.
    fn retry_asked(&self, state: &mut RunState) -> Option<usize> {
        let asked = self.steering.as_ref()?.take_retry()?;
        self.accept_retry(asked, state)
    }

    fn accept_retry(&self, asked: usize, state: &mut RunState) -> Option<usize> {
        if state.last_failed == Some(asked) {
            // The failed attempt stays in the history, marked, so the
            // model does not answer the same again.
            conversation::mark_retried(&mut state.history, asked);
            state.last_failed = None;
            self.emit(Event::StepRetried {
                step: asked,
                reason: "the person asked the model again for this failed step".into(),
            });
            return Some(asked);
        }
        self.emit(Event::Error {
            error: format!(
                "step {asked} cannot be asked again: only the run's last step, when it failed"
            ),
            fatal: false,
        });
        None
    }

    /// Writes the approval mode to the trace when the person changed it.
    fn note_mode(&self, state: &mut RunState) {
        let now = self.road.mode();
        if now != state.mode {
            state.mode = now;
            self.emit(Event::ApprovalModeChanged {
                mode: now.as_str().to_string(),
            });
        }
    }

    /// One step in four phases: observe the page, ask the model, read its
    /// answer, act on it (the whole list). Each phase may end the step
    /// early, recorded.
    async fn step(&mut self, step: usize, fixed: &Fixed<'_>, state: &mut RunState) -> StepEnd {
        let end = self.step_phases(step, fixed, state).await;
        if !matches!(end, StepEnd::Retry(_)) {
            // Every action of the step has run: a resume starts after it.
            self.emit(Event::StepEnded { step });
        }
        end
    }

    async fn step_phases(
        &mut self,
        step: usize,
        fixed: &Fixed<'_>,
        state: &mut RunState,
    ) -> StepEnd {
        let mut draft = StepDraft::new(step);
        let page = match self.observe(step, &mut draft, state).await {
            Ok(page) => page,
            Err(end) => return end,
        };
        let response = match self.ask(step, fixed, &page, state, &mut draft).await {
            Ok(response) => response,
            Err(end) => return end,
        };
        let answer = match self.read_answer(step, &response, &mut draft, state) {
            Ok(answer) => answer,
            Err(end) => return end,
        };
        self.act_all(step, answer, page, draft, state).await
    }

    /// Phase 1: the page as it is now. A browser that could not be had
    /// ends the run; any other failure is the step's result.
    async fn observe(
        &mut self,
        step: usize,
        draft: &mut StepDraft,
        state: &mut RunState,
    ) -> Result<PageState, StepEnd> {
        let started = Instant::now();
        let observed = self.environment.observe().await;
        draft.timings.observe_ms = ms_since(started);
        let page = match observed {
            Ok(page) => page,
            Err(error) => {
                self.emit(Event::Error {
                    error: format!("observing the page failed: {}", error.message),
                    fatal: error.fatal,
                });
                if error.fatal {
                    let text = format!("the browser failed: {}", error.message);
                    return Err(StepEnd::Finished(state.outcome(
                        false,
                        text,
                        EndReason::Fatal,
                        step - 1,
                    )));
                }
                let mut failed = StepDraft::new(step);
                failed.timings = draft.timings;
                failed.shown = "(no action: the page could not be observed)".into();
                let result = ActionResult::unknown(format!(
                    "the page could not be observed: {}",
                    error.message
                ));
                self.record(state, failed, result);
                return Err(StepEnd::Continue);
            }
        };
        draft.url = page.url.clone();
        self.emit(Event::Observation(ObservationSummary {
            step,
            url: page.url.clone(),
            title: page.title.clone(),
            elements: page.elements.len(),
            new_elements: page.elements.iter().filter(|e| e.is_new).count(),
            listing_chars: page.listing.chars().count(),
        }));
        self.emit(Event::Listing(ListingRecord {
            step,
            url: page.url.clone(),
            title: page.title.clone(),
            listing: page.listing.clone(),
        }));
        Ok(page)
    }

    /// Phase 2: the model's answer to this step's prompt (with its
    /// pictures; without them, once and for the rest of the run, when the
    /// server refuses pictures). A failed call ends the run.
    async fn ask(
        &mut self,
        step: usize,
        fixed: &Fixed<'_>,
        page: &PageState,
        state: &mut RunState,
        draft: &mut StepDraft,
    ) -> Result<ChatResponse, StepEnd> {
        let started = Instant::now();
        let mut pictures = self.pictures(step, page).await;
        draft.timings.observe_ms += ms_since(started);
        self.take_messages(step, state);
        // A retry asked for meanwhile replaces this step, before the model
        // is asked for it.
        if let Some(again) = self.retry_asked(state) {
            return Err(StepEnd::Retry(again));
        }
        let started = Instant::now();
        let (request, answer) = loop {
            let request = self.request(step, fixed, page, state, &pictures);
            let calling = call_model(&self.llm, &request, self.road.events(), &self.stop);
            let answer = match self.steering.clone() {
                None => calling.await,
                Some(steering) => {
                    // The person may ask for the failed step before this
                    // one while the model answers: the answer is dropped,
                    // as nothing has acted on it yet.
                    tokio::pin!(calling);
                    loop {
                        tokio::select! {
                            answer = &mut calling => break answer,
                            asked = steering.next_retry() => {
                                if let Some(again) = self.accept_retry(asked, state) {
                                    return Err(StepEnd::Retry(again));
                                }
                            }
                        }
                    }
                }
            };
            match &answer {
                Err(refusal @ LlmError::ImagesUnsupported { .. }) if !pictures.is_empty() => {
                    // Once is enough: the rest of the run reads text only.
                    self.seeing = false;
                    self.held.clear();
                    pictures.clear();
                    self.emit(Event::Error {
                        error: format!(
                            "{refusal}; going on without screenshots for the rest of this run"
                        ),
                        fatal: false,
                    });
                }
                _ => break (request, answer),
            }
        };
        draft.timings.llm_ms = ms_since(started);
        draft.prompt_chars = request
            .messages
            .iter()
            .map(|m| m.content.chars().count())
            .sum();
        draft.prompt = prompt_text(&request);
        match answer {
            Ok(response) => {
                draft.raw_response = response.raw.clone();
                draft.usage = response.usage;
                if let Some(usage) = draft.usage {
                    state.usage.add(usage);
                }
                Ok(response)
            }
            Err(LlmError::Cancelled) => {
                let text = "stopped by the person".to_string();
                Err(StepEnd::Finished(state.outcome(
                    false,
                    text,
                    EndReason::Stopped,
                    step - 1,
                )))
            }
            Err(error) => {
                let message = format!("the model call failed: {error}");
                self.emit(Event::Error {
                    error: message.clone(),
                    fatal: true,
                });
                Err(StepEnd::Finished(state.outcome(
                    false,
                    message,
                    EndReason::Fatal,
                    step - 1,
                )))
            }
        }
    }

    /// The person's messages waiting in the inbox join the conversation
    /// from this step's request on, each recorded with the step.
    fn take_messages(&self, step: usize, state: &mut RunState) {
        let Some(steering) = &self.steering else {
            return;
        };
        for text in steering.take_messages() {
            self.emit(Event::PersonMessage {
                step,
                text: text.clone(),
            });
            state.messages.push((step, text));
        }
    }

    /// Phase 3: the reflection and a valid action from the answer. An
    /// answer without one runs nothing; the model reads why at the next
    /// step, and too many in a row end the run.
    fn read_answer(
        &mut self,
        step: usize,
        response: &ChatResponse,
        draft: &mut StepDraft,
        state: &mut RunState,
    ) -> Result<Answer, StepEnd> {
        let cut_off = response.finish_reason.as_deref() == Some("length");
        let turn = match normalize(response, self.road.catalog()) {
            Ok(turn) => turn,
            Err(error) => {
                self.emit(Event::Error {
                    error: format!("step {step}: the model's answer was unusable: {error}"),
                    fatal: false,
                });
                let mut unusable = std::mem::replace(draft, StepDraft::new(step));
                unusable.shown = "(no usable answer)".into();
                self.record(
                    state,
                    unusable,
                    ActionResult::invalid_params(error.to_string()),
                );
                return Err(self.after_invalid_answer(step, state, response));
            }
        };
        draft.reflection = turn.reflection;
        draft.repairs = turn.repairs;
        draft.action = turn.proposed.clone();
        draft.shown = if turn.proposed.is_null() {
            "(no action)".into()
        } else {
            action_text(&turn.proposed)
        };
        state.last_reflection = draft.reflection.clone();
        let checked = match turn.action {
            // An answer cut at the token bound is unfinished, whatever
            // part of it happens to parse.
            Ok(_) if cut_off => Err(cut_off_message(self.llm.config().max_output_tokens)),
            other => other,
        };
        match checked {
            Ok(action) => {
                state.invalid_in_row = 0;
                Ok(Answer {
                    action,
                    rest: turn.rest,
                })
            }
            Err(message) => {
                // Nothing runs on the page. The model sees this as the
                // step's result and can correct itself at the next step.
                let result = ActionResult::invalid_params(message);
                if !turn.proposed.is_null() {
                    let (name, parameters) = split_action(&turn.proposed);
                    self.emit(Event::ToolCall {
                        name: name.clone(),
                        parameters,
                    });
                    self.emit(Event::ToolResult {
                        name,
                        result: result.clone(),
                    });
                }
                let invalid = std::mem::replace(draft, StepDraft::new(step));
                self.record(state, invalid, result);
                Err(self.after_invalid_answer(step, state, response))
            }
        }
    }

    /// Phase 4: the action, then the rest of the model's list while each
    /// still makes sense on the page as it is now.
    async fn act_all(
        &mut self,
        step: usize,
        answer: Answer,
        page: PageState,
        mut draft: StepDraft,
        state: &mut RunState,
    ) -> StepEnd {
        let reflection = draft.reflection.clone();
        let started = Instant::now();
        let (ran, result, mut finished) = self.act(step, answer.action, &reflection, &page).await;
        self.time_action(&mut draft.timings, started);
        draft.action = ran.to_json();
        draft.shown = ran.to_string();
        let mut going_on = result.is_ok();
        self.record(state, draft, result);
        if let Some(again) = self.retry_at_approval(step) {
            return again;
        }
        let mut rest = answer.rest;
        if rest.len() >= self.max_actions {
            let dropped = rest.split_off(self.max_actions - 1);
            self.note_stop(
                state,
                &dropped,
                &format!("at most {} actions run per step", self.max_actions),
            );
        }
        let mut seen = page;
        let mut rest = rest.into_iter();
        while finished.is_none() {
            let Some((proposed, next)) = rest.next() else {
                break;
            };
            let mut left: Vec<(Value, Result<Action, String>)> =
                std::iter::once((proposed, next.clone())).collect();
            let (action, now) = match self.next_in_list(going_on, next, &seen).await {
                Ok(ready) => ready,
                Err(reason) => {
                    left.extend(rest.by_ref());
                    self.note_stop(state, &left, &reason);
                    break;
                }
            };
            let mut draft = StepDraft::new(step);
            draft.url = now.url.clone();
            draft.reflection = reflection.clone();
            let started = Instant::now();
            let (ran, result, ended) = self.act(step, action, &reflection, &now).await;
            self.time_action(&mut draft.timings, started);
            draft.action = ran.to_json();
            draft.shown = ran.to_string();
            // A refusal ends the list: the model planned the rest with it.
            going_on = result.is_ok();
            self.record(state, draft, result);
            if let Some(again) = self.retry_at_approval(step) {
                return again;
            }
            finished = ended;
            seen = now;
        }
        match finished {
            Some(finished) => StepEnd::Finished(RunOutcome {
                steps: step,
                usage: state.usage,
                ..finished
            }),
            None => StepEnd::Continue,
        }
    }

    /// The action's own time and, apart, the wait for the person's
    /// approval, since `started`.
    fn time_action(&mut self, timings: &mut StepTimings, started: Instant) {
        let waited = self.road.take_wait().as_millis() as u64;
        timings.wait_ms = waited;
        timings.act_ms = ms_since(started).saturating_sub(waited);
    }

    /// When the person asked, at the approval, for another answer: the
    /// step is asked again (the refused proposal stays in the history).
    fn retry_at_approval(&mut self, step: usize) -> Option<StepEnd> {
        if !self.road.take_retry() {
            return None;
        }
        self.emit(Event::StepRetried {
            step,
            reason: "the person asked for another proposal at the approval".into(),
        });
        Some(StepEnd::Retry(step))
    }

    /// Whether the next action of a list may run, on the page as it is
    /// now: the one before it worked, it is valid, the page did not
    /// navigate, and its target is the element the model saw under that
    /// index. Returns the action and the page, or why the list stops.
    async fn next_in_list(
        &mut self,
        previous_ok: bool,
        next: Result<Action, String>,
        seen: &PageState,
    ) -> Result<(Action, PageState), String> {
        if !previous_ok {
            return Err("the action before it did not succeed".into());
        }
        let action = next.map_err(|message| format!("it is not valid: {message}"))?;
        let now = self
            .environment
            .observe()
            .await
            .map_err(|e| format!("the page could not be observed: {}", e.message))?;
        let page_of = |url: &str| url.split('#').next().unwrap_or(url).to_string();
        if page_of(&now.url) != page_of(&seen.url) {
            return Err(format!("the page changed to {}", now.url));
        }
        if let Some(Target::Index { index }) = action.target() {
            let index = *index;
            let before = seen.elements.iter().find(|e| e.index == index);
            let after = now.elements.iter().find(|e| e.index == index);
            match (before, after) {
                (Some(before), Some(after)) if same_element(before, after) => {}
                (_, None) => return Err(format!("element {index} is gone")),
                (_, Some(after)) => {
                    return Err(format!(
                        "element {index} is now {}",
                        prompt::clip(&crate::dom::element_line(after), 80)
                    ))
                }
            }
        }
        Ok((action, now))
    }

    /// Tells the model (in its history) and the person (an event) which
    /// actions of a list were not run, and why.
    fn note_stop(
        &mut self,
        state: &mut RunState,
        left: &[(Value, Result<Action, String>)],
        reason: &str,
    ) {
        if left.is_empty() {
            return;
        }
        let names: Vec<String> = left
            .iter()
            .map(|(proposed, _)| prompt::clip(&action_text(proposed), 60))
            .collect();
        let note = format!(
            "not run: {} ({reason}); look at the page and send them again if still needed",
            names.join("; ")
        );
        if let Some(last) = state.history.last_mut() {
            last.result = format!("{}; then {note}", last.result);
        }
        self.emit(Event::Error {
            error: format!("the list of actions stopped early: {note}"),
            fatal: false,
        });
    }

    /// Counts an answer without a usable action; after
    /// `max_invalid_answers` in a row the run ends, quoting the last one.
    fn after_invalid_answer(
        &self,
        step: usize,
        state: &mut RunState,
        response: &ChatResponse,
    ) -> StepEnd {
        state.invalid_in_row += 1;
        if state.invalid_in_row < self.max_invalid_answers {
            return StepEnd::Continue;
        }
        let message = format!(
            "the model gave {} answers in a row without a usable action (agent.max_invalid_answers); the last one was: {}",
            state.invalid_in_row,
            prompt::clip(&answer_quote(response), 300)
        );
        self.emit(Event::Error {
            error: message.clone(),
            fatal: true,
        });
        StepEnd::Finished(state.outcome(false, message, EndReason::Fatal, step))
    }

    /// The pictures this step's prompt carries: the marked viewport, and
    /// what a `screenshot` action of the step before took. Each is also an
    /// event (the workbench draws it, the trace stores it). Empty when the
    /// run does not send pictures.
    async fn pictures(&mut self, step: usize, page: &PageState) -> Vec<(Screenshot, String)> {
        let held = std::mem::take(&mut self.held);
        if !self.seeing {
            return Vec::new();
        }
        let request = ShotRequest::step(self.vision.width);
        let mut pictures = Vec::new();
        match self.environment.screenshot(&request).await {
            None => {}
            Some(Ok(shot)) => pictures.push((shot, "step".to_string())),
            Some(Err(error)) => self.emit(Event::Error {
                error: format!("the screenshot for step {step} failed ({error}); the step goes on with the text alone"),
                fatal: false,
            }),
        }
        pictures.extend(held.into_iter().map(|shot| (shot, "requested".to_string())));
        for (shot, purpose) in &pictures {
            self.emit(Event::Screenshot(crate::events::ScreenshotRecord::new(
                step, &page.url, purpose, true, shot,
            )));
        }
        pictures
    }

    /// The request of one step: the system prompt, the user prompt for the
    /// page, the step's pictures and the forced tool, the page cut to fit
    /// the context window when one is set.
    fn request(
        &self,
        step: usize,
        fixed: &Fixed<'_>,
        page: &PageState,
        state: &RunState,
        pictures: &[(Screenshot, String)],
    ) -> ChatRequest {
        // Read per step: a watcher may have swapped in an edited sitemap.
        let sitemap = match self.sitemaps.read() {
            Ok(set) => set.for_url(&page.url).cloned(),
            Err(poisoned) => poisoned.into_inner().for_url(&page.url).cloned(),
        };
        let build = |page: &PageState| {
            let mut user = user_prompt_in(
                &StepPrompt {
                    task: fixed.task,
                    step,
                    max_steps: self.config.max_steps,
                    history: &state.history,
                    page,
                    sitemap: sitemap.as_deref(),
                },
                &ConversationPrompt {
                    earlier: &state.earlier,
                    memory: &state.memory,
                    messages: &state.messages,
                },
            );
            for (_, purpose) in pictures {
                user.push_str(if purpose == "step" {
                    "\n\n[Attached: a screenshot of the viewport. Each listed element is outlined, its [index] in a tag at the box's top-left corner.]"
                } else {
                    "\n\n[Also attached: the screenshot your last `screenshot` action took.]"
                });
            }
            let mut message = ChatMessage::user(user);
            for (shot, _) in pictures {
                message = message.with_image(ImagePart {
                    url: shot.data_url(),
                    tokens: shot.tokens(),
                });
            }
            let request = ChatRequest::new(vec![ChatMessage::system(fixed.system), message])
                .with_forced_tool(fixed.tool.clone());
            masked_request(request, &self.config.secrets)
        };
        let request = build(page);
        let config = self.llm.config();
        let Some(window) = config.context_window.map(u64::from) else {
            return request;
        };
        // Room for the answer and for the estimate being off a little.
        let margin = window / 20;
        let budget = window.saturating_sub(ANSWER_RESERVE_TOKENS + margin);
        let estimate = request.estimated_prompt_tokens();
        let mut request = if estimate > budget {
            let over = chars_for_tokens(estimate - budget);
            let page_chars = prompt::shown_page_chars(page);
            // The notes the cut adds take room too.
            let keep = page_chars.saturating_sub(over + 400);
            build(&prompt::fit_page(page, keep))
        } else {
            request
        };
        // The answer may use what the prompt leaves; servers that count
        // prompt and answer together refuse a larger bound.
        let left = window.saturating_sub(request.estimated_prompt_tokens() + margin);
        let bound = config
            .max_output_tokens
            .map_or(left, |max| left.min(u64::from(max)));
        request.max_tokens = Some(bound.max(256) as u32);
        request
    }

    /// One action along the road. Returns the action that ran (after any
    /// edit), its result, and the outcome when the run ends here.
    async fn act(
        &mut self,
        step: usize,
        action: Action,
        reflection: &Reflection,
        page: &PageState,
    ) -> (Action, ActionResult, Option<RunOutcome>) {
        let passage = self
            .road
            .travel(
                &mut self.environment,
                step,
                action.clone(),
                page,
                &reflection.next_goal,
            )
            .await;
        match passage {
            Passage::Ran(Action::Done { text, success }, result) => {
                let outcome = RunOutcome {
                    success,
                    text: text.clone(),
                    reason: EndReason::Done,
                    steps: step,
                    usage: TokenUsage::default(),
                };
                (Action::Done { text, success }, result, Some(outcome))
            }
            Passage::Ran(ran, result) => {
                if let (
                    Action::Screenshot {
                        full_page, target, ..
                    },
                    true,
                ) = (&ran, result.is_ok())
                {
                    self.hold_screenshot(*full_page, target.clone()).await;
                }
                (ran, result, None)
            }
            Passage::Refused(result) => (action, result, None),
            Passage::Stopped(result) => {
                let outcome = RunOutcome {
                    success: false,
                    text: "stopped by the person at the approval of this step".into(),
                    reason: EndReason::Stopped,
                    steps: step,
                    usage: TokenUsage::default(),
                };
                (action, result, Some(outcome))
            }
        }
    }

    /// Takes the picture a `screenshot` action asked for, now, while its
    /// index still names the element, and holds it for the next step's
    /// prompt. The viewport needs none: every step carries it already.
    async fn hold_screenshot(&mut self, full_page: bool, target: Option<Target>) {
        let region = match (target, full_page) {
            (Some(target), _) => ShotRegion::Element(target),
            (None, true) => ShotRegion::FullPage,
            (None, false) => return,
        };
        if !self.seeing {
            return;
        }
        let request = ShotRequest {
            region,
            width: self.vision.width,
            marks: false,
            secrets: Vec::new(),
            png: false,
        };
        match self.environment.screenshot(&request).await {
            Some(Ok(shot)) => self.held.push(shot),
            Some(Err(error)) => self.emit(Event::Error {
                error: format!(
                    "the picture for the model could not be taken ({error}); the file was written"
                ),
                fatal: false,
            }),
            None => {}
        }
    }

    /// Adds the step to the history the model reads and emits its record.
    fn record(&mut self, state: &mut RunState, draft: StepDraft, result: ActionResult) {
        state.last_failed = (!result.is_ok()).then_some(draft.index);
        state.history.push(HistoryEntry {
            step: draft.index,
            reflection: draft.reflection.clone(),
            action: draft.shown.clone(),
            result: result_text(&result),
            url: draft.url.clone(),
        });
        self.emit(Event::Step(draft.into_record(result)));
    }

    fn emit(&self, event: Event) {
        self.road.events().send(event);
    }
}

/// Calls the model, turning its progress into events: streamed text, the
/// reflection as it is written, retries. A free function rather than a
/// method so the agent is not borrowed across the call, which would make
/// a spawned run require every part of the agent to be `Sync`.
async fn call_model(
    llm: &LlmClient,
    request: &ChatRequest,
    events: &EventSink,
    stop: &StopSignal,
) -> Result<ChatResponse, LlmError> {
    let events = events.clone();
    let mut preview = preview::ReflectionPreview::default();
    let mut on_event = move |event: LlmEvent| {
        let event = match event {
            LlmEvent::ContentDelta { text } => Event::Text { content: text },
            LlmEvent::ToolCallDelta {
                index: 0,
                arguments,
                ..
            } => match preview.push(&arguments) {
                Some(content) => Event::Text { content },
                None => return,
            },
            LlmEvent::Retrying {
                retry,
                max_retries,
                wait,
                reason,
            } => {
                // The retried answer streams from the start again.
                preview.reset();
                Event::Error {
                        error: format!(
                            "the model call failed ({reason}); retry {retry} of {max_retries} in {:.1}s",
                            wait.as_secs_f64()
                        ),
                        fatal: false,
                    }
            }
            LlmEvent::FallbackToNonStreaming { reason } => {
                preview.reset();
                Event::Error {
                    error: format!("streaming did not work ({reason}); asking again without it"),
                    fatal: false,
                }
            }
            _ => return,
        };
        events.send(event);
    };
    llm.complete_observed(request, &mut on_event, stop).await
}

/// The request's messages as a person reads them: each headed by its
/// role, in the order sent. Tool calls replayed as history are shown as
/// JSON so nothing the model saw is left out.
fn prompt_text(request: &ChatRequest) -> String {
    let mut text = String::new();
    for message in &request.messages {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str("## ");
        text.push_str(message.role.as_str());
        if let Some(id) = &message.tool_call_id {
            text.push_str(&format!(" (answers {id})"));
        }
        text.push('\n');
        text.push_str(&message.content);
        for image in &message.images {
            text.push_str(&format!(
                "\n[picture attached, counted as {} tokens]",
                image.tokens
            ));
        }
        for call in &message.tool_calls {
            text.push_str(&format!("\n[tool call {}: {}]", call.name, call.arguments));
        }
    }
    text
}

/// What the model answered, as quoted in the error that ends a run.
fn answer_quote(response: &ChatResponse) -> String {
    let mut quote = String::new();
    for call in &response.tool_calls {
        quote.push_str(&format!("{} {}", call.name, call.arguments));
    }
    if !response.content.trim().is_empty() {
        if !quote.is_empty() {
            quote.push_str(" | text: ");
        }
        quote.push_str(response.content.trim());
    }
    if quote.is_empty() {
        quote.push_str("(an empty answer)");
    }
    if let Some(reason) = &response.finish_reason {
        quote.push_str(&format!(" [finish_reason: {reason}]"));
    }
    quote
}

/// The message for an answer cut at the token bound.
fn cut_off_message(bound: Option<u32>) -> String {
    let bound = bound.map_or("the server's".to_string(), |b| format!("the {b}-token"));
    format!(
        "your answer was cut off at {bound} limit (llm.max_output_tokens), so nothing was done; keep memory and goals short and send arguments shaped like {}",
        normalize::EXPECTED_SHAPE
    )
}

/// Whether two listings show the same element: tag, text and the
/// attributes that name it (its value or checked state may have changed
/// by the action before; that does not make it another element).
fn same_element(a: &crate::dom::InteractiveElement, b: &crate::dom::InteractiveElement) -> bool {
    const NAMING: [&str; 8] = [
        "id",
        "name",
        "type",
        "href",
        "placeholder",
        "aria-label",
        "role",
        "label",
    ];
    a.tag == b.tag
        && a.text == b.text
        && NAMING
            .iter()
            .all(|key| a.attribute(key) == b.attribute(key))
}

/// The result as the model reads it in the history.
fn result_text(result: &ActionResult) -> String {
    match result {
        ActionResult::Success { data: None } => "ok".to_string(),
        ActionResult::Success { data: Some(data) } => format!("ok: {}", compact(data)),
        ActionResult::Failure { reason, message } => format!("failed ({reason}): {message}"),
    }
}

fn compact(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The name and parameters of a proposed `{"name": {params}}`.
fn split_action(proposed: &Value) -> (String, Value) {
    match proposed.as_object().and_then(|o| o.iter().next()) {
        Some((name, params)) => (name.clone(), params.clone()),
        None => (String::new(), Value::Null),
    }
}

/// `name {params}` for a proposed action that did not validate.
fn action_text(proposed: &Value) -> String {
    match proposed.as_object().and_then(|o| o.iter().next()) {
        Some((name, params)) => format!("{name} {params}"),
        None => proposed.to_string(),
    }
}

/// The failed summary at the step limit: what was reached, from the model's
/// own last notes.
fn limit_summary(max_steps: usize, state: &RunState) -> String {
    let mut text = format!("The step limit of {max_steps} was reached before the task was done.");
    let last = &state.last_reflection;
    if !last.memory.trim().is_empty() {
        text.push_str(&format!(
            " Progress noted by the model: {}",
            last.memory.trim()
        ));
    }
    if !last.next_goal.trim().is_empty() {
        text.push_str(&format!(" It was working on: {}", last.next_goal.trim()));
    }
    if let Some(entry) = state.history.last() {
        text.push_str(&format!(
            " Last action: {} → {}",
            entry.action,
            prompt::clip(&entry.result, 200)
        ));
    }
    text
}

fn ms_since(started: Instant) -> u64 {
    started.elapsed().as_millis() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_prompt_heads_each_message_with_its_role() {
        let request = ChatRequest::new(vec![
            ChatMessage::system("You drive a browser."),
            ChatMessage::user("Task: sign in\n[1]<button>Go</button>"),
        ]);
        assert_eq!(
            prompt_text(&request),
            "## system\nYou drive a browser.\n\n## user\nTask: sign in\n[1]<button>Go</button>"
        );
    }

    #[test]
    fn a_step_records_prompt_and_answer_with_secrets_masked() {
        let mut secrets = Secrets::new();
        secrets.insert("password", "hunter2");
        let mut draft = StepDraft::new(1);
        draft.prompt = "## user\nthe field shows hunter2".into();
        draft.raw_response = r#"{"arguments":"{\"text\":\"hunter2\"}"}"#.into();
        let event = secrets.masked(Event::Step(draft.into_record(ActionResult::ok())));
        let Event::Step(record) = event else {
            panic!("not a step: {event:?}");
        };
        assert_eq!(
            record.prompt,
            "## user\nthe field shows <secret>password</secret>"
        );
        assert!(
            !record.raw_response.contains("hunter2"),
            "{}",
            record.raw_response
        );
        assert!(record.raw_response.contains("<secret>password</secret>"));
    }
}
