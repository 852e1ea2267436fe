//! The workbench's browser actor: it owns the session (built by
//! [`crate::session`] like every command's) and serves the loop's commands
//! one at a time: hand-typed actions, agent runs, recipe runs, highlights.

use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use serde_json::json;
use tokio::sync::{mpsc, oneshot, watch};

use crate::actions::{Action, ActionResult, Catalog, RiskFacts};
use crate::agent::{Prior, Steering};
use crate::dom::PageState;
use crate::environment::{
    ApprovalDecision, ApprovalMode, ApprovalRequest, Approver, BoxFuture, Environment,
    EnvironmentError, LiveMode, Masked,
};
use crate::events::Event;
use crate::llm::StopSignal;
use crate::script::{CancelFlag, ScriptEnvironment};
use crate::session::{run_recipe_with, Prepared, RecipeRun, RewriteTarget, Session};
use crate::vision::{Screenshot, ShotRegion, ShotRequest};

use super::super::error::BrowserFailure;
use super::super::event::AppEvent;
use super::record::{Forwarder, SessionRecord};

/// Work for the browser actor.
pub(super) enum BrowserCommand {
    /// Run an action typed by hand, then observe.
    Act {
        id: u64,
        action: Action,
        cancel: CancelFlag,
    },
    /// Run a loaded recipe.
    Recipe {
        name: String,
        params: serde_json::Map<String, serde_json::Value>,
        with_model: bool,
        run: RunControl,
    },
    /// Run the agent on a task: a follow-up of the conversation, or a
    /// fresh one; from `start_url` when given.
    Run {
        task: String,
        run: RunControl,
        fresh: bool,
        start_url: Option<String>,
    },
    /// Continue a run from its trace.
    Resume {
        plan: Box<crate::session::ResumePlan>,
        run: RunControl,
    },
    /// Forget the conversation; the next run starts a new trace.
    NewConversation,
    /// Answer an MCP client's call.
    Mcp {
        request: crate::mcp::McpRequest,
        run: RunControl,
    },
    /// Save cookies and local storage to a state file.
    SaveState { path: Option<std::path::PathBuf> },
    /// Close the browser.
    Shutdown,
}

/// How the loop steers a run: stop, cancel a script, pause, the step
/// limit, and the approval mode the person has chosen at each moment (the
/// road reads it for every action).
pub(super) struct RunControl {
    pub stop: StopSignal,
    pub cancel: CancelFlag,
    pub paused: watch::Receiver<bool>,
    pub max_steps: usize,
    pub approval: watch::Receiver<ApprovalMode>,
    /// The person's messages and retries for the run.
    pub steering: Steering,
}

/// Answers approvals and questions by asking the person through the loop.
/// The road asks it only when the live mode says a step needs a yes.
struct WorkbenchApprover {
    tx: Sender<AppEvent>,
}

impl Approver for WorkbenchApprover {
    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
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

/// Whether the page pane is shown, and the width its pictures are taken
/// at (the model's, so one picture serves both).
#[derive(Debug, Clone)]
pub(super) struct PageView {
    pub shown: watch::Receiver<bool>,
    pub width: u32,
}

impl PageView {
    fn shown(&self) -> bool {
        *self.shown.borrow()
    }
}

/// Takes the marked picture of the page as last observed and sends it to
/// the page pane; the picture, when one was taken.
async fn send_picture<E: Environment>(
    environment: &mut E,
    view: &PageView,
    tx: &Sender<AppEvent>,
) -> Option<Screenshot> {
    let request = ShotRequest::step(view.width);
    match environment.screenshot(&request).await? {
        Ok(shot) => {
            let _ = tx.send(AppEvent::Picture(Box::new(shot.clone())));
            Some(shot)
        }
        Err(error) => {
            let _ = tx.send(AppEvent::Notice {
                error: true,
                text: format!("the page picture failed: {error}"),
            });
            None
        }
    }
}

/// The session's environment as a run in the workbench sees it: every
/// observation also goes to the listing pane (and its picture to the page
/// pane while it is shown), and a pause holds the run before its next
/// observation.
struct WorkbenchEnvironment<'a> {
    inner: &'a mut Masked<ScriptEnvironment>,
    tx: Sender<AppEvent>,
    paused: watch::Receiver<bool>,
    stop: StopSignal,
    view: PageView,
    /// The pane's picture of the latest observation, which the model gets
    /// too when it asks for the same one.
    picture: Option<Screenshot>,
}

