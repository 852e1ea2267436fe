//! Connects the workbench's effects to the real browser, agent run and
//! file watchers. Every service runs on its own task or thread and talks
//! to the loop only by sending [`AppEvent`]s; [`Services::handle`] never
//! blocks the loop.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::{mpsc, oneshot, watch};

use crate::actions::{Action, ActionResult, Catalog, RiskFacts};
use crate::agent::browser_env::BrowserEnvironment;
use crate::agent::{
    Agent, AgentConfig, ApprovalDecision, ApprovalMode, ApprovalRequest, Approver, BoxFuture,
    Environment, EnvironmentError, Secrets,
};
use crate::browser::act::ExecOptions;
use crate::browser::{BrowserSession, LaunchOptions};
use crate::dom::PageState;
use crate::events::{
    EndReason, Event, Reflection, StepRecord, StepTimings, TokenUsage, TraceWriter,
    DEFAULT_SESSIONS_DIR,
};
use crate::llm::{stop_pair, LlmClient, LlmConfig, StopHandle, StopSignal, DEFAULT_BASE_URL};
use crate::script::host::SubAgent;
use crate::script::{
    recipe_from_events, CancelFlag, RecipeHost, ScriptEnvironment, ScriptError, ScriptWatcher,
    Scripts,
};
use crate::sitemap::{SitemapEvent, SitemapSet, SitemapWatcher};

use super::app::AppState;
use super::event::{AppEvent, Effect};
use super::event_loop::{App, EffectHandler};
use super::theme::{Theme, ThemeWatcher};
use super::{terminal, TuiError};

/// How long a page may take to load at start.
const OPEN_TIMEOUT: Duration = Duration::from_secs(60);

/// How long quitting waits for the browser to close.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(10);

/// What the workbench starts with.
#[derive(Debug, Clone)]
pub struct WorkbenchOptions {
    /// The page to open.
    pub url: String,
    /// Sitemap files or directories to load and watch.
    pub sitemaps: Vec<PathBuf>,
    /// The recipes directory: its custom actions join the catalog, its
    /// recipes run with `:recipe NAME`, and exports are written there.
    pub recipes: Option<PathBuf>,
    /// A theme name (`dark`, `light`) or file.
    pub theme: Option<String>,
    /// When the person is asked before an action.
    pub approval: ApprovalMode,
    /// How to get a browser.
    pub launch: LaunchOptions,
    /// The model's settings.
    pub llm: LlmConfig,
    /// Whether an endpoint was configured at all (a key, or a base URL
    /// other than the default); without one, tasks are refused with a hint.
    pub llm_configured: bool,
    /// The step limit of a run.
    pub max_steps: usize,
    /// A task to start as soon as the browser is up.
    pub task: Option<String>,
    /// Secrets the agent may type: filled into its actions, masked in every
    /// page and event the workbench shows.
    pub secrets: Secrets,
    /// Let `execute_javascript` run.
    pub allow_javascript: bool,
    /// Where each run's trace file goes.
    pub sessions_dir: PathBuf,
}

impl WorkbenchOptions {
    /// Options for `url` with the model settings from the environment.
    pub fn new(url: impl Into<String>) -> Self {
        let llm = LlmConfig::from_env();
        let llm_configured = llm.api_key.is_some() || llm.base_url != DEFAULT_BASE_URL;
        WorkbenchOptions {
            url: url.into(),
            sitemaps: Vec::new(),
            recipes: None,
            theme: None,
            approval: ApprovalMode::default(),
            launch: LaunchOptions::default(),
            llm,
            llm_configured,
            max_steps: crate::agent::DEFAULT_MAX_STEPS,
            task: None,
            secrets: Secrets::new(),
            allow_javascript: false,
            sessions_dir: PathBuf::from(DEFAULT_SESSIONS_DIR),
        }
    }
}

/// Opens the workbench in this terminal and runs it until the person
/// quits. The terminal is restored on every way out, panics included.
pub fn run(options: WorkbenchOptions) -> Result<(), TuiError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let mut services = Services::start(&options, tx.clone())?;
    let mut term = terminal::enter()?;
    let size = term.size().map(|s| (s.width, s.height)).unwrap_or((80, 24));
    let mut state = AppState::new(size);
    state.status.approval = options.approval;
    state.status.model = if options.llm_configured {
        options.llm.model.clone()
    } else {
        String::new()
    };
    state.status.url = options.url.clone();
    let mut app = App::new(state, rx);
    let stop_input = Arc::new(AtomicBool::new(false));
    terminal::spawn_input_reader(tx.clone(), Arc::clone(&stop_input));
    if let Some(task) = &options.task {
        // Typed as if by the person, so it shows in the input and starts
        // through the same path.
        for c in task.chars() {
            let _ = tx.send(AppEvent::Key(crossterm::event::KeyEvent::from(
                crossterm::event::KeyCode::Char(c),
            )));
        }
        app.state.focus = super::Pane::Task;
        let _ = tx.send(AppEvent::Key(crossterm::event::KeyEvent::from(
            crossterm::event::KeyCode::Enter,
        )));
    }
    drop(tx);
    let result = app.run(&mut term, &mut services);
    stop_input.store(true, Ordering::Relaxed);
    terminal::restore();
    services.shutdown();
    result
}

/// Tells the loop which custom actions and recipes are loaded.
fn send_scripts(scripts: &Scripts, tx: &Sender<AppEvent>) {
    match scripts.catalog() {
        Ok(catalog) => {
            let _ = tx.send(AppEvent::ScriptsLoaded {
                catalog: Box::new(catalog),
                recipes: scripts.recipes(),
            });
        }
        Err(error) => {
            let _ = tx.send(AppEvent::Notice {
                error: true,
                text: format!("the scripts' actions do not fit the catalog: {error}"),
            });
        }
    }
}

/// The session's events so far, for exporting it as a recipe. Step
/// numbers restart with every run, so they are renumbered to follow on
/// from what is already recorded.
#[derive(Debug, Default)]
pub struct SessionRecord {
    events: Vec<Event>,
    last_step: usize,
}

