//! What answers a script's host calls: [`TabHost`] drives a tab directly
//! (a custom action the agent or the command line already approved), and
//! [`RecipeHost`] runs a recipe's steps like agent steps, along the same
//! [`Road`] (policy, approval gate, `tool_call` / `tool_result` events),
//! each recorded as a `step`.

use std::future::Future;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::actions::{Action, ActionResult, FailureReason};
use crate::browser::Driver;
use crate::dom::{LocateFailure, LocateProblem, Location, Locator, PageState};
use crate::environment::{BoxFuture, Environment, Passage, RewriteRefused, Road};
use crate::events::{Event, HealRecord, StepRecord, TokenUsage};

use super::export::page_matches;

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
    /// Run an action on the one element `locators` name (a recipe line
    /// like `click(["id:go", "text:Go"])`); the answer is its result.
    ActOn {
        /// The action's catalog name.
        name: String,
        /// Its parameters, without a target.
        params: Value,
        /// The recorded locators, strongest first.
        locators: Vec<Locator>,
        /// The script line that asked (for a repaired recipe).
        line: usize,
    },
    /// Open a URL; a path is on the run's origin.
    Navigate(String),
    /// Open `path` on the run's origin unless the page is already there.
    StartAt(String),
    /// A recorded step begins: its number, the goal it was recorded with,
    /// and the page it ran on (a path or route pattern), checked now.
    Step {
        /// The step's number in the recipe.
        number: usize,
        /// The reflection's goal when it was recorded.
        goal: String,
        /// The page it ran on.
        page: Option<String>,
        /// The script line.
        line: usize,
    },
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
    /// A recorded step could not run (and was not healed): which step,
    /// every locator tried, and what the page showed instead.
    #[error("{0}")]
    Step(String),
    /// A path to open, but no origin to open it on.
    #[error("{0}")]
    NoOrigin(String),
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
            HostCall::ActOn {
                name,
                params,
                locators,
                ..
            } => {
                let location = super::env::locate_on(self.driver.tab(), &locators)
                    .await
                    .map_err(|failure| HostError::Step(format!("{name}: {failure}")))?;
                let action = targeted(&name, &params, &location)?;
                let result = self.driver.execute(&action).await;
                Ok(result_json(&with_matched(result, &location)))
            }
            HostCall::Navigate(url) => {
                let here = self.driver.current_url().await.unwrap_or_default();
                let url = resolve_url(&url, origin_of(&here).as_deref())?;
                let action = navigate_action(&url)?;
                Ok(result_json(&self.driver.execute(&action).await))
            }
            HostCall::StartAt(path) => {
                let here = self.driver.current_url().await.unwrap_or_default();
                if page_matches(&here, path_part(&path)) {
                    return Ok(Value::Null);
                }
                let url = resolve_url(&path, origin_of(&here).as_deref())?;
                let result = self.driver.execute(&navigate_action(&url)?).await;
                require(result, "opening the start page")
            }
            HostCall::Step {
                number, page, goal, ..
            } => {
                if let Some(pattern) = page {
                    let here = self.driver.current_url().await.unwrap_or_default();
                    if !page_matches(&here, &pattern) {
                        return Err(HostError::Step(format!(
                            "step {number} ({goal}): expected to be on {pattern} (as recorded) but the page is {here}"
                        )));
                    }
                }
                Ok(Value::Null)
            }
            HostCall::Gate(_) | HostCall::Record(..) | HostCall::Log(_) => Ok(Value::Null),
            HostCall::AskUser(_) => Ok(Value::Null),
            HostCall::Agent(_) => Err(HostError::NoAgentHere),
        }
    }
}

/// The action `name` with `params` on the element `location` found.
fn targeted(name: &str, params: &Value, location: &Location) -> Result<Action, HostError> {
    let mut params = params.clone();
    if let Some(object) = params.as_object_mut() {
        object.insert("selector".into(), Value::String(location.selector.clone()));
    }
    crate::actions::Catalog::builtin()
        .parse(&json!({ name: params }))
        .map_err(|e| HostError::Step(format!("{name} on {}: {e}", location.element)))
}

fn navigate_action(url: &str) -> Result<Action, HostError> {
    crate::actions::Catalog::builtin()
        .parse(&json!({"navigate": {"url": url}}))
        .map_err(|e| HostError::Step(format!("navigate {url}: {e}")))
}

/// A failed result as an error, with what was being done.
fn require(result: ActionResult, doing: &str) -> Result<Value, HostError> {
    match result {
        ActionResult::Success { .. } => Ok(Value::Null),
        ActionResult::Failure { reason, message } => Err(HostError::Step(format!(
            "{doing} failed ({reason}): {message}"
        ))),
    }
}

