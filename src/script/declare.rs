//! Declarations: what `action(...)` and `recipe(...)` at a file's top
//! level add while the file loads, checked then (a broken declaration
//! fails the load, not the first call).

use rhai::Position;
use serde_json::{json, Map, Value};

use super::loaded::RecipeDef;
use super::params::declared_params;
use crate::actions::{ActionSpec, Catalog, Risk};

/// Declarations gathered while a file's top level runs.
#[derive(Debug)]
pub(crate) struct Collected {
    file: String,
    /// Each action's spec, the function that handles it, and where it was
    /// declared.
    pub(super) actions: Vec<(ActionSpec, String, Position)>,
    /// Each recipe and where it was declared.
    pub(super) recipes: Vec<(RecipeDef, Position)>,
    /// `secret_sites(name, [sites])`: the sites a secret the file types
    /// may go to, whatever the session binds it to.
    pub(super) secret_sites: Vec<(String, Vec<String>)>,
}

impl Collected {
    /// Nothing declared yet in `file`.
    pub(super) fn new(file: String) -> Self {
        Collected {
            file,
            actions: Vec::new(),
            recipes: Vec::new(),
            secret_sites: Vec::new(),
        }
    }

    /// `secret_sites(name, [sites])`.
    pub(crate) fn add_secret_sites(
        &mut self,
        name: &str,
        sites: Vec<String>,
    ) -> Result<(), String> {
        if sites.is_empty() {
            return Err(format!("secret_sites(\"{name}\", …) names no site"));
        }
        crate::browser::DomainPolicy::new(&sites).map_err(|e| e.to_string())?;
        self.secret_sites.push((name.to_string(), sites));
        Ok(())
    }

    /// `action(name, #{description, params, risk, handler})`.
    pub(crate) fn add_action(
        &mut self,
        name: &str,
        spec: &Value,
        _pos: Position,
    ) -> Result<(), String> {
        let description = spec
            .get("description")
            .and_then(Value::as_str)
            .ok_or("the action needs a `description` string (the model reads it)")?;
        let risk = match spec.get("risk") {
            None => Risk::Interact,
            Some(value) => serde_json::from_value::<Risk>(value.clone()).map_err(|_| {
                format!("risk {value} is not one of read, interact, commit, dangerous")
            })?,
        };
        let schema = params_schema(spec.get("params"))?;
        let handler = match spec.get("handler") {
            None => name.to_string(),
            Some(Value::String(handler)) => handler.clone(),
            Some(other) => return Err(format!("`handler` names a function; got {other}")),
        };
        if self.actions.iter().any(|(s, ..)| s.name == name) {
            return Err(format!("the action `{name}` is declared twice"));
        }
        let spec = ActionSpec::custom(name, description, schema, risk, Some(self.file.clone()));
        // The catalog's checks (snake_case, new name, schema subset) apply
        // now, so a broken declaration fails the load, not the first call.
        Catalog::builtin()
            .register(spec.clone())
            .map_err(|e| e.to_string())?;
        self.actions.push((spec, handler, _pos));
        Ok(())
    }

    /// `recipe(name, description)` or `recipe(name, description, params)`.
    pub(crate) fn add_recipe(
        &mut self,
        name: &str,
        description: &str,
        params: Option<&Value>,
        pos: Position,
    ) -> Result<(), String> {
        if self.recipes.iter().any(|(r, _)| r.name == name) {
            return Err(format!("the recipe `{name}` is declared twice"));
        }
        let params = match params {
            Some(spec) => declared_params(spec).map_err(|e| format!("recipe `{name}`: {e}"))?,
            None => Vec::new(),
        };
        self.recipes.push((
            RecipeDef {
                name: name.to_string(),
                description: description.to_string(),
                file: self.file.clone(),
                params,
            },
            pos,
        ));
        Ok(())
    }
}

/// A script's parameter map (`#{ id: #{ type: "integer" }, note: #{ type:
/// "string", optional: true } }`) as a JSON schema. A field is required
/// unless it says `optional: true` or has a `default`.
fn params_schema(params: Option<&Value>) -> Result<Value, String> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    match params {
        None | Some(Value::Null) => {}
        Some(Value::Object(fields)) => {
            for (name, field) in fields {
                let mut field = match field {
                    Value::Object(field) => field.clone(),
                    Value::String(kind) => {
                        let mut field = Map::new();
                        field.insert("type".into(), json!(kind));
                        field
                    }
                    other => {
                        return Err(format!(
                            "params.{name} must be a map like #{{ type: \"string\" }}, got {other}"
                        ))
                    }
                };
                let optional = field
                    .remove("optional")
                    .and_then(|v| v.as_bool())
                    .unwrap_or(false);
                if !optional && !field.contains_key("default") {
                    required.push(json!(name));
                }
                properties.insert(name.clone(), Value::Object(field));
            }
        }
        Some(other) => return Err(format!("`params` must be a map of fields, got {other}")),
    }
    Ok(json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_become_a_schema_with_required_fields() {
        let schema = params_schema(Some(&json!({
            "id": {"type": "integer"},
            "note": {"type": "string", "optional": true},
            "reason": "string",
        })))
        .unwrap();
        assert_eq!(schema["required"], json!(["id", "reason"]));
        assert_eq!(schema["properties"]["reason"], json!({"type": "string"}));
        assert!(schema["properties"]["note"].get("optional").is_none());
    }
}
