//! The step inspector: one logged step in full (action, result, times,
//! tokens, the reflection, repairs, the model's raw answer and the prompt
//! as sent), wrapped to the dialog's width so scrolling counts the rows
//! that are shown. Its keys are declared with the other dialogs' in
//! [`super::modals`].

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use crate::actions::ActionResult;

use super::keys::KeyContext;
use super::layout::{inspector_layout, inspector_max_scroll};
use super::state::{AppState, LogEntry, Outcome};
use super::text::{printable, wrap_line};
use super::theme::Theme;
use super::widgets::{footer, label_line, open_modal};

/// The inspector's rows for one log entry, already wrapped to `width`
/// columns: scrolling counts rows, and a prompt's long lines must not make
/// the last ones unreachable.
pub fn lines(entry: &LogEntry, theme: &Theme, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width);
    text(entry, theme)
        .into_iter()
        .flat_map(|line| wrap_line(line, width))
        .collect()
}

fn heading(text: String, theme: &Theme) -> Line<'static> {
    Line::from(Span::styled(
        text,
        Style::default()
            .fg(theme.palette.muted)
            .add_modifier(Modifier::BOLD),
    ))
}

/// The inspector's text, one entry per logical line (not yet wrapped).
fn text(entry: &LogEntry, theme: &Theme) -> Vec<Line<'static>> {
    let text = theme.fg(theme.palette.text);
    let mut lines = vec![label_line(
        "action",
        format!("{} {}", entry.action, entry.params),
        theme,
        theme.fg(theme.palette.accent),
    )];
    if !entry.target.is_empty() {
        lines.push(label_line("target", entry.target.clone(), theme, text));
    }
    let Some(record) = &entry.record else {
        let outcome = match &entry.outcome {
            Outcome::Pending => "running…".to_string(),
            Outcome::Ok => "ok".to_string(),
            Outcome::Failed { reason, message } => format!("{reason}: {message}"),
        };
        // A script error's source line and caret stay under each other.
        for (n, part) in outcome.lines().enumerate() {
            let label = if n == 0 { "result" } else { "" };
            lines.push(label_line(label, part.to_string(), theme, text));
        }
        if let Some(ms) = entry.ms {
            lines.push(label_line("time", format!("act {ms} ms"), theme, text));
        }
        lines.push(Line::from(Span::styled(
            "run by hand: no prompt or model answer",
            theme.muted(),
        )));
        return lines;
    };
    let result = match &record.result {
        ActionResult::Success { data: None } => "ok".to_string(),
        ActionResult::Success { data: Some(data) } => format!("ok {data}"),
        ActionResult::Failure { reason, message } => format!("{reason}: {message}"),
    };
    let result_style = if record.result.is_ok() {
        theme.fg(theme.palette.ok)
    } else {
        theme.fg(theme.palette.error)
    };
    lines.push(label_line("result", result, theme, result_style));
    let t = record.timings;
    lines.push(label_line(
        "time",
        format!(
            "observe {} ms · model {} ms · act {} ms{}",
            t.observe_ms,
            t.llm_ms,
            t.act_ms,
            if t.wait_ms > 0 {
                format!(" · waited {} ms for your approval", t.wait_ms)
            } else {
                String::new()
            }
        ),
        theme,
        text,
    ));
    lines.push(label_line(
        "tokens",
        match record.usage {
            Some(u) => format!(
                "{} prompt + {} answer = {}",
                u.prompt_tokens, u.completion_tokens, u.total_tokens
            ),
            None => "not reported by the server".into(),
        },
        theme,
        text,
    ));
    let r = &record.reflection;
    lines.push(label_line(
        "eval",
        r.evaluation_previous_goal.clone(),
        theme,
        text,
    ));
    lines.push(label_line("memory", r.memory.clone(), theme, text));
    lines.push(label_line("goal", r.next_goal.clone(), theme, text));
    if record.repairs.is_empty() {
        lines.push(label_line("repairs", "none".into(), theme, theme.muted()));
    } else {
        for repair in &record.repairs {
            lines.push(label_line(
                "repair",
                repair.clone(),
                theme,
                theme.fg(theme.palette.warn),
            ));
        }
    }

    // The answer first: it is short and what a person usually checks;
    // the prompt below can run to hundreds of rows.
    lines.push(Line::default());
    if !record.raw_response.is_empty() {
        lines.push(heading("raw response, as received:".into(), theme));
        lines.extend(
            record
                .raw_response
                .lines()
                .map(|l| Line::from(Span::styled(printable(l), text))),
        );
    } else if !entry.raw_response.is_empty() {
        // A record from before the raw answer was kept: the streamed text
        // is the closest there is.
        lines.push(heading("response, as streamed:".into(), theme));
        lines.extend(
            entry
                .raw_response
                .lines()
                .map(|l| Line::from(Span::styled(printable(l), text))),
        );
    } else {
        lines.push(heading("raw response:".into(), theme));
        lines.push(Line::from(Span::styled(
            "(not in this step's record)",
            theme.muted(),
        )));
    }

    lines.push(Line::default());
    lines.push(heading(
        format!("prompt, as sent ({} characters):", record.prompt_chars),
        theme,
    ));
    if record.prompt.is_empty() {
        lines.push(Line::from(Span::styled(
            "(not in this step's record)",
            theme.muted(),
        )));
    }
    let role = theme.fg(theme.palette.accent).add_modifier(Modifier::BOLD);
    for line in record.prompt.lines() {
        // The agent heads each message with `## role`.
        let style = if line.starts_with("## ") { role } else { text };
        lines.push(Line::from(Span::styled(printable(line), style)));
    }
    lines
}

/// Draws the inspector over the panes, scrolled to `scroll`.
pub fn draw(frame: &mut Frame, state: &AppState, entry: &LogEntry, scroll: usize) {
    let theme = &state.theme;
    let size = (frame.area().width, frame.area().height);
    let (area, body, foot) = inspector_layout(size);
    let lines = lines(entry, theme, body.width);
    // A resize can leave the offset past the end: show the last page.
    let first = scroll.min(inspector_max_scroll(lines.len(), size));
    let last = (first + usize::from(body.height)).min(lines.len());
    let step = match entry.step {
        Some(n) => format!("Step {n}"),
        None => "Action run by hand".into(),
    };
    let title = if lines.len() > usize::from(body.height) {
        format!("{step} · rows {}–{last} of {}", first + 1, lines.len())
    } else {
        step
    };
    open_modal(frame, area, title, theme);
    let shown: Vec<Line<'static>> = lines
        .into_iter()
        .skip(first)
        .take(usize::from(body.height))
        .collect();
    frame.render_widget(Paragraph::new(shown), body);
    frame.render_widget(
        Paragraph::new(footer(state, KeyContext::Inspector)).wrap(Wrap { trim: false }),
        foot,
    );
}
