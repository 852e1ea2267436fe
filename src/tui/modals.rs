//! Dialogs over the panes: approval, the `ask_user` answer box, the step
//! inspector (drawn by [`super::inspector`]) and help. The keys of every
//! dialog are declared here; their footers and the help are generated
//! from the keymap.

use crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use super::inspector;
use super::keys::{list_keys, Binding, Command, KeyBinding, KeyContext};
use super::layout::{approval_area, ask_area, help_layout};
use super::line_commands::LINE_COMMANDS;
use super::state::{AppState, ApprovalModal, AskModal, Modal};
use super::widgets::{footer, label_line, open_modal, titled_block};

pub use super::layout::inspector_layout;

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
        KeyBinding::char('a'),
        Command::ApproveName,
        "approve this action for the rest of the run",
    )
    .hinted(),
    Binding::new(
        KeyContext::Approval,
        KeyBinding::char('A'),
        Command::ApproveAll,
        "approve all for this run",
    )
    .hinted(),
    Binding::new(
        KeyContext::Approval,
        KeyBinding::char('i'),
        Command::ApproveEachStep,
        "approve a custom action, asking about each of its steps",
    ),
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
        KeyBinding::char('L'),
        Command::PickLocators,
        "the target's locators, checked, and its recipe line",
    ),
    Binding::new(
        KeyContext::Approval,
        KeyBinding::char('n'),
        Command::Skip,
        "skip this action",
    )
    .hinted(),
    Binding::new(
        KeyContext::Approval,
        KeyBinding::char('N'),
        Command::SkipWithNote,
        "skip, with a note for the model",
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
        KeyContext::ApprovalNote,
        KeyBinding::plain(KeyCode::Enter),
        Command::Submit,
        "skip the action, sending the note",
    )
    .hinted(),
    Binding::new(
        KeyContext::ApprovalNote,
        KeyBinding::plain(KeyCode::Esc),
        Command::Cancel,
        "back to the approval",
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

/// Draws the open modal, if any (none while an element is being picked:
/// the listing must be visible).
pub fn draw(frame: &mut Frame, state: &AppState) {
    match &state.modal {
        Some(Modal::Approval(m)) if !m.picking => draw_approval(frame, state, m),
        Some(Modal::AskUser(m)) => draw_ask(frame, state, m),
        Some(Modal::Inspector { entry, scroll }) => {
            if let Some(entry) = state.log.get(*entry) {
                inspector::draw(frame, state, entry, *scroll);
            }
        }
        Some(Modal::Help { scroll }) => draw_help(frame, state, *scroll),
        _ => {}
    }
}

fn draw_approval(frame: &mut Frame, state: &AppState, modal: &ApprovalModal) {
    let theme = &state.theme;
    let request = &modal.request;
    let area = approval_area(frame.area());
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
    if let Some(proposed) = &modal.proposed {
        lines.push(label_line(
            "was",
            format!("{proposed} (as proposed; you picked another element)"),
            theme,
            theme.muted(),
        ));
    }
    if let crate::actions::Action::Custom(_) = request.action {
        lines.push(label_line(
            "steps",
            format!(
                "approving it approves the steps it takes, up to {} risk; i asks about each",
                request.risk
            ),
            theme,
            text,
        ));
    }
    let context = if modal.editor.is_some() {
        KeyContext::ApprovalEdit
    } else if modal.note.is_some() {
        KeyContext::ApprovalNote
    } else {
        KeyContext::Approval
    };
    let (editor, editor_title) = match (&modal.editor, &modal.note) {
        (Some(editor), _) => (Some(editor), "Edit the action (JSON)"),
        (None, Some(note)) => (
            Some(note),
            "Why skip it? The model reads this as your words",
        ),
        (None, None) => (None, ""),
    };
    match editor {
        None => {
            // The footer gets the rows its keys need at this width (word
            // wrapping leaves some slack), so no key is cut off.
            let keys = footer(state, context);
            let width = usize::from(inner.width.max(1));
            let rows = (keys.width() + width / 4) / width + 1;
            let rows = u16::try_from(rows.clamp(2, 5)).unwrap_or(2);
            let [body, foot] =
                Layout::vertical([Constraint::Min(1), Constraint::Length(rows)]).areas(inner);
            frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), body);
            frame.render_widget(Paragraph::new(keys).wrap(Wrap { trim: false }), foot);
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
            let block = titled_block(editor_title.into(), true, theme);
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
    let area = ask_area(frame.area());
    let title = match modal.from_page {
        true => "The page asks",
        false => "The model asks",
    };
    let inner = open_modal(frame, area, title.into(), theme);
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

/// Width of the keys column in help.
const HELP_KEYS_WIDTH: usize = 16;

/// Every key by context, from the keymap, then every `:` command and
/// action with its arguments, from the table and the catalog the command
/// line parses with; wrapped to `width` columns, a long description
/// under its keys.
pub fn help_lines(state: &AppState, width: u16) -> Vec<Line<'static>> {
    let theme = &state.theme;
    let heading = |title: String| {
        Line::from(Span::styled(
            title,
            theme.fg(theme.palette.accent).add_modifier(Modifier::BOLD),
        ))
    };
    let mut rows: Vec<(Line<'static>, Vec<(String, String)>)> = Vec::new();
    for context in state.keymap.contexts() {
        let keys = state.keymap.help_rows(context);
        if !keys.is_empty() {
            let keys = keys.into_iter().map(|(k, d)| (k, d.to_string())).collect();
            rows.push((heading(context.title().to_string()), keys));
        }
    }
    let commands = LINE_COMMANDS
        .iter()
        .map(|c| (format!(":{}", c.usage()), c.about.to_string()))
        .collect();
    rows.push((
        heading("Commands of the `:` line (Tab completes a name)".into()),
        commands,
    ));
    let actions = state
        .catalog
        .specs()
        .iter()
        .map(|spec| {
            (
                format!(":{}", spec.usage()),
                first_sentence(&spec.description),
            )
        })
        .collect();
    rows.push((
        heading("Actions on the `:` line (as the model calls them)".into()),
        actions,
    ));
    let width = usize::from(width).max(HELP_KEYS_WIDTH + 10);
    let mut lines = Vec::new();
    for (title, entries) in rows {
        lines.push(title);
        for (keys, description) in entries {
            help_entry(&mut lines, &keys, &description, width, state);
        }
    }
    lines
}

/// One entry of help: the keys, then the description wrapped beside them
/// (under them when the keys are wider than their column).
fn help_entry(
    lines: &mut Vec<Line<'static>>,
    keys: &str,
    description: &str,
    width: usize,
    state: &AppState,
) {
    let theme = &state.theme;
    let text_width = width - HELP_KEYS_WIDTH;
    let mut wrapped = wrap_words(description, text_width).into_iter();
    let keys_fit = keys.chars().count() + 2 < HELP_KEYS_WIDTH;
    if keys_fit {
        let first = wrapped.next().unwrap_or_default();
        lines.push(Line::from(vec![
            Span::styled(
                format!("  {keys:<w$}", w = HELP_KEYS_WIDTH - 2),
                theme.key(),
            ),
            Span::styled(first, theme.fg(theme.palette.text)),
        ]));
    } else {
        for part in wrap_words(keys, width - 2) {
            lines.push(Line::from(Span::styled(format!("  {part}"), theme.key())));
        }
    }
    for rest in wrapped {
        lines.push(Line::from(vec![
            Span::raw(" ".repeat(HELP_KEYS_WIDTH)),
            Span::styled(rest, theme.fg(theme.palette.text)),
        ]));
    }
}

/// `text` in lines of at most `width` characters, broken between words
/// (a word longer than a line is cut).
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let word: String = word.chars().take(width).collect();
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() || out.is_empty() {
        out.push(line);
    }
    out
}

/// The first sentence of an action's description, for its help line.
fn first_sentence(text: &str) -> String {
    match text.find(". ") {
        Some(end) => text[..=end].to_string(),
        None => text.to_string(),
    }
}

fn draw_help(frame: &mut Frame, state: &AppState, scroll: usize) {
    let theme = &state.theme;
    let (area, body, foot) = help_layout((frame.area().width, frame.area().height));
    let lines = help_lines(state, body.width);
    let total = lines.len();
    let shown = usize::from(body.height).min(total.saturating_sub(scroll));
    let title = format!(
        "Keys and commands · lines {}–{} of {total}",
        scroll + 1,
        scroll + shown
    );
    open_modal(frame, area, title, theme);
    frame.render_widget(
        Paragraph::new(lines).scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0)),
        body,
    );
    frame.render_widget(
        Paragraph::new(footer(state, KeyContext::Help)).wrap(Wrap { trim: false }),
        foot,
    );
}
