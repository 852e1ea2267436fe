//! What an action hands back: success with optional data, or a failure with
//! a reason the model can act on. Failures are values, never panics, so the
//! agent loop can feed them back to the model and carry on.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// Why an action failed. The set is closed so the model, traces and the TUI
/// all speak the same words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureReason {
    /// The target (index or selector) matched nothing on the page.
    NotFound,
    /// The target exists but is hidden, zero-sized or off the page.
    NotVisible,
    /// The target is disabled, read-only, or covered by another element.
    NotInteractive,
    /// The action did not finish within its time limit.
    Timeout,
    /// A navigation failed or interrupted the action.
    Navigation,
    /// Policy refused the action (allowed domains, `execute_javascript` off).
    Blocked,
    /// The person declined the action at the approval gate.
    Denied,
    /// The action's name or parameters are wrong; nothing was run.
    InvalidParams,
    /// Anything else; the message says what happened.
    Unknown,
}

impl FailureReason {
    /// The snake_case word used in JSON, e.g. `not_found`.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureReason::NotFound => "not_found",
            FailureReason::NotVisible => "not_visible",
            FailureReason::NotInteractive => "not_interactive",
            FailureReason::Timeout => "timeout",
            FailureReason::Navigation => "navigation",
            FailureReason::Blocked => "blocked",
            FailureReason::Denied => "denied",
            FailureReason::InvalidParams => "invalid_params",
            FailureReason::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for FailureReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The outcome of one action. Serializes exactly as `{"ok":true}`,
/// `{"ok":true,"data":…}` or `{"ok":false,"reason":"…","message":"…"}`.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionResult {
    /// The action did what it was asked.
    Success {
        /// What the action produced (extracted data, page text, a file path,
        /// how many elements a selector matched), if anything.
        data: Option<Value>,
    },
    /// The action did not happen, or did not finish.
    Failure {
        /// The category of failure.
        reason: FailureReason,
        /// A sentence for the model and the person saying what went wrong.
        message: String,
    },
}

impl ActionResult {
    /// Success with nothing to report.
    pub fn ok() -> Self {
        ActionResult::Success { data: None }
    }

    /// Success carrying data for the model.
    pub fn ok_with(data: Value) -> Self {
        ActionResult::Success { data: Some(data) }
    }

    /// A failure with the given reason and message.
    pub fn fail(reason: FailureReason, message: impl Into<String>) -> Self {
        ActionResult::Failure {
            reason,
            message: message.into(),
        }
    }

    /// The target matched nothing.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::fail(FailureReason::NotFound, message)
    }

    /// The target is not visible.
    pub fn not_visible(message: impl Into<String>) -> Self {
        Self::fail(FailureReason::NotVisible, message)
    }

    /// The target cannot be interacted with (disabled, read-only, covered).
    pub fn not_interactive(message: impl Into<String>) -> Self {
        Self::fail(FailureReason::NotInteractive, message)
    }

    /// The action ran out of time.
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::fail(FailureReason::Timeout, message)
    }

    /// A navigation failed or interrupted the action.
    pub fn navigation(message: impl Into<String>) -> Self {
        Self::fail(FailureReason::Navigation, message)
    }

    /// Policy refused the action.
    pub fn blocked(message: impl Into<String>) -> Self {
        Self::fail(FailureReason::Blocked, message)
    }

    /// The person declined the action.
    pub fn denied(message: impl Into<String>) -> Self {
        Self::fail(FailureReason::Denied, message)
    }

    /// The action's name or parameters are wrong.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::fail(FailureReason::InvalidParams, message)
    }

    /// Any other failure.
    pub fn unknown(message: impl Into<String>) -> Self {
        Self::fail(FailureReason::Unknown, message)
    }

    /// Adds how many elements a selector matched and which one was used
    /// (`{"matched": 3, "used": 0}` in the data), so the model learns its
    /// selector was ambiguous. Other data is kept; a non-object value moves
    /// under `value`. Failures are returned unchanged.
    pub fn with_matches(self, matched: usize, used: usize) -> Self {
        match self {
            ActionResult::Success { data } => {
                let mut object = match data {
                    Some(Value::Object(object)) => object,
                    Some(other) => {
                        let mut object = serde_json::Map::new();
                        object.insert("value".to_string(), other);
                        object
                    }
                    None => serde_json::Map::new(),
                };
                object.insert("matched".to_string(), Value::from(matched));
                object.insert("used".to_string(), Value::from(used));
                ActionResult::Success {
                    data: Some(Value::Object(object)),
                }
            }
            failure => failure,
        }
    }

    /// Whether the action succeeded.
    pub fn is_ok(&self) -> bool {
        matches!(self, ActionResult::Success { .. })
    }

    /// The failure reason, if the action failed.
    pub fn reason(&self) -> Option<FailureReason> {
        match self {
            ActionResult::Success { .. } => None,
            ActionResult::Failure { reason, .. } => Some(*reason),
        }
    }

    /// The data of a success, if any.
    pub fn data(&self) -> Option<&Value> {
        match self {
            ActionResult::Success { data } => data.as_ref(),
            ActionResult::Failure { .. } => None,
        }
    }
}

