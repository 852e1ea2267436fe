//! Turning the model's answer into a reflection and one catalog action.
//!
//! Models get the forced tool call wrong in a handful of recurring ways.
//! Each repair here is deliberate and recorded on the step, so the person
//! can see in the inspector what the model actually sent and what the agent
//! made of it. What cannot be repaired is an error the model reads at the
//! next step, never a crash.

use serde_json::{Map, Value};

use crate::actions::{Action, Catalog, NOT_FOR_THE_MODEL};
use crate::events::Reflection;
use crate::llm::ChatResponse;

use super::defaults::AGENT_TOOL_NAME;

/// The reflection field names, in the order the tool asks for them.
const REFLECTION_FIELDS: [&str; 3] = ["evaluation_previous_goal", "memory", "next_goal"];

/// Keys under which wrappers put the real arguments.
const ARGUMENT_KEYS: [&str; 5] = ["arguments", "parameters", "params", "input", "args"];

/// How deep wrappers are unwrapped before giving up: a real answer never
/// nests more than a few levels, and the bound keeps hostile input cheap.
const MAX_UNWRAP: usize = 6;

/// Action names other agent frameworks taught models, mapped to ours, with
/// parameters to merge in (for names that carry a parameter, such as
/// `scroll_down`).
const ALIASES: &[(&str, &str, &str)] = &[
    ("click_element_by_index", "click", ""),
    ("click_element", "click", ""),
    ("tap", "click", ""),
    ("input_text_by_index", "input_text", ""),
    ("type", "input_text", ""),
    ("type_text", "input_text", ""),
    ("fill", "input_text", ""),
    ("enter_text", "input_text", ""),
    ("go_to_url", "navigate", ""),
    ("goto_url", "navigate", ""),
    ("goto", "navigate", ""),
    ("open_url", "navigate", ""),
    ("open_tab", "navigate", ""),
    ("go_back", "back", ""),
    ("navigate_back", "back", ""),
    ("go_forward", "forward", ""),
    ("refresh", "reload", ""),
    ("scroll_down", "scroll", r#"{"direction":"down"}"#),
    ("scroll_up", "scroll", r#"{"direction":"up"}"#),
    ("scroll_page", "scroll", ""),
    ("scroll_to_element", "scroll_to", ""),
    ("select_dropdown_option", "select_option", ""),
    ("select", "select_option", ""),
    ("send_keys", "press_keys", ""),
    ("press_key", "press_keys", ""),
    ("keypress", "press_keys", ""),
    ("extract_content", "extract", ""),
    ("extract_page_content", "read_page", ""),
    ("get_page_text", "read_page", ""),
    ("open_page", "goto_page", ""),
    ("go_to_page", "goto_page", ""),
    ("ask_human", "ask_user", ""),
    ("finish", "done", ""),
    ("complete", "done", ""),
    ("task_complete", "done", ""),
    ("sleep", "wait", ""),
];

/// The shape of a good answer, quoted in every message about a bad one so
/// a small model sees exactly what to send.
pub const EXPECTED_SHAPE: &str = r#"{"evaluation_previous_goal": "...", "memory": "...", "next_goal": "...", "action": {"click": {"index": 3}}}"#;

/// Why an answer could not be used at all.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NormalizeError {
    /// Neither a tool call nor JSON anywhere in the text.
    #[error("your answer had no {AGENT_TOOL_NAME} call and no JSON object in its text{}; call {AGENT_TOOL_NAME} with arguments shaped like {EXPECTED_SHAPE}", finish_note(.finish_reason))]
    NoCall {
        /// Why the model stopped, when the server said.
        finish_reason: Option<String>,
    },
    /// The call's arguments are not JSON even after the usual repairs.
    #[error("the arguments of your {tool} call are not valid JSON ({detail}); send one JSON object shaped like {EXPECTED_SHAPE}")]
    BadArguments {
        /// The tool name the model used.
        tool: String,
        /// What the JSON parser said.
        detail: String,
    },
    /// The arguments are JSON but not an object.
    #[error(
        "the arguments of your call must be a JSON object shaped like {EXPECTED_SHAPE}; got {0}"
    )]
    NotAnObject(String),
}

