//! Dialogs over the panes: approval, the `ask_user` answer box, the step
//! inspector and help. Their keys are declared here; their footers and the
//! help are generated from the keymap.

use crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Margin, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};
use ratatui::Frame;

use crate::actions::ActionResult;

use super::app::{AppState, ApprovalModal, AskModal, LogEntry, Modal};
use super::draw::titled_block;
use super::keymap::{list_keys, Binding, Command, KeyBinding, KeyContext};
use super::theme::Theme;

/// The keys of every modal.
pub const KEYS: &[Binding] = &[
    Binding::new(
        KeyContext::Approval,
        KeyBinding::char('y'),
        Command::Approve,
        "approve",
    )
    .hinted(),
    Binding::new(
        KeyContext::Approval,
        KeyBinding::plain(KeyCode::Enter),
        Command::Approve,
        "approve",
    )
    .hinted(),
    Binding::new(
        KeyContext::Approval,
        KeyBinding::char('e'),
        Command::Edit,
        "edit the parameters",
    )
    .hinted(),
    Binding::new(
        KeyContext::Approval,
        KeyBinding::char('p'),
        Command::Pick,
        "pick another element",
    )
    .hinted(),
    Binding::new(
        KeyContext::Approval,
        KeyBinding::char('n'),
        Command::Skip,
        "skip this action",
    )
    .hinted(),
    Binding::new(
        KeyContext::Approval,
        KeyBinding::char('x'),
        Command::StopRun,
        "stop the run",
    )
    .hinted(),
    Binding::new(
        KeyContext::Approval,
        KeyBinding::char('r'),
        Command::RetryStep,
        "ask the model again",
    )
    .hinted(),
    Binding::new(
        KeyContext::ApprovalEdit,
        KeyBinding::ctrl('s'),
        Command::Submit,
        "check and use the edited action",
    )
    .hinted(),
    Binding::new(
        KeyContext::ApprovalEdit,
        KeyBinding::plain(KeyCode::Esc),
        Command::Cancel,
        "back without editing",
    )
    .hinted(),
    Binding::new(
        KeyContext::AskUser,
        KeyBinding::plain(KeyCode::Enter),
        Command::Submit,
        "send the answer",
    )
    .hinted(),
    Binding::new(
        KeyContext::AskUser,
        KeyBinding::plain(KeyCode::Esc),
        Command::Cancel,
        "leave the question unanswered",
    )
    .hinted(),
    Binding::new(
        KeyContext::Inspector,
        KeyBinding::plain(KeyCode::Esc),
        Command::Cancel,
        "close",
    )
    .hinted(),
    Binding::new(
        KeyContext::Inspector,
        KeyBinding::char('q'),
        Command::Cancel,
        "close",
    )
    .hinted(),
    Binding::new(
        KeyContext::Help,
        KeyBinding::plain(KeyCode::Esc),
        Command::Cancel,
        "close",
    )
    .hinted(),
    Binding::new(
        KeyContext::Help,
        KeyBinding::char('q'),
        Command::Cancel,
        "close",
    )
    .hinted(),
    Binding::new(
        KeyContext::Help,
        KeyBinding::char('?'),
        Command::Cancel,
        "close",
    )
    .hinted(),
];

/// A rectangle of `percent_x` by `percent_y` of `area`, centred, but never
/// smaller than `min` (columns, rows) where the area allows.
pub fn centered(area: Rect, percent_x: u16, percent_y: u16, min: (u16, u16)) -> Rect {
    // u32 so a very wide terminal cannot overflow the percentage.
    let scale = |length: u16, percent: u16| {
        u16::try_from(u32::from(length) * u32::from(percent) / 100).unwrap_or(length)
    };
    let width = scale(area.width, percent_x).max(min.0).min(area.width);
    let height = scale(area.height, percent_y).max(min.1).min(area.height);
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}

/// Draws the open modal, if any (none while an element is being picked:
/// the listing must be visible).
pub fn draw(frame: &mut Frame, state: &AppState) {
    match &state.modal {
        Some(Modal::Approval(m)) if !m.picking => draw_approval(frame, state, m),
        Some(Modal::AskUser(m)) => draw_ask(frame, state, m),
        Some(Modal::Inspector { entry, scroll }) => {
            if let Some(entry) = state.log.get(*entry) {
                draw_inspector(frame, state, entry, *scroll);
            }
        }
        Some(Modal::Help { scroll }) => draw_help(frame, state, *scroll),
        _ => {}
    }
}

