//! The frame: every pane and the open modal, drawn from `&AppState`
//! alone, each where [`super::layout`] places it.

use ratatui::Frame;

use super::layout::{areas_with, sessions_area};
use super::state::AppState;
use super::{
    debugger, element_detail, elements, log, modals, page, recipe_pane, reflection, sessions,
    sitemap_tree, status, task,
};

/// Draws the whole frame.
pub fn draw(frame: &mut Frame, state: &AppState) {
    let area = frame.area();
    frame.buffer_mut().set_style(area, state.theme.text());
    let a = areas_with(area, state.picture.visible);
    elements::draw(frame, a.elements, state);
    // A recording's recipe takes the sitemap's place, or the
    // reflection's while the page pane is shown.
    let recipe = match state.picture.visible {
        true => a.reflection,
        false => a.sitemap,
    };
    if state.recording.is_some() && state.picture.visible {
        recipe_pane::draw(frame, recipe, state);
    } else {
        reflection::draw(frame, a.reflection, state);
    }
    if state.picture.visible {
        page::draw(frame, a.page, state);
    } else if state.recording.is_some() {
        recipe_pane::draw(frame, recipe, state);
    } else {
        sitemap_tree::draw(frame, a.sitemap, state);
    }
    // A debugged recipe's source and variables go over the reflection
    // and the sitemap.
    debugger::draw(frame, state);
    log::draw(frame, a.log, state);
    task::draw(frame, a.task, state);
    status::draw(frame, a.status, state);
    if state.command_line.is_some() {
        task::draw_command_message(frame, a.hints, state);
        task::draw_command_line(frame, a.hints, state);
    } else {
        status::draw_hints(frame, a.hints, state);
    }
    if state.sessions.is_some() {
        sessions::draw(frame, sessions_area(area), state);
    }
    modals::draw(frame, state);
    element_detail::draw(frame, state);
}
