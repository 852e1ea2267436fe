//! How a recipe's step runs: the approval gate and the road for each
//! action, the record of it, the location check of a recorded step, and
//! finding a step's element by its locators (tried again for a while).
//! A step that no longer runs as recorded goes on to `heal`.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::call::{result_json, targeted, with_matched, HostError};
use super::heal::Failed;
use super::recipe::RecipeHost;
use crate::actions::{Action, ActionResult, FailureReason};
use crate::dom::{LocateFailure, LocateProblem, Location, Locator, PageState};
use crate::environment::{Cleared, Environment, Passage};
use crate::events::{Event, PersonDecision, StepRecord};
use crate::script::export::page_matches;

/// How long a step's locators are tried again before the step fails
/// (elements appear late after a navigation or a script renders them).
const LOCATE_WAIT: Duration = Duration::from_secs(3);
/// How long a location check waits for the page to get there.
const PAGE_WAIT: Duration = Duration::from_secs(3);

impl<E: Environment> RecipeHost<E> {
    /// The goal a step is shown and approved with: the caller's request,
    /// or the recorded step's goal when the recipe names one.
    fn goal(&self, action: &Action) -> String {
        match (&self.caller, &self.current) {
            (Some(caller), _) => format!("{caller} asks: {action}"),
            (None, Some(step)) if !step.goal.is_empty() => {
                format!("recipe step {}: {}", step.number, step.goal)
            }
            (None, _) => format!("recipe step: {action}"),
        }
    }

    /// The goal a step's record carries: the recorded step's own words
    /// when the recipe names them, else what [`Self::goal`] says.
    fn recorded_goal(&self, action: &Action) -> String {
        match (&self.caller, &self.current) {
            (None, Some(step)) if !step.goal.is_empty() => step.goal.clone(),
            _ => self.goal(action),
        }
    }

    /// The policy and the approval gate for a custom action a script runs
    /// itself; the action to run or why it must not.
    pub(super) async fn approve(&mut self, action: Action) -> Result<Cleared, ActionResult> {
        self.emit(Event::ToolCall {
            name: action.name().to_string(),
            parameters: action.params(),
        });
        let page = match self.page().await {
            Ok(page) => page,
            Err(error) => return Err(ActionResult::unknown(error.to_string())),
        };
        let goal = self.goal(&action);
        match self
            .road
            .clear(&mut self.environment, self.steps, action, &page, &goal)
            .await
        {
            Ok(cleared) => Ok(cleared),
            Err(Passage::Stopped(_)) => {
                self.stopped = true;
                Err(ActionResult::denied("the person stopped the recipe"))
            }
            Err(passage) => Err(passage.result().clone()),
        }
    }

    /// One step along the road; the action as it ran (or as asked, when
    /// refused) and its result.
    async fn travel(&mut self, action: Action) -> ActionResult {
        let page = match self.page().await {
            Ok(page) => page,
            // An action that names no listed element (navigate, a
            // selector, keys) needs no listing: a page caught between two
            // documents need not stop it.
            Err(error)
                if !matches!(action.target(), Some(crate::actions::Target::Index { .. })) =>
            {
                tracing::debug!(%error, "no listing before a step that needs none");
                let url = self.environment.current_url().await.unwrap_or_default();
                PageState::stand_in(url)
            }
            Err(error) => return ActionResult::unknown(error.to_string()),
        };
        let goal = self.goal(&action);
        let passage = self
            .road
            .travel(&mut self.environment, self.steps, action, &page, &goal)
            .await;
        // The page may have changed: observe afresh next time.
        self.last = None;
        match passage {
            Passage::Ran(_, result) | Passage::Refused(result) => result,
            Passage::Stopped(_) => {
                self.stopped = true;
                ActionResult::denied("the person stopped the recipe")
            }
        }
    }

    /// Runs one action as the recipe's next step, recorded.
    pub(super) async fn act(&mut self, action: Action) -> Result<ActionResult, HostError> {
        self.act_found(action, None).await
    }

    /// [`Self::act`] on an element `location` found, which the record
    /// notes (which locator matched).
    async fn act_found(
        &mut self,
        action: Action,
        location: Option<&Location>,
    ) -> Result<ActionResult, HostError> {
        self.steps += 1;
        let started = Instant::now();
        // Boxed: the road's future (the environment's action under it) is
        // large, and every kind of host call reaches it.
        let result = Box::pin(self.travel(action.clone())).await;
        let result = match location {
            Some(location) => with_matched(result, location),
            None => result,
        };
        self.record(
            self.steps,
            &action,
            &result,
            started.elapsed().as_millis() as u64,
        );
        if self.stopped {
            return Err(HostError::Stopped);
        }
        Ok(result)
    }

