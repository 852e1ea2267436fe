//! The terminal workbench: a person types a task or a `:` command and
//! watches, live, what the model sees (the element listing), what it thinks
//! (the reflection), and what it did (the action log).
//!
//! The shape follows the Elm-like loop of helix and yazi:
//! - [`AppState`] holds everything drawn; draw functions take `&AppState`
//!   and cannot change it (one file per pane).
//! - [`update()`] turns one [`AppEvent`] into state changes and a list of
//!   [`Effect`]s; it never waits on the browser, the model or a file.
//! - [`event_loop`] owns the single event receiver, drains it, and draws at
//!   most once per frame; services (browser, agent run, watchers) hold
//!   senders. The input stream is a parameter, so tests feed keys and fake
//!   service events and run until idle without a terminal or sleeps.
//!
//! [`services`] connects effects to the real browser, agent and watchers.

pub mod app;
pub mod draw;
pub mod elements;
pub mod event;
pub mod event_loop;
pub mod keymap;
pub mod log;
pub mod modals;
pub mod page;
pub mod reflection;
pub mod replay;
pub mod services;
pub mod sessions;
pub mod sitemap_tree;
pub mod status;
pub mod task;
pub mod terminal;
pub mod theme;
pub mod update;

use std::path::PathBuf;

pub use app::{AppState, Pane};
pub use event::{AppEvent, Effect};
pub use event_loop::{App, EffectHandler};
pub use keymap::Keymap;
pub use theme::Theme;
pub use update::update;

/// What can go wrong in the workbench itself (browser and model failures
/// are shown in the panes, not raised).
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// A theme file could not be read.
    #[error("{}: could not read the theme: {message}", path.display())]
    ThemeRead {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A theme file is not valid YAML or names unknown roles or colours.
    #[error(transparent)]
    ThemeParse(crate::yaml::YamlError),
    /// `--theme` named neither a file nor a shipped theme.
    #[error("no theme `{0}`: give a file path, or one of dark, light (or a name in themes/)")]
    ThemeNotFound(String),
    /// The theme file cannot be watched for edits.
    #[error("{}: cannot watch the theme for edits: {message}", path.display())]
    ThemeWatch {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The terminal could not be set up, drawn to or restored.
    #[error("terminal: {0}; is this an interactive terminal?")]
    Terminal(#[from] std::io::Error),
}
