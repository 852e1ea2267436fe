//! What can go wrong in the workbench, typed: its own failure
//! ([`TuiError`]) and the failures the services report to the loop inside
//! an [`super::event::AppEvent`] (the browser, an export, the sessions
//! directory, a resume). Each keeps the words the person has always read;
//! a caller matches on the variant instead of reading the text.
//!
//! They sit below the event type and the services both, so a service can
//! build one and the update can show it without either knowing the other.

use std::path::PathBuf;

use crate::events::TraceReadError;
use crate::session::{ResumeError, SessionError};

use super::theme::ThemeError;

/// What can go wrong in the workbench itself (browser and model failures
/// are shown in the panes, not raised).
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// A theme could not be found, read, parsed or watched.
    #[error(transparent)]
    Theme(#[from] ThemeError),
    /// The terminal could not be set up, drawn to or restored.
    #[error("terminal: {0}; is this an interactive terminal?")]
    Terminal(#[from] std::io::Error),
}

/// Why the browser is not there for the workbench.
#[derive(Debug, thiserror::Error)]
pub enum BrowserFailure {
    /// The session (and its browser) did not start.
    #[error(transparent)]
    Start(#[from] SessionError),
    /// The browser went away after it started.
    #[error("{why}")]
    Gone {
        /// What the browser's connection said as it closed.
        why: String,
    },
}

/// Why a session could not be exported as a recipe.
#[derive(Debug, thiserror::Error)]
pub enum SessionExportError {
    /// No successful page action was recorded yet.
    #[error(
        "nothing to replay yet: run actions (`:`), a task or a recipe first; only successful \
         page actions are exported"
    )]
    NothingToReplay,
    /// The directory could not be made.
    #[error("could not create {}: {source}", dir.display())]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A file of that name is there already: an export never replaces
    /// one (a recipe of the same name would clash with it when loaded).
    #[error("{} exists already; export under another name", path.display())]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// The file could not be written.
    #[error("could not write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

/// Why an export (of this session, or of a past one) did not happen.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The past session's trace does not read.
    #[error(transparent)]
    Trace(#[from] TraceReadError),
    /// The recipe could not be made or written.
    #[error(transparent)]
    Session(#[from] SessionExportError),
}

/// The sessions directory could not be listed.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", dir.display())]
pub struct TraceListError {
    /// The directory.
    pub dir: PathBuf,
    /// What the system said.
    pub source: std::io::Error,
}

/// Why no run could be read to resume.
#[derive(Debug, thiserror::Error)]
pub enum ResumeReadError {
    /// The sessions directory could not be listed to find the latest
    /// unfinished run.
    #[error(transparent)]
    List(#[from] TraceListError),
    /// Every run in the sessions directory ended.
    #[error(
        "no unfinished run in {}: name a trace (:resume FILE), or open the sessions                          view (S)",
        dir.display()
    )]
    NoUnfinished {
        /// The sessions directory.
        dir: PathBuf,
    },
    /// The trace named (or found) cannot be resumed.
    #[error(transparent)]
    Plan(#[from] ResumeError),
}
