//! What answers a script's host calls: [`TabHost`] drives a tab directly
//! (a custom action the agent or the command line already approved), and
//! [`RecipeHost`] runs a recipe's steps like agent steps (approval gate,
//! `tool_call` / `tool_result` / `step` events).

use std::future::Future;
use std::time::Instant;

use serde_json::{json, Value};
use tokio::sync::mpsc::UnboundedSender;

use crate::actions::{Action, ActionResult, Catalog};
use crate::agent::browser_env::BrowserEnvironment;
use crate::agent::{
    perform, ApprovalMode, Approver, BoxFuture, Environment, Gate, GateOutcome, Secrets,
};
use crate::dom::PageState;
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

/// Answers host calls. An `Err` answer raises a script error with that
/// message at the calling line.
pub trait ScriptHost: Send {
    /// Answers one call.
    fn handle(&mut self, call: HostCall) -> impl Future<Output = Result<Value, String>> + Send;
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

/// Drives the tab through its environment with no gate and no events: for
/// a custom action's handler, whose call as a whole was approved and
/// recorded by the caller. Going through [`BrowserEnvironment`] gives the
/// handler's steps what every action gets: the allowed-domains guard and
/// its reports, the sitemaps for `goto_page`, `extract`'s model, and a new
/// browser when the old one died.
#[derive(Debug)]
pub struct TabHost<'a> {
    environment: &'a mut BrowserEnvironment,
}

impl<'a> TabHost<'a> {
    /// Drives the tab of `environment`.
    pub fn new(environment: &'a mut BrowserEnvironment) -> Self {
        TabHost { environment }
    }
}

impl ScriptHost for TabHost<'_> {
    async fn handle(&mut self, call: HostCall) -> Result<Value, String> {
        match call {
            HostCall::Observe => {
                let state = self
                    .environment
                    .observe()
                    .await
                    .map_err(|e| format!("observing the page failed: {e}"))?;
                Ok(page_json(&state))
            }
            HostCall::Act(action) => Ok(result_json(&self.environment.execute(&action).await)),
            HostCall::Gate(_) | HostCall::Record(..) | HostCall::Log(_) => Ok(Value::Null),
            HostCall::AskUser(_) => Ok(Value::Null),
            HostCall::Agent(_) => {
                Err("agent(...) only works in a recipe run with a model configured".into())
            }
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
        events: UnboundedSender<Event>,
    ) -> BoxFuture<'a, Result<Value, String>>;
}

/// Runs a recipe's steps like agent steps: each action passes the approval
/// gate and is reported as `tool_call`, `approval`, `tool_result` and
/// `step` events.
pub struct RecipeHost<E> {
    environment: E,
    approver: Box<dyn Approver>,
    mode: ApprovalMode,
    catalog: Catalog,
    secrets: Secrets,
    events: UnboundedSender<Event>,
    sub_agent: Option<Box<dyn SubAgent<E>>>,
    last: Option<PageState>,
    steps: usize,
    /// Step numbers of custom actions still running, so each is recorded
    /// under the number it was approved with.
    open_actions: Vec<usize>,
    stopped: bool,
}

impl<E: Environment> RecipeHost<E> {
    /// Steps run on `environment`, asking `approver` when `mode` says so,
    /// and are reported on `events`.
    pub fn new(
        environment: E,
        approver: Box<dyn Approver>,
        mode: ApprovalMode,
        events: UnboundedSender<Event>,
    ) -> Self {
        RecipeHost {
            environment,
            approver,
            mode,
            catalog: Catalog::builtin(),
            secrets: Secrets::new(),
            events,
            sub_agent: None,
            last: None,
            steps: 0,
            open_actions: Vec::new(),
            stopped: false,
        }
    }

    /// Validates the person's edits with this catalog (custom actions
    /// included).
    pub fn with_catalog(mut self, catalog: Catalog) -> Self {
        self.catalog = catalog;
        self
    }

    /// Fills `<secret>NAME</secret>` in steps with these values and masks
    /// them in results and events.
    pub fn with_secrets(mut self, secrets: Secrets) -> Self {
        self.secrets = secrets;
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
        if self.events.send(self.secrets.masked(event)).is_err() {
            tracing::debug!("no one is listening to recipe events any more");
        }
    }

    async fn page(&mut self) -> Result<PageState, String> {
        if let Some(page) = &self.last {
            return Ok(page.clone());
        }
        let page = self
            .environment
            .observe()
            .await
            .map_err(|e| format!("observing the page failed: {}", e.message))?;
        self.last = Some(page.clone());
        Ok(page)
    }

