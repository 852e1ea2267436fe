//! Where a session is assembled: what is checked before a browser starts
//! ([`Prepared`]), and the running [`Session`] built from it, with its
//! browser, environment, watchers and events. The session's actions and
//! runs are added in the files beside this one.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use tokio::sync::mpsc::UnboundedSender;

use crate::actions::Catalog;
use crate::agent::ModelExtractor;
use crate::browser::act::ExecOptions;
use crate::browser::{
    BrowserError, BrowserSession, DomainPolicy, Driver, IsolatedContext, ObserveOptions,
};
use crate::config::Config;
use crate::environment::{CatalogSource, Extractor, LiveMode, Masked, Policy, UploadPolicy};

use crate::events::{Event, EventSink};
use crate::llm::{default_base_url, LlmClient};
use crate::script::{ScriptEnvironment, ScriptError, ScriptEvent, ScriptWatcher, Scripts};
use crate::secrets::Secrets;
use crate::sitemap::{SitemapEvent, SitemapSet, SitemapWatcher};

use super::layer::SessionEnvironment;
use super::run::AgentSetup;

/// The shortest API key masked as a secret; shorter ones are stand-ins
/// for local servers that check no key.
pub const MASKED_KEY_CHARS: usize = 8;

/// How long the first page may take to load.
const OPEN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Why a session could not be prepared or started.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A setting, flag or file is wrong: the person fixes it and tries
    /// again (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// The browser did not start or answer.
    #[error("starting the browser: {0}")]
    Browser(#[from] BrowserError),
    /// A task needs a model and none is configured.
    #[error(
        "no model is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a local server) \
         or pass --base-url; without one, actions (`exec`, the workbench's `:` line) and \
         recipes still run"
    )]
    NoModel,
    /// `state save` was given no file and the session has none.
    #[error("no state file to save to: name one (`state save FILE`) or start with --state FILE")]
    NoStateFile,
    /// The browser could not read or the file could not be written.
    #[error("state not saved: {0}")]
    StateNotSaved(BrowserError),
}

impl SessionError {
    /// Whether this is the person's to fix (a setting, a missing
    /// Chromium) rather than a fault of the machine.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            SessionError::Usage(_)
                | SessionError::Browser(
                    BrowserError::ChromeNotFound { .. }
                        | BrowserError::ChromeMissingAt(_)
                        | BrowserError::ProfileInUse { .. }
                        | BrowserError::State(_)
                )
        )
    }
}

/// Why a session's first page did not open; the session stays usable on
/// a blank tab.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not open {url}: {reason}")]
pub struct NotOpened {
    /// The page asked for.
    pub url: String,
    /// What the browser said.
    pub reason: String,
}

/// What was checked before any browser starts.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The merged configuration, flags applied.
    pub config: Config,
    /// The model client (built even when no endpoint is configured; see
    /// [`Prepared::model_configured`]).
    pub llm: Arc<LlmClient>,
    /// Whether an endpoint was configured at all: an API key, or a base
    /// URL other than the OpenAI default.
    pub model_configured: bool,
    /// Values the model only sees as placeholders.
    pub secrets: Secrets,
    /// The loaded scripts; watchers keep them current once started.
    pub scripts: Scripts,
    /// Script files and directories to watch.
    pub script_paths: Vec<PathBuf>,
    /// The sitemaps as loaded now (the watcher takes over at start).
    pub sitemaps: SitemapSet,
    /// How actions run (time limits, JavaScript, dialogs).
    pub exec: ExecOptions,
    /// How pages are observed (the listing band, its margin).
    pub observe: ObserveOptions,
}

