//! Turning a recorded session (a trace of [`Event`]s) into a recipe that
//! replays it without the model.
//!
//! Each successful step becomes one script line. Elements are found again
//! by what the step's `locator` recorded (see `script::env`), in order of
//! robustness: id, `data-testid`, name, aria-label, placeholder, then
//! visible text; an index is only the last resort. Before the first step on
//! each page the recipe checks that it is on the same page (the URL with
//! numbers and the query left open), so a replay that went astray stops
//! with a clear message instead of clicking on the wrong page.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::actions::Selector;
use crate::events::Event;

/// Everything that can go wrong exporting.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The trace could not be read.
    #[error("could not read the trace {}: {message}", path.display())]
    Read {
        /// The trace file.
        path: PathBuf,
        /// What the operating system said.
        message: String,
    },
    /// A line of the trace is not an event.
    #[error("{}:{line}: not a webagent event: {message}", path.display())]
    Parse {
        /// The trace file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// The trace has no successful step to replay.
    #[error("the trace {} has no successful step to replay", path.display())]
    NoSteps {
        /// The trace file.
        path: PathBuf,
    },
}

/// Reads the trace at `path` and returns the recipe's source.
pub fn export_recipe(path: &Path) -> Result<String, ExportError> {
    let text = std::fs::read_to_string(path).map_err(|e| ExportError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut events = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let event = serde_json::from_str::<Event>(line).map_err(|e| ExportError::Parse {
            path: path.to_path_buf(),
            line: i + 1,
            message: e.to_string(),
        })?;
        events.push(event);
    }
    recipe_from_events(&events, &path.display().to_string()).ok_or_else(|| ExportError::NoSteps {
        path: path.to_path_buf(),
    })
}

