//! The pieces every pane and dialog is drawn with: the bordered block
//! (brighter for the focus), a selected row's style, a dialog's frame, a
//! labelled line and a footer of keys generated from the keymap.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear};
use ratatui::Frame;

use super::keys::KeyContext;
use super::state::{AppState, Pane};
use super::theme::Theme;

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

/// The style of a row: selected or not.
pub fn row_style(selected: bool, theme: &Theme, base: Style) -> Style {
    if selected {
        base.patch(theme.selection())
    } else {
        base
    }
}

/// Clears `area` for a dialog titled `title` and returns the space inside
/// its border.
pub fn open_modal(frame: &mut Frame, area: Rect, title: String, theme: &Theme) -> Rect {
    frame.render_widget(Clear, area);
    let block = titled_block(title, true, theme).style(
        Style::default()
            .bg(theme.palette.modal_background)
            .fg(theme.palette.text),
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    inner
}

/// The footer of a modal: its keys, from the keymap.
pub fn footer(state: &AppState, context: KeyContext) -> Line<'static> {
    let theme = &state.theme;
    let mut spans = Vec::new();
    for (keys, description) in state.keymap.hints(context) {
        spans.push(Span::styled(keys, theme.key()));
        spans.push(Span::styled(format!(" {description}  "), theme.muted()));
    }
    Line::from(spans)
}

/// A line with a bold, muted label and a value in its own style.
pub fn label_line(
    label: &'static str,
    value: String,
    theme: &Theme,
    value_style: Style,
) -> Line<'static> {
    Line::from(vec![
        Span::styled(
            format!("{label:<8}"),
            Style::default()
                .fg(theme.palette.muted)
                .add_modifier(Modifier::BOLD),
        ),
        Span::styled(value, value_style),
    ])
}
