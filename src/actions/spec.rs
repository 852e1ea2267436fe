//! [`ActionSpec`]: one catalog entry (name, description for the model,
//! parameter schema, risk, command-line argument order) and where it comes
//! from. The built-ins are written as specs and the catalog holds them, so
//! the spec stands below both.

use serde::Serialize;
use serde_json::{Map, Value};

use super::risk_level::Risk;

/// Where an action comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecOrigin {
    /// Built into webagent.
    Builtin,
    /// Registered by a script or extension.
    Custom {
        /// The file that registered it, when known, so errors and the TUI
        /// can point at it.
        source: Option<String>,
    },
}

/// One catalog entry. Serializes as `{name, description, risk, schema}`,
/// the form `webagent actions --json` prints and the agent's tool schema is
/// built from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActionSpec {
    /// snake_case name, the key of `{"name": {params}}`.
    pub name: String,
    /// What the action does, written for the model.
    pub description: String,
    /// Static risk level (see [`Action::effective_risk`] for the level of a
    /// concrete action).
    pub risk: Risk,
    /// JSON schema of the parameters object.
    pub schema: Value,
    /// Parameter order for the one-line command syntax. `target` stands for
    /// the inline `index`/`selector` pair.
    #[serde(skip)]
    pub positional: Vec<String>,
    /// Built-in or custom.
    #[serde(skip)]
    pub origin: SpecOrigin,
}

/// Actions the model is neither offered nor allowed: how the page's
/// dialogs are answered is the person's to say (`--accept-dialogs`, or
/// their own answer while recording), not the model's, since accepting
/// "Delete everything?" is the decision the dialog asks for.
pub const NOT_FOR_THE_MODEL: &[&str] = &["answer_dialogs"];

impl ActionSpec {
    /// Whether the model is offered it (see [`NOT_FOR_THE_MODEL`]).
    pub fn for_the_model(&self) -> bool {
        !NOT_FOR_THE_MODEL.contains(&self.name.as_str())
    }

    /// A custom action's spec. Its command-line argument order is the order
    /// of the schema's `properties`, with an `index`/`selector` pair taken
    /// together as one `target` argument, as for built-ins.
    pub fn custom(
        name: impl Into<String>,
        description: impl Into<String>,
        schema: Value,
        risk: Risk,
        source: Option<String>,
    ) -> Self {
        let names: Vec<String> = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let targeted = names.iter().any(|n| n == "index")
            && names.iter().any(|n| n == "selector")
            && !names.iter().any(|n| n == "target");
        let mut positional = Vec::new();
        for name in names {
            if targeted && (name == "index" || name == "selector") {
                if !positional.iter().any(|p| p == "target") {
                    positional.push("target".to_string());
                }
            } else {
                positional.push(name);
            }
        }
        ActionSpec {
            name: name.into(),
            description: description.into(),
            risk,
            schema,
            positional,
            origin: SpecOrigin::Custom { source },
        }
    }

    /// Whether this is a built-in action.
    pub fn is_builtin(&self) -> bool {
        self.origin == SpecOrigin::Builtin
    }

    /// How to write the action on the command line, for help and
    /// completion: `input_text <target> <text> [clear=…]`. Arguments in
    /// angle brackets are required, in square brackets optional; the
    /// `name=…` ones can only be given by name.
    pub fn usage(&self) -> String {
        let empty = Map::new();
        let properties = self
            .schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let required: Vec<&str> = self
            .schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let choices = self.choice_groups();
        let mut words = vec![self.name.clone()];
        let mut covered: Vec<String> = Vec::new();
        for name in &self.positional {
            if name == "target" && !properties.contains_key("target") {
                let optional = choices
                    .iter()
                    .find(|(group, _)| group.iter().any(|g| g == "index"))
                    .is_some_and(|(_, optional)| *optional);
                words.push(if optional {
                    "[target]".to_string()
                } else {
                    "<target>".to_string()
                });
                covered.extend(["index".to_string(), "selector".to_string()]);
                continue;
            }
            let in_choice = choices.iter().any(|(group, _)| group.contains(name));
            let needed =
                required.contains(&name.as_str()) && properties[name].get("default").is_none();
            words.push(if needed || in_choice {
                format!("<{name}>")
            } else {
                format!("[{name}]")
            });
            covered.push(name.clone());
        }
        for name in properties.keys().filter(|k| !covered.contains(k)) {
            words.push(format!("[{name}=…]"));
        }
        words.join(" ")
    }

    /// A one-line summary of the parameters for tables and help:
    /// `index|selector, text, clear=true`.
    pub fn params_summary(&self) -> String {
        let Some(properties) = self.schema.get("properties").and_then(Value::as_object) else {
            return String::new();
        };
        let required: Vec<&str> = self
            .schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let choices = self.choice_groups();
        let mut parts = Vec::new();
        let mut done: Vec<&str> = Vec::new();
        for name in properties.keys() {
            if done.contains(&name.as_str()) {
                continue;
            }
            if let Some((group, optional)) = choices.iter().find(|(g, _)| g.contains(name)) {
                let joined = group.join("|");
                parts.push(if *optional {
                    format!("[{joined}]")
                } else {
                    joined
                });
                done.extend(group.iter().map(String::as_str));
                continue;
            }
            let property = &properties[name];
            if let Some(default) = property.get("default") {
                let shown = default
                    .as_str()
                    .map_or_else(|| default.to_string(), str::to_string);
                parts.push(format!("{name}={shown}"));
            } else if required.contains(&name.as_str()) {
                parts.push(name.clone());
            } else {
                parts.push(format!("[{name}]"));
            }
        }
        parts.join(", ")
    }

    /// Groups of fields of which exactly one is given (from `oneOf`), and
    /// whether giving none is allowed too.
    fn choice_groups(&self) -> Vec<(Vec<String>, bool)> {
        let mut lists: Vec<&Vec<Value>> = Vec::new();
        if let Some(Value::Array(branches)) = self.schema.get("oneOf") {
            lists.push(branches);
        }
        if let Some(Value::Array(parts)) = self.schema.get("allOf") {
            lists.extend(parts.iter().filter_map(|p| p.get("oneOf")?.as_array()));
        }
        lists
            .into_iter()
            .map(|branches| {
                let mut fields = Vec::new();
                let mut optional = false;
                for branch in branches {
                    if let Some(Value::Array(required)) = branch.get("required") {
                        fields.extend(
                            required
                                .iter()
                                .filter_map(Value::as_str)
                                .map(str::to_string),
                        );
                    } else {
                        optional = true;
                    }
                }
                (fields, optional)
            })
            .collect()
    }
}
