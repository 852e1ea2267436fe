//! Action execution against a real Chromium, on pages this test serves on
//! 127.0.0.1. One browser for the whole binary; each test opens its own tab.
//! Pages record what they saw (clicks, values, events) in `window.seen`,
//! read back from the page's own world, so the assertions are about what the
//! page noticed, not what the executor claims.
//!
//! Without Chromium these tests fail with the install command; they never
//! skip.

#[path = "../support/mod.rs"]
mod support;

mod clicks;
mod exec;
mod navigation;
mod next_listing;
mod pointer;
mod policy;
mod readback;
mod reading;
mod typing;
