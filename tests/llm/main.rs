//! The LLM client against a real HTTP server on 127.0.0.1 that answers from
//! a script, through the real reqwest stack.

#[path = "../support/mod.rs"]
mod support;

mod answers;
mod calls;
mod fallbacks;
mod final_errors;
mod retries;
mod timeouts;
