//! Where a secret's value is read from (`env:VAR`, `file:PATH`, a
//! `totp:` seed), and reading it. A config names sources only, so printing
//! a config cannot leak a value.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::error::ConfigError;
use super::origin::Source;
use crate::secrets::SecretValue;

/// Where a secret's value is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretSource {
    /// An environment variable.
    Env(String),
    /// A file's contents (a trailing newline is dropped).
    File(PathBuf),
    /// A one-time code (`totp:env:VAR`, `totp:file:PATH`): the source holds
    /// the base32 seed, and the secret fills with the code of the moment
    /// (RFC 6238).
    Totp(Box<SecretSource>),
}

impl fmt::Display for SecretSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SecretSource::Env(name) => write!(f, "env:{name}"),
            SecretSource::File(path) => write!(f, "file:{}", path.display()),
            SecretSource::Totp(seed) => write!(f, "totp:{seed}"),
        }
    }
}

impl std::str::FromStr for SecretSource {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if let Some(seed) = text.strip_prefix("totp:") {
            return match seed.parse::<SecretSource>() {
                Ok(SecretSource::Totp(_)) => Err(format!("`{text}`: totp: is written once")),
                Ok(source) => Ok(SecretSource::Totp(Box::new(source))),
                Err(_) => Err(format!(
                    "`{text}`: a one-time code's seed is written as totp:env:VARIABLE or totp:file:PATH"
                )),
            };
        }
        if let Some(name) = text.strip_prefix("env:") {
            let name = name.trim();
            if name.is_empty() || name.contains('=') {
                return Err(format!("`{text}` names no environment variable"));
            }
            return Ok(SecretSource::Env(name.to_string()));
        }
        if let Some(path) = text.strip_prefix("file:") {
            if path.trim().is_empty() {
                return Err(format!("`{text}` names no file"));
            }
            return Ok(SecretSource::File(PathBuf::from(path.trim())));
        }
        // The value itself is refused: config files get committed and
        // printed, and a secret written in one would leak both ways.
        Err("a secret is written as env:VARIABLE or file:PATH (totp:env:VARIABLE or totp:file:PATH for a one-time code's seed), never as the value itself".into())
    }
}

impl Serialize for SecretSource {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SecretSource {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl SecretSource {
    /// The value this source holds for the secret `name` (a `totp:`
    /// source: its seed), read from `env` or the file; `origin` is the
    /// layer that named it, for the error.
    pub(super) fn read(
        &self,
        name: &str,
        origin: &Source,
        env: &BTreeMap<String, String>,
    ) -> Result<SecretValue, ConfigError> {
        match self {
            SecretSource::Env(variable) => env
                .get(variable)
                .filter(|v| !v.is_empty())
                .map(|v| SecretValue::new(v.as_str()))
                .ok_or_else(|| ConfigError::SecretVariableMissing {
                    name: name.to_string(),
                    variable: variable.clone(),
                    origin: origin.to_string(),
                }),
            SecretSource::File(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| ConfigError::SecretFile {
                    name: name.to_string(),
                    path: path.clone(),
                    problem: e.to_string(),
                })?;
                // Editors end files with a newline that is not part of
                // the password.
                let value = text.strip_suffix('\n').unwrap_or(&text);
                let value = value.strip_suffix('\r').unwrap_or(value);
                if value.is_empty() {
                    return Err(ConfigError::SecretFile {
                        name: name.to_string(),
                        path: path.clone(),
                        problem: "the file is empty".into(),
                    });
                }
                Ok(SecretValue::new(value))
            }
            SecretSource::Totp(seed) => seed.read(name, origin, env),
        }
    }
}
