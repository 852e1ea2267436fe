//! The layout and the frame: every pane and the open modal, drawn from
//! `&AppState` alone.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Span;
use ratatui::widgets::{Block, BorderType, Borders};
use ratatui::Frame;

use super::app::{AppState, Pane};
use super::theme::Theme;
use super::{elements, log, modals, page, reflection, sessions, sitemap_tree, status, task};

/// Where each pane goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    /// The element listing (left, top).
    pub elements: Rect,
    /// The reflection (right, top).
    pub reflection: Rect,
    /// The sitemap tree (right, below the reflection); empty while the
    /// page pane is shown.
    pub sitemap: Rect,
    /// The page pane (right, above the reflection); empty while hidden.
    pub page: Rect,
    /// The action log (below both).
    pub log: Rect,
    /// The task input.
    pub task: Rect,
    /// The status line.
    pub status: Rect,
    /// The key hints, or the `:` command line while it is open.
    pub hints: Rect,
}

/// The layout for a terminal area. Pure, so the update can know how many
/// rows each list shows without drawing.
pub fn areas(area: Rect) -> Areas {
    areas_with(area, false)
}

/// The layout with the page pane shown or not. Shown, it takes the top of
/// the right column and the sitemap tree gives way.
pub fn areas_with(area: Rect, page: bool) -> Areas {
    let [main, task, status, hints] = Layout::vertical([
        Constraint::Min(6),
        Constraint::Length(3),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let [top, log] = Layout::vertical([Constraint::Percentage(62), Constraint::Min(4)]).areas(main);
    let [elements, right] =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(top);
    let (page, reflection, sitemap) = if page {
        let [page, reflection] =
            Layout::vertical([Constraint::Percentage(65), Constraint::Percentage(35)]).areas(right);
        (page, reflection, Rect::default())
    } else {
        let [reflection, sitemap] =
            Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(right);
        (Rect::default(), reflection, sitemap)
    };
    Areas {
        elements,
        reflection,
        sitemap,
        page,
        log,
        task,
        status,
        hints,
    }
}

/// Draws the whole frame.
pub fn draw(frame: &mut Frame, state: &AppState) {
    let area = frame.area();
    frame.buffer_mut().set_style(area, state.theme.text());
    let a = areas_with(area, state.picture.visible);
    elements::draw(frame, a.elements, state);
    reflection::draw(frame, a.reflection, state);
    if state.picture.visible {
        page::draw(frame, a.page, state);
    } else {
        sitemap_tree::draw(frame, a.sitemap, state);
    }
    log::draw(frame, a.log, state);
    task::draw(frame, a.task, state);
    status::draw(frame, a.status, state);
    if state.command_line.is_some() {
        task::draw_command_line(frame, a.hints, state);
    } else {
        status::draw_hints(frame, a.hints, state);
    }
    if state.sessions.is_some() {
        sessions::draw(frame, sessions::view_area(area), state);
    }
    modals::draw(frame, state);
}

/// The bordered block every pane sits in; the focused pane's border and
/// title stand out.
pub fn pane_block<'a>(title: String, pane: Pane, state: &AppState) -> Block<'a> {
    let focused = state.focus == pane && state.modal.is_none() && state.command_line.is_none();
    titled_block(title, focused, &state.theme)
}

/// A bordered block with a title.
pub fn titled_block<'a>(title: String, focused: bool, theme: &Theme) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(theme.border(focused))
        .title(Span::styled(format!(" {title} "), theme.title(focused)))
}

/// Cuts `text` to at most `width` characters, marking the cut with `…`.
pub fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out: String = text.chars().take(width - 1).collect();
    out.push('…');
    out
}

/// The style of a row: selected or not.
pub fn row_style(selected: bool, theme: &Theme, base: Style) -> Style {
    if selected {
        base.patch(theme.selection())
    } else {
        base
    }
}
