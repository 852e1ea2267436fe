//! Loading a URL in the tab, checked against the allowed domains first,
//! and reading where the tab is.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::NavigateParams;

use super::Tab;
use crate::browser::error::BrowserError;
use crate::browser::guard::Verdict;

impl Tab {
    /// Refuses `url` up front when the allowed domains do not cover it.
    /// Interception catches network navigations anyway; this also covers
    /// the ones that never reach the network (`data:`, `javascript:`).
    pub fn check_navigation(&self, url: &str) -> Result<(), BrowserError> {
        let me = self.page.target_id().inner().as_str();
        match self
            .ctx
            .guard
            .as_ref()
            .map(|g| g.check_in(url, Some(me), None))
        {
            Some(Verdict::Blocked(reason)) => Err(BrowserError::Blocked {
                url: url.to_string(),
                reason,
            }),
            _ => Ok(()),
        }
    }

    /// Navigates to `url` and waits for the load event; a URL outside the
    /// allowed domains fails with [`BrowserError::Blocked`].
    pub async fn navigate(&self, url: &str, limit: Duration) -> Result<(), BrowserError> {
        self.check_navigation(url)?;
        let what = format!("loading {url}");
        self.with_timeout(&what, limit, self.page.goto(NavigateParams::new(url)))
            .await?;
        // The new document has no world yet; the old context id is dead.
        *self.world.lock().await = None;
        Ok(())
    }

    /// The current URL.
    pub async fn url(&self) -> Result<String, BrowserError> {
        let url = self
            .with_timeout("reading the URL", self.ctx.call_timeout, self.page.url())
            .await?;
        Ok(url.unwrap_or_default())
    }
}
