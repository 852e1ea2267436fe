//! A small validator for the subset of JSON Schema the catalog uses, so
//! built-in and custom actions get the same checks and the same messages.
//!
//! Supported keywords: `type` (one or a list), `properties`, `required`,
//! `additionalProperties` (bool or schema), `enum`, `minimum`, `maximum`,
//! `exclusiveMinimum`, `exclusiveMaximum`, `minLength`, `maxLength`,
//! `items`, `oneOf`, `allOf`, `default` (filled in when a property is absent) and
//! `format` (`selector` for the restricted CSS subset, `key-combination`
//! for `press_keys` strings). `description`, `title` and `examples` are
//! annotations. Boolean schemas (`true`, `false`) are allowed.
//!
//! Validation works on the value in place: defaults are filled in and
//! whole-number floats become integers where an integer is expected, so
//! what comes out is ready to deserialize into typed parameters.

use serde_json::{Map, Value};

use super::error::ActionError;
use super::keys::KeyChord;
use super::selector::Selector;
use crate::spelling::closest;

const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "items",
    "oneOf",
    "allOf",
    "default",
    "format",
    "description",
    "title",
    "examples",
];

const TYPES: &[&str] = &[
    "object", "array", "string", "integer", "number", "boolean", "null",
];

const FORMATS: &[&str] = &["selector", "key-combination"];

/// Checks `value` against `schema`, filling in defaults. `path` names the
/// value in errors (`input_text`, then `input_text.text`).
pub(crate) fn validate(schema: &Value, value: &mut Value, path: &str) -> Result<(), ActionError> {
    let rules = match schema {
        Value::Bool(true) => return Ok(()),
        Value::Bool(false) => return Err(ActionError::invalid(path, "is not allowed here")),
        Value::Object(rules) => rules,
        _ => return Ok(()),
    };
    if let Some(types) = rules.get("type") {
        check_type(types, value, path)?;
    }
    if let Some(Value::Array(allowed)) = rules.get("enum") {
        if !allowed.contains(value) {
            let words: Vec<String> = allowed.iter().map(show).collect();
            return Err(ActionError::invalid(
                path,
                format!("expected one of {}, got {}", words.join(", "), show(value)),
            ));
        }
    }
    if let Some(number) = value.as_f64() {
        check_range(rules, number, path)?;
    }
    if let Value::String(text) = value {
        check_string(rules, text, path)?;
    }
    if let Value::Array(items) = value {
        if let Some(item_schema) = rules.get("items") {
            for (i, item) in items.iter_mut().enumerate() {
                validate(item_schema, item, &format!("{path}[{i}]"))?;
            }
        }
    }
    if let Value::Object(fields) = value {
        check_object(rules, fields, path)?;
    }
    if let Some(Value::Array(branches)) = rules.get("oneOf") {
        check_one_of(branches, value, path)?;
    }
    if let Some(Value::Array(parts)) = rules.get("allOf") {
        for part in parts {
            validate(part, value, path)?;
        }
    }
    Ok(())
}

fn check_type(types: &Value, value: &mut Value, path: &str) -> Result<(), ActionError> {
    let names: Vec<&str> = match types {
        Value::String(name) => vec![name.as_str()],
        Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
        _ => return Ok(()),
    };
    for name in &names {
        if matches_type(name, value) {
            if *name == "integer" {
                // `3.0` is an integer in JSON Schema; store it as one so
                // typed parameters deserialize.
                if let Some(whole) = value
                    .as_f64()
                    .filter(|_| !value.is_i64() && !value.is_u64())
                {
                    *value = Value::from(whole as i64);
                }
            }
            return Ok(());
        }
    }
    let wanted: Vec<String> = names.iter().map(|n| article(n)).collect();
    Err(ActionError::invalid(
        path,
        format!("expected {}, got {}", wanted.join(" or "), describe(value)),
    ))
}

fn matches_type(name: &str, value: &Value) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64()
                || value.is_u64()
                || value
                    .as_f64()
                    .is_some_and(|n| n.fract() == 0.0 && n.abs() < 9.0e15)
        }
        _ => false,
    }
}

