//! [`ScriptEnvironment`]: the browser's driver with scripts plugged in.
//! Custom actions run their handlers on the same tab, and every targeted
//! action's result carries a `locator` (id, `data-testid`, name,
//! aria-label, role, label, text, URL) so a recorded session can be
//! exported as a recipe that does not depend on element indices.

use serde_json::{json, Value};

use super::host::TabHost;
use super::library::{CancelFlag, Scripts};
use crate::actions::{Action, ActionResult, RiskFacts, Target};
use crate::browser::Driver;
use crate::dom::PageState;
use crate::environment::{Environment, EnvironmentError};

/// Reads what finds the element again without its index.
const LOCATOR_JS: &str = "(el) => { \
    const attr = (n) => { const v = el.getAttribute(n); return v && v.trim() ? v.trim() : null; }; \
    const tag = el.tagName.toLowerCase(); \
    const type = (el.getAttribute('type') || '').toLowerCase(); \
    const field = tag === 'input' || tag === 'textarea' || tag === 'select'; \
    const buttonish = tag === 'input' && ['button', 'submit', 'reset'].includes(type); \
    const implicit = { a: 'link', button: 'button', select: 'combobox', textarea: 'textbox' }; \
    let role = attr('role') || implicit[tag] || null; \
    if (!attr('role') && tag === 'input') { role = buttonish ? 'button' \
        : type === 'checkbox' ? 'checkbox' : type === 'radio' ? 'radio' : 'textbox'; } \
    const raw = buttonish ? el.value : field ? '' : (el.innerText || el.textContent || ''); \
    const text = raw.replace(/\\s+/g, ' ').trim().slice(0, 80) || null; \
    const label = el.labels && el.labels.length \
        ? (el.labels[0].innerText || '').replace(/\\s+/g, ' ').trim() || null : null; \
    return { tag, id: el.id || null, testid: attr('data-testid'), name: attr('name'), \
        ariaLabel: attr('aria-label'), placeholder: attr('placeholder'), role, label, text, \
        url: location.href }; }";

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
        let reply = match action.target()? {
            Target::Index { index } => {
                let observation = self.last.as_ref()?.observation;
                tab.eval_on_index(observation, *index, LOCATOR_JS, json!({}))
                    .await
            }
            Target::Selector { selector } => {
                let first = format!("(els) => els.length ? ({LOCATOR_JS})(els[0]) : null");
                tab.eval_on_selector(selector.as_str(), &first, json!({}))
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
}