/// Notes in a successful result which locator found the element.
fn with_matched(result: ActionResult, location: &Location) -> ActionResult {
    match result {
        ActionResult::Success { data } => {
            let mut data = match data {
                Some(Value::Object(map)) => map,
                Some(other) => {
                    let mut map = serde_json::Map::new();
                    map.insert("value".into(), other);
                    map
                }
                None => serde_json::Map::new(),
            };
            data.insert("matched".into(), Value::String(location.matched.clone()));
            ActionResult::ok_with(Value::Object(data))
        }
        failure => failure,
    }
}

/// The path of a path with a query or fragment.
fn path_part(path: &str) -> &str {
    path.split(['?', '#']).next().unwrap_or(path)
}

/// `scheme://host:port` of an http(s) URL.
fn origin_of(url: &str) -> Option<String> {
    super::export::origin_of(url)
}

/// An absolute URL for `url`: itself when it is one, else a path on
/// `origin`.
fn resolve_url(url: &str, origin: Option<&str>) -> Result<String, HostError> {
    if url::Url::parse(url).is_ok() {
        return Ok(url.to_string());
    }
    let Some(origin) = origin else {
        return Err(HostError::NoOrigin(format!(
            "this recipe opens {url:?}, a path on the origin it runs on, and the page has no \
             origin yet: run it with --url (e.g. --url http://127.0.0.1:8080/)"
        )));
    };
    url::Url::parse(origin)
        .and_then(|base| base.join(url))
        .map(|joined| joined.to_string())
        .map_err(|e| HostError::Step(format!("{url:?} on {origin}: {e}")))
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

/// What a recipe asks of whoever heals a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealRequest {
    /// The step's number in the recipe.
    pub step: usize,
    /// The sub-goal for the agent: the recorded goal, the action, the
    /// target's role, name and text, and the kind of failure (no live
    /// page text: the agent reads the page itself, inside its fence).
    pub sub_goal: String,
}

/// One action a healing run took, as its step recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct HealedAction {
    /// `{"name": {params}}` as recorded (secrets as placeholders).
    pub action: Value,
    /// The target's recorded locator facts, when it had a target.
    pub locator: Option<Value>,
}

/// How a healing run ended.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HealOutcome {
    /// Whether the agent said it did the step.
    pub success: bool,
    /// Its final words.
    pub text: String,
    /// Model calls made.
    pub model_calls: usize,
    /// Tokens used.
    pub usage: TokenUsage,
    /// The page actions it took, in order.
    pub actions: Vec<HealedAction>,
}

/// Heals a recipe step that no longer runs as recorded: the agent does it
/// on the recipe's environment, through the same road, under a budget.
pub trait Healer<E>: Send {
    /// Does the step `request` describes.
    fn heal<'a>(
        &'a mut self,
        request: &'a HealRequest,
        environment: &'a mut E,
    ) -> BoxFuture<'a, HealOutcome>;
}

/// What takes a healed step's place in the repaired recipe.
#[derive(Debug, Clone, PartialEq)]
pub enum Replacement {
    /// The same action on an element found by these locators: only the
    /// step's list of locators changes (its values stay parameters).
    Locators(Vec<Locator>),
    /// Other actions: these lines replace the step's line.
    Lines(Vec<String>),
}

/// A healed step, for writing the repaired recipe.
#[derive(Debug, Clone, PartialEq)]
pub struct HealedStep {
    /// The step's number.
    pub step: usize,
    /// The line of the action that failed.
    pub line: usize,
    /// What replaces it.
    pub replacement: Replacement,
    /// `old → new`, for the comment above it.
    pub change: String,
    /// The line of the step's `step(…)` call, its goal and the page it
    /// should now check, when the location check failed and the page is
    /// another.
    pub page: Option<(usize, String, String)>,
}

/// The recorded step a recipe is in.
#[derive(Debug, Clone, Default)]
struct StepContext {
    number: usize,
    goal: String,
    line: usize,
    /// The location check failed: why (healed with the step's action).
    location_failure: Option<String>,
}

/// How long a step's locators are tried again before the step fails
/// (elements appear late after a navigation or a script renders them).
const LOCATE_WAIT: Duration = Duration::from_secs(3);
/// How long a location check waits for the page to get there.
const PAGE_WAIT: Duration = Duration::from_secs(3);