impl Prepared {
    /// Checks everything a session needs from `config` (with the process
    /// environment `env` for the API key and secrets): the model client,
    /// every secret (plus `secret_vars`, names of environment variables
    /// given with `--secret`), the sitemap files, and the scripts at
    /// `script_paths` (files or directories).
    pub fn new(
        config: Config,
        env: &BTreeMap<String, String>,
        script_paths: &[PathBuf],
        secret_vars: &[String],
    ) -> Result<Prepared, SessionError> {
        let llm_config = config.llm_config(env);
        let model_configured =
            llm_config.api_key.is_some() || llm_config.base_url != default_base_url();
        let api_key = llm_config.api_key.clone();
        let llm = LlmClient::new(llm_config).map_err(|e| SessionError::Usage(e.to_string()))?;
        let mut secrets = config
            .resolve_secrets(env)
            .map_err(|e| SessionError::Usage(e.to_string()))?;
        // A server that refuses the key may quote it back ("Incorrect API
        // key provided: sk-…"): it is masked like a secret wherever text
        // leaves. A placeholder key for a local server ("x", "EMPTY") is
        // no secret, and masking it would mangle ordinary text.
        if let Some(key) = api_key.filter(|k| k.expose().chars().count() >= MASKED_KEY_CHARS) {
            secrets.insert_masked_only(config.llm.api_key_env.clone(), key);
        }
        bind_config_secrets(&config, &mut secrets)?;
        for (name, sites) in flagged_secrets(secret_vars) {
            // A bare `--secret NAME` takes the allowed domains as its sites.
            let sites = if sites.is_empty() {
                config.allowed_domains.clone()
            } else {
                sites
            };
            match env.get(&name) {
                Some(value) if !value.is_empty() => secrets.insert(name.clone(), value.clone()),
                Some(_) => {
                    return Err(SessionError::Usage(format!(
                        "--secret {name}: the environment variable {name} is empty"
                    )))
                }
                None => {
                    return Err(SessionError::Usage(format!(
                        "--secret {name}: the environment variable {name} is not set (or not UTF-8)"
                    )))
                }
            }
            bind_checked(&mut secrets, &name, sites, &format!("--secret {name}"))?;
        }
        crate::secrets::mask_in_logs(&secrets);
        let sitemaps = SitemapSet::load_paths(&config.sitemap_paths())
            .map_err(|e| SessionError::Usage(format!("sitemap: {e}")))?;
        let scripts = load_scripts(script_paths)?;
        // A recipe's `secret_sites(…)` (an exported recording keeps the
        // binding it was made with) limits its secret further. Declarations
        // are read at the start: a script reloaded later does not widen or
        // narrow them.
        for (name, sites) in scripts.secret_sites() {
            secrets.bind_also(&name, sites);
        }
        let exec = ExecOptions {
            allow_javascript: config.allow_javascript,
            ..ExecOptions::default()
        };
        let observe = config.observe_options();
        Ok(Prepared {
            config,
            llm: Arc::new(llm),
            model_configured,
            secrets,
            scripts,
            script_paths: script_paths.to_vec(),
            sitemaps,
            exec,
            observe,
        })
    }

    /// The model, or why there is none to ask.
    pub fn model(&self) -> Result<Arc<LlmClient>, SessionError> {
        model_or_why(&self.llm, self.model_configured)
    }

    /// The script paths a command uses: the ones it was given, else the
    /// configured recipes directory when it exists.
    pub fn script_paths(config: &Config, given: &[PathBuf]) -> Vec<PathBuf> {
        if !given.is_empty() {
            return given.to_vec();
        }
        let dir = &config.paths.recipes;
        if dir.is_dir() {
            vec![dir.clone()]
        } else {
            Vec::new()
        }
    }

    /// Launches (or attaches to) the browser, opens `url` (or a blank
    /// page), builds the environment and starts the watchers. Events of
    /// the session (reloads, refused navigations) go to `events`. A page
    /// that fails to load leaves the session usable; [`Session::opened`]
    /// says why.
    pub async fn start(
        self,
        url: Option<&str>,
        events: UnboundedSender<Event>,
    ) -> Result<Session, SessionError> {
        let browser = BrowserSession::start(self.config.launch_options()).await?;
        self.start_on(SessionBrowser::Own(Box::new(browser)), url, events)
            .await
    }

    /// Like [`Prepared::start`], in a browser context of its own in
    /// `browser`, a browser other sessions share (a suite's cases): its
    /// cookies, storage and cache are apart from theirs, and closing the
    /// session closes the context, not the browser.
    pub async fn start_isolated(
        self,
        browser: Arc<BrowserSession>,
        url: Option<&str>,
        events: UnboundedSender<Event>,
    ) -> Result<Session, SessionError> {
        let context = browser.isolated_context().await?;
        self.start_on(SessionBrowser::Shared { browser, context }, url, events)
            .await
    }

