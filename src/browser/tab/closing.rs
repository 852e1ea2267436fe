//! A tab that closes. A popup's page often closes its own window (a
//! lookup that hands its value to the page that opened it, an "add
//! another" form answered with a page calling `window.close()`), and a
//! closed tab is not a dead browser: its calls end at once with
//! [`BrowserError::TabClosed`] instead of waiting out their time limit, so
//! an action's settling ends with the tab and the driver can go back to
//! the tab that opened it.
//!
//! Two things tell: the browser's `Target.targetDestroyed` for the tab,
//! and the tab's channel found gone while the browser still runs (the CDP
//! client drops a tab's channel only when its target was destroyed; when
//! the browser dies, the session's status says so first).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::target::EventTargetDestroyed;
use chromiumoxide::Browser;
use futures_util::StreamExt;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::Tab;
use crate::browser::connection::SessionStatus;
use crate::browser::error::BrowserError;

/// Sets `closed` when the browser destroys `target`. `None` when the
/// browser's events could not be had (the tab's channel found gone still
/// tells).
pub(super) async fn watch_closing(
    browser: &Browser,
    target: String,
    closed: Arc<watch::Sender<bool>>,
) -> Option<JoinHandle<()>> {
    let mut destroyed = match browser.event_listener::<EventTargetDestroyed>().await {
        Ok(destroyed) => destroyed,
        Err(error) => {
            tracing::debug!(%error, "no target events; a closed tab shows when its calls fail");
            return None;
        }
    };
    Some(tokio::spawn(async move {
        while let Some(event) = destroyed.next().await {
            if *event.target_id.inner() == target {
                closed.send_replace(true);
                return;
            }
        }
    }))
}

impl Tab {
    /// Whether the tab was closed: by its own page (`window.close()`), by
    /// webagent, or from outside.
    pub fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    /// Waits up to `limit` for the browser to destroy the tab (after a
    /// close asked for, which the browser answers before the tab is gone);
    /// whether it did.
    pub(crate) async fn closed_within(&self, limit: Duration) -> bool {
        let mut closed = self.closed.subscribe();
        let waited = tokio::time::timeout(limit, closed.wait_for(|closed| *closed)).await;
        matches!(waited, Ok(Ok(_)))
    }

    /// Runs a call on this tab's page, ending it as soon as the tab closes:
    /// a command sent to a page that is going away gets no answer.
    pub(super) async fn unless_closed<T>(
        &self,
        what: &str,
        call: impl Future<Output = Result<T, BrowserError>>,
    ) -> Result<T, BrowserError> {
        let gone = || BrowserError::TabClosed {
            what: what.to_string(),
        };
        if self.is_closed() {
            return Err(gone());
        }
        let mut closed = self.closed.subscribe();
        tokio::select! {
            answer = call => match answer {
                Err(BrowserError::Disconnected(reason)) => {
                    if self.status() != SessionStatus::Running {
                        return Err(BrowserError::Disconnected(reason));
                    }
                    tracing::debug!(%reason, "the tab's channel is gone while the browser runs");
                    self.closed.send_replace(true);
                    Err(gone())
                }
                other => other,
            },
            Ok(_) = closed.wait_for(|closed| *closed) => Err(gone()),
        }
    }
}