impl WorkbenchEnvironment<'_> {
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

impl Environment for WorkbenchEnvironment<'_> {
    async fn observe(&mut self) -> Result<PageState, EnvironmentError> {
        self.wait_while_paused().await;
        let page = self.inner.observe().await?;
        let _ = self.tx.send(AppEvent::Page(Box::new(page.clone())));
        self.picture = None;
        if self.view.shown() {
            self.picture = send_picture(self.inner, &self.view, &self.tx).await;
        }
        Ok(page)
    }

    async fn screenshot(&mut self, request: &ShotRequest) -> Option<Result<Screenshot, String>> {
        let step_picture = request.region == ShotRegion::Viewport
            && request.marks
            && request.width == self.view.width;
        if step_picture {
            if let Some(shot) = &self.picture {
                return Some(Ok(shot.clone()));
            }
        }
        let shot = self.inner.screenshot(request).await;
        if let (true, Some(Ok(picture))) = (step_picture, &shot) {
            // The model's picture is the person's too.
            let _ = self.tx.send(AppEvent::Picture(Box::new(picture.clone())));
            self.picture = Some(picture.clone());
        }
        shot
    }

    async fn execute(&mut self, action: &Action) -> ActionResult {
        self.inner.execute(action).await
    }

    async fn current_url(&mut self) -> Option<String> {
        self.inner.current_url().await
    }

    async fn risk_facts(&mut self, action: &Action, page: &PageState) -> RiskFacts {
        self.inner.risk_facts(action, page).await
    }

    async fn describe_target(
        &mut self,
        target: &crate::actions::Target,
        page: &PageState,
    ) -> Option<String> {
        self.inner.describe_target(target, page).await
    }

    async fn locate(
        &mut self,
        locators: &[crate::dom::Locator],
    ) -> Result<crate::dom::Location, crate::dom::LocateFailure> {
        self.inner.locate(locators).await
    }
}

