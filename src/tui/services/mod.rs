//! Connects the workbench's effects to the real browser, agent run and
//! file watchers. Every service runs on its own task or thread and talks
//! to the loop only by sending [`AppEvent`]s; [`Services::handle`] never
//! blocks the loop.
//!
//! The session itself (browser, environment, model, scripts, sitemaps,
//! watchers) is built by [`crate::session`] like every command's;
//! [`browser`] is the actor that owns it, [`record`] keeps what a session
//! exports and where its events go. A workbench attached to a named
//! session has no browser of its own: [`attach`] carries its effects to
//! the session process.

mod attach;
mod browser;
mod debug;
mod files;
mod picture;
mod record;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use crate::actions::ActionResult;
use crate::agent::Steering;
use crate::environment::ApprovalMode;
use crate::events::{list_traces, summarize_trace, TraceOutcome};
use crate::interrupt::Interrupt;
use crate::llm::{stop_pair, StopHandle};
use crate::script::CancelFlag;
use crate::session::Prepared;

pub use self::attach::{run_attached, AttachedSession};
use self::browser::{browser_task, BrowserCommand, BrowserSetup, RunControl};
pub use self::record::{export_session, SessionRecord};
use super::error::{ExportError, ResumeReadError, TraceListError, TuiError};
use super::event::{AppEvent, Effect};
use super::event_loop::{App, EffectHandler};
use super::state::{AppState, Pane};
use super::terminal;

/// The browser actor's stack: the size of the main thread's.
const BROWSER_THREAD_STACK: usize = 8 * 1024 * 1024;

/// Traces summed up per message to the loop: the first rows show at once,
/// and the loop is not woken a thousand times.
const SESSIONS_BATCH: usize = 100;

/// The work behind the sessions view, on the caller's thread (never the
/// loop's): lists `dir` newest first and sends the files, then reads and
/// sums up the traces in batches, stopping when `current` moves past
/// `generation` (the view was opened again) or the loop is gone.
pub fn read_sessions(
    dir: &std::path::Path,
    generation: u64,
    current: &AtomicU64,
    tx: &Sender<AppEvent>,
) {
    let files = match list_traces(dir) {
        Ok(files) => files,
        Err(error) => {
            let _ = tx.send(AppEvent::SessionsListed {
                generation,
                files: Err(TraceListError {
                    dir: dir.to_path_buf(),
                    source: error,
                }),
            });
            return;
        }
    };
    let _ = tx.send(AppEvent::SessionsListed {
        generation,
        files: Ok(files.clone()),
    });
    for (batch, chunk) in files.chunks(SESSIONS_BATCH).enumerate() {
        if current.load(Ordering::Relaxed) != generation {
            return;
        }
        let summaries = chunk.iter().cloned().map(summarize_trace).collect();
        let sent = tx.send(AppEvent::SessionsRead {
            generation,
            from: batch * SESSIONS_BATCH,
            summaries,
        });
        if sent.is_err() {
            return;
        }
    }
}

/// The plan for resuming the trace at `path`, or the newest trace in
/// `dir` whose run did not end.
fn read_resume(
    path: Option<PathBuf>,
    dir: &std::path::Path,
) -> Result<Box<crate::session::ResumePlan>, ResumeReadError> {
    let path = match path {
        Some(path) => path,
        None => {
            let files = list_traces(dir).map_err(|source| TraceListError {
                dir: dir.to_path_buf(),
                source,
            })?;
            files
                .into_iter()
                .find(|f| summarize_trace(f.clone()).outcome == TraceOutcome::Unfinished)
                .map(|f| f.path)
                .ok_or_else(|| ResumeReadError::NoUnfinished {
                    dir: dir.to_path_buf(),
                })?
        }
    };
    Ok(Box::new(crate::session::resume_plan(&path)?))
}

/// How long quitting waits for the browser to close.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(10);