/// Runs a recipe's steps like agent steps: each action travels the road
/// (policy, approval gate) and is reported as `tool_call`, `approval`,
/// `tool_result` and `step` events. A step that no longer runs as
/// recorded goes to the [`Healer`] when there is one.
pub struct RecipeHost<E> {
    environment: E,
    road: Road,
    sub_agent: Option<Box<dyn SubAgent<E>>>,
    healer: Option<Box<dyn Healer<E>>>,
    last: Option<PageState>,
    steps: usize,
    /// Step numbers of custom actions still running, so each is recorded
    /// under the number it was approved with.
    open_actions: Vec<usize>,
    stopped: bool,
    /// Who chose the steps, as the approval and the step's goal say it
    /// (`None`: a recipe).
    caller: Option<String>,
    /// The origin paths open on.
    origin: Option<String>,
    current: Option<StepContext>,
    healed: Vec<HealedStep>,
    heal_calls: usize,
    heal_usage: TokenUsage,
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
            // An action that names no listed element (navigate, a
            // selector, keys) needs no listing: a page caught between two
            // documents need not stop it.
            Err(error)
                if !matches!(action.target(), Some(crate::actions::Target::Index { .. })) =>
            {
                tracing::debug!(%error, "no listing before a step that needs none");
                let url = self.environment.current_url().await.unwrap_or_default();
                stand_in_page(url)
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
    async fn act(&mut self, action: Action) -> Result<ActionResult, HostError> {
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

    fn record(&mut self, index: usize, action: &Action, result: &ActionResult, took_ms: u64) {
        // The wait for the person's approval is reported apart from the
        // action's own time.
        let wait_ms = self.road.take_wait().as_millis() as u64;
        let act_ms = took_ms.saturating_sub(wait_ms);
        let goal = self.recorded_goal(action);
        // Built from JSON so fields the step record gains later take their
        // defaults.
        let record = serde_json::from_value::<StepRecord>(json!({
            "index": index,
            "reflection": {
                "evaluation_previous_goal": "",
                "memory": "",
                "next_goal": goal,
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

    /// The origin paths open on: the one given, else the current page's
    /// (kept from then on, so a detour to another site does not move it).
    async fn origin(&mut self) -> Option<String> {
        if self.origin.is_none() {
            let here = self.environment.current_url().await.unwrap_or_default();
            self.origin = origin_of(&here);
        }
        self.origin.clone()
    }

    /// Waits (a little) for the page to be the one `pattern` names; the
    /// URL it is on otherwise.
    async fn wait_for_page(&mut self, pattern: &str) -> Result<(), String> {
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
    fn unhealed_location(&mut self) -> Result<(), HostError> {
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
    async fn act_on(
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

    /// Hands a failed step to the healer; its outcome answers the script.
    async fn heal(
        &mut self,
        step: Failed<'_>,
        failure: String,
        why: String,
        location: bool,
    ) -> Result<Value, HostError> {
        let goal = self
            .current
            .as_ref()
            .map(|s| s.goal.clone())
            .unwrap_or_default();
        let sub_goal = heal_goal(&step, &goal, &why);
        let request = HealRequest {
            step: step.number,
            sub_goal: sub_goal.clone(),
        };
        let Some(healer) = self.healer.as_mut() else {
            return Err(HostError::Step(format!(
                "step {}{}: {failure}",
                step.number,
                step.place()
            )));
        };
        let outcome = healer.heal(&request, &mut self.environment).await;
        self.last = None;
        self.heal_calls += outcome.model_calls;
        self.heal_usage.add(outcome.usage);
        let origin = self.origin().await;
        let replacement = replacement(&step, &outcome.actions, origin.as_deref());
        let old = step
            .locators
            .first()
            .map(ToString::to_string)
            .unwrap_or_default();
        let new = match &replacement {
            Replacement::Locators(list) => {
                list.first().map(ToString::to_string).unwrap_or_default()
            }
            Replacement::Lines(lines) if lines.is_empty() => {
                "(nothing: the step is no longer needed)".into()
            }
            Replacement::Lines(lines) => lines.join(" "),
        };
        self.emit(Event::Healed(HealRecord {
            step: step.number,
            line: step.line,
            failure: failure.clone(),
            sub_goal,
            success: outcome.success,
            model_calls: outcome.model_calls,
            usage: outcome.usage,
            old: old.clone(),
            new: new.clone(),
        }));
        if self.stopped {
            return Err(HostError::Stopped);
        }
        if !outcome.success {
            return Err(HostError::Step(format!(
                "step {}{}: {failure}; healing did not work ({} model calls): {}",
                step.number,
                step.place(),
                outcome.model_calls,
                outcome.text
            )));
        }
        let page = if location {
            let first_url = outcome
                .actions
                .iter()
                .find_map(|a| a.locator.as_ref()?.get("url")?.as_str().map(str::to_string));
            let context_line = self.current.as_ref().map(|s| s.line).unwrap_or(0);
            first_url
                .map(|url| super::export::page_pattern(&url, origin.as_deref(), None))
                .filter(|pattern| !pattern.is_empty() && context_line > 0)
                .map(|pattern| (context_line, goal.clone(), pattern))
        } else {
            None
        };
        self.healed.push(HealedStep {
            step: step.number,
            line: step.line,
            replacement,
            change: format!("{old} → {new}"),
            page,
        });
        Ok(result_json(&ActionResult::ok_with(json!({
            "healed": true,
            "text": outcome.text,
        }))))
    }
}

/// The page as far as a step that names no listed element needs it: its
/// URL.
fn stand_in_page(url: String) -> PageState {
    PageState {
        observation: 0,
        url,
        title: String::new(),
        tabs: Vec::new(),
        scroll: Default::default(),
        elements: Vec::new(),
        left_out: Default::default(),
        full_page: false,
        listing: String::new(),
        page_text: Default::default(),
        extract_ms: 0.0,
    }
}

/// A step that failed, as the recipe wrote it.
struct Failed<'a> {
    number: usize,
    line: usize,
    name: &'a str,
    params: &'a Value,
    locators: &'a [Locator],
}

impl Failed<'_> {
    /// ` (line 12)`, when the line is known.
    fn place(&self) -> String {
        if self.line > 0 {
            format!(" (line {})", self.line)
        } else {
            String::new()
        }
    }
}

/// How a person would name the element the locators recorded.
fn target_words(locators: &[Locator]) -> String {
    let mut role = None;
    let mut rest = Vec::new();
    for locator in locators {
        match locator {
            Locator::Role { role: r, name } if role.is_none() => {
                role = Some(format!("the {r} named \"{name}\""))
            }
            Locator::Label(label) => rest.push(format!("labelled \"{label}\"")),
            Locator::Placeholder(p) => rest.push(format!("with the placeholder \"{p}\"")),
            Locator::Text(text) => rest.push(format!("showing \"{text}\"")),
            _ => {}
        }
    }
    let head = role.unwrap_or_else(|| "the element".into());
    if rest.is_empty() {
        head
    } else {
        format!("{head}, {}", rest.join(", "))
    }
}

/// The sub-goal for a failed step, written from what was recorded: its
/// action, its target's role, name and text, its goal, and the kind of
/// failure. Nothing the page shows now goes in: the agent reads the page
/// itself, where page text is fenced.
fn heal_goal(step: &Failed<'_>, goal: &str, why: &str) -> String {
    let target = target_words(step.locators);
    let text = step.params.get("text").and_then(Value::as_str);
    let action = match (step.name, text) {
        ("click", _) => format!("click {target}"),
        ("input_text", Some(text)) => {
            format!("type {text:?} into {target} (replacing what it holds)")
        }
        ("select_option", Some(text)) => format!("choose {text:?} in {target}"),
        (name, _) => format!("run `{name}` with {} on {target}", step.params),
    };
    let locators: Vec<String> = step.locators.iter().map(ToString::to_string).collect();
    let mut out = format!(
        "A recorded recipe step no longer runs as recorded; do it on the page instead.\nStep {}: {action}.\n",
        step.number
    );
    if !goal.trim().is_empty() {
        out.push_str(&format!("It was recorded with the goal: {}\n", goal.trim()));
    }
    out.push_str(&format!(
        "Its element was recorded as: {}.\nWhat went wrong: {why}.\n",
        locators.join(", ")
    ));
    out.push_str(
        "Do only this step (reach the right page first if needed), then call done with success \
         true. Do nothing after it. If it cannot be done, call done with success false and say why.",
    );
    out
}

/// What replaces a healed step: the same action on a newly found element
/// (only the locators change), or the healing run's actions as lines.
fn replacement(step: &Failed<'_>, actions: &[HealedAction], origin: Option<&str>) -> Replacement {
    if let [only] = actions {
        let same = only
            .action
            .as_object()
            .and_then(|o| o.iter().next())
            .filter(|(name, params)| {
                name.as_str() == step.name
                    && params.get("text").and_then(Value::as_str)
                        == step.params.get("text").and_then(Value::as_str)
            })
            .is_some();
        let locators = only
            .locator
            .as_ref()
            .map(Locator::from_facts)
            .unwrap_or_default();
        if same && !locators.is_empty() {
            return Replacement::Locators(locators);
        }
    }
    Replacement::Lines(
        actions
            .iter()
            .filter_map(|a| super::export::action_line(&a.action, a.locator.as_ref(), origin))
            .collect(),
    )
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