impl SessionRecord {
    /// Where the next run's step numbers start (its step 1 is this + 1).
    pub fn base(&self) -> usize {
        self.last_step
    }

    /// Records a run's event, its step numbers shifted by `base`.
    pub fn record(&mut self, base: usize, event: &Event) {
        let mut event = event.clone();
        match &mut event {
            Event::Step(step) => {
                step.index += base;
                self.last_step = self.last_step.max(step.index);
            }
            Event::Observation(summary) => summary.step += base,
            _ => {}
        }
        self.events.push(event);
    }

    /// Records an action typed by hand as a step of its own.
    pub fn record_manual(&mut self, action: &Action, result: &ActionResult, ms: u64) {
        self.last_step += 1;
        let step = StepRecord {
            index: self.last_step,
            reflection: Reflection::default(),
            action: action.to_json(),
            result: result.clone(),
            repairs: Vec::new(),
            timings: StepTimings {
                act_ms: ms,
                ..StepTimings::default()
            },
            usage: None,
            prompt_chars: 0,
            prompt: String::new(),
            raw_response: String::new(),
        };
        self.events.push(Event::Step(step));
    }

    /// Every event recorded.
    pub fn events(&self) -> &[Event] {
        &self.events
    }
}

/// Writes `events` as a recipe `session-<unix seconds>.rhai` in `dir`
/// and returns its path, or says why there is nothing to write or the
/// file could not be written.
pub fn export_session(events: &[Event], dir: &std::path::Path) -> Result<PathBuf, String> {
    let Some(source) = recipe_from_events(events, "a webagent workbench session") else {
        return Err(
            "nothing to replay yet: run actions (`:`), a task or a recipe first; only \
             successful page actions are exported"
                .into(),
        );
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("could not create {}: {e}", dir.display()))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut path = dir.join(format!("session-{stamp}.rhai"));
    let mut n = 1;
    while path.exists() {
        n += 1;
        path = dir.join(format!("session-{stamp}-{n}.rhai"));
    }
    std::fs::write(&path, source)
        .map_err(|e| format!("could not write {}: {e}", path.display()))?;
    Ok(path)
}

/// Work for the browser task.
enum BrowserCommand {
    /// Run an action typed by hand, then observe.
    Act {
        id: u64,
        action: Action,
        cancel: CancelFlag,
    },
    /// Run a loaded recipe.
    Recipe {
        name: String,
        llm: Option<Arc<LlmClient>>,
        stop: StopSignal,
        cancel: CancelFlag,
        paused: watch::Receiver<bool>,
        max_steps: usize,
        approval: Arc<AtomicU8>,
    },
    /// Run the agent on a task.
    Run {
        task: String,
        llm: Arc<LlmClient>,
        stop: StopSignal,
        paused: watch::Receiver<bool>,
        max_steps: usize,
        approval: Arc<AtomicU8>,
        cancel: CancelFlag,
    },
    /// Close the browser.
    Shutdown,
}

/// The real services behind the effects.
pub struct Services {
    runtime: Option<tokio::runtime::Runtime>,
    tx: Sender<AppEvent>,
    browser: mpsc::UnboundedSender<BrowserCommand>,
    highlight: watch::Sender<Option<u32>>,
    approval: Arc<AtomicU8>,
    paused: watch::Sender<bool>,
    stop: Option<StopHandle>,
    cancel: CancelFlag,
    session: Arc<Mutex<SessionRecord>>,
    export_dir: PathBuf,
    browser_done: std::sync::mpsc::Receiver<()>,
    closing: watch::Sender<bool>,
    llm: Result<Arc<LlmClient>, String>,
    max_steps: usize,
    _sitemap_watcher: Option<SitemapWatcher>,
    _script_watcher: Option<ScriptWatcher>,
    theme_watcher: Option<ThemeWatcher>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services").finish_non_exhaustive()
    }
}

fn mode_code(mode: ApprovalMode) -> u8 {
    match mode {
        ApprovalMode::Never => 0,
        ApprovalMode::Risky => 1,
        ApprovalMode::Always => 2,
    }
}

fn mode_from(code: u8) -> ApprovalMode {
    match code {
        0 => ApprovalMode::Never,
        2 => ApprovalMode::Always,
        _ => ApprovalMode::Risky,
    }
}