/// The flat wire form both directions go through, so field order and the
/// omission of absent fields are decided in one place.
#[derive(Serialize, Deserialize)]
struct WireResult {
    ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<FailureReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

impl Serialize for ActionResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let wire = match self {
            ActionResult::Success { data } => WireResult {
                ok: true,
                data: data.clone(),
                reason: None,
                message: None,
            },
            ActionResult::Failure { reason, message } => WireResult {
                ok: false,
                data: None,
                reason: Some(*reason),
                message: Some(message.clone()),
            },
        };
        wire.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ActionResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = WireResult::deserialize(deserializer)?;
        if wire.ok {
            return Ok(ActionResult::Success { data: wire.data });
        }
        // A failure written without a reason (older traces, hand-written
        // JSON) still reads back as a failure rather than an error.
        Ok(ActionResult::Failure {
            reason: wire.reason.unwrap_or(FailureReason::Unknown),
            message: wire.message.unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn success_without_data_is_just_ok() {
        let text = serde_json::to_string(&ActionResult::ok()).unwrap();
        assert_eq!(text, r#"{"ok":true}"#);
    }

    #[test]
    fn success_with_data_carries_it() {
        let result = ActionResult::ok_with(json!({"matched": 3, "used": 0}));
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({"ok": true, "data": {"matched": 3, "used": 0}})
        );
    }

    #[test]
    fn failure_has_reason_and_message_in_snake_case() {
        let result = ActionResult::not_interactive("button is disabled");
        assert_eq!(
            serde_json::to_string(&result).unwrap(),
            r#"{"ok":false,"reason":"not_interactive","message":"button is disabled"}"#
        );
    }

    #[test]
    fn every_constructor_maps_to_its_reason() {
        let cases = [
            (ActionResult::not_found("m"), "not_found"),
            (ActionResult::not_visible("m"), "not_visible"),
            (ActionResult::not_interactive("m"), "not_interactive"),
            (ActionResult::timeout("m"), "timeout"),
            (ActionResult::navigation("m"), "navigation"),
            (ActionResult::blocked("m"), "blocked"),
            (ActionResult::denied("m"), "denied"),
            (ActionResult::invalid_params("m"), "invalid_params"),
            (ActionResult::unknown("m"), "unknown"),
        ];
        for (result, word) in cases {
            assert!(!result.is_ok());
            let value = serde_json::to_value(&result).unwrap();
            assert_eq!(value["reason"], json!(word));
            assert_eq!(result.reason().map(FailureReason::as_str), Some(word));
        }
    }

    #[test]
    fn match_counts_join_the_data() {
        assert_eq!(
            serde_json::to_value(ActionResult::ok().with_matches(3, 0)).unwrap(),
            json!({"ok": true, "data": {"matched": 3, "used": 0}})
        );
        assert_eq!(
            ActionResult::ok_with(json!({"url": "/a"}))
                .with_matches(2, 1)
                .data(),
            Some(&json!({"url": "/a", "matched": 2, "used": 1}))
        );
        assert_eq!(
            ActionResult::ok_with(json!("text"))
                .with_matches(2, 0)
                .data(),
            Some(&json!({"value": "text", "matched": 2, "used": 0}))
        );
        let failure = ActionResult::not_found("nothing matched .x");
        assert_eq!(failure.clone().with_matches(0, 0), failure);
    }

    #[test]
    fn results_read_back_from_json() {
        for result in [
            ActionResult::ok(),
            ActionResult::ok_with(json!("page text")),
            ActionResult::timeout("waited 5000 ms for #toast"),
        ] {
            let text = serde_json::to_string(&result).unwrap();
            let back: ActionResult = serde_json::from_str(&text).unwrap();
            assert_eq!(back, result);
        }
    }
}
