//! `webagent test` run as a QA engineer runs it: the real binary on suite
//! files, against pages this test serves on 127.0.0.1. The binary attaches
//! to this binary's one Chromium (`--connect`), which also exercises the
//! per-worker connection a browser pool gets; the demo suite launches its
//! own. Needs Chromium; without it the first test fails with the command
//! that installs it.

#[path = "../support/mod.rs"]
mod support;

mod cases;
mod isolation;
mod outcomes;
mod pool;
mod pooled;
mod stopping;
