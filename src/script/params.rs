//! A recipe's parameters: what `recipe(name, description, #{ … })`
//! declares, and the values a run passes (`--param user=bob`, a suite's
//! `params:` map), checked before anything runs.
//!
//! ```rhai
//! recipe("new_order", "Creates an order", #{
//!     customer: #{ type: "string", "default": "Bob" },
//!     quantity: #{ type: "integer", "default": 2 },
//! });
//! fn new_order(params) { fill(["label:Customer"], params.customer); }
//! ```
//!
//! (`default` is a reserved word in Rhai, so the key is written quoted.)
//! A value given as text (from the command line) is read as the declared
//! type; a JSON value (from a suite) must have it, except that a number or
//! a boolean is accepted as a string's text. A parameter without a
//! default must be given.

use serde_json::{Map, Value};

/// The type of a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// Any text.
    String,
    /// A whole number.
    Integer,
    /// Any number.
    Number,
    /// `true` or `false`.
    Boolean,
}

impl ParamKind {
    /// The word a declaration uses.
    pub fn as_str(self) -> &'static str {
        match self {
            ParamKind::String => "string",
            ParamKind::Integer => "integer",
            ParamKind::Number => "number",
            ParamKind::Boolean => "boolean",
        }
    }

    fn parse(word: &str) -> Option<ParamKind> {
        Some(match word {
            "string" => ParamKind::String,
            "integer" => ParamKind::Integer,
            "number" => ParamKind::Number,
            "boolean" => ParamKind::Boolean,
            _ => return None,
        })
    }

    /// `value` as this type, or why it is not one.
    fn read(self, value: &Value) -> Result<Value, String> {
        let wrong = || format!("expected {}, got {value}", self.article());
        match (self, value) {
            (ParamKind::String, Value::String(_)) => Ok(value.clone()),
            (ParamKind::String, Value::Number(n)) => Ok(Value::String(n.to_string())),
            (ParamKind::String, Value::Bool(b)) => Ok(Value::String(b.to_string())),
            (ParamKind::Integer, Value::Number(n)) if n.is_i64() => Ok(value.clone()),
            (ParamKind::Integer, Value::String(text)) => text
                .trim()
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| wrong()),
            (ParamKind::Number, Value::Number(_)) => Ok(value.clone()),
            (ParamKind::Number, Value::String(text)) => text
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(wrong),
            (ParamKind::Boolean, Value::Bool(_)) => Ok(value.clone()),
            (ParamKind::Boolean, Value::String(text)) => match text.trim() {
                "true" | "yes" => Ok(Value::Bool(true)),
                "false" | "no" => Ok(Value::Bool(false)),
                _ => Err(wrong()),
            },
            _ => Err(wrong()),
        }
    }

    fn article(self) -> &'static str {
        match self {
            ParamKind::String => "a string",
            ParamKind::Integer => "an integer",
            ParamKind::Number => "a number",
            ParamKind::Boolean => "true or false",
        }
    }
}

/// One declared parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct RecipeParam {
    /// Its name (`params.NAME` in the recipe).
    pub name: String,
    /// Its type.
    pub kind: ParamKind,
    /// The value used when none is given (the recorded one, in an export).
    pub default: Option<Value>,
}

impl RecipeParam {
    /// `customer (string, default "Bob")`.
    pub fn summary(&self) -> String {
        match &self.default {
            Some(default) => format!("{} ({}, default {default})", self.name, self.kind.as_str()),
            None => format!("{} ({}, required)", self.name, self.kind.as_str()),
        }
    }
}

/// What is wrong with a recipe's declared parameters or with the values a
/// run passes.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// The declaration is not a map of parameters.
    #[error("a recipe's parameters are a map like #{{ user: #{{ type: \"string\", default: \"bob\" }} }}, got {spec}")]
    NotAMap {
        /// What was declared instead.
        spec: Value,
    },
    /// A parameter name a recipe could not read as `params.NAME`.
    #[error("parameter name {name:?} must be letters, digits and _ and start with a letter")]
    BadName {
        /// The name.
        name: String,
    },
    /// A key other than `type` and `default` in a parameter's map.
    #[error("params.{name}: unknown key `{key}`; a parameter has `type` and `default`")]
    UnknownKey {
        /// The parameter.
        name: String,
        /// The key.
        key: String,
    },
    /// A parameter declared as neither a map nor a type word.
    #[error("params.{name} must be a map like #{{ type: \"string\" }}, got {field}")]
    NotAField {
        /// The parameter.
        name: String,
        /// What was declared instead.
        field: Value,
    },
    /// A type that is not one of the four.
    #[error("params.{name}: type {kind:?} is not one of string, integer, number, boolean")]
    UnknownType {
        /// The parameter.
        name: String,
        /// The type as written.
        kind: String,
    },
    /// A default that is not of the declared type.
    #[error("params.{name}: the default: {why}")]
    BadDefault {
        /// The parameter.
        name: String,
        /// Why the value does not fit.
        why: String,
    },
    /// The values a run passes do not fit what the recipe declares: every
    /// problem at once, with what the recipe takes.
    #[error("recipe `{recipe}`: {}; it takes {takes}", problems.join("; "))]
    Values {
        /// The recipe.
        recipe: String,
        /// Unknown names, wrong types, missing values.
        problems: Vec<String>,
        /// The names and types it takes (`customer (string, default "Bob")`).
        takes: String,
    },
    /// A `--param` that is not `NAME=VALUE`.
    #[error("--param {text:?}: write it as NAME=VALUE")]
    Assignment {
        /// The argument as given.
        text: String,
    },
}

