//! The settings: the merged [`Config`] and its sections, as the built-in
//! defaults and every config file spell them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::origin::Source;
use super::secret_source::SecretSpec;
use crate::defaults::DEFAULTS_YAML;
use crate::environment::ApprovalMode;
use crate::vision::VisionMode;

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
    /// Which local files `upload_file` may hand to a page.
    pub uploads: UploadSettings,
    /// Named sessions (`webagent session start`).
    pub session: SessionSettings,
    /// Host patterns the browser may visit (`*.example.com`); empty allows
    /// every host.
    pub allowed_domains: Vec<String>,
    /// Secrets by name, as references to where the value is, with the
    /// sites each belongs to.
    pub secrets: BTreeMap<String, SecretSpec>,
    /// A dotenv file whose every entry is a secret.
    pub secrets_file: Option<PathBuf>,
    /// Let the model run JavaScript in the page.
    pub allow_javascript: bool,
    /// Where each non-default value came from, by dotted key.
    #[serde(skip)]
    pub(super) origins: BTreeMap<String, Source>,
    /// The config files read, in the order they were merged.
    #[serde(skip)]
    pub(super) files: Vec<PathBuf>,
}

impl Config {
    /// The built-in defaults alone.
    pub fn builtin() -> Config {
        // ok: defaults.yaml is part of the source and a unit test parses it,
        // so a broken one never ships.
        serde_yaml::from_str(DEFAULTS_YAML).expect("the built-in defaults.yaml is valid")
    }

    /// Where the value at a dotted key (`llm.model`, `secrets.pw`) came
    /// from.
    pub fn origin(&self, key: &str) -> Source {
        self.origins.get(key).cloned().unwrap_or(Source::Default)
    }

    /// The config files this configuration was read from (they name
    /// where secrets are, so `upload_file` never sends them).
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Every key that is not a built-in default, with where it came from.
    pub fn origins(&self) -> impl Iterator<Item = (&str, &Source)> {
        self.origins.iter().map(|(k, s)| (k.as_str(), s))
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

/// Named sessions that outlive a command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionSettings {
    /// Seconds without a command after which a session stops itself,
    /// closing its browser and removing its profile.
    pub idle_timeout: u64,
}

/// Which local files `upload_file` may read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UploadSettings {
    /// Folders (or single files) uploads may come from, relative to the
    /// working folder; empty means the working folder alone. A secrets
    /// file, a config file, the browser profile and a state file are
    /// refused wherever they lie.
    pub allowed_paths: Vec<PathBuf>,
}

fn serialize_approval<S: Serializer>(mode: &ApprovalMode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(mode.as_str())
}

/// Reads an approval mode word (`never`, `risky`, `always`).
pub(super) fn deserialize_approval<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<ApprovalMode, D::Error> {
    let text = String::deserialize(d)?;
    text.parse().map_err(serde::de::Error::custom)
}
