//! The approval modal: approve, edit, skip or stop an action, retarget it
//! by picking an element, and answers to the model's questions.

use serde_json::Value;
use tui_textarea::TextArea;

use crate::actions::{Action, Target};
use crate::environment::{listed_line, ApprovalDecision};
use crate::tui::event::Effect;
use crate::tui::keys::Command;
use crate::tui::state::{AppState, Modal, Pane, RunStatus};
use crate::tui::task::set_field_focus;

/// What the model is told when the person skips an action.
const SKIPPED: &str =
    "the person skipped this action; do not repeat it, choose another way or ask the user";

/// Takes the approval modal's reply channel and closes the modal.
pub(super) fn decide(state: &mut AppState, decision: ApprovalDecision, effects: &mut Vec<Effect>) {
    if let Some(Modal::Approval(mut m)) = state.modal.take() {
        if let Some(reply) = m.reply.take() {
            effects.push(Effect::Decide { reply, decision });
        }
    }
}

/// An approval of the action on screen: `decision` as the person chose
/// it, or, when they picked another element for it first, the changed
/// action as their edit.
fn approve(state: &mut AppState, decision: ApprovalDecision, effects: &mut Vec<Effect>) {
    let changed = match &state.modal {
        Some(Modal::Approval(m)) if m.proposed.is_some() => Some(m.request.action.clone()),
        _ => None,
    };
    match changed {
        Some(action) => decide(state, ApprovalDecision::Edit(action), effects),
        None => decide(state, decision, effects),
    }
}

/// Whether the action awaiting approval is a custom action (a script's).
fn custom_on_screen(state: &AppState) -> bool {
    matches!(&state.modal, Some(Modal::Approval(m)) if matches!(m.request.action, Action::Custom(_)))
}

/// A key in the approval modal.
pub(super) fn on_approval_key(state: &mut AppState, command: Command, effects: &mut Vec<Effect>) {
    match command {
        Command::Approve => approve(state, ApprovalDecision::Approve { note: None }, effects),
        Command::ApproveName => approve(state, ApprovalDecision::ApproveNameForRun, effects),
        Command::ApproveAll => approve(state, ApprovalDecision::ApproveAllForRun, effects),
        Command::ApproveEachStep if custom_on_screen(state) => {
            approve(state, ApprovalDecision::ApproveAskingEachStep, effects)
        }
        Command::ApproveEachStep => state.notice(
            true,
            "only a custom action has steps of its own to ask about; y approves this one".into(),
        ),
        Command::Skip => decide(
            state,
            ApprovalDecision::Deny {
                reason: SKIPPED.into(),
            },
            effects,
        ),
        Command::SkipWithNote => {
            let theme = state.theme.clone();
            if let Some(Modal::Approval(m)) = state.modal.as_mut() {
                let mut note = TextArea::default();
                set_field_focus(&mut note, true, &theme);
                m.note = Some(note);
            }
        }
        Command::StopRun => {
            state.status.run = RunStatus::Stopping;
            decide(state, ApprovalDecision::Stop, effects);
        }
        Command::RetryStep => {
            // Only the agent has a model to ask; a recipe's or an MCP
            // client's step is theirs.
            let agent_run = state.recipe.is_none() && (!state.mcp || state.run_active());
            if agent_run {
                decide(state, ApprovalDecision::Retry, effects);
            } else {
                state.notice(
                    true,
                    "only an agent's step can be asked again; skip (n) or stop (x) it".into(),
                );
            }
        }
        Command::Edit => {
            let theme = state.theme.clone();
            if let Some(Modal::Approval(m)) = state.modal.as_mut() {
                let json =
                    serde_json::to_string_pretty(&m.request.action.to_json()).unwrap_or_default();
                let mut editor = TextArea::new(json.lines().map(str::to_string).collect());
                set_field_focus(&mut editor, true, &theme);
                m.editor = Some(editor);
                m.error = None;
            }
        }
        Command::PickLocators => super::picker::pick_approval_target(state, effects),
        Command::Pick => {
            let target = match &state.modal {
                Some(Modal::Approval(m)) => m.request.action.target().cloned(),
                _ => None,
            };
            if target.is_none() {
                state.notice(true, "this action has no element to change".into());
                return;
            }
            if let Some(Modal::Approval(m)) = state.modal.as_mut() {
                m.picking = true;
            }
            // Start the cursor on the element the model chose.
            if let Some(Target::Index { index }) = target {
                if let Some(pos) = state
                    .page
                    .as_ref()
                    .and_then(|p| p.elements.iter().position(|e| e.index == index))
                {
                    let (len, rows) = (state.element_count(), state.visible_rows(Pane::Elements));
                    state.elements.move_to(pos, len, rows);
                }
            }
        }
        _ => {}
    }
}

