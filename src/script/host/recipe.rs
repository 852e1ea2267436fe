//! [`RecipeHost`]: runs a recipe's steps like agent steps, along the same
//! [`Road`] (policy, approval gate, `tool_call` / `tool_result` events),
//! each recorded as a `step`. This file sets a run up and hands each host
//! call on; how a step runs is in `recipe_step`, how a failed one heals in
//! `heal`.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::call::{observe_for_script, require, result_json, HostCall, HostError, ScriptHost};
use super::healer::{HealedStep, Healer};
use super::origin::{navigate_action, origin_of, path_part, resolve_url};
use crate::actions::ActionResult;
use crate::dom::PageState;
use crate::environment::{BoxFuture, Environment, RewriteRefused, Road};
use crate::events::{Event, PersonDecision, TokenUsage};
use crate::script::export::page_matches;

/// Runs a sub-goal with the LLM agent on the recipe's environment.
pub trait SubAgent<E>: Send {
    /// Runs `goal`; the answer is `{success, text, steps}`.
    fn run<'a>(
        &'a mut self,
        goal: &'a str,
        environment: &'a mut E,
    ) -> BoxFuture<'a, Result<Value, HostError>>;
}

/// The recorded step a recipe is in.
#[derive(Debug, Clone, Default)]
pub(super) struct StepContext {
    /// The step's number in the recipe.
    pub(super) number: usize,
    /// The goal it was recorded with.
    pub(super) goal: String,
    /// The line of its `step(…)` call.
    pub(super) line: usize,
    /// The location check failed: why (healed with the step's action).
    pub(super) location_failure: Option<String>,
}

/// Runs a recipe's steps like agent steps: each action travels the road
/// (policy, approval gate) and is reported as `tool_call`, `approval`,
/// `tool_result` and `step` events. A step that no longer runs as
/// recorded goes to the [`Healer`] when there is one.
pub struct RecipeHost<E> {
    pub(super) environment: E,
    pub(super) road: Road,
    pub(super) sub_agent: Option<Box<dyn SubAgent<E>>>,
    pub(super) healer: Option<Box<dyn Healer<E>>>,
    pub(super) last: Option<PageState>,
    pub(super) steps: usize,
    /// Custom actions still running, innermost last, so each is recorded
    /// under the number it was approved with and its steps nest under it.
    pub(super) open_actions: Vec<OpenAction>,
    pub(super) stopped: bool,
    /// Who chose the steps, as the approval and the step's goal say it
    /// (`None`: a recipe).
    pub(super) caller: Option<String>,
    /// The origin paths open on.
    pub(super) origin: Option<String>,
    pub(super) current: Option<StepContext>,
    pub(super) healed: Vec<HealedStep>,
    pub(super) heal_calls: usize,
    pub(super) heal_usage: TokenUsage,
}

/// A custom action whose handler is running: its step, when its
/// approval let it start, what that approval cost and decided, and the
/// person's time its own steps waited (not the action's own time).
pub(super) struct OpenAction {
    pub(super) index: usize,
    pub(super) started: Instant,
    pub(super) wait: Duration,
    pub(super) decision: Option<PersonDecision>,
    pub(super) inner_wait: Duration,
}

impl<E: Environment> RecipeHost<E> {
    /// Steps run on `environment` along `road`, which asks, refuses and
    /// reports.
    pub fn new(environment: E, road: Road) -> Self {
        RecipeHost {
            environment,
            road,
            sub_agent: None,
            healer: None,
            last: None,
            steps: 0,
            open_actions: Vec::new(),
            stopped: false,
            origin: None,
            current: None,
            healed: Vec::new(),
            heal_calls: 0,
            heal_usage: TokenUsage::default(),
            caller: None,
        }
    }

    /// Says the steps come from `caller` (an MCP client) rather than a
    /// recipe, in the approval and the step's goal.
    pub fn called_by(mut self, caller: &str) -> Self {
        self.caller = Some(caller.to_string());
        self
    }

    /// Starts from `page` as the page last seen, so index targets refer to
    /// the listing its caller read, and numbers steps after `steps`.
    pub fn continuing(mut self, page: Option<PageState>, steps: usize) -> Self {
        self.last = page;
        self.steps = steps;
        self
    }

    /// Lets `agent("…")` hand sub-goals to this agent.
    pub fn with_sub_agent(mut self, sub_agent: Box<dyn SubAgent<E>>) -> Self {
        self.sub_agent = Some(sub_agent);
        self
    }

    /// Hands steps that no longer run as recorded to `healer`.
    pub fn with_healer(mut self, healer: Box<dyn Healer<E>>) -> Self {
        self.healer = Some(healer);
        self
    }

    /// Opens the recipe's paths on `origin` (`http://host:port`); without
    /// one, on the origin of the page the recipe finds when it first needs
    /// one.
    pub fn with_origin(mut self, origin: Option<String>) -> Self {
        self.origin = origin;
        self
    }

    /// Steps run so far.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// Whether the person stopped the recipe at an approval.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The steps healed so far.
    pub fn healed(&self) -> &[HealedStep] {
        &self.healed
    }

    /// Model calls and tokens healing has used so far.
    pub fn heal_cost(&self) -> (usize, TokenUsage) {
        (self.heal_calls, self.heal_usage)
    }

    /// Asks whoever approves whether the repaired recipe may be written
    /// (see [`Road::approve_rewrite`]).
    pub async fn approve_rewrite(
        &mut self,
        file: &str,
        changes: &str,
    ) -> Result<(), RewriteRefused> {
        self.road.approve_rewrite(file, changes).await
    }

    /// The environment, for the caller to clean up after the run.
    pub fn into_environment(self) -> E {
        self.environment
    }

    pub(super) fn emit(&self, event: Event) {
        self.road.events().send(event);
    }

