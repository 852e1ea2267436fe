//! Running an agent or a recipe in a session, generic over who approves
//! and how a run stops: the workbench and the headless commands differ
//! only in the [`Approver`] and the stop signal they hand in.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use serde_json::{json, Map, Value};

use crate::actions::Catalog;
use crate::agent::{Agent, AgentConfig};
use crate::environment::{Approver, BoxFuture, Environment, Extractor, LiveMode, Policy, Road};
use crate::events::{EndReason, Event, EventSink, RunSettings, TokenUsage};
use crate::llm::{LlmClient, StopSignal};
use crate::script::host::{HostError, SubAgent};
use crate::script::{
    CancelFlag, HealOutcome, HealRequest, HealedAction, HealedStep, Healer, RecipeHost,
    ScriptError, Scripts,
};
use crate::sitemap::SitemapSet;

/// Makes a fresh approver for each part of a run (the replay, a healed
/// step, the agent); shared, so each part can make its own.
pub type ApproverFactory = Arc<dyn Fn() -> Box<dyn Approver> + Send + Sync>;

/// What an agent run is built from; cheap to clone, so a recipe's
/// sub-goals get the same model, catalog, sitemaps and secrets as a run.
#[derive(Clone)]
pub struct AgentSetup {
    /// The model.
    pub llm: Arc<LlmClient>,
    /// The scripts whose custom actions join the catalog (read at the
    /// start of each run, so edits apply).
    pub scripts: Scripts,
    /// Cancels the custom actions and recipes of the run.
    pub cancel: CancelFlag,
    /// The sitemaps, as a watcher keeps them.
    pub sitemaps: Arc<RwLock<SitemapSet>>,
    /// Step limit and secrets.
    pub config: AgentConfig,
    /// When a person is asked (it may change during a run in the
    /// workbench).
    pub approval: LiveMode,
    /// What is refused whoever asks.
    pub policy: Policy,
    /// The model's side of `extract`, when there is a model.
    pub extractor: Option<Arc<dyn Extractor>>,
    /// Answers in a row without a usable action after which a run ends.
    pub max_invalid_answers: usize,
    /// Actions one answer may list.
    pub max_actions: usize,
    /// Whether and how the model is shown the page.
    pub vision: crate::agent::VisionSettings,
    /// Model calls the agent may make to heal one recipe step.
    pub heal_budget: usize,
    /// Where events go.
    pub events: EventSink,
    /// What a run's trace records of how the session was set up (its
    /// profile and state file), for a resume.
    pub settings: RunSettings,
}

impl AgentSetup {
    /// The catalog now. Scripts that no longer fit it (a clash with a
    /// built-in) are reported and left out.
    pub fn catalog(&self) -> Catalog {
        match self.scripts.catalog() {
            Ok(catalog) => catalog,
            Err(error) => {
                self.events.send(Event::Error {
                    error: format!("scripts: {error}; running with the built-in actions only"),
                    fatal: false,
                });
                Catalog::builtin()
            }
        }
    }

    /// The road an action of this setup takes: the catalog now, the
    /// policy, `approver` asked when the live mode says so, `extract`'s
    /// model, the custom actions' handlers (each of their steps along the
    /// same road), and the events.
    pub fn road(&self, approver: Box<dyn Approver>) -> Road {
        Road::new(
            self.catalog(),
            approver,
            self.approval.clone(),
            self.events.clone(),
        )
        .with_policy(self.policy.clone())
        .with_extractor(self.extractor.clone())
        .with_scripts(self.scripts.clone(), self.cancel.clone())
    }

    /// An agent on `environment`, asking `approver`, stopped by `stop`.
    pub fn agent<E: Environment>(
        &self,
        environment: E,
        approver: Box<dyn Approver>,
        stop: StopSignal,
    ) -> Agent<E> {
        Agent::new(Arc::clone(&self.llm), environment, self.road(approver))
            .with_sitemaps(Arc::clone(&self.sitemaps))
            .with_stop(stop)
            .with_config(self.config.clone())
            .with_max_invalid_answers(self.max_invalid_answers)
            .with_max_actions(self.max_actions)
            .with_vision(self.vision)
            .with_settings(self.settings.clone())
    }
}

/// `agent("…")` in a recipe: the LLM agent works on the recipe's own
/// environment, its approvals asked of whoever the caller's factory
/// gives (the workbench's modal, or the headless rules).
pub struct LlmSubAgent {
    /// What the agent is built from.
    pub setup: AgentSetup,
    /// A fresh approver for each sub-goal.
    pub approver: Box<dyn FnMut() -> Box<dyn Approver> + Send>,
    /// Stops the sub-goal with the recipe.
    pub stop: StopSignal,
}

