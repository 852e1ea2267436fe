//! What each part of the program is handed from the configuration: the
//! model client's settings with its key, the browser's launch options, how
//! pages are observed and shown, the sitemaps, the secrets' values, and the
//! annotated print of `webagent config`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::dotenv;
use super::error::ConfigError;
use super::origin::Source;
use super::secret_source::SecretSource;
use super::settings::{Config, ListingMode};
use crate::browser::{LaunchOptions, ObserveOptions};
use crate::llm::LlmConfig;
use crate::secrets::{SecretValue, Secrets};

impl Config {
    /// The API key, read from the variable `llm.api_key_env` names.
    pub fn api_key(&self, env: &BTreeMap<String, String>) -> Option<SecretValue> {
        env.get(&self.llm.api_key_env)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
            .map(SecretValue::from)
    }

    /// The files that hold the session's secrets or settings, each with
    /// what it is and the setting that names it: the secrets file, every
    /// `file:` secret, the config files, the browser profile, the state
    /// file. `upload_file` never hands one to a page.
    pub fn protected_files(&self) -> Vec<(PathBuf, String)> {
        let mut out = Vec::new();
        if let Some(file) = &self.secrets_file {
            out.push((file.clone(), "the secrets file (secrets_file)".to_string()));
        }
        for (name, spec) in &self.secrets {
            let mut source = &spec.from;
            while let SecretSource::Totp(seed) = source {
                source = seed;
            }
            if let SecretSource::File(file) = source {
                out.push((
                    file.clone(),
                    format!("the file of secret {name} (secrets.{name})"),
                ));
            }
        }
        for file in &self.files {
            out.push((file.clone(), "a config file".to_string()));
        }
        if let Some(profile) = &self.browser.profile {
            out.push((
                profile.clone(),
                "inside the browser profile (browser.profile)".to_string(),
            ));
        }
        if let Some(state) = &self.browser.state {
            out.push((state.clone(), "the state file (browser.state)".to_string()));
        }
        out
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
        for (name, spec) in &self.secrets {
            let origin = self.origin(&format!("secrets.{name}"));
            match &spec.from {
                SecretSource::Totp(seed) => {
                    let seed = seed.read(name, &origin, env)?;
                    secrets.insert_totp(name.clone(), seed).map_err(|e| {
                        ConfigError::SecretSeed {
                            name: name.clone(),
                            origin: origin.to_string(),
                            problem: e.to_string(),
                        }
                    })?;
                }
                other => secrets.insert(name.clone(), other.read(name, &origin, env)?),
            }
        }
        Ok(secrets)
    }

    /// A warning for each secret that would be typed on any site: it names
    /// no `domains:` and there are no allowed domains to bind it to.
    pub fn unbound_secrets(&self) -> Vec<String> {
        if !self.allowed_domains.is_empty() {
            return Vec::new();
        }
        let mut warnings: Vec<String> = self
            .secrets
            .iter()
            .filter(|(_, spec)| spec.domains.is_empty())
            .map(|(name, _)| {
                format!(
                    "the secret `{name}` is bound to no site: with no allowed domains it may be \
                     typed on any page; give it `domains:` (secrets.{name}: {{from: …, domains: \
                     [https://your.site]}}) or set allowed_domains"
                )
            })
            .collect();
        if let Some(file) = &self.secrets_file {
            warnings.push(format!(
                "the secrets of {} are bound to no site: with no allowed domains they may be \
                 typed on any page; set allowed_domains",
                file.display()
            ));
        }
        warnings
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