fn check_range(rules: &Map<String, Value>, number: f64, path: &str) -> Result<(), ActionError> {
    let bound = |key: &str| rules.get(key).and_then(Value::as_f64);
    let shown = show_number(number);
    if let Some(min) = bound("minimum").filter(|min| number < *min) {
        return Err(ActionError::invalid(
            path,
            format!("must be at least {}, got {shown}", show_number(min)),
        ));
    }
    if let Some(max) = bound("maximum").filter(|max| number > *max) {
        return Err(ActionError::invalid(
            path,
            format!("must be at most {}, got {shown}", show_number(max)),
        ));
    }
    if let Some(min) = bound("exclusiveMinimum").filter(|min| number <= *min) {
        return Err(ActionError::invalid(
            path,
            format!("must be greater than {}, got {shown}", show_number(min)),
        ));
    }
    if let Some(max) = bound("exclusiveMaximum").filter(|max| number >= *max) {
        return Err(ActionError::invalid(
            path,
            format!("must be less than {}, got {shown}", show_number(max)),
        ));
    }
    Ok(())
}

fn check_string(rules: &Map<String, Value>, text: &str, path: &str) -> Result<(), ActionError> {
    let length = text.chars().count() as u64;
    if let Some(min) = rules.get("minLength").and_then(Value::as_u64) {
        if length < min {
            let reason = if min == 1 {
                "must not be empty".to_string()
            } else {
                format!("must be at least {min} characters long")
            };
            return Err(ActionError::invalid(path, reason));
        }
    }
    if let Some(max) = rules.get("maxLength").and_then(Value::as_u64) {
        if length > max {
            return Err(ActionError::invalid(
                path,
                format!("must be at most {max} characters long, got {length}"),
            ));
        }
    }
    match rules.get("format").and_then(Value::as_str) {
        Some("selector") => {
            Selector::parse(text).map_err(|e| ActionError::invalid(path, e.to_string()))?;
        }
        Some("key-combination") => {
            KeyChord::parse(text).map_err(|e| ActionError::invalid(path, e.to_string()))?;
        }
        _ => {}
    }
    Ok(())
}

fn check_object(
    rules: &Map<String, Value>,
    fields: &mut Map<String, Value>,
    path: &str,
) -> Result<(), ActionError> {
    let empty = Map::new();
    let properties = rules
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let additional = rules.get("additionalProperties");
    if additional == Some(&Value::Bool(false)) {
        if let Some(unknown) = fields.keys().find(|k| !properties.contains_key(*k)) {
            let known: Vec<&str> = properties.keys().map(String::as_str).collect();
            let reason = match closest(unknown, &known) {
                Some(near) => format!("unknown parameter; did you mean `{near}`?"),
                None if known.is_empty() => {
                    "unknown parameter; this takes no parameters".to_string()
                }
                None => format!("unknown parameter; expected {}", known.join(", ")),
            };
            return Err(ActionError::invalid(join(path, unknown), reason));
        }
    }
    if let Some(Value::Array(required)) = rules.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !fields.contains_key(name) {
                return Err(ActionError::invalid(
                    join(path, name),
                    "missing required field",
                ));
            }
        }
    }
    for (name, field) in fields.iter_mut() {
        let field_path = join(path, name);
        match properties.get(name) {
            Some(schema) => validate(schema, field, &field_path)?,
            None => {
                if let Some(schema) = additional.filter(|a| a.is_object()) {
                    validate(schema, field, &field_path)?;
                }
            }
        }
    }
    for (name, schema) in properties {
        if fields.contains_key(name) {
            continue;
        }
        if let Some(default) = schema.get("default") {
            fields.insert(name.clone(), default.clone());
        }
    }
    Ok(())
}

/// Exactly one branch must hold. The catalog's branches are mostly
/// "which of these fields is present" (`index` or `selector`), so when every
/// branch is of that form the message names the fields instead of
/// describing schemas.
fn check_one_of(branches: &[Value], value: &mut Value, path: &str) -> Result<(), ActionError> {
    let mut passed = Vec::new();
    let mut first_error = None;
    for branch in branches {
        let mut candidate = value.clone();
        match validate(branch, &mut candidate, path) {
            Ok(()) => passed.push(candidate),
            Err(err) => {
                first_error.get_or_insert(err);
            }
        }
    }
    if passed.len() == 1 {
        // ok: the length was just checked.
        *value = passed.pop().unwrap_or(Value::Null);
        return Ok(());
    }
    let choice = field_choice(branches);
    let reason = match (&choice, passed.len()) {
        (Some((fields, optional)), 0) => {
            let none = if *optional { " (or none of them)" } else { "" };
            format!("give exactly one of {}{none}", fields.join(" or "))
        }
        (Some((fields, _)), _) => format!("give only one of {}, not several", fields.join(" or ")),
        (None, 0) => {
            return Err(first_error.unwrap_or_else(|| {
                ActionError::invalid(path, "matches none of the allowed forms")
            }))
        }
        (None, _) => "matches more than one of the allowed forms".to_string(),
    };
    Err(ActionError::invalid(path, reason))
}

