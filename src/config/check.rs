//! Checking: each file against the schema on its own, so an unknown key or
//! a wrong type is reported at its file, line and column; then the merged
//! values serde cannot check (limits, patterns), naming where each came
//! from.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};
use serde_yaml::{Mapping, Value};

use super::error::ConfigError;
use super::origin::Source;
use super::secret_source::SecretSpec;
use super::settings::{deserialize_approval, Config, ListingMode};
use crate::vision::VisionMode;

/// Parses one config file, checking it against the schema on its own so an
/// error points into this file.
pub(super) fn parse_file(path: &Path, text: &str) -> Result<Value, ConfigError> {
    let located = |e: serde_yaml::Error| {
        let problem = crate::yaml::YamlError::parsing_text(path, &e, text, (0, 0));
        if problem.has_position() {
            ConfigError::Invalid(problem)
        } else {
            ConfigError::InvalidFile {
                file: problem.file,
                message: problem.message,
            }
        }
    };
    let value: Value = serde_yaml::from_str(text).map_err(located)?;
    let value = match value {
        // An empty file (or only comments) changes nothing.
        Value::Null => Value::Mapping(Mapping::new()),
        Value::Mapping(_) => value,
        _ => {
            return Err(ConfigError::InvalidFile {
                file: path.to_path_buf(),
                message: "a config file is a mapping of keys (llm:, browser:, …)".into(),
            })
        }
    };
    // Deserializing the file alone against a schema whose every field has a
    // default reports unknown keys and wrong types at their position.
    serde_yaml::from_str::<PatchCheck>(text).map_err(located)?;
    Ok(value)
}

/// The schema with every field optional, used only to check a file.
/// Absent keys keep the value below; a null is accepted only where the
/// setting itself may be empty (`temperature`, `executable`, …).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // read by serde only
struct PatchCheck {
    #[serde(default)]
    llm: Option<LlmSettingsCheck>,
    #[serde(default)]
    browser: Option<BrowserSettingsCheck>,
    #[serde(default)]
    agent: Option<AgentSettingsCheck>,
    #[serde(default)]
    paths: Option<PathSettingsCheck>,
    #[serde(default)]
    downloads: Option<DownloadSettingsCheck>,
    #[serde(default)]
    uploads: Option<UploadSettingsCheck>,
    #[serde(default)]
    session: Option<SessionSettingsCheck>,
    #[serde(default)]
    allowed_domains: Given<Vec<String>>,
    #[serde(default)]
    secrets: Option<BTreeMap<String, SecretSpec>>,
    #[serde(default)]
    secrets_file: Option<PathBuf>,
    #[serde(default)]
    allow_javascript: Given<bool>,
}

/// A key that may be left out but, when written, needs a value: unlike
/// `Option`, a null is a type error at its position.
#[derive(Default)]
#[allow(dead_code)] // read by serde only
enum Given<T> {
    #[default]
    Absent,
    Present(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Given<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(Given::Present)
    }
}

macro_rules! check_struct {
    ($name:ident { $($field:ident : $ty:ty),* $(,)? }) => {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)] // read by serde only
        struct $name {
            $(#[serde(default)] $field: $ty,)*
        }
    };
}

check_struct!(LlmSettingsCheck {
    base_url: Given<String>,
    api_key_env: Given<String>,
    model: Given<String>,
    temperature: Option<f32>,
    timeouts: Option<TimeoutsCheck>,
    max_retries: Given<u32>,
    streaming: Given<bool>,
    max_output_tokens: Option<u32>,
    context_window: Option<u32>,
    vision: Given<VisionMode>,
    image_width: Given<ImageWidthCheck>,
});
check_struct!(SessionSettingsCheck {
    idle_timeout: Given<u64>,
});
check_struct!(TimeoutsCheck {
    connect: Given<u64>,
    request: Given<u64>,
    idle: Given<u64>,
    total: Given<u64>,
});
check_struct!(BrowserSettingsCheck {
    executable: Option<PathBuf>,
    headless: Given<bool>,
    connect: Option<String>,
    connect_timeout: Given<u64>,
    reconnect_window: Given<u64>,
    window: Option<WindowCheck>,
    extra_args: Given<Vec<String>>,
    profile: Option<PathBuf>,
    state: Option<PathBuf>,
});
check_struct!(WindowCheck {
    width: Given<u32>,
    height: Given<u32>,
});
check_struct!(AgentSettingsCheck {
    max_steps: Given<usize>,
    approve: Given<ApprovalCheck>,
    language: Given<String>,
    listing: Given<ListingMode>,
    max_invalid_answers: Given<usize>,
    max_actions_per_step: Given<usize>,
    heal_budget: Given<usize>,
    cache: Option<PathBuf>,
});
check_struct!(PathSettingsCheck {
    sitemaps: Given<Vec<PathBuf>>,
    recipes: Given<PathBuf>,
    themes: Given<PathBuf>,
    sessions: Given<PathBuf>,
    downloads: Given<PathBuf>,
});
check_struct!(DownloadSettingsCheck {
    max_bytes: Given<u64>,
    commit: Given<bool>,
    follow_new_tabs: Given<bool>,
});

