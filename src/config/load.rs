//! Loading: the built-in defaults, the user file, the project file and the
//! environment, merged in that order, each file checked on its own first.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_yaml::{Mapping, Value};

use super::check::parse_file;
use super::error::ConfigError;
use super::origin::Source;
use super::overrides::Overrides;
use super::settings::Config;
use crate::defaults::DEFAULTS_YAML;

/// The environment variable naming the Chromium executable (the
/// environment layer's `browser.executable`). The browser module reads no
/// environment: what it launches comes from the configuration.
pub const CHROME_VAR: &str = "WEBAGENT_CHROME";

/// The project file looked up in the working directory.
pub const PROJECT_FILE: &str = "webagent.yaml";

/// What to read: the files and the environment. [`ConfigSources::standard`]
/// gives the usual places; tests build their own.
#[derive(Debug, Clone, Default)]
pub struct ConfigSources {
    /// The user file; skipped when it does not exist.
    pub user_file: Option<PathBuf>,
    /// The project file; skipped when it does not exist, unless
    /// `project_required`.
    pub project_file: Option<PathBuf>,
    /// The project file was named explicitly (`--config`), so it must exist.
    pub project_required: bool,
    /// Environment variables.
    pub env: BTreeMap<String, String>,
}

impl ConfigSources {
    /// The usual places: the user file under `$XDG_CONFIG_HOME` (or
    /// `~/.config`), `explicit` (`--config`), else `WEBAGENT_CONFIG`, else
    /// `./webagent.yaml`, and the process environment. A file named
    /// explicitly must exist.
    pub fn standard(explicit: Option<&Path>) -> Self {
        let env: BTreeMap<String, String> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        let non_empty = |name: &str| env.get(name).filter(|v| !v.is_empty()).cloned();
        let user_dir = non_empty("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| non_empty("HOME").map(|home| Path::new(&home).join(".config")));
        // Every command honours the variable, including those without a
        // --config flag.
        let explicit = explicit
            .map(Path::to_path_buf)
            .or_else(|| non_empty("WEBAGENT_CONFIG").map(PathBuf::from));
        ConfigSources {
            user_file: user_dir.map(|dir| dir.join("webagent").join("config.yaml")),
            project_required: explicit.is_some(),
            project_file: Some(explicit.unwrap_or_else(|| PathBuf::from(PROJECT_FILE))),
            env,
        }
    }
}

impl Config {
    /// Loads every layer (see the module docs), `flags` last, and checks
    /// the result once, so a flag can correct a file's bad value.
    pub fn load(sources: &ConfigSources, flags: &Overrides) -> Result<Config, ConfigError> {
        let defaults: Value =
            serde_yaml::from_str(DEFAULTS_YAML).map_err(|e| ConfigError::InvalidFile {
                file: PathBuf::from("<built-in defaults>"),
                message: e.to_string(),
            })?;
        let mut merged = defaults;
        let mut origins = BTreeMap::new();
        let mut read = Vec::new();
        let files = [
            (sources.user_file.as_ref(), false, true),
            (
                sources.project_file.as_ref(),
                sources.project_required,
                false,
            ),
        ];
        for (path, required, is_user) in files {
            let Some(path) = path else { continue };
            let text = match crate::yaml::read_text(path) {
                Ok(text) => text,
                Err(crate::yaml::ReadError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound && !required =>
                {
                    continue
                }
                Err(error) => return Err(ConfigError::from_reading(error)),
            };
            let mut patch = parse_file(path, &text)?;
            read.push(path.clone());
            let source = if is_user {
                Source::UserFile(path.clone())
            } else {
                Source::ProjectFile(path.clone())
            };
            anchor_relative_secret_paths(&mut patch, path.parent().unwrap_or(Path::new(".")));
            record_leaves(&patch, "", &source, &mut origins);
            merge(&mut merged, patch);
        }
        let env_keys: [(&str, &[&str]); 3] = [
            ("OPENAI_BASE_URL", &["llm", "base_url"]),
            ("WEBAGENT_MODEL", &["llm", "model"]),
            (CHROME_VAR, &["browser", "executable"]),
        ];
        for (variable, key) in env_keys {
            let Some(value) = sources.env.get(variable).map(|v| v.trim()) else {
                continue;
            };
            if value.is_empty() {
                continue;
            }
            set_path(&mut merged, key, Value::String(value.to_string()));
            origins.insert(key.join("."), Source::Environment(variable.to_string()));
        }
        let mut config: Config =
            serde_yaml::from_value(merged).map_err(|e| ConfigError::Merged {
                setting: "the environment (OPENAI_BASE_URL, WEBAGENT_MODEL, WEBAGENT_CHROME):"
                    .into(),
                message: e.to_string(),
            })?;
        config.origins = origins;
        config.files = read;
        config.apply(flags)?;
        Ok(config)
    }
}

/// Merges `patch` into `base`: mappings key by key, anything else replaced.
fn merge(base: &mut Value, patch: Value) {
    match (base, patch) {
        (Value::Mapping(base), Value::Mapping(patch)) => {
            for (key, value) in patch {
                match base.get_mut(&key) {
                    Some(existing) if existing.is_mapping() && value.is_mapping() => {
                        merge(existing, value)
                    }
                    // `section:` with nothing under it changes nothing.
                    Some(existing) if existing.is_mapping() && value.is_null() => {}
                    _ => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, patch) => *base = patch,
    }
}

/// Sets the value at a key path, creating mappings on the way.
fn set_path(root: &mut Value, path: &[&str], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = root;
    for key in parents {
        if !node.is_mapping() {
            *node = Value::Mapping(Mapping::new());
        }
        let Value::Mapping(map) = node else { return };
        node = map
            .entry(Value::String(key.to_string()))
            .or_insert_with(|| Value::Mapping(Mapping::new()));
    }
    if let Value::Mapping(map) = node {
        map.insert(Value::String(last.to_string()), value);
    }
}

/// Records the origin of every leaf a file sets (a list counts as one
/// leaf).
fn record_leaves(value: &Value, prefix: &str, source: &Source, out: &mut BTreeMap<String, Source>) {
    if let Value::Mapping(map) = value {
        for (key, child) in map {
            let key = match key {
                Value::String(k) => k.clone(),
                other => serde_yaml::to_string(other)
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
            };
            let path = if prefix.is_empty() {
                key
            } else {
                format!("{prefix}.{key}")
            };
            if child.is_mapping() {
                record_leaves(child, &path, source, out);
            } else if !(child.is_null() && prefix.is_empty()) {
                out.insert(path, source.clone());
            }
        }
    }
}

/// Relative `file:` secrets and `secrets_file` are read next to the config
/// file that names them, not wherever the command happens to run.
fn anchor_relative_secret_paths(patch: &mut Value, dir: &Path) {
    let Value::Mapping(root) = patch else { return };
    if let Some(Value::Mapping(secrets)) = root.get_mut("secrets") {
        for (_, reference) in secrets.iter_mut() {
            // The long form keeps its source under `from`.
            let reference = match reference {
                Value::Mapping(long) => match long.get_mut("from") {
                    Some(from) => from,
                    None => continue,
                },
                short => short,
            };
            if let Value::String(text) = reference {
                let (prefix, rest) = match text.trim().strip_prefix("totp:") {
                    Some(rest) => ("totp:", rest.trim().to_string()),
                    None => ("", text.trim().to_string()),
                };
                if let Some(path) = rest.strip_prefix("file:") {
                    let path = Path::new(path.trim());
                    if path.is_relative() {
                        *text = format!("{prefix}file:{}", dir.join(path).display());
                    }
                }
            }
        }
    }
    if let Some(Value::String(file)) = root.get_mut("secrets_file") {
        let path = Path::new(file.as_str());
        if path.is_relative() {
            *file = dir.join(path).display().to_string();
        }
    }
}