    /// The approval gate for one step (the agent's own); returns the
    /// action to run or why it must not.
    async fn gate(&mut self, action: Action) -> Result<Action, ActionResult> {
        self.emit(Event::ToolCall {
            name: action.name().to_string(),
            parameters: action.params(),
        });
        let page = match self.page().await {
            Ok(page) => page,
            Err(message) => return Err(ActionResult::unknown(message)),
        };
        let emit = {
            let events = self.events.clone();
            let secrets = self.secrets.clone();
            move |event: Event| {
                if events.send(secrets.masked(event)).is_err() {
                    tracing::debug!("no one is listening to recipe events any more");
                }
            }
        };
        let goal = format!("recipe step: {action}");
        let mut gate = Gate {
            approver: self.approver.as_mut(),
            mode: self.mode,
            catalog: &self.catalog,
            emit: &emit,
        };
        match gate
            .pass(&mut self.environment, self.steps, action, &page, &goal)
            .await
        {
            GateOutcome::Run(action) => Ok(action),
            GateOutcome::Refused(result) => Err(result),
            GateOutcome::Stopped(_) => {
                self.stopped = true;
                Err(ActionResult::denied("the person stopped the recipe"))
            }
        }
    }

    fn record(&mut self, index: usize, action: &Action, result: &ActionResult, act_ms: u64) {
        self.emit(Event::ToolResult {
            name: action.name().to_string(),
            result: result.clone(),
        });
        // Built from JSON so fields the step record gains later take their
        // defaults.
        let record = serde_json::from_value::<StepRecord>(json!({
            "index": index,
            "reflection": {
                "evaluation_previous_goal": "",
                "memory": "",
                "next_goal": format!("recipe step: {action}"),
            },
            "action": action.to_json(),
            "result": result,
            "repairs": [],
            "timings": {"observe_ms": 0, "llm_ms": 0, "act_ms": act_ms},
            "prompt_chars": 0,
        }));
        match record {
            Ok(record) => self.emit(Event::Step(record)),
            Err(error) => tracing::warn!(%error, "could not record a recipe step"),
        }
    }
}

impl<E: Environment> ScriptHost for RecipeHost<E> {
    async fn handle(&mut self, call: HostCall) -> Result<Value, String> {
        if self.stopped {
            return Err("the person stopped the recipe".into());
        }
        match call {
            HostCall::Observe => {
                let page = self
                    .environment
                    .observe()
                    .await
                    .map_err(|e| format!("observing the page failed: {}", e.message))?;
                let json = page_json(&page);
                self.last = Some(page);
                Ok(json)
            }
            HostCall::Act(action) => {
                self.steps += 1;
                let started = Instant::now();
                let result = match self.gate(action.clone()).await {
                    Ok(approved) => {
                        self.emit(Event::ActionRequest {
                            correlation_id: format!("step-{}", self.steps),
                            action: approved.name().to_string(),
                            parameters: approved.params(),
                        });
                        let result = perform(
                            &mut self.environment,
                            &self.catalog,
                            &self.secrets,
                            &approved,
                        )
                        .await;
                        // The page may have changed: observe afresh next time.
                        self.last = None;
                        result
                    }
                    Err(refused) => refused,
                };
                self.record(
                    self.steps,
                    &action,
                    &result,
                    started.elapsed().as_millis() as u64,
                );
                if self.stopped {
                    return Err("the person stopped the recipe".into());
                }
                Ok(result_json(&result))
            }
            HostCall::Gate(action) => {
                self.steps += 1;
                match self.gate(action).await {
                    Ok(_) => {
                        self.open_actions.push(self.steps);
                        Ok(Value::Null)
                    }
                    Err(refused) => Err(match refused {
                        ActionResult::Failure { message, .. } => message,
                        ActionResult::Success { .. } => "refused".into(),
                    }),
                }
            }
            HostCall::Record(action, result) => {
                self.last = None;
                let index = self.open_actions.pop().unwrap_or(self.steps);
                self.record(index, &action, &result, 0);
                Ok(Value::Null)
            }
            HostCall::AskUser(question) => {
                let answer = self.approver.ask_user(&question).await;
                Ok(answer.map_or(Value::Null, Value::String))
            }
            HostCall::Agent(goal) => {
                let Some(sub_agent) = self.sub_agent.as_mut() else {
                    return Err(
                        "agent(...) needs a model: set OPENAI_API_KEY (or --base-url) for this run"
                            .into(),
                    );
                };
                let outcome = sub_agent
                    .run(&goal, &mut self.environment, self.events.clone())
                    .await;
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
