//! The browser's [`Driver`] as an [`Environment`]. The behaviour is the
//! driver's; this only gives it the environment's face, so the browser
//! module knows nothing of who chooses actions or how they are approved.

use crate::actions::{Action, ActionResult, RiskFacts, Target};
use crate::browser::{Driver, DriverError};
use crate::dom::PageState;
use crate::vision::{Screenshot, ShotError, ShotRequest};

use super::{listed_line, listing_risk_facts, Environment, EnvironmentError, FieldLocation};

impl From<DriverError> for EnvironmentError {
    fn from(error: DriverError) -> Self {
        EnvironmentError {
            message: error.message,
            fatal: error.fatal,
        }
    }
}

impl Environment for Driver {
    async fn observe(&mut self) -> Result<PageState, EnvironmentError> {
        Ok(Driver::observe(self).await?)
    }

    async fn execute(&mut self, action: &Action) -> ActionResult {
        Driver::execute(self, action).await
    }

    async fn current_url(&mut self) -> Option<String> {
        Driver::current_url(self).await
    }

    async fn risk_facts(&mut self, action: &Action, page: &PageState) -> RiskFacts {
        let mut facts = listing_risk_facts(action, page);
        if let Some(target) = self.target_facts(action, page).await {
            facts.target = Some(target);
        }
        facts
    }

    async fn describe_target(&mut self, target: &Target, page: &PageState) -> Option<String> {
        if let Some(line) = listed_line(target, page) {
            return Some(line);
        }
        self.describe_selector(target, page).await
    }

    async fn field_location(&mut self, action: &Action) -> Result<FieldLocation, String> {
        let here = Driver::current_url(self)
            .await
            .ok_or_else(|| "the page's address cannot be read".to_string())?;
        if let Action::Navigate { url } = action {
            let to = crate::actions::resolve_url(Some(&here), url).map_err(|e| e.to_string())?;
            return Ok(FieldLocation {
                frame: to.clone(),
                top: to,
            });
        }
        let frame = match action.target() {
            Some(target) => self.frame_url_of(target).await?,
            None => None,
        };
        Ok(FieldLocation {
            frame: frame.unwrap_or_else(|| here.clone()),
            top: here,
        })
    }

    async fn screenshot(&mut self, request: &ShotRequest) -> Result<Screenshot, ShotError> {
        Driver::screenshot(self, request)
            .await
            .map_err(|e| ShotError::Failed(e.to_string()))
    }
}
