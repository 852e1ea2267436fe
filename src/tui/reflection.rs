//! The reflection of the current step: how the last step went, what the
//! model remembers, what it aims for next and the action it proposes. The
//! fields fill in while the answer streams (read in
//! [`super::state::ReflectionView`]).

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use super::state::{AppState, Pane, RunStatus};
use super::widgets::pane_block;

/// The reflection's lines, for drawing and for scrolling bounds.
pub fn lines(state: &AppState) -> Vec<Line<'static>> {
    let theme = &state.theme;
    let r = &state.reflection;
    let label = |text: &'static str| {
        Span::styled(
            text,
            Style::default()
                .fg(theme.palette.muted)
                .add_modifier(Modifier::BOLD),
        )
    };
    let empty = r.evaluation.is_empty()
        && r.memory.is_empty()
        && r.next_goal.is_empty()
        && r.action.is_none();
    if empty {
        let text = match state.status.run {
            RunStatus::Running if r.streaming || r.step > 0 => "the model is thinking…",
            RunStatus::Running => "starting the run…",
            _ => "no run yet: press t, type a task, Enter",
        };
        return vec![Line::from(Span::styled(text, theme.muted()))];
    }
    let mut out = Vec::new();
    for (name, value) in [
        ("eval  ", &r.evaluation),
        ("memory", &r.memory),
        ("goal  ", &r.next_goal),
    ] {
        if value.is_empty() {
            continue;
        }
        out.push(Line::from(vec![
            label(name),
            Span::raw(" "),
            Span::styled(value.clone(), theme.fg(theme.palette.text)),
        ]));
    }
    if let Some(action) = &r.action {
        out.push(Line::from(vec![
            label("action"),
            Span::raw(" "),
            Span::styled(
                action.clone(),
                theme.fg(theme.palette.accent).add_modifier(Modifier::BOLD),
            ),
        ]));
    }
    out
}

/// Draws the reflection pane.
pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let r = &state.reflection;
    let mut title = if let Some(shown) = r.shown_step {
        format!("Reflection · step {shown} (step {} thinking)", r.step)
    } else if r.step > 0 {
        format!("Reflection · step {}", r.step)
    } else {
        "Reflection".to_string()
    };
    if r.streaming {
        title.push_str(" …");
    }
    let block = pane_block(title, Pane::Reflection, state);
    let scroll = u16::try_from(state.reflection_view.offset).unwrap_or(u16::MAX);
    frame.render_widget(
        Paragraph::new(lines(state))
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .block(block),
        area,
    );
}