impl Services {
    /// Starts the runtime, the browser task and the watchers; each reports
    /// through `tx`.
    pub fn start(options: &WorkbenchOptions, tx: Sender<AppEvent>) -> Result<Services, TuiError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let (sitemaps, sitemap_watcher) = start_sitemaps(&options.sitemaps, &tx);
        // Custom actions from the recipes directory join agent runs; edits
        // reload and show as `script_reloaded` events.
        let scripts = Scripts::default();
        let script_watcher = options.recipes.as_ref().and_then(|dir| {
            let tx = tx.clone();
            let loaded = scripts.clone();
            let started =
                ScriptWatcher::start(scripts.clone(), std::slice::from_ref(dir), move |event| {
                    for event in event.to_events() {
                        let _ = tx.send(AppEvent::agent(event));
                    }
                    // The command line parses with what is loaded now.
                    send_scripts(&loaded, &tx);
                });
            match started {
                Ok(watcher) => Some(watcher),
                Err(error) => {
                    tracing::warn!(%error, "the recipes directory is not watched");
                    None
                }
            }
        });
        send_scripts(&scripts, &tx);
        let session = Arc::new(Mutex::new(SessionRecord::default()));
        let (browser, commands) = mpsc::unbounded_channel();
        let (highlight, highlight_rx) = watch::channel(None);
        // The agent's run future is not Send (it holds the approver across
        // awaits), so the browser task is driven by a thread of its own
        // through the runtime's handle; the CDP connection still runs on
        // the runtime's workers.
        let (browser_done_tx, browser_done) = std::sync::mpsc::channel::<()>();
        let (closing, closing_rx) = watch::channel(false);
        {
            let handle = runtime.handle().clone();
            let setup = BrowserSetup {
                scripts: scripts.clone(),
                session: Arc::clone(&session),
                launch: options.launch.clone(),
                secrets: options.secrets.clone(),
                sessions_dir: options.sessions_dir.clone(),
                exec: ExecOptions {
                    allow_javascript: options.allow_javascript,
                    ..ExecOptions::default()
                },
            };
            let url = options.url.clone();
            let tx = tx.clone();
            std::thread::Builder::new()
                .name("tui-browser".into())
                .spawn(move || {
                    handle.block_on(browser_task(
                        setup,
                        url,
                        tx,
                        commands,
                        highlight_rx,
                        closing_rx,
                        sitemaps,
                    ));
                    let _ = browser_done_tx.send(());
                })?;
        }
        let llm = if options.llm_configured {
            LlmClient::new(options.llm.clone())
                .map(Arc::new)
                .map_err(|e| e.to_string())
        } else {
            Err(
                "no model is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a local \
                 server) or pass --base-url; actions typed after `:` work without one"
                    .to_string(),
            )
        };
        let (paused, _) = watch::channel(false);
        let mut services = Services {
            runtime: Some(runtime),
            tx,
            browser,
            highlight,
            approval: Arc::new(AtomicU8::new(mode_code(options.approval))),
            paused,
            stop: None,
            cancel: CancelFlag::new(),
            session,
            export_dir: options
                .recipes
                .clone()
                .unwrap_or_else(|| options.sessions_dir.clone()),
            browser_done,
            closing,
            llm,
            max_steps: options.max_steps,
            _sitemap_watcher: sitemap_watcher,
            _script_watcher: script_watcher,
            theme_watcher: None,
        };
        if let Some(theme) = &options.theme {
            services.load_theme(theme);
        }
        Ok(services)
    }

    fn load_theme(&mut self, spec: &str) {
        self.theme_watcher = None;
        match Theme::find(spec) {
            Ok(theme) => {
                if let Some(path) = theme.source.clone() {
                    let tx = self.tx.clone();
                    match ThemeWatcher::start(&path, move |result| {
                        let _ = tx.send(AppEvent::ThemeReloaded(result.map_err(|e| e.to_string())));
                    }) {
                        Ok(watcher) => self.theme_watcher = Some(watcher),
                        Err(error) => {
                            let _ = self.tx.send(AppEvent::Notice {
                                error: true,
                                text: error.to_string(),
                            });
                        }
                    }
                }
                let _ = self.tx.send(AppEvent::ThemeReloaded(Ok(theme)));
            }
            Err(error) => {
                let _ = self
                    .tx
                    .send(AppEvent::ThemeReloaded(Err(error.to_string())));
            }
        }
    }

    /// Stops the run, closes the browser and the runtime.
    pub fn shutdown(&mut self) {
        self.cancel.cancel();
        if let Some(stop) = self.stop.take() {
            stop.stop();
        }
        let Some(runtime) = self.runtime.take() else {
            return;
        };
        let _ = self.browser.send(BrowserCommand::Shutdown);
        self.closing.send_replace(true);
        // The browser task closes Chromium on its way out (a run in flight
        // ends at the stop); wait for it, within bounds, then drop the rest.
        let _ = self.browser_done.recv_timeout(SHUTDOWN_WAIT);
        runtime.shutdown_timeout(Duration::from_secs(2));
    }
}

