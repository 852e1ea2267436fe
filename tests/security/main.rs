//! Allowed domains and staying up, against a real Chromium and pages this
//! test serves on 127.0.0.1.
//!
//! Two page servers play the two sides: `home` (allowed by its exact
//! origin) and `away` (another port on 127.0.0.1, so refused). `away`
//! counts every request it gets, so "did not load" means the blocked host
//! never saw the request, not just that the page looks unchanged. One
//! shared browser for the binary; the killed-Chromium test runs
//! `webagent run`, which starts its own.

#[path = "../support/mod.rs"]
mod support;

mod border;
mod bound;
mod hostile;
mod run;
mod secrets;
mod sides;
mod staying_up;
