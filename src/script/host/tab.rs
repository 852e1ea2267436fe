//! [`TabHost`]: answers a custom action's host calls by driving a tab
//! directly, with no gate and no events.

use serde_json::Value;

use super::call::{
    page_json, require, result_json, targeted, with_matched, HostCall, HostError, ScriptHost,
};
use super::origin::{navigate_action, origin_of, path_part, resolve_url};
use crate::browser::Driver;
use crate::script::export::page_matches;
use crate::script::locate::locate_on;

/// Drives the tab through the browser's driver with no gate and no events:
/// for a custom action's handler, whose call as a whole was approved and
/// recorded by the caller. Going through the [`Driver`] gives the
/// handler's steps what every action gets in the browser: the
/// allowed-domains guard and its reports, the sitemaps for `goto_page`,
/// and a new browser when the old one died. (`extract` needs the model's
/// side of the house, which a handler does not reach: it gets the page's
/// text the model would have answered from, at once.)
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
                let location = locate_on(self.driver.tab(), &locators)
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