impl Drop for Services {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl EffectHandler for Services {
    fn handle(&mut self, effect: Effect) {
        match effect {
            Effect::Highlight(index) => {
                // Newest wins: the browser task only sees the latest.
                self.highlight.send_replace(Some(index));
            }
            Effect::RunAction { id, action } => {
                self.cancel = CancelFlag::new();
                let cancel = self.cancel.clone();
                if self
                    .browser
                    .send(BrowserCommand::Act { id, action, cancel })
                    .is_err()
                {
                    let _ = self.tx.send(AppEvent::ActionFinished {
                        id,
                        result: ActionResult::unknown("the browser is not running"),
                        ms: 0,
                    });
                }
            }
            Effect::StartRun { task, approval } => {
                self.approval.store(mode_code(approval), Ordering::Relaxed);
                let llm = match &self.llm {
                    Ok(llm) => Arc::clone(llm),
                    Err(why) => {
                        let _ = self.tx.send(AppEvent::RunEnded {
                            error: Some(why.clone()),
                        });
                        return;
                    }
                };
                let (handle, signal) = stop_pair();
                self.stop = Some(handle);
                self.cancel = CancelFlag::new();
                self.paused.send_replace(false);
                let command = BrowserCommand::Run {
                    task,
                    llm,
                    stop: signal,
                    paused: self.paused.subscribe(),
                    max_steps: self.max_steps,
                    approval: Arc::clone(&self.approval),
                    cancel: self.cancel.clone(),
                };
                if self.browser.send(command).is_err() {
                    let _ = self.tx.send(AppEvent::RunEnded {
                        error: Some("the browser is not running".into()),
                    });
                }
            }
            Effect::SetApprovalMode(mode) => {
                self.approval.store(mode_code(mode), Ordering::Relaxed)
            }
            Effect::RunRecipe { name, approval } => {
                self.approval.store(mode_code(approval), Ordering::Relaxed);
                let (handle, signal) = stop_pair();
                self.stop = Some(handle);
                self.cancel = CancelFlag::new();
                self.paused.send_replace(false);
                let command = BrowserCommand::Recipe {
                    name,
                    // Without a model, `agent("…")` fails with its reason.
                    llm: self.llm.as_ref().ok().cloned(),
                    stop: signal,
                    cancel: self.cancel.clone(),
                    paused: self.paused.subscribe(),
                    max_steps: self.max_steps,
                    approval: Arc::clone(&self.approval),
                };
                if self.browser.send(command).is_err() {
                    let _ = self.tx.send(AppEvent::RunEnded {
                        error: Some("the browser is not running".into()),
                    });
                }
            }
            Effect::CancelScript => self.cancel.cancel(),
            Effect::ExportSession => {
                let events = self
                    .session
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .events()
                    .to_vec();
                let _ = self.tx.send(AppEvent::Exported(export_session(
                    &events,
                    &self.export_dir,
                )));
            }
            Effect::StopRun => {
                // A script in a loop stops at once; the run at its next
                // check.
                self.cancel.cancel();
                if let Some(stop) = &self.stop {
                    stop.stop();
                }
                // A paused run must wake up to see the stop.
                self.paused.send_replace(false);
            }
            Effect::SetPaused(paused) => {
                self.paused.send_replace(paused);
            }
            Effect::Decide { reply, decision } => {
                let _ = reply.send(decision);
            }
            Effect::Answer { reply, answer } => {
                let _ = reply.send(answer);
            }
            Effect::LoadTheme(spec) => self.load_theme(&spec),
            Effect::Quit => {
                self.cancel.cancel();
                if let Some(stop) = &self.stop {
                    stop.stop();
                }
            }
        }
    }
}

/// Loads and watches the sitemaps; reports every change as the good set
/// plus the latest error.
fn start_sitemaps(
    paths: &[PathBuf],
    tx: &Sender<AppEvent>,
) -> (Arc<RwLock<SitemapSet>>, Option<SitemapWatcher>) {
    if paths.is_empty() {
        return (Arc::new(RwLock::new(SitemapSet::new())), None);
    }
    // The watcher reports the first loads before it hands out its set, so
    // the callback finds the set through a slot filled right after.
    let slot: Arc<OnceLock<Arc<RwLock<SitemapSet>>>> = Arc::new(OnceLock::new());
    let first_error: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    let callback = {
        let slot = Arc::clone(&slot);
        let first_error = Arc::clone(&first_error);
        let tx = tx.clone();
        move |event: SitemapEvent| {
            let error = match &event {
                SitemapEvent::Error {
                    file,
                    line,
                    column,
                    message,
                } if *line > 0 => Some(format!("{}:{line}:{column}: {message}", file.display())),
                SitemapEvent::Error { file, message, .. } => {
                    Some(format!("{}: {message}", file.display()))
                }
                _ => None,
            };
            match slot.get() {
                Some(set) => {
                    let sitemaps = set.read().unwrap_or_else(PoisonError::into_inner).clone();
                    let _ = tx.send(AppEvent::Sitemaps { sitemaps, error });
                }
                None => {
                    if error.is_some() {
                        *first_error.lock().unwrap_or_else(PoisonError::into_inner) = error;
                    }
                }
            }
        }
    };
    match SitemapWatcher::start(paths, callback) {
        Ok(watcher) => {
            let set = watcher.sitemaps();
            let _ = slot.set(Arc::clone(&set));
            let sitemaps = set.read().unwrap_or_else(PoisonError::into_inner).clone();
            let error = first_error
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            let _ = tx.send(AppEvent::Sitemaps { sitemaps, error });
            (set, Some(watcher))
        }
        Err(error) => {
            let _ = tx.send(AppEvent::Sitemaps {
                sitemaps: SitemapSet::new(),
                error: Some(error.to_string()),
            });
            (Arc::new(RwLock::new(SitemapSet::new())), None)
        }
    }
}

/// Answers approvals and questions by asking the person through the
/// loop, and skips asking when the workbench's current mode does not
/// require it (the mode can change while a run goes on).
struct WorkbenchApprover {
    tx: Sender<AppEvent>,
    mode: Arc<AtomicU8>,
}

impl Approver for WorkbenchApprover {
    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            let mode = mode_from(self.mode.load(Ordering::Relaxed));
            if !mode.requires(&request.action, request.risk) {
                return ApprovalDecision::Approve {
                    note: Some(format!("approval mode {} does not ask", mode.as_str())),
                };
            }
            let (reply, answer) = oneshot::channel();
            let asked = self.tx.send(AppEvent::ApprovalRequested {
                request: Box::new(request.clone()),
                reply,
            });
            if asked.is_err() {
                return ApprovalDecision::Stop;
            }
            // A dropped reply means the workbench closed.
            answer.await.unwrap_or(ApprovalDecision::Stop)
        })
    }

    fn ask_user<'a>(&'a mut self, question: &'a str) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            let asked = self.tx.send(AppEvent::AskUser {
                question: question.to_string(),
                reply,
            });
            if asked.is_err() {
                return None;
            }
            answer.await.ok().flatten()
        })
    }
}

/// The browser tab as the agent sees it, plus what the workbench needs:
/// every observation goes to the listing, and a pause holds the run
/// before its next observation.
struct WorkbenchEnvironment {
    /// Runs custom actions' handlers on the same tab and records locators
    /// so the session exports as a recipe.
    inner: Option<ScriptEnvironment>,
    tx: Sender<AppEvent>,
    paused: watch::Receiver<bool>,
    stop: StopSignal,
    secrets: Secrets,
}

fn gone() -> EnvironmentError {
    EnvironmentError {
        message: "the browser tab is no longer available".into(),
        fatal: true,
    }
}

impl WorkbenchEnvironment {
    async fn wait_while_paused(&mut self) {
        while *self.paused.borrow_and_update() && !self.stop.is_stopped() {
            tokio::select! {
                changed = self.paused.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
                _ = self.stop.stopped() => return,
            }
        }
    }
}

impl Environment for WorkbenchEnvironment {
    async fn observe(&mut self) -> Result<PageState, EnvironmentError> {
        self.wait_while_paused().await;
        let page = self.inner.as_mut().ok_or_else(gone)?.observe().await?;
        let _ = self
            .tx
            .send(AppEvent::Page(Box::new(masked_page(&self.secrets, &page))));
        Ok(page)
    }

    async fn execute(&mut self, action: &Action) -> ActionResult {
        match self.inner.as_mut() {
            Some(inner) => inner.execute(action).await,
            None => ActionResult::unknown("the browser tab is no longer available"),
        }
    }

