//! A past session shown read-only in the usual panes: the log lists its
//! steps, and the step under the log's cursor fills the listing, the
//! reflection and the page pane as they were. The live session's panes
//! are put aside meanwhile and come back when the replay closes.
//!
//! This file holds the replay's own keys, over the panes' keys; what a
//! replay shows is state ([`ReplayData`], re-exported here where callers
//! have always found it), and the panes draw it.

use crossterm::event::KeyCode;

use super::keys::{Binding, Command, KeyBinding, KeyContext};

pub use super::state::{Replay, ReplayData, ReplayRow};

/// The replay's own keys, over the panes' keys.
pub const KEYS: &[Binding] = &[
    Binding::new(
        KeyContext::Replay,
        KeyBinding::plain(KeyCode::Esc),
        Command::Cancel,
        "back to the list of sessions",
    )
    .hinted(),
    Binding::new(
        KeyContext::Replay,
        KeyBinding::char('E'),
        Command::ExportSession,
        "export this session as a recipe",
    )
    .hinted(),
    Binding::new(
        KeyContext::Replay,
        KeyBinding::char('r'),
        Command::Resume,
        "resume its run",
    )
    .hinted(),
    Binding::new(
        KeyContext::Replay,
        KeyBinding::char('R'),
        Command::RunAgain,
        "run its task again, fresh, from its first page",
    )
    .hinted(),
];
