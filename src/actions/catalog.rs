//! The catalog: every action's spec, built-ins plus the custom actions
//! scripts register (each checked as it joins), and parsing of
//! `{"name": {params}}` into a validated [`Action`].

use serde_json::{json, Map, Value};

use super::action::{Action, CustomAction};
use super::builtins::{builtin_specs, check_builtin_extras};
use super::error::ActionError;
use super::schema;
use super::spec::ActionSpec;
use crate::spelling::{abbreviates, edit_distance, typo_budget};

/// The actions available to the model, the TUI, scripts and the runner:
/// the built-ins first, then custom actions in registration order.
#[derive(Debug, Clone, PartialEq)]
pub struct Catalog {
    specs: Vec<ActionSpec>,
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog::builtin()
    }
}

impl Catalog {
    /// The catalog with only the built-in actions.
    pub fn builtin() -> Self {
        Catalog {
            specs: builtin_specs(),
        }
    }

    /// Every spec, built-ins first.
    pub fn specs(&self) -> &[ActionSpec] {
        &self.specs
    }

    /// The spec of one action.
    pub fn get(&self, name: &str) -> Option<&ActionSpec> {
        self.specs.iter().find(|s| s.name == name)
    }

    /// Every action name, in catalog order.
    pub fn names(&self) -> Vec<&str> {
        self.specs.iter().map(|s| s.name.as_str()).collect()
    }

    /// Adds a custom action. Its name must be snake_case and new, and its
    /// schema must use only what the validator enforces.
    pub fn register(&mut self, spec: ActionSpec) -> Result<(), ActionError> {
        self.check_custom(&spec, &[])?;
        self.specs.push(spec);
        Ok(())
    }

    /// Replaces every custom action at once, as a script reload does. If any
    /// of the new specs is invalid, nothing changes and the error says which.
    pub fn replace_custom(&mut self, specs: Vec<ActionSpec>) -> Result<(), ActionError> {
        let mut builtins: Vec<ActionSpec> = self
            .specs
            .iter()
            .filter(|s| s.is_builtin())
            .cloned()
            .collect();
        let candidate = Catalog {
            specs: builtins.clone(),
        };
        for (i, spec) in specs.iter().enumerate() {
            candidate.check_custom(spec, &specs[..i])?;
        }
        builtins.extend(specs);
        self.specs = builtins;
        Ok(())
    }

    /// Removes a custom action; returns whether it was there. Built-ins
    /// cannot be removed.
    pub fn remove_custom(&mut self, name: &str) -> bool {
        let before = self.specs.len();
        self.specs.retain(|s| s.is_builtin() || s.name != name);
        self.specs.len() != before
    }

    fn check_custom(&self, spec: &ActionSpec, pending: &[ActionSpec]) -> Result<(), ActionError> {
        let reject = |reason: String| ActionError::InvalidCustomAction {
            name: spec.name.clone(),
            reason,
        };
        if spec.is_builtin() {
            return Err(reject("only custom specs can be registered".to_string()));
        }
        if !crate::words::is_snake_case(&spec.name) {
            return Err(reject(
                "names are snake_case: lower-case letters, digits and `_`, starting with a letter, at most 64 characters"
                    .to_string(),
            ));
        }
        if let Some(existing) = self.get(&spec.name) {
            return Err(reject(if existing.is_builtin() {
                "a built-in action has this name; choose another".to_string()
            } else {
                "a custom action with this name is already registered".to_string()
            }));
        }
        if pending.iter().any(|p| p.name == spec.name) {
            return Err(reject("registered twice in the same reload".to_string()));
        }
        if spec.description.trim().is_empty() {
            return Err(reject(
                "the description is empty; the model needs it to know when to use the action"
                    .to_string(),
            ));
        }
        schema::check_schema(&spec.schema).map_err(|e| reject(e.to_string()))?;
        Ok(())
    }

    /// The JSON schema of one action as the model emits it,
    /// `{"name": {params}}`: one `anyOf` branch per action, each an object
    /// with exactly that key. The agent's tool puts this under its `action`
    /// field. `anyOf` rather than `oneOf` because more model providers
    /// accept it; the branches are exclusive anyway, and what the model
    /// sends is checked again by [`Catalog::parse`]. Each action's
    /// parameters are its schema reduced to the structure local servers
    /// turn into a grammar ([`model_schema`](super::model_schema)); what
    /// the actions do is said once, in the step tool's description.
    /// Actions [not for the model](super::spec::NOT_FOR_THE_MODEL) are
    /// left out.
    pub fn action_schema(&self) -> Value {
        let branches: Vec<Value> = self
            .specs
            .iter()
            .filter(|spec| spec.for_the_model())
            .map(|spec| {
                let mut properties = Map::new();
                properties.insert(
                    spec.name.clone(),
                    super::wire::model_schema(&spec.schema, true),
                );
                json!({
                    "type": "object",
                    "properties": properties,
                    "required": [spec.name],
                })
            })
            .collect();
        json!({"anyOf": branches})
    }

