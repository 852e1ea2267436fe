//! Flags several commands share, declared once and flattened into each,
//! and the one way a command turns them into a configuration ([`load`])
//! and a [`Prepared`] session.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::exit::EXIT_USAGE;
use crate::actions::page_address;
use crate::config::{BrowserOpts, Config, ConfigSources, Overrides};
use crate::environment::ApprovalMode;
use crate::session::Prepared;
use crate::vision::VisionMode;

/// What a session is built from: config file, model, scripts, sitemaps,
/// secrets and the browser.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SessionFlags {
    /// Read this config file instead of ./webagent.yaml (or
    /// WEBAGENT_CONFIG).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The model (default: WEBAGENT_MODEL, then config `llm.model`,
    /// gpt-4o-mini).
    #[arg(long)]
    pub model: Option<String>,
    /// The API root of an OpenAI-compatible server (default:
    /// OPENAI_BASE_URL, then config `llm.base_url`, the OpenAI API).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// A sitemap file or directory (repeatable; default: config
    /// `paths.sitemaps`); the one matching the page's origin is used, and
    /// edits apply at the next step.
    #[arg(long, value_name = "PATH")]
    pub sitemap: Vec<PathBuf>,
    /// A Rhai script file or directory (repeatable; default: config
    /// `paths.recipes` when it exists) whose custom actions join the
    /// catalog; edits apply to the next call.
    #[arg(long, value_name = "PATH")]
    pub recipes: Vec<PathBuf>,
    /// A secret the model may type but never sees: `NAME` takes the value
    /// of the environment variable NAME (repeatable). The model writes
    /// `<secret>NAME</secret>`. `NAME@PATTERN` binds it to a site
    /// (`pw@https://admin.example.com`, `pw@*.example.com`; repeat for
    /// more): it is filled only there. A bare NAME is bound to the allowed
    /// domains.
    #[arg(long, value_name = "NAME[@PATTERN]")]
    pub secret: Vec<String>,
    /// A dotenv file (NAME=value lines) whose every entry is a secret
    /// (default: config `secrets_file`). Config `secrets:` adds more.
    #[arg(long, value_name = "FILE")]
    pub secrets_file: Option<PathBuf>,
    /// Let `execute_javascript` run (always asks in risky and always
    /// modes).
    #[arg(long)]
    pub allow_javascript: bool,
    /// Send the model a screenshot of the page with each step: always
    /// (`--vision` alone, or `--vision=always`), auto (models known to
    /// read images) or never
    /// (default: config `llm.vision`, auto).
    #[arg(long, value_name = "MODE", num_args = 0..=1, default_missing_value = "always",
          require_equals = true, value_parser = parse_vision)]
    pub vision: Option<VisionMode>,
    /// Where trace files go (default: config `paths.sessions`,
    /// .webagent/sessions).
    #[arg(long, value_name = "DIR")]
    pub sessions_dir: Option<PathBuf>,
    /// The browser to use.
    #[command(flatten)]
    pub browser: BrowserOpts,
}

/// When a person is asked, and how long a run may go on.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct RunFlags {
    /// When to ask before an action: never, risky (commit and dangerous
    /// actions) or always. Headless, asking means refusing unless --yes
    /// (default: config `agent.approve`, risky).
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub approve: Option<ApprovalMode>,
    /// The step limit of an agent run (default: config `agent.max_steps`,
    /// 40).
    #[arg(long, value_name = "N")]
    pub max_steps: Option<usize>,
}

/// What a headless run (`run`, `recipe run`) takes besides its subject.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HeadlessFlags {
    /// Approve every action that would need approval (headless, asking
    /// means refusing otherwise).
    #[arg(long)]
    pub yes: bool,
    /// Print every event as one JSON object per line instead of the step
    /// log.
    #[arg(long)]
    pub json: bool,
    /// Approval mode and step limit.
    #[command(flatten)]
    pub run: RunFlags,
    /// Config, model, scripts, sitemaps, secrets, browser.
    #[command(flatten)]
    pub session: SessionFlags,
}

/// Reads `--approve MODE`.
pub(super) fn parse_mode(text: &str) -> Result<ApprovalMode, String> {
    text.parse()
}

fn parse_vision(text: &str) -> Result<VisionMode, String> {
    text.parse()
}

/// Reads a page to open (`--url`, `observe URL`) before anything starts:
/// what is no address is refused at once (see [`page_address`]), and a
/// scheme added to a bare host is said on stderr.
pub(super) fn parse_page_url(text: &str) -> Result<String, String> {
    let address = page_address(text)?;
    if address.added_scheme.is_some() {
        eprintln!(
            "note: `{}` has no scheme; opening {}",
            text.trim(),
            address.url
        );
    }
    Ok(address.url)
}

impl SessionFlags {
    /// The flags as configuration overrides.
    pub fn overrides(&self, run: RunFlags) -> Overrides {
        Overrides {
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            max_steps: run.max_steps,
            approve: run.approve,
            chrome: self.browser.chrome.clone(),
            headed: self.browser.headed,
            connect: self.browser.connect.clone(),
            connect_timeout: self.browser.connect_timeout,
            profile: self.browser.profile.clone(),
            state: self.browser.state.clone(),
            allow_javascript: self.allow_javascript,
            sessions_dir: self.sessions_dir.clone(),
            sitemaps: self.sitemap.clone(),
            allowed_domains: self.browser.allow_domains.clone(),
            secrets_file: self.secrets_file.clone(),
            vision: self.vision,
        }
    }

    /// Loads the configuration with these flags over it and prepares the
    /// session; on failure the reason is printed and the exit code (2) is
    /// returned.
    pub fn prepare(&self, run: RunFlags) -> Result<Prepared, ExitCode> {
        let loaded = load(self.config.as_deref(), &self.overrides(run))?;
        let scripts = Prepared::script_paths(&loaded.config, &self.recipes);
        Prepared::new(loaded.config, &loaded.env, &scripts, &self.secret).map_err(|error| {
            eprintln!("error: {error}");
            ExitCode::from(EXIT_USAGE)
        })
    }

    /// [`SessionFlags::prepare`] for actions run by hand (`exec`, a named
    /// session): asked about by `approve`, each given `timeout_ms`, and
    /// `confirm()` dialogs accepted or not.
    pub fn prepare_for_actions(
        &self,
        approve: Option<crate::environment::ApprovalMode>,
        timeout_ms: u64,
        accept_dialogs: bool,
    ) -> Result<Prepared, ExitCode> {
        let mut prepared = self.prepare(RunFlags {
            approve,
            max_steps: None,
        })?;
        prepared.exec.action_timeout = std::time::Duration::from_millis(timeout_ms);
        prepared.exec.accept_dialogs = accept_dialogs;
        Ok(prepared)
    }
}

/// A loaded configuration with the environment it was read from (secrets
/// and the API key are looked up there).
pub struct Loaded {
    /// The merged configuration, flags applied.
    pub config: Config,
    /// The environment variables.
    pub env: BTreeMap<String, String>,
}

/// Loads the configuration for a command: the usual layers (or `explicit`
/// instead of ./webagent.yaml), then `flags`. On failure the reason is
/// printed and the exit code to return is given.
pub fn load(explicit: Option<&Path>, flags: &Overrides) -> Result<Loaded, ExitCode> {
    let sources = ConfigSources::standard(explicit);
    match Config::load(&sources, flags) {
        Ok(config) => Ok(Loaded {
            config,
            env: sources.env,
        }),
        Err(error) => {
            eprintln!("error: {error}");
            Err(ExitCode::from(EXIT_USAGE))
        }
    }
}
