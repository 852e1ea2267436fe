//! The observation against a real Chromium, on pages this test serves on
//! 127.0.0.1. One browser for the whole binary (started on first use, in a
//! static with its own runtime); each test opens its own tab.
//!
//! Without Chromium these tests fail with the install command; they never
//! skip.

#[path = "../support/mod.rs"]
mod support;

mod band;
mod field_names;
mod listed;
mod names;
mod observer;
mod pictures;
mod read_parts;
mod session;
mod tall;
mod visibility;
mod whole_text;
