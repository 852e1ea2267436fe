//! A page whose renderer stopped answering: a script spinning in a loop
//! (`while (true) {}`) holds the renderer's main thread, so every call into
//! the page (an evaluation, an observation, a load in the same process)
//! waits out its whole time limit, and reloading the tab does not help.
//! The only way on is to stop that renderer, as a real crash would.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::CrashParams;
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;

use super::Tab;
use crate::browser::error::BrowserError;

/// How long the crash command is given: it is never answered (the
/// renderer that would answer it dies), so this is only the time it
/// takes to be sent.
const CRASH_SEND: Duration = Duration::from_millis(500);

impl Tab {
    /// Whether the page's renderer gives no answer to a trivial
    /// evaluation within `limit`. Any answer counts, an error too (a
    /// document being replaced, a closed tab): only silence means hung.
    pub async fn hung(&self, limit: Duration) -> bool {
        let probe = EvaluateParams::new("1");
        let answer = self
            .with_timeout(
                "checking that the page answers",
                limit,
                self.page.execute(probe),
            )
            .await;
        matches!(answer, Err(BrowserError::Timeout { .. }))
    }

    /// Stops the tab's renderer (`Page.crash`): the tab stays, with a
    /// crashed page, and the spinning script is gone with its process.
    pub async fn crash_renderer(&self) {
        let crash = self.page.execute(CrashParams::default());
        if let Ok(Err(error)) = tokio::time::timeout(CRASH_SEND, crash).await {
            tracing::debug!(%error, "crashing a renderer that stopped answering");
        }
    }
}
