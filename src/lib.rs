//! webagent: a terminal workbench for LLM web agents that drive a real
//! Chromium over the Chrome DevTools Protocol.
//!
//! The crate is a library plus the `webagent` binary so that tests drive the
//! same code the binary runs. Each module owns one part of the product; see
//! the module map in docs/internals.md.

pub mod actions;
pub mod agent;
pub mod bench;
pub mod browser;
pub mod cli;
pub mod clock;
pub mod config;
pub mod daemon;
pub mod defaults;
pub mod demo;
pub mod dom;
pub mod environment;
pub mod events;
pub mod fence;
pub mod interrupt;
pub mod llm;
pub mod logging;
pub mod markup;
pub mod mcp;
pub mod script;
pub mod secrets;
pub mod serve;
pub mod session;
pub mod sitemap;
pub mod spelling;
pub mod suite;
pub mod totp;
pub mod tui;
pub mod urls;
pub mod vision;
pub mod watch;
pub mod words;
pub mod yaml;