impl<E: Environment> SubAgent<E> for LlmSubAgent {
    fn run<'a>(
        &'a mut self,
        goal: &'a str,
        environment: &'a mut E,
    ) -> BoxFuture<'a, Result<Value, HostError>> {
        Box::pin(async move {
            let approver = (self.approver)();
            let mut agent = self.setup.agent(environment, approver, self.stop.clone());
            let outcome = agent
                .run(goal)
                .await
                .map_err(|e| HostError::SubGoal(e.to_string()))?;
            Ok(json!({
                "success": outcome.success,
                "text": outcome.text,
                "steps": outcome.steps,
            }))
        })
    }
}

/// Heals a recipe's failed step with the LLM agent: the step's sub-goal
/// runs on the recipe's own environment, through the same road (approval
/// gate, allowed domains, secrets), within `budget` model calls.
pub struct LlmHealer {
    /// What the agent is built from.
    pub setup: AgentSetup,
    /// A fresh approver for each healed step.
    pub approver: ApproverFactory,
    /// Stops the healing with the recipe.
    pub stop: StopSignal,
    /// Model calls one step may take (`agent.heal_budget`).
    pub budget: usize,
}

impl<E: Environment> Healer<E> for LlmHealer {
    fn heal<'a>(
        &'a mut self,
        request: &'a HealRequest,
        environment: &'a mut E,
    ) -> BoxFuture<'a, HealOutcome> {
        Box::pin(async move {
            let mut setup = self.setup.clone();
            let (events, recording) = setup.events.recording();
            setup.events = events;
            // One model call per step of the sub-run.
            setup.config.max_steps = self.budget.max(1);
            let approver = (self.approver)();
            let mut agent = setup.agent(environment, approver, self.stop.clone());
            let ran = agent.run(&request.sub_goal).await;
            drop(agent);
            let recorded = recording.take();
            let (model_calls, actions) = calls_and_actions(&recorded);
            match ran {
                Ok(outcome) => HealOutcome {
                    success: outcome.success,
                    text: outcome.text,
                    model_calls,
                    usage: outcome.usage,
                    actions,
                },
                Err(error) => HealOutcome {
                    success: false,
                    text: error.to_string(),
                    model_calls,
                    usage: TokenUsage::default(),
                    actions,
                },
            }
        })
    }
}

/// The model calls a run's events show (one per step asked), and the page
/// actions it took successfully, with their targets' locators.
pub fn calls_and_actions(events: &[Event]) -> (usize, Vec<HealedAction>) {
    let mut asked = BTreeSet::new();
    let mut actions = Vec::new();
    let mut wrappers = crate::events::Wrappers::default();
    for event in events {
        let Event::Step(step) = event else { continue };
        // A custom action's steps are its actions; its call is not one
        // more.
        if wrappers.is_wrapper(step) {
            continue;
        }
        if step.prompt_chars > 0 {
            asked.insert(step.index);
        }
        let Some(name) = step.action.as_object().and_then(|o| o.keys().next()) else {
            continue;
        };
        if !step.result.is_ok() || !crate::script::export::replays(name) {
            continue;
        }
        let data = serde_json::to_value(&step.result).unwrap_or(Value::Null);
        actions.push(HealedAction {
            action: step.action.clone(),
            locator: data.get("data").and_then(|d| d.get("locator")).cloned(),
        });
    }
    (asked.len(), actions)
}

/// Where a healed recipe's repaired version goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewriteTarget {
    /// The file the recipe ran from.
    pub source: PathBuf,
    /// Where the repaired version is written: the same file (`--update`)
    /// or one next to it.
    pub write_to: PathBuf,
}

impl RewriteTarget {
    /// The repaired version next to `source` (`orders.rhai` →
    /// `orders.healed.rhai`; a file already named so is updated), or in
    /// place when `update`.
    pub fn for_file(source: &Path, update: bool) -> RewriteTarget {
        let write_to = if update {
            source.to_path_buf()
        } else {
            let stem = source
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("recipe");
            if stem.ends_with(".healed") {
                source.to_path_buf()
            } else {
                source.with_file_name(format!("{stem}.healed.rhai"))
            }
        };
        RewriteTarget {
            source: source.to_path_buf(),
            write_to,
        }
    }
}

/// Everything about one recipe run besides its steps.
pub struct RecipeRun {
    /// The recipe's name.
    pub name: String,
    /// What the run is called in the trace.
    pub label: String,
    /// Its parameters (checked against its declaration before it runs).
    pub params: Map<String, Value>,
    /// The origin its paths open on (`recipe run --url`); `None`: the
    /// page's.
    pub origin: Option<String>,
    /// Answers `agent("…")`.
    pub sub_agent: Option<LlmSubAgent>,
    /// Heals steps that no longer run as recorded.
    pub healer: Option<LlmHealer>,
    /// Where a healed recipe's repaired version is written.
    pub rewrite: Option<RewriteTarget>,
    /// The debugger it stops for (`recipe run --debug`).
    pub debuggee: Option<crate::script::Debuggee>,
}

