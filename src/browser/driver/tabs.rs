//! The tabs a driver holds: a tab a click opened (followed or kept to go
//! back to), a tab that closed itself, and the `switch_tab` and
//! `close_tab` actions.

use serde_json::json;

use super::{is_error_page, Driver};
use crate::actions::ActionResult;
use crate::browser::error::BrowserError;
use crate::browser::guard::Verdict;
use crate::browser::tab::Tab;

/// What became of a tab an action opened.
pub(super) enum NewTab {
    /// It opened and is kept (or followed): its URL and title.
    Opened(serde_json::Value),
    /// The allowed domains refused its page: it was closed, and the
    /// session stays on the tab that opened it. Why, in words.
    Refused(String),
}

impl Driver {
    /// A page tab that was not open in `before`: waits for it to load, and
    /// switches to it when configured to. `None` when the action opened
    /// none.
    pub(super) async fn new_tab_since(&mut self, before: &[crate::dom::TabInfo]) -> Option<NewTab> {
        // A tab a click opens is announced while the click is handled;
        // one more turn of the page's event loop covers a `window.open`
        // the page does right after (a timer of 0).
        let mut opened = None;
        for attempt in 0..2 {
            let now = self.tab.open_tabs().await.ok()?;
            for tab in &now {
                // A tab this environment made itself (one that took
                // over from a stuck tab) is not the page's doing.
                let new = before.iter().all(|b| b.id != tab.id)
                    && tab.id != self.tab.target_id()
                    && self.others.iter().all(|o| o.target_id() != tab.id);
                if !new {
                    continue;
                }
                // Nor is a tab the session opened itself (it has no
                // opener), or one another page of the session opened
                // meanwhile; a frame of this page counts as this page.
                let by_this_page = self.tab.opener_of(&tab.id).await.is_some_and(|opener| {
                    opener == self.tab.target_id() || now.iter().all(|t| t.id != opener)
                });
                if by_this_page {
                    opened = Some(tab.clone());
                    break;
                }
            }
            if opened.is_some() || attempt == 1 {
                break;
            }
            let _ = self
                .tab
                .eval("new Promise(r => setTimeout(() => setTimeout(() => r(true), 0), 0))")
                .await;
        }
        let Some(opened) = opened else {
            // The guard may have closed a refused popup before it was
            // listed; its refusal is in the opener's log all the same.
            return self.popup_refusal(None).map(NewTab::Refused);
        };
        let tab = match self.tab.adopt(&opened.id).await {
            Ok(tab) => tab,
            Err(error) => {
                // Closed under us: by the guard (a refused page), or by
                // its own script.
                if let Some(refused) = self.popup_refusal(Some(&opened.id)) {
                    let _ = self.tab.close_target(&opened.id).await;
                    return Some(NewTab::Refused(refused));
                }
                return Some(NewTab::Opened(
                    json!({"url": opened.url, "title": opened.title,
                    "switched": false, "error": error.to_string()}),
                ));
            }
        };
        let (url, title) = wait_loaded(&tab, self.exec.navigation_timeout).await;
        let url = url.unwrap_or(opened.url);
        let title = title.unwrap_or(opened.title);
        // A refusal is logged before the page is failed or closed, so by
        // now (loaded, on an error page, or closed) it is in the log.
        let refused = self.popup_refusal(Some(&opened.id)).or_else(|| {
            let guard = self.tab.guard()?;
            match guard.policy().check(&url) {
                Verdict::Blocked(reason) => Some(format!("{url} was refused: {reason}")),
                Verdict::Allowed => None,
            }
        });
        if let Some(refused) = refused {
            if !tab.is_closed() {
                if let Err(error) = tab.close().await {
                    tracing::debug!(%error, "closing a refused tab");
                }
            }
            return Some(NewTab::Refused(refused));
        }
        // A popup whose load failed is reported, never driven.
        if is_error_page(&url) {
            return Some(NewTab::Opened(
                json!({"url": url, "switched": false, "error": "its page did not load"}),
            ));
        }
        self.report(format!("a tab opened: {url} ({title})"));
        let switched = self.follow_new_tabs;
        if switched {
            self.drive(tab);
        } else {
            self.others.push(tab);
        }
        Some(NewTab::Opened(
            json!({"url": url, "title": title, "switched": switched}),
        ))
    }