    async fn current_url(&mut self) -> Option<String> {
        self.inner.as_mut()?.current_url().await
    }

    async fn risk_facts(&mut self, action: &Action, page: &PageState) -> RiskFacts {
        match self.inner.as_mut() {
            Some(inner) => inner.risk_facts(action, page).await,
            None => crate::agent::listing_risk_facts(action, page),
        }
    }
}

/// A hand-typed action with `<secret>name</secret>` filled in, so the
/// person can type a secret without showing it on screen.
fn with_secrets(catalog: &Catalog, secrets: &Secrets, action: Action) -> Action {
    if secrets.is_empty() {
        return action;
    }
    let mut filled = action.to_json();
    secrets.fill_json(&mut filled);
    catalog.parse(&filled).unwrap_or(action)
}

/// A hand-typed action as recorded: secret values back to placeholders.
fn masked_action(catalog: &Catalog, secrets: &Secrets, action: &Action) -> Action {
    if secrets.is_empty() {
        return action.clone();
    }
    let mut shown = action.to_json();
    secrets.mask_json(&mut shown);
    catalog.parse(&shown).unwrap_or_else(|_| action.clone())
}

/// A hand-run action's result with secret values masked: a fill echoes
/// the value it typed, and the log pane shows results.
fn masked_result(secrets: &Secrets, result: ActionResult) -> ActionResult {
    if secrets.is_empty() {
        return result;
    }
    let Ok(mut value) = serde_json::to_value(&result) else {
        return result;
    };
    secrets.mask_json(&mut value);
    serde_json::from_value(value).unwrap_or(result)
}

/// What the browser task needs besides its channels.
struct BrowserSetup {
    scripts: Scripts,
    session: Arc<Mutex<SessionRecord>>,
    launch: LaunchOptions,
    secrets: Secrets,
    sessions_dir: PathBuf,
    exec: ExecOptions,
}

/// The page with secret values masked, for the panes: a typed password
/// shows as `value=<secret>name</secret>` like the model sees it.
fn masked_page(secrets: &Secrets, page: &PageState) -> PageState {
    if secrets.is_empty() {
        return page.clone();
    }
    let Ok(mut value) = serde_json::to_value(page) else {
        return page.clone();
    };
    secrets.mask_json(&mut value);
    serde_json::from_value(value).unwrap_or_else(|_| page.clone())
}

async fn observe_and_send(env: &mut ScriptEnvironment, tx: &Sender<AppEvent>, secrets: &Secrets) {
    match env.observe().await {
        Ok(page) => {
            let _ = tx.send(AppEvent::Page(Box::new(masked_page(secrets, &page))));
        }
        Err(error) => {
            let _ = tx.send(AppEvent::Notice {
                error: true,
                text: format!("observing the page: {error}"),
            });
        }
    }
}

/// Outlines one listed element in the page, replacing the last outline.
async fn highlight(env: &mut ScriptEnvironment, catalog: &Catalog, index: u32) {
    let Ok(action) = catalog.parse(&json!({"highlight": {"index": index}})) else {
        return;
    };
    if let Ok(clear) = catalog.parse(&json!({"clear_overlays": {}})) {
        let _ = env.execute(&clear).await;
    }
    let result = env.execute(&action).await;
    if !result.is_ok() {
        tracing::debug!(?result, index, "highlighting the selected element");
    }
}

/// Owns the browser: launches it, opens the page, then serves commands
/// until shut down.
async fn browser_task(
    setup: BrowserSetup,
    url: String,
    tx: Sender<AppEvent>,
    mut commands: mpsc::UnboundedReceiver<BrowserCommand>,
    mut highlights: watch::Receiver<Option<u32>>,
    mut closing: watch::Receiver<bool>,
    sitemaps: Arc<RwLock<SitemapSet>>,
) {
    // Quitting while Chromium starts or the first page loads must not wait
    // for either: dropping the half-started session closes the browser.
    let opened = tokio::select! {
        opened = open_page(setup.launch, &url) => opened,
        _ = closing.wait_for(|closing| *closing) => return,
    };
    let (session, tab) = match opened {
        Ok((session, tab, load_error)) => {
            if let Some(error) = load_error {
                let _ = tx.send(AppEvent::Notice {
                    error: true,
                    text: format!("could not open {url}: {error}"),
                });
            }
            (session, tab)
        }
        Err(error) => {
            let _ = tx.send(AppEvent::BrowserFailed(error));
            refuse_all(&mut commands, &tx, "the browser did not start").await;
            return;
        }
    };
    let _ = tx.send(AppEvent::BrowserReady { url });
    let secrets = setup.secrets;
    let sessions_dir = setup.sessions_dir;
    let scripts = setup.scripts;
    let session_record = setup.session;
    // Navigations the page starts by itself that the allowed-domains guard
    // refuses are reported here, between runs as well as during them.
    let (guard_tx, mut guard_rx) = mpsc::unbounded_channel::<Event>();
    {
        let tx = tx.clone();
        tokio::spawn(async move {
            while let Some(event) = guard_rx.recv().await {
                if tx.send(AppEvent::agent(event)).is_err() {
                    break;
                }
            }
        });
    }
    let browser_env = BrowserEnvironment::new(tab, setup.exec.clone(), Arc::clone(&sitemaps))
        .with_events(guard_tx);
    let mut env = ScriptEnvironment::new(browser_env, scripts.clone(), setup.exec);
    observe_and_send(&mut env, &tx, &secrets).await;
    let catalog = Catalog::builtin();
    let disconnected = session.disconnected();
    tokio::pin!(disconnected);
    loop {
        tokio::select! {
            why = &mut disconnected => {
                let _ = tx.send(AppEvent::BrowserFailed(why));
                refuse_all(&mut commands, &tx, "the browser went away").await;
                return;
            }
            changed = highlights.changed() => {
                if changed.is_err() {
                    continue;
                }
                let latest = *highlights.borrow_and_update();
                if let Some(index) = latest {
                    highlight(&mut env, &catalog, index).await;
                }
            }
            command = commands.recv() => match command {
                None | Some(BrowserCommand::Shutdown) => break,
                Some(BrowserCommand::Act { id, action, cancel }) => {
                    // Custom actions re-parse only with the scripts' catalog.
                    let catalog = scripts.catalog().unwrap_or_else(|_| catalog.clone());
                    let action = with_secrets(&catalog, &secrets, action);
                    env = env.with_cancel(cancel);
                    let started = Instant::now();
                    let result = masked_result(&secrets, env.execute(&action).await);
                    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                    // Recorded with the placeholder, never the secret.
                    let shown = masked_action(&catalog, &secrets, &action);
                    session_record
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .record_manual(&shown, &result, ms);
                    let _ = tx.send(AppEvent::ActionFinished { id, result, ms });
                    observe_and_send(&mut env, &tx, &secrets).await;
                }
                Some(BrowserCommand::Run { task, llm, stop, paused, max_steps, approval, cancel }) => {
                    let run = AgentRun { task, llm, stop, paused, max_steps, approval, secrets: secrets.clone(), sessions_dir: sessions_dir.clone(), scripts: scripts.clone(), session: Arc::clone(&session_record) };
                    let (back, shutting_down) = run_agent(env.with_cancel(cancel), run, &sitemaps, &tx, &mut commands)
                    .await;
                    match back {
                        Some(returned) => env = returned,
                        None => return,
                    }
                    if shutting_down {
                        break;
                    }
                    observe_and_send(&mut env, &tx, &secrets).await;
                }
                Some(BrowserCommand::Recipe { name, llm, stop, cancel, paused, max_steps, approval }) => {
                    let run = RecipeRun { name, llm, stop, cancel: cancel.clone(), paused, max_steps, approval, secrets: secrets.clone(), sessions_dir: sessions_dir.clone(), scripts: scripts.clone(), session: Arc::clone(&session_record) };
                    let (back, shutting_down) = run_recipe(env.with_cancel(cancel), run, &sitemaps, &tx, &mut commands)
                    .await;
                    match back {
                        Some(returned) => env = returned,
                        None => return,
                    }
                    if shutting_down {
                        break;
                    }
                    observe_and_send(&mut env, &tx, &secrets).await;
                }
            },
        }
    }
    drop(env);
    drop(session);
}

