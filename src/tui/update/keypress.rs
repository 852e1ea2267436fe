//! What a key does, by where it is pressed: the keymap names the command
//! for the context, and the command goes to the pane, field or dialog
//! that has the keys.
//!
//! Typed text never becomes commands. Two rules keep it so:
//!
//! - Only the person's own key takes them out of a text field (Esc, or
//!   Enter where it closes the field: the `:` line, the answer box).
//!   Starting a task or sending a message from the task field keeps the
//!   field focused, so whatever is typed next is text again; nothing the
//!   workbench does on its own (a run starting, a resumed run) moves the
//!   focus.
//! - Something can still come over a field while the person types: a
//!   dialog opening (an approval, the model's question). A key typed less
//!   than [`TYPING_GRACE`](crate::tui::state::TYPING_GRACE) after the last one in the field still belongs
//!   to the typing and is held back: a character goes into the field it
//!   was typed for (when that field is still there, as the task field
//!   always is) and Enter is dropped; the status line says what was held.
//!   The typing ends at the first pause of that length, and at any key
//!   that is a command (Enter, Esc, Tab…), so a key pressed after a
//!   pause, or after leaving the field with Esc, works as usual. Ctrl+C
//!   always quits; Esc and the arrows are never held.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use tui_textarea::TextArea;

use crate::environment::{ApprovalDecision, ApprovalMode};
use crate::tui::event::Effect;
use crate::tui::keys::{Command, KeyContext};
use crate::tui::layout::{help_layout, help_max_scroll, inspector_layout, inspector_max_scroll};
use crate::tui::state::{AppState, Modal, Outcome, Pane, RunStatus, Typing};
use crate::tui::task::set_field_focus;
use crate::tui::{element_detail, inspector, modals, reflection, sitemap_tree};

use super::approval::{
    answer_question, on_approval_key, pick_element, skip_with_note, submit_edit,
};
use super::commands::{
    complete_command, start_task, submit_command_line, COMMAND_LINE_PLACEHOLDER,
};
use super::conversation::{new_conversation, retry_failed_step};
use super::debugging::{move_source_cursor, on_debug_key};
use super::export::ask_export_name;
use super::named::recipe_list;
use super::picker;
use super::recording::{insert_line, pick_assertion};
use super::sessions::{
    on_replay_key, on_search_key, on_sessions_key, open_sessions, search_typed, show_replay_row,
};
use super::view::{
    active_field, field_in, highlight_cursor, move_elements, moved, page_key, refollow,
    request_picture, scrolled, set_focus,
};

