//! The parameter schemas as sent to the model: inside the subset of JSON
//! Schema that local servers turn into a decoding grammar.
//!
//! llama.cpp's server, Ollama (`format`) and vLLM's guided decoding build a
//! grammar from a tool's schema. Their converters reject, or silently drop
//! to free output on, branches that only say which field is required
//! (`{"required": ["selector"]}`), `allOf`, boolean schemas and most
//! validation keywords; a small model then answers in whatever shape it
//! likes. So the model gets a plain schema of complete objects, and the
//! rules the subset cannot say (exactly one of `index` or `selector`,
//! ranges, selector syntax) stay in the catalog's own validation, whose
//! messages the model reads when it breaks them.

use serde_json::{Map, Value};

/// Keywords a schema sent to the model may use.
const ALLOWED: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "enum",
    "items",
    "anyOf",
    "description",
];

/// Types the converters map to grammar rules.
const SIMPLE_TYPES: &[&str] = &["object", "array", "string", "integer", "number", "boolean"];

/// `schema` reduced to the grammar-safe subset: validation-only keywords
/// and required-only branches dropped, a default kept as words in the
/// description. `structure_only` also leaves out descriptions and
/// `additionalProperties: false` (the converters treat an object without
/// it as closed), for schemas whose meaning is said elsewhere once.
pub fn model_schema(schema: &Value, structure_only: bool) -> Value {
    let Value::Object(rules) = schema else {
        // `true` (anything) becomes the empty schema; `false` is handled
        // by the caller, which drops the property.
        return Value::Object(Map::new());
    };
    let mut out = Map::new();
    match rules.get("type") {
        Some(Value::String(kind)) => {
            out.insert("type".into(), Value::from(kind.as_str()));
        }
        Some(Value::Array(kinds)) => {
            // A list of types is not simple; the first non-null one is
            // what the model should send.
            if let Some(kind) = kinds
                .iter()
                .filter_map(Value::as_str)
                .find(|k| *k != "null")
            {
                out.insert("type".into(), Value::from(kind));
            }
        }
        _ => {}
    }
    let mut description = rules
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if let Some(default) = rules.get("default") {
        if !description.to_ascii_lowercase().contains("default") {
            let shown = match default {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            description = format!("{} (default {shown})", description.trim_end_matches('.'))
                .trim()
                .to_owned();
        }
    }
    if !description.is_empty() && !structure_only {
        out.insert("description".into(), Value::from(description));
    }
    if let Some(Value::Array(values)) = rules.get("enum") {
        out.insert("enum".into(), Value::Array(values.clone()));
    }
    if let Some(Value::Object(properties)) = rules.get("properties") {
        let mut kept = Map::new();
        for (name, property) in properties {
            if *property == Value::Bool(false) {
                continue;
            }
            kept.insert(name.clone(), model_schema(property, structure_only));
        }
        if let Some(Value::Array(required)) = rules.get("required") {
            let required: Vec<Value> = required
                .iter()
                .filter(|r| r.as_str().is_some_and(|r| kept.contains_key(r)))
                .cloned()
                .collect();
            if !required.is_empty() {
                out.insert("required".into(), Value::Array(required));
            }
        }
        out.insert("properties".into(), Value::Object(kept));
    }
    if let Some(items) = rules.get("items") {
        out.insert("items".into(), model_schema(items, structure_only));
    }
    if rules.get("additionalProperties") == Some(&Value::Bool(false)) && !structure_only {
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    Value::Object(out)
}

/// Where `schema` leaves the grammar-safe subset, one line per problem
/// with its JSON path; empty when it stays inside.
pub fn grammar_subset_problems(schema: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    check(schema, "$", &mut problems);
    problems
}

fn check(schema: &Value, path: &str, problems: &mut Vec<String>) {
    let Value::Object(rules) = schema else {
        problems.push(format!("{path}: a boolean schema"));
        return;
    };
    for key in rules.keys() {
        if !ALLOWED.contains(&key.as_str()) {
            problems.push(format!("{path}: unsupported keyword `{key}`"));
        }
    }
    match rules.get("type") {
        None | Some(Value::Null) => {}
        Some(Value::String(kind)) if SIMPLE_TYPES.contains(&kind.as_str()) => {}
        Some(other) => problems.push(format!("{path}: type {other} is not a simple type")),
    }
    if let Some(additional) = rules.get("additionalProperties") {
        if additional != &Value::Bool(false) {
            problems.push(format!("{path}: additionalProperties other than false"));
        }
    }
    let properties = rules.get("properties").and_then(Value::as_object);
    if let Some(required) = rules.get("required") {
        let names = required.as_array().cloned().unwrap_or_default();
        for name in names {
            let known = name
                .as_str()
                .is_some_and(|n| properties.is_some_and(|p| p.contains_key(n)));
            if !known {
                problems.push(format!(
                    "{path}: required {name} names no property of this object (a branch that only says what is required)"
                ));
            }
        }
    }
    if let Some(properties) = properties {
        for (name, property) in properties {
            check(property, &format!("{path}.{name}"), problems);
        }
    }
    if let Some(items) = rules.get("items") {
        check(items, &format!("{path}[]"), problems);
    }
    if let Some(branches) = rules.get("anyOf") {
        let Some(branches) = branches.as_array() else {
            problems.push(format!("{path}: anyOf is not a list"));
            return;
        };
        for (i, branch) in branches.iter().enumerate() {
            let complete = branch.get("type").and_then(Value::as_str).is_some()
                && (branch.get("type") != Some(&Value::from("object"))
                    || branch.get("properties").is_some());
            if !complete {
                problems.push(format!(
                    "{path}.anyOf[{i}]: not a complete schema (needs its own type and properties)"
                ));
            }
            check(branch, &format!("{path}.anyOf[{i}]"), problems);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn validation_only_parts_are_dropped_and_defaults_kept_as_words() {
        let schema = json!({
            "type": "object",
            "properties": {
                "index": {"type": "integer", "minimum": 0, "description": "Element number."},
                "selector": {"type": "string", "format": "selector", "maxLength": 500},
                "timeout_ms": {"type": "integer", "default": 5000, "description": "Give up after this."},
                "gone": false
            },
            "required": ["gone"],
            "additionalProperties": false,
            "oneOf": [{"required": ["index"]}, {"required": ["selector"]}]
        });
        let wire = model_schema(&schema, false);
        assert_eq!(
            wire,
            json!({
                "type": "object",
                "properties": {
                    "index": {"type": "integer", "description": "Element number."},
                    "selector": {"type": "string"},
                    "timeout_ms": {"type": "integer", "description": "Give up after this (default 5000)"}
                },
                "additionalProperties": false
            })
        );
        let bare = model_schema(&schema, true);
        assert_eq!(
            bare,
            json!({"type": "object", "properties": {
                "index": {"type": "integer"}, "selector": {"type": "string"}, "timeout_ms": {"type": "integer"}
            }})
        );
        assert!(grammar_subset_problems(&wire).is_empty());
        let problems = grammar_subset_problems(&schema);
        assert!(
            problems.iter().any(|p| p.contains("`oneOf`")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p.contains("`minimum`")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p.contains("boolean schema")),
            "{problems:?}"
        );
        let branch_only = json!({"anyOf": [{"required": ["index"]}]});
        let problems = grammar_subset_problems(&branch_only);
        assert!(
            problems.iter().any(|p| p.contains("not a complete schema")),
            "{problems:?}"
        );
    }
}