/// Launches the browser and opens `url`; a page that fails to load is
/// reported but leaves the browser usable.
async fn open_page(
    launch: LaunchOptions,
    url: &str,
) -> Result<(BrowserSession, crate::browser::Tab, Option<String>), String> {
    let session = BrowserSession::start(launch)
        .await
        .map_err(|e| e.to_string())?;
    let tab = session
        .new_tab("about:blank")
        .await
        .map_err(|e| format!("the browser did not open a tab: {e}"))?;
    let load_error = tab
        .navigate(url, OPEN_TIMEOUT)
        .await
        .err()
        .map(|e| e.to_string());
    Ok((session, tab, load_error))
}

/// Answers every command with a failure until the channel closes.
async fn refuse_all(
    commands: &mut mpsc::UnboundedReceiver<BrowserCommand>,
    tx: &Sender<AppEvent>,
    why: &str,
) {
    while let Some(command) = commands.recv().await {
        match command {
            BrowserCommand::Act { id, .. } => {
                let _ = tx.send(AppEvent::ActionFinished {
                    id,
                    result: ActionResult::unknown(why),
                    ms: 0,
                });
            }
            BrowserCommand::Run { .. } | BrowserCommand::Recipe { .. } => {
                let _ = tx.send(AppEvent::RunEnded {
                    error: Some(why.to_string()),
                });
            }
            BrowserCommand::Shutdown => return,
        }
    }
}

/// One run's settings, as the loop asked for them.
struct AgentRun {
    task: String,
    llm: Arc<LlmClient>,
    stop: StopSignal,
    paused: watch::Receiver<bool>,
    max_steps: usize,
    approval: Arc<AtomicU8>,
    secrets: Secrets,
    sessions_dir: PathBuf,
    scripts: Scripts,
    session: Arc<Mutex<SessionRecord>>,
}

/// One recipe run's settings, as the loop asked for them.
struct RecipeRun {
    name: String,
    llm: Option<Arc<LlmClient>>,
    stop: StopSignal,
    cancel: CancelFlag,
    paused: watch::Receiver<bool>,
    max_steps: usize,
    approval: Arc<AtomicU8>,
    secrets: Secrets,
    sessions_dir: PathBuf,
    scripts: Scripts,
    session: Arc<Mutex<SessionRecord>>,
}

/// Sends a run's events to the panes, its trace file and the session
/// record, until the run drops its sender.
fn forward_events(
    tx: &Sender<AppEvent>,
    sessions_dir: PathBuf,
    session: Arc<Mutex<SessionRecord>>,
    mut events_rx: mpsc::UnboundedReceiver<Event>,
) -> tokio::task::JoinHandle<()> {
    let tx = tx.clone();
    tokio::spawn(async move {
        let mut trace = match TraceWriter::create(&sessions_dir) {
            Ok(trace) => Some(trace),
            Err(error) => {
                tracing::warn!(%error, "no trace file for this run");
                None
            }
        };
        let base = session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .base();
        while let Some(event) = events_rx.recv().await {
            if let Some(writer) = trace.as_mut() {
                if let Err(error) = writer.write(&event) {
                    tracing::warn!(%error, "the trace stops here");
                    trace = None;
                }
            }
            session
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .record(base, &event);
            if tx.send(AppEvent::agent(event)).is_err() {
                break;
            }
        }
    })
}

/// `agent("…")` in a recipe run from the workbench: the model works on
/// the same tab, in the panes, and the person approves its actions as in
/// any run (at the mode chosen at that moment).
struct WorkbenchSubAgent {
    llm: Arc<LlmClient>,
    catalog: Catalog,
    config: AgentConfig,
    tx: Sender<AppEvent>,
    mode: Arc<AtomicU8>,
    stop: StopSignal,
    sitemaps: Arc<RwLock<SitemapSet>>,
}

