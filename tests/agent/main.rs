//! The agent end to end: the real Chromium on pages this test serves on
//! 127.0.0.1, and the real LLM client talking to a scripted
//! chat-completions server. One browser for the whole binary; each test
//! opens its own tab and its own model server.
//!
//! Without Chromium these tests fail with the install command; they never
//! skip.

#[path = "../support/mod.rs"]
mod support;

mod answers;
mod by_hand;
mod command;
mod extraction;
mod fence;
mod gate;
mod lists;
mod model;
mod run;
mod scripted;
mod shop;
mod wall;
