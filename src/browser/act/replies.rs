//! The action helper's replies, read, and the results built from them:
//! refusals with their reason, points moved between coordinate systems,
//! the data a success carries and the dialogs an action caused.

use serde_json::{json, Map, Value};

use super::error::ActError;
use crate::actions::{ActionResult, FailureReason};
use crate::browser::error::BrowserError;

/// Adds the dialogs an action caused to its result: under `dialogs` in a
/// success's data, as a sentence after a failure's message.
pub(super) fn with_dialogs(result: ActionResult, dialogs: Vec<Value>) -> ActionResult {
    if dialogs.is_empty() {
        return result;
    }
    match result {
        ActionResult::Success { data } => {
            let mut map = match data {
                Some(Value::Object(map)) => map,
                Some(other) => Map::from_iter([("value".to_string(), other)]),
                None => Map::new(),
            };
            map.insert("dialogs".into(), Value::Array(dialogs));
            ActionResult::ok_with(Value::Object(map))
        }
        ActionResult::Failure { reason, message } => {
            let list: Vec<String> = dialogs
                .iter()
                .map(|d| {
                    format!(
                        "{} {}",
                        d["type"].as_str().unwrap_or("dialog"),
                        d["message"]
                    )
                })
                .collect();
            ActionResult::fail(
                reason,
                format!("{message} (dialogs answered: {})", list.join("; ")),
            )
        }
    }
}

/// Whether a helper message carries points or boxes (`x`/`y`, `box`,
/// `path`).
pub(super) fn has_points(value: &Value) -> bool {
    ["x", "y", "box", "path"]
        .iter()
        .any(|k| value.get(k).is_some_and(|v| !v.is_null()))
}

/// Moves the points and boxes of a helper message by (`dx`, `dy`).
pub(super) fn shift_points(value: &mut Value, dx: f64, dy: f64) {
    let mv = |v: &mut Value, d: f64| {
        if let Some(n) = v.as_f64() {
            *v = json!(n + d);
        }
    };
    if let Some(x) = value.get_mut("x") {
        mv(x, dx);
    }
    if let Some(y) = value.get_mut("y") {
        mv(y, dy);
    }
    // [left, top, right, bottom]
    if let Some(Value::Array(b)) = value.get_mut("box") {
        for (i, v) in b.iter_mut().enumerate() {
            mv(v, if i % 2 == 0 { dx } else { dy });
        }
    }
    // [[x, y], …]
    if let Some(Value::Array(path)) = value.get_mut("path") {
        for p in path.iter_mut() {
            if let Value::Array(p) = p {
                if let [x, y, ..] = p.as_mut_slice() {
                    mv(x, dx);
                    mv(y, dy);
                }
            }
        }
    }
}

/// Reads the helper's `{ok, …}` reply.
pub(super) fn reply(value: Value) -> Result<Value, ActError> {
    match value.get("ok").and_then(Value::as_bool) {
        Some(true) => Ok(value),
        Some(false) => {
            let reason = value
                .get("reason")
                .cloned()
                .and_then(|r| serde_json::from_value::<FailureReason>(r).ok())
                .unwrap_or(FailureReason::Unknown);
            let message = value
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("the page-side check failed without saying why")
                .to_string();
            let retry = value.get("retry").and_then(Value::as_bool).unwrap_or(false);
            Err(ActError::Refused {
                reason,
                message,
                retry,
            })
        }
        None => Err(ActError::Browser(BrowserError::Decode(format!(
            "unexpected reply from the action helper: {value}"
        )))),
    }
}

/// The reply without its `ok` flag and the internal `done` marker.
pub(super) fn strip_ok(mut reply: Value) -> Value {
    if let Value::Object(map) = &mut reply {
        map.remove("ok");
        map.remove("done");
        map.remove("focused");
        map.remove("retry");
    }
    reply
}

pub(super) fn copy_matches(from: &Value, to: &mut Value) {
    if let Value::Object(map) = to {
        for key in ["matched", "used"] {
            if let Some(v) = from.get(key) {
                map.insert(key.into(), v.clone());
            }
        }
    }
}

pub(super) fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}