/// For branches that only say "field X is required" (or "none of them is
/// present"), the field names and whether "none" is allowed.
fn field_choice(branches: &[Value]) -> Option<(Vec<String>, bool)> {
    let mut fields = Vec::new();
    let mut optional = false;
    for branch in branches {
        let rules = branch.as_object()?;
        if let Some(Value::Array(required)) = rules.get("required") {
            if rules.len() != 1 || required.len() != 1 {
                return None;
            }
            fields.push(format!("`{}`", required[0].as_str()?));
        } else if let Some(Value::Object(props)) = rules.get("properties") {
            if rules.len() != 1 || !props.values().all(|p| p == &Value::Bool(false)) {
                return None;
            }
            optional = true;
        } else {
            return None;
        }
    }
    (!fields.is_empty()).then_some((fields, optional))
}

/// Why a custom action's parameter schema is refused: it uses something
/// this validator does not enforce, or is not a schema at all. `at` names
/// the place (`schema.properties.q`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SchemaError {
    /// The root does not describe an object of parameters.
    #[error("the parameter schema must have \"type\": \"object\"")]
    NotAnObject,
    /// A schema that is neither an object nor a boolean.
    #[error("{at}: a schema must be an object or a boolean, got {got}")]
    NotASchema {
        /// Where.
        at: String,
        /// What was there instead (`a string "x"`).
        got: String,
    },
    /// A keyword the validator would silently ignore.
    #[error("{at}: the keyword `{keyword}` is not supported; supported: {}", KEYWORDS.join(", "))]
    UnsupportedKeyword {
        /// Where.
        at: String,
        /// The keyword.
        keyword: String,
    },
    /// A `type` that names no JSON type.
    #[error("{at}.type: `{name}` is not a type; use {}", TYPES.join(", "))]
    UnknownType {
        /// Where.
        at: String,
        /// The name as written.
        name: String,
    },
    /// A keyword whose value has the wrong shape.
    #[error("{at}.{keyword} must be {expected}")]
    BadRule {
        /// Where.
        at: String,
        /// The keyword.
        keyword: String,
        /// What its value must be (`a list of field names`).
        expected: &'static str,
    },
    /// A `format` the validator does not know.
    #[error("{at}.format: use one of {}", FORMATS.join(", "))]
    UnknownFormat {
        /// Where.
        at: String,
    },
    /// A `default` its own schema refuses.
    #[error("the default does not fit its own schema: {0}")]
    BadDefault(ActionError),
}

/// Checks that a schema (from a custom action) only uses what this
/// validator enforces, so an author never believes a rule is checked when it
/// is silently ignored. The root must describe an object of parameters.
pub(crate) fn check_schema(schema: &Value) -> Result<(), SchemaError> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(SchemaError::NotAnObject);
    }
    check_schema_at(schema, "schema")
}

