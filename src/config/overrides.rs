//! Command-line flags: the last layer, applied over the loaded ones and
//! recorded as each value's origin.

use std::path::PathBuf;

use super::error::ConfigError;
use super::origin::Source;
use super::settings::Config;
use crate::environment::ApprovalMode;
use crate::vision::VisionMode;

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
}