impl RecipeRun {
    /// A run of `name` with defaults, no model, nothing rewritten.
    pub fn new(name: impl Into<String>, label: impl Into<String>) -> Self {
        RecipeRun {
            name: name.into(),
            label: label.into(),
            params: Map::new(),
            origin: None,
            sub_agent: None,
            healer: None,
            rewrite: None,
            debuggee: None,
        }
    }

    /// The model of `setup` answers the recipe's `agent("…")` sub-goals,
    /// each asking a fresh approver from `approvers`.
    pub fn with_sub_agent(
        mut self,
        setup: &AgentSetup,
        approvers: &ApproverFactory,
        stop: &StopSignal,
    ) -> Self {
        let approvers = Arc::clone(approvers);
        self.sub_agent = Some(LlmSubAgent {
            setup: setup.clone(),
            approver: Box::new(move || approvers()),
            stop: stop.clone(),
        });
        self
    }

    /// The model of `setup` heals a step that no longer runs as recorded,
    /// within `agent.heal_budget` model calls a step.
    pub fn with_healer(
        mut self,
        setup: &AgentSetup,
        approvers: &ApproverFactory,
        stop: &StopSignal,
    ) -> Self {
        self.healer = Some(LlmHealer {
            setup: setup.clone(),
            approver: Arc::clone(approvers),
            stop: stop.clone(),
            budget: setup.heal_budget,
        });
        self
    }
}

/// How a recipe run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RecipeOutcome {
    /// Whether it finished without an error.
    pub success: bool,
    /// Its return value as text, or why it failed.
    pub text: String,
    /// Why it ended.
    pub reason: EndReason,
    /// Steps it ran.
    pub steps: usize,
    /// Steps healed by the agent.
    pub healed: Vec<HealedStep>,
    /// Model calls made (healing and `agent("…")` sub-goals aside, a
    /// recipe makes none).
    pub model_calls: usize,
    /// Tokens those calls used.
    pub usage: TokenUsage,
    /// The repaired recipe, when one was written.
    pub rewritten: Option<PathBuf>,
}

/// The outcome of a recipe named `name` from what it returned; `stopped`
/// says whether the person stopped it at an approval.
pub fn recipe_outcome(
    name: &str,
    returned: Result<Value, ScriptError>,
    stopped: bool,
    steps: usize,
) -> RecipeOutcome {
    let (success, text, reason) = match returned {
        Ok(Value::Null) => (true, format!("recipe {name} finished"), EndReason::Done),
        Ok(Value::String(text)) => (true, text, EndReason::Done),
        Ok(other) => (true, other.to_string(), EndReason::Done),
        Err(ScriptError::Cancelled) => (false, "stopped by the person".into(), EndReason::Stopped),
        Err(error) if stopped => (false, error.to_string(), EndReason::Stopped),
        Err(error) => (false, error.to_string(), EndReason::Fatal),
    };
    RecipeOutcome {
        success,
        text,
        reason,
        steps,
        healed: Vec::new(),
        model_calls: 0,
        usage: TokenUsage::default(),
        rewritten: None,
    }
}

/// Runs the recipe `name` on `environment`: `run_started` first, each step
/// along the setup's road (`approver` asked when the live mode says so),
/// custom actions and `agent("…")` (when `sub_agent` is given) included,
/// and a `done` event last. `label` is what the run is called in the
/// trace.
pub async fn run_recipe<E: Environment>(
    setup: &AgentSetup,
    environment: E,
    name: &str,
    label: String,
    approver: Box<dyn Approver>,
    sub_agent: Option<LlmSubAgent>,
    cancel: &CancelFlag,
) -> RecipeOutcome {
    let mut run = RecipeRun::new(name, label);
    run.sub_agent = sub_agent;
    run_recipe_with(setup, environment, run, approver, cancel).await
}