    /// Parses the JSON the model (or a script, or `webagent exec`) emits:
    /// `{"click": {"index": 3}}`. Parameters are validated against the
    /// action's schema and defaults are filled in; every problem is an
    /// [`ActionError`] naming the field.
    pub fn parse(&self, value: &Value) -> Result<Action, ActionError> {
        let Value::Object(wrapper) = value else {
            return Err(ActionError::Malformed {
                reason: format!(
                    "expected an object like {{\"click\": {{\"index\": 3}}}}, got {}",
                    kind_of(value)
                ),
            });
        };
        let mut entries = wrapper.iter();
        let (Some((name, params)), None) = (entries.next(), entries.next()) else {
            let keys: Vec<&str> = wrapper.keys().map(String::as_str).collect();
            return Err(ActionError::Malformed {
                reason: if keys.is_empty() {
                    "the object is empty; give one action name as its only key".to_string()
                } else {
                    format!(
                        "one action per object, got {} keys ({})",
                        keys.len(),
                        keys.join(", ")
                    )
                },
            });
        };
        self.parse_call(name, params.clone())
    }

    /// Parses one action given its name and parameters separately (the form
    /// scripts and the command line produce).
    pub fn parse_call(&self, name: &str, params: Value) -> Result<Action, ActionError> {
        let spec = self.get(name).ok_or_else(|| self.unknown(name))?;
        let mut params = match params {
            // A parameterless action written as `{"back": null}` means `{}`.
            Value::Null => Value::Object(Map::new()),
            Value::Object(_) => params,
            other => {
                return Err(ActionError::invalid(
                    name,
                    format!("parameters must be an object, got {}", kind_of(&other)),
                ))
            }
        };
        schema::validate(&spec.schema, &mut params, name)?;
        if !spec.is_builtin() {
            return Ok(Action::Custom(CustomAction {
                name: spec.name.clone(),
                params,
                risk: spec.risk,
            }));
        }
        check_builtin_extras(name, &params)?;
        let mut wrapper = Map::new();
        wrapper.insert(name.to_string(), params);
        serde_json::from_value(Value::Object(wrapper))
            .map_err(|e| ActionError::invalid(name, format!("parameters do not fit: {e}")))
    }

    /// The error for a name not in the catalog, with close names.
    pub(crate) fn unknown(&self, name: &str) -> ActionError {
        let names = self.names();
        let lower = name.to_lowercase();
        let mut close: Vec<String> = Vec::new();
        if let Some((_, meant)) = ALIASES.iter().find(|(alias, _)| *alias == lower) {
            close.push((*meant).to_string());
        }
        let mut ranked: Vec<(usize, &str)> = names
            .iter()
            .map(|n| {
                (
                    edit_distance(&lower, n, usize::MAX).unwrap_or(usize::MAX),
                    *n,
                )
            })
            .filter(|(d, n)| {
                *d <= typo_budget(n)
                    || (lower.len() >= 3 && (n.contains(lower.as_str()) || abbreviates(&lower, n)))
            })
            .collect();
        ranked.sort();
        for (_, n) in ranked.into_iter().take(3) {
            if !close.iter().any(|c| c == n) {
                close.push(n.to_string());
            }
        }
        let is_close = !close.is_empty();
        ActionError::UnknownAction {
            name: name.to_string(),
            suggestions: if is_close {
                close
            } else {
                names.iter().map(|n| n.to_string()).collect()
            },
            close: is_close,
        }
    }
}

/// Names models commonly use for built-ins (from other agent frameworks),
/// offered as suggestions, never applied silently.
const ALIASES: &[(&str, &str)] = &[
    ("goto", "navigate"),
    ("open", "navigate"),
    ("open_url", "navigate"),
    ("visit", "navigate"),
    ("go_back", "back"),
    ("navback", "back"),
    ("type", "input_text"),
    ("fill", "input_text"),
    ("fill_input", "input_text"),
    ("press", "press_keys"),
    ("keys", "press_keys"),
    ("key", "press_keys"),
    ("select", "select_option"),
    ("sleep", "wait"),
    ("drag", "drag_and_drop"),
    ("upload", "upload_file"),
    ("finish", "done"),
    ("close", "done"),
    ("get_text", "read_page"),
    ("eval", "execute_javascript"),
    ("evaluate", "execute_javascript"),
];

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests;