fn finish_note(reason: &Option<String>) -> String {
    match reason.as_deref() {
        Some("length") => {
            " (the answer was cut off at the token limit; keep memory shorter)".into()
        }
        Some(other) => format!(" (the model stopped with `{other}`)"),
        None => String::new(),
    }
}

/// The model's answer made usable.
#[derive(Debug, Clone, PartialEq)]
pub struct NormalizedTurn {
    /// The reflection fields (empty strings for those the model left out).
    pub reflection: Reflection,
    /// The action as `{"name": {params}}` after repairs, before validation;
    /// `Value::Null` when there was nothing that looks like one.
    pub proposed: Value,
    /// The validated action, or why it is not valid (the message the model
    /// sees next step).
    pub action: Result<Action, String>,
    /// The actions after the first when the model sent a list: each as
    /// proposed, and validated or why not. They run in order after the
    /// first, within the same step.
    pub rest: Vec<(Value, Result<Action, String>)>,
    /// One line per repair made, for the step record.
    pub repairs: Vec<String>,
}

/// Reads the model's answer: finds the arguments (tool call or text),
/// unwraps, fills in, renames and coerces what it safely can, then
/// validates the action against `catalog`.
pub fn normalize(
    response: &ChatResponse,
    catalog: &Catalog,
) -> Result<NormalizedTurn, NormalizeError> {
    let mut repairs = Vec::new();
    let arguments = find_arguments(response, catalog, &mut repairs)?;
    Ok(normalize_arguments(arguments, catalog, repairs))
}

/// Where the arguments come from, before any shape repairs.
fn find_arguments(
    response: &ChatResponse,
    catalog: &Catalog,
    repairs: &mut Vec<String>,
) -> Result<Value, NormalizeError> {
    let call = response
        .tool_calls
        .iter()
        .find(|c| c.name == AGENT_TOOL_NAME)
        .or_else(|| {
            response
                .tool_calls
                .iter()
                .find(|c| !c.name.is_empty() || !c.arguments.trim().is_empty())
        });
    if let Some(call) = call {
        let parsed = parse_json_text(&call.arguments, repairs).map_err(|detail| {
            NormalizeError::BadArguments {
                tool: call.name.clone(),
                detail,
            }
        });
        let parsed = match parsed {
            Ok(value) => value,
            // A broken call with usable JSON in the text: take the text.
            Err(error) => match json_in_text(&response.content) {
                Some(value) => {
                    repairs.push(
                        "the tool call's arguments were not JSON; the JSON in the message text was used"
                            .into(),
                    );
                    return Ok(value);
                }
                None => return Err(error),
            },
        };
        if call.name == AGENT_TOOL_NAME || call.name.is_empty() {
            return Ok(parsed);
        }
        if let Some((name, extra)) = resolve_name(catalog, &call.name) {
            repairs.push(format!(
                "the model called the action `{}` as the tool instead of {AGENT_TOOL_NAME}; it was taken as the action",
                call.name
            ));
            let params = merge_params(parsed, extra);
            let mut action = Map::new();
            action.insert(name, params);
            let mut wrapper = Map::new();
            wrapper.insert("action".into(), Value::Object(action));
            return Ok(Value::Object(wrapper));
        }
        repairs.push(format!(
            "the model called an unknown tool `{}`; its arguments were read as {AGENT_TOOL_NAME}",
            call.name
        ));
        return Ok(parsed);
    }
    match json_in_text(&response.content) {
        Some(value) => {
            repairs.push("the answer was JSON in the message text instead of a tool call".into());
            Ok(value)
        }
        None => Err(NormalizeError::NoCall {
            finish_reason: response.finish_reason.clone(),
        }),
    }
}

