//! [`ScriptEnvironment`]: the browser's driver with scripts plugged in.
//! A custom action's handler runs above it, on the road (each of its
//! steps passes the policy and the gate and comes down here like any
//! action); here every targeted action's result carries a `locator` (test id, id, role and accessible
//! name, label, placeholder, name, text, a CSS path, the URL) so a
//! recorded session can be exported as a recipe that does not depend on
//! element indices; a recipe's step finds its element again through
//! [`Environment::locate`]. How the page is asked is in `locate`.

use serde_json::{json, Value};

use super::library::{CancelFlag, Scripts};
use super::locate::{locate_on, record_locator};
use crate::actions::{Action, ActionResult, RiskFacts, Target};
use crate::browser::Driver;
use crate::dom::{LocateFailure, Location, Locator, PageState};
use crate::environment::{Environment, EnvironmentError};

/// A browser [`Driver`] that records locators in results and holds the
/// session's [`Scripts`] and the flag that cancels their custom actions:
/// a layer around the driver, which it calls once per action.
#[derive(Debug)]
pub struct ScriptEnvironment {
    inner: Driver,
    scripts: Scripts,
    last: Option<PageState>,
    cancel: CancelFlag,
}

impl ScriptEnvironment {
    /// Wraps `inner`; custom action handlers' steps come down to it too,
    /// so they act with its settings, guard and sitemaps.
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

    /// What cancels the custom actions of the run now.
    pub fn cancel(&self) -> &CancelFlag {
        &self.cancel
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
            // A handler's steps each pass the policy and the gate: only a
            // road with the scripts runs one (`Road::with_scripts`), never
            // the browser's side as a whole.
            return ActionResult::unknown(format!(
                "the custom action `{}` reached the browser without a road to run its steps on; \
                 custom actions run along a road that has the scripts",
                custom.name
            ));
        }
        let locator = match action.target() {
            Some(target) => record_locator(self.inner.tab(), target, self.last.as_ref()).await,
            None => None,
        };
        let result = self.inner.execute(action).await;
        with_locator(result, locator)
    }

    async fn current_url(&mut self) -> Option<String> {
        self.inner.current_url().await
    }

    async fn field_location(
        &mut self,
        action: &Action,
    ) -> Result<crate::environment::FieldLocation, String> {
        Environment::field_location(&mut self.inner, action).await
    }

    async fn risk_facts(&mut self, action: &Action, page: &PageState) -> RiskFacts {
        Environment::risk_facts(&mut self.inner, action, page).await
    }

    async fn screenshot(
        &mut self,
        request: &crate::vision::ShotRequest,
    ) -> Result<crate::vision::Screenshot, crate::vision::ShotError> {
        Environment::screenshot(&mut self.inner, request).await
    }

    async fn describe_target(&mut self, target: &Target, page: &PageState) -> Option<String> {
        Environment::describe_target(&mut self.inner, target, page).await
    }

    async fn locate(&mut self, locators: &[Locator]) -> Result<Location, LocateFailure> {
        locate_on(self.inner.tab(), locators).await
    }
}
