//! [`ScriptEnvironment`]: the browser's driver with scripts plugged in.
//! Custom actions run their handlers on the same tab, and every targeted
//! action's result carries a `locator` (test id, id, role and accessible
//! name, label, placeholder, name, text, a CSS path, the URL) so a
//! recorded session can be exported as a recipe that does not depend on
//! element indices; a recipe's step finds its element again through
//! [`Environment::locate`].

use serde_json::{json, Value};

use super::host::TabHost;
use super::library::{CancelFlag, Scripts};
use crate::actions::{Action, ActionResult, RiskFacts, Target};
use crate::browser::Driver;
use crate::dom::{LocateFailure, LocateProblem, Location, Locator, PageState, TriedLocator};
use crate::environment::{Environment, EnvironmentError};

/// Records what finds an element again (`args.record`), and finds the one
/// element a recipe step's locators name (`args.locators`).
const LOCATE_JS: &str = include_str!("locate.js");

/// A browser [`Driver`] that also runs custom actions from [`Scripts`] and
/// records locators in results: a layer around the driver, which it calls
/// once per action.
#[derive(Debug)]
pub struct ScriptEnvironment {
    inner: Driver,
    scripts: Scripts,
    last: Option<PageState>,
    cancel: CancelFlag,
}

impl ScriptEnvironment {
    /// Wraps `inner`; custom action handlers drive it too, so they act
    /// with its settings, guard and sitemaps.
    pub fn new(inner: Driver, scripts: Scripts) -> Self {
        ScriptEnvironment {
            inner,
            scripts,
            last: None,
            cancel: CancelFlag::new(),
        }
    }

    /// Cancels custom actions started from now on when `cancel` is set.
    pub fn set_cancel(&mut self, cancel: CancelFlag) {
        self.cancel = cancel;
    }

    /// The scripts whose custom actions run here.
    pub fn scripts(&self) -> &Scripts {
        &self.scripts
    }

    /// The wrapped driver.
    pub fn inner(&self) -> &Driver {
        &self.inner
    }

    /// The wrapped driver, for the caller to clean up.
    pub fn into_inner(self) -> Driver {
        self.inner
    }

    async fn locator(&self, action: &Action) -> Option<Value> {
        let tab = self.inner.tab();
        let args = json!({"record": true});
        let reply = match action.target()? {
            Target::Index { index } => {
                let observation = self.last.as_ref()?.observation;
                tab.eval_on_index(observation, *index, LOCATE_JS, args)
                    .await
            }
            Target::Selector { selector } => {
                tab.eval_on_selector(selector.as_str(), LOCATE_JS, args)
                    .await
            }
        };
        match reply {
            Ok(Value::Object(mut facts)) => {
                facts.retain(|_, v| !v.is_null());
                Some(Value::Object(facts))
            }
            Ok(_) => None,
            Err(error) => {
                tracing::debug!(%error, "reading the target's locator");
                None
            }
        }
    }
}

/// Adds the target's locator to a successful result's data.
fn with_locator(result: ActionResult, locator: Option<Value>) -> ActionResult {
    let Some(locator) = locator else {
        return result;
    };
    match result {
        ActionResult::Success { data: None } => {
            ActionResult::ok_with(json!({ "locator": locator }))
        }
        ActionResult::Success {
            data: Some(Value::Object(mut data)),
        } => {
            data.insert("locator".into(), locator);
            ActionResult::ok_with(Value::Object(data))
        }
        other => other,
    }
}

impl Environment for ScriptEnvironment {
    async fn observe(&mut self) -> Result<PageState, EnvironmentError> {
        let state = self.inner.observe().await?;
        self.last = Some(state.clone());
        Ok(state)
    }

    async fn execute(&mut self, action: &Action) -> ActionResult {
        if let Action::Custom(custom) = action {
            // The handler drives the same tab; the caller approved the call
            // as a whole.
            let mut host = TabHost::new(&mut self.inner);
            let result = self
                .scripts
                .call_action(&custom.name, custom.params.clone(), &mut host, &self.cancel)
                .await;
            // The handler observed on its own; index targets of the
            // caller's last observation may be stale, so observe again.
            if let Ok(state) = self.inner.observe().await {
                self.last = Some(state);
            }
            return result;
        }
        let locator = self.locator(action).await;
        let result = self.inner.execute(action).await;
        with_locator(result, locator)
    }

    async fn current_url(&mut self) -> Option<String> {
        self.inner.current_url().await
    }

    async fn risk_facts(&mut self, action: &Action, page: &PageState) -> RiskFacts {
        Environment::risk_facts(&mut self.inner, action, page).await
    }

    async fn screenshot(
        &mut self,
        request: &crate::vision::ShotRequest,
    ) -> Option<Result<crate::vision::Screenshot, String>> {
        Environment::screenshot(&mut self.inner, request).await
    }

    async fn describe_target(&mut self, target: &Target, page: &PageState) -> Option<String> {
        Environment::describe_target(&mut self.inner, target, page).await
    }

    async fn locate(&mut self, locators: &[Locator]) -> Result<Location, LocateFailure> {
        locate_on(self.inner.tab(), locators).await
    }
}

/// The one element `locators` name on `tab`'s page now (see
/// [`Environment::locate`]).
pub(crate) async fn locate_on(
    tab: &crate::browser::Tab,
    locators: &[Locator],
) -> Result<Location, LocateFailure> {
    {
        if locators.is_empty() {
            return Err(LocateFailure {
                problem: LocateProblem::NotFound,
                message: "the step names no locator".into(),
                tried: Vec::new(),
                page: String::new(),
            });
        }
        let args = json!({
            "locators": locators.iter().map(Locator::to_json).collect::<Vec<_>>(),
        });
        let reply = tab
            .eval_on_selector(":root", LOCATE_JS, args)
            .await
            .map_err(|e| LocateFailure::unavailable(format!("the page could not be asked: {e}")))?;
        location_from(reply)
    }
}

/// The page's answer to a locate call.
fn location_from(reply: Value) -> Result<Location, LocateFailure> {
    let tried: Vec<TriedLocator> = reply
        .get("tried")
        .cloned()
        .and_then(|t| serde_json::from_value(t).ok())
        .unwrap_or_default();
    let text = |key: &str| {
        reply
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match reply.get("error").and_then(Value::as_str) {
        None if reply.get("selector").is_some() => Ok(Location {
            selector: text("selector"),
            matched: text("matched"),
            element: text("element"),
            tried,
        }),
        error => Err(LocateFailure {
            problem: match error {
                Some("ambiguous") => LocateProblem::Ambiguous,
                Some("not_found") => LocateProblem::NotFound,
                _ => LocateProblem::Unavailable,
            },
            message: match text("detail") {
                detail if detail.is_empty() => format!("the page gave no answer: {reply}"),
                detail => detail,
            },
            tried,
            page: text("page"),
        }),
    }
}