async fn observe_and_send(session: &mut Session, tx: &Sender<AppEvent>, view: &PageView) {
    match session.environment.observe().await {
        Ok(page) => {
            let _ = tx.send(AppEvent::Page(Box::new(page)));
            if view.shown() {
                send_picture(&mut session.environment, view, tx).await;
            }
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
async fn highlight(env: &mut Masked<ScriptEnvironment>, index: u32) {
    let catalog = Catalog::builtin();
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

/// What the browser actor starts from.
pub(super) struct BrowserSetup {
    pub prepared: Prepared,
    pub url: String,
    pub record: Arc<Mutex<SessionRecord>>,
    /// Woken when the scripts reload, when an MCP server lists them as
    /// tools.
    pub tools_changed: Option<Arc<tokio::sync::Notify>>,
    /// The MCP client gets whole pages, never deltas.
    pub mcp_whole_pages: bool,
}

/// Owns the session: starts it, opens the page, then serves commands
/// until shut down.
pub(super) async fn browser_task(
    setup: BrowserSetup,
    tx: Sender<AppEvent>,
    mut commands: mpsc::UnboundedReceiver<BrowserCommand>,
    mut highlights: watch::Receiver<Option<u32>>,
    mut closing: watch::Receiver<bool>,
    mut shown: watch::Receiver<bool>,
) {
    let BrowserSetup {
        prepared,
        url,
        record,
        tools_changed,
        mcp_whole_pages,
    } = setup;
    let sessions_dir = prepared.config.paths.sessions.clone();
    let view = PageView {
        shown: shown.clone(),
        width: prepared.config.llm.image_width,
    };
    let (events, mut events_rx) = mpsc::unbounded_channel::<Event>();
    // Quitting while Chromium starts or the first page loads must not wait
    // for either: dropping the half-started session closes the browser.
    let started = tokio::select! {
        started = prepared.start(Some(&url), events) => started,
        _ = closing.wait_for(|closing| *closing) => return,
    };
    let mut session = match started {
        Ok(session) => session,
        Err(error) => {
            let _ = tx.send(AppEvent::BrowserFailed(BrowserFailure::Start(error)));
            refuse_all(&mut commands, &tx, "the browser did not start").await;
            return;
        }
    };
    if let Err(error) = &session.opened {
        let _ = tx.send(AppEvent::Notice {
            error: true,
            text: error.clone(),
        });
    }
    let _ = tx.send(AppEvent::BrowserReady { url });
    // Every event of the session (runs, reloads, navigations the guard
    // refused between runs) reaches the panes through one forwarder.
    let mut forwarder = Forwarder {
        tx: tx.clone(),
        sessions_dir,
        record: Arc::clone(&record),
        sitemaps: Arc::clone(&session.sitemaps),
        scripts: session.scripts.clone(),
        depth: 0,
        trace: None,
        base: 0,
        whole_session: tools_changed.is_some(),
        tools_changed,
        conversation: crate::agent::Conversation::new(),
    };
    let mut mcp_state = crate::mcp::CallState::new(mcp_whole_pages);
    let mut events = Events {
        rx: &mut events_rx,
        forwarder: &mut forwarder,
    };
    observe_and_send(&mut session, &tx, &view).await;
    let disconnected = session.disconnected();
    tokio::pin!(disconnected);
    loop {
        tokio::select! {
            Some(event) = events.rx.recv() => events.forwarder.forward(event),
            why = &mut disconnected => {
                let _ = tx.send(AppEvent::BrowserFailed(BrowserFailure::Gone { why }));
                refuse_all(&mut commands, &tx, "the browser went away").await;
                return;
            }
            changed = shown.changed() => {
                if changed.is_err() {
                    continue;
                }
                if *shown.borrow_and_update() {
                    send_picture(&mut session.environment, &view, &tx).await;
                }
            }
            changed = highlights.changed() => {
                if changed.is_err() {
                    continue;
                }
                let latest = *highlights.borrow_and_update();
                if let Some(index) = latest {
                    highlight(&mut session.environment, index).await;
                }
            }
            command = commands.recv() => match command {
                None | Some(BrowserCommand::Shutdown) => break,
                Some(BrowserCommand::Act { id, action, cancel }) => {
                    session.environment.inner_mut().set_cancel(cancel);
                    let started = Instant::now();
                    let result = session.act(&action).await;
                    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                    // Recorded with the placeholder, never the secret.
                    let shown = session.secrets.mask_action(&session.catalog(), &action);
                    record
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .record_manual(&shown, &result, ms);
                    let _ = tx.send(AppEvent::ActionFinished { id, result, ms });
                    observe_and_send(&mut session, &tx, &view).await;
                }
                Some(BrowserCommand::SaveState { path }) => {
                    let (error, text) = match session.save_state(path.as_deref()).await {
                        Ok(text) => (false, text),
                        Err(why) => (true, why.to_string()),
                    };
                    let _ = tx.send(AppEvent::Notice { error, text });
                }
                Some(BrowserCommand::Run { task, run, fresh, start_url }) => {
                    if fresh {
                        events.forwarder.new_conversation();
                    }
                    if let Some(url) = start_url {
                        open_page(&mut session, &url, &tx).await;
                    }
                    let prior = if fresh {
                        Prior::fresh()
                    } else {
                        events.forwarder.conversation.follow_up()
                    };
                    let agent_run = AgentRun { task, prior, run };
                    let shutting_down =
                        run_agent(&mut session, agent_run, &tx, &view, &mut commands, &mut events).await;
                    if shutting_down {
                        break;
                    }
                    observe_and_send(&mut session, &tx, &view).await;
                }
                Some(BrowserCommand::Resume { plan, mut run }) => {
                    // The resumed run writes a trace of its own, which names
                    // the one it continues and carries what that one reached.
                    events.forwarder.new_conversation();
                    let point = plan.point;
                    note_sign_in(&session, &point.settings, &tx);
                    if !point.url.is_empty() {
                        let now = session.environment.current_url().await.unwrap_or_default();
                        if now != point.url {
                            open_page(&mut session, &point.url, &tx).await;
                        }
                    }
                    run.max_steps = point.max_steps.max(1);
                    let agent_run = AgentRun { task: point.task, prior: point.prior, run };
                    let shutting_down =
                        run_agent(&mut session, agent_run, &tx, &view, &mut commands, &mut events).await;
                    if shutting_down {
                        break;
                    }
                    observe_and_send(&mut session, &tx, &view).await;
                }
                Some(BrowserCommand::NewConversation) => events.forwarder.new_conversation(),
                Some(BrowserCommand::Mcp { request, run }) => {
                    mcp_state.set_client(request.client.as_deref());
                    let mut setup = session.agent_setup();
                    setup.approval = LiveMode::following(run.approval.clone());
                    let (environment, approver) = steered(&mut session, &run, &tx, &view);
                    let answering = crate::mcp::answer(
                        environment,
                        &setup,
                        approver,
                        &mut mcp_state,
                        request.call,
                    );
                    let (outcome, shutting_down) = while_running(
                        answering,
                        "an MCP call is running",
                        &run.cancel,
                        &tx,
                        &mut commands,
                        &mut events,
                    )
                    .await;
                    let _ = request.reply.send(outcome);
                    if shutting_down {
                        break;
                    }
                }
                Some(BrowserCommand::Recipe { name, params, with_model, run }) => {
                    let recipe = RecipeCall { name, params, with_model };
                    let shutting_down =
                        run_recipe_here(&mut session, recipe, run, &tx, &view, &mut commands, &mut events).await;
                    if shutting_down {
                        break;
                    }
                    observe_and_send(&mut session, &tx, &view).await;
                }
            },
        }
    }
    session.close().await;
    events.forwarder.drain(events.rx);
}

/// The session's events and where they go, for the loops that wait on
/// them.
struct Events<'a> {
    rx: &'a mut mpsc::UnboundedReceiver<Event>,
    forwarder: &'a mut Forwarder,
}

/// Answers an MCP call that cannot run now.
fn refuse_mcp(request: crate::mcp::McpRequest, why: &str) {
    let result = ActionResult::blocked(why);
    let _ = request.reply.send(crate::mcp::CallOutcome {
        ok: false,
        body: json!({ "result": result }),
    });
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
            BrowserCommand::Run { .. }
            | BrowserCommand::Recipe { .. }
            | BrowserCommand::Resume { .. } => {
                let _ = tx.send(AppEvent::RunEnded {
                    error: Some(why.to_string()),
                });
            }
            BrowserCommand::NewConversation => {}
            BrowserCommand::Mcp { request, .. } => refuse_mcp(request, why),
            BrowserCommand::SaveState { .. } => {
                let _ = tx.send(AppEvent::Notice {
                    error: true,
                    text: format!("state not saved: {why}"),
                });
            }
            BrowserCommand::Shutdown => return,
        }
    }
}

/// Drives `running` to its end while answering the commands that arrive
/// meanwhile (one run at a time); returns its output and whether a
/// shutdown came in.
async fn while_running<T>(
    running: impl std::future::Future<Output = T>,
    busy: &str,
    cancel: &CancelFlag,
    tx: &Sender<AppEvent>,
    commands: &mut mpsc::UnboundedReceiver<BrowserCommand>,
    events: &mut Events<'_>,
) -> (T, bool) {
    let mut shutting_down = false;
    tokio::pin!(running);
    let output = loop {
        tokio::select! {
            output = &mut running => break output,
            Some(event) = events.rx.recv() => events.forwarder.forward(event),
            command = commands.recv(), if !shutting_down => match command {
                Some(BrowserCommand::Act { id, .. }) => {
                    let _ = tx.send(AppEvent::ActionFinished {
                        id,
                        result: ActionResult::blocked(format!("{busy}; stop it before acting by hand")),
                        ms: 0,
                    });
                }
                Some(
                    BrowserCommand::Run { .. }
                    | BrowserCommand::Recipe { .. }
                    | BrowserCommand::Resume { .. }
                    | BrowserCommand::NewConversation,
                ) => {
                    let _ = tx.send(AppEvent::Notice {
                        error: true,
                        text: "a run is already in progress".into(),
                    });
                }
                Some(BrowserCommand::Mcp { request, .. }) => {
                    refuse_mcp(request, &format!("{busy}; try again when it has ended"));
                }
                Some(BrowserCommand::SaveState { .. }) => {
                    let _ = tx.send(AppEvent::Notice {
                        error: true,
                        text: format!("state not saved: {busy}; save it once the run ends"),
                    });
                }
                Some(BrowserCommand::Shutdown) | None => {
                    shutting_down = true;
                    cancel.cancel();
                }
            },
        }
    };
    // Everything the run said goes out before the caller says it ended.
    events.forwarder.drain(events.rx);
    (output, shutting_down)
}

/// The session's environment and the person's approvals, as a run steered
/// by `run` sees them.
fn steered<'a>(
    session: &'a mut Session,
    run: &RunControl,
    tx: &Sender<AppEvent>,
    view: &PageView,
) -> (WorkbenchEnvironment<'a>, Box<dyn Approver>) {
    session
        .environment
        .inner_mut()
        .set_cancel(run.cancel.clone());
    let approver = WorkbenchApprover { tx: tx.clone() };
    let environment = WorkbenchEnvironment {
        inner: &mut session.environment,
        tx: tx.clone(),
        paused: run.paused.clone(),
        stop: run.stop.clone(),
        view: view.clone(),
        picture: None,
    };
    (environment, Box::new(approver))
}