/// The recipe for these events, or `None` when no step can be replayed.
pub fn recipe_from_events(events: &[Event], origin: &str) -> Option<String> {
    let mut task = String::new();
    let mut checked_pattern = String::new();
    let mut body = Vec::new();
    let mut replayed = 0;
    let builtin = crate::actions::Catalog::builtin();
    let mut observed: std::collections::HashMap<usize, String> = Default::default();
    let mut last_index = 0;
    for event in events {
        match event {
            Event::RunStarted { task: t, .. } if task.is_empty() => task = t.clone(),
            Event::Observation(summary) => {
                observed.insert(summary.step, summary.url.clone());
            }
            Event::Step(step) => {
                let Some((name, params)) = step.action.as_object().and_then(|o| o.iter().next())
                else {
                    continue;
                };
                // A recipe records a custom action after the steps it ran
                // (under its earlier number): those steps are replayed, so
                // the call itself is not.
                let wrapper = builtin.get(name).is_none() && step.index < last_index;
                last_index = last_index.max(step.index);
                if wrapper {
                    continue;
                }
                if !step.result.is_ok() {
                    body.push(format!(
                        "    // step {}: {name} failed when recorded; left out",
                        step.index
                    ));
                    continue;
                }
                let data = serde_json::to_value(&step.result).unwrap_or(Value::Null);
                let locator = data.get("data").and_then(|d| d.get("locator"));
                // Only a URL seen at this step is checked: one carried over
                // from an earlier step may be stale.
                let url = locator
                    .and_then(|l| l.get("url"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or_else(|| observed.get(&step.index).cloned())
                    .unwrap_or_default();
                let Some(line) = step_line(name, params, locator) else {
                    body.push(format!(
                        "    // step {}: {name} does not change the page; left out",
                        step.index
                    ));
                    continue;
                };
                let pattern = url_pattern(&url);
                if name != "navigate" && !pattern.is_empty() && pattern != checked_pattern {
                    body.push(format!(
                        "    assert(url_matches(url(), {}), {});",
                        rhai_string(&pattern),
                        rhai_string(&format!(
                            "expected to be on {pattern} before step {}",
                            step.index
                        ))
                    ));
                    checked_pattern = pattern;
                }
                if name == "navigate" {
                    checked_pattern.clear();
                }
                body.push(format!("    {line} // step {}", step.index));
                replayed += 1;
            }
            _ => {}
        }
    }
    if replayed == 0 {
        return None;
    }
    let description = if task.is_empty() {
        format!("Replays the session recorded in {origin}")
    } else {
        format!("Replays: {task}")
    };
    let mut out = String::new();
    out.push_str(&format!(
        "// Exported by `webagent export` from {origin}.\n// Replays {replayed} step(s) without the model; elements are found by\n// id, data-testid, name, aria-label, placeholder or text, not by listing number.\n\n"
    ));
    out.push_str(&format!(
        "recipe(\"replay\", {});\n\nfn replay() {{\n",
        rhai_string(&description)
    ));
    for line in body {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&format!("    \"replayed {replayed} step(s)\"\n}}\n"));
    Some(out)
}

/// The script line of one recorded action, or `None` for actions that do
/// not act on the page (think, done, read_page, …).
fn step_line(name: &str, params: &Value, locator: Option<&Value>) -> Option<String> {
    if matches!(
        name,
        "think"
            | "done"
            | "ask_user"
            | "read_page"
            | "extract"
            | "screenshot"
            | "highlight"
            | "border"
            | "spotlight"
            | "clear_overlays"
            | "show_subtitle"
    ) {
        return None;
    }
    let text_param = |key: &str| params.get(key).and_then(Value::as_str).map(rhai_string);
    let target = target_expression(params, locator);
    Some(match (name, target) {
        ("navigate", _) => format!("navigate({});", text_param("url")?),
        ("click", Some(target)) => format!("click({target});"),
        ("input_text", Some(target)) => format!("fill({target}, {});", text_param("text")?),
        ("select_option", Some(target)) if params.get("text").is_some() => {
            format!("select({target}, {});", text_param("text")?)
        }
        ("wait_for", _) => {
            let what = text_param("selector").or_else(|| text_param("text"))?;
            let timeout = params
                .get("timeout_ms")
                .and_then(Value::as_u64)
                .unwrap_or(10_000);
            format!("wait_for({what}, {timeout});")
        }
        (_, _) => {
            let mut params = params.clone();
            if let (Some(object), Some(selector)) =
                (params.as_object_mut(), locator.and_then(css_locator))
            {
                object.remove("index");
                object.insert("selector".into(), Value::String(selector));
            }
            format!(
                "run_action({}, {});",
                rhai_string(name),
                rhai_literal(&params)
            )
        }
    })
}

/// The most robust way to name the target: a selector from id,
/// `data-testid`, name, aria-label or placeholder, else its visible text,
/// else the recorded selector or index.
fn target_expression(params: &Value, locator: Option<&Value>) -> Option<String> {
    if let Some(css) = locator.and_then(css_locator) {
        return Some(rhai_string(&css));
    }
    let facts = |key: &str| {
        locator
            .and_then(|l| l.get(key))
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty())
    };
    if let Some(text) = facts("text").or_else(|| facts("label")) {
        // Text that looks like a selector would be read as one.
        if !text.starts_with(['#', '.', '[']) && !text.starts_with("css:") {
            return Some(rhai_string(text));
        }
    }
    if let Some(selector) = params.get("selector").and_then(Value::as_str) {
        return Some(rhai_string(&format!("css:{selector}")));
    }
    params
        .get("index")
        .and_then(Value::as_u64)
        .map(|i| i.to_string())
}

/// A selector from the locator's stable attributes, if one is usable.
fn css_locator(locator: &Value) -> Option<String> {
    let fact = |key: &str| {
        locator
            .get(key)
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty())
    };
    let tag = fact("tag").unwrap_or("");
    let mut candidates = Vec::new();
    if let Some(id) = fact("id") {
        if id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            && id.starts_with(|c: char| c.is_ascii_alphabetic())
        {
            candidates.push(format!("#{id}"));
        }
    }
    if let Some(testid) = fact("testid") {
        candidates.push(format!("[data-testid={}]", css_string(testid)));
    }
    if let Some(name) = fact("name") {
        candidates.push(format!("{tag}[name={}]", css_string(name)));
    }
    if let Some(label) = fact("ariaLabel") {
        candidates.push(format!("{tag}[aria-label={}]", css_string(label)));
    }
    if let Some(placeholder) = fact("placeholder") {
        candidates.push(format!("{tag}[placeholder={}]", css_string(placeholder)));
    }
    candidates.into_iter().find(|c| Selector::parse(c).is_ok())
}

