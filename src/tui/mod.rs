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
//!
//! The files stand in floors, each importing only those below it:
//! - at the bottom, what everything uses: [`state`] (every view type),
//!   [`layout`] (where things sit), [`keys`] (the key types),
//!   [`line_commands`] (the `:` line's own commands), [`theme`], [`text`]
//!   and [`error`];
//! - the panes, one file each, drawn from `&AppState` with [`widgets`],
//!   each declaring its own keys;
//! - above them [`keymap`], which gathers the panes' keys, and [`draw`],
//!   which draws the whole frame;
//! - then [`event`], [`mod@update`], the loop ([`event_loop`]), the
//!   [`terminal`] and the [`services`].

pub mod debugger;
pub mod draw;
pub mod element_detail;
pub mod elements;
pub mod error;
pub mod event;
pub mod event_loop;
pub mod inspector;
pub mod keymap;
pub mod keys;
pub mod layout;
pub mod line_commands;
pub mod log;
pub mod modals;
pub mod page;
pub mod recipe_pane;
pub mod reflection;
pub mod replay;
pub mod services;
pub mod sessions;
pub mod sitemap_tree;
pub mod state;
pub mod status;
pub mod task;
pub mod terminal;
pub mod text;
pub mod theme;
pub mod update;
pub mod widgets;

/// The state's former name: `tui::app::LogEntry` and the like still work.
pub use self::state as app;

pub use error::{
    BrowserFailure, ExportError, ResumeReadError, SessionExportError, TraceListError, TuiError,
};
pub use event::{AppEvent, Effect};
pub use event_loop::{App, EffectHandler};
pub use keys::Keymap;
pub use state::{AppState, Pane};
pub use theme::{Theme, ThemeError};
pub use update::update;
