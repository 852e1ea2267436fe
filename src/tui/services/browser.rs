//! The workbench's browser actor: it owns the session (built by
//! [`crate::session`] like every command's) and serves the loop's commands
//! one at a time: hand-typed actions, agent runs, recipe runs, highlights.

use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use serde_json::json;
use tokio::sync::{mpsc, oneshot, watch};

use crate::actions::{Action, ActionResult, RiskFacts};
use crate::agent::{Prior, Steering};
use crate::dom::PageState;
use crate::environment::{
    ApprovalDecision, ApprovalMode, ApprovalRequest, Approver, BoxFuture, Environment,
    EnvironmentError, LiveMode, PersonsOwn,
};
use crate::events::Event;
use crate::llm::StopSignal;
use crate::script::{CancelFlag, DebugCommand};
use crate::session::{
    Errand, Layer, Oversight, Prepared, RecipeChoice, ReplayOptions, Session, SessionEnvironment,
};
use crate::vision::{Screenshot, ShotError, ShotRegion, ShotRequest};

use super::super::error::BrowserFailure;
use super::super::event::AppEvent;
use super::record::{Forwarder, SessionRecord};
use crate::browser::record::{Input, Recorder};

/// The next input of the recording, if one runs (else never).
async fn next_recorded(recorder: &mut Option<Recorder>) -> Option<Input> {
    match recorder {
        Some(recorder) => recorder.next().await,
        None => std::future::pending().await,
    }
}

/// The person's answer to the page's dialog, once given (a modal closed
/// without one dismisses it); never while none waits.
async fn pending_answer(
    dialog: &mut Option<oneshot::Receiver<Option<String>>>,
) -> Option<Option<String>> {
    match dialog {
        Some(answer) => Some(answer.await.unwrap_or(None)),
        None => std::future::pending().await,
    }
}

/// Asks the person how to answer the page's dialog; the answer comes on
/// the receiver.
fn ask_about(
    kind: String,
    message: String,
    tx: &Sender<AppEvent>,
) -> oneshot::Receiver<Option<String>> {
    let (reply, answer) = oneshot::channel();
    let _ = tx.send(AppEvent::PageDialog {
        kind,
        message,
        reply,
    });
    answer
}

/// Answers the page's dialog as the person did (`Some` accepts, with the
/// text typed for a prompt); the recorder reports the answer as a step.
async fn answer_with(recorder: Option<&Recorder>, answer: Option<String>, tx: &Sender<AppEvent>) {
    let Some(recorder) = recorder else {
        return;
    };
    let accept = answer.is_some();
    let text = answer.filter(|t| !t.is_empty());
    if let Err(error) = recorder.answer_dialog(accept, text).await {
        let _ = tx.send(AppEvent::Notice {
            error: true,
            text: format!("the dialog was not answered: {error}"),
        });
    }
}

/// The person went on in a tab a click opened: the session drives it (its
/// dialogs wait for the person too), and the switch is a step.
async fn drive_new_tab(
    session: &mut Session,
    recorder: Option<&mut Recorder>,
    url: String,
    tx: &Sender<AppEvent>,
) {
    // The page's address, as a pattern: a query would be read as one.
    let page = url.split(['?', '#']).next().unwrap_or_default().to_string();
    let switch = Action::SwitchTab {
        tab: None,
        url: Some(page),
    };
    if let ActionResult::Failure { message, .. } = session.environment.execute(&switch).await {
        let _ = tx.send(AppEvent::Notice {
            error: true,
            text: format!("the workbench stays on this tab: {message}"),
        });
    }
    if let Some(recorder) = recorder {
        recorder.hold_dialogs_of(session.environment.inner().inner().tab());
    }
    let _ = tx.send(AppEvent::Recorded(Box::new(Input::SwitchTab { url })));
}