fn check_schema_at(schema: &Value, at: &str) -> Result<(), SchemaError> {
    let bad_rule = |keyword: &str, expected: &'static str| SchemaError::BadRule {
        at: at.to_string(),
        keyword: keyword.to_string(),
        expected,
    };
    let rules = match schema {
        Value::Bool(_) => return Ok(()),
        Value::Object(rules) => rules,
        other => {
            return Err(SchemaError::NotASchema {
                at: at.to_string(),
                got: describe(other),
            })
        }
    };
    for (key, rule) in rules {
        if !KEYWORDS.contains(&key.as_str()) {
            return Err(SchemaError::UnsupportedKeyword {
                at: at.to_string(),
                keyword: key.clone(),
            });
        }
        match key.as_str() {
            "type" => {
                let names: Vec<&Value> = match rule {
                    Value::Array(list) => list.iter().collect(),
                    single => vec![single],
                };
                for name in names {
                    if !name.as_str().is_some_and(|n| TYPES.contains(&n)) {
                        return Err(SchemaError::UnknownType {
                            at: at.to_string(),
                            name: show(name),
                        });
                    }
                }
            }
            "properties" => {
                let Value::Object(properties) = rule else {
                    return Err(bad_rule(key, "an object"));
                };
                for (name, property) in properties {
                    check_schema_at(property, &format!("{at}.properties.{name}"))?;
                }
            }
            "required"
                if !rule
                    .as_array()
                    .is_some_and(|l| l.iter().all(Value::is_string)) =>
            {
                return Err(bad_rule(key, "a list of field names"));
            }
            "additionalProperties" | "items" => check_schema_at(rule, &format!("{at}.{key}"))?,
            "oneOf" | "allOf" => {
                let Value::Array(branches) = rule else {
                    return Err(bad_rule(key, "a list of schemas"));
                };
                for (i, branch) in branches.iter().enumerate() {
                    check_schema_at(branch, &format!("{at}.{key}[{i}]"))?;
                }
            }
            "enum" if !rule.is_array() => {
                return Err(bad_rule(key, "a list of values"));
            }
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum"
                if !rule.is_number() =>
            {
                return Err(bad_rule(key, "a number"));
            }
            "minLength" | "maxLength" if !rule.is_u64() => {
                return Err(bad_rule(key, "a non-negative integer"));
            }
            "format" if !rule.as_str().is_some_and(|f| FORMATS.contains(&f)) => {
                return Err(SchemaError::UnknownFormat { at: at.to_string() });
            }
            _ => {}
        }
    }
    if let Some(default) = rules.get("default") {
        let mut probe = default.clone();
        validate(schema, &mut probe, at).map_err(SchemaError::BadDefault)?;
    }
    Ok(())
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

fn article(type_name: &str) -> String {
    match type_name {
        "object" => "an object".to_string(),
        "array" => "a list".to_string(),
        "integer" => "an integer".to_string(),
        "null" => "null".to_string(),
        other => format!("a {other}"),
    }
}

/// How a value is named in errors: its kind, plus the value when short.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {}", show(&Value::String(s.clone()))),
        Value::Array(_) => "a list".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

/// A value in JSON form, clipped so errors stay one line.
fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 40 {
        let clipped: String = text.chars().take(37).collect();
        format!("{clipped}…")
    } else {
        text
    }
}