/// Parses a JSON text, decoding it once more when it turns out to be a JSON
/// string holding JSON (arguments encoded twice).
fn parse_json_text(text: &str, repairs: &mut Vec<String>) -> Result<Value, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let mut value: Value = match serde_json::from_str(trimmed) {
        Ok(value) => value,
        Err(error) => match json_in_text(trimmed) {
            Some(value) => {
                repairs.push("text around the arguments' JSON was dropped".into());
                value
            }
            None => return Err(error.to_string()),
        },
    };
    let mut decoded = 0;
    while let Value::String(inner) = &value {
        if decoded >= MAX_UNWRAP {
            break;
        }
        match serde_json::from_str::<Value>(inner.trim()) {
            Ok(inner) if inner.is_object() || inner.is_string() => {
                value = inner;
                decoded += 1;
            }
            _ => break,
        }
    }
    if decoded > 0 {
        repairs.push(format!(
            "the arguments were a JSON string encoded {} time(s) too many; decoded",
            decoded
        ));
    }
    Ok(value)
}

/// The first JSON object in free text: inside a ```json fence if there is
/// one, otherwise the first balanced `{…}` that parses.
pub(crate) fn json_in_text(text: &str) -> Option<Value> {
    if let Some(start) = text.find("```") {
        let after = &text[start + 3..];
        let body_start = after.find('\n').map_or(0, |i| i + 1);
        if let Some(end) = after[body_start..].find("```") {
            let body = after[body_start..body_start + end].trim();
            if let Ok(value @ Value::Object(_)) = serde_json::from_str(body) {
                return Some(value);
            }
        }
    }
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(offset) = text[from..].find('{') {
        let start = from + offset;
        if let Some(end) = balanced_end(bytes, start) {
            if let Ok(value @ Value::Object(_)) = serde_json::from_str(&text[start..=end]) {
                return Some(value);
            }
        }
        from = start + 1;
    }
    None
}

