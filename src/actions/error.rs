//! [`ActionError`]: everything that can be wrong with an action before it
//! runs. Every part of the catalog (parsing, schemas, selectors, keys,
//! the command line) reports through it, so it stands below them all.

use super::result::{ActionResult, FailureReason};

/// Everything that can be wrong with an action before it runs.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ActionError {
    /// A parameter is missing, of the wrong type, out of range or unknown.
    #[error("{field}: {reason}")]
    InvalidParams {
        /// Where, as `action.param` (or `action.from.index` when nested).
        field: String,
        /// What is wrong and what would be right.
        reason: String,
    },
    /// No action of that name exists in the catalog.
    #[error("unknown action `{name}`; {}", suggestion_text(.suggestions, *.close))]
    UnknownAction {
        /// The name that was asked for.
        name: String,
        /// Names in the catalog that look close to it (or all names when
        /// none is close).
        suggestions: Vec<String>,
        /// Whether `suggestions` are close matches rather than the full list.
        close: bool,
    },
    /// The action is not shaped as `{"name": {params}}`.
    #[error("malformed action: {reason}")]
    Malformed {
        /// What was wrong with the shape.
        reason: String,
    },
    /// A CSS selector is outside the allowed subset or does not parse.
    #[error("invalid selector `{selector}` at column {column}: {reason}")]
    InvalidSelector {
        /// The selector as given.
        selector: String,
        /// 1-based character column where the problem starts.
        column: usize,
        /// Why it was refused.
        reason: String,
    },
    /// A key name in a `press_keys` combination is not known.
    #[error("{reason}")]
    InvalidKeys {
        /// What is wrong with the combination.
        reason: String,
    },
    /// A custom action could not join the catalog.
    #[error("custom action `{name}` rejected: {reason}")]
    InvalidCustomAction {
        /// The custom action's name.
        name: String,
        /// Why it was refused.
        reason: String,
    },
    /// A TUI command line could not be read.
    #[error("command at column {column}: {reason}")]
    CommandSyntax {
        /// 1-based character column of the problem.
        column: usize,
        /// What was wrong.
        reason: String,
    },
}

fn suggestion_text(suggestions: &[String], close: bool) -> String {
    if suggestions.is_empty() {
        "run `webagent actions` for the list".to_string()
    } else if close {
        format!("did you mean: {}?", suggestions.join(", "))
    } else {
        format!("available actions: {}", suggestions.join(", "))
    }
}

impl ActionError {
    /// The failure reason this error becomes when handed back as a result.
    /// Every pre-execution problem is the caller's input, so they are all
    /// `invalid_params`.
    pub fn reason(&self) -> FailureReason {
        FailureReason::InvalidParams
    }

    /// This error as the result handed back to the model.
    pub fn to_result(&self) -> ActionResult {
        ActionResult::fail(self.reason(), self.to_string())
    }

    /// Builds an [`ActionError::InvalidParams`].
    pub(crate) fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        ActionError::InvalidParams {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

impl From<ActionError> for ActionResult {
    fn from(error: ActionError) -> Self {
        error.to_result()
    }
}
