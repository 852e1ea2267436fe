//! The terminal workbench without a terminal: whole-screen renders of every
//! pane and modal at 80×24 and 160×48 compared with snapshot files, and the
//! event loop fed keys and fake service events, run until idle with no
//! sleeps.
//!
//! Snapshots live in tests/snapshots/tui/. A missing snapshot is written and
//! the test fails so the new screen gets looked at; `UPDATE_SNAPSHOTS=1`
//! rewrites them all after an intended change.

#[path = "../support/mod.rs"]
mod support;

mod approval;
mod approval_in_terminal;
mod bench;
mod command_line;
mod conversation;
mod conversation_in_terminal;
mod debugger_in_terminal;
mod debugger_keys;
mod event_loop;
mod picker;
mod recording_in_terminal;
mod renders;
mod services;
mod terminal;
