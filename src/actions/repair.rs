//! Schema-driven repairs for what models commonly get slightly wrong: the
//! wrong case or spelling style of an action name, a bare value where an
//! object of parameters was expected, numbers and booleans written as
//! strings. The agent's normalizer calls these before [`Catalog::parse`] and
//! shows the repairs in the step inspector; anything they cannot fix is left
//! for validation to report.

use serde_json::{Map, Value};

use super::catalog::Catalog;

impl Catalog {
    /// The catalog name meant by `name`, accepting other casings and
    /// spellings: `Click`, `INPUT_TEXT`, `inputText`, `input-text`,
    /// `input text`. `None` when nothing matches.
    pub fn canonical_name(&self, name: &str) -> Option<&str> {
        if let Some(spec) = self.get(name) {
            return Some(&spec.name);
        }
        let wanted = snake_case(name);
        self.specs()
            .iter()
            .find(|s| s.name == wanted)
            .map(|s| s.name.as_str())
    }

    /// Repairs the parameters of action `name` in the ways a schema makes
    /// unambiguous, returning the repaired value and one line per repair:
    ///
    /// - a bare value (`{"click": 3}`) becomes the first argument of the
    ///   action's command-line order (`{"index": 3}`); a bare string for a
    ///   target becomes a selector;
    /// - a string holding a number or boolean becomes one where the schema
    ///   wants a number, integer or boolean (`"3"` → `3`, `"true"` → `true`),
    ///   also inside `from`/`to` target objects.
    ///
    /// Unknown names and values that need judgement are returned unchanged.
    pub fn repair_params(&self, name: &str, params: Value) -> (Value, Vec<String>) {
        let mut repairs = Vec::new();
        let Some(spec) = self.get(name) else {
            return (params, repairs);
        };
        let mut params = match params {
            Value::Object(_) | Value::Null => params,
            bare => match spec.positional.first() {
                Some(first) => {
                    let mut object = Map::new();
                    if first == "target" && !has_property(&spec.schema, "target") {
                        let key = if bare.is_string()
                            && bare
                                .as_str()
                                .and_then(|s| s.trim().parse::<u64>().ok())
                                .is_none()
                        {
                            "selector"
                        } else {
                            "index"
                        };
                        object.insert(key.to_string(), bare);
                        repairs.push(format!("{name}: a bare value was taken as `{key}`"));
                    } else {
                        object.insert(first.clone(), bare);
                        repairs.push(format!("{name}: a bare value was taken as `{first}`"));
                    }
                    Value::Object(object)
                }
                None => bare,
            },
        };
        coerce_scalars(&spec.schema, &mut params, name, &mut repairs);
        (params, repairs)
    }
}

fn has_property(schema: &Value, name: &str) -> bool {
    schema.get("properties").and_then(|p| p.get(name)).is_some()
}

/// Converts strings to the numbers and booleans the schema expects, walking
/// into object properties.
fn coerce_scalars(schema: &Value, value: &mut Value, path: &str, repairs: &mut Vec<String>) {
    if let Value::Object(fields) = value {
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            return;
        };
        for (key, field) in fields.iter_mut() {
            if let Some(field_schema) = properties.get(key) {
                coerce_scalars(field_schema, field, &format!("{path}.{key}"), repairs);
            }
        }
        return;
    }
    let Value::String(text) = value else {
        return;
    };
    let trimmed = text.trim();
    let replacement = match schema.get("type").and_then(Value::as_str) {
        Some("integer") => trimmed.parse::<i64>().ok().map(Value::from),
        Some("number") => trimmed.parse::<i64>().ok().map(Value::from).or_else(|| {
            trimmed
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite())
                .map(Value::from)
        }),
        Some("boolean") => match trimmed.to_ascii_lowercase().as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        _ => None,
    };
    if let Some(replacement) = replacement {
        repairs.push(format!(
            "{path}: the string {value} was read as {replacement}"
        ));
        *value = replacement;
    }
}

/// `inputText`, `Input-Text`, `input text` → `input_text`.
fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut previous_lower = false;
    for c in name.trim().chars() {
        if c == '-' || c == ' ' || c == '_' {
            if !out.ends_with('_') && !out.is_empty() {
                out.push('_');
            }
            previous_lower = false;
        } else if c.is_uppercase() {
            if previous_lower {
                out.push('_');
            }
            out.extend(c.to_lowercase());
            previous_lower = false;
        } else {
            out.push(c);
            previous_lower = c.is_lowercase() || c.is_ascii_digit();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_in_other_styles_find_the_action() {
        let catalog = Catalog::builtin();
        for name in ["click", "Click", "CLICK"] {
            assert_eq!(catalog.canonical_name(name), Some("click"), "{name}");
        }
        for name in [
            "inputText",
            "InputText",
            "input-text",
            "INPUT_TEXT",
            "input text",
        ] {
            assert_eq!(catalog.canonical_name(name), Some("input_text"), "{name}");
        }
        assert_eq!(catalog.canonical_name("teleport"), None);
    }

    #[test]
    fn bare_values_become_the_first_argument() {
        let catalog = Catalog::builtin();
        let (params, repairs) = catalog.repair_params("click", json!(3));
        assert_eq!(params, json!({"index": 3}));
        assert_eq!(repairs, ["click: a bare value was taken as `index`"]);
        assert_eq!(
            catalog.repair_params("click", json!("#save")).0,
            json!({"selector": "#save"})
        );
        assert_eq!(
            catalog.repair_params("click", json!("12")).0,
            json!({"index": 12})
        );
        assert_eq!(
            catalog.repair_params("navigate", json!("/orders")).0,
            json!({"url": "/orders"})
        );
        assert_eq!(
            catalog.repair_params("think", json!("plan")).0,
            json!({"reasoning": "plan"})
        );
        // The repaired value then parses.
        let (params, _) = catalog.repair_params("wait", json!("2"));
        assert_eq!(params, json!({"seconds": 2}));
        assert!(catalog.parse_call("wait", params).is_ok());
    }

    #[test]
    fn numbers_and_booleans_written_as_strings_are_read() {
        let catalog = Catalog::builtin();
        let (params, repairs) = catalog.repair_params(
            "input_text",
            json!({"index": "5", "text": "42", "clear": "false"}),
        );
        assert_eq!(params, json!({"index": 5, "text": "42", "clear": false}));
        assert_eq!(repairs.len(), 2, "{repairs:?}");
        let (params, _) = catalog.repair_params(
            "drag_and_drop",
            json!({"from": {"index": "1"}, "to": {"index": " 2 "}}),
        );
        assert_eq!(params, json!({"from": {"index": 1}, "to": {"index": 2}}));
        let (params, _) =
            catalog.repair_params("scroll", json!({"direction": "down", "pages": "0.5"}));
        assert_eq!(params["pages"], json!(0.5));
    }

    #[test]
    fn what_needs_judgement_is_left_alone() {
        let catalog = Catalog::builtin();
        let (params, repairs) = catalog.repair_params("click", json!({"index": "third"}));
        assert_eq!(params, json!({"index": "third"}));
        assert!(repairs.is_empty());
        let (params, repairs) = catalog.repair_params("nope", json!(3));
        assert_eq!(params, json!(3));
        assert!(repairs.is_empty());
        let (params, repairs) = catalog.repair_params("back", json!(true));
        assert_eq!(params, json!(true));
        assert!(repairs.is_empty());
    }
}
