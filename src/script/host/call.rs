//! The calls a script makes to its host and the answers it gets: the
//! [`HostCall`] protocol, the [`HostError`] a script sees at the calling
//! line, the [`ScriptHost`] that answers, and the page and results as a
//! script reads them. The engine sends these and both hosts answer them,
//! so they stand below each.

use std::future::Future;

use serde_json::{json, Value};

use crate::actions::{Action, ActionResult, Catalog};
use crate::dom::{Location, Locator, PageState};
use crate::environment::Environment;

/// One request from a script to the host.
#[derive(Debug, Clone, PartialEq)]
pub enum HostCall {
    /// Observe the page; the answer is the page as a map (see
    /// [`page_json`]).
    Observe,
    /// Observe the page; the answer is its element listing as the model
    /// would read it (a debugger's stop shows it).
    Listing,
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
    /// Check that the page shows what a recipe's assertion expects
    /// (`expect_text(["id:status"], "Saved")`), waiting a little for it;
    /// an error answer says what was expected and what the page showed.
    Expect {
        /// What is expected.
        expectation: Expectation,
        /// The element's locators, strongest first (none for the URL).
        locators: Vec<Locator>,
        /// The call as written, for the message.
        call: String,
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

/// What one of a recipe's assertions expects.
#[derive(Debug, Clone, PartialEq)]
pub enum Expectation {
    /// The element is there and visible.
    Visible,
    /// Its text is this (spacing collapsed).
    Text(String),
    /// Its text contains this.
    TextContains(String),
    /// The field's value is this.
    Value(String),
    /// The checkbox or radio is checked (`true`) or not.
    Checked(bool),
    /// The first locator names this many elements.
    Count(usize),
    /// The page's URL fits this path pattern (`/orders/*`, `/orders/:id`)
    /// or, with a scheme, this URL pattern.
    Url(String),
}

impl Expectation {
    /// The recipe function that asserts it.
    pub fn function(&self) -> &'static str {
        match self {
            Expectation::Visible => "expect_visible",
            Expectation::Text(_) => "expect_text",
            Expectation::TextContains(_) => "expect_text_contains",
            Expectation::Value(_) => "expect_value",
            Expectation::Checked(_) => "expect_checked",
            Expectation::Count(_) => "expect_count",
            Expectation::Url(_) => "expect_url",
        }
    }
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
    /// An assertion did not hold: the call, what it expected and what the
    /// page showed.
    #[error("assertion failed: {0}")]
    Assertion(String),
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

/// Observes `environment` for a script: the page as the script reads it
/// (see [`page_json`]) and as it was observed.
pub(super) async fn observe_for_script<E: Environment>(
    environment: &mut E,
) -> Result<(Value, PageState), HostError> {
    let page = environment
        .observe()
        .await
        .map_err(|e| HostError::Observe(e.message))?;
    Ok((page_json(&page), page))
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

/// An action's result as a script reads it: the `{ok, …}` map.
pub(crate) fn result_json(result: &ActionResult) -> Value {
    serde_json::to_value(result).unwrap_or(Value::Null)
}

/// The action `name` with `params` on the element `location` found.
pub(super) fn targeted(
    name: &str,
    params: &Value,
    location: &Location,
) -> Result<Action, HostError> {
    let mut params = params.clone();
    if let Some(object) = params.as_object_mut() {
        object.insert("selector".into(), Value::String(location.selector.clone()));
    }
    Catalog::builtin()
        .parse(&json!({ name: params }))
        .map_err(|e| HostError::Step(format!("{name} on {}: {e}", location.element)))
}

/// A failed result as an error, with what was being done.
pub(super) fn require(result: ActionResult, doing: &str) -> Result<Value, HostError> {
    match result {
        ActionResult::Success { .. } => Ok(Value::Null),
        ActionResult::Failure { reason, message } => Err(HostError::Step(format!(
            "{doing} failed ({reason}): {message}"
        ))),
    }
}

/// Notes in a successful result which locator found the element.
pub(super) fn with_matched(result: ActionResult, location: &Location) -> ActionResult {
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
