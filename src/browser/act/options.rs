//! The executor's limits and switches.

use std::path::PathBuf;
use std::time::Duration;

use super::settle::SettleOptions;
use crate::browser::tab::ObserveOptions;

/// Limits and switches for executing actions.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecOptions {
    /// How long a click, fill or other element action may keep retrying its
    /// checks before it fails.
    pub action_timeout: Duration,
    /// How long `navigate`, `back`, `forward` and `reload` may take to load.
    pub navigation_timeout: Duration,
    /// What counts as settled after an action.
    pub settle: SettleOptions,
    /// Whether `execute_javascript` may run (it is `blocked` otherwise).
    pub allow_javascript: bool,
    /// Where `screenshot` writes when no path is given.
    pub screenshot_dir: PathBuf,
    /// The most characters of the page's text `extract` reads.
    pub read_limit: usize,
    /// The most characters one part of `read_page` takes, counted as JSON
    /// writes its text (a line break or a quote takes two): a part and the
    /// figures around it fit in what a model reads of a step's result
    /// (4,000 characters, `agent::prompt`).
    pub read_part: usize,
    /// Whether `input_text` types a field's value as key presses (see
    /// [`crate::actions::TYPED_WHOLE`]). Off, the value goes in at once
    /// with no key events, as `input_text` did before it typed keys: the
    /// baseline `webagent bench step` times a long fill against.
    pub type_keys: bool,
    /// Accept `confirm` and `prompt` dialogs instead of dismissing them
    /// (alerts and leave-page prompts are always accepted).
    pub accept_dialogs: bool,
    /// What an accepted `prompt` is answered with (`None`: its default
    /// text).
    pub prompt_text: Option<String>,
    /// The observation a navigation's new document is first looked at
    /// with, as it loads (see [`crate::browser::tab::Tab::first_look`]): the
    /// settings of the observation that follows. `None`: no first look.
    pub first_look: Option<ObserveOptions>,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            action_timeout: Duration::from_secs(5),
            navigation_timeout: Duration::from_secs(30),
            settle: SettleOptions::default(),
            allow_javascript: false,
            screenshot_dir: PathBuf::from(".webagent/screenshots"),
            read_limit: 20_000,
            read_part: 3_000,
            type_keys: true,
            accept_dialogs: false,
            prompt_text: None,
            first_look: None,
        }
    }
}