/// Opens `url` in the session's tab before a run; a page that does not
/// open is said, and the run starts where the tab is.
async fn open_page(session: &mut Session, url: &str, tx: &Sender<AppEvent>) {
    let navigate = match session.catalog().parse(&json!({"navigate": {"url": url}})) {
        Ok(action) => action,
        Err(error) => {
            let _ = tx.send(AppEvent::Notice {
                error: true,
                text: format!("cannot open {url}: {error}"),
            });
            return;
        }
    };
    if let ActionResult::Failure { reason, message } = session.act(&navigate).await {
        let _ = tx.send(AppEvent::Notice {
            error: true,
            text: format!("could not open {url} ({reason}): {message}"),
        });
    }
}

/// Says when the resumed run's session had a profile or state file this
/// one lacks: the browser is already running, so only `webagent resume`
/// can start it with them.
fn note_sign_in(session: &Session, settings: &crate::events::RunSettings, tx: &Sender<AppEvent>) {
    let config = &session.config.browser;
    let same = |theirs: &Option<String>, ours: &Option<std::path::PathBuf>| {
        theirs.is_none()
            || theirs.as_deref() == ours.as_ref().map(|p| p.display().to_string()).as_deref()
    };
    if !same(&settings.profile, &config.profile) || !same(&settings.state, &config.state) {
        let _ = tx.send(AppEvent::Notice {
            error: true,
            text: format!(
                "the run used {}; this workbench's browser does not: `webagent resume TRACE` \
                 starts one with it",
                [
                    settings.profile.as_ref().map(|p| format!("profile {p}")),
                    settings.state.as_ref().map(|s| format!("state {s}")),
                ]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" and ")
            ),
        });
    }
}