    async fn start_on(
        self,
        browser: SessionBrowser,
        url: Option<&str>,
        events: UnboundedSender<Event>,
    ) -> Result<Session, SessionError> {
        let events = EventSink::new(events, self.secrets.clone());
        let tab = match &browser {
            SessionBrowser::Own(own) => own.new_tab("about:blank").await?,
            SessionBrowser::Shared { browser, context } => {
                browser.new_tab_in(context, "about:blank").await?
            }
        };
        let opened = match url {
            Some(url) if url != "about:blank" => {
                tab.navigate(url, OPEN_TIMEOUT)
                    .await
                    .map_err(|e| NotOpened {
                        url: url.to_string(),
                        reason: e.to_string(),
                    })
            }
            _ => Ok(()),
        };
        let (sitemaps, sitemap_watcher) = watch_sitemaps(&self.config, self.sitemaps, &events);
        let script_watcher = watch_scripts(&self.scripts, &self.script_paths, &events);
        let driver = Driver::new(tab, self.exec.clone(), Arc::clone(&sitemaps))
            .with_observe_options(self.observe)
            .with_tab_and_download_policy(
                self.config.downloads.follow_new_tabs,
                self.config.downloads.commit,
            )
            .with_events(events.clone())
            .with_secrets(self.secrets.clone());
        let scripted = ScriptEnvironment::new(driver, self.scripts.clone());
        let catalog: CatalogSource = {
            let scripts = self.scripts.clone();
            Arc::new(move || scripts.catalog().unwrap_or_else(|_| Catalog::builtin()))
        };
        let environment = Masked::new(scripted, self.secrets.clone(), catalog);
        Ok(Session {
            config: self.config,
            llm: self.llm,
            model_configured: self.model_configured,
            secrets: self.secrets,
            scripts: self.scripts,
            sitemaps,
            environment,
            events,
            opened,
            _watchers: (sitemap_watcher, script_watcher),
            browser,
        })
    }
}

/// A running session: the browser, its one tab's environment, the model,
/// the scripts and sitemaps kept current, and the event sink.
pub struct Session {
    /// The configuration it was built from.
    pub config: Config,
    /// The model client.
    pub llm: Arc<LlmClient>,
    /// Whether an endpoint was configured (see [`Prepared`]).
    pub model_configured: bool,
    /// Values the model only sees as placeholders.
    pub secrets: Secrets,
    /// The scripts, reloaded as their files change.
    pub scripts: Scripts,
    /// The sitemaps, reloaded as their files change.
    pub sitemaps: Arc<RwLock<SitemapSet>>,
    /// Where every action runs: the secrets' boundary over custom
    /// actions and locators over the browser's driver (the guard, the
    /// relaunch after a crash). Everything read through it is masked.
    pub environment: SessionEnvironment,
    /// Where the session's events go, masked.
    pub events: EventSink,
    /// Whether the first page opened, or why not.
    pub opened: Result<(), NotOpened>,
    _watchers: (Option<SitemapWatcher>, Option<ScriptWatcher>),
    browser: SessionBrowser,
}

/// The browser a session drives: one of its own, or a context of its own
/// in a browser shared with other sessions.
enum SessionBrowser {
    /// Launched (or attached) for this session alone.
    Own(Box<BrowserSession>),
    /// A browser context in a shared browser.
    Shared {
        /// The shared browser.
        browser: Arc<BrowserSession>,
        /// This session's context in it.
        context: IsolatedContext,
    },
}

impl SessionBrowser {
    fn session(&self) -> &BrowserSession {
        match self {
            SessionBrowser::Own(browser) => browser,
            SessionBrowser::Shared { browser, .. } => browser,
        }
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").finish_non_exhaustive()
    }
}

impl Session {
    /// The model, or why there is none to ask.
    pub fn model(&self) -> Result<Arc<LlmClient>, SessionError> {
        model_or_why(&self.llm, self.model_configured)
    }

