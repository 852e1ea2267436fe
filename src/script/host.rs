//! What answers a script's host calls: [`TabHost`] drives a tab directly
//! (a custom action the agent or the command line already approved), and
//! [`RecipeHost`] runs a recipe's steps like agent steps, along the same
//! [`Road`] (policy, approval gate, `tool_call` / `tool_result` events),
//! each recorded as a `step`.

use std::future::Future;
use std::time::Instant;

use serde_json::{json, Value};

use crate::actions::{Action, ActionResult};
use crate::browser::Driver;
use crate::dom::PageState;
use crate::environment::{BoxFuture, Environment, Passage, Road};
use crate::events::{Event, StepRecord};

/// One request from a script to the host.
#[derive(Debug, Clone, PartialEq)]
pub enum HostCall {
    /// Observe the page; the answer is the page as a map (see
    /// [`page_json`]).
    Observe,
    /// Run a built-in action; the answer is its `{ok, …}` result.
    Act(Action),
    /// A script is about to run a custom action: approve it (an error
    /// answer is the refusal).
    Gate(Action),
    /// A custom action a script ran finished with this result.
    Record(Action, ActionResult),
    /// Ask the person; the answer is their text or null.
    AskUser(String),
    /// Hand a sub-goal to the LLM agent; the answer is its outcome.
    Agent(String),
    /// A log line from the script.
    Log(String),
}

/// Why a host call could not be answered; the script sees it as an error
/// at the calling line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HostError {
    /// The page could not be observed.
    #[error("observing the page failed: {0}")]
    Observe(String),
    /// The person stopped the recipe at an approval.
    #[error("the person stopped the recipe")]
    Stopped,
    /// A custom action was refused before it ran (by the policy or the
    /// person).
    #[error("{0}")]
    Refused(String),
    /// `agent("…")` without a model to ask.
    #[error("agent(...) needs a model: set OPENAI_API_KEY (or --base-url) for this run")]
    NoModel,
    /// `agent("…")` from a custom action's handler, which runs inside an
    /// action already approved as a whole.
    #[error("agent(...) only works in a recipe run with a model configured")]
    NoAgentHere,
    /// The sub-goal's run could not start.
    #[error("the sub-goal could not run: {0}")]
    SubGoal(String),
}

/// Answers host calls. An `Err` answer raises a script error with its
/// message at the calling line.
pub trait ScriptHost: Send {
    /// Answers one call.
    fn handle(&mut self, call: HostCall) -> impl Future<Output = Result<Value, HostError>> + Send;
}

/// The page as scripts see it: `url`, `title`, `text`, and `elements`, each
/// `{index, tag, text, attributes: {name: value}}`.
pub fn page_json(page: &PageState) -> Value {
    let elements: Vec<Value> = page
        .elements
        .iter()
        .map(|e| {
            let attributes: serde_json::Map<String, Value> = e
                .attributes
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            json!({
                "index": e.index.0,
                "tag": e.tag,
                "text": e.text,
                "attributes": attributes,
            })
        })
        .collect();
    json!({
        "url": page.url,
        "title": page.title,
        "text": page.page_text.text,
        "elements": elements,
    })
}

fn result_json(result: &ActionResult) -> Value {
    serde_json::to_value(result).unwrap_or(Value::Null)
}

/// Drives the tab through the browser's driver with no gate and no events:
/// for a custom action's handler, whose call as a whole was approved and
/// recorded by the caller. Going through the [`Driver`] gives the
/// handler's steps what every action gets in the browser: the
/// allowed-domains guard and its reports, the sitemaps for `goto_page`,
/// and a new browser when the old one died. (`extract` needs the model's
/// side of the house, which a handler does not reach: it gets the page
/// text, as `read_page` does.)
#[derive(Debug)]
pub struct TabHost<'a> {
    driver: &'a mut Driver,
}

impl<'a> TabHost<'a> {
    /// Drives the tab of `driver`.
    pub fn new(driver: &'a mut Driver) -> Self {
        TabHost { driver }
    }
}

impl ScriptHost for TabHost<'_> {
    async fn handle(&mut self, call: HostCall) -> Result<Value, HostError> {
        match call {
            HostCall::Observe => {
                let state = self
                    .driver
                    .observe()
                    .await
                    .map_err(|e| HostError::Observe(e.to_string()))?;
                Ok(page_json(&state))
            }
            HostCall::Act(action) => Ok(result_json(&self.driver.execute(&action).await)),
            HostCall::Gate(_) | HostCall::Record(..) | HostCall::Log(_) => Ok(Value::Null),
            HostCall::AskUser(_) => Ok(Value::Null),
            HostCall::Agent(_) => Err(HostError::NoAgentHere),
        }
    }
}