/// An agent run to start: its task, what it starts from, its controls.
struct AgentRun {
    task: String,
    prior: Prior,
    run: RunControl,
}

/// Runs the agent on the session's tab; returns whether a shutdown came
/// in meanwhile.
async fn run_agent(
    session: &mut Session,
    agent_run: AgentRun,
    tx: &Sender<AppEvent>,
    view: &PageView,
    commands: &mut mpsc::UnboundedReceiver<BrowserCommand>,
    events: &mut Events<'_>,
) -> bool {
    let AgentRun { task, prior, run } = agent_run;
    if let Err(why) = session.model() {
        let _ = tx.send(AppEvent::RunEnded {
            error: Some(why.to_string()),
        });
        return false;
    }
    if let Some(dir) = session.config.agent.cache.clone() {
        return run_cached_here(session, task, dir, run, tx, view, commands, events).await;
    }
    let mut setup = session.agent_setup();
    setup.config.max_steps = run.max_steps;
    // The road reads the mode the person has chosen at each action.
    setup.approval = LiveMode::following(run.approval.clone());
    let (environment, approver) = steered(session, &run, tx, view);
    let mut agent = setup
        .agent(environment, approver, run.stop.clone())
        .with_steering(run.steering.clone());
    let (outcome, shutting_down) = while_running(
        agent.run_with(&task, prior),
        "the agent is running",
        &run.cancel,
        tx,
        commands,
        events,
    )
    .await;
    drop(agent);
    let _ = tx.send(AppEvent::RunEnded {
        error: outcome.err().map(|e| e.to_string()),
    });
    shutting_down
}