    /// A refusal since the action began of the page in the popup `popup`,
    /// or (without one) of any popup the driven tab opened, in words.
    fn popup_refusal(&self, popup: Option<&str>) -> Option<String> {
        let guard = self.tab.guard()?;
        let me = self.tab.target_id();
        guard
            .blocked_since(self.reported)
            .into_iter()
            .find(|b| match popup {
                Some(popup) => b.tab.as_deref() == Some(popup),
                None => b.opener.as_deref() == Some(me) && b.tab.as_deref() != Some(me),
            })
            .map(|b| format!("{} was refused: {}", b.url, b.reason))
    }

    /// Makes `tab` the driven one; the previous one is kept to go back to.
    fn drive(&mut self, tab: Tab) {
        let previous = std::mem::replace(&mut self.tab, tab);
        self.others
            .retain(|t| t.target_id() != self.tab.target_id());
        self.others.push(previous);
        self.reported = self.tab.guard().map_or(0, |g| g.mark());
        self.last = None;
    }

    /// The target id of the tab numbered `number` in the last observation.
    fn tab_id(&self, number: u32) -> Result<String, ActionResult> {
        let Some(page) = &self.last else {
            return Err(ActionResult::invalid_params(
                "no tab list yet: observe the page first",
            ));
        };
        page.tabs
            .get(number as usize)
            .map(|t| t.id.clone())
            .ok_or_else(|| {
                ActionResult::invalid_params(format!(
                    "there is no tab {number}: the tab list has {} (0 to {})",
                    page.tabs.len(),
                    page.tabs.len().saturating_sub(1)
                ))
            })
    }

    pub(super) async fn switch_tab(&mut self, number: u32) -> ActionResult {
        let id = match self.tab_id(number) {
            Ok(id) => id,
            Err(result) => return result,
        };
        if id == self.tab.target_id() {
            return ActionResult::ok_with(json!({"tab": number, "already": true}));
        }
        let tab = match self.others.iter().position(|t| t.target_id() == id) {
            Some(at) => self.others.remove(at),
            None => match self.tab.adopt(&id).await {
                Ok(tab) => tab,
                Err(error) => {
                    return ActionResult::not_found(format!(
                        "tab {number} could not be taken over: {error}"
                    ))
                }
            },
        };
        let url = tab.url().await.unwrap_or_default();
        self.drive(tab);
        ActionResult::ok_with(json!({"tab": number, "url": url}))
    }

    /// Switches to the tab of the session whose URL matches `pattern`
    /// (see [`crate::urls::page_matches`]): one the session already keeps
    /// first, the newest first, else any tab of the session's family. The
    /// driven tab counts only when no other matches.
    pub(super) async fn switch_tab_to(&mut self, pattern: &str) -> ActionResult {
        let here = self.tab.url().await.unwrap_or_default();
        let mut kept = None;
        for (at, tab) in self.others.iter().enumerate().rev() {
            if tab.is_closed() {
                continue;
            }
            if crate::urls::page_matches(&tab.url().await.unwrap_or_default(), pattern) {
                kept = Some(at);
                break;
            }
        }
        let tab = match kept {
            Some(at) => self.others.remove(at),
            None => {
                let listed = self.tab.open_tabs().await.unwrap_or_default();
                let found = listed.iter().rev().find(|t| {
                    t.id != self.tab.target_id() && crate::urls::page_matches(&t.url, pattern)
                });
                match found {
                    Some(info) => match self.tab.adopt(&info.id).await {
                        Ok(tab) => tab,
                        Err(error) => {
                            return ActionResult::not_found(format!(
                                "the tab at {} could not be taken over: {error}",
                                info.url
                            ))
                        }
                    },
                    None if crate::urls::page_matches(&here, pattern) => {
                        return ActionResult::ok_with(json!({"url": here, "already": true}))
                    }
                    None => {
                        let urls: Vec<&str> = listed.iter().map(|t| t.url.as_str()).collect();
                        return ActionResult::not_found(format!(
                            "no open tab's URL matches {pattern:?}; the tabs are at {}",
                            urls.join(", ")
                        ));
                    }
                }
            }
        };
        let url = tab.url().await.unwrap_or_default();
        self.drive(tab);
        ActionResult::ok_with(json!({"url": url}))
    }