/// Reads a declaration's map: each entry `#{ type: "…", default: … }` or
/// just the type word.
pub fn declared_params(spec: &Value) -> Result<Vec<RecipeParam>, ParamError> {
    let Value::Object(fields) = spec else {
        return Err(ParamError::NotAMap { spec: spec.clone() });
    };
    let mut out = Vec::new();
    for (name, field) in fields {
        if !is_param_name(name) {
            return Err(ParamError::BadName { name: name.clone() });
        }
        let (kind, default) = match field {
            Value::String(word) => (word.as_str(), None),
            Value::Object(field) => {
                if let Some(unknown) = field
                    .keys()
                    .find(|k| !["type", "default"].contains(&k.as_str()))
                {
                    return Err(ParamError::UnknownKey {
                        name: name.clone(),
                        key: unknown.clone(),
                    });
                }
                (
                    field
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or("string"),
                    field.get("default").cloned(),
                )
            }
            other => {
                return Err(ParamError::NotAField {
                    name: name.clone(),
                    field: other.clone(),
                })
            }
        };
        let kind = ParamKind::parse(kind).ok_or_else(|| ParamError::UnknownType {
            name: name.clone(),
            kind: kind.to_string(),
        })?;
        let default = match default {
            None | Some(Value::Null) => None,
            Some(value) => Some(kind.read(&value).map_err(|why| ParamError::BadDefault {
                name: name.clone(),
                why,
            })?),
        };
        out.push(RecipeParam {
            name: name.clone(),
            kind,
            default,
        });
    }
    Ok(out)
}

fn is_param_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The values a run uses: `given` checked against `declared` and read as
/// their types, defaults for the rest. Every problem is reported at once,
/// with what the recipe takes.
pub fn resolve_params(
    recipe: &str,
    declared: &[RecipeParam],
    given: &Map<String, Value>,
) -> Result<Map<String, Value>, ParamError> {
    let mut problems = Vec::new();
    let mut out = Map::new();
    for (name, value) in given {
        match declared.iter().find(|p| p.name == *name) {
            None => problems.push(format!("unknown parameter `{name}`")),
            Some(param) => match param.kind.read(value) {
                Ok(value) => {
                    out.insert(name.clone(), value);
                }
                Err(why) => problems.push(format!("`{name}`: {why}")),
            },
        }
    }
    for param in declared {
        if out.contains_key(&param.name) || given.contains_key(&param.name) {
            continue;
        }
        match &param.default {
            Some(default) => {
                out.insert(param.name.clone(), default.clone());
            }
            None => problems.push(format!("`{}` is required", param.name)),
        }
    }
    if problems.is_empty() {
        return Ok(out);
    }
    let takes = if declared.is_empty() {
        "no parameters".to_string()
    } else {
        declared
            .iter()
            .map(RecipeParam::summary)
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(ParamError::Values {
        recipe: recipe.to_string(),
        problems,
        takes,
    })
}

/// `NAME=VALUE` from the command line, the value kept as text for
/// [`resolve_params`] to read as the declared type.
pub fn parse_assignment(text: &str) -> Result<(String, Value), ParamError> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), Value::String(value.to_string())))
        }
        _ => Err(ParamError::Assignment {
            text: text.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn declared() -> Vec<RecipeParam> {
        declared_params(&json!({
            "customer": {"type": "string", "default": "Bob"},
            "quantity": {"type": "integer", "default": 2},
            "note": "string",
        }))
        .unwrap()
    }

    #[test]
    fn given_text_is_read_as_the_declared_type_and_defaults_fill_the_rest() {
        let given: Map<String, Value> = [
            ("quantity".to_string(), json!("5")),
            ("note".to_string(), json!("rush")),
        ]
        .into_iter()
        .collect();
        let values = resolve_params("new_order", &declared(), &given).unwrap();
        assert_eq!(
            Value::Object(values),
            json!({"quantity": 5, "note": "rush", "customer": "Bob"})
        );
    }

    #[test]
    fn unknown_names_wrong_types_and_missing_values_are_refused_together() {
        let given: Map<String, Value> = [
            ("qty".to_string(), json!("5")),
            ("quantity".to_string(), json!("five")),
        ]
        .into_iter()
        .collect();
        let error = resolve_params("new_order", &declared(), &given)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "recipe `new_order`: unknown parameter `qty`; `quantity`: expected an integer, \
             got \"five\"; `note` is required; it takes customer (string, default \"Bob\"), \
             quantity (integer, default 2), note (string, required)"
        );
    }

    #[test]
    fn declarations_are_checked() {
        assert!(declared_params(&json!({"n": {"type": "date"}}))
            .unwrap_err()
            .to_string()
            .contains("not one of string"));
        assert!(
            declared_params(&json!({"n": {"type": "integer", "default": "x"}}))
                .unwrap_err()
                .to_string()
                .contains("the default")
        );
        assert!(declared_params(&json!({"2x": "string"})).is_err());
        assert_eq!(
            parse_assignment("user=bob=1").unwrap(),
            ("user".to_string(), json!("bob=1"))
        );
        assert!(parse_assignment("user").is_err());
    }
}