impl SubAgent<WorkbenchEnvironment> for WorkbenchSubAgent {
    fn run<'a>(
        &'a mut self,
        goal: &'a str,
        environment: &'a mut WorkbenchEnvironment,
        events: mpsc::UnboundedSender<Event>,
    ) -> BoxFuture<'a, Result<serde_json::Value, String>> {
        Box::pin(async move {
            let approver = WorkbenchApprover {
                tx: self.tx.clone(),
                mode: Arc::clone(&self.mode),
            };
            let mut agent = Agent::new(
                Arc::clone(&self.llm),
                Lent(environment),
                Box::new(approver),
                events,
            )
            .with_catalog(self.catalog.clone())
            .with_sitemaps(Arc::clone(&self.sitemaps))
            .with_stop(self.stop.clone())
            .with_config(self.config.clone());
            let outcome = agent.run(goal).await.map_err(|e| e.to_string())?;
            Ok(json!({
                "success": outcome.success,
                "text": outcome.text,
                "steps": outcome.steps,
            }))
        })
    }
}

/// The recipe's environment lent to a sub-agent for one goal.
struct Lent<'a>(&'a mut WorkbenchEnvironment);

impl Environment for Lent<'_> {
    async fn observe(&mut self) -> Result<PageState, EnvironmentError> {
        self.0.observe().await
    }

    async fn execute(&mut self, action: &Action) -> ActionResult {
        self.0.execute(action).await
    }

    async fn current_url(&mut self) -> Option<String> {
        self.0.current_url().await
    }

    async fn risk_facts(&mut self, action: &Action, page: &PageState) -> RiskFacts {
        self.0.risk_facts(action, page).await
    }
}

/// Runs a recipe on the tab, its steps through the person's approval
/// gate; returns the tab's environment and whether a shutdown came in.
async fn run_recipe(
    env: ScriptEnvironment,
    run: RecipeRun,
    sitemaps: &Arc<RwLock<SitemapSet>>,
    tx: &Sender<AppEvent>,
    commands: &mut mpsc::UnboundedReceiver<BrowserCommand>,
) -> (Option<ScriptEnvironment>, bool) {
    let RecipeRun {
        name,
        llm,
        stop,
        cancel,
        paused,
        max_steps,
        approval,
        secrets,
        sessions_dir,
        scripts,
        session,
    } = run;
    let (events_tx, events_rx) = mpsc::unbounded_channel::<Event>();
    let forward = forward_events(tx, sessions_dir, session, events_rx);
    let mut environment = WorkbenchEnvironment {
        inner: Some(env),
        tx: tx.clone(),
        paused,
        stop: stop.clone(),
        secrets: secrets.clone(),
    };
    let url = environment.current_url().await.unwrap_or_default();
    let (sub_mode, sub_stop) = (Arc::clone(&approval), stop.clone());
    // The approver applies the mode chosen at each step, so the host asks
    // it about every step.
    let mut host = RecipeHost::new(
        environment,
        Box::new(WorkbenchApprover {
            tx: tx.clone(),
            mode: approval,
        }),
        ApprovalMode::Always,
        events_tx.clone(),
    );
    if let (Some(llm), Ok(catalog)) = (llm, scripts.catalog()) {
        host = host.with_sub_agent(Box::new(WorkbenchSubAgent {
            llm,
            catalog,
            config: AgentConfig {
                max_steps,
                approval: ApprovalMode::Always,
                secrets,
            },
            tx: tx.clone(),
            mode: sub_mode,
            stop: sub_stop,
            sitemaps: Arc::clone(sitemaps),
        }));
    }
    let _ = events_tx.send(Event::RunStarted {
        task: format!("recipe {name}"),
        url,
        model: "none (recipe)".into(),
        max_steps: 0,
    });
    let mut shutting_down = false;
    let outcome = {
        let running = scripts.run_recipe(Some(&name), &mut host, &cancel);
        tokio::pin!(running);
        loop {
            tokio::select! {
                outcome = &mut running => break outcome,
                command = commands.recv(), if !shutting_down => match command {
                    Some(BrowserCommand::Act { id, .. }) => {
                        let _ = tx.send(AppEvent::ActionFinished {
                            id,
                            result: ActionResult::blocked("a recipe is running; stop it before acting by hand"),
                            ms: 0,
                        });
                    }
                    Some(BrowserCommand::Run { .. } | BrowserCommand::Recipe { .. }) => {
                        let _ = tx.send(AppEvent::Notice {
                            error: true,
                            text: "a run is already in progress".into(),
                        });
                    }
                    Some(BrowserCommand::Shutdown) | None => {
                        shutting_down = true;
                        cancel.cancel();
                    }
                },
            }
        }
    };
    let steps = host.steps();
    let (success, text, reason) = match outcome {
        Ok(value) => (
            true,
            match value {
                serde_json::Value::Null => format!("recipe {name} finished"),
                serde_json::Value::String(text) => text,
                other => other.to_string(),
            },
            EndReason::Done,
        ),
        Err(ScriptError::Cancelled) => (false, "stopped by the person".into(), EndReason::Stopped),
        Err(error) => {
            let reason = if host.stopped() {
                EndReason::Stopped
            } else {
                EndReason::Fatal
            };
            (false, error.to_string(), reason)
        }
    };
    let _ = events_tx.send(Event::Done {
        success,
        text,
        reason,
        steps,
        usage: TokenUsage::default(),
    });
    drop(events_tx);
    let back = host.into_environment().inner.take();
    let _ = forward.await;
    let _ = tx.send(AppEvent::RunEnded { error: None });
    (back, shutting_down)
}

