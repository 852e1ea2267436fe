//! The sessions view: past sessions (the traces in the sessions
//! directory) newest first, one row each with its time, task, steps,
//! outcome, model, tokens and size, and a search over them. The rows
//! arrive from a service: the files first, their summaries as each trace
//! is read, so the view opens at once over any number of traces. A trace
//! that does not read is listed with the reason.

use crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use ratatui::Frame;

use crate::events::{TraceOutcome, TraceSummary};
use crate::words::counted;

use super::keys::{Binding, Command, KeyBinding, KeyContext};
use super::layout::sessions_inside;
use super::state::AppState;
use super::status::tokens_text;
use super::text::clip;
use super::widgets::{row_style, titled_block};

/// The view's own keys (the cursor keys are shared by every list).
pub const KEYS: &[Binding] = &[
    Binding::new(
        KeyContext::Sessions,
        KeyBinding::plain(KeyCode::Enter),
        Command::Submit,
        "open the session in the panes, read-only",
    )
    .hinted(),
    Binding::new(
        KeyContext::Sessions,
        KeyBinding::char('/'),
        Command::Search,
        "search tasks, models, outcomes, files",
    )
    .hinted(),
    Binding::new(
        KeyContext::Sessions,
        KeyBinding::char('r'),
        Command::Resume,
        "resume the session's run",
    )
    .hinted(),
    Binding::new(
        KeyContext::Sessions,
        KeyBinding::plain(KeyCode::Esc),
        Command::Cancel,
        "close",
    )
    .hinted(),
    Binding::new(
        KeyContext::Sessions,
        KeyBinding::char('q'),
        Command::Cancel,
        "close",
    ),
    Binding::new(
        KeyContext::SessionSearch,
        KeyBinding::plain(KeyCode::Enter),
        Command::Submit,
        "keep the search and go back to the list",
    )
    .hinted(),
    Binding::new(
        KeyContext::SessionSearch,
        KeyBinding::plain(KeyCode::Esc),
        Command::Cancel,
        "clear the search",
    )
    .hinted(),
];

/// `2026-11-22 00:16` from a trace's `20261122T001652Z`.
pub fn when(stamp: &str) -> String {
    if stamp.len() < 13 {
        return stamp.to_string();
    }
    format!(
        "{}-{}-{} {}:{}",
        &stamp[0..4],
        &stamp[4..6],
        &stamp[6..8],
        &stamp[9..11],
        &stamp[11..13]
    )
}

/// A size the way people read it: `812 B`, `14.2 KB`, `3.1 MB`.
pub fn size_text(bytes: u64) -> String {
    match bytes {
        0..=999 => format!("{bytes} B"),
        1_000..=999_999 => format!("{:.1} KB", bytes as f64 / 1_000.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_000_000.0),
    }
}

/// One row laid out for `width` columns.
pub fn row_text(row: &TraceSummary, width: usize) -> String {
    let when = when(&row.file.started);
    let size = size_text(row.file.size);
    if let Some(problem) = &row.problem {
        let text = format!("does not read: {problem}");
        let room = width.saturating_sub(16 + 1 + 9 + 2).max(10);
        return format!("{when:<16} {:<room$} {size:>9}", clip(&text, room));
    }
    let (outcome, steps, model, tokens) = if row.tasks == 0 && row.task.is_empty() {
        ("…".to_string(), String::new(), String::new(), String::new())
    } else {
        (
            row.outcome.word().to_string(),
            row.steps.to_string(),
            row.model.clone(),
            tokens_text(row.tokens.total_tokens),
        )
    };
    let task = if row.tasks > 1 {
        format!(
            "{} (+{})",
            row.task,
            counted(row.tasks - 1, "follow-up", "follow-ups")
        )
    } else if row.task.is_empty() {
        row.file.name.clone()
    } else {
        row.task.clone()
    };
    // time, task, steps, outcome, model, tokens, size
    let fixed = 16 + 1 + 1 + 5 + 1 + 10 + 1 + 14 + 1 + 7 + 1 + 9;
    let room = width.saturating_sub(fixed).max(10);
    format!(
        "{when:<16} {:<room$} {steps:>5} {:<10} {:<14} {tokens:>7} {size:>9}",
        clip(&task, room),
        clip(&outcome, 10),
        clip(&model, 14),
    )
}