/// What the workbench starts with.
#[derive(Debug, Clone)]
pub struct WorkbenchOptions {
    /// The page to open.
    pub url: String,
    /// The session, checked: config, model, secrets, scripts, sitemaps.
    pub session: Prepared,
    /// Where `E` writes exports (the recipes directory when there is one).
    pub export_dir: PathBuf,
    /// A theme name (`dark`, `light`) or file.
    pub theme: Option<String>,
    /// A task to start as soon as the browser is up.
    pub task: Option<String>,
    /// Serve MCP on stdin/stdout: a client's calls run in this session,
    /// risky ones through the approval modal.
    pub mcp: bool,
    /// The MCP client gets the whole page after every action that changed
    /// it, never a delta (`--whole-pages`).
    pub mcp_whole_pages: bool,
    /// A run to continue from its trace as soon as the browser is up
    /// (`webagent resume`).
    pub resume: Option<Box<crate::session::ResumePlan>>,
    /// Record the person's actions into this recipe from the start
    /// (`webagent record`).
    pub record: Option<String>,
    /// Debug this recipe from the start (`recipe run FILE --debug`).
    pub debug: Option<super::state::DebugStart>,
}

impl WorkbenchOptions {
    /// Options for `url` in `session`, exporting to its first script
    /// directory (else its sessions directory).
    pub fn new(url: impl Into<String>, session: Prepared) -> Self {
        let export_dir = export_dir(&session);
        WorkbenchOptions {
            url: url.into(),
            session,
            export_dir,
            theme: None,
            task: None,
            mcp: false,
            mcp_whole_pages: false,
            resume: None,
            record: None,
            debug: None,
        }
    }
}

/// Where a workbench on `session` writes exports: its first script
/// directory, else its sessions directory.
fn export_dir(session: &Prepared) -> PathBuf {
    session
        .script_paths
        .iter()
        .find(|p| p.is_dir())
        .cloned()
        .unwrap_or_else(|| session.config.paths.sessions.clone())
}

/// Opens the workbench in this terminal and runs it until the person
/// quits. The terminal is restored on every way out, panics included.
pub fn run(options: WorkbenchOptions) -> Result<(), TuiError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let mut services = Services::start(&options, tx.clone())?;
    let mut term = terminal::enter()?;
    // Asked before the key reader starts: the terminal's answer comes in
    // on stdin.
    let picker = picture::picker(!options.mcp && std::io::stdout().is_terminal());
    services.pictures = Some(picture::PictureService::start(picker, tx.clone())?);
    let size = term.size().map(|s| (s.width, s.height)).unwrap_or((80, 24));
    let mut state = AppState::new(size);
    state.status.approval = options.session.config.agent.approve;
    state.status.model = if options.session.model_configured {
        options.session.config.llm.model.clone()
    } else {
        String::new()
    };
    state.status.url = options.url.clone();
    state.status.sign_in = crate::session::sign_in_source(&options.session.config);
    state.mcp = options.mcp;
    let mut app = App::new(state, rx);
    if let Some(plan) = options.resume.clone() {
        // The run starts through the same path as `:resume`.
        let _ = tx.send(AppEvent::ResumeReady(Ok(plan)));
    }
    if let Some(name) = &options.record {
        // Started through the same path as `:record NAME`.
        let _ = tx.send(AppEvent::StartRecording(name.clone()));
    }
    if let Some(start) = options.debug.clone() {
        // Started through the same path as `:debug NAME`.
        let _ = tx.send(AppEvent::StartDebug(start));
    }
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
        app.state.focus = Pane::Task;
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

/// The real services behind the effects.
pub struct Services {
    runtime: Option<tokio::runtime::Runtime>,
    tx: Sender<AppEvent>,
    browser: mpsc::UnboundedSender<BrowserCommand>,
    highlight: watch::Sender<Option<u32>>,
    /// The approval mode the person has chosen; every road of the
    /// workbench reads it at each action.
    approval: watch::Sender<ApprovalMode>,
    paused: watch::Sender<bool>,
    stop: Option<StopHandle>,
    cancel: CancelFlag,
    session: Arc<Mutex<SessionRecord>>,
    export_dir: PathBuf,
    browser_done: std::sync::mpsc::Receiver<()>,
    closing: watch::Sender<bool>,
    model: Result<(), String>,
    max_steps: usize,
    /// Whether the page pane is shown (the browser takes its pictures).
    show_page: watch::Sender<bool>,
    /// Fits pictures into the page pane; started once the terminal is
    /// known.
    pictures: Option<picture::PictureService>,
    /// The running agent's inbox for the person's messages and retries.
    steering: Steering,
    /// Where the traces are (a resume looks for one there).
    sessions_dir: PathBuf,
    /// The sessions view's work, a trace opened or exported, the theme.
    on_disk: files::WorkbenchFiles,
    /// The session's scripts (a debugged recipe's file reloads into them).
    scripts: crate::script::Scripts,
    /// Where the debugged recipe takes its commands, once it runs.
    debug_commands: Arc<Mutex<Option<std::sync::mpsc::Sender<crate::script::DebugCommand>>>>,
    /// Watches the debugged recipe's file while it is debugged.
    debug_watch: Option<crate::script::ScriptWatcher>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services").finish_non_exhaustive()
    }
}