/// Work for the browser actor.
pub(super) enum BrowserCommand {
    /// Run an action typed by hand, then observe.
    Act {
        id: u64,
        action: Action,
        cancel: CancelFlag,
    },
    /// Run a loaded recipe (under the debugger when `debug` says so).
    Recipe {
        name: String,
        params: serde_json::Map<String, serde_json::Value>,
        with_model: bool,
        run: RunControl,
        debug: Option<DebugTarget>,
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
    /// Continue the run the model handed to the person.
    HandBack { run: RunControl },
    /// Forget the conversation; the next run starts a new trace.
    NewConversation,
    /// Answer an MCP client's call.
    Mcp {
        request: crate::mcp::McpRequest,
        run: RunControl,
    },
    /// Save cookies and local storage to a state file.
    SaveState { path: Option<std::path::PathBuf> },
    /// Start recording the person's actions on the page, or stop.
    Record(bool),
    /// The person's mouse on the page pane's picture.
    PaneInput(crate::browser::record::PaneInput),
    /// Read an element's locators for the locator picker.
    Locators {
        pick: u64,
        element: crate::script::PickedElement,
    },
    /// Close the browser.
    Shutdown,
}

/// A recipe run under the debugger: the file its recipe is in, and where
/// the debugger's command sender goes for the loop's keys to reach it.
pub(super) struct DebugTarget {
    pub file: std::path::PathBuf,
    pub commands: Arc<Mutex<Option<std::sync::mpsc::Sender<DebugCommand>>>>,
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

impl RunControl {
    /// The run's oversight: the person approves through the loop, in the
    /// mode they choose at each moment, with the run's step limit, stop,
    /// cancel and messages.
    fn oversight(&self, tx: &Sender<AppEvent>) -> Oversight {
        let asking = tx.clone();
        Oversight {
            approvers: Arc::new(move || {
                Box::new(WorkbenchApprover { tx: asking.clone() }) as Box<dyn Approver>
            }),
            approval: Some(LiveMode::following(self.approval.clone())),
            max_steps: Some(self.max_steps),
            stop: self.stop.clone(),
            cancel: self.cancel.clone(),
            steering: Some(self.steering.clone()),
        }
    }

    /// What the workbench wraps around the session's environment for the
    /// run: the pause, and the panes fed with every observation.
    fn layer(&self, tx: &Sender<AppEvent>, view: &PageView, picks: &PickQueue) -> WorkbenchLayer {
        WorkbenchLayer {
            tx: tx.clone(),
            paused: self.paused.clone(),
            stop: self.stop.clone(),
            view: view.clone(),
            picks: picks.clone(),
        }
    }
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
    match environment.screenshot(&request).await {
        Ok(shot) => {
            let _ = tx.send(AppEvent::Picture(Box::new(shot.clone())));
            Some(shot)
        }
        Err(ShotError::NoPictures) => None,
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
    inner: &'a mut SessionEnvironment,
    tx: Sender<AppEvent>,
    paused: watch::Receiver<bool>,
    stop: StopSignal,
    view: PageView,
    /// The pane's picture of the latest observation, which the model gets
    /// too when it asks for the same one.
    picture: Option<Screenshot>,
    /// The latest observation, whose listing an approval's index names.
    last: Option<PageState>,
    /// The locator picker's questions, answered while an approval waits.
    picks: PickQueue,
}

/// A locator picker's question (pick number and element) asked while a
/// run has the page.
struct PickAsk {
    pick: u64,
    element: crate::script::PickedElement,
}

/// Where the locator picker's questions wait while a run has the page:
/// the run's environment answers them while an approval waits (the page
/// is still then), and the run's end answers the rest.
#[derive(Clone)]
struct PickQueue {
    tx: mpsc::UnboundedSender<PickAsk>,
    rx: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<PickAsk>>>,
}

impl PickQueue {
    fn new() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        PickQueue {
            tx,
            rx: Arc::new(tokio::sync::Mutex::new(rx)),
        }
    }

    /// Answers every question still waiting with `why` there is no report.
    fn refuse_waiting(&self, tx: &Sender<AppEvent>, why: &str) {
        if let Ok(mut waiting) = self.rx.try_lock() {
            while let Ok(ask) = waiting.try_recv() {
                let _ = tx.send(AppEvent::Locators {
                    pick: ask.pick,
                    report: Err(why.to_string()),
                });
            }
        }
    }
}

/// Wraps the session's environment in a [`WorkbenchEnvironment`] for
/// each run the workbench starts.
struct WorkbenchLayer {
    tx: Sender<AppEvent>,
    paused: watch::Receiver<bool>,
    stop: StopSignal,
    view: PageView,
    picks: PickQueue,
}

impl Layer for WorkbenchLayer {
    type Wrapped<'a> = WorkbenchEnvironment<'a>;

