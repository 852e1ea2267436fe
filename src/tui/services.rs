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
use crate::events::{Event, TraceWriter, DEFAULT_SESSIONS_DIR};
use crate::llm::{stop_pair, LlmClient, LlmConfig, StopHandle, StopSignal, DEFAULT_BASE_URL};
use crate::script::{CancelFlag, ScriptWatcher, Scripts, TabHost};
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
    /// The recipes directory (shown in the status line; recipes run once
    /// the script module exists).
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

/// Work for the browser task.
enum BrowserCommand {
    /// Run an action typed by hand, then observe.
    Act { id: u64, action: Action },
    /// Run the agent on a task.
    Run {
        task: String,
        llm: Arc<LlmClient>,
        stop: StopSignal,
        paused: watch::Receiver<bool>,
        max_steps: usize,
        approval: Arc<AtomicU8>,
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
            let started =
                ScriptWatcher::start(scripts.clone(), std::slice::from_ref(dir), move |event| {
                    for event in event.to_events() {
                        let _ = tx.send(AppEvent::agent(event));
                    }
                });
            match started {
                Ok(watcher) => Some(watcher),
                Err(error) => {
                    tracing::warn!(%error, "the recipes directory is not watched");
                    None
                }
            }
        });
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
                if self
                    .browser
                    .send(BrowserCommand::Act { id, action })
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
                self.paused.send_replace(false);
                let command = BrowserCommand::Run {
                    task,
                    llm,
                    stop: signal,
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
            Effect::SetApprovalMode(mode) => {
                self.approval.store(mode_code(mode), Ordering::Relaxed)
            }
            Effect::StopRun => {
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
    /// Runs the handlers of custom actions the model calls.
    scripts: Scripts,
    inner: Option<BrowserEnvironment>,
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
        match (self.inner.as_mut(), action) {
            // A custom action's handler drives the same tab.
            (Some(inner), Action::Custom(custom)) => {
                let mut host = TabHost::new(inner.tab(), ExecOptions::default(), SitemapSet::new());
                self.scripts
                    .call_action(
                        &custom.name,
                        custom.params.clone(),
                        &mut host,
                        &CancelFlag::new(),
                    )
                    .await
            }
            (Some(inner), _) => inner.execute(action).await,
            (None, _) => ActionResult::unknown("the browser tab is no longer available"),
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

async fn observe_and_send(env: &mut BrowserEnvironment, tx: &Sender<AppEvent>, secrets: &Secrets) {
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
async fn highlight(env: &mut BrowserEnvironment, catalog: &Catalog, index: u32) {
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
    let mut env = BrowserEnvironment::new(tab, setup.exec, Arc::clone(&sitemaps));
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
                Some(BrowserCommand::Act { id, action }) => {
                    let action = with_secrets(&catalog, &secrets, action);
                    let started = Instant::now();
                    let result = masked_result(&secrets, env.execute(&action).await);
                    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                    let _ = tx.send(AppEvent::ActionFinished { id, result, ms });
                    observe_and_send(&mut env, &tx, &secrets).await;
                }
                Some(BrowserCommand::Run { task, llm, stop, paused, max_steps, approval }) => {
                    let run = AgentRun { task, llm, stop, paused, max_steps, approval, secrets: secrets.clone(), sessions_dir: sessions_dir.clone(), scripts: scripts.clone() };
                    let (back, shutting_down) = run_agent(env, run, &sitemaps, &tx, &mut commands)
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
            BrowserCommand::Run { .. } => {
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
}

/// Runs the agent on the tab; returns the tab's environment (unless the
/// run lost it) and whether a shutdown came in meanwhile.
async fn run_agent(
    env: BrowserEnvironment,
    run_settings: AgentRun,
    sitemaps: &Arc<RwLock<SitemapSet>>,
    tx: &Sender<AppEvent>,
    commands: &mut mpsc::UnboundedReceiver<BrowserCommand>,
) -> (Option<BrowserEnvironment>, bool) {
    let (events_tx, mut events_rx) = mpsc::unbounded_channel::<Event>();
    // Every event goes to the panes and to the session's trace file.
    let forward = {
        let tx = tx.clone();
        let sessions_dir = run_settings.sessions_dir.clone();
        tokio::spawn(async move {
            let mut trace = match TraceWriter::create(&sessions_dir) {
                Ok(trace) => Some(trace),
                Err(error) => {
                    tracing::warn!(%error, "no trace file for this run");
                    None
                }
            };
            while let Some(event) = events_rx.recv().await {
                if let Some(writer) = trace.as_mut() {
                    if let Err(error) = writer.write(&event) {
                        tracing::warn!(%error, "the trace stops here");
                        trace = None;
                    }
                }
                if tx.send(AppEvent::agent(event)).is_err() {
                    break;
                }
            }
        })
    };
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
    } = run_settings;
    let catalog = scripts.catalog().unwrap_or_default();
    let environment = WorkbenchEnvironment {
        scripts,
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
                    Some(BrowserCommand::Run { .. }) => {
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
}