/// Runs a recipe as `run` says: its parameters checked first, its paths on
/// `run.origin`, failed steps healed by `run.healer` (and the repaired
/// recipe written to `run.rewrite` once approved), `run_started` first and
/// `done` last.
pub async fn run_recipe_with<E: Environment>(
    setup: &AgentSetup,
    mut environment: E,
    run: RecipeRun,
    approver: Box<dyn Approver>,
    cancel: &CancelFlag,
) -> RecipeOutcome {
    let url = environment.current_url().await.unwrap_or_default();
    let events = setup.events.clone();
    let RecipeRun {
        name,
        label,
        params,
        origin,
        sub_agent,
        healer,
        rewrite,
        debuggee,
    } = run;
    let mut host = RecipeHost::new(environment, setup.road(approver)).with_origin(origin);
    let model = match (&sub_agent, &healer) {
        (Some(sub), _) => format!(
            "none (recipe; {} for agent sub-goals)",
            sub.setup.llm.config().model
        ),
        (None, Some(healer)) => format!(
            "none (recipe; {} heals failed steps)",
            healer.setup.llm.config().model
        ),
        (None, None) => "none (recipe)".to_string(),
    };
    if let Some(sub_agent) = sub_agent {
        host = host.with_sub_agent(Box::new(sub_agent));
    }
    if let Some(healer) = healer {
        host = host.with_healer(Box::new(healer));
    }
    events.send(Event::RunStarted {
        task: label,
        url,
        model,
        max_steps: 0,
    });
    let scripts = match debuggee {
        Some(debuggee) => setup.scripts.debugged(debuggee),
        None => setup.scripts.clone(),
    };
    let returned = scripts
        .run_recipe_with(Some(&name), &params, &mut host, cancel)
        .await;
    let mut outcome = recipe_outcome(&name, returned, host.stopped(), host.steps());
    let (model_calls, usage) = host.heal_cost();
    outcome.healed = host.healed().to_vec();
    outcome.model_calls = model_calls;
    outcome.usage = usage;
    if outcome.success && !outcome.healed.is_empty() {
        if let Some(target) = rewrite {
            outcome.rewritten = write_repaired(&mut host, &target, &outcome.healed, &events).await;
        }
    }
    if outcome.reason == EndReason::Fatal {
        events.send(Event::Error {
            error: outcome.text.clone(),
            fatal: true,
        });
    }
    events.send(Event::Done {
        success: outcome.success,
        text: outcome.text.clone(),
        reason: outcome.reason,
        steps: outcome.steps,
        usage: outcome.usage,
    });
    outcome
}

/// Writes the repaired recipe once the road approves it; its path when it
/// was written. Either way a `recipe_rewritten` event says what happened.
async fn write_repaired<E: Environment>(
    host: &mut RecipeHost<E>,
    target: &RewriteTarget,
    healed: &[HealedStep],
    events: &EventSink,
) -> Option<PathBuf> {
    let file = target.write_to.display().to_string();
    let report = |written: bool, note: Option<String>| {
        events.send(Event::RecipeRewritten {
            file: file.clone(),
            healed: healed.len(),
            written,
            note,
        })
    };
    let source = match std::fs::read_to_string(&target.source) {
        Ok(source) => source,
        Err(error) => {
            report(
                false,
                Some(format!(
                    "could not read {}: {error}",
                    target.source.display()
                )),
            );
            return None;
        }
    };
    let repaired = crate::script::rewrite_source(&source, healed);
    // What is written must load: a repaired recipe that does not compile
    // would only fail later, far from its cause.
    if let Err(error) = Scripts::default().load_source(&file, &repaired) {
        report(
            false,
            Some(format!(
                "the repaired recipe does not compile ({error}); please report this"
            )),
        );
        return None;
    }
    let changes: Vec<String> = healed
        .iter()
        .map(|h| format!("step {} (line {}): {}", h.step, h.line, h.change))
        .collect();
    if let Err(why) = host.approve_rewrite(&file, &changes.join("\n")).await {
        report(false, Some(why.to_string()));
        return None;
    }
    match write_replacing(&target.write_to, &repaired) {
        Ok(()) => {
            report(true, None);
            Some(target.write_to.clone())
        }
        Err(error) => {
            report(false, Some(format!("could not write it: {error}")));
            None
        }
    }
}

/// Writes `text` to `path` through a temporary file beside it, so a
/// failed write never leaves half a recipe where the last good one was.
pub(crate) fn write_replacing(path: &Path, text: &str) -> std::io::Result<()> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("recipe.rhai");
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recipe_outcome_reads_its_return_value_or_its_error() {
        let done = recipe_outcome("sign_in", Ok(Value::Null), false, 3);
        assert_eq!(done.text, "recipe sign_in finished");
        assert!(done.success && done.reason == EndReason::Done);
        let said = recipe_outcome("x", Ok(json!("refunded 1003")), false, 1);
        assert_eq!(said.text, "refunded 1003");
        let cancelled = recipe_outcome("x", Err(ScriptError::Cancelled), false, 0);
        assert_eq!(cancelled.reason, EndReason::Stopped);
        assert!(!cancelled.success);
    }
}
