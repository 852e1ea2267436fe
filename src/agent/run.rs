//! A run: the [`Agent`] and its settings, how a run is set up, and the
//! loop that takes steps until the run ends. One step is in `step`.

use std::sync::{Arc, RwLock};

use crate::environment::{ApprovalMode, Environment, Road};
use crate::events::{EarlierTask, EndReason, Event, Reflection, RunSettings, TokenUsage};
use crate::llm::{FunctionTool, LlmClient, StopSignal};
use crate::secrets::Secrets;
use crate::sitemap::SitemapSet;
use crate::vision::{default_image_width, Screenshot, VisionMode};

use super::conversation::Prior;
use super::defaults::{default_max_actions, default_max_invalid_answers, default_max_steps};
use super::prompt::{self, HistoryEntry};
use super::steering::Steering;
use super::tool::agent_tool_with;

/// Everything that can stop the agent from running at all.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The step limit is zero.
    #[error("the step limit must be at least 1")]
    NoSteps,
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
    pub(super) llm: Arc<LlmClient>,
    pub(super) sitemaps: Arc<RwLock<SitemapSet>>,
    pub(super) environment: E,
    pub(super) road: Road,
    pub(super) stop: StopSignal,
    pub(super) config: AgentConfig,
    pub(super) max_invalid_answers: usize,
    pub(super) max_actions: usize,
    pub(super) vision: VisionSettings,
    /// Whether this run sends pictures: decided at its start, turned off
    /// for good when the server refuses one.
    pub(super) seeing: bool,
    /// Pictures a `screenshot` action took, held for the next step.
    pub(super) held: Vec<Screenshot>,
    /// The person's messages and retries while the run goes.
    pub(super) steering: Option<Steering>,
    /// What the trace records of how the session was set up (profile,
    /// state file); the approval mode is read from the road.
    pub(super) settings: RunSettings,
}

/// What the loop keeps between steps.
pub(super) struct RunState {
    pub(super) history: Vec<HistoryEntry>,
    pub(super) usage: TokenUsage,
    pub(super) last_reflection: Reflection,
    /// Answers in a row that gave no usable action.
    pub(super) invalid_in_row: usize,
    /// The tasks this run follows up on.
    pub(super) earlier: Vec<EarlierTask>,
    /// The memory the last of them left.
    pub(super) memory: String,
    /// The person's messages so far, with the step that carried each.
    pub(super) messages: Vec<(usize, String)>,
    /// The last step recorded, when its last action failed: the one the
    /// person may ask for again.
    pub(super) last_failed: Option<usize>,
    /// The approval mode last written to the trace.
    pub(super) mode: ApprovalMode,
    /// Why the page was handed to a person who has since handed it back:
    /// the next step tells the model what the page is now.
    pub(super) handed_back: Option<String>,
}

impl RunState {
    /// An ending other than `done`, with the tokens used so far.
    pub(super) fn outcome(
        &self,
        success: bool,
        text: String,
        reason: EndReason,
        steps: usize,
    ) -> RunOutcome {
        RunOutcome {
            success,
            text,
            reason,
            steps,
            usage: self.usage,
        }
    }
}

/// How one step (or one phase of it) ended, for the loop.
pub(super) enum StepEnd {
    Continue,
    Finished(RunOutcome),
    /// The person asked the model again for this step.
    Retry(usize),
}

/// The fixed part of every request of a run.
pub(super) struct Fixed<'a> {
    pub(super) task: &'a str,
    pub(super) system: &'a str,
    pub(super) tool: &'a FunctionTool,
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
            secret_sites: self
                .config
                .secrets
                .bindings()
                .map(|(name, sites)| (name.to_string(), sites.to_vec()))
                .collect(),
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
        let system = prompt::system_prompt_with(&self.config.secrets, self.max_actions);
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
            handed_back: prior.handed_back,
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

    pub(super) fn emit(&self, event: Event) {
        self.road.events().send(event);
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
