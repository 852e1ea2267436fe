//! The CDP connection as every room of the browser sees it: whether it
//! still answers, and one call over it with a time limit. The session owns
//! the connection and the tabs share it; both take these from here.

use std::time::Duration;

use chromiumoxide::error::CdpError;
use tokio::sync::watch;

use super::error::BrowserError;

/// Whether the browser behind a session still answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionStatus {
    /// Connected; calls go through.
    Running,
    /// The browser closed, crashed or the connection dropped; the text says
    /// which. Calls fail with [`BrowserError::Disconnected`] until
    /// [`super::BrowserSession::relaunch`].
    Disconnected(String),
}

/// Runs one CDP future with a time limit, turning a dead connection into
/// [`BrowserError::Disconnected`].
pub(crate) async fn call<T>(
    what: &str,
    limit: Duration,
    status: &watch::Receiver<SessionStatus>,
    fut: impl std::future::Future<Output = Result<T, CdpError>>,
) -> Result<T, BrowserError> {
    if let SessionStatus::Disconnected(reason) = &*status.borrow() {
        return Err(BrowserError::Disconnected(reason.clone()));
    }
    let started = std::time::Instant::now();
    match tokio::time::timeout(limit, fut).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => {
            if let SessionStatus::Disconnected(reason) = &*status.borrow() {
                return Err(BrowserError::Disconnected(reason.clone()));
            }
            Err(match err {
                CdpError::ChannelSendError(_) | CdpError::NoResponse => {
                    BrowserError::Disconnected(format!("{what}: {err}"))
                }
                // chromiumoxide's own limits (navigation, requests) can end
                // a call before ours; report the time actually waited.
                CdpError::Timeout => BrowserError::Timeout {
                    what: what.to_string(),
                    after: started.elapsed(),
                },
                other => BrowserError::Cdp {
                    what: what.to_string(),
                    message: other.to_string(),
                },
            })
        }
        Err(_) => Err(BrowserError::Timeout {
            what: what.to_string(),
            after: limit,
        }),
    }
}