/// Runs a sub-goal with the LLM agent on the recipe's environment.
pub trait SubAgent<E>: Send {
    /// Runs `goal`; the answer is `{success, text, steps}`.
    fn run<'a>(
        &'a mut self,
        goal: &'a str,
        environment: &'a mut E,
    ) -> BoxFuture<'a, Result<Value, HostError>>;
}

/// Runs a recipe's steps like agent steps: each action travels the road
/// (policy, approval gate) and is reported as `tool_call`, `approval`,
/// `tool_result` and `step` events.
pub struct RecipeHost<E> {
    environment: E,
    road: Road,
    sub_agent: Option<Box<dyn SubAgent<E>>>,
    last: Option<PageState>,
    steps: usize,
    /// Step numbers of custom actions still running, so each is recorded
    /// under the number it was approved with.
    open_actions: Vec<usize>,
    stopped: bool,
    /// Who chose the steps, as the approval and the step's goal say it
    /// (`None`: a recipe).
    caller: Option<String>,
}

impl<E: Environment> RecipeHost<E> {
    /// Steps run on `environment` along `road`, which asks, refuses and
    /// reports.
    pub fn new(environment: E, road: Road) -> Self {
        RecipeHost {
            environment,
            road,
            sub_agent: None,
            last: None,
            steps: 0,
            open_actions: Vec::new(),
            stopped: false,
            caller: None,
        }
    }

    /// Says the steps come from `caller` (an MCP client) rather than a
    /// recipe, in the approval and the step's goal.
    pub fn called_by(mut self, caller: &str) -> Self {
        self.caller = Some(caller.to_string());
        self
    }

    /// The goal a step is shown and approved with.
    fn goal(&self, action: &Action) -> String {
        match &self.caller {
            Some(caller) => format!("{caller} asks: {action}"),
            None => format!("recipe step: {action}"),
        }
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

    /// Steps run so far.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// Whether the person stopped the recipe at an approval.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The environment, for the caller to clean up after the run.
    pub fn into_environment(self) -> E {
        self.environment
    }

    fn emit(&self, event: Event) {
        self.road.events().send(event);
    }

    async fn page(&mut self) -> Result<PageState, HostError> {
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

    /// The policy and the approval gate for a custom action a script runs
    /// itself; the action to run or why it must not.
    async fn approve(&mut self, action: Action) -> Result<Action, ActionResult> {
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
            .approve(&mut self.environment, self.steps, action, &page, &goal)
            .await
        {
            Ok(action) => Ok(action),
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

    fn record(&mut self, index: usize, action: &Action, result: &ActionResult, took_ms: u64) {
        // The wait for the person's approval is reported apart from the
        // action's own time.
        let wait_ms = self.road.take_wait().as_millis() as u64;
        let act_ms = took_ms.saturating_sub(wait_ms);
        // Built from JSON so fields the step record gains later take their
        // defaults.
        let record = serde_json::from_value::<StepRecord>(json!({
            "index": index,
            "reflection": {
                "evaluation_previous_goal": "",
                "memory": "",
                "next_goal": self.goal(action),
            },
            "action": action.to_json(),
            "result": result,
            "repairs": [],
            "timings": {"observe_ms": 0, "llm_ms": 0, "act_ms": act_ms, "wait_ms": wait_ms},
            "prompt_chars": 0,
        }));
        match record {
            Ok(record) => self.emit(Event::Step(record)),
            Err(error) => tracing::warn!(%error, "could not record a recipe step"),
        }
    }
}

impl<E: Environment> ScriptHost for RecipeHost<E> {
    async fn handle(&mut self, call: HostCall) -> Result<Value, HostError> {
        if self.stopped {
            return Err(HostError::Stopped);
        }
        match call {
            HostCall::Observe => {
                let page = self
                    .environment
                    .observe()
                    .await
                    .map_err(|e| HostError::Observe(e.message))?;
                let json = page_json(&page);
                self.last = Some(page);
                Ok(json)
            }
            HostCall::Act(action) => {
                self.steps += 1;
                let started = Instant::now();
                let result = self.travel(action.clone()).await;
                self.record(
                    self.steps,
                    &action,
                    &result,
                    started.elapsed().as_millis() as u64,
                );
                if self.stopped {
                    return Err(HostError::Stopped);
                }
                Ok(result_json(&result))
            }
            HostCall::Gate(action) => {
                self.steps += 1;
                match self.approve(action).await {
                    Ok(_) => {
                        self.open_actions.push(self.steps);
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
                let index = self.open_actions.pop().unwrap_or(self.steps);
                self.emit(Event::ToolResult {
                    name: action.name().to_string(),
                    result: result.clone(),
                });
                self.record(index, &action, &result, 0);
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
                self.emit(Event::Text {
                    content: format!("{text}\n"),
                });
                Ok(Value::Null)
            }
        }
    }
}
