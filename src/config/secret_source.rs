//! Where a secret's value is read from (`env:VAR`, `file:PATH`, a
//! `totp:` seed), the sites it may be typed on, and reading it. A config
//! names sources only, so printing a config cannot leak a value.

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

/// A secret as configured: where its value is and the sites it belongs to.
/// Written short (`name: env:VAR`, no sites of its own) or long
/// (`name: {from: env:VAR, domains: ["https://admin.example.com"]}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretSpec {
    /// Where the value is read from.
    pub from: SecretSource,
    /// The sites (allowed-domain patterns) it may be typed on; empty: the
    /// session's allowed domains, or anywhere when there are none.
    pub domains: Vec<String>,
}

impl From<SecretSource> for SecretSpec {
    fn from(from: SecretSource) -> Self {
        SecretSpec {
            from,
            domains: Vec::new(),
        }
    }
}

impl Serialize for SecretSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        if self.domains.is_empty() {
            return self.from.serialize(serializer);
        }
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("from", &self.from)?;
        map.serialize_entry("domains", &self.domains)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for SecretSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Spec;
        impl<'de> serde::de::Visitor<'de> for Spec {
            type Value = SecretSpec;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("env:VARIABLE, file:PATH, or {from: env:VARIABLE, domains: [sites]}")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<SecretSpec, E> {
                text.parse::<SecretSource>()
                    .map(SecretSpec::from)
                    .map_err(E::custom)
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<SecretSpec, A::Error> {
                use serde::de::Error;
                let (mut from, mut domains) = (None, None);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "from" => from = Some(map.next_value::<SecretSource>()?),
                        "domains" => {
                            let sites: Vec<String> = map.next_value()?;
                            if let Some(bad) = sites.iter().find(|s| s.trim().is_empty()) {
                                return Err(A::Error::custom(format!(
                                    "domains: {bad:?} is empty; write a site such as https://admin.example.com or *.example.com"
                                )));
                            }
                            domains = Some(sites);
                        }
                        other => return Err(A::Error::unknown_field(other, &["from", "domains"])),
                    }
                }
                let from = from.ok_or_else(|| A::Error::missing_field("from"))?;
                Ok(SecretSpec {
                    from,
                    domains: domains.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_any(Spec)
    }
}