/// A key press: a command of the keymap in the context it was pressed
/// in, or text for the field being typed in, unless it belongs to a
/// typing that something came over (see the module's rules).
pub(super) fn on_key(state: &mut AppState, key: KeyEvent, effects: &mut Vec<Effect>) {
    if page_key(state, key, effects) {
        return;
    }
    let context = state.key_context();
    if held_back(state, context, &key) {
        return;
    }
    let layers = state.key_layers();
    let command = state.keymap.lookup_layered(&layers, &key);
    if command.is_some() {
        // Enter, Esc, Tab and the like end a typing: what follows is
        // meant for wherever the keys are then.
        state.typing = None;
    }
    let Some(command) = command else {
        if context.takes_text() {
            if let Some(field) = active_field(state) {
                field.input(key);
                if key.kind != KeyEventKind::Release {
                    state.typing = Some(Typing {
                        field: context,
                        at: Instant::now(),
                        held: String::new(),
                    });
                }
            }
            if context == KeyContext::SessionSearch {
                search_typed(state);
            }
        }
        return;
    };
    if command == Command::Quit {
        quit(state, effects);
        return;
    }
    if layers.first() == Some(&KeyContext::Replay)
        && state.keymap.bound(KeyContext::Replay, &key).is_some()
    {
        on_replay_key(state, command, effects);
        return;
    }
    if layers.first() == Some(&KeyContext::Debug)
        && state.keymap.bound(KeyContext::Debug, &key).is_some()
    {
        on_debug_key(state, command, effects);
        return;
    }
    match context {
        KeyContext::Sessions => on_sessions_key(state, command, effects),
        KeyContext::SessionSearch => on_search_key(state, command),
        KeyContext::CommandLine => match command {
            Command::Submit => submit_command_line(state, effects),
            Command::Cancel => state.command_line = None,
            Command::Complete => complete_command(state),
            _ => {}
        },
        KeyContext::Task => match command {
            Command::Submit => start_task(state, effects),
            Command::Cancel => set_focus(state, Pane::Elements),
            _ => {}
        },
        KeyContext::Approval => on_approval_key(state, command, effects),
        KeyContext::ApprovalEdit => match command {
            Command::Submit => submit_edit(state, effects),
            Command::Cancel => {
                if let Some(Modal::Approval(m)) = state.modal.as_mut() {
                    m.editor = None;
                    m.error = None;
                }
            }
            _ => {}
        },
        KeyContext::ApprovalNote => match command {
            Command::Submit => skip_with_note(state, effects),
            Command::Cancel => {
                if let Some(Modal::Approval(m)) = state.modal.as_mut() {
                    m.note = None;
                }
            }
            _ => {}
        },
        KeyContext::Picking => match command {
            Command::Submit => pick_element(state, effects),
            Command::Cancel => {
                if let Some(Modal::Approval(m)) = state.modal.as_mut() {
                    m.picking = false;
                }
            }
            movement => move_elements(state, movement, effects),
        },
        KeyContext::AskUser => match command {
            Command::Submit => answer_question(state, true, effects),
            Command::Cancel => answer_question(state, false, effects),
            _ => {}
        },
        KeyContext::Inspector | KeyContext::Help | KeyContext::ElementDetail => {
            let (lines, rows) = match &state.modal {
                Some(Modal::Element { .. } | Modal::Locators { .. }) => {
                    let (_, body, _) = element_detail::layout(state.size);
                    let max = element_detail::max_scroll(state, state.size);
                    (max + 1, usize::from(body.height).max(1))
                }
                Some(Modal::Inspector { entry, .. }) => {
                    let (_, body, _) = inspector_layout(state.size);
                    let total = state
                        .log
                        .get(*entry)
                        .map_or(0, |e| inspector::lines(e, &state.theme, body.width).len());
                    // Offsets run to the one that shows the last page, so
                    // End lands on the end of the prompt, not past it.
                    let max = inspector_max_scroll(total, state.size);
                    (max + 1, usize::from(body.height).max(1))
                }
                _ => {
                    let (_, body, _) = help_layout(state.size);
                    let total = modals::help_lines(state, body.width).len();
                    let max = help_max_scroll(total, state.size);
                    (max + 1, usize::from(body.height).max(1))
                }
            };
            match (command, state.modal.as_mut()) {
                (Command::Cancel, Some(Modal::Locators { .. })) => picker::close(state),
                (Command::Cancel, _) => state.modal = None,
                (Command::CopyLine, _) => copy_line(state, effects),
                (Command::InsertLine, _) => insert_line(state),
                (Command::PickAssertion(number), _) => pick_assertion(state, number, effects),
                (
                    _,
                    Some(Modal::Inspector { scroll, .. })
                    | Some(Modal::Help { scroll })
                    | Some(Modal::Element { scroll, .. })
                    | Some(Modal::Locators { scroll, .. }),
                ) => {
                    *scroll = scrolled(*scroll, command, rows, lines);
                }
                _ => {}
            }
        }
        _ => on_pane_key(state, command, effects),
    }
}

/// `y` in the element view: the locator picker's recipe line to the
/// terminal's clipboard.
fn copy_line(state: &mut AppState, effects: &mut Vec<Effect>) {
    match state.locators.as_ref().and_then(|p| p.report.as_ref()) {
        Some(Ok(report)) => {
            effects.push(Effect::Copy(report.line.clone()));
            state.notice(false, "the recipe line is on the clipboard".into());
        }
        _ => state.notice(
            true,
            "no recipe line yet: L on an element of the listing reads it".into(),
        ),
    }
}