    pub(super) fn record(
        &mut self,
        index: usize,
        action: &Action,
        result: &ActionResult,
        took_ms: u64,
    ) {
        // The wait for the person's approval is reported apart from the
        // action's own time, and apart from the time of the custom
        // actions it is a step of.
        let wait = self.road.take_wait();
        for open in &mut self.open_actions {
            open.inner_wait += wait;
        }
        let wait_ms = wait.as_millis() as u64;
        let person = self.road.take_decision();
        let act_ms = took_ms.saturating_sub(wait_ms);
        self.record_step(index, action, result, (act_ms, wait_ms), person);
    }

    /// Emits a step's record: `(act_ms, wait_ms)` its own time and the
    /// person's, `person` what they decided at its approval. A step taken
    /// inside a custom action names that action's step.
    pub(super) fn record_step(
        &mut self,
        index: usize,
        action: &Action,
        result: &ActionResult,
        (act_ms, wait_ms): (u64, u64),
        person: Option<PersonDecision>,
    ) {
        let within = self.open_actions.last().map(|open| open.index);
        let goal = self.recorded_goal(action);
        let record = StepRecord {
            within,
            person,
            ..StepRecord::taken(
                index,
                action.to_json(),
                result.clone(),
                goal,
                (act_ms, wait_ms),
            )
        };
        self.emit(Event::Step(record));
    }

    /// Waits (a little) for the page to be the one `pattern` names; the
    /// URL it is on otherwise.
    pub(super) async fn wait_for_page(&mut self, pattern: &str) -> Result<(), String> {
        let deadline = Instant::now() + PAGE_WAIT;
        loop {
            let here = self.environment.current_url().await.unwrap_or_default();
            if page_matches(&here, pattern) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(here);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The element `locators` name, tried again for a while when none is
    /// named yet or the names disagree (the page may still be rendering).
    async fn locate(&mut self, locators: &[Locator]) -> Result<Location, LocateFailure> {
        let deadline = Instant::now() + LOCATE_WAIT;
        loop {
            match self.environment.locate(locators).await {
                Ok(location) => return Ok(location),
                Err(failure)
                    if failure.problem != LocateProblem::Unavailable
                        && Instant::now() < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(150)).await;
                }
                Err(failure) => return Err(failure),
            }
        }
    }

    /// A failed location check that no step acting on an element took up
    /// (healing hands the agent a step with its element): the error it is.
    pub(super) fn unhealed_location(&mut self) -> Result<(), HostError> {
        let Some(step) = self.current.as_mut() else {
            return Ok(());
        };
        match step.location_failure.take() {
            None => Ok(()),
            Some(failure) => {
                let place = if step.line > 0 {
                    format!(" (line {})", step.line)
                } else {
                    String::new()
                };
                Err(HostError::Step(format!(
                    "step {}{place}, {:?}: {failure}",
                    step.number, step.goal
                )))
            }
        }
    }

    /// The step a call belongs to: the one `step(…)` began, else the next.
    fn step_number(&self) -> usize {
        self.current
            .as_ref()
            .map(|s| s.number)
            .unwrap_or(self.steps + 1)
    }

    /// `click(["…"])` and its kin: find the element, run the action on it,
    /// heal when either no longer works.
    pub(super) async fn act_on(
        &mut self,
        name: String,
        params: Value,
        locators: Vec<Locator>,
        line: usize,
    ) -> Result<Value, HostError> {
        let step = Failed {
            number: self.step_number(),
            line,
            name: &name,
            params: &params,
            locators: &locators,
        };
        let pending = self
            .current
            .as_mut()
            .and_then(|current| current.location_failure.take());
        if let Some(failure) = pending {
            let why = "the page was not the one the step was recorded on".to_string();
            return Box::pin(self.heal(step, failure, why, true)).await;
        }
        let location = match self.locate(&locators).await {
            Ok(location) => location,
            Err(failure) => {
                if self.healer.is_none() || failure.problem == LocateProblem::Unavailable {
                    return Err(HostError::Step(format!(
                        "step {}{}: {name}: {}",
                        step.number,
                        step.place(),
                        failure.describe()
                    )));
                }
                let why = match failure.problem {
                    LocateProblem::Ambiguous => {
                        "the recorded locators now name different elements (ambiguous)"
                    }
                    _ => "no recorded locator names an element on the page any more (not found)",
                };
                let failure = failure.describe();
                return Box::pin(self.heal(step, failure, why.to_string(), false)).await;
            }
        };
        let action = targeted(&name, &params, &location)?;
        let result = self.act_found(action, Some(&location)).await?;
        let failed = match &result {
            ActionResult::Failure { reason, message }
                if matches!(
                    reason,
                    FailureReason::NotFound
                        | FailureReason::NotVisible
                        | FailureReason::NotInteractive
                ) =>
            {
                Some((reason.as_str(), message.clone()))
            }
            _ => None,
        };
        match failed {
            Some((reason, message)) if self.healer.is_some() => {
                let failure = format!(
                    "{name} on {} (found by {}) failed: {reason}: {message}",
                    location.element, location.matched
                );
                let why = format!("the element was found but the action failed ({reason})");
                Box::pin(self.heal(step, failure, why, false)).await
            }
            _ => Ok(result_json(&result)),
        }
    }
}