    pub(super) async fn close_tab(&mut self, number: Option<u32>) -> ActionResult {
        let id = match number {
            Some(n) => match self.tab_id(n) {
                Ok(id) => id,
                Err(result) => return result,
            },
            None => self.tab.target_id().to_string(),
        };
        if id != self.tab.target_id() {
            if let Some(at) = self.others.iter().position(|t| t.target_id() == id) {
                let tab = self.others.remove(at);
                return match tab.close().await {
                    Ok(()) => ActionResult::ok_with(json!({"closed": id})),
                    Err(error) => ActionResult::unknown(format!("closing the tab: {error}")),
                };
            }
            return match self.tab.close_target(&id).await {
                Ok(()) => ActionResult::ok_with(json!({"closed": id})),
                Err(error) => ActionResult::unknown(format!("closing the tab: {error}")),
            };
        }
        let closing = match self.move_off_current_tab(None).await {
            Ok(closing) => closing,
            Err(error) => {
                return ActionResult::unknown(format!(
                    "no other tab to go to, so the tab stays open: {error}"
                ))
            }
        };
        let url = self.tab.url().await.unwrap_or_default();
        match closing.close().await {
            Ok(()) => ActionResult::ok_with(json!({"closed": id, "now_on": url})),
            Err(error) => ActionResult::unknown(format!("closing the tab: {error}")),
        }
    }

    /// The driven tab closed under the session (a popup that handed its
    /// value to its opener and called `window.close()`): drive the tab
    /// driven before it, which for a popup is the one that opened it, with
    /// its state as it was (a half-filled form, a sign-in). What closed and
    /// where the session is now, for the action's result; the next
    /// observation lists the tab it is on. When no tab of the session is
    /// left (its only tab closed from outside), the closed tab's page opens
    /// again in a new tab: another tab of the browser may be a person's own
    /// or another session's, and is not taken.
    pub(super) async fn leave_closed_tab(&mut self) -> serde_json::Value {
        let closed_url = self.last_url.clone().unwrap_or_default();
        let reopen = if closed_url.is_empty() {
            "about:blank"
        } else {
            closed_url.as_str()
        };
        if let Err(error) = self.move_off_current_tab(Some(reopen)).await {
            return json!({"url": closed_url, "now_on": null,
                "error": format!("no other tab to go to: {error}")});
        }
        let now_on = self.tab.url().await.unwrap_or_default();
        self.report(format!("the tab {closed_url} closed; now on {now_on}"));
        // A relaunch after a crash reopens where the session is now.
        self.last_url = Some(now_on.clone());
        json!({"url": closed_url, "now_on": now_on})
    }

    /// Makes the tab driven before the current one the driven one again
    /// and hands back the one left. With none: a new tab at `reopen` when
    /// given, else any other open tab of the browser, else a blank one.
    async fn move_off_current_tab(&mut self, reopen: Option<&str>) -> Result<Tab, BrowserError> {
        let leaving = self.tab.target_id().to_string();
        let mut next = None;
        while let Some(tab) = self.others.pop() {
            if !tab.is_closed() {
                next = Some(tab);
                break;
            }
        }
        let next = match (next, reopen) {
            (Some(tab), _) => tab,
            (None, Some(url)) => self.tab.open_sibling(url).await?,
            (None, None) => {
                let other = self
                    .tab
                    .open_tabs()
                    .await
                    .ok()
                    .and_then(|tabs| tabs.into_iter().find(|t| t.id != leaving));
                match other {
                    Some(info) => self.tab.adopt(&info.id).await?,
                    None => self.tab.open_sibling("about:blank").await?,
                }
            }
        };
        let left = std::mem::replace(&mut self.tab, next);
        self.reported = self.tab.guard().map_or(0, |g| g.mark());
        self.last = None;
        Ok(left)
    }
}

/// Waits (up to `limit`) for a tab to leave `about:blank` and finish
/// loading; its URL and title as far as they are known.
async fn wait_loaded(tab: &Tab, limit: std::time::Duration) -> (Option<String>, Option<String>) {
    let deadline = tokio::time::Instant::now() + limit;
    let mut last = (None, None);
    loop {
        let read = tab
            .eval("[location.href, document.readyState, document.title]")
            .await;
        if read.is_err() {
            // A tab closed under us (a refused popup) will not load.
            let listed = tab.open_tabs().await.ok();
            if listed.is_some_and(|tabs| tabs.iter().all(|t| t.id != tab.target_id())) {
                return last;
            }
        }
        if let Ok(value) = read {
            let text = |i: usize| value.get(i).and_then(|v| v.as_str()).map(str::to_owned);
            last = (text(0), text(2));
            let loaded = text(1).as_deref() == Some("complete");
            if loaded && text(0).as_deref() != Some("about:blank") {
                return last;
            }
        }
        if tokio::time::Instant::now() >= deadline {
            return last;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
}