/// Enter in the refusal's note: the action is skipped, and the model
/// reads the note as the person's words (an empty note skips plainly).
pub(super) fn skip_with_note(state: &mut AppState, effects: &mut Vec<Effect>) {
    let note = match &state.modal {
        Some(Modal::Approval(m)) => m
            .note
            .as_ref()
            .map(|n| n.lines().join(" ").trim().to_string())
            .unwrap_or_default(),
        _ => return,
    };
    let reason = if note.is_empty() {
        SKIPPED.to_string()
    } else {
        format!("{SKIPPED}. The person says: {note}")
    };
    decide(state, ApprovalDecision::Deny { reason }, effects);
}

/// Ctrl+s in the parameters editor: the edited action, checked, goes
/// to the agent instead.
pub(super) fn submit_edit(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Some(Modal::Approval(m)) = state.modal.as_mut() else {
        return;
    };
    let text = m
        .editor
        .as_ref()
        .map(|e| e.lines().join("\n"))
        .unwrap_or_default();
    let parsed = serde_json::from_str::<Value>(&text)
        .map_err(|e| format!("not JSON: {e}"))
        .and_then(|value| state.catalog.parse(&value).map_err(|e| e.to_string()));
    match parsed {
        Ok(action) => decide(state, ApprovalDecision::Edit(action), effects),
        Err(error) => m.error = Some(error),
    }
}

/// The same action aimed at another listed element.
pub(super) fn retarget(state: &AppState, action: &Action, index: u32) -> Result<Action, String> {
    let mut json = action.to_json();
    let params = json
        .get_mut(action.name())
        .and_then(Value::as_object_mut)
        .ok_or_else(|| "this action has no parameters to change".to_string())?;
    params.remove("selector");
    params.insert("index".into(), Value::from(index));
    state.catalog.parse(&json).map_err(|e| e.to_string())
}

/// Enter while picking: the action, aimed at the element under the
/// listing's cursor, is back in the approval for the person to approve
/// (then it runs as their edit), pick again or refuse.
pub(super) fn pick_element(state: &mut AppState, _effects: &mut Vec<Effect>) {
    let Some(index) = state
        .page
        .as_ref()
        .and_then(|p| p.elements.get(state.elements.cursor))
        .and_then(|e| u32::try_from(e.index.0).ok())
    else {
        state.notice(true, "no element under the cursor".into());
        return;
    };
    let Some(Modal::Approval(m)) = &state.modal else {
        return;
    };
    match retarget(state, &m.request.action, index) {
        Ok(action) => {
            let line = state
                .page
                .as_ref()
                .and_then(|page| action.target().and_then(|t| listed_line(t, page)));
            if let Some(Modal::Approval(m)) = state.modal.as_mut() {
                let original = std::mem::replace(&mut m.request.action, action);
                m.proposed.get_or_insert(original);
                m.request.element = line;
                m.picking = false;
                m.error = None;
            }
            state.notice(
                false,
                "the action now targets the element you picked: y runs it, p picks again, n skips"
                    .into(),
            );
        }
        Err(error) => {
            state.notice(true, error.clone());
            if let Some(Modal::Approval(m)) = state.modal.as_mut() {
                m.picking = false;
                m.error = Some(error);
            }
        }
    }
}

/// The answer box closes: the answer (when `send` and not empty) goes
/// to the model.
pub(super) fn answer_question(state: &mut AppState, send: bool, effects: &mut Vec<Effect>) {
    if let Some(Modal::AskUser(mut m)) = state.modal.take() {
        let text = m.answer.lines().join("\n").trim().to_string();
        let answer = (send && (m.from_page || !text.is_empty())).then_some(text);
        if let Some(reply) = m.reply.take() {
            effects.push(Effect::Answer { reply, answer });
        }
    }
}