    /// Resolves with the reason when the connection to the browser is
    /// lost for good.
    pub fn disconnected(&self) -> impl std::future::Future<Output = String> + Send + 'static {
        self.browser.session().disconnected()
    }

    /// The catalog now: built-ins plus the custom actions loaded at this
    /// moment.
    pub fn catalog(&self) -> Catalog {
        self.scripts
            .catalog()
            .unwrap_or_else(|_| Catalog::builtin())
    }

    /// What the session refuses whoever asks.
    pub fn policy(&self) -> Policy {
        // The configuration was checked before the browser started, so the
        // list parses; the browser's own copy stands in if it ever did not.
        let domains = DomainPolicy::new(&self.config.allowed_domains).unwrap_or_else(|_| {
            self.browser
                .session()
                .domain_policy()
                .cloned()
                .unwrap_or_default()
        });
        Policy {
            allow_javascript: self.config.allow_javascript,
            domains,
            uploads: UploadPolicy::new(
                self.config.uploads.allowed_paths.clone(),
                self.config.protected_files(),
            ),
        }
    }

    /// What an agent run (or a recipe's sub-goal, or an MCP client's call)
    /// is built from.
    pub fn agent_setup(&self) -> AgentSetup {
        // `extract` asks the model only when there is one to ask.
        let extractor = self.model_configured.then(|| {
            Arc::new(ModelExtractor::new(
                Arc::clone(&self.llm),
                self.secrets.clone(),
            )) as Arc<dyn Extractor>
        });
        AgentSetup {
            llm: Arc::clone(&self.llm),
            scripts: self.scripts.clone(),
            cancel: self.environment.inner().cancel().clone(),
            sitemaps: Arc::clone(&self.sitemaps),
            config: crate::agent::AgentConfig {
                max_steps: self.config.agent.max_steps,
                secrets: self.secrets.clone(),
            },
            approval: LiveMode::fixed(self.config.agent.approve),
            policy: self.policy(),
            extractor,
            events: self.events.clone(),
            max_invalid_answers: self.config.agent.max_invalid_answers,
            max_actions: self.config.agent.max_actions_per_step,
            vision: self.config.vision(),
            settings: crate::events::RunSettings {
                profile: self
                    .config
                    .browser
                    .profile
                    .as_ref()
                    .map(|p| p.display().to_string()),
                state: self
                    .config
                    .browser
                    .state
                    .as_ref()
                    .map(|p| p.display().to_string()),
                ..crate::events::RunSettings::default()
            },
            heal_budget: self.config.agent.heal_budget,
        }
    }

    /// Closes the session's tab (an attached browser outlives the command,
    /// and is left as it was) and then the browser it launched, letting a
    /// persistent profile write what it holds.
    pub async fn close(self) {
        let Session {
            environment,
            browser,
            ..
        } = self;
        let (tab, replacement) = environment.into_inner().into_inner().into_parts();
        if let Err(error) = tab.close().await {
            tracing::debug!(%error, "closing the session's tab");
        }
        if let Some(replacement) = replacement {
            replacement.close().await;
        }
        match browser {
            SessionBrowser::Own(browser) => browser.close().await,
            SessionBrowser::Shared { browser, context } => {
                if let Err(error) = browser.dispose_context(context).await {
                    tracing::debug!(%error, "closing the session's browser context");
                }
            }
        }
    }

    /// Writes the session's cookies and the current page's local storage
    /// to `path`, else to the configured state file (`--state`,
    /// `browser.state`), owner-only. Says what was saved (counts only: the
    /// values are credentials and never reach a log or an event).
    pub async fn save_state(&self, path: Option<&std::path::Path>) -> Result<String, SessionError> {
        let path = match path.or(self.config.browser.state.as_deref()) {
            Some(path) => path.to_path_buf(),
            None => return Err(SessionError::NoStateFile),
        };
        let state = self
            .environment
            .inner()
            .inner()
            .tab()
            .save_state(&path)
            .await
            .map_err(SessionError::StateNotSaved)?;
        Ok(format!(
            "saved {} cookies and the local storage of {} origins to {} (owner-only)",
            state.cookies.len(),
            state.origins.len(),
            path.display()
        ))
    }

    /// What keeps sign-ins in this session, for a status line: the
    /// persistent profile and the state file, when set.
    pub fn sign_in_source(&self) -> Option<String> {
        sign_in_source(&self.config)
    }
}

/// A multi-threaded tokio runtime for whatever drives a browser session
/// (the commands, the benchmarks): two workers, as the CDP connection and
/// the session's own task need no more.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        // A run spawned onto a worker (a suite's case, an MCP call) polls
        // the agent, a recipe and healing nested in one another; the main
        // thread's size keeps a debug build's deep frames from overflowing
        // the 2 MiB a worker gets by default. Only what is used is
        // committed.
        .thread_stack_size(RUN_STACK)
        .enable_all()
        .build()
}

/// The stack of a thread that polls a whole run.
const RUN_STACK: usize = 8 << 20;

