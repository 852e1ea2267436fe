//! Why an action could not be carried out, and the failure reason each
//! cause is reported with.

use crate::actions::{ActionResult, FailureReason};
use crate::browser::error::BrowserError;
use std::path::PathBuf;

/// Why an action could not be carried out. The executor turns every one of
/// these into an [`ActionResult`]; they never reach the caller as errors.
#[derive(Debug, thiserror::Error)]
pub enum ActError {
    /// The page-side checks refused the action (hidden, covered, gone, …).
    #[error("{message}")]
    Refused {
        /// The failure category.
        reason: FailureReason,
        /// What the page-side check found.
        message: String,
        /// Whether waiting could change the outcome.
        retry: bool,
    },
    /// Talking to the browser failed.
    #[error(transparent)]
    Browser(#[from] BrowserError),
    /// A local file could not be read or written.
    #[error("{what} {}: {source}", .path.display())]
    File {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl ActError {
    pub(super) fn refused(reason: FailureReason, message: impl Into<String>) -> ActError {
        ActError::Refused {
            reason,
            message: message.into(),
            retry: false,
        }
    }

    /// The failure reason this error is reported with.
    pub fn reason(&self) -> FailureReason {
        match self {
            ActError::Refused { reason, .. } => *reason,
            ActError::Browser(err) => match err {
                BrowserError::ElementGone { .. }
                | BrowserError::StaleObservation { .. }
                | BrowserError::UnknownIndex { .. } => FailureReason::NotFound,
                BrowserError::Timeout { .. } => FailureReason::Timeout,
                BrowserError::Selector { .. } => FailureReason::InvalidParams,
                BrowserError::Blocked { .. } => FailureReason::Blocked,
                _ => FailureReason::Unknown,
            },
            ActError::File { .. } => FailureReason::Unknown,
        }
    }
}

impl From<ActError> for ActionResult {
    fn from(err: ActError) -> Self {
        ActionResult::fail(err.reason(), err.to_string())
    }
}
