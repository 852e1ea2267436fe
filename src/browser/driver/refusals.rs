//! What the allowed domains refused: refusals reported once each (as
//! non-fatal events when the page caused them on its own), and the tab put
//! back on the last page seen when a refused document took its place.

use super::{is_error_page, Driver};
use crate::browser::guard::BlockedNavigation;
use crate::events::Event;

impl Driver {
    /// Refusals since the last report, marked as reported.
    pub(super) fn take_blocked(&mut self) -> Vec<BlockedNavigation> {
        let Some(guard) = self.tab.guard() else {
            return Vec::new();
        };
        let all = guard.blocked_since(self.reported);
        if let Some(last) = all.last() {
            self.reported = last.seq;
        }
        // Other tabs of the same browser have their own drivers.
        let me = self.tab.target_id();
        all.into_iter().filter(|b| b.concerns(me)).collect()
    }

    pub(super) fn report_blocked(&self, blocked: &[BlockedNavigation]) {
        let Some(events) = &self.events else { return };
        for b in blocked {
            events.send(Event::Error {
                error: format!("blocked a navigation to {}: {}", b.url, b.reason),
                fatal: false,
            });
        }
    }

    /// Whether the allowed domains refuse `url` (without logging it).
    pub(super) fn refused(&self, url: &str) -> bool {
        !is_error_page(url)
            && self
                .tab
                .guard()
                .is_some_and(|g| g.policy().check(url).is_blocked())
    }

    /// Documents that never touch the network (a `blob:` the page built)
    /// get past the interception; when the tab shows one the allowed
    /// domains refuse, log it and load the page last seen again.
    pub(super) async fn leave_refused_document(&mut self) -> Option<String> {
        self.tab.guard()?;
        let now = self.tab.eval("location.href").await.ok()?;
        let now = now.as_str()?.to_string();
        if !self.refused(&now) {
            return None;
        }
        // Logs the refusal in the tab's guard, like the interception would.
        let _ = self.tab.check_navigation(&now);
        let url = self.last_url.clone().filter(|u| !self.refused(u))?;
        Some(
            match self.tab.navigate(&url, self.exec.navigation_timeout).await {
                Ok(()) => {
                    self.last = None;
                    format!("{now} had loaded without reaching the network; the tab was put back on {url}")
                }
                Err(error) => {
                    format!("{now} had loaded; putting the tab back on {url} failed: {error}")
                }
            },
        )
    }

    /// A refused navigation the page started leaves Chromium's error page
    /// in the tab; load the page last seen again so the agent keeps its
    /// place. Says what it did, or `None` when the page was not lost.
    pub(super) async fn restore_after_block(&mut self) -> Option<String> {
        let now = match self.tab.eval("location.href").await {
            Ok(value) => value.as_str().map(str::to_owned).unwrap_or_default(),
            Err(_) => self.tab.url().await.ok()?,
        };
        if !is_error_page(&now) {
            return None;
        }
        let url = self.last_url.clone().filter(|u| !is_error_page(u))?;
        Some(
            match self.tab.navigate(&url, self.exec.navigation_timeout).await {
                Ok(()) => {
                    self.last = None;
                    format!("the tab was put back on {url}")
                }
                Err(error) => format!("putting the tab back on {url} failed: {error}"),
            },
        )
    }
}