/// Serves MCP on stdin/stdout on `runtime`: every call goes to the browser
/// actor, steered like a run (the approval mode of the moment, the modal).
/// Returns what wakes the server when the tools change.
fn start_mcp(
    runtime: &tokio::runtime::Runtime,
    prepared: &Prepared,
    browser: &mpsc::UnboundedSender<BrowserCommand>,
    approval: &watch::Sender<ApprovalMode>,
    max_steps: usize,
    tx: &Sender<AppEvent>,
) -> Arc<tokio::sync::Notify> {
    let (calls, mut requests) = mpsc::unbounded_channel::<crate::mcp::McpRequest>();
    let server = crate::mcp::WebagentMcp::new(calls, prepared.scripts.clone());
    let changed = Arc::new(tokio::sync::Notify::new());
    let _guard = runtime.enter();
    server.notify_on(Arc::clone(&changed));
    let (browser, approval) = (browser.clone(), approval.clone());
    runtime.spawn(async move {
        while let Some(request) = requests.recv().await {
            let (_, paused) = watch::channel(false);
            let run = RunControl {
                stop: crate::llm::StopSignal::never(),
                cancel: CancelFlag::new(),
                paused,
                max_steps,
                approval: approval.subscribe(),
                steering: Steering::new(),
            };
            if browser.send(BrowserCommand::Mcp { request, run }).is_err() {
                break;
            }
        }
    });
    let tx = tx.clone();
    runtime.spawn(async move {
        if let Err(error) = crate::mcp::serve_stdio(server).await {
            let _ = tx.send(AppEvent::Notice {
                error: true,
                text: format!("MCP: {error:#}"),
            });
        } else {
            let _ = tx.send(AppEvent::Notice {
                error: false,
                text: "the MCP client disconnected".into(),
            });
        }
    });
    changed
}