fn show_number(number: f64) -> String {
    if number.fract() == 0.0 && number.abs() < 1e15 {
        format!("{}", number as i64)
    } else {
        format!("{number}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(schema: &Value, mut value: Value) -> Result<Value, String> {
        validate(schema, &mut value, "act")
            .map(|()| value)
            .map_err(|e| e.to_string())
    }

    fn target_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "index": {"type": "integer", "minimum": 0},
                "selector": {"type": "string", "format": "selector"},
                "text": {"type": "string"},
                "clear": {"type": "boolean", "default": true}
            },
            "required": ["text"],
            "additionalProperties": false,
            "oneOf": [{"required": ["index"]}, {"required": ["selector"]}]
        })
    }

    #[test]
    fn fills_defaults_and_accepts_a_valid_object() {
        let out = check(&target_schema(), json!({"index": 3, "text": "Ann"})).unwrap();
        assert_eq!(out, json!({"index": 3, "text": "Ann", "clear": true}));
    }

    #[test]
    fn missing_required_field_is_named() {
        let err = check(&target_schema(), json!({"index": 3})).unwrap_err();
        assert_eq!(err, "act.text: missing required field");
    }

    #[test]
    fn wrong_type_names_field_and_both_types() {
        let err = check(&target_schema(), json!({"index": "3", "text": "a"})).unwrap_err();
        assert_eq!(err, "act.index: expected an integer, got the string \"3\"");
    }

    #[test]
    fn whole_floats_become_integers() {
        let out = check(&target_schema(), json!({"index": 3.0, "text": "a"})).unwrap();
        assert!(out["index"].is_u64() || out["index"].is_i64());
        assert!(check(&target_schema(), json!({"index": 3.5, "text": "a"})).is_err());
    }

    #[test]
    fn unknown_field_suggests_the_close_one() {
        let err = check(&target_schema(), json!({"idx": 3, "text": "a"})).unwrap_err();
        assert_eq!(err, "act.idx: unknown parameter; did you mean `index`?");
        let err = check(&target_schema(), json!({"zzzzzz": 3, "text": "a"})).unwrap_err();
        assert!(
            err.contains("expected index, selector, text, clear"),
            "{err}"
        );
    }

    #[test]
    fn one_of_fields_names_the_choice() {
        let neither = check(&target_schema(), json!({"text": "a"})).unwrap_err();
        assert_eq!(neither, "act: give exactly one of `index` or `selector`");
        let both = check(
            &target_schema(),
            json!({"index": 1, "selector": "#a", "text": "a"}),
        )
        .unwrap_err();
        assert_eq!(
            both,
            "act: give only one of `index` or `selector`, not several"
        );
    }

    #[test]
    fn optional_choice_allows_none_but_not_both() {
        let schema = json!({
            "type": "object",
            "properties": {"index": {"type": "integer"}, "selector": {"type": "string"}},
            "oneOf": [
                {"required": ["index"]},
                {"required": ["selector"]},
                {"properties": {"index": false, "selector": false}}
            ]
        });
        assert!(check(&schema, json!({})).is_ok());
        assert!(check(&schema, json!({"index": 2})).is_ok());
        let both = check(&schema, json!({"index": 2, "selector": "a"})).unwrap_err();
        assert!(both.contains("only one of `index` or `selector`"), "{both}");
    }

    #[test]
    fn ranges_and_enums_are_enforced() {
        let schema = json!({"type": "number", "minimum": 0.1, "maximum": 10});
        assert_eq!(
            check(&schema, json!(0.05)).unwrap_err(),
            "act: must be at least 0.1, got 0.05"
        );
        assert_eq!(
            check(&schema, json!(11)).unwrap_err(),
            "act: must be at most 10, got 11"
        );
        let positive = json!({"type": "number", "exclusiveMinimum": 0});
        assert_eq!(
            check(&positive, json!(0)).unwrap_err(),
            "act: must be greater than 0, got 0"
        );
        let direction = json!({"enum": ["up", "down"]});
        assert_eq!(
            check(&direction, json!("sideways")).unwrap_err(),
            "act: expected one of \"up\", \"down\", got \"sideways\""
        );
    }

    #[test]
    fn formats_check_selectors_and_keys() {
        let selector = json!({"type": "string", "format": "selector"});
        let err = check(&selector, json!("div:has(p)")).unwrap_err();
        assert!(
            err.starts_with("act: invalid selector `div:has(p)` at column 4"),
            "{err}"
        );
        let keys = json!({"type": "string", "format": "key-combination"});
        assert!(check(&keys, json!("Control+Nope"))
            .unwrap_err()
            .contains("unknown key `Nope`"));
    }

    #[test]
    fn nested_objects_and_items_carry_their_path() {
        let schema = json!({
            "type": "object",
            "properties": {
                "from": {"type": "object", "properties": {"index": {"type": "integer", "minimum": 0}}},
                "tags": {"type": "array", "items": {"type": "string"}}
            }
        });
        assert_eq!(
            check(&schema, json!({"from": {"index": -1}})).unwrap_err(),
            "act.from.index: must be at least 0, got -1"
        );
        assert_eq!(
            check(&schema, json!({"tags": ["a", 2]})).unwrap_err(),
            "act.tags[1]: expected a string, got the number 2"
        );
    }

    #[test]
    fn false_schema_and_min_length() {
        assert!(check(&json!(false), json!(1)).is_err());
        let name = json!({"type": "string", "minLength": 1});
        assert_eq!(
            check(&name, json!("")).unwrap_err(),
            "act: must not be empty"
        );
    }

    #[test]
    fn schema_check_refuses_what_is_not_enforced() {
        assert!(
            check_schema(&json!({"type": "object", "properties": {"q": {"type": "string"}}}))
                .is_ok()
        );
        let pattern = check_schema(
            &json!({"type": "object", "properties": {"q": {"type": "string", "pattern": "a+"}}}),
        )
        .unwrap_err()
        .to_string();
        assert!(pattern.contains("`pattern` is not supported"), "{pattern}");
        assert!(check_schema(&json!({"type": "string"}))
            .unwrap_err()
            .to_string()
            .contains("\"type\": \"object\""));
        assert!(
            check_schema(&json!({"type": "object", "properties": {"n": {"type": "int"}}})).is_err()
        );
        let bad_default = check_schema(
            &json!({"type": "object", "properties": {"n": {"type": "integer", "default": "x"}}}),
        )
        .unwrap_err()
        .to_string();
        assert!(bad_default.contains("default"), "{bad_default}");
    }
}