/// Draws the view over the panes.
pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let Some(view) = &state.sessions else {
        return;
    };
    let theme = &state.theme;
    frame.render_widget(Clear, area);
    let title = if view.listing {
        "Past sessions (listing…)".to_string()
    } else {
        let mut title = format!("Past sessions {}", view.rows.len());
        if view.shown.len() != view.rows.len() {
            title.push_str(&format!(" · {} match", view.shown.len()));
        }
        if view.read < view.rows.len() {
            title.push_str(&format!(" · reading {}/{}", view.read, view.rows.len()));
        }
        title
    };
    let block = titled_block(title, true, theme).style(
        Style::default()
            .bg(theme.palette.background)
            .fg(theme.palette.text),
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [search, header, body] = sessions_inside(inner);
    let width = usize::from(body.width);
    match &view.search {
        Some(field) => {
            frame.render_widget(
                Paragraph::new(Span::styled("/", theme.key())),
                Rect { width: 1, ..search },
            );
            frame.render_widget(
                field,
                Rect {
                    x: search.x + 1,
                    width: search.width.saturating_sub(1),
                    ..search
                },
            );
        }
        None => {
            let text = if view.query.is_empty() {
                "/ searches tasks, models, outcomes and file names".to_string()
            } else {
                format!("search: {}  (/ changes it)", view.query)
            };
            frame.render_widget(Paragraph::new(Span::styled(text, theme.muted())), search);
        }
    }
    let fixed = 16 + 1 + 1 + 5 + 1 + 10 + 1 + 14 + 1 + 7 + 1 + 9;
    let room = width.saturating_sub(fixed).max(10);
    let heading = format!(
        "{:<16} {:<room$} {:>5} {:<10} {:<14} {:>7} {:>9}",
        "when (UTC)", "task", "steps", "outcome", "model", "tokens", "size"
    );
    frame.render_widget(
        Paragraph::new(Span::styled(
            clip(&heading, width),
            theme.muted().add_modifier(Modifier::BOLD),
        )),
        header,
    );
    let rows = usize::from(body.height);
    let lines: Vec<Line> = if let Some(error) = &view.error {
        vec![Line::from(Span::styled(
            error.clone(),
            theme.fg(theme.palette.error),
        ))]
    } else if !view.listing && view.shown.is_empty() {
        let text = if view.rows.is_empty() {
            "no sessions yet: each run leaves a trace here"
        } else {
            "no session matches the search"
        };
        vec![Line::from(Span::styled(text, theme.muted()))]
    } else {
        let start = view.list.offset.min(view.shown.len());
        let end = (start + rows).min(view.shown.len());
        view.shown[start..end]
            .iter()
            .enumerate()
            .map(|(i, &at)| {
                let row = &view.rows[at];
                let color = match (&row.problem, &row.outcome) {
                    (Some(_), _) => theme.palette.error,
                    (None, TraceOutcome::Ended { success: true, .. }) => theme.palette.text,
                    (None, TraceOutcome::Unfinished) => theme.palette.warn,
                    (None, TraceOutcome::Empty) => theme.palette.muted,
                    (None, TraceOutcome::Ended { .. }) => theme.palette.error,
                };
                let selected = start + i == view.list.cursor;
                Line::from(Span::styled(
                    clip(&row_text(row, width), width),
                    row_style(selected, theme, Style::default().fg(color)),
                ))
            })
            .collect()
    };
    frame.render_widget(Paragraph::new(lines), body);
}

#[cfg(test)]
mod tests {
    use crate::events::{EndReason, TokenUsage, TraceFile, TraceOutcome, TraceSummary};
    use crate::tui::state::SessionsView;

    use super::row_text;

    fn summary(name: &str, task: &str, model: &str) -> TraceSummary {
        TraceSummary {
            file: TraceFile {
                path: name.into(),
                name: name.into(),
                size: 14_200,
                started: "20261122T001652Z".into(),
            },
            task: task.into(),
            tasks: 1,
            steps: 4,
            outcome: TraceOutcome::Ended {
                success: true,
                reason: EndReason::Done,
            },
            model: model.into(),
            tokens: TokenUsage {
                total_tokens: 12_400,
                ..TokenUsage::default()
            },
            continues: None,
            problem: None,
        }
    }

    #[test]
    fn a_search_keeps_rows_with_every_word_and_the_cursor_on_its_trace() {
        let mut view = SessionsView::new(1);
        view.listed(Vec::new());
        view.rows = vec![
            summary("a.jsonl", "Refund order 1003", "gpt-4o"),
            summary("b.jsonl", "Ship order 1003", "qwen"),
            summary("c.jsonl", "Invite a teammate", "qwen"),
        ];
        view.refilter();
        view.list.cursor = 1;
        view.query = "ORDER qwen".into();
        view.refilter();
        assert_eq!(view.shown, vec![1]);
        assert_eq!(view.selected().unwrap().file.name, "b.jsonl");
        view.query = "nothing like it".into();
        view.refilter();
        assert!(view.shown.is_empty());
        assert!(view.selected().is_none());
    }

    #[test]
    fn a_row_says_when_what_how_and_how_big() {
        let row = row_text(&summary("a.jsonl", "Refund order 1003", "gpt-4o"), 100);
        assert!(
            row.starts_with("2026-11-22 00:16 Refund order 1003"),
            "{row}"
        );
        for part in ["done", "gpt-4o", "12.4k", "14.2 KB", "    4 "] {
            assert!(row.contains(part), "{part} in {row}");
        }
        let mut broken = summary("b.jsonl", "", "");
        broken.problem = Some("line 3: expected value".into());
        let row = row_text(&broken, 100);
        assert!(
            row.contains("does not read: line 3: expected value"),
            "{row}"
        );
    }
}
