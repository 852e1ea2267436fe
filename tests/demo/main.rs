//! The Acme demo site, as a person and an agent meet it: over plain HTTP
//! (sign-in, gates, order rules, filters, settings) and in a real Chromium
//! through webagent's own observer and executor. One runtime and one
//! browser for the whole binary; every test starts its own site so the
//! orders one test ships are not another's.
//!
//! Without Chromium the browser tests fail with the install command; they
//! never skip.

#[path = "../support/mod.rs"]
mod support;

mod cli;
mod client;
mod http;
mod in_browser;
