//! The action log as the state holds it: one row per action, agent or
//! manual, with how it ended, and the kinds of row that are not actions
//! (a task, the person's message, a retry…).

use crate::actions::ActionResult;
use crate::events::{HealRecord, StepRecord, Verdict};

/// How an action in the log ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Still running.
    Pending,
    /// It worked.
    Ok,
    /// It failed.
    Failed {
        /// The failure reason word (`not_found`, `denied`, …).
        reason: String,
        /// The message.
        message: String,
    },
}

impl From<&ActionResult> for Outcome {
    fn from(result: &ActionResult) -> Self {
        match result {
            ActionResult::Success { .. } => Outcome::Ok,
            ActionResult::Failure { reason, message } => Outcome::Failed {
                reason: reason.as_str().to_string(),
                message: message.clone(),
            },
        }
    }
}

/// One row of the action log.
#[derive(Debug, Clone, PartialEq)]
pub struct LogEntry {
    /// The agent step, or `None` for an action run by hand.
    pub step: Option<usize>,
    /// For an action run by hand, the id pairing it with its result.
    pub manual_id: Option<u64>,
    /// The action's name.
    pub action: String,
    /// Its parameters, compact JSON.
    pub params: String,
    /// The target element's text (or selector), when it has a target.
    pub target: String,
    /// How it ended.
    pub outcome: Outcome,
    /// Milliseconds the action itself took.
    pub ms: Option<u64>,
    /// Milliseconds it waited for the person's approval first.
    pub wait_ms: Option<u64>,
    /// The whole step, for the inspector (agent steps only).
    pub record: Option<StepRecord>,
    /// The model's answer as it streamed in.
    pub raw_response: String,
    /// The step of the custom action this row's action ran inside: the
    /// row is drawn nested under that action's row.
    pub within: Option<usize>,
}

impl LogEntry {
    /// A row for `action` on `target`, with nothing else known yet.
    pub fn row(action: &str, target: impl Into<String>, outcome: Outcome) -> Self {
        LogEntry {
            step: None,
            manual_id: None,
            action: action.to_string(),
            params: String::new(),
            target: target.into(),
            outcome,
            ms: None,
            wait_ms: None,
            record: None,
            raw_response: String::new(),
            within: None,
        }
    }

    /// What the person did to this row's action at its approval, as the
    /// row says it: they changed it, or refused it.
    pub fn person_mark(&self) -> Option<&'static str> {
        let decision = self.record.as_ref()?.person.as_ref()?;
        match decision.verdict {
            Verdict::Edited => Some("edited by you"),
            Verdict::Denied => Some("refused by you"),
            _ => None,
        }
    }
}

/// The log's row kinds that are not actions, as their `action` word.
pub mod rows {
    /// A run began with this task.
    pub const TASK: &str = "task";
    /// The person's message to the agent.
    pub const MESSAGE: &str = "you say";
    /// The person asked for a step again.
    pub const RETRY: &str = "retry";
    /// The run continues another.
    pub const RESUMED: &str = "resumed";
    /// A fresh conversation began.
    pub const NEW: &str = "new";
    /// The run ended other than by `done`.
    pub const END: &str = "end";
    /// The model handed the page to the person.
    pub const HAND_OVER: &str = "hand over";
    /// A recipe step that no longer ran was handed to the agent.
    pub const HEALED: &str = "healed";
    /// A line a script wrote with `log(…)`.
    pub const LOG: &str = "log";
}

/// The log row of a healed (or not healed) recipe step: what changed and
/// what it cost, the sub-goal in the row's detail.
pub fn healed_row(heal: &HealRecord) -> LogEntry {
    let change = if heal.success {
        format!("{} → {}", heal.old, heal.new)
    } else {
        format!("{} → not healed", heal.old)
    };
    let outcome = if heal.success {
        Outcome::Ok
    } else {
        Outcome::Failed {
            reason: "not healed".into(),
            message: heal.failure.clone(),
        }
    };
    LogEntry {
        step: Some(heal.step),
        params: format!(
            "{} model calls, {} tokens; asked: {}",
            heal.model_calls, heal.usage.total_tokens, heal.sub_goal
        ),
        ..LogEntry::row(rows::HEALED, change, outcome)
    }
}
