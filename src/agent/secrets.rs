//! Secrets the model must never see: it writes `<secret>name</secret>` and
//! the value is filled in only when the action runs; anywhere text leaves
//! the agent (prompts, events, traces) the value is replaced by the
//! placeholder.

use serde_json::Value;

/// Named secret values for one run.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    entries: Vec<(String, String)>,
}

// Values must not reach a log through `{:?}`.
impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|(name, _)| name))
            .finish()
    }
}

impl Secrets {
    /// No secrets.
    pub fn new() -> Self {
        Secrets::default()
    }

    /// Adds a secret; empty values are ignored (masking an empty string
    /// would mangle every text).
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let (name, value) = (name.into(), value.into());
        if value.is_empty() {
            return;
        }
        self.entries.retain(|(n, _)| *n != name);
        self.entries.push((name, value));
        // Longest values first, so a secret containing another is masked
        // whole.
        self.entries
            .sort_by_key(|entry| std::cmp::Reverse(entry.1.len()));
    }

    /// The names, for the system prompt.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.entries.iter().map(|(n, _)| n.clone()).collect();
        names.sort();
        names
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `text` with every secret value replaced by its placeholder.
    pub fn mask(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (name, value) in &self.entries {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), &placeholder(name));
            }
        }
        out
    }

    /// `text` with placeholders replaced by their values.
    pub fn fill(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (name, value) in &self.entries {
            out = out.replace(&placeholder(name), value);
        }
        out
    }

    /// Masks every string inside a JSON value.
    pub fn mask_json(&self, value: &mut Value) {
        self.walk(value, &|s, text| s.mask(text));
    }

    /// Fills placeholders in every string inside a JSON value.
    pub fn fill_json(&self, value: &mut Value) {
        self.walk(value, &|s, text| s.fill(text));
    }

    fn walk(&self, value: &mut Value, change: &dyn Fn(&Secrets, &str) -> String) {
        if self.entries.is_empty() {
            return;
        }
        match value {
            Value::String(text) => *text = change(self, text),
            Value::Array(items) => items.iter_mut().for_each(|v| self.walk(v, change)),
            Value::Object(fields) => fields.values_mut().for_each(|v| self.walk(v, change)),
            _ => {}
        }
    }
}

/// How the model writes a secret.
pub fn placeholder(name: &str) -> String {
    format!("<secret>{name}</secret>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_masked_and_filled_by_name() {
        let mut secrets = Secrets::new();
        secrets.insert("password", "hunter2");
        secrets.insert("pin", "");
        assert_eq!(secrets.names(), ["password"]);
        assert_eq!(
            secrets.mask("typed hunter2 twice: hunter2"),
            "typed <secret>password</secret> twice: <secret>password</secret>"
        );
        assert_eq!(secrets.fill("<secret>password</secret>!"), "hunter2!");
        let mut value = json!({"input_text": {"index": 2, "text": "<secret>password</secret>"}});
        secrets.fill_json(&mut value);
        assert_eq!(value["input_text"]["text"], "hunter2");
        secrets.mask_json(&mut value);
        assert_eq!(value["input_text"]["text"], "<secret>password</secret>");
        assert!(!format!("{secrets:?}").contains("hunter2"));
    }
}
