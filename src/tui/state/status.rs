//! What the status line shows: where the run is, the browser, what is
//! loaded, and the latest notice.

use crate::environment::ApprovalMode;
use crate::events::{CacheState, TokenUsage};

/// Where the run is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum RunStatus {
    /// No run yet, or the last one ended.
    #[default]
    Idle,
    /// The agent is working.
    Running,
    /// The agent waits before its next step.
    Paused,
    /// A stop was asked for; the step in flight is ending.
    Stopping,
    /// The model handed the page to the person; the run goes on when
    /// they hand it back.
    HandedOver {
        /// What the person is needed for, in the model's words.
        reason: String,
    },
    /// The run ended.
    Finished {
        /// Whether the task was accomplished.
        success: bool,
    },
}

impl RunStatus {
    /// Whether a run is in progress (running, paused or stopping): what
    /// starts another waits for it to end.
    pub fn is_active(&self) -> bool {
        matches!(
            self,
            RunStatus::Running | RunStatus::Paused | RunStatus::Stopping
        )
    }
}

/// The browser as the status line shows it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BrowserStatus {
    /// Launching.
    #[default]
    Starting,
    /// Up.
    Ready,
    /// Failed to start or went away.
    Failed(String),
}

/// Whether a kind of file (sitemaps, scripts, theme) is loaded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum LoadState {
    /// None given.
    #[default]
    None,
    /// Loaded; how many.
    Loaded(usize),
    /// The last load failed (file:line:column: message); the last good
    /// version stays in use.
    Failed(String),
}

/// A message in the status line until the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// Whether it reports a failure.
    pub error: bool,
    /// The words.
    pub text: String,
}

/// What the status line shows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StatusInfo {
    /// The page URL.
    pub url: String,
    /// The step being worked on (0 before the first).
    pub step: usize,
    /// The step limit of the run.
    pub max_steps: usize,
    /// The model, or empty when none is configured.
    pub model: String,
    /// When the person is asked.
    pub approval: ApprovalMode,
    /// Tokens used by this session's runs.
    pub tokens: TokenUsage,
    /// Where the run is.
    pub run: RunStatus,
    /// The browser.
    pub browser: BrowserStatus,
    /// Sitemaps.
    pub sitemaps: LoadState,
    /// Recipe scripts.
    pub scripts: LoadState,
    /// A theme file that failed to load (the last good theme stays).
    pub theme_error: Option<String>,
    /// The latest notice.
    pub notice: Option<Notice>,
    /// What keeps sign-ins (`profile DIR`, `state FILE`); `None` for a
    /// fresh profile.
    pub sign_in: Option<String>,
    /// What the task cache did for the latest run (`cache: hit`), when it
    /// was used.
    pub cache: Option<CacheState>,
    /// The model call being waited on, while it is.
    pub waiting: Option<ModelWait>,
}

/// A model call being waited on, as the last tick told it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ModelWait {
    /// The request waited on, from 1.
    pub attempt: u32,
    /// The most requests the call makes, as far as is known now.
    pub max_attempts: u32,
    /// Seconds since the request was sent.
    pub seconds: u64,
}
