//! Everything that can go wrong talking to the browser, in one enum every
//! room of the browser returns. It stands apart from `mod.rs` so that the
//! rooms below (launching, frames, downloads, the tab) take their error
//! from the ground floor instead of reaching up to the folder's face.

use std::path::PathBuf;
use std::time::Duration;

use super::guard::GuardError;
use super::state;

/// The install command printed when no Chromium is found.
pub const INSTALL_HINT: &str = "apt-get update && apt-get install -y chromium";

/// Everything that can go wrong talking to the browser.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// No Chromium executable anywhere webagent looks.
    #[error("no Chromium found (looked at {tried}); install it with `{hint}`, or pass --chrome PATH or set WEBAGENT_CHROME", hint = INSTALL_HINT)]
    ChromeNotFound {
        /// The places that were searched.
        tried: String,
    },
    /// `--chrome` or `WEBAGENT_CHROME` names a file that does not exist.
    #[error("no Chromium executable at {}; fix the path, or install Chromium with `{hint}`", .0.display(), hint = INSTALL_HINT)]
    ChromeMissingAt(PathBuf),
    /// The temporary profile directory could not be created.
    #[error("could not create the browser profile directory {0}: {1}")]
    Profile(PathBuf, std::io::Error),
    /// Another Chromium holds the persistent profile.
    #[error("the profile {} is in use by another Chromium (process {pid}); close that browser or pass another --profile", .dir.display())]
    ProfileInUse {
        /// The profile directory.
        dir: PathBuf,
        /// The process holding its lock.
        pid: u32,
    },
    /// A state file could not be read or written.
    #[error(transparent)]
    State(#[from] state::StateError),
    /// Chromium did not start.
    #[error("Chromium did not start: {0}")]
    Launch(String),
    /// Attaching to a running browser failed.
    #[error("could not attach to the browser at {url}: {reason}")]
    Connect {
        /// The address given with `--connect`.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The browser closed, crashed or the connection dropped.
    #[error("the browser is gone ({0}); relaunch the session")]
    Disconnected(String),
    /// The tab was closed (its own page called `window.close()`, or it was
    /// closed from outside) before or while the call ran; the browser
    /// itself still runs.
    #[error("{what}: the tab was closed")]
    TabClosed {
        /// The call that could not be made.
        what: String,
    },
    /// A CDP call did not answer in time.
    #[error("{what} did not answer within {after:?}")]
    Timeout {
        /// The call that timed out.
        what: String,
        /// Its time limit.
        after: Duration,
    },
    /// Chromium answered a CDP call with an error.
    #[error("{what} failed: {message}")]
    Cdp {
        /// The call that failed.
        what: String,
        /// Chromium's message.
        message: String,
    },
    /// Script run in the page threw or returned something unreadable.
    #[error("script in the page failed: {0}")]
    Script(String),
    /// The element listed under an index is no longer in the page.
    #[error("element {index} is gone: {detail}; observe again to get fresh indices")]
    ElementGone {
        /// The index that was asked for.
        index: usize,
        /// What happened to it.
        detail: String,
    },
    /// The index belongs to an older observation than the latest one.
    #[error("index {index} comes from an older observation ({detail}); use the latest listing")]
    StaleObservation {
        /// The index that was asked for.
        index: usize,
        /// Which observation replaced it.
        detail: String,
    },
    /// The latest observation has no such index.
    #[error("there is no element {index} in the latest listing ({detail})")]
    UnknownIndex {
        /// The index that was asked for.
        index: usize,
        /// The observation's own words.
        detail: String,
    },
    /// A CSS selector the browser could not parse.
    #[error("invalid selector {selector}: {detail}")]
    Selector {
        /// The selector as given.
        selector: String,
        /// The browser's complaint.
        detail: String,
    },
    /// The allowed-domain list refused a navigation.
    #[error("navigation to {url} blocked: {reason}")]
    Blocked {
        /// The refused URL.
        url: String,
        /// Which rule refused it.
        reason: String,
    },
    /// An allowed-domain pattern could not be parsed.
    #[error(transparent)]
    Policy(#[from] GuardError),
    /// The extractor's output did not have the expected shape.
    #[error("could not read the page observation: {0}")]
    Decode(String),
}
