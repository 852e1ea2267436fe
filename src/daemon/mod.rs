//! Named sessions that outlive a command: where a session's files live and
//! how a command talks to the process that holds it.
//!
//! `webagent session start NAME` leaves a process behind that keeps a
//! browser, a tab, the configuration, the secrets and a trace. Later
//! commands (`observe --session NAME`, `exec --session NAME`, …) reach it
//! over a Unix socket in a folder only its user may enter, send one JSON
//! line and read one back: what to print and the exit code. The client
//! side is plain blocking I/O, so a command that only forwards starts no
//! runtime and no browser.
//!
//! This module knows the files and the wire, nothing of the commands: the
//! session process (in `cli::session`) answers each request by running the
//! same code the one-shot command runs.

mod attach;
mod files;
mod wire;

pub use attach::{Attachment, DETACHED};
pub use files::{run_dir, valid_name, SessionFiles, SessionMeta};
pub use wire::{call, open, News, Picture, Reply, Request, Says, SessionStatus, Unreachable};
