//! Configuration: one [`Config`] for every command.
//!
//! Layers are merged in this order, later winning: the built-in defaults
//! (`defaults.yaml`, compiled in), the user file
//! (`$XDG_CONFIG_HOME/webagent/config.yaml`, else
//! `~/.config/webagent/config.yaml`), the project file (`./webagent.yaml`, or
//! the file given with `--config` or `WEBAGENT_CONFIG`), the environment (`OPENAI_BASE_URL`,
//! `WEBAGENT_MODEL`, `WEBAGENT_CHROME`; the API key is read from the variable
//! `llm.api_key_env` names, `OPENAI_API_KEY` by default), then command-line
//! flags ([`Overrides`]).
//!
//! A file is a partial patch: it names only the keys it changes, and maps
//! merge key by key (so a project file can add one secret to the user's).
//! Each file is checked on its own before it is merged, so an unknown key
//! or a wrong type is reported with that file's name, line and column.
//!
//! Secrets are named in config as references (`env:VAR`, `file:PATH`, or
//! every entry of a dotenv file); their values are read only by
//! [`Config::resolve_secrets`] and never stored in the config, so printing
//! a config cannot leak one.

mod browser_flags;
mod dotenv;

pub use browser_flags::BrowserOpts;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_yaml::{Mapping, Value};

use crate::browser::{LaunchOptions, ObserveOptions};
use crate::environment::ApprovalMode;
use crate::llm::LlmConfig;
use crate::secrets::{SecretValue, Secrets};
use crate::vision::VisionMode;

/// The built-in defaults; every key a config file may set appears here.
pub use crate::defaults::DEFAULTS_YAML;

/// The environment variable naming the Chromium executable (the
/// environment layer's `browser.executable`). The browser module reads no
/// environment: what it launches comes from the configuration.
pub const CHROME_VAR: &str = "WEBAGENT_CHROME";

/// The project file looked up in the working directory.
pub const PROJECT_FILE: &str = "webagent.yaml";

/// Why a configuration could not be loaded or used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file that must be read (one given with `--config`, a secret's
    /// file) could not be.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A config file is not valid YAML, has an unknown key, or a value of
    /// the wrong type.
    #[error(transparent)]
    Invalid(crate::yaml::YamlError),
    /// A config file is wrong in a way YAML gives no position for.
    #[error("{}: {message}", file.display())]
    InvalidFile {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The merged configuration is not valid (a flag or an environment
    /// variable set a bad value).
    #[error("{setting} {message}")]
    Merged {
        /// The setting and where its value came from: the flag itself
        /// (`--max-steps`), or `agent.max_steps (from project file …)`.
        setting: String,
        /// What is wrong.
        message: String,
    },
    /// A secret refers to an environment variable that is not set.
    #[error("secret {name}: the environment variable {variable} is not set or empty (named in {origin})")]
    SecretVariableMissing {
        /// The secret's name.
        name: String,
        /// The variable it reads.
        variable: String,
        /// The config layer that named it.
        origin: String,
    },
    /// A secret's file could not be read or is empty.
    #[error("secret {name}: {}: {problem}", path.display())]
    SecretFile {
        /// The secret's name.
        name: String,
        /// The file.
        path: PathBuf,
        /// What went wrong.
        problem: String,
    },
    /// A `totp:` secret's seed is not base32.
    #[error("secret {name} ({origin}): {problem}")]
    SecretSeed {
        /// The secret's name.
        name: String,
        /// The config layer that named it.
        origin: String,
        /// What is wrong with the seed (never the seed itself).
        problem: String,
    },
    /// A line of the secrets (dotenv) file is not `NAME=value`.
    #[error("{}:{line}: {message}", file.display())]
    SecretsFileSyntax {
        /// The dotenv file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// Where a setting's value came from, for `webagent config`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The built-in defaults.
    Default,
    /// The user's config file.
    UserFile(PathBuf),
    /// The project's config file (or the one given with `--config`).
    ProjectFile(PathBuf),
    /// An environment variable.
    Environment(String),
    /// A command-line flag.
    Flag(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("built-in default"),
            Source::UserFile(path) => write!(f, "user file {}", path.display()),
            Source::ProjectFile(path) => write!(f, "project file {}", path.display()),
            Source::Environment(name) => write!(f, "environment {name}"),
            Source::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

/// Settings of the model endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmSettings {
    /// The API root of an OpenAI-compatible server.
    pub base_url: String,
    /// The environment variable holding the API key (keys stay out of
    /// files).
    pub api_key_env: String,
    /// The model name.
    pub model: String,
    /// Sampling temperature; `None` leaves the server's default.
    pub temperature: Option<f32>,
    /// Time limits in seconds.
    pub timeouts: LlmTimeouts,
    /// How often a failed request is sent again.
    pub max_retries: u32,
    /// Ask for streamed answers.
    pub streaming: bool,
    /// The most tokens one answer may have (sent as `max_tokens`);
    /// `None` sends no bound.
    pub max_output_tokens: Option<u32>,
    /// The server's context size in tokens; prompts are cut to fit it.
    /// `None` when unknown (nothing is cut).
    pub context_window: Option<u32>,
    /// When each step carries a screenshot of the page.
    pub vision: VisionMode,
    /// The screenshot's width in pixels.
    pub image_width: u32,
}

/// The model call's time limits, in seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmTimeouts {
    /// Establishing the connection.
    pub connect: u64,
    /// Until a streamed answer begins (its first token).
    pub request: u64,
    /// The longest silence inside a streamed answer.
    pub idle: u64,
    /// The whole answer, streamed or not (the only limit on a
    /// non-streamed one).
    pub total: u64,
}

/// Settings of the browser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrowserSettings {
    /// The Chromium executable; `None` searches the usual places.
    pub executable: Option<PathBuf>,
    /// Run without a window.
    pub headless: bool,
    /// Attach to this DevTools address instead of launching.
    pub connect: Option<String>,
    /// Seconds attaching to `connect` may take (a pool's queue wait
    /// included).
    pub connect_timeout: u64,
    /// Seconds during which a lost `connect` browser is attached again.
    pub reconnect_window: u64,
    /// The window (and headless viewport) size.
    pub window: WindowSize,
    /// More Chromium flags.
    pub extra_args: Vec<String>,
    /// A persistent user-data directory (sign-ins last); `None` starts
    /// each browser with a fresh temporary profile.
    pub profile: Option<PathBuf>,
    /// A state file (cookies and local storage) loaded at every start;
    /// `webagent state save` and the workbench's `:state save` write it.
    pub state: Option<PathBuf>,
}

/// A window size in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowSize {
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// How much of a page the model is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ListingMode {
    /// The visible part plus a margin.
    Viewport,
    /// The whole page.
    FullPage,
}

