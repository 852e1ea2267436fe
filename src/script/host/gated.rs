//! [`GatedHost`]: answers the host calls of a custom action's handler on
//! the road that carried the action, so each action the handler starts
//! passes the policy and the approval gate on its own, as if the model
//! had asked for it. The custom action's declared risk only describes it
//! for the person and the model; it approves none of its steps.

use std::time::Instant;

use serde_json::Value;

use super::call::{
    observe_for_script, require, result_json, targeted, with_matched, HostCall, HostError,
    ScriptHost,
};
use super::origin::{navigate_action, origin_of, path_part, resolve_url};
use crate::actions::{Action, ActionResult, Target};
use crate::dom::PageState;
use crate::environment::{Cleared, Environment, Passage, Road};
use crate::events::{Event, StepRecord};
use crate::script::export::page_matches;

/// Answers a custom action's host calls: every action goes through
/// [`Road::approve`] and then runs below the road (secrets filled, the
/// result masked, any layer around the environment seeing it), under the
/// step number and goal of the action that started it.
pub struct GatedHost<'a, E> {
    road: &'a mut Road,
    environment: &'a mut E,
    step: usize,
    goal: String,
    last: Option<PageState>,
    stopped: bool,
}

impl<'a, E: Environment> GatedHost<'a, E> {
    /// The handler of the custom action `name`, chosen at `step` for
    /// `goal`, acts on `environment` along `road`.
    pub fn new(
        road: &'a mut Road,
        environment: &'a mut E,
        step: usize,
        name: &str,
        goal: &str,
    ) -> Self {
        GatedHost {
            road,
            environment,
            step,
            goal: format!("{goal} (a step of the custom action `{name}`)"),
            last: None,
            stopped: false,
        }
    }

    /// Whether the person stopped the run at one of the handler's
    /// approvals.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The page the handler's next action is judged on: its last
    /// observation, else a fresh one (a URL alone when the page cannot be
    /// observed and the action names no listed element).
    async fn page(&mut self, action: &Action) -> Result<PageState, ActionResult> {
        if let Some(page) = &self.last {
            return Ok(page.clone());
        }
        match self.environment.observe().await {
            Ok(page) => {
                self.last = Some(page.clone());
                Ok(page)
            }
            Err(error) if matches!(action.target(), Some(Target::Index { .. })) => {
                Err(ActionResult::unknown(error.message))
            }
            Err(_) => {
                let url = self.environment.current_url().await.unwrap_or_default();
                Ok(PageState::stand_in(url))
            }
        }
    }

    /// The policy and the gate for `action`; the action to run, or the
    /// result of its refusal.
    async fn approve(&mut self, action: Action) -> Result<Cleared, ActionResult> {
        if self.stopped {
            return Err(ActionResult::denied("the person stopped the run"));
        }
        let page = self.page(&action).await?;
        match self
            .road
            .clear(self.environment, self.step, action, &page, &self.goal)
            .await
        {
            Ok(cleared) => Ok(cleared),
            Err(Passage::Stopped(result)) => {
                self.stopped = true;
                Err(result)
            }
            Err(passage) => Err(passage.result().clone()),
        }
    }

    /// One action of the handler: approved, then run, and reported as a
    /// step of the custom action (its own call, result and record, which
    /// name the custom action's step), so logs show what it did.
    async fn act(&mut self, action: Action) -> ActionResult {
        let events = self.road.events().clone();
        events.send(Event::ToolCall {
            name: action.name().to_string(),
            parameters: action.params(),
        });
        let started = Instant::now();
        let waited = self.road.waited();
        let (ran, result) = match self.approve(action.clone()).await {
            Ok(cleared) => {
                let result = self
                    .road
                    .run(self.environment, self.step, &cleared.action)
                    .await;
                (cleared.action, result)
            }
            Err(refused) => (action, refused),
        };
        // The page may have changed: observe afresh next time.
        self.last = None;
        events.send(Event::ToolResult {
            name: ran.name().to_string(),
            result: result.clone(),
        });
        // The person's time stays counted for the custom action too.
        let wait = self.road.waited().saturating_sub(waited);
        let act = started.elapsed().saturating_sub(wait);
        events.send(Event::Step(StepRecord {
            within: Some(self.step),
            person: self.road.take_decision(),
            ..StepRecord::taken(
                self.step,
                ran.to_json(),
                result.clone(),
                self.goal.clone(),
                (act.as_millis() as u64, wait.as_millis() as u64),
            )
        }));
        result
    }

