//! The recipe debugger's panes (`:debug`): the recipe's source with the
//! line it stopped on and its breakpoints, and the variables in scope at
//! the stop. They take the reflection's and the sitemap's place while a
//! recipe is debugged; the element list, the page pane and the log show
//! the page as it is at each stop, as they do for any run.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};
use ratatui::Frame;

use super::keys::{Binding, Command, KeyBinding, KeyContext};
use super::layout::debugger_areas;
use super::state::{AppState, Pane};
use super::text::clip;
use super::widgets::{pane_block, row_style, titled_block};
use crate::script::StopReason;

/// The debugger's keys, over the panes' own while a recipe is debugged.
pub const KEYS: &[Binding] = &[
    Binding::new(
        KeyContext::Debug,
        KeyBinding::char('c'),
        Command::ContinueRun,
        "continue to the next breakpoint",
    )
    .hinted(),
    Binding::new(
        KeyContext::Debug,
        KeyBinding::char('n'),
        Command::StepOver,
        "step over: the next statement here",
    )
    .hinted(),
    Binding::new(
        KeyContext::Debug,
        KeyBinding::char('e'),
        Command::StepInto,
        "step into: enter the call",
    )
    .hinted(),
    Binding::new(
        KeyContext::Debug,
        KeyBinding::char('u'),
        Command::StepOut,
        "step out: up to the caller",
    )
    .hinted(),
    Binding::new(
        KeyContext::Debug,
        KeyBinding::char('b'),
        Command::ToggleBreakpoint,
        "breakpoint on the source cursor's line (j/k in the source pane)",
    )
    .hinted(),
    Binding::new(
        KeyContext::Debug,
        KeyBinding::char('r'),
        Command::RetryFailed,
        "retry the failed step",
    ),
    Binding::new(
        KeyContext::Debug,
        KeyBinding::char('x'),
        Command::SkipFailed,
        "skip the failed step",
    ),
    Binding::new(
        KeyContext::Debug,
        KeyBinding::char('R'),
        Command::Restart,
        "restart from the top, with the file as saved",
    ),
];

/// The words for why the recipe stopped.
pub fn reason_text(reason: StopReason) -> &'static str {
    match reason {
        StopReason::Entry => "entry",
        StopReason::Breakpoint => "breakpoint",
        StopReason::Step => "step",
        StopReason::Failure => "failed",
    }
}

/// Draws the source and the variables where [`debugger_areas`] puts them.
pub fn draw(frame: &mut Frame, state: &AppState) {
    let Some(debug) = &state.debugger else {
        return;
    };
    let (source_area, vars_area) = debugger_areas(frame.area(), state.picture.visible);
    let theme = &state.theme;
    let file = debug
        .start
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let at = match (&debug.stop, debug.stop_here()) {
        (Some(stop), Some(_)) => format!("line {} · {}", stop.line, reason_text(stop.reason)),
        (Some(stop), None) => format!("{}:{} · {}", stop.file, stop.line, reason_text(stop.reason)),
        (None, _) => "running".to_string(),
    };
    let title = format!("Debug {} · {at}", debug.start.name);
    let block = pane_block(title, Pane::Sitemap, state);
    let width = usize::from(source_area.width.saturating_sub(2));
    let height = usize::from(source_area.height.saturating_sub(2)).max(1);
    let current = debug.stop_here().map(|s| s.line);
    let focused = state.focus == Pane::Sitemap;
    let lines: Vec<Line> = debug
        .source
        .iter()
        .enumerate()
        .skip(debug.cursor.offset)
        .take(height)
        .map(|(row, text)| {
            let number = row + 1;
            let mark = if debug.breakpoints.contains(&number) {
                "●"
            } else {
                " "
            };
            let arrow = if current == Some(number) { "▶" } else { " " };
            let base = if current == Some(number) {
                theme.text().add_modifier(Modifier::BOLD)
            } else {
                theme.text()
            };
            let style = row_style(focused && row == debug.cursor.cursor, theme, base);
            let text = clip(&format!("{mark}{arrow}{number:>3} {text}"), width);
            Line::from(Span::styled(text, style))
        })
        .collect();
    frame.render_widget(Clear, source_area);
    frame.render_widget(Paragraph::new(lines).block(block), source_area);

    let mut rows: Vec<Line> = Vec::new();
    if debug.edited.is_some() {
        rows.push(Line::from(Span::styled(
            format!(
                "{file} was saved: R restarts from the top with it; c n e u go on with the old code"
            ),
            theme.key(),
        )));
    }
    if let Some(error) = debug.stop.as_ref().and_then(|s| s.error.as_ref()) {
        rows.push(Line::from(Span::styled(
            format!("failed: {error}"),
            theme.fg(theme.palette.error),
        )));
        rows.push(Line::from(Span::styled(
            "r retries · x skips · : acts by hand · save the file, then R restarts",
            theme.muted(),
        )));
    }
    if debug.stop.is_some() {
        for (name, value) in &debug.vars {
            rows.push(Line::from(vec![
                Span::styled(format!("{name} = "), theme.key()),
                Span::styled(value.to_string(), theme.text()),
            ]));
        }
    }
    let block = titled_block("Variables".into(), false, theme);
    frame.render_widget(Clear, vars_area);
    frame.render_widget(
        Paragraph::new(rows).block(block).wrap(Wrap { trim: false }),
        vars_area,
    );
}
