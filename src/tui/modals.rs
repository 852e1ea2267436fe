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
use super::layout::{approval_area, ask_area, help_area};
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
    let area = help_area(frame.area());
    let inner = open_modal(frame, area, "Keys".into(), theme);
    let [body, foot] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
    frame.render_widget(
        Paragraph::new(help_lines(state)).scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0)),
        body,
    );
    frame.render_widget(Paragraph::new(footer(state, KeyContext::Help)), foot);
}