    async fn navigate(&mut self, url: &str) -> Result<ActionResult, HostError> {
        let here = self.environment.current_url().await.unwrap_or_default();
        let url = resolve_url(url, origin_of(&here).as_deref())?;
        Ok(self.act(navigate_action(&url)?).await)
    }
}

impl<E: Environment> ScriptHost for GatedHost<'_, E> {
    async fn handle(&mut self, call: HostCall) -> Result<Value, HostError> {
        match call {
            HostCall::Observe => {
                let (json, page) = observe_for_script(self.environment).await?;
                self.last = Some(page);
                Ok(json)
            }
            HostCall::Listing => {
                let (_, page) = observe_for_script(self.environment).await?;
                let listing = Value::String(page.listing.clone());
                self.last = Some(page);
                Ok(listing)
            }
            HostCall::Act(action) => Ok(result_json(&self.act(action).await)),
            HostCall::ActOn {
                name,
                params,
                locators,
                ..
            } => {
                let location = self
                    .environment
                    .locate(&locators)
                    .await
                    .map_err(|failure| HostError::Step(format!("{name}: {failure}")))?;
                let action = targeted(&name, &params, &location)?;
                let result = self.act(action).await;
                Ok(result_json(&with_matched(result, &location)))
            }
            HostCall::Expect {
                expectation,
                locators,
                call,
            } => super::expect::check(&mut *self.environment, &expectation, &locators)
                .await
                .map(|()| Value::Null)
                .map_err(|why| HostError::Assertion(format!("{call}: {why}"))),
            HostCall::Navigate(url) => Ok(result_json(&self.navigate(&url).await?)),
            HostCall::StartAt(path) => {
                let here = self.environment.current_url().await.unwrap_or_default();
                if page_matches(&here, path_part(&path)) {
                    return Ok(Value::Null);
                }
                let result = self.navigate(&path).await?;
                require(result, "opening the start page")
            }
            HostCall::Step {
                number, page, goal, ..
            } => {
                if let Some(pattern) = page {
                    let here = self.environment.current_url().await.unwrap_or_default();
                    if !page_matches(&here, &pattern) {
                        return Err(HostError::Step(format!(
                            "step {number} ({goal}): expected to be on {pattern} (as recorded) but the page is {here}"
                        )));
                    }
                }
                Ok(Value::Null)
            }
            // Another custom action the handler calls: its own declared
            // risk is asked about here, and its steps come back as calls.
            // Its steps pass the gate as far as its approval reaches,
            // until its record comes.
            HostCall::Gate(action) => match self.approve(action).await {
                Ok(cleared) => {
                    self.road.open_custom(cleared.covers);
                    Ok(Value::Null)
                }
                Err(ActionResult::Failure { message, .. }) => Err(HostError::Refused(message)),
                Err(ActionResult::Success { .. }) => Err(HostError::Refused("refused".into())),
            },
            HostCall::Record(..) => {
                self.road.close_custom();
                Ok(Value::Null)
            }
            HostCall::Log(_) => Ok(Value::Null),
            HostCall::AskUser(question) => {
                let answer = self.road.ask_user(&question).await;
                Ok(answer.map_or(Value::Null, Value::String))
            }
            HostCall::Agent(_) => Err(HostError::NoAgentHere),
        }
    }
}
