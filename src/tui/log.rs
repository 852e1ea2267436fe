//! The action log: every action the agent or the person ran, with its
//! step, target, outcome and time. Enter opens the step inspector.

use crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::keys::{Binding, Command, KeyBinding, KeyContext};
use super::state::{rows, AppState, LogEntry, Outcome, Pane};
use super::text::clip;
use super::widgets::{pane_block, row_style};

/// The log's own keys.
pub const KEYS: &[Binding] = &[
    Binding::new(
        KeyContext::Log,
        KeyBinding::plain(KeyCode::Enter),
        Command::Inspect,
        "inspect the step: prompt, answer, repairs, times",
    )
    .hinted(),
    Binding::new(
        KeyContext::Log,
        KeyBinding::char('i'),
        Command::Inspect,
        "inspect the step: prompt, answer, repairs, times",
    ),
    Binding::new(
        KeyContext::Log,
        KeyBinding::char('L'),
        Command::PickLocators,
        "the locators the step kept, checked on the page now",
    ),
];

/// The outcome column: `ok`, the failure reason, or `…` while running (a
/// message of the person's: `waiting`, then `sent`).
pub fn outcome_text(entry: &LogEntry) -> String {
    let message = entry.action == rows::MESSAGE;
    match &entry.outcome {
        Outcome::Pending if message => "waiting".into(),
        Outcome::Pending => "…".into(),
        Outcome::Ok if message => "sent".into(),
        _ if entry.person_mark().is_some() => match &entry.outcome {
            Outcome::Failed { reason, .. } if reason != "denied" => {
                format!("{reason}, {}", entry.person_mark().unwrap_or_default())
            }
            _ => entry.person_mark().unwrap_or_default().to_string(),
        },
        Outcome::Ok => "ok".into(),
        Outcome::Failed { reason, .. } => reason.clone(),
    }
}

/// The time column: the action's own time, and apart from it the wait
/// for the person's approval.
pub fn time_text(entry: &LogEntry) -> String {
    let ms = entry.ms.map(|ms| format!("{ms}ms")).unwrap_or_default();
    match entry.wait_ms {
        Some(wait) if wait > 0 => format!("{ms} +you {:.1}s", wait as f64 / 1000.0),
        _ => ms,
    }
}

/// One log row laid out for `width` columns.
pub fn row_text(entry: &LogEntry, width: usize) -> String {
    let note = [rows::TASK, rows::NEW, rows::RESUMED, rows::LOG].contains(&entry.action.as_str());
    let step = match entry.step {
        Some(n) => format!("{n:>3}"),
        None if note => "  »".to_string(),
        None => "  m".to_string(),
    };
    let ms = time_text(entry);
    let outcome = clip(&outcome_text(entry), 16);
    // A custom action's steps hang under its row.
    let action = match entry.within {
        Some(_) => format!("└ {}", clip(&entry.action, 14)),
        None => clip(&entry.action, 16),
    };
    // On a wide log, one width for every row, so the columns line up
    // whether or not a row waited for the person; a narrow one keeps its
    // room for the target.
    let time_width = ms.chars().count().max(if width >= 120 { 16 } else { 7 });
    let fixed = 3 + 1 + 16 + 1 + 1 + 16 + 1 + 1 + time_width;
    let target_width = width.saturating_sub(fixed).max(6);
    let target = if entry.target.is_empty() {
        clip(&entry.params, target_width)
    } else {
        clip(&entry.target, target_width)
    };
    format!("{step} {action:<16} {target:<target_width$} {outcome:<16} {ms:>time_width$}")
}

/// Draws the log pane.
pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let theme = &state.theme;
    let title = if state.log.is_empty() {
        "Action log".to_string()
    } else {
        format!("Action log {}", state.log.len())
    };
    let block = pane_block(title, Pane::Log, state);
    let rows = usize::from(area.height.saturating_sub(2));
    let width = usize::from(area.width.saturating_sub(2));
    let lines: Vec<Line> = if state.log.is_empty() {
        vec![Line::from(Span::styled(
            "nothing ran yet: `:` runs an action by hand, e.g. :click 3",
            theme.muted(),
        ))]
    } else {
        let start = state.log_view.offset.min(state.log.len());
        let end = (start + rows).min(state.log.len());
        state.log[start..end]
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                let color = match entry.outcome {
                    Outcome::Pending => theme.palette.warn,
                    Outcome::Ok => theme.palette.text,
                    Outcome::Failed { .. } => theme.palette.error,
                };
                let selected = start + i == state.log_view.cursor && state.focus == Pane::Log;
                let style = row_style(selected, theme, Style::default().fg(color));
                Line::from(Span::styled(row_text(entry, width), style))
            })
            .collect()
    };
    frame.render_widget(Paragraph::new(lines).block(block), area);
}