/// Settings of the agent loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSettings {
    /// The step limit of a run.
    pub max_steps: usize,
    /// When a person is asked before an action.
    #[serde(
        serialize_with = "serialize_approval",
        deserialize_with = "deserialize_approval"
    )]
    pub approve: ApprovalMode,
    /// The language the agent writes its notes in (a code like `en`).
    pub language: String,
    /// How much of the page is listed.
    pub listing: ListingMode,
    /// Answers in a row without a usable action after which a run ends.
    pub max_invalid_answers: usize,
    /// How many actions one answer may list (1: one action per step).
    pub max_actions_per_step: usize,
    /// Model calls the agent may make to heal one recipe step that no
    /// longer runs as recorded.
    pub heal_budget: usize,
    /// The task cache's directory: `run` replays a task's stored recipe
    /// instead of asking the model again (`run --cache`). `None`: off.
    pub cache: Option<PathBuf>,
}

/// Where files live.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathSettings {
    /// Sitemap files or directories (missing ones are skipped).
    pub sitemaps: Vec<PathBuf>,
    /// The recipes directory.
    pub recipes: PathBuf,
    /// The themes directory.
    pub themes: PathBuf,
    /// Where session traces are written.
    pub sessions: PathBuf,
    /// Where downloads land.
    pub downloads: PathBuf,
}

/// What happens to downloads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DownloadSettings {
    /// The largest download kept, in bytes; a larger one is cancelled.
    pub max_bytes: u64,
    /// A click that downloads counts as a `commit` for approval.
    pub commit: bool,
    /// A click that opens a tab switches the agent to it.
    pub follow_new_tabs: bool,
}

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

fn serialize_approval<S: Serializer>(mode: &ApprovalMode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(mode.as_str())
}

fn deserialize_approval<'de, D: Deserializer<'de>>(d: D) -> Result<ApprovalMode, D::Error> {
    let text = String::deserialize(d)?;
    text.parse().map_err(serde::de::Error::custom)
}