/// The index of the `}` closing the `{` at `start`, skipping strings.
fn balanced_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The catalog name meant by `name` (any casing, or a known alias from
/// another framework) and parameters the alias implies.
fn resolve_name(catalog: &Catalog, name: &str) -> Option<(String, Option<Value>)> {
    if let Some(found) = catalog.canonical_name(name) {
        return Some((found.to_string(), None));
    }
    let lowered = name.trim().to_ascii_lowercase().replace(['-', ' '], "_");
    ALIASES
        .iter()
        .find(|(alias, _, _)| *alias == lowered)
        .and_then(|(_, target, extra)| {
            let target = catalog.canonical_name(target)?.to_string();
            let extra = (!extra.is_empty())
                .then(|| serde_json::from_str::<Value>(extra).ok())
                .flatten();
            Some((target, extra))
        })
}

/// Adds alias-implied parameters to what the model sent, without
/// overriding anything it gave.
fn merge_params(params: Value, extra: Option<Value>) -> Value {
    let Some(Value::Object(extra)) = extra else {
        return params;
    };
    match params {
        Value::Object(mut given) => {
            for (key, value) in extra {
                given.entry(key).or_insert(value);
            }
            Value::Object(given)
        }
        Value::Null => Value::Object(extra),
        // A bare value stays bare; the catalog's repair places it.
        other => other,
    }
}

/// Peels `{name, arguments}` and `{type: function, function: {…}}`
/// wrappers. Returns the inner value and, when a wrapper named an action
/// rather than the tool, that name.
fn unwrap_wrappers(mut value: Value, repairs: &mut Vec<String>) -> (Value, Option<String>) {
    for _ in 0..MAX_UNWRAP {
        let Value::Object(object) = &value else {
            break;
        };
        if object.get("type").and_then(Value::as_str) == Some("function") {
            if let Some(function) = object.get("function").cloned() {
                repairs.push("a {type: function, function: …} wrapper was removed".into());
                value = function;
                continue;
            }
        }
        let name = object
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let inner_key = ARGUMENT_KEYS.iter().find(|k| object.contains_key(**k));
        let only_wrapper_keys = object.keys().all(|k| {
            k == "name" || k == "type" || k == "id" || ARGUMENT_KEYS.contains(&k.as_str())
        });
        match (name, inner_key) {
            (Some(name), Some(key)) if only_wrapper_keys => {
                let inner = object.get(*key).cloned().unwrap_or(Value::Null);
                let inner = match inner {
                    Value::String(text) => match serde_json::from_str::<Value>(&text) {
                        Ok(parsed) => parsed,
                        Err(_) => Value::String(text),
                    },
                    other => other,
                };
                if name == AGENT_TOOL_NAME {
                    repairs.push(format!(
                        "a nested {{name: {AGENT_TOOL_NAME}, arguments}} wrapper was removed"
                    ));
                    value = inner;
                    continue;
                }
                return (inner, Some(name));
            }
            _ => break,
        }
    }
    (value, None)
}

/// Everything after the arguments were found: shape, reflection, action.
fn normalize_arguments(
    arguments: Value,
    catalog: &Catalog,
    mut repairs: Vec<String>,
) -> NormalizedTurn {
    let (arguments, wrapped_action) = unwrap_wrappers(arguments, &mut repairs);
    let mut object = match (arguments, wrapped_action) {
        (params, Some(action_name)) => {
            repairs.push(format!(
                "a {{name: {action_name}, arguments}} call was taken as the action `{action_name}`"
            ));
            let mut action = Map::new();
            action.insert(action_name, params);
            let mut object = Map::new();
            object.insert("action".into(), Value::Object(action));
            object
        }
        (Value::Object(object), None) => object,
        (other, None) => {
            return NormalizedTurn {
                reflection: Reflection::default(),
                proposed: Value::Null,
                action: Err(NormalizeError::NotAnObject(kind_of(&other)).to_string()),
                rest: Vec::new(),
                repairs,
            }
        }
    };
    lift_nested_reflection(&mut object, &mut repairs);
    let has_reflection = REFLECTION_FIELDS.iter().any(|f| object.contains_key(*f));
    if !object.contains_key("action") && !has_reflection {
        // The bare action itself: `{"click": {"index": 5}}`. Only a catalog
        // name, or an alias with an object of parameters, counts: a lone
        // `{"type": "function"}` is a broken wrapper, not `input_text`.
        let looks_like_action = object.len() == 1
            && object.iter().next().is_some_and(|(key, value)| {
                catalog.canonical_name(key).is_some()
                    || (value.is_object() && resolve_name(catalog, key).is_some())
            });
        if looks_like_action {
            repairs.push("the answer was only an action; it was wrapped as `action` with an empty reflection".into());
            let mut wrapper = Map::new();
            wrapper.insert("action".into(), Value::Object(object));
            object = wrapper;
        }
    }
    let reflection = read_reflection(&mut object, &mut repairs);
    let proposed = match object.remove("action") {
        // Nothing is invented in its place: a made-up action would hide the
        // failure and could act on the page.
        None | Some(Value::Null) => {
            let keys: Vec<String> = object.keys().map(|k| format!("`{k}`")).collect();
            let had = if keys.is_empty() {
                String::new()
            } else {
                format!(" (it had {})", keys.join(", "))
            };
            return NormalizedTurn {
                reflection,
                proposed: Value::Null,
                action: Err(format!(
                    "your answer had no `action`{had}, so nothing was done; send arguments shaped like {EXPECTED_SHAPE}"
                )),
                rest: Vec::new(),
                repairs,
            };
        }
        // A list: the first is the step's action, the others follow it.
        Some(Value::Array(items)) if items.len() > 1 => {
            let mut items = items.into_iter();
            let first = items.next().unwrap_or(Value::Null);
            let first = shape_action(first, catalog, &mut repairs);
            let rest = items
                .map(|item| validated(shape_action(item, catalog, &mut repairs), catalog))
                .collect();
            let (proposed, action) = validated(first, catalog);
            return NormalizedTurn {
                reflection,
                proposed,
                action,
                rest,
                repairs,
            };
        }
        Some(action) => shape_action(action, catalog, &mut repairs),
    };
    let (proposed, action) = validated(proposed, catalog);
    NormalizedTurn {
        reflection,
        proposed,
        action,
        rest: Vec::new(),
        repairs,
    }
}

/// The proposed action checked against the catalog: the action in its
/// canonical form when valid, as proposed with the reason otherwise.
fn validated(proposed: Value, catalog: &Catalog) -> (Value, Result<Action, String>) {
    match catalog.parse(&proposed) {
        Ok(action) if NOT_FOR_THE_MODEL.contains(&action.name()) => (
            proposed,
            Err(format!(
                "`{}` is not yours to take: the person decides how dialogs are answered",
                action.name()
            )),
        ),
        Ok(action) => (action.to_json(), Ok(action)),
        Err(error) => (proposed, Err(error.to_string())),
    }
}

/// Some models put the reflection under `current_state` or `reflection`.
fn lift_nested_reflection(object: &mut Map<String, Value>, repairs: &mut Vec<String>) {
    for key in ["current_state", "reflection", "brain", "thinking"] {
        let Some(Value::Object(inner)) = object.get(key) else {
            continue;
        };
        if !REFLECTION_FIELDS.iter().any(|f| inner.contains_key(*f)) {
            continue;
        }
        let inner = inner.clone();
        object.remove(key);
        for (field, value) in inner {
            object.entry(field).or_insert(value);
        }
        repairs.push(format!(
            "the reflection fields were nested under `{key}`; lifted"
        ));
    }
}

fn read_reflection(object: &mut Map<String, Value>, repairs: &mut Vec<String>) -> Reflection {
    let mut missing = Vec::new();
    let mut field = |name: &str| match object.remove(name) {
        Some(Value::String(text)) => text,
        Some(Value::Null) | None => {
            missing.push(name.to_string());
            String::new()
        }
        Some(other) => {
            repairs.push(format!(
                "{name} was {} rather than text; written out as text",
                kind_of(&other)
            ));
            other.to_string()
        }
    };
    let reflection = Reflection {
        evaluation_previous_goal: field("evaluation_previous_goal"),
        memory: field("memory"),
        next_goal: field("next_goal"),
    };
    if !missing.is_empty() {
        repairs.push(format!(
            "reflection fields missing: {} (left empty)",
            missing.join(", ")
        ));
    }
    reflection
}

/// Brings the `action` value to `{"catalog_name": {params}}`.
fn shape_action(action: Value, catalog: &Catalog, repairs: &mut Vec<String>) -> Value {
    let action = match action {
        Value::String(text) => match serde_json::from_str::<Value>(&text) {
            Ok(parsed @ Value::Object(_)) => {
                repairs.push("the action was a JSON string; decoded".into());
                parsed
            }
            // `"action": "back"`: a parameterless action by name.
            _ if resolve_name(catalog, &text).is_some() => {
                repairs.push(format!(
                    "the action was the bare name `{text}`; taken with no parameters"
                ));
                let mut object = Map::new();
                object.insert(text, Value::Object(Map::new()));
                Value::Object(object)
            }
            _ => Value::String(text),
        },
        Value::Array(mut items) if !items.is_empty() => {
            if items.len() > 1 {
                repairs.push(format!(
                    "a list of {} actions was nested in a list item; only its first is taken",
                    items.len()
                ));
            }
            // A one-item list is a valid answer (a list of actions), not a
            // repair.
            items.swap_remove(0)
        }
        other => other,
    };
    let (action, named) = unwrap_wrappers(action, repairs);
    let action = match named {
        Some(name) => {
            repairs.push(format!(
                "the action was written as {{name: {name}, arguments}}; reshaped"
            ));
            let mut object = Map::new();
            object.insert(name, action);
            Value::Object(object)
        }
        None => action,
    };
    let Value::Object(object) = action else {
        return action;
    };
    if object.len() != 1 {
        return Value::Object(object);
    }
    let Some((name, params)) = object.into_iter().next() else {
        return Value::Null; // ok: the length was checked to be 1
    };
    let (canonical, extra) = match resolve_name(catalog, &name) {
        Some((canonical, extra)) => {
            if canonical != name {
                repairs.push(format!(
                    "the action name `{name}` was read as `{canonical}`"
                ));
            }
            (canonical, extra)
        }
        None => (name, None),
    };
    let params = merge_params(params, extra);
    let (params, param_repairs) = catalog.repair_params(&canonical, params);
    repairs.extend(param_repairs);
    let mut object = Map::new();
    object.insert(canonical, params);
    Value::Object(object)
}

fn kind_of(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Number(_) => "a number".into(),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::Target;
    use crate::llm::ToolCall;
    use serde_json::json;

    #[test]
    fn the_model_may_not_answer_dialogs_which_is_the_person_s_choice() {
        let catalog = Catalog::builtin();
        let (_, refused) = validated(json!({"answer_dialogs": {"accept": true}}), &catalog);
        let why = refused.expect_err("refused");
        assert!(why.contains("not yours"), "{why}");
        // A recipe or `exec` takes it from the same catalog.
        assert!(catalog
            .parse(&json!({"answer_dialogs": {"accept": true}}))
            .is_ok());
    }

    fn call(name: &str, arguments: &str) -> ChatResponse {
        ChatResponse {
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: name.into(),
                arguments: arguments.into(),
            }],
            ..ChatResponse::default()
        }
    }

    fn text(content: &str) -> ChatResponse {
        ChatResponse {
            content: content.into(),
            finish_reason: Some("stop".into()),
            ..ChatResponse::default()
        }
    }

    fn full(action: Value) -> Value {
        json!({
            "evaluation_previous_goal": "ok",
            "memory": "m",
            "next_goal": "g",
            "action": action,
        })
    }

    fn run(response: &ChatResponse) -> NormalizedTurn {
        normalize(response, &Catalog::builtin()).expect("normalizes")
    }

    fn click(index: u32) -> Action {
        Action::Click {
            target: Target::Index {
                index: crate::dom::ElementIndex(index as usize),
            },
        }
    }

    #[test]
    fn a_well_formed_call_needs_no_repair() {
        let turn = run(&call(
            AGENT_TOOL_NAME,
            &full(json!({"click": {"index": 4}})).to_string(),
        ));
        assert_eq!(turn.action, Ok(click(4)));
        assert!(turn.repairs.is_empty(), "{:?}", turn.repairs);
        assert_eq!(turn.reflection.next_goal, "g");
        assert_eq!(turn.proposed, json!({"click": {"index": 4}}));
    }

    #[test]
    fn json_in_the_message_text_is_used() {
        let content = format!(
            "Sure! Here is my step:\n```json\n{}\n```\nThanks.",
            full(json!({"click": {"index": 2}}))
        );
        let turn = run(&text(&content));
        assert_eq!(turn.action, Ok(click(2)));
        assert!(
            turn.repairs[0].contains("message text"),
            "{:?}",
            turn.repairs
        );
        // Without a fence, the first balanced object is found.
        let turn = run(&text(&format!(
            "I will act: {} done",
            full(json!({"back": {}}))
        )));
        assert_eq!(turn.action, Ok(Action::Back {}));
    }

    #[test]
    fn the_action_name_as_tool_name_becomes_the_action() {
        let turn = run(&call("click_element_by_index", r#"{"index": 7}"#));
        assert_eq!(turn.action, Ok(click(7)));
        assert!(
            turn.repairs.iter().any(|r| r.contains("as the tool")),
            "{:?}",
            turn.repairs
        );
        assert!(turn
            .repairs
            .iter()
            .any(|r| r.contains("reflection fields missing")));
    }

    #[test]
    fn arguments_encoded_twice_are_decoded() {
        let once = full(json!({"click": {"index": 3}})).to_string();
        let twice = Value::String(once).to_string();
        let turn = run(&call(AGENT_TOOL_NAME, &twice));
        assert_eq!(turn.action, Ok(click(3)));
        assert!(
            turn.repairs.iter().any(|r| r.contains("encoded 1 time")),
            "{:?}",
            turn.repairs
        );
    }

    #[test]
    fn nested_name_arguments_wrappers_are_peeled() {
        let inner = full(json!({"click": {"index": 9}}));
        let nested = json!({"name": AGENT_TOOL_NAME, "arguments": {"name": AGENT_TOOL_NAME, "arguments": inner.to_string()}});
        let turn = run(&call(AGENT_TOOL_NAME, &nested.to_string()));
        assert_eq!(turn.action, Ok(click(9)));
        assert_eq!(
            turn.repairs
                .iter()
                .filter(|r| r.contains("wrapper was removed"))
                .count(),
            2,
            "{:?}",
            turn.repairs
        );
        let function =
            json!({"type": "function", "function": {"name": AGENT_TOOL_NAME, "arguments": inner}});
        let turn = run(&text(&function.to_string()));
        assert_eq!(turn.action, Ok(click(9)));
        // A wrapper naming an action is that action.
        let named = json!({"name": "click", "arguments": {"index": 1}});
        let turn = run(&call(AGENT_TOOL_NAME, &named.to_string()));
        assert_eq!(turn.action, Ok(click(1)));
    }

    #[test]
    fn missing_reflection_fields_are_left_empty_and_noted() {
        let turn = run(&call(
            AGENT_TOOL_NAME,
            &json!({"next_goal": "go", "action": {"back": {}}}).to_string(),
        ));
        assert_eq!(turn.action, Ok(Action::Back {}));
        assert_eq!(turn.reflection.next_goal, "go");
        assert_eq!(turn.reflection.memory, "");
        assert!(
            turn.repairs
                .iter()
                .any(|r| r.contains("evaluation_previous_goal, memory")),
            "{:?}",
            turn.repairs
        );
        // Only an action: wrapped.
        let turn = run(&call(AGENT_TOOL_NAME, r#"{"click": {"index": 5}}"#));
        assert_eq!(turn.action, Ok(click(5)));
        assert!(turn.repairs.iter().any(|r| r.contains("only an action")));
    }

    #[test]
    fn a_missing_action_is_an_error_and_nothing_is_invented() {
        let turn = run(&call(
            AGENT_TOOL_NAME,
            r#"{"evaluation_previous_goal": "a", "memory": "b", "next_goal": "c"}"#,
        ));
        let error = turn.action.expect_err("no action");
        assert!(error.contains("no `action`"), "{error}");
        assert!(error.contains(EXPECTED_SHAPE), "{error}");
        assert_eq!(turn.proposed, Value::Null);
        // Nonsense keys are named back to the model.
        let turn = run(&call(AGENT_TOOL_NAME, r#"{"arg1": 20, "arg2": 3.5}"#));
        let error = turn.action.expect_err("nonsense keys");
        assert!(error.contains("`arg1`, `arg2`"), "{error}");
        // A broken wrapper is not read as the alias `type` = input_text.
        for answer in [
            r#"{"type": "function"}"#,
            r#"{"type": "function", "name": "x"}"#,
        ] {
            let turn = run(&call(AGENT_TOOL_NAME, answer));
            assert!(turn.action.is_err(), "{answer}: {:?}", turn.action);
            assert_eq!(turn.proposed, Value::Null, "{answer}");
        }
    }

    #[test]
    fn a_bare_value_fills_the_only_field() {
        let turn = run(&call(
            AGENT_TOOL_NAME,
            &full(json!({"click_element_by_index": 5})).to_string(),
        ));
        assert_eq!(turn.action, Ok(click(5)));
        assert!(
            turn.repairs.iter().any(|r| r.contains("bare value")),
            "{:?}",
            turn.repairs
        );
        let turn = run(&call(
            AGENT_TOOL_NAME,
            &full(json!({"navigate": "/orders"})).to_string(),
        ));
        assert_eq!(
            turn.action,
            Ok(Action::Navigate {
                url: "/orders".into()
            })
        );
    }

    #[test]
    fn names_in_other_cases_and_known_aliases_are_mapped() {
        for (name, expected) in [
            ("Click", "click"),
            ("INPUT_TEXT", "input_text"),
            ("inputText", "input_text"),
            ("click_element_by_index", "click"),
            ("type", "input_text"),
            ("go_to_url", "navigate"),
            ("scroll_down", "scroll"),
            ("finish", "done"),
        ] {
            let (found, _) = resolve_name(&Catalog::builtin(), name).expect(name);
            assert_eq!(found, expected, "{name}");
        }
        let turn = run(&call(
            AGENT_TOOL_NAME,
            &full(json!({"InputText": {"index": 2, "text": "bob"}})).to_string(),
        ));
        assert_eq!(turn.action.as_ref().map(Action::name), Ok("input_text"));
        assert!(turn
            .repairs
            .iter()
            .any(|r| r.contains("`InputText` was read as `input_text`")));
        // An alias that implies a parameter brings it along.
        let turn = run(&call(
            AGENT_TOOL_NAME,
            &full(json!({"scroll_down": {}})).to_string(),
        ));
        assert_eq!(turn.proposed["scroll"]["direction"], "down");
        assert!(turn.action.is_ok(), "{:?}", turn.action);
    }

    #[test]
    fn numbers_sent_as_strings_are_read_as_numbers() {
        let turn = run(&call(
            AGENT_TOOL_NAME,
            &full(json!({"input_text": {"index": "12", "text": "7", "clear": "true"}})).to_string(),
        ));
        let action = turn.action.expect("valid");
        assert_eq!(action.params()["index"], 12);
        assert_eq!(action.params()["text"], "7");
        assert_eq!(action.params()["clear"], true);
        assert!(
            turn.repairs
                .iter()
                .any(|r| r.contains("\"12\" was read as 12")),
            "{:?}",
            turn.repairs
        );
    }

    #[test]
    fn what_cannot_be_repaired_is_an_error_for_the_model() {
        let turn = run(&call(
            AGENT_TOOL_NAME,
            &full(json!({"teleport": {"to": "mars"}})).to_string(),
        ));
        let error = turn.action.expect_err("unknown action");
        assert!(error.contains("unknown action `teleport`"), "{error}");
        assert_eq!(turn.proposed, json!({"teleport": {"to": "mars"}}));
        let turn = run(&call(
            AGENT_TOOL_NAME,
            &full(json!({"click": {"index": "third"}})).to_string(),
        ));
        assert!(turn.action.is_err());
        let error = normalize(
            &text("I think I should click the button."),
            &Catalog::builtin(),
        )
        .expect_err("no JSON at all");
        assert!(error.to_string().contains("no agent_step call"), "{error}");
        let error = normalize(&call(AGENT_TOOL_NAME, "{\"memory\": "), &Catalog::builtin())
            .expect_err("broken JSON");
        assert!(matches!(error, NormalizeError::BadArguments { .. }));
        let turn = run(&call(AGENT_TOOL_NAME, "[1, 2]"));
        assert!(turn.action.unwrap_err().contains("must be a JSON object"));
    }

    #[test]
    fn a_list_of_actions_is_the_first_and_the_rest_each_validated() {
        let turn = run(&call(
            AGENT_TOOL_NAME,
            &full(json!([
                {"click": {"index": 1}},
                {"Click": {"index": "2"}},
                {"fly": {}}
            ]))
            .to_string(),
        ));
        assert_eq!(turn.action, Ok(click(1)));
        assert_eq!(turn.rest.len(), 2);
        assert_eq!(turn.rest[0].1, Ok(click(2)), "repaired like the first");
        assert!(turn.rest[1].1.is_err(), "an unknown action stays an error");
    }

    #[test]
    fn json_search_skips_braces_inside_strings() {
        let found = json_in_text(r#"note {not json} then {"a": "}{", "b": 1} end"#).unwrap();
        assert_eq!(found, json!({"a": "}{", "b": 1}));
        assert!(json_in_text("no braces").is_none());
    }
}
