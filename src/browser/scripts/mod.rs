//! The scripts webagent puts into a page, compiled into the binary.
//!
//! The observer and the action helper are each one function expression the
//! page evaluates whole; they are kept here in parts by concern and joined
//! at compile time, so the page receives one script, part after part in
//! the order listed. A part is a stretch of that one function, not a
//! script of its own: it may use what an earlier part declared. A part
//! both scripts need the same lives in `shared/` and is joined into each.
//!
//! Both the tab (which installs them into each new document) and the
//! executor (which installs the helper again into a document that lacks
//! it) read them from this room, below either of them.

/// The observer, installed into each document's isolated world: it walks
/// the page and lists its elements, and answers calls on listed elements.
pub(crate) const OBSERVER_JS: &str = concat!(
    // The per-document state, constants and tree helpers.
    include_str!("observer/setup.js"),
    // Walking up across shadow roots and frames, and deep hit tests
    // (shared with the action helper).
    include_str!("shared/composed_tree.js"),
    // What an element's line shows: attributes, labels, field values.
    include_str!("observer/attributes.js"),
    // Names for elements that show no words.
    include_str!("observer/names.js"),
    // Icons inside text, and fields as the page text shows them.
    include_str!("observer/icons.js"),
    // Controls repeated once per row, tied to their row's words.
    include_str!("observer/rows.js"),
    // Hit-test points, click listeners and visibility.
    include_str!("observer/hits.js"),
    // The walk itself: `observe`.
    include_str!("observer/walk.js"),
    // Reaching listed elements again, selectors, and the world's entry.
    include_str!("observer/calls.js"),
);

/// The action helper, installed next to the observer in each document's
/// world: it checks and aims at targets, fills fields, selects text,
/// drags, draws overlays and says when the page has settled.
pub(crate) const ACT_JS: &str = concat!(
    // Shared helpers: boxes, visibility, descriptions.
    include_str!("action_helper/setup.js"),
    // Walking up across shadow roots and frames, and deep hit tests
    // (shared with the observer).
    include_str!("shared/composed_tree.js"),
    // Finding the target and checking it can take the action.
    include_str!("action_helper/target.js"),
    // Filling fields, and values for date, time, colour and range fields.
    include_str!("action_helper/fields.js"),
    // Selecting a passage of text with the mouse.
    include_str!("action_helper/text_selection.js"),
    // The operations on one element the executor runs.
    include_str!("action_helper/ops.js"),
    // Highlights, borders, spotlights and subtitles over the page.
    include_str!("action_helper/overlays.js"),
    // Settling after an action, and the first look at a new document.
    include_str!("action_helper/settle.js"),
    // The entry points the executor calls.
    include_str!("action_helper/entry.js"),
);

/// The click-listener hook installed into the page's main world.
pub(crate) const LISTENER_HOOK_JS: &str = include_str!("listeners.js");

/// Records what finds an element again (`args.record`), and finds the one
/// element a recipe step's locators name (`args.locators`): run in the
/// isolated world on an element, by recipes and by the recorder.
pub(crate) const LOCATE_JS: &str = include_str!("locate.js");

/// The recorder, installed into the isolated world of every document
/// while a person's actions are recorded: `locate` in scope, then the
/// listeners that send each action through the recording binding.
pub(crate) const RECORDER_JS: &str = concat!(
    "(() => {\nconst locate = (",
    include_str!("locate.js"),
    ");\n",
    include_str!("recorder.js"),
    "\n})()"
);

/// The mark drawer of annotated screenshots, installed into the isolated
/// world on first use.
pub(crate) const MARKS_JS: &str = include_str!("marks.js");

#[cfg(test)]
mod tests;