/// The merged configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The model endpoint.
    pub llm: LlmSettings,
    /// The browser.
    pub browser: BrowserSettings,
    /// The agent loop.
    pub agent: AgentSettings,
    /// Where files live.
    pub paths: PathSettings,
    /// Downloads and tabs a click opens.
    pub downloads: DownloadSettings,
    /// Host patterns the browser may visit (`*.example.com`); empty allows
    /// every host.
    pub allowed_domains: Vec<String>,
    /// Secrets by name, as references to where the value is.
    pub secrets: BTreeMap<String, SecretSource>,
    /// A dotenv file whose every entry is a secret.
    pub secrets_file: Option<PathBuf>,
    /// Let the model run JavaScript in the page.
    pub allow_javascript: bool,
    /// Where each non-default value came from, by dotted key.
    #[serde(skip)]
    origins: BTreeMap<String, Source>,
}

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

/// Values given on the command line; `None` (or `false`, or empty) leaves
/// the configured value.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--model`.
    pub model: Option<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--max-steps`.
    pub max_steps: Option<usize>,
    /// `--approve`.
    pub approve: Option<ApprovalMode>,
    /// `--chrome`.
    pub chrome: Option<PathBuf>,
    /// `--headed`.
    pub headed: bool,
    /// `--connect`.
    pub connect: Option<String>,
    /// `--connect-timeout`.
    pub connect_timeout: Option<u64>,
    /// `--profile`.
    pub profile: Option<PathBuf>,
    /// `--state`.
    pub state: Option<PathBuf>,
    /// `--allow-javascript`.
    pub allow_javascript: bool,
    /// `--sessions-dir`.
    pub sessions_dir: Option<PathBuf>,
    /// `--sitemap` (replaces the configured list).
    pub sitemaps: Vec<PathBuf>,
    /// `--allow-domain` (replaces the configured list).
    pub allowed_domains: Vec<String>,
    /// `--secrets-file`.
    pub secrets_file: Option<PathBuf>,
    /// `--vision`.
    pub vision: Option<VisionMode>,
}

impl Config {
    /// The built-in defaults alone.
    pub fn builtin() -> Config {
        // ok: defaults.yaml is part of the source and a unit test parses it,
        // so a broken one never ships.
        serde_yaml::from_str(DEFAULTS_YAML).expect("the built-in defaults.yaml is valid")
    }

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
            let text = match std::fs::read_to_string(path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => continue,
                Err(source) => {
                    return Err(ConfigError::Read {
                        path: path.clone(),
                        source,
                    })
                }
            };
            let mut patch = parse_file(path, &text)?;
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
        config.apply(flags)?;
        Ok(config)
    }

    /// Applies command-line flags over the loaded layers.
    pub fn apply(&mut self, flags: &Overrides) -> Result<(), ConfigError> {
        let mut set = |key: &str, flag: &str| {
            self.origins
                .insert(key.to_string(), Source::Flag(flag.to_string()));
        };
        if flags.model.is_some() {
            set("llm.model", "--model");
        }
        if flags.base_url.is_some() {
            set("llm.base_url", "--base-url");
        }
        if flags.max_steps.is_some() {
            set("agent.max_steps", "--max-steps");
        }
        if flags.approve.is_some() {
            set("agent.approve", "--approve");
        }
        if flags.chrome.is_some() {
            set("browser.executable", "--chrome");
        }
        if flags.headed {
            set("browser.headless", "--headed");
        }
        if flags.connect.is_some() {
            set("browser.connect", "--connect");
        }
        if flags.connect_timeout.is_some() {
            set("browser.connect_timeout", "--connect-timeout");
        }
        if flags.profile.is_some() {
            set("browser.profile", "--profile");
        }
        if flags.state.is_some() {
            set("browser.state", "--state");
        }
        if flags.allow_javascript {
            set("allow_javascript", "--allow-javascript");
        }
        if flags.sessions_dir.is_some() {
            set("paths.sessions", "--sessions-dir");
        }
        if !flags.sitemaps.is_empty() {
            set("paths.sitemaps", "--sitemap");
        }
        if !flags.allowed_domains.is_empty() {
            set("allowed_domains", "--allow-domain");
        }
        if flags.secrets_file.is_some() {
            set("secrets_file", "--secrets-file");
        }
        if flags.vision.is_some() {
            set("llm.vision", "--vision");
        }
        if let Some(model) = &flags.model {
            self.llm.model = model.clone();
        }
        if let Some(url) = &flags.base_url {
            self.llm.base_url = url.clone();
        }
        if let Some(steps) = flags.max_steps {
            self.agent.max_steps = steps;
        }
        if let Some(mode) = flags.approve {
            self.agent.approve = mode;
        }
        if let Some(chrome) = &flags.chrome {
            self.browser.executable = Some(chrome.clone());
        }
        if flags.headed {
            self.browser.headless = false;
        }
        if let Some(connect) = &flags.connect {
            self.browser.connect = Some(connect.clone());
        }
        if let Some(seconds) = flags.connect_timeout {
            self.browser.connect_timeout = seconds;
        }
        if let Some(dir) = &flags.profile {
            self.browser.profile = Some(dir.clone());
        }
        if let Some(file) = &flags.state {
            self.browser.state = Some(file.clone());
        }
        if flags.allow_javascript {
            self.allow_javascript = true;
        }
        if let Some(dir) = &flags.sessions_dir {
            self.paths.sessions = dir.clone();
        }
        if !flags.sitemaps.is_empty() {
            self.paths.sitemaps = flags.sitemaps.clone();
        }
        if !flags.allowed_domains.is_empty() {
            self.allowed_domains = flags.allowed_domains.clone();
        }
        if let Some(file) = &flags.secrets_file {
            self.secrets_file = Some(file.clone());
        }
        if let Some(mode) = flags.vision {
            self.llm.vision = mode;
        }
        self.check()
    }

    /// Where the value at a dotted key (`llm.model`, `secrets.pw`) came
    /// from.
    pub fn origin(&self, key: &str) -> Source {
        self.origins.get(key).cloned().unwrap_or(Source::Default)
    }

    /// Every key that is not a built-in default, with where it came from.
    pub fn origins(&self) -> impl Iterator<Item = (&str, &Source)> {
        self.origins.iter().map(|(k, s)| (k.as_str(), s))
    }

    /// Checks values serde cannot: limits that must be positive.
    fn check(&self) -> Result<(), ConfigError> {
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

    /// The API key, read from the variable `llm.api_key_env` names.
    pub fn api_key(&self, env: &BTreeMap<String, String>) -> Option<SecretValue> {
        env.get(&self.llm.api_key_env)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
            .map(SecretValue::from)
    }

    /// The LLM client's settings (the key read from `env`).
    pub fn llm_config(&self, env: &BTreeMap<String, String>) -> LlmConfig {
        let defaults = LlmConfig::default();
        LlmConfig {
            base_url: self.llm.base_url.clone(),
            api_key: self.api_key(env),
            model: self.llm.model.clone(),
            temperature: self.llm.temperature,
            connect_timeout: Duration::from_secs(self.llm.timeouts.connect.max(1)),
            request_timeout: Duration::from_secs(self.llm.timeouts.request.max(1)),
            idle_timeout: Duration::from_secs(self.llm.timeouts.idle.max(1)),
            total_timeout: Duration::from_secs(self.llm.timeouts.total.max(1)),
            max_output_tokens: self.llm.max_output_tokens,
            context_window: self.llm.context_window,
            retry: crate::llm::RetryPolicy {
                max_retries: self.llm.max_retries,
                ..defaults.retry
            },
            streaming: self.llm.streaming,
        }
    }

    /// How to get the browser.
    pub fn launch_options(&self) -> LaunchOptions {
        LaunchOptions {
            chrome: self.browser.executable.clone(),
            headed: !self.browser.headless,
            connect: self.browser.connect.clone(),
            connect_timeout: Duration::from_secs(self.browser.connect_timeout.max(1)),
            reconnect_window: Duration::from_secs(self.browser.reconnect_window),
            window: (self.browser.window.width, self.browser.window.height),
            extra_args: self.browser.extra_args.clone(),
            allowed_domains: self.allowed_domains.clone(),
            profile: self.browser.profile.clone(),
            state: self.browser.state.clone(),
            downloads: Some(crate::browser::DownloadOptions {
                // The browser resolves the folder itself: an attached one
                // runs elsewhere, so a relative path would be taken from
                // its working folder, not ours.
                dir: std::path::absolute(&self.paths.downloads)
                    .unwrap_or_else(|_| self.paths.downloads.clone()),
                max_bytes: self.downloads.max_bytes,
            }),
            ..LaunchOptions::default()
        }
    }

    /// How runs show the page to the model (`llm.vision`,
    /// `llm.image_width`).
    pub fn vision(&self) -> crate::agent::VisionSettings {
        crate::agent::VisionSettings {
            mode: self.llm.vision,
            width: self.llm.image_width,
        }
    }

    /// How pages are observed for the model.
    pub fn observe_options(&self) -> ObserveOptions {
        ObserveOptions {
            full_page: self.agent.listing == ListingMode::FullPage,
            ..ObserveOptions::default()
        }
    }

    /// The sitemap files and directories to load. The built-in default
    /// (`./sitemaps`) is dropped when it does not exist; paths a person
    /// configured are kept, so loading them reports what is missing.
    pub fn sitemap_paths(&self) -> Vec<PathBuf> {
        let configured = self.origin("paths.sitemaps") != Source::Default;
        self.paths
            .sitemaps
            .iter()
            .filter(|p| configured || p.exists())
            .cloned()
            .collect()
    }

    /// Reads every secret's value: the dotenv file's entries first, then
    /// the `secrets` map (which wins on a shared name). `env` is where
    /// `env:` references are looked up.
    pub fn resolve_secrets(&self, env: &BTreeMap<String, String>) -> Result<Secrets, ConfigError> {
        let mut secrets = Secrets::new();
        if let Some(file) = &self.secrets_file {
            for (name, value) in dotenv::read(file)? {
                secrets.insert(name, value);
            }
        }
        for (name, source) in &self.secrets {
            let (source, one_time) = match source {
                SecretSource::Totp(seed) => (seed.as_ref(), true),
                other => (other, false),
            };
            let value = self.secret_value(name, source, env)?;
            if one_time {
                secrets
                    .insert_totp(name.clone(), value)
                    .map_err(|e| ConfigError::SecretSeed {
                        name: name.clone(),
                        origin: self.origin(&format!("secrets.{name}")).to_string(),
                        problem: e.to_string(),
                    })?;
            } else {
                secrets.insert(name.clone(), value);
            }
        }
        Ok(secrets)
    }

    /// The text a secret's source holds.
    fn secret_value(
        &self,
        name: &str,
        source: &SecretSource,
        env: &BTreeMap<String, String>,
    ) -> Result<SecretValue, ConfigError> {
        Ok(match source {
            SecretSource::Env(variable) => env
                .get(variable)
                .filter(|v| !v.is_empty())
                .map(|v| SecretValue::new(v.as_str()))
                .ok_or_else(|| ConfigError::SecretVariableMissing {
                    name: name.to_string(),
                    variable: variable.clone(),
                    origin: self.origin(&format!("secrets.{name}")).to_string(),
                })?,
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
                SecretValue::new(value)
            }
            SecretSource::Totp(inner) => self.secret_value(name, inner, env)?,
        })
    }

    /// The configuration as YAML, followed by comments saying where each
    /// non-default value came from and whether the API key is set. Secret
    /// values and the key never appear: the config holds only references.
    pub fn to_annotated_yaml(&self, env: &BTreeMap<String, String>) -> String {
        let mut out = serde_yaml::to_string(self)
            .unwrap_or_else(|e| format!("# could not print the configuration: {e}\n"));
        out.push_str("\n# Where values came from (everything else is a built-in default):\n");
        if self.origins.is_empty() {
            out.push_str("#   (nothing: all defaults)\n");
        }
        for (key, source) in &self.origins {
            out.push_str(&format!("#   {key}: {source}\n"));
        }
        let key_state = match self.api_key(env) {
            Some(_) => "set (value hidden)",
            None => "not set",
        };
        out.push_str(&format!(
            "# API key: {} is {key_state}\n",
            self.llm.api_key_env
        ));
        out
    }
}

/// Parses one config file, checking it against the schema on its own so an
/// error points into this file.
fn parse_file(path: &Path, text: &str) -> Result<Value, ConfigError> {
    let located = |e: serde_yaml::Error| {
        let problem = crate::yaml::YamlError::parsing(path, &e, (0, 0));
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
    allowed_domains: Given<Vec<String>>,
    #[serde(default)]
    secrets: Option<BTreeMap<String, SecretSource>>,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "webagent-config-unit-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_builtin_defaults_match_the_parts_defaults() {
        let config = Config::builtin();
        let llm = config.llm_config(&BTreeMap::new());
        assert_eq!(llm, LlmConfig::default());
        let launch = config.launch_options();
        assert_eq!(launch.window, LaunchOptions::default().window);
        assert!(!launch.headed);
        assert_eq!(config.agent.max_steps, crate::agent::default_max_steps());
        assert_eq!(config.agent.approve, ApprovalMode::Risky);
        assert_eq!(
            config.paths.sessions,
            PathBuf::from(crate::events::DEFAULT_SESSIONS_DIR)
        );
        assert!(config.allowed_domains.is_empty());
        assert!(!config.allow_javascript);
    }

    #[test]
    fn later_layers_win_and_maps_merge_by_key() {
        let dir = temp("layers");
        let user = write(
            &dir,
            "user.yaml",
            "llm:\n  model: from-user\n  temperature: 0.5\nsecrets:\n  a: env:A\n  b: env:B\n",
        );
        let project = write(
            &dir,
            "project.yaml",
            "llm:\n  model: from-project\nsecrets:\n  b: env:B2\nagent:\n",
        );
        let mut env = BTreeMap::new();
        env.insert("WEBAGENT_CHROME".to_string(), "/opt/chrome".to_string());
        let sources = ConfigSources {
            user_file: Some(user.clone()),
            project_file: Some(project.clone()),
            project_required: false,
            env,
        };
        let mut config = Config::load(&sources, &Overrides::default()).unwrap();
        assert_eq!(config.llm.model, "from-project");
        assert_eq!(config.llm.temperature, Some(0.5));
        assert_eq!(config.secrets["a"], SecretSource::Env("A".into()));
        assert_eq!(config.secrets["b"], SecretSource::Env("B2".into()));
        assert_eq!(
            config.browser.executable,
            Some(PathBuf::from("/opt/chrome"))
        );
        assert_eq!(config.origin("llm.temperature"), Source::UserFile(user));
        assert_eq!(config.origin("llm.model"), Source::ProjectFile(project));
        assert_eq!(config.origin("agent.max_steps"), Source::Default);
        config
            .apply(&Overrides {
                model: Some("from-flag".into()),
                ..Overrides::default()
            })
            .unwrap();
        assert_eq!(config.llm.model, "from-flag");
        assert_eq!(config.origin("llm.model"), Source::Flag("--model".into()));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unknown_key_is_reported_at_its_position() {
        let dir = temp("unknown");
        let file = write(&dir, "w.yaml", "llm:\n  model: x\n  modle: y\n");
        let err = parse_file(&file, &std::fs::read_to_string(&file).unwrap()).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("{}:3:3: ", file.display())),
            "{text}"
        );
        assert!(text.contains("unknown field `modle`"), "{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_null_for_a_required_value_names_the_file() {
        let dir = temp("null");
        let project = write(
            &dir,
            "p.yaml",
            "allowed_domains: ~\nagent:\n  max_steps: ~\n",
        );
        let sources = ConfigSources {
            project_file: Some(project.clone()),
            ..ConfigSources::default()
        };
        let err = Config::load(&sources, &Overrides::default()).unwrap_err();
        let text = err.to_string();
        assert_eq!(
            text,
            format!(
                "{}:1:18: allowed_domains: invalid type: unit value, expected a sequence",
                project.display()
            )
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_secret_written_as_its_value_is_refused() {
        let err = "hunter2".parse::<SecretSource>().unwrap_err();
        assert!(err.contains("env:VARIABLE or file:PATH"), "{err}");
        assert_eq!(
            "file:pw.txt".parse::<SecretSource>(),
            Ok(SecretSource::File("pw.txt".into()))
        );
    }

    #[test]
    fn a_totp_secret_reads_its_seed_and_fills_with_a_code() {
        let source: SecretSource = "totp:env:OTP_SEED".parse().unwrap();
        assert_eq!(
            source,
            SecretSource::Totp(Box::new(SecretSource::Env("OTP_SEED".into())))
        );
        assert_eq!(source.to_string(), "totp:env:OTP_SEED");
        assert!("totp:hunter2".parse::<SecretSource>().is_err());
        let mut config = Config::builtin();
        config.secrets.insert("otp".into(), source);
        let env: BTreeMap<String, String> = [(
            "OTP_SEED".to_string(),
            "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ".to_string(),
        )]
        .into();
        let secrets = config.resolve_secrets(&env).unwrap();
        let filled = secrets.fill("<secret>otp</secret>");
        assert!(
            filled.len() == 6 && filled.chars().all(|c| c.is_ascii_digit()),
            "{filled}"
        );
        let bad: BTreeMap<String, String> = [("OTP_SEED".to_string(), "0189".to_string())].into();
        let error = config.resolve_secrets(&bad).unwrap_err().to_string();
        assert!(
            error.contains("secret otp") && error.contains("base32"),
            "{error}"
        );
        assert!(
            !error.contains("0189"),
            "the seed stays out of errors: {error}"
        );
    }

    #[test]
    fn positions_are_stripped_only_when_they_end_the_message() {}
}