fn open_modal(frame: &mut Frame, area: Rect, title: String, theme: &Theme) -> Rect {
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
fn footer(state: &AppState, context: KeyContext) -> Line<'static> {
    let theme = &state.theme;
    let mut spans = Vec::new();
    for (keys, description) in state.keymap.hints(context) {
        spans.push(Span::styled(keys, theme.key()));
        spans.push(Span::styled(format!(" {description}  "), theme.muted()));
    }
    Line::from(spans)
}

fn label_line(
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

fn draw_approval(frame: &mut Frame, state: &AppState, modal: &ApprovalModal) {
    let theme = &state.theme;
    let request = &modal.request;
    let area = centered(frame.area(), 80, 70, (60, 16));
    let inner = open_modal(
        frame,
        area,
        format!("Approve step {}? ({} action)", request.step, request.risk),
        theme,
    );
    let text = theme.fg(theme.palette.text);
    let mut lines = vec![
        label_line("page", request.url.clone(), theme, text),
        label_line("goal", request.next_goal.clone(), theme, text),
    ];
    let r = &state.reflection;
    if !r.evaluation.is_empty() {
        lines.push(label_line("eval", r.evaluation.clone(), theme, text));
    }
    if !r.memory.is_empty() {
        lines.push(label_line("memory", r.memory.clone(), theme, text));
    }
    lines.push(label_line(
        "action",
        format!("{} {}", request.action.name(), request.action.params()),
        theme,
        theme.fg(theme.palette.accent).add_modifier(Modifier::BOLD),
    ));
    lines.push(label_line(
        "target",
        request
            .element
            .clone()
            .or_else(|| request.action.target().map(|t| t.to_string()))
            .unwrap_or_else(|| "(none)".into()),
        theme,
        theme.fg(theme.palette.warn),
    ));
    let context = if modal.editor.is_some() {
        KeyContext::ApprovalEdit
    } else {
        KeyContext::Approval
    };
    match &modal.editor {
        None => {
            let [body, foot] =
                Layout::vertical([Constraint::Min(1), Constraint::Length(2)]).areas(inner);
            frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), body);
            frame.render_widget(
                Paragraph::new(footer(state, context)).wrap(Wrap { trim: false }),
                foot,
            );
        }
        Some(editor) => {
            let facts = lines.len() as u16;
            let [body, edit, error, foot] = Layout::vertical([
                Constraint::Length(facts.min(inner.height / 2)),
                Constraint::Min(3),
                Constraint::Length(1),
                Constraint::Length(1),
            ])
            .areas(inner);
            frame.render_widget(Paragraph::new(lines), body);
            let block = titled_block("Edit the action (JSON)".into(), true, theme);
            let edit_inner = block.inner(edit);
            frame.render_widget(block, edit);
            frame.render_widget(editor, edit_inner);
            if let Some(message) = &modal.error {
                frame.render_widget(
                    Paragraph::new(Span::styled(message.clone(), theme.fg(theme.palette.error))),
                    error,
                );
            }
            frame.render_widget(Paragraph::new(footer(state, context)), foot);
        }
    }
}

fn draw_ask(frame: &mut Frame, state: &AppState, modal: &AskModal) {
    let theme = &state.theme;
    let area = centered(frame.area(), 70, 40, (50, 10));
    let inner = open_modal(frame, area, "The model asks".into(), theme);
    let [question, answer, foot] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(3),
        Constraint::Length(1),
    ])
    .areas(inner);
    frame.render_widget(
        Paragraph::new(modal.question.clone())
            .style(theme.fg(theme.palette.text))
            .wrap(Wrap { trim: false }),
        question,
    );
    let block = titled_block("Your answer".into(), true, theme);
    let answer_inner = block.inner(answer);
    frame.render_widget(block, answer);
    frame.render_widget(&modal.answer, answer_inner);
    frame.render_widget(Paragraph::new(footer(state, KeyContext::AskUser)), foot);
}

/// The scroll keys of a scrollable modal: the list keys, with the
/// non-letter ones shown in the modal's footer so a person sees how to
/// move through a long text without opening help.
pub fn scroll_keys(context: KeyContext) -> Vec<Binding> {
    list_keys(context)
        .into_iter()
        .map(|b| {
            if matches!(b.key.code, KeyCode::Char(_)) {
                b
            } else {
                b.hinted()
            }
        })
        .collect()
}

/// Footer rows of the inspector: its keys wrap onto a second row at 80
/// columns.
const INSPECTOR_FOOTER_ROWS: u16 = 2;

/// Where the inspector sits on a `size` terminal: (the whole dialog, its
/// text, its footer). Shared by drawing and scrolling so a page is exactly
/// what is shown.
pub fn inspector_layout(size: (u16, u16)) -> (Rect, Rect, Rect) {
    let area = centered(Rect::new(0, 0, size.0, size.1), 90, 85, (70, 20));
    let inner = area.inner(Margin::new(1, 1));
    let [body, foot] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(INSPECTOR_FOOTER_ROWS),
    ])
    .areas(inner);
    (area, body, foot)
}

