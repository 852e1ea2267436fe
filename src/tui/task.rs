//! The task input and the `:` command line, both tui-textarea fields.

use crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};
use ratatui::Frame;
use tui_textarea::TextArea;

use super::keys::{Binding, Command, KeyBinding, KeyContext};
use super::state::{AppState, Pane, RunStatus};
use super::theme::Theme;
use super::widgets::pane_block;

/// The keys of the task input and the command line; other keys edit text.
pub const KEYS: &[Binding] = &[
    Binding::new(
        KeyContext::Task,
        KeyBinding::plain(KeyCode::Enter),
        Command::Submit,
        "start the task (a follow-up), or tell the running agent",
    )
    .hinted(),
    Binding::new(
        KeyContext::Task,
        KeyBinding::plain(KeyCode::Esc),
        Command::Cancel,
        "back to the panes",
    )
    .hinted(),
    Binding::new(
        KeyContext::CommandLine,
        KeyBinding::plain(KeyCode::Enter),
        Command::Submit,
        "run the action (e.g. click 12, input_text 5 \"hi\")",
    )
    .hinted(),
    Binding::new(
        KeyContext::CommandLine,
        KeyBinding::plain(KeyCode::Tab),
        Command::Complete,
        "complete the action name and show its parameters",
    )
    .hinted(),
    Binding::new(
        KeyContext::CommandLine,
        KeyBinding::plain(KeyCode::Esc),
        Command::Cancel,
        "close the command line",
    )
    .hinted(),
];

/// Shows or hides a field's cursor (a field without the focus shows none).
pub fn set_field_focus(field: &mut TextArea<'static>, focused: bool, theme: &Theme) {
    field.set_cursor_line_style(Style::default());
    field.set_style(Style::default().fg(theme.palette.text));
    field.set_placeholder_style(theme.muted());
    field.set_cursor_style(if focused {
        Style::default().add_modifier(Modifier::REVERSED)
    } else {
        Style::default()
    });
}

/// Draws the task input.
pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let focused = state.focus == Pane::Task;
    let title = match state.status.run {
        // In the field, s and p are letters: the way to the keys is Esc.
        RunStatus::Running | RunStatus::Paused if state.recipe.is_none() && focused => {
            "Message to the agent: Enter sends it (Esc, then s stops, p pauses)".to_string()
        }
        RunStatus::Running | RunStatus::Paused if state.recipe.is_none() => {
            "Message to the agent: Enter sends it (s stops, p pauses)".to_string()
        }
        RunStatus::Running | RunStatus::Paused | RunStatus::Stopping => {
            "Task (running: s stops, p pauses)".to_string()
        }
        _ if state.conversation_tasks > 0 => format!(
            "Task · follows up on {} earlier task{} (N starts fresh)",
            state.conversation_tasks,
            if state.conversation_tasks == 1 {
                ""
            } else {
                "s"
            }
        ),
        _ => "Task".to_string(),
    };
    let block = pane_block(title, Pane::Task, state);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    frame.render_widget(&state.task, inner);
}

/// Draws the `:` command line in place of the hint row.
pub fn draw_command_line(frame: &mut Frame, area: Rect, state: &AppState) {
    let Some(field) = &state.command_line else {
        return;
    };
    if area.width < 2 {
        return;
    }
    frame.render_widget(
        Paragraph::new(Span::styled(":", state.theme.key())),
        Rect { width: 1, ..area },
    );
    frame.render_widget(
        field,
        Rect {
            x: area.x + 1,
            width: area.width - 1,
            ..area
        },
    );
}

/// The most rows the `:` line's message takes above it.
const COMMAND_MESSAGE_ROWS: u16 = 4;

/// Draws, in the rows just above the open `:` line at `line`, what the
/// line has to say: why a command was refused, how a completed name is
/// written, the candidates. It takes as many rows as it needs (up to
/// four, over the panes above) so the whole of it reads at 80 columns,
/// and the line stays open under it for correcting.
pub fn draw_command_message(frame: &mut Frame, line: Rect, state: &AppState) {
    let Some(notice) = &state.status.notice else {
        return;
    };
    if line.width == 0 {
        return;
    }
    let theme = &state.theme;
    let (mark, color) = if notice.error {
        ("✗ ", theme.palette.error)
    } else {
        ("› ", theme.palette.ok)
    };
    let length = (mark.chars().count() + notice.text.chars().count()) as u16;
    let rows = length
        .div_ceil(line.width)
        .clamp(1, COMMAND_MESSAGE_ROWS)
        .min(line.y);
    let area = Rect {
        y: line.y - rows,
        height: rows,
        ..line
    };
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(mark, theme.fg(color).add_modifier(Modifier::BOLD)),
            Span::styled(notice.text.clone(), theme.fg(color)),
        ]))
        .wrap(Wrap { trim: false }),
        area,
    );
}
