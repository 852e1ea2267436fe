//! How a step reads in the history the model is shown: its result, and a
//! proposed action that may not have validated. A run writes its steps
//! this way and a resumed conversation rebuilds them the same way.

use serde_json::Value;

use crate::actions::ActionResult;
use crate::events::PersonDecision;

/// The result as the model reads it in the history.
pub(super) fn result_text(result: &ActionResult) -> String {
    match result {
        ActionResult::Success { data: None } => "ok".to_string(),
        ActionResult::Success { data: Some(data) } => format!("ok: {}", compact(data)),
        ActionResult::Failure { reason, message } => format!("failed ({reason}): {message}"),
    }
}

pub(super) fn compact(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The name and parameters of a proposed `{"name": {params}}`.
pub(super) fn split_action(proposed: &Value) -> (String, Value) {
    match proposed.as_object().and_then(|o| o.iter().next()) {
        Some((name, params)) => (name.clone(), params.clone()),
        None => (String::new(), Value::Null),
    }
}

/// `name {params}` for a proposed action that did not validate.
pub(super) fn action_text(proposed: &Value) -> String {
    match proposed.as_object().and_then(|o| o.iter().next()) {
        Some((name, params)) => format!("{name} {params}"),
        None => proposed.to_string(),
    }
}

/// The action that ran as the model reads it in its history, and, when
/// the person changed what the model proposed, the proposal too, so the
/// model does not take the person's choice for its own.
pub(super) fn shown_action(ran: &Value, person: Option<&PersonDecision>) -> String {
    match person.and_then(|decision| decision.proposed.as_ref()) {
        Some(proposed) => format!(
            "{} (the person changed your proposal, {}, into this)",
            action_text(ran),
            action_text(proposed)
        ),
        None => action_text(ran),
    }
}