/// `profile DIR`, `state FILE`, both, or `None` for a fresh profile.
pub fn sign_in_source(config: &Config) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(dir) = &config.browser.profile {
        parts.push(format!("profile {}", dir.display()));
    }
    if let Some(file) = &config.browser.state {
        parts.push(format!("state {}", file.display()));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Binds each configured secret (`secrets`, the secrets file) to its own
/// `domains:`, else to the allowed domains; with neither it is filled on
/// any page (`webagent config` warns).
fn bind_config_secrets(config: &Config, secrets: &mut Secrets) -> Result<(), SessionError> {
    for name in secrets.names() {
        let own = config.secrets.get(&name).map(|spec| &spec.domains);
        let sites = match own {
            Some(own) if !own.is_empty() => own.clone(),
            _ => config.allowed_domains.clone(),
        };
        bind_checked(secrets, &name, sites, &format!("secrets.{name}.domains"))?;
    }
    Ok(())
}

/// Binds `name` to `sites` once they read as allowed-domain patterns;
/// `what` says where they were written.
fn bind_checked(
    secrets: &mut Secrets,
    name: &str,
    sites: Vec<String>,
    what: &str,
) -> Result<(), SessionError> {
    crate::browser::DomainPolicy::new(&sites)
        .map_err(|e| SessionError::Usage(format!("{what}: {e}")))?;
    secrets.bind(name, sites);
    Ok(())
}

/// `--secret NAME` and `--secret NAME@PATTERN` flags by name, in order,
/// with the sites each was given (repeating a name adds sites).
fn flagged_secrets(given: &[String]) -> Vec<(String, Vec<String>)> {
    let mut flagged: Vec<(String, Vec<String>)> = Vec::new();
    for text in given {
        let (name, site) = match text.split_once('@') {
            Some((name, site)) => (name.trim(), Some(site.trim().to_string())),
            None => (text.trim(), None),
        };
        match flagged.iter_mut().find(|(n, _)| n == name) {
            Some((_, sites)) => sites.extend(site),
            None => flagged.push((name.to_string(), site.into_iter().collect())),
        }
    }
    flagged
}

fn model_or_why(llm: &Arc<LlmClient>, configured: bool) -> Result<Arc<LlmClient>, SessionError> {
    if configured {
        Ok(Arc::clone(llm))
    } else {
        Err(SessionError::NoModel)
    }
}

/// Loads the scripts at `paths` (files or directories) and checks that
/// their custom actions fit beside the built-ins.
pub fn load_scripts(paths: &[PathBuf]) -> Result<Scripts, SessionError> {
    let scripts = Scripts::default();
    for path in paths {
        let failed = if path.is_dir() {
            scripts.load_dir(path).into_iter().find_map(Result::err)
        } else {
            scripts.load_file(path).err()
        };
        if let Some(error) = failed {
            return Err(SessionError::Usage(located_text(path, &error)));
        }
    }
    scripts
        .catalog()
        .map_err(|e| SessionError::Usage(format!("scripts: {e}")))?;
    Ok(scripts)
}

/// `FILE:LINE:COLUMN: message` for every script error, even those without
/// a place in the file.
pub fn located_text(file: &std::path::Path, error: &ScriptError) -> String {
    match (error.located(), error) {
        (Some(_), _) | (None, ScriptError::Read { .. } | ScriptError::Missing { .. }) => {
            error.to_string()
        }
        // No place in the file to point at: the file alone.
        (None, _) => format!("{}: {error}", file.display()),
    }
}

/// Keeps the sitemaps current; reloads and failed reloads become events.
fn watch_sitemaps(
    config: &Config,
    loaded: SitemapSet,
    events: &EventSink,
) -> (Arc<RwLock<SitemapSet>>, Option<SitemapWatcher>) {
    let paths = config.sitemap_paths();
    if paths.is_empty() {
        return (Arc::new(RwLock::new(loaded)), None);
    }
    let tx = events.clone();
    let watcher = SitemapWatcher::start(&paths, move |event| {
        let event = match event {
            SitemapEvent::Reloaded { file, .. } => Event::SitemapReloaded {
                file: file.display().to_string(),
                error: None,
            },
            SitemapEvent::Error {
                file,
                line,
                column,
                message,
            } => Event::SitemapReloaded {
                file: file.display().to_string(),
                error: Some(if line > 0 {
                    format!("{}:{line}:{column}: {message}", file.display())
                } else {
                    format!("{}: {message}", file.display())
                }),
            },
            SitemapEvent::Loaded { .. } | SitemapEvent::Removed { .. } => return,
        };
        tx.send(event);
    });
    match watcher {
        Ok(watcher) => (watcher.sitemaps(), Some(watcher)),
        Err(error) => {
            events.send(Event::Error {
                error: format!("the sitemaps are not watched ({error}); using them as loaded"),
                fatal: false,
            });
            (Arc::new(RwLock::new(loaded)), None)
        }
    }
}

/// Keeps the scripts current; changes after the first load become events.
fn watch_scripts(
    scripts: &Scripts,
    paths: &[PathBuf],
    events: &EventSink,
) -> Option<ScriptWatcher> {
    if paths.is_empty() {
        return None;
    }
    let tx = events.clone();
    let started = ScriptWatcher::start(scripts.clone(), paths, move |event| {
        // The first load was checked before the browser started.
        if matches!(
            event,
            ScriptEvent::Loaded {
                reloaded: false,
                ..
            }
        ) {
            return;
        }
        for event in event.to_events() {
            tx.send(event);
        }
    });
    match started {
        Ok(watcher) => Some(watcher),
        Err(error) => {
            events.send(Event::Error {
                error: format!("the scripts are not watched ({error}); edits will not apply"),
                fatal: false,
            });
            None
        }
    }
}
