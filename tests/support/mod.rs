//! Set-up the test binaries share, written once: the binary's browser and
//! runtime, pages, tabs and acting on them, waiting, scratch folders, the
//! `webagent` command and the processes it starts, a run's events, the
//! scripted model server, tmux panes, and reading a listing.
//!
//! A binary pulls the whole tree in with `mod support;` (from
//! `tests/NAME/main.rs`: `#[path = "../support/mod.rs"] mod support;`)
//! and uses the part it needs.

// Each binary compiles all of support and uses only part of it, so the
// rest would warn as dead code there. Allowing it at the top of shared
// test support is the usual Rust idiom; the lint still runs on the tests.
#![allow(dead_code)]

pub mod chromium;
pub mod cli;
pub mod events;
pub mod listing;
pub mod llm_server;
pub mod pages;
pub mod processes;
pub mod scratch;
pub mod tab;
pub mod tmux;
pub mod wait;