/// Runs the agent on the tab; returns the tab's environment (unless the
/// run lost it) and whether a shutdown came in meanwhile.
async fn run_agent(
    env: ScriptEnvironment,
    run_settings: AgentRun,
    sitemaps: &Arc<RwLock<SitemapSet>>,
    tx: &Sender<AppEvent>,
    commands: &mut mpsc::UnboundedReceiver<BrowserCommand>,
) -> (Option<ScriptEnvironment>, bool) {
    let (events_tx, events_rx) = mpsc::unbounded_channel::<Event>();
    // Every event goes to the panes, the run's trace file and the session
    // record.
    let forward = forward_events(
        tx,
        run_settings.sessions_dir.clone(),
        Arc::clone(&run_settings.session),
        events_rx,
    );
    let AgentRun {
        task,
        llm,
        stop,
        paused,
        max_steps,
        approval,
        secrets,
        sessions_dir: _,
        scripts,
        session: _,
    } = run_settings;
    let catalog = scripts.catalog().unwrap_or_default();
    let environment = WorkbenchEnvironment {
        inner: Some(env),
        tx: tx.clone(),
        paused,
        stop: stop.clone(),
        secrets: secrets.clone(),
    };
    // The agent asks about every action; the approver applies the mode
    // the person has chosen at that moment.
    let mut agent = Agent::new(
        llm,
        environment,
        Box::new(WorkbenchApprover {
            tx: tx.clone(),
            mode: approval,
        }),
        events_tx,
    );
    agent = agent
        .with_catalog(catalog)
        .with_sitemaps(Arc::clone(sitemaps))
        .with_stop(stop)
        .with_config(AgentConfig {
            max_steps,
            approval: ApprovalMode::Always,
            secrets,
        });
    let mut shutting_down = false;
    let outcome = {
        let run = agent.run(&task);
        tokio::pin!(run);
        loop {
            tokio::select! {
                outcome = &mut run => break outcome,
                command = commands.recv(), if !shutting_down => match command {
                    Some(BrowserCommand::Act { id, .. }) => {
                        let _ = tx.send(AppEvent::ActionFinished {
                            id,
                            result: ActionResult::blocked("the agent is running; stop it before acting by hand"),
                            ms: 0,
                        });
                    }
                    Some(BrowserCommand::Run { .. } | BrowserCommand::Recipe { .. }) => {
                        let _ = tx.send(AppEvent::Notice {
                            error: true,
                            text: "a run is already in progress".into(),
                        });
                    }
                    Some(BrowserCommand::Shutdown) | None => shutting_down = true,
                },
            }
        }
    };
    let back = agent.environment_mut().inner.take();
    drop(agent);
    let _ = forward.await;
    let _ = tx.send(AppEvent::RunEnded {
        error: outcome.err().map(|e| e.to_string()),
    });
    (back, shutting_down)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::{LeftOut, PageText, ScrollPosition};

    #[test]
    fn the_panes_get_pages_with_secrets_masked_and_typed_placeholders_are_filled() {
        let mut secrets = Secrets::new();
        secrets.insert("pw", "Tq8-secret-5521");
        let page = PageState {
            observation: 1,
            url: "http://127.0.0.1/welcome".into(),
            title: "Welcome Tq8-secret-5521".into(),
            tabs: Vec::new(),
            scroll: ScrollPosition::default(),
            elements: Vec::new(),
            left_out: LeftOut::default(),
            full_page: false,
            listing: "[0]<input value=Tq8-secret-5521 />\n".into(),
            page_text: PageText {
                text: "Your password is Tq8-secret-5521".into(),
                ..PageText::default()
            },
            extract_ms: 0.0,
        };
        let shown = masked_page(&secrets, &page);
        let text = serde_json::to_string(&shown).unwrap_or_default();
        assert!(!text.contains("Tq8-secret-5521"), "{text}");
        assert_eq!(shown.listing, "[0]<input value=<secret>pw</secret> />\n");
        assert_eq!(shown.page_text.text, "Your password is <secret>pw</secret>");

        let catalog = Catalog::builtin();
        let typed = catalog
            .parse_command("input_text 0 <secret>pw</secret>")
            .expect("the command parses");
        let filled = with_secrets(&catalog, &secrets, typed).to_json();
        assert_eq!(filled["input_text"]["text"], "Tq8-secret-5521", "{filled}");
        let echoed = ActionResult::ok_with(json!({"value": "Tq8-secret-5521"}));
        let shown = serde_json::to_string(&masked_result(&secrets, echoed)).unwrap_or_default();
        assert!(shown.contains("<secret>pw</secret>"), "{shown}");
        assert!(!shown.contains("Tq8-secret-5521"), "{shown}");
    }

    #[test]
    fn a_custom_actions_secret_placeholder_is_filled_with_the_scripts_catalog() {
        let scripts = Scripts::default();
        scripts
            .load_source(
                "login.rhai",
                "action(\"log_in\", #{ description: \"Signs in\", \
                 params: #{ password: #{ type: \"string\" } }, risk: \"commit\" });\n\
                 fn log_in(p) { p.password }\n",
            )
            .expect("the script loads");
        let catalog = scripts.catalog().expect("the action fits the catalog");
        let mut secrets = Secrets::new();
        secrets.insert("pw", "Zx9-hidden-0042");
        let typed = catalog
            .parse_command("log_in <secret>pw</secret>")
            .expect("the custom action parses");
        let filled = with_secrets(&catalog, &secrets, typed.clone()).to_json();
        assert_eq!(filled["log_in"]["password"], "Zx9-hidden-0042", "{filled}");
        // The built-in catalog cannot re-parse it: the placeholder stays.
        let unfilled = with_secrets(&Catalog::builtin(), &secrets, typed).to_json();
        assert_eq!(unfilled["log_in"]["password"], "<secret>pw</secret>");
        // What the session records shows the placeholder again.
        let recorded = masked_action(&catalog, &secrets, &catalog.parse(&filled).expect("parses"));
        assert_eq!(
            recorded.to_json()["log_in"]["password"],
            "<secret>pw</secret>"
        );
    }
}