    pub(super) async fn page(&mut self) -> Result<PageState, HostError> {
        if let Some(page) = &self.last {
            return Ok(page.clone());
        }
        let page = self
            .environment
            .observe()
            .await
            .map_err(|e| HostError::Observe(e.message))?;
        self.last = Some(page.clone());
        Ok(page)
    }

    /// The origin paths open on: the one given, else the current page's
    /// (kept from then on, so a detour to another site does not move it).
    pub(super) async fn origin(&mut self) -> Option<String> {
        if self.origin.is_none() {
            let here = self.environment.current_url().await.unwrap_or_default();
            self.origin = origin_of(&here);
        }
        self.origin.clone()
    }
}

impl<E: Environment> ScriptHost for RecipeHost<E> {
    async fn handle(&mut self, call: HostCall) -> Result<Value, HostError> {
        if self.stopped {
            // A custom action's end still closes it, so the road's count
            // of open handlers stays true.
            if let HostCall::Record(..) = call {
                if self.open_actions.pop().is_some() {
                    self.road.close_custom();
                }
            }
            return Err(HostError::Stopped);
        }
        match call {
            HostCall::Observe => {
                let (json, page) = observe_for_script(&mut self.environment).await?;
                self.last = Some(page);
                Ok(json)
            }
            HostCall::Listing => {
                let (_, page) = observe_for_script(&mut self.environment).await?;
                let listing = Value::String(page.listing.clone());
                self.last = Some(page);
                Ok(listing)
            }
            HostCall::Act(action) => {
                self.unhealed_location()?;
                Ok(result_json(&self.act(action).await?))
            }
            HostCall::ActOn {
                name,
                params,
                locators,
                line,
                // Boxed: a step's future (locate, act, heal with an agent run)
                // is large, and the script's driver holds one per call.
            } => Box::pin(self.act_on(name, params, locators, line)).await,
            HostCall::Expect {
                expectation,
                locators,
                call,
            } => {
                self.unhealed_location()?;
                super::expect::check(&mut self.environment, &expectation, &locators)
                    .await
                    .map(|()| Value::Null)
                    .map_err(|why| HostError::Assertion(format!("{call}: {why}")))
            }
            HostCall::Navigate(url) => {
                self.unhealed_location()?;
                let origin = self.origin().await;
                let url = resolve_url(&url, origin.as_deref())?;
                Ok(result_json(&self.act(navigate_action(&url)?).await?))
            }
            HostCall::StartAt(path) => {
                let here = self.environment.current_url().await.unwrap_or_default();
                let origin = self.origin().await;
                let on_origin = origin.is_some() && origin == origin_of(&here);
                if on_origin && page_matches(&here, path_part(&path)) {
                    return Ok(Value::Null);
                }
                let url = resolve_url(&path, origin.as_deref())?;
                let result = self.act(navigate_action(&url)?).await?;
                require(result, &format!("opening the start page {url}"))
            }
            HostCall::Step {
                number,
                goal,
                page,
                line,
            } => {
                self.unhealed_location()?;
                self.current = Some(StepContext {
                    number,
                    goal: goal.clone(),
                    line,
                    location_failure: None,
                });
                let Some(pattern) = page else {
                    return Ok(Value::Null);
                };
                if let Err(here) = self.wait_for_page(&pattern).await {
                    let failure =
                        format!("expected to be on {pattern} (as recorded) but the page is {here}");
                    if self.healer.is_none() {
                        let place = if line > 0 {
                            format!(" (line {line})")
                        } else {
                            String::new()
                        };
                        return Err(HostError::Step(format!(
                            "step {number}{place}, {goal:?}: {failure}"
                        )));
                    }
                    if let Some(step) = self.current.as_mut() {
                        step.location_failure = Some(failure);
                    }
                }
                Ok(Value::Null)
            }
            HostCall::Gate(action) => {
                self.steps += 1;
                match self.approve(action).await {
                    Ok(cleared) => {
                        // Its row comes first, its steps nest under it,
                        // and it is recorded (timed) after them.
                        self.open_actions.push(OpenAction {
                            index: self.steps,
                            started: Instant::now(),
                            wait: self.road.take_wait(),
                            decision: self.road.take_decision(),
                            inner_wait: Duration::ZERO,
                        });
                        self.road.open_custom(cleared.covers);
                        Ok(Value::Null)
                    }
                    Err(refused) => Err(HostError::Refused(match refused {
                        ActionResult::Failure { message, .. } => message,
                        ActionResult::Success { .. } => "refused".into(),
                    })),
                }
            }
            HostCall::Record(action, result) => {
                self.last = None;
                self.emit(Event::ToolResult {
                    name: action.name().to_string(),
                    result: result.clone(),
                });
                match self.open_actions.pop() {
                    Some(open) => {
                        self.road.close_custom();
                        let took = open.started.elapsed().saturating_sub(open.inner_wait);
                        self.record_step(
                            open.index,
                            &action,
                            &result,
                            (took.as_millis() as u64, open.wait.as_millis() as u64),
                            open.decision,
                        );
                    }
                    None => self.record(self.steps, &action, &result, 0),
                }
                Ok(Value::Null)
            }
            HostCall::AskUser(question) => {
                let answer = self.road.ask_user(&question).await;
                Ok(answer.map_or(Value::Null, Value::String))
            }
            HostCall::Agent(goal) => {
                let Some(sub_agent) = self.sub_agent.as_mut() else {
                    return Err(HostError::NoModel);
                };
                let outcome = sub_agent.run(&goal, &mut self.environment).await;
                self.last = None;
                outcome
            }
            HostCall::Log(text) => {
                self.emit(Event::ScriptLog { line: text });
                Ok(Value::Null)
            }
        }
    }
}