/// Whether `key` belongs to a typing that something came over: the keys
/// now go to `context`, not to the field typed in, and the key came
/// within the grace of the typing's last one. A held character goes into
/// the field it was typed for when that is still there.
fn held_back(state: &mut AppState, context: KeyContext, key: &KeyEvent) -> bool {
    let typed_key = matches!(
        key.code,
        KeyCode::Char(_) | KeyCode::Enter | KeyCode::Tab | KeyCode::Backspace
    ) && !key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    let grace = state.typing_grace;
    let Some(typing) = state.typing.as_mut() else {
        return false;
    };
    if typing.field == context || !typed_key || key.kind == KeyEventKind::Release {
        return false;
    }
    let now = Instant::now();
    if now.saturating_duration_since(typing.at) >= grace {
        // A pause: the person has seen what is in front of them.
        state.typing = None;
        return false;
    }
    typing.at = now;
    if let KeyCode::Char(c) = key.code {
        typing.held.push(c);
    }
    let field = typing.field;
    let held = typing.held.clone();
    let kept = match field_in(state, field) {
        Some(typed_in) => {
            if key.code != KeyCode::Enter {
                typed_in.input(*key);
            }
            true
        }
        None => false,
    };
    let whose = if field == KeyContext::Task {
        "the task field"
    } else {
        "the field you were typing in"
    };
    let fate = if kept {
        format!("went to {whose}")
    } else {
        "was dropped".to_string()
    };
    let what = match context {
        KeyContext::Approval | KeyContext::ApprovalEdit | KeyContext::Picking => {
            "the approval dialog"
        }
        KeyContext::AskUser => "the model's question",
        KeyContext::Sessions | KeyContext::SessionSearch => "the sessions view",
        _ => "something else",
    };
    state.notice(
        true,
        format!(
            "`{held}` {fate}: {what} came up while you typed (pause, then press the key again)"
        ),
    );
    true
}

/// Leaves the workbench, answering whoever waits on the person first.
pub(super) fn quit(state: &mut AppState, effects: &mut Vec<Effect>) {
    // Whoever waits on the person is answered first, so the agent task
    // ends cleanly instead of waiting on a dropped channel.
    match state.modal.take() {
        Some(Modal::Approval(mut m)) => {
            if let Some(reply) = m.reply.take() {
                effects.push(Effect::Decide {
                    reply,
                    decision: ApprovalDecision::Stop,
                });
            }
        }
        Some(Modal::AskUser(mut m)) => {
            if let Some(reply) = m.reply.take() {
                effects.push(Effect::Answer {
                    reply,
                    answer: None,
                });
            }
        }
        _ => {}
    }
    if state.run_active() {
        effects.push(Effect::StopRun);
    }
    state.quit = true;
    effects.push(Effect::Quit);
}

