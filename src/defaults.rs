//! The built-in defaults: one file, `config/defaults.yaml`, compiled into
//! the binary. The configuration layers merge over it, and the parts that
//! have their own defaults without a configuration (the model client, the
//! agent, the pictures) read theirs from it too, so a default is written
//! once.

use std::sync::OnceLock;

use serde_yaml::Value;

/// The file itself.
pub const DEFAULTS_YAML: &str = include_str!("config/defaults.yaml");

fn parsed() -> &'static Value {
    static PARSED: OnceLock<Value> = OnceLock::new();
    PARSED.get_or_init(|| {
        // ok: the file is part of the source and a unit test parses it, so
        // a broken one never ships.
        serde_yaml::from_str(DEFAULTS_YAML).unwrap_or(Value::Null)
    })
}

fn at(path: &[&str]) -> &'static Value {
    path.iter().fold(parsed(), |value, key| &value[*key])
}

/// The number at `path` (`["llm", "timeouts", "connect"]`).
pub fn number(path: &[&str]) -> u64 {
    at(path).as_u64().unwrap_or(0)
}

/// The text at `path`.
pub fn text(path: &[&str]) -> &'static str {
    at(path).as_str().unwrap_or("")
}

/// The flag at `path`.
pub fn flag(path: &[&str]) -> bool {
    at(path).as_bool().unwrap_or(false)
}

/// The number at `path`, or `None` where the file says `null`.
pub fn optional_number(path: &[&str]) -> Option<u64> {
    at(path).as_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_parse_and_every_read_key_is_there() {
        assert!(serde_yaml::from_str::<Value>(DEFAULTS_YAML).is_ok());
        for path in [
            &["llm", "timeouts", "connect"][..],
            &["llm", "timeouts", "request"],
            &["llm", "timeouts", "idle"],
            &["llm", "timeouts", "total"],
            &["llm", "max_retries"],
            &["llm", "max_output_tokens"],
            &["llm", "image_width"],
            &["agent", "max_steps"],
            &["agent", "max_invalid_answers"],
            &["agent", "max_actions_per_step"],
        ] {
            assert!(number(path) > 0, "{path:?}");
        }
        assert!(text(&["llm", "base_url"]).starts_with("https://"));
        assert!(!text(&["llm", "model"]).is_empty());
        assert!(flag(&["llm", "streaming"]));
        assert_eq!(optional_number(&["llm", "context_window"]), None);
    }
}