    fn wrap<'a>(&'a self, inner: &'a mut SessionEnvironment) -> WorkbenchEnvironment<'a> {
        WorkbenchEnvironment {
            inner,
            tx: self.tx.clone(),
            paused: self.paused.clone(),
            stop: self.stop.clone(),
            view: self.view.clone(),
            picture: None,
            last: None,
            picks: self.picks.clone(),
        }
    }
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
        self.last = Some(page.clone());
        self.picture = None;
        if self.view.shown() {
            self.picture = send_picture(self.inner, &self.view, &self.tx).await;
        }
        Ok(page)
    }

    async fn screenshot(&mut self, request: &ShotRequest) -> Result<Screenshot, ShotError> {
        let step_picture = request.region == ShotRegion::Viewport
            && request.marks
            && request.width == self.view.width;
        if step_picture {
            if let Some(shot) = &self.picture {
                return Ok(shot.clone());
            }
        }
        let shot = self.inner.screenshot(request).await;
        if let (true, Ok(picture)) = (step_picture, &shot) {
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

    async fn while_approving<F>(&mut self, deciding: F) -> F::Output
    where
        F: std::future::Future + Send,
        F::Output: Send,
    {
        let picks = Arc::clone(&self.picks.rx);
        let mut asks = picks.lock().await;
        tokio::pin!(deciding);
        loop {
            tokio::select! {
                decided = &mut deciding => return decided,
                Some(ask) = asks.recv() => {
                    let tab = self.inner.inner().inner().tab();
                    let secrets = self.inner.secrets();
                    let element = ask.element.filled(secrets);
                    let report = crate::script::locator_report(tab, &element, self.last.as_ref())
                        .await
                        .map(|r| r.masked(secrets));
                    let _ = self.tx.send(AppEvent::Locators { pick: ask.pick, report });
                }
            }
        }
    }
}

/// Observes the page and sends it to the listing pane (and its picture to
/// the page pane while it is shown); the page, when it was observed.
async fn observe_and_send(
    session: &mut Session,
    tx: &Sender<AppEvent>,
    view: &PageView,
) -> Option<PageState> {
    match session.environment.observe().await {
        Ok(page) => {
            let _ = tx.send(AppEvent::Page(Box::new(page.clone())));
            if view.shown() {
                send_picture(&mut session.environment, view, tx).await;
            }
            Some(page)
        }
        Err(error) => {
            let _ = tx.send(AppEvent::Notice {
                error: true,
                text: format!("observing the page: {error}"),
            });
            None
        }
    }
}

/// What the approval record says of an action the person chose in the
/// workbench.
const PERSONS_OWN: &str = "the person's own action in the workbench";

/// Runs `action`, which the person chose in the workbench, along the
/// session's road: approved as theirs (a question it asks goes to them),
/// refused only by the policy. Its road events go out quietly: the action
/// log shows it as the person's own row.
async fn by_hand(
    session: &mut Session,
    action: Action,
    errand: Errand<'_>,
    tx: &Sender<AppEvent>,
    events: &mut Events<'_>,
) -> ActionResult {
    let approver =
        PersonsOwn::new(PERSONS_OWN).asking(Box::new(WorkbenchApprover { tx: tx.clone() }));
    let passage = session.perform(action, Box::new(approver), errand).await;
    events.forwarder.drain_persons(events.rx);
    passage.result().clone()
}

/// Outlines one listed element in the page, replacing the last outline.
async fn highlight(
    session: &mut Session,
    index: u32,
    page: Option<&PageState>,
    tx: &Sender<AppEvent>,
    events: &mut Events<'_>,
) {
    let catalog = session.catalog();
    let errand = Errand {
        step: 0,
        page,
        goal: "the workbench outlines the element selected in the listing",
    };
    for value in [
        json!({"clear_overlays": {}}),
        json!({"highlight": {"index": index}}),
    ] {
        let Ok(action) = catalog.parse(&value) else {
            return;
        };
        let result = by_hand(session, action, errand, tx, events).await;
        if !result.is_ok() {
            tracing::debug!(?result, index, "highlighting the selected element");
        }
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
            text: error.to_string(),
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
        picks: PickQueue::new(),
    };
    // The listing the person's hand-typed actions and highlights refer to.
    let mut page = observe_and_send(&mut session, &tx, &view).await;
    let disconnected = session.disconnected();
    tokio::pin!(disconnected);
    // The person's actions on the page, while `:record` records them.
    let mut recorder: Option<Recorder> = None;
    // A dialog of the page, waiting for the person's answer.
    let mut dialog: Option<oneshot::Receiver<Option<String>>> = None;
    loop {
        tokio::select! {
            Some(event) = events.rx.recv() => events.forwarder.forward(event),
            Some(input) = next_recorded(&mut recorder) => match input {
                Input::DialogOpened { kind, message } => dialog = Some(ask_about(kind, message, &tx)),
                Input::SwitchTab { url } => {
                    drive_new_tab(&mut session, recorder.as_mut(), url, &tx).await;
                    page = observe_and_send(&mut session, &tx, &view).await;
                }
                input => {
                    let _ = tx.send(AppEvent::Recorded(Box::new(input)));
                }
            },
            Some(answer) = pending_answer(&mut dialog) => {
                dialog = None;
                answer_with(recorder.as_ref(), answer, &tx).await;
                page = observe_and_send(&mut session, &tx, &view).await;
            }
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
                    highlight(&mut session, index, page.as_ref(), &tx, &mut events).await;
                }
            }
            command = commands.recv() => match command {
                None | Some(BrowserCommand::Shutdown) => break,
                Some(BrowserCommand::Act { id, action, cancel }) => {
                    session.environment.inner_mut().set_cancel(cancel);
                    let started = Instant::now();
                    // Numbered as the session record will number it.
                    let step = record.lock().unwrap_or_else(PoisonError::into_inner).base() + 1;
                    let errand = Errand {
                        step,
                        page: page.as_ref(),
                        goal: PERSONS_OWN,
                    };
                    let result =
                        by_hand(&mut session, action.clone(), errand, &tx, &mut events).await;
                    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                    // Recorded with the placeholder, never the secret.
                    let shown = session.secrets.mask_action(&session.catalog(), &action);
                    record
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .record_manual(&shown, &result, ms);
                    let _ = tx.send(AppEvent::ActionFinished { id, result, ms });
                    page = observe_and_send(&mut session, &tx, &view).await;
                }
                Some(BrowserCommand::PaneInput(pointer)) => {
                    // A click that opens a dialog is not over until the
                    // person answers it, which they do here meanwhile; a
                    // tab it opened is driven once it is over.
                    let mut switched = None;
                    let sent = {
                        let tab = session.environment.inner().inner().tab();
                        let sending = pointer.send(tab);
                        tokio::pin!(sending);
                        loop {
                            tokio::select! {
                                sent = &mut sending => break sent,
                                Some(input) = next_recorded(&mut recorder) => match input {
                                    Input::DialogOpened { kind, message } => {
                                        dialog = Some(ask_about(kind, message, &tx));
                                    }
                                    Input::SwitchTab { url } => switched = Some(url),
                                    input => {
                                        let _ = tx.send(AppEvent::Recorded(Box::new(input)));
                                    }
                                },
                                Some(answer) = pending_answer(&mut dialog) => {
                                    dialog = None;
                                    answer_with(recorder.as_ref(), answer, &tx).await;
                                }
                            }
                        }
                    };
                    if let Some(url) = switched {
                        drive_new_tab(&mut session, recorder.as_mut(), url, &tx).await;
                    }
                    if let Err(error) = sent {
                        let _ = tx.send(AppEvent::Notice {
                            error: true,
                            text: format!("the page did not take the mouse or the keys: {error}"),
                        });
                    }
                    page = observe_and_send(&mut session, &tx, &view).await;
                }
                Some(BrowserCommand::Locators { pick, element }) => {
                    let tab = session.environment.inner().inner().tab();
                    let secrets = session.environment.secrets();
                    let element = element.filled(secrets);
                    let report = crate::script::locator_report(tab, &element, page.as_ref())
                        .await
                        .map(|r| r.masked(secrets));
                    let _ = tx.send(AppEvent::Locators { pick, report });
                }
                Some(BrowserCommand::Record(true)) => {
                    if recorder.is_none() {
                        let tab = session.environment.inner().inner().tab();
                        match Recorder::start(tab).await {
                            Ok(started) => recorder = Some(started),
                            Err(error) => {
                                let _ = tx.send(AppEvent::Notice {
                                    error: true,
                                    text: format!("the recorder could not start: {error}"),
                                });
                                let _ = tx.send(AppEvent::RecordingStopped);
                            }
                        }
                    }
                }
                Some(BrowserCommand::Record(false)) => {
                    if let Some(stopping) = recorder.take() {
                        let tab = session.environment.inner().inner().tab();
                        for input in stopping.stop(tab).await {
                            let _ = tx.send(AppEvent::Recorded(Box::new(input)));
                        }
                    }
                    let _ = tx.send(AppEvent::RecordingStopped);
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
                        open_page(&mut session, &url, &tx, &mut events).await;
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
                    page = observe_and_send(&mut session, &tx, &view).await;
                }
                Some(BrowserCommand::Resume { plan, mut run }) => {
                    // The resumed run writes a trace of its own, which names
                    // the one it continues and carries what that one reached.
                    events.forwarder.new_conversation();
                    let point = plan.point;
                    note_sign_in(&session, &point.settings, &tx);
                    // A run handed to the person goes on on the page they
                    // left, wherever that is.
                    if !point.url.is_empty() && point.prior.handed_back.is_none() {
                        let now = session.environment.current_url().await.unwrap_or_default();
                        if now != point.url {
                            open_page(&mut session, &point.url, &tx, &mut events).await;
                        }
                    }
                    run.max_steps = point.max_steps.max(1);
                    let agent_run = AgentRun { task: point.task, prior: point.prior, run };
                    let shutting_down =
                        run_agent(&mut session, agent_run, &tx, &view, &mut commands, &mut events).await;
                    if shutting_down {
                        break;
                    }
                    page = observe_and_send(&mut session, &tx, &view).await;
                }
                Some(BrowserCommand::HandBack { mut run }) => {
                    // The run goes on from what its events so far tell,
                    // in the same trace; its first step tells the model
                    // what the person changed.
                    let from = events
                        .forwarder
                        .trace
                        .as_ref()
                        .map(|t| t.path().display().to_string())
                        .unwrap_or_default();
                    let Some(point) = events.forwarder.conversation.resume_point(&from) else {
                        let _ = tx.send(AppEvent::RunEnded {
                            error: Some("no run waits for a hand-back".into()),
                        });
                        continue;
                    };
                    run.max_steps = point.max_steps.max(1);
                    let agent_run = AgentRun { task: point.task, prior: point.prior, run };
                    let shutting_down =
                        run_agent(&mut session, agent_run, &tx, &view, &mut commands, &mut events).await;
                    if shutting_down {
                        break;
                    }
                    page = observe_and_send(&mut session, &tx, &view).await;
                }
                Some(BrowserCommand::NewConversation) => events.forwarder.new_conversation(),
                Some(BrowserCommand::Mcp { request, run }) => {
                    mcp_state.set_client(request.client.as_deref());
                    let oversight = run.oversight(&tx);
                    let layer = run.layer(&tx, &view, &events.picks);
                    let approver = (oversight.approvers)();
                    let (setup, environment) = session.enter(&oversight, &layer);
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
                Some(BrowserCommand::Recipe { name, params, with_model, run, debug }) => {
                    let recipe = RecipeCall { name, params, with_model, debug };
                    let shutting_down =
                        run_recipe_here(&mut session, recipe, run, &tx, &view, &mut commands, &mut events).await;
                    if shutting_down {
                        break;
                    }
                    page = observe_and_send(&mut session, &tx, &view).await;
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
    /// The locator picker's questions while a run has the page.
    picks: PickQueue,
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
            | BrowserCommand::Resume { .. }
            | BrowserCommand::HandBack { .. } => {
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
            BrowserCommand::PaneInput(_) => {
                let _ = tx.send(AppEvent::Notice {
                    error: true,
                    text: format!("the page did not take the mouse or the keys: {why}"),
                });
            }
            BrowserCommand::Locators { pick, .. } => {
                let _ = tx.send(AppEvent::Locators {
                    pick,
                    report: Err(format!("no locators: {why}")),
                });
            }
            BrowserCommand::Record(_) => {
                let _ = tx.send(AppEvent::Notice {
                    error: true,
                    text: format!("nothing recorded: {why}"),
                });
                let _ = tx.send(AppEvent::RecordingStopped);
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
                    | BrowserCommand::HandBack { .. }
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
                // The run's environment answers while an approval waits,
                // when the page holds still (the workbench asks only then).
                Some(BrowserCommand::Locators { pick, element }) => {
                    let _ = events.picks.tx.send(PickAsk { pick, element });
                }
                Some(BrowserCommand::PaneInput(_)) => {
                    let _ = tx.send(AppEvent::Notice {
                        error: true,
                        text: format!("{busy}; the page takes the mouse and the keys once it ends"),
                    });
                }
                // The workbench starts and stops recordings only between
                // runs; one asked for meanwhile is not started.
                Some(BrowserCommand::Record(_)) => {
                    let _ = tx.send(AppEvent::Notice {
                        error: true,
                        text: format!("{busy}; record once the run ends"),
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
    events.picks.refuse_waiting(
        tx,
        "the approval was decided before the page answered; L reads the page now",
    );
    (output, shutting_down)
}

/// Opens `url` in the session's tab before a run, as the person's own
/// `navigate`; a page that does not open is said, and the run starts
/// where the tab is.
async fn open_page(
    session: &mut Session,
    url: &str,
    tx: &Sender<AppEvent>,
    events: &mut Events<'_>,
) {
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
    let errand = Errand {
        step: 0,
        page: None,
        goal: "the page the person's task starts on",
    };
    if let ActionResult::Failure { reason, message } =
        by_hand(session, navigate, errand, tx, events).await
    {
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
    let (oversight, layer) = (run.oversight(tx), run.layer(tx, view, &events.picks));
    let busy = "the agent is running";
    if let Some(dir) = session.config.agent.cache.clone() {
        // Through the task cache (config `agent.cache`): a stored recipe
        // replays with no model call, healing what no longer runs; how it
        // ended reaches the panes as `done` and `cache` events.
        let cache = crate::session::TaskCache::new(dir);
        let running = session.run_task_cached(&task, &cache, oversight, &layer);
        let (_, shutting_down) =
            while_running(running, busy, &run.cancel, tx, commands, events).await;
        let _ = tx.send(AppEvent::RunEnded { error: None });
        return shutting_down;
    }
    let running = session.run_agent(&task, prior, oversight, &layer);
    let (outcome, shutting_down) =
        while_running(running, busy, &run.cancel, tx, commands, events).await;
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
    debug: Option<DebugTarget>,
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
    let mut options = ReplayOptions::overseen(run.oversight(tx));
    options.model = recipe.with_model;
    let layer = run.layer(tx, view, &events.picks);
    let choice = match &recipe.debug {
        Some(target) => {
            // The same road as `--debug=cli`: the recipe of its file, with
            // a debugger attached; its reports go to the loop.
            let (debugged, mut controller) = options.debugged();
            options = debugged;
            *target
                .commands
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(controller.commands.clone());
            let reports = tx.clone();
            tokio::spawn(async move {
                while let Some(report) = controller.reports.recv().await {
                    if reports.send(AppEvent::Debug(report)).is_err() {
                        break;
                    }
                }
            });
            RecipeChoice::InFile {
                file: &target.file,
                name: Some(&recipe.name),
            }
        }
        None => RecipeChoice::Loaded(&recipe.name),
    };
    let running = session.run_recipe(choice, recipe.params, options, &layer);
    let (outcome, shutting_down) = while_running(
        running,
        "a recipe is running",
        &run.cancel,
        tx,
        commands,
        events,
    )
    .await;
    // How the recipe itself ended reaches the panes as its `done` event;
    // only a recipe that could not start is said here.
    let _ = tx.send(AppEvent::RunEnded {
        error: outcome.err().map(|e| e.to_string()),
    });
    shutting_down
}
