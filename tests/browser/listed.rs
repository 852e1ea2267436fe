//! Picking what a test looks at out of an observation: the listed texts,
//! the element with a text, and the first element a test's check accepts.

use webagent::dom::{InteractiveElement, PageState};

/// The listed elements' texts, in order.
pub(crate) fn texts(state: &PageState) -> Vec<String> {
    state.elements.iter().map(|e| e.text.clone()).collect()
}

/// The listed element whose text is exactly `text`.
pub(crate) fn find<'a>(state: &'a PageState, text: &str) -> Option<&'a InteractiveElement> {
    state.elements.iter().find(|e| e.text == text)
}

/// The first listed element `pick` accepts; the test fails with the
/// listing when none does.
pub(crate) fn line_of(
    state: &PageState,
    pick: impl Fn(&InteractiveElement) -> bool,
) -> &InteractiveElement {
    state
        .elements
        .iter()
        .find(|e| pick(e))
        .unwrap_or_else(|| panic!("no such element in\n{}", state.listing))
}