fn css_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The page a step ran on, as a pattern: query and fragment dropped,
/// path segments that are numbers (ids) left open as `*`.
pub fn url_pattern(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return String::new();
    };
    if !matches!(parsed.scheme(), "http" | "https" | "file") {
        return String::new();
    }
    parsed.set_query(None);
    parsed.set_fragment(None);
    let path: Vec<String> = parsed
        .path()
        .split('/')
        .map(|segment| {
            if !segment.is_empty() && segment.chars().all(|c| c.is_ascii_digit()) {
                "*".to_string()
            } else {
                segment.to_string()
            }
        })
        .collect();
    format!(
        "{}{}",
        parsed.origin().ascii_serialization(),
        path.join("/")
    )
}

/// Whether `url` (query and fragment ignored) matches a pattern where `*`
/// stands for any run of characters other than `/`.
pub fn url_matches(url: &str, pattern: &str) -> bool {
    let url = url.split(['?', '#']).next().unwrap_or("");
    glob(url.as_bytes(), pattern.as_bytes())
}

fn glob(text: &[u8], pattern: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => {
            let mut i = 0;
            loop {
                if glob(&text[i..], rest) {
                    return true;
                }
                if i >= text.len() || text[i] == b'/' {
                    return false;
                }
                i += 1;
            }
        }
        Some((c, rest)) => text.first() == Some(c) && glob(&text[1..], rest),
    }
}

/// A Rhai string literal.
fn rhai_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON value as a Rhai literal (`#{ "key": … }`, `[…]`, `()` for null).
fn rhai_literal(value: &Value) -> String {
    match value {
        Value::Null => "()".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => rhai_string(s),
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(rhai_literal)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Object(map) => format!(
            "#{{ {} }}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", rhai_string(k), rhai_literal(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn url_patterns_leave_ids_open() {
        assert_eq!(
            url_pattern("http://127.0.0.1:8080/orders/1001?tab=2#x"),
            "http://127.0.0.1:8080/orders/*"
        );
        assert!(url_matches(
            "http://127.0.0.1:8080/orders/1002?x=1",
            "http://127.0.0.1:8080/orders/*"
        ));
        assert!(!url_matches(
            "http://127.0.0.1:8080/orders/1002/edit",
            "http://127.0.0.1:8080/orders/*"
        ));
    }

    #[test]
    fn targets_prefer_stable_attributes_over_text_and_index() {
        let by_id = json!({"tag": "input", "id": "email", "name": "email"});
        assert_eq!(
            target_expression(&json!({"index": 3}), Some(&by_id)),
            Some("\"#email\"".into())
        );
        let by_name = json!({"tag": "input", "name": "password"});
        assert_eq!(
            target_expression(&json!({"index": 3}), Some(&by_name)),
            Some("\"input[name=\\\"password\\\"]\"".into())
        );
        let by_text = json!({"tag": "button", "text": "Sign in", "role": "button"});
        assert_eq!(
            target_expression(&json!({"index": 3}), Some(&by_text)),
            Some("\"Sign in\"".into())
        );
        assert_eq!(
            target_expression(&json!({"index": 3}), None),
            Some("3".into())
        );
    }

    #[test]
    fn literals_round_trip_through_rhai_syntax() {
        assert_eq!(
            rhai_literal(&json!({"a": [1, "x\"y"], "b": null})),
            "#{ \"a\": [1, \"x\\\"y\"], \"b\": () }"
        );
    }
}
