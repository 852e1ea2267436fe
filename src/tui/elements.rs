//! The live element listing: what the model is shown, one element a row,
//! children indented, new elements marked `*` in their own colour. Only
//! the visible rows are formatted, so a listing of 20,000 elements scrolls
//! as fast as one of 20.

use crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::dom::{element_line, InteractiveElement};

use super::keys::{Binding, Command, KeyBinding, KeyContext};
use super::state::{AppState, BrowserStatus, Modal, Pane, Replay};
use super::widgets::{pane_block, row_style};

/// Indentation stops growing here so deep trees still show their text.
const MAX_INDENT: usize = 12;

/// The listing's own keys (the cursor keys are shared by every list).
pub const KEYS: &[Binding] = &[
    Binding::new(
        KeyContext::Elements,
        KeyBinding::plain(KeyCode::Enter),
        Command::Submit,
        "outline the element in the page again",
    ),
    Binding::new(
        KeyContext::Picking,
        KeyBinding::plain(KeyCode::Enter),
        Command::Submit,
        "use this element for the action",
    )
    .hinted(),
    Binding::new(
        KeyContext::Picking,
        KeyBinding::plain(KeyCode::Esc),
        Command::Cancel,
        "back to the approval",
    )
    .hinted(),
];

/// One row of the listing as drawn: indentation plus the listing line.
pub fn row_text(element: &InteractiveElement) -> String {
    let indent = "  ".repeat(element.depth.min(MAX_INDENT));
    format!("{indent}{}", element_line(element))
}

/// Draws the listing pane.
pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    if let Some(replay) = &state.replay {
        draw_recorded(frame, area, state, replay);
        return;
    }
    let theme = &state.theme;
    let picking = matches!(&state.modal, Some(Modal::Approval(m)) if m.picking);
    let elements = state
        .page
        .as_ref()
        .map(|p| p.elements.as_slice())
        .unwrap_or(&[]);
    let new_count = elements.iter().filter(|e| e.is_new).count();
    let mut title = if picking {
        "Pick an element (Enter to use, Esc to go back)".to_string()
    } else if state.page.is_none() {
        "Elements".to_string()
    } else {
        format!("Elements {} ({} new)", elements.len(), new_count)
    };
    if !elements.is_empty() {
        title.push_str(&format!(
            " {}/{}",
            state.elements.cursor + 1,
            elements.len()
        ));
    }
    // Several tabs: say which one the listing is of (switch_tab and
    // close_tab take these numbers).
    if let Some(page) = state.page.as_ref().filter(|p| p.tabs.len() > 1) {
        let current = page.tabs.iter().position(|t| t.current).unwrap_or(0);
        title.push_str(&format!(" · tab {current} of {}", page.tabs.len()));
    }
    let mut block = pane_block(title, Pane::Elements, state);
    if picking {
        block = block.border_style(theme.fg(theme.palette.warn));
    }
    let inner_rows = usize::from(area.height.saturating_sub(2));
    let lines: Vec<Line> = if elements.is_empty() {
        let hint = match (&state.page, &state.status.browser) {
            (_, BrowserStatus::Failed(why)) => format!("no browser: {why}"),
            (None, _) => "waiting for the first observation…".to_string(),
            (Some(_), _) => "no interactive elements in view".to_string(),
        };
        vec![Line::from(Span::styled(hint, theme.muted()))]
    } else {
        let start = state.elements.offset.min(elements.len());
        let end = (start + inner_rows).min(elements.len());
        elements[start..end]
            .iter()
            .enumerate()
            .map(|(i, element)| {
                let selected = start + i == state.elements.cursor;
                let base = if element.is_new {
                    theme
                        .fg(theme.palette.new_element)
                        .add_modifier(Modifier::BOLD)
                } else {
                    Style::default().fg(theme.palette.text)
                };
                Line::from(Span::styled(
                    row_text(element),
                    row_style(selected, theme, base),
                ))
            })
            .collect()
    };
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// The listing a replayed step saw, line by line as the model read it.
fn draw_recorded(frame: &mut Frame, area: Rect, state: &AppState, replay: &Replay) {
    let theme = &state.theme;
    let lines = &replay.listing;
    let step = replay
        .shown
        .and_then(|row| state.log.get(row))
        .and_then(|e| e.step)
        .map(|n| format!(" at step {n}"))
        .unwrap_or_default();
    let mut title = format!("Elements as recorded{step}");
    if !lines.is_empty() {
        title.push_str(&format!(" {}/{}", state.elements.cursor + 1, lines.len()));
    }
    let block = pane_block(title, Pane::Elements, state);
    let inner_rows = usize::from(area.height.saturating_sub(2));
    let rows: Vec<Line> = if lines.is_empty() {
        vec![Line::from(Span::styled(
            "no listing was recorded for this row",
            theme.muted(),
        ))]
    } else {
        let start = state.elements.offset.min(lines.len());
        let end = (start + inner_rows).min(lines.len());
        lines[start..end]
            .iter()
            .enumerate()
            .map(|(i, line)| {
                let depth = line.chars().take_while(|c| *c == '\t').count();
                let text = line.trim_start_matches('\t');
                let base = if text.starts_with('*') {
                    theme
                        .fg(theme.palette.new_element)
                        .add_modifier(Modifier::BOLD)
                } else {
                    Style::default().fg(theme.palette.text)
                };
                let indent = "  ".repeat(depth.min(MAX_INDENT));
                let selected = start + i == state.elements.cursor;
                Line::from(Span::styled(
                    format!("{indent}{text}"),
                    row_style(selected, theme, base),
                ))
            })
            .collect()
    };
    frame.render_widget(Paragraph::new(rows).block(block), area);
}
