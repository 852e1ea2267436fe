//! Running an agent or a recipe in a session, generic over who approves
//! and how a run stops: the workbench and the headless commands differ
//! only in the [`Approver`] and the stop signal they hand in.

use std::sync::{Arc, RwLock};

use serde_json::{json, Value};

use crate::actions::Catalog;
use crate::agent::{Agent, AgentConfig};
use crate::environment::{Approver, BoxFuture, Environment, Extractor, LiveMode, Policy, Road};
use crate::events::{EndReason, Event, EventSink, RunSettings, TokenUsage};
use crate::llm::{LlmClient, StopSignal};
use crate::script::host::{HostError, SubAgent};
use crate::script::{CancelFlag, RecipeHost, ScriptError, Scripts};
use crate::sitemap::SitemapSet;

/// What an agent run is built from; cheap to clone, so a recipe's
/// sub-goals get the same model, catalog, sitemaps and secrets as a run.
#[derive(Clone)]
pub struct AgentSetup {
    /// The model.
    pub llm: Arc<LlmClient>,
    /// The scripts whose custom actions join the catalog (read at the
    /// start of each run, so edits apply).
    pub scripts: Scripts,
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
    /// model, and the events.
    pub fn road(&self, approver: Box<dyn Approver>) -> Road {
        Road::new(
            self.catalog(),
            approver,
            self.approval.clone(),
            self.events.clone(),
        )
        .with_policy(self.policy)
        .with_extractor(self.extractor.clone())
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
    }
}

/// Runs the recipe `name` on `environment`: `run_started` first, each step
/// along the setup's road (`approver` asked when the live mode says so),
/// custom actions and `agent("…")` (when `sub_agent` is given) included,
/// and a `done` event last. `label` is what the run is called in the
/// trace.
pub async fn run_recipe<E: Environment>(
    setup: &AgentSetup,
    mut environment: E,
    name: &str,
    label: String,
    approver: Box<dyn Approver>,
    sub_agent: Option<LlmSubAgent>,
    cancel: &CancelFlag,
) -> RecipeOutcome {
    let url = environment.current_url().await.unwrap_or_default();
    let events = setup.events.clone();
    let mut host = RecipeHost::new(environment, setup.road(approver));
    let model = match &sub_agent {
        Some(sub) => format!(
            "none (recipe; {} for agent sub-goals)",
            sub.setup.llm.config().model
        ),
        None => "none (recipe)".to_string(),
    };
    if let Some(sub_agent) = sub_agent {
        host = host.with_sub_agent(Box::new(sub_agent));
    }
    events.send(Event::RunStarted {
        task: label,
        url,
        model,
        max_steps: 0,
    });
    let returned = setup
        .scripts
        .run_recipe(Some(name), &mut host, cancel)
        .await;
    let outcome = recipe_outcome(name, returned, host.stopped(), host.steps());
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
        usage: TokenUsage::default(),
    });
    outcome
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