impl Services {
    /// Starts the runtime and the browser actor (which starts the session
    /// and its watchers); each reports through `tx`.
    pub fn start(options: &WorkbenchOptions, tx: Sender<AppEvent>) -> Result<Services, TuiError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        // SIGTERM (a service manager, `kill`), SIGHUP (the terminal
        // closed) and a SIGINT sent from outside leave the way the quit key
        // does: the run stops, Chromium closes, the trace ends. Ctrl-C
        // typed in the workbench is a key, not a signal.
        {
            let _inside = runtime.enter();
            match Interrupt::listen() {
                Ok(interrupt) => {
                    let tx = tx.clone();
                    interrupt.spawn_then(move || {
                        let _ = tx.send(AppEvent::Terminate);
                    });
                }
                Err(error) => {
                    tracing::warn!(%error, "signals will end the workbench without clean-up")
                }
            }
        }
        let prepared = options.session.clone();
        // The panes show what was loaded at once; reloads follow as the
        // session's events.
        let _ = tx.send(AppEvent::Sitemaps {
            sitemaps: prepared.sitemaps.clone(),
            error: None,
        });
        record::send_scripts(&prepared.scripts, &tx);
        let session = Arc::new(Mutex::new(SessionRecord::default()));
        let (browser, commands) = mpsc::unbounded_channel();
        let (highlight, highlight_rx) = watch::channel(None);
        // The agent's run future is not Send (it holds the approver across
        // awaits), so the browser actor is driven by a thread of its own
        // through the runtime's handle; the CDP connection still runs on
        // the runtime's workers.
        let (browser_done_tx, browser_done) = std::sync::mpsc::channel::<()>();
        let (closing, closing_rx) = watch::channel(false);
        let (show_page, show_page_rx) = watch::channel(false);
        let model = prepared.model().map(|_| ()).map_err(|e| e.to_string());
        let max_steps = prepared.config.agent.max_steps;
        let (approval, _) = watch::channel(prepared.config.agent.approve);
        let tools_changed = options
            .mcp
            .then(|| start_mcp(&runtime, &prepared, &browser, &approval, max_steps, &tx));
        {
            let handle = runtime.handle().clone();
            let setup = BrowserSetup {
                prepared,
                url: options.url.clone(),
                record: Arc::clone(&session),
                tools_changed,
                mcp_whole_pages: options.mcp_whole_pages,
            };
            let tx = tx.clone();
            std::thread::Builder::new()
                .name("tui-browser".into())
                // A run, a recipe or an MCP call is one deep future driven
                // by block_on on this thread's stack (unoptimized builds
                // keep every layer's state there); the 2 MiB default of a
                // spawned thread is not enough for all of them at once.
                .stack_size(BROWSER_THREAD_STACK)
                .spawn(move || {
                    handle.block_on(browser_task(
                        setup,
                        tx,
                        commands,
                        highlight_rx,
                        closing_rx,
                        show_page_rx,
                    ));
                    let _ = browser_done_tx.send(());
                })?;
        }
        let (paused, _) = watch::channel(false);
        let on_disk = files::WorkbenchFiles::new(
            tx.clone(),
            options.session.config.paths.sessions.clone(),
            options.export_dir.clone(),
        );
        let mut services = Services {
            runtime: Some(runtime),
            tx,
            browser,
            highlight,
            approval,
            paused,
            stop: None,
            cancel: CancelFlag::new(),
            session,
            export_dir: options.export_dir.clone(),
            browser_done,
            closing,
            model,
            max_steps,
            show_page,
            pictures: None,
            steering: Steering::new(),
            sessions_dir: options.session.config.paths.sessions.clone(),
            on_disk,
            scripts: options.session.scripts.clone(),
            debug_commands: Arc::new(Mutex::new(None)),
            debug_watch: None,
        };
        if let Some(theme) = &options.theme {
            services.handle(Effect::LoadTheme(theme.clone()));
        }
        Ok(services)
    }

    /// The controls of a new run: a fresh stop and cancel, unpaused.
    fn new_run(&mut self, approval: ApprovalMode) -> RunControl {
        self.approval.send_replace(approval);
        let (handle, signal) = stop_pair();
        self.stop = Some(handle);
        self.cancel = CancelFlag::new();
        self.paused.send_replace(false);
        self.steering = Steering::new();
        RunControl {
            stop: signal,
            cancel: self.cancel.clone(),
            paused: self.paused.subscribe(),
            max_steps: self.max_steps,
            approval: self.approval.subscribe(),
            steering: self.steering.clone(),
        }
    }

    /// Hands a run to the browser actor, or says it is gone.
    fn send_run(&mut self, command: BrowserCommand) {
        if self.browser.send(command).is_err() {
            let _ = self.tx.send(AppEvent::RunEnded {
                error: Some("the browser is not running".into()),
            });
        }
    }

    /// Runs file work on the runtime's blocking pool (at once when the
    /// runtime is gone, at shutdown).
    fn off_the_loop(&self, work: impl FnOnce() + Send + 'static) {
        match &self.runtime {
            Some(runtime) => {
                runtime.spawn_blocking(work);
            }
            None => work(),
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
        let effect = match self.on_disk.work(effect) {
            Ok(work) => return self.off_the_loop(work),
            Err(effect) => effect,
        };
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
            Effect::StartRun {
                task,
                approval,
                fresh,
                start_url,
            } => {
                if let Err(why) = &self.model {
                    let _ = self.tx.send(AppEvent::RunEnded {
                        error: Some(why.clone()),
                    });
                    return;
                }
                let run = self.new_run(approval);
                let command = BrowserCommand::Run {
                    task,
                    run,
                    fresh,
                    start_url,
                };
                self.send_run(command);
            }
            Effect::HandBack { approval } => {
                let run = self.new_run(approval);
                self.send_run(BrowserCommand::HandBack { run });
            }
            Effect::Resume { plan, approval } => {
                if let Err(why) = &self.model {
                    let _ = self.tx.send(AppEvent::RunEnded {
                        error: Some(why.clone()),
                    });
                    return;
                }
                let run = self.new_run(approval);
                self.send_run(BrowserCommand::Resume { plan, run });
            }
            Effect::Steer(text) => self.steering.say(text),
            Effect::RetryStep(step) => self.steering.retry(step),
            Effect::NewConversation => {
                let _ = self.browser.send(BrowserCommand::NewConversation);
            }
            Effect::ReadResume(path) => {
                let (tx, dir) = (self.tx.clone(), self.sessions_dir.clone());
                self.off_the_loop(move || {
                    let _ = tx.send(AppEvent::ResumeReady(read_resume(path, &dir)));
                });
            }
            Effect::SetApprovalMode(mode) => {
                self.approval.send_replace(mode);
            }
            // Taken by `self.on_disk` before this match.
            Effect::ListSessions { .. }
            | Effect::OpenTrace(_)
            | Effect::ExportTrace { .. }
            | Effect::LoadReplayPicture { .. }
            | Effect::LoadTheme(_) => {}
            Effect::RunRecipe {
                name,
                params,
                approval,
            } => {
                let run = self.new_run(approval);
                // Without a model, `agent("…")` fails with its reason and
                // a failed step is not healed.
                let command = BrowserCommand::Recipe {
                    name,
                    params,
                    with_model: self.model.is_ok(),
                    run,
                    debug: None,
                };
                if self.browser.send(command).is_err() {
                    let _ = self.tx.send(AppEvent::RunEnded {
                        error: Some("the browser is not running".into()),
                    });
                }
            }
            Effect::CancelScript => self.cancel.cancel(),
            Effect::SaveState(path) => {
                if self
                    .browser
                    .send(BrowserCommand::SaveState { path })
                    .is_err()
                {
                    let _ = self.tx.send(AppEvent::Notice {
                        error: true,
                        text: "the browser is not running; nothing to save".into(),
                    });
                }
            }
            Effect::PickLocators { pick, element } => {
                if self
                    .browser
                    .send(BrowserCommand::Locators { pick, element })
                    .is_err()
                {
                    let _ = self.tx.send(AppEvent::Locators {
                        pick,
                        report: Err("the browser is not running".into()),
                    });
                }
            }
            Effect::Copy(text) => {
                // Drawn frames and this escape both go out on this thread,
                // so they never interleave.
                if let Err(error) = terminal::copy_to_clipboard(&text) {
                    tracing::warn!(%error, "copying to the terminal's clipboard");
                }
            }
            Effect::Record(on) => {
                if self.browser.send(BrowserCommand::Record(on)).is_err() {
                    let _ = self.tx.send(AppEvent::Notice {
                        error: true,
                        text: "the browser is not running; nothing to record".into(),
                    });
                    let _ = self.tx.send(AppEvent::RecordingStopped);
                }
            }
            Effect::SaveRecording { name, source } => {
                let (tx, path) = (
                    self.tx.clone(),
                    self.export_dir.join(format!("{name}.rhai")),
                );
                self.off_the_loop(move || {
                    let saved = crate::script::recording::write_new(&path, &source)
                        .map(|()| path.clone())
                        .map_err(|error| match error.kind() {
                            std::io::ErrorKind::AlreadyExists => format!(
                                "{} already exists; a recording never replaces a file",
                                path.display()
                            ),
                            _ => format!("{}: {error}", path.display()),
                        });
                    let _ = tx.send(AppEvent::RecordingSaved(saved));
                });
            }
            Effect::ExportSession { name } => {
                let events = self
                    .session
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .events()
                    .to_vec();
                let (tx, dir) = (self.tx.clone(), self.export_dir.clone());
                self.off_the_loop(move || {
                    let _ = tx.send(AppEvent::Exported(
                        export_session(&events, &dir, &name).map_err(ExportError::from),
                    ));
                });
            }
            Effect::StartDebug { start, approval } => self.start_debug(start, approval),
            Effect::Debug(command) => self.debug(command),
            Effect::StopRun => {
                // A script in a loop stops at once; the run at its next
                // check; a debugged recipe at its stop.
                self.cancel.cancel();
                if let Some(commands) = self
                    .debug_commands
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take()
                {
                    let _ = commands.send(crate::script::DebugCommand::Quit);
                }
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
            Effect::ShowPage(shown) => {
                self.show_page.send_replace(shown);
                if let Err(error) = terminal::capture_mouse(shown) {
                    tracing::warn!(%error, "switching the mouse report");
                }
            }
            Effect::PaneInput(pointer) => {
                if self
                    .browser
                    .send(BrowserCommand::PaneInput(pointer))
                    .is_err()
                {
                    let _ = self.tx.send(AppEvent::Notice {
                        error: true,
                        text: "the browser is not running".into(),
                    });
                }
            }
            Effect::RenderPicture(job) => {
                if let Some(pictures) = &self.pictures {
                    pictures.render(job);
                }
            }
            Effect::Quit => {
                self.cancel.cancel();
                if let Some(stop) = &self.stop {
                    stop.stop();
                }
            }
        }
    }
}
