//! What an action caused beyond its page, added to its result: the files
//! it downloaded, and a tab it opened.

use super::tabs::NewTab;
use super::Driver;
use crate::actions::{ActionResult, FailureReason};
use crate::events::Event;

/// How long an action's result waits for the downloads it started.
pub(super) const DOWNLOAD_WAIT: std::time::Duration = std::time::Duration::from_secs(30);
/// How long it waits for a download to be announced after a navigation
/// that brought no document: the announcement comes over the browser's
/// own connection and can trail the page's events.
pub(super) const DOWNLOAD_BEGIN_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

impl Driver {
    /// Adds what `action` caused beyond its page to its result: the
    /// files it downloaded, and a tab it opened (switched to, unless
    /// configured otherwise). A tab whose page the allowed domains
    /// refused makes the action `blocked`.
    pub(super) async fn after_action(
        &mut self,
        result: ActionResult,
        download_mark: Option<u64>,
        documentless_before: u64,
        tabs_before: Option<Vec<crate::dom::TabInfo>>,
        action: &str,
    ) -> ActionResult {
        let mut extra = serde_json::Map::new();
        if let (Some(downloads), Some(mark)) = (self.tab.downloads().cloned(), download_mark) {
            // A navigation the action started that stopped without a
            // document was most likely a download not announced yet.
            if self.tab.navigations_without_document() > documentless_before {
                downloads.begun_since(mark, DOWNLOAD_BEGIN_WAIT).await;
            }
            let done = downloads.since(mark, DOWNLOAD_WAIT).await;
            if !done.is_empty() {
                for d in &done {
                    tracing::info!(file = %d.file.display(), size = d.size, "downloaded");
                    self.report(format!(
                        "downloaded {} ({} bytes, {}, {})",
                        d.file.display(),
                        d.size,
                        d.mime(),
                        d.to_json()["state"].as_str().unwrap_or_default()
                    ));
                }
                extra.insert(
                    "downloads".into(),
                    serde_json::Value::Array(done.iter().map(|d| d.to_json()).collect()),
                );
            }
        }
        let mut refused = None;
        if let Some(before) = tabs_before {
            match self.new_tab_since(&before).await {
                Some(NewTab::Opened(opened)) => {
                    extra.insert("new_tab".into(), opened);
                }
                Some(NewTab::Refused(why)) => refused = Some(why),
                None => {}
            }
        }
        let result = with_extras(result, extra);
        match refused {
            Some(why) => self.popup_blocked(result, action, &why),
            None => result,
        }
    }

    /// `result` of `action` after a tab it opened was refused and closed:
    /// `blocked`, saying so and where the session stays.
    fn popup_blocked(&self, result: ActionResult, action: &str, why: &str) -> ActionResult {
        let stays = match &self.last_url {
            Some(url) => format!("the tab was closed and the session stays on {url}"),
            None => "the tab was closed and the session stays where it was".to_string(),
        };
        match result {
            // The executor saw the refusal already and said what it was.
            ActionResult::Failure {
                reason: FailureReason::Blocked,
                message,
            } => ActionResult::blocked(format!("{message}; {stays}")),
            other => {
                let before = match other {
                    ActionResult::Failure { message, .. } => {
                        format!(" (it also failed: {message})")
                    }
                    ActionResult::Success { .. } => String::new(),
                };
                ActionResult::blocked(format!(
                    "{action} opened a new tab, but {why}{before}; {stays}"
                ))
            }
        }
    }

    /// Tells about the dialogs the page opened and the tab answered that
    /// no action's result listed (its own, while it loaded or between
    /// steps), as one non-fatal `error` event: a page that nags is worth
    /// knowing about, and its dialogs no longer block anything.
    pub(super) fn report_dialogs(&self) {
        let dialogs = self.tab.unreported_dialogs();
        if dialogs.is_empty() {
            return;
        }
        let count = match dialogs.len() {
            1 => "1 dialog".to_string(),
            n => format!("{n} dialogs"),
        };
        let listed: Vec<String> = dialogs.iter().map(|d| d.describe()).collect();
        let text = format!(
            "the page at {} opened {count} outside an action, answered at once: {}",
            self.last_url.as_deref().unwrap_or("the start"),
            listed.join("; ")
        );
        self.report(text.clone());
        if let Some(events) = &self.events {
            events.send(Event::Error {
                error: text,
                fatal: false,
            });
        }
    }

    /// A note in the log file (the action's result carries the facts to
    /// the events, the trace and the workbench).
    pub(super) fn report(&self, text: String) {
        tracing::info!("{text}");
    }
}

/// What an action caused beyond its page, added to its result: to a
/// success's data (a bare value moves under `result`), or to a failure's
/// message.
pub(super) fn with_extras(
    result: ActionResult,
    extra: serde_json::Map<String, serde_json::Value>,
) -> ActionResult {
    if extra.is_empty() {
        return result;
    }
    match result {
        ActionResult::Success { data } => {
            let mut object = match data {
                Some(serde_json::Value::Object(map)) => map,
                Some(other) => {
                    let mut map = serde_json::Map::new();
                    map.insert("result".into(), other);
                    map
                }
                None => serde_json::Map::new(),
            };
            object.extend(extra);
            ActionResult::ok_with(serde_json::Value::Object(object))
        }
        ActionResult::Failure { reason, message } => {
            let text = serde_json::Value::Object(extra).to_string();
            ActionResult::Failure {
                reason,
                message: format!("{message}; meanwhile: {text}"),
            }
        }
    }
}