/// A key on a pane (not in a text field or a dialog).
fn on_pane_key(state: &mut AppState, command: Command, effects: &mut Vec<Effect>) {
    if matches!(
        command,
        Command::FocusTask | Command::CommandLine | Command::PickRecipe
    ) {
        // Acting on the live session: its panes come back.
        state.close_replay();
    }
    match command {
        Command::Help => state.modal = Some(Modal::Help { scroll: 0 }),
        Command::NewConversation => {
            state.close_replay();
            new_conversation(state, effects);
        }
        Command::OpenSessions => open_sessions(state, effects),
        Command::RetryStep => retry_failed_step(state, effects),
        Command::FocusNext => set_focus(state, state.focus.cycle(true)),
        Command::FocusPrev => set_focus(state, state.focus.cycle(false)),
        Command::FocusTask => set_focus(state, Pane::Task),
        Command::CommandLine => {
            let mut field = TextArea::default();
            set_field_focus(&mut field, true, &state.theme);
            field.set_placeholder_text(COMMAND_LINE_PLACEHOLDER);
            state.command_line = Some(field);
            // The row above the line says what the line has to say, and
            // nothing older.
            state.status.notice = None;
        }
        Command::CycleApproval => {
            let next = match state.status.approval {
                ApprovalMode::Never => ApprovalMode::Risky,
                ApprovalMode::Risky => ApprovalMode::Always,
                ApprovalMode::Always => ApprovalMode::Never,
            };
            state.status.approval = next;
            state.notice(false, format!("approval mode: {}", next.as_str()));
            effects.push(Effect::SetApprovalMode(next));
        }
        Command::StopRun => {
            if state.run_active() {
                state.status.run = RunStatus::Stopping;
                effects.push(Effect::StopRun);
            } else if state
                .log
                .iter()
                .any(|e| e.manual_id.is_some() && e.outcome == Outcome::Pending)
            {
                // A hand-typed custom action may be a script in a loop.
                state.notice(false, "cancelling the running script".into());
                effects.push(Effect::CancelScript);
            } else {
                state.notice(true, "no run, recipe or script to stop".into());
            }
        }
        Command::PickRecipe => {
            let mut field = TextArea::new(vec!["recipe ".to_string()]);
            set_field_focus(&mut field, true, &state.theme);
            field.move_cursor(tui_textarea::CursorMove::End);
            state.command_line = Some(field);
            let listed = recipe_list(state);
            state.notice(state.recipes.is_empty(), listed);
        }
        Command::ExportSession => ask_export_name(state),
        Command::PauseResume => match state.status.run {
            RunStatus::Running => {
                state.status.run = RunStatus::Paused;
                state.notice(false, "paused before the next step (p resumes)".into());
                effects.push(Effect::SetPaused(true));
            }
            RunStatus::Paused => {
                state.status.run = RunStatus::Running;
                state.notice(false, "resumed".into());
                effects.push(Effect::SetPaused(false));
            }
            _ => state.notice(true, "no run to pause".into()),
        },
        Command::HandBack => match &state.status.run {
            RunStatus::HandedOver { .. } => {
                state.status.run = RunStatus::Running;
                state.notice(false, "handed back: the agent goes on".into());
                let approval = state.status.approval;
                effects.push(match state.handed_over_plan.take() {
                    Some(plan) => Effect::Resume { plan, approval },
                    None => Effect::HandBack { approval },
                });
            }
            _ => state.notice(true, "the agent has not handed the page to you".into()),
        },
        Command::TogglePage => {
            state.picture.visible = !state.picture.visible;
            state.picture.requested = None;
            refollow(state);
            effects.push(Effect::ShowPage(state.picture.visible));
            request_picture(state, effects);
        }
        Command::NextTheme => {
            let next = if state.theme.name == "light" {
                "dark"
            } else {
                "light"
            };
            effects.push(Effect::LoadTheme(next.to_string()));
        }
        Command::Inspect if state.focus == Pane::Log => {
            if state.log_view.cursor < state.log.len() {
                state.modal = Some(Modal::Inspector {
                    entry: state.log_view.cursor,
                    scroll: 0,
                });
            }
        }
        Command::PickLocators if state.focus == Pane::Elements => {
            if state.replay.is_some() {
                state.notice(
                    true,
                    "a past session's listing has its lines only; L on a step in the log checks what it acted on".into(),
                );
            } else {
                picker::pick_listed(state, state.elements.cursor, effects);
            }
        }
        Command::PickLocators if state.focus == Pane::Log => {
            picker::pick_logged_step(state, effects);
        }
        Command::Inspect if state.focus == Pane::Elements => {
            state.locators = None;
            if state.replay.is_some() {
                // A recorded listing is its lines only.
                state.notice(true, "a past session's listing has its lines only".into());
            } else if state.element_count() > state.elements.cursor {
                state.modal = Some(Modal::Element {
                    position: state.elements.cursor,
                    scroll: 0,
                });
            } else {
                state.notice(true, "no element is listed yet".into());
            }
        }
        Command::Submit if state.focus == Pane::Elements => highlight_cursor(state, effects),
        movement => match state.focus {
            Pane::Elements => move_elements(state, movement, effects),
            Pane::Log => {
                let (len, rows) = (state.log.len(), state.visible_rows(Pane::Log));
                if let Some(target) = moved(&state.log_view, movement, len, rows) {
                    state.log_view.move_to(target, len, rows);
                    show_replay_row(state, effects);
                }
            }
            Pane::Sitemap if state.debugger.is_some() => move_source_cursor(state, movement),
            Pane::Sitemap => {
                let len = sitemap_tree::rows(state).len();
                let rows = state.visible_rows(Pane::Sitemap);
                if let Some(target) = moved(&state.sitemap_view, movement, len, rows) {
                    state.sitemap_view.move_to(target, len, rows);
                }
            }
            Pane::Reflection => {
                let lines = reflection::lines(state).len();
                let rows = state.visible_rows(Pane::Reflection);
                state.reflection_view.offset =
                    scrolled(state.reflection_view.offset, movement, rows, lines);
            }
            Pane::Task => {}
        },
    }
}