/// A recipe the person asked for: its name, its parameters (already
/// checked) and whether a model may answer its sub-goals and heal it.
struct RecipeCall {
    name: String,
    params: serde_json::Map<String, serde_json::Value>,
    with_model: bool,
}

/// Runs a recipe on the session's tab, its steps through the person's
/// approval gate; with a model, `agent("…")` sub-goals are answered and a
/// step that no longer runs is healed, the repaired recipe written next
/// to the original (`NAME.healed.rhai`) once the person approved the
/// rewrite. Returns whether a shutdown came in meanwhile.
async fn run_recipe_here(
    session: &mut Session,
    recipe: RecipeCall,
    run: RunControl,
    tx: &Sender<AppEvent>,
    view: &PageView,
    commands: &mut mpsc::UnboundedReceiver<BrowserCommand>,
    events: &mut Events<'_>,
) -> bool {
    let mut setup = session.agent_setup();
    setup.config.max_steps = run.max_steps;
    setup.approval = LiveMode::following(run.approval.clone());
    let name = recipe.name;
    let mut recipe_run = RecipeRun::new(name.clone(), format!("recipe {name}"));
    recipe_run.params = recipe.params;
    if recipe.with_model && session.model().is_ok() {
        let asking = tx.clone();
        let approvers: crate::session::ApproverFactory = Arc::new(move || {
            Box::new(WorkbenchApprover { tx: asking.clone() }) as Box<dyn Approver>
        });
        recipe_run = recipe_run
            .with_sub_agent(&setup, &approvers, &run.stop)
            .with_healer(&setup, &approvers, &run.stop);
        let file = session
            .scripts
            .recipes()
            .into_iter()
            .find(|r| r.name == name)
            .map(|r| std::path::PathBuf::from(r.file));
        recipe_run.rewrite = file.map(|file| RewriteTarget::for_file(&file, false));
    }
    let (environment, approver) = steered(session, &run, tx, view);
    let cancel = run.cancel.clone();
    let running = run_recipe_with(&setup, environment, recipe_run, approver, &cancel);
    let (_, shutting_down) = while_running(
        running,
        "a recipe is running",
        &run.cancel,
        tx,
        commands,
        events,
    )
    .await;
    let _ = tx.send(AppEvent::RunEnded { error: None });
    shutting_down
}

/// Runs a task through the task cache (config `agent.cache`): a stored
/// recipe replays with no model call, healing what no longer runs, and
/// the `cache` event puts the state in the status line and the log.
// The same channels and controls as `run_agent`.
#[allow(clippy::too_many_arguments)]
async fn run_cached_here(
    session: &mut Session,
    task: String,
    dir: std::path::PathBuf,
    run: RunControl,
    tx: &Sender<AppEvent>,
    view: &PageView,
    commands: &mut mpsc::UnboundedReceiver<BrowserCommand>,
    events: &mut Events<'_>,
) -> bool {
    let mut setup = session.agent_setup();
    setup.config.max_steps = run.max_steps;
    setup.approval = LiveMode::following(run.approval.clone());
    let asking = tx.clone();
    let approvers: crate::session::ApproverFactory =
        Arc::new(move || Box::new(WorkbenchApprover { tx: asking.clone() }) as Box<dyn Approver>);
    let cache = crate::session::TaskCache::new(dir);
    let cached = crate::session::CachedRun {
        cache: &cache,
        approvers,
        stop: run.stop.clone(),
        cancel: run.cancel.clone(),
        model: true,
    };
    let (mut environment, _) = steered(session, &run, tx, view);
    let running = crate::session::run_cached(&setup, &mut environment, &task, cached);
    // How it ended reaches the panes as `done` and `cache` events.
    let (_, shutting_down) = while_running(
        running,
        "the agent is running",
        &run.cancel,
        tx,
        commands,
        events,
    )
    .await;
    let _ = tx.send(AppEvent::RunEnded { error: None });
    shutting_down
}