check_struct!(UploadSettingsCheck {
    allowed_paths: Given<Vec<PathBuf>>,
});

/// An image width, checked against its range where it is written.
struct ImageWidthCheck;

impl<'de> Deserialize<'de> for ImageWidthCheck {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Checked inside the visit, so the error carries the value's own
        // position rather than its section's.
        struct Width;
        impl serde::de::Visitor<'_> for Width {
            type Value = ImageWidthCheck;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "an image width in pixels, {}", image_width_problem())
            }

            fn visit_u64<E: serde::de::Error>(self, width: u64) -> Result<Self::Value, E> {
                let fits = u32::try_from(width)
                    .is_ok_and(|w| crate::vision::IMAGE_WIDTH_RANGE.contains(&w));
                if fits {
                    Ok(ImageWidthCheck)
                } else {
                    Err(E::custom(format!(
                        "image_width {width}: {}",
                        image_width_problem()
                    )))
                }
            }

            fn visit_i64<E: serde::de::Error>(self, width: i64) -> Result<Self::Value, E> {
                match u64::try_from(width) {
                    Ok(width) => self.visit_u64(width),
                    Err(_) => Err(E::custom(format!(
                        "image_width {width}: {}",
                        image_width_problem()
                    ))),
                }
            }
        }
        d.deserialize_u64(Width)
    }
}

fn image_width_problem() -> String {
    format!(
        "must be between {} and {} pixels",
        crate::vision::IMAGE_WIDTH_RANGE.start(),
        crate::vision::IMAGE_WIDTH_RANGE.end()
    )
}

/// An approval mode word, checked where it is written.
struct ApprovalCheck;

impl<'de> Deserialize<'de> for ApprovalCheck {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize_approval(d).map(|_| ApprovalCheck)
    }
}

impl Config {
    /// Checks values serde cannot: limits that must be positive.
    pub(super) fn check(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, message: &str| ConfigError::Merged {
            setting: match self.origin(key) {
                Source::Flag(flag) => flag,
                origin => format!("{key} (from {origin})"),
            },
            message: message.to_string(),
        };
        if self.agent.max_steps == 0 {
            return Err(bad("agent.max_steps", "must be at least 1"));
        }
        if self.agent.max_invalid_answers == 0 {
            return Err(bad("agent.max_invalid_answers", "must be at least 1"));
        }
        if self.agent.max_actions_per_step == 0 {
            return Err(bad("agent.max_actions_per_step", "must be at least 1"));
        }
        if self.agent.heal_budget == 0 {
            return Err(bad("agent.heal_budget", "must be at least 1"));
        }
        if self.session.idle_timeout == 0 {
            return Err(bad("session.idle_timeout", "must be at least 1 (seconds)"));
        }
        if self.llm.max_output_tokens == Some(0) {
            return Err(bad(
                "llm.max_output_tokens",
                "must be at least 1 (or null for no bound)",
            ));
        }
        if let Some(window) = self.llm.context_window {
            // Below this the fixed part of the prompt alone does not fit.
            if window < 2048 {
                return Err(bad(
                    "llm.context_window",
                    "must be at least 2048 tokens (or null when unknown)",
                ));
            }
        }
        if !crate::vision::IMAGE_WIDTH_RANGE.contains(&self.llm.image_width) {
            return Err(bad("llm.image_width", &image_width_problem()));
        }
        if self.browser.window.width == 0 || self.browser.window.height == 0 {
            return Err(bad("browser.window", "needs a width and a height above 0"));
        }
        if self.llm.model.trim().is_empty() {
            return Err(bad("llm.model", "is empty; name the model"));
        }
        // A bad pattern stops the command here, naming where it was set,
        // rather than when the browser starts.
        if let Err(error) = crate::browser::DomainPolicy::new(&self.allowed_domains) {
            return Err(bad(
                "allowed_domains",
                &format!("has a pattern that does not work: {error}"),
            ));
        }
        if let Some(t) = self.llm.temperature {
            if !(0.0..=2.0).contains(&t) {
                return Err(bad("llm.temperature", "must be between 0 and 2"));
            }
        }
        Ok(())
    }
}