/// How far the inspector can scroll: the last page shows the last row.
pub fn inspector_max_scroll(rows: usize, size: (u16, u16)) -> usize {
    let (_, body, _) = inspector_layout(size);
    rows.saturating_sub(usize::from(body.height))
}

/// The inspector's rows for one log entry, already wrapped to `width`
/// columns: scrolling counts rows, and a prompt's long lines must not make
/// the last ones unreachable.
pub fn inspector_lines(entry: &LogEntry, theme: &Theme, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width);
    inspector_text(entry, theme)
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

/// Tabs as spaces and other control characters dropped: the terminal would
/// otherwise move the cursor instead of showing them.
fn printable(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            '\t' => out.push_str("    "),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// The inspector's text, one entry per logical line (not yet wrapped).
fn inspector_text(entry: &LogEntry, theme: &Theme) -> Vec<Line<'static>> {
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
            super::app::Outcome::Pending => "running…".to_string(),
            super::app::Outcome::Ok => "ok".to_string(),
            super::app::Outcome::Failed { reason, message } => format!("{reason}: {message}"),
        };
        lines.push(label_line("result", outcome, theme, text));
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

fn char_width(c: char) -> usize {
    let mut buffer = [0u8; 4];
    Span::raw(&*c.encode_utf8(&mut buffer)).width()
}

/// Splits a styled line into rows of at most `width` columns, breaking
/// after the last space of a row when there is one, else mid-word.
fn wrap_line(line: Line<'static>, width: usize) -> Vec<Line<'static>> {
    if width == 0 || line.width() <= width {
        return vec![line];
    }
    let mut rows = Vec::new();
    let mut row: Vec<(char, Style)> = Vec::new();
    let mut row_width = 0;
    for span in &line.spans {
        let style = line.style.patch(span.style);
        for c in span.content.chars() {
            let w = char_width(c);
            if row_width + w > width && !row.is_empty() {
                let rest = match row.iter().rposition(|(c, _)| *c == ' ') {
                    Some(space) => row.split_off(space + 1),
                    None => Vec::new(),
                };
                rows.push(styled_row(&row));
                row = rest;
                row_width = row.iter().map(|(c, _)| char_width(*c)).sum();
            }
            row.push((c, style));
            row_width += w;
        }
    }
    if !row.is_empty() {
        rows.push(styled_row(&row));
    }
    rows
}

/// One row of styled characters as spans, one span per run of a style.
fn styled_row(row: &[(char, Style)]) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut run = String::new();
    let mut run_style = None;
    for &(c, style) in row {
        if run_style.is_some_and(|s| s != style) {
            spans.push(Span::styled(
                std::mem::take(&mut run),
                run_style.unwrap_or(style),
            ));
        }
        run_style = Some(style);
        run.push(c);
    }
    if let Some(style) = run_style {
        spans.push(Span::styled(run, style));
    }
    Line::from(spans)
}

fn draw_inspector(frame: &mut Frame, state: &AppState, entry: &LogEntry, scroll: usize) {
    let theme = &state.theme;
    let size = (frame.area().width, frame.area().height);
    let (area, body, foot) = inspector_layout(size);
    let lines = inspector_lines(entry, theme, body.width);
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

/// Every key, by context, from the keymap.
pub fn help_lines(state: &AppState) -> Vec<Line<'static>> {
    let theme = &state.theme;
    let mut lines = Vec::new();
    for context in state.keymap.contexts() {
        let rows = state.keymap.help_rows(context);
        if rows.is_empty() {
            continue;
        }
        lines.push(Line::from(Span::styled(
            context.title(),
            theme.fg(theme.palette.accent).add_modifier(Modifier::BOLD),
        )));
        for (keys, description) in rows {
            lines.push(Line::from(vec![
                Span::styled(format!("  {keys:<14}"), theme.key()),
                Span::styled(description, theme.fg(theme.palette.text)),
            ]));
        }
    }
    lines
}

fn draw_help(frame: &mut Frame, state: &AppState, scroll: usize) {
    let theme = &state.theme;
    let area = centered(frame.area(), 70, 85, (60, 20));
    let inner = open_modal(frame, area, "Keys".into(), theme);
    let [body, foot] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
    frame.render_widget(
        Paragraph::new(help_lines(state)).scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0)),
        body,
    );
    frame.render_widget(Paragraph::new(footer(state, KeyContext::Help)), foot);
}
