//! The observation against a real Chromium, on pages this test serves on
//! 127.0.0.1. One browser for the whole binary (started on first use, in a
//! static with its own runtime); each test opens its own tab.
//!
//! Without Chromium these tests fail with the install command; they never
//! skip.

#[path = "../support/mod.rs"]
mod support;

mod band;
mod names;
mod observer;
mod pictures;
mod session;
mod visibility;

use webagent::dom::{InteractiveElement, PageState};

fn texts(state: &PageState) -> Vec<String> {
    state.elements.iter().map(|e| e.text.clone()).collect()
}

fn find<'a>(state: &'a PageState, text: &str) -> Option<&'a InteractiveElement> {
    state.elements.iter().find(|e| e.text == text)
}

fn line_of(state: &PageState, pick: impl Fn(&InteractiveElement) -> bool) -> &InteractiveElement {
    state
        .elements
        .iter()
        .find(|e| pick(e))
        .unwrap_or_else(|| panic!("no such element in\n{}", state.listing))
}
