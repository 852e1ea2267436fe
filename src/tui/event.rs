//! The one event type the workbench loop receives, and the effects its
//! update asks the services to carry out.

use crossterm::event::KeyEvent;
use tokio::sync::oneshot;

use crate::actions::{Action, ActionResult, Catalog};
use crate::dom::PageState;
use crate::environment::{ApprovalDecision, ApprovalMode, ApprovalRequest};
use crate::events::{Event, TraceReadError};
use crate::script::RecipeDef;
use crate::sitemap::SitemapSet;

use super::error::{BrowserFailure, ExportError, ResumeReadError, TraceListError};
use super::state::{PictureJob, RenderedPicture, ReplayData};
use super::theme::{Theme, ThemeError};

/// Everything that reaches the loop: keys from the person and news from
/// the services. Services hold a sender; only the loop receives.
#[derive(Debug)]
pub enum AppEvent {
    /// A mouse event (reported while the page pane is shown).
    Mouse(crossterm::event::MouseEvent),
    /// The locator picker's report for the pick numbered `pick`.
    Locators {
        /// Which pick (see [`crate::tui::state::LocatorPick`]).
        pick: u64,
        /// The report, or why there is none.
        report: Result<crate::script::LocatorReport, String>,
    },
    /// Something the person did on the page, while recording.
    Recorded(Box<crate::browser::record::Input>),
    /// The recording stopped: every input it took has arrived.
    RecordingStopped,
    /// The recording's recipe was written (its file), or why not.
    RecordingSaved(Result<std::path::PathBuf, String>),
    /// Start recording into the recipe NAME as soon as the workbench is up
    /// (`webagent record`).
    StartRecording(String),
    /// A key was pressed.
    Key(KeyEvent),
    /// SIGTERM or SIGINT reached the process: leave as the quit key does.
    Terminate,
    /// The terminal was resized to (columns, rows).
    Resize(u16, u16),
    /// Text was pasted (bracketed paste).
    Paste(String),
    /// The browser is up on this page.
    BrowserReady {
        /// The page it opened.
        url: String,
    },
    /// The browser could not start or went away.
    BrowserFailed(BrowserFailure),
    /// A fresh observation of the page.
    Page(Box<PageState>),
    /// An action typed on the command line finished.
    ActionFinished {
        /// The id given in [`Effect::RunAction`].
        id: u64,
        /// What it returned.
        result: ActionResult,
        /// How long it took.
        ms: u64,
    },
    /// Something the agent run emitted (boxed: a step record carries the
    /// whole prompt and answer, and every key event would pay its size).
    Agent(Box<Event>),
    /// The agent asks whether an action may run; the answer goes back on
    /// `reply`.
    ApprovalRequested {
        /// What is asked.
        request: Box<ApprovalRequest>,
        /// Where the decision goes.
        reply: oneshot::Sender<ApprovalDecision>,
    },
    /// The model called `ask_user`; the answer (or `None`) goes back on
    /// `reply`.
    AskUser {
        /// The model's question.
        question: String,
        /// Where the answer goes.
        reply: oneshot::Sender<Option<String>>,
    },
    /// The page opened a dialog while a recording runs; the person's
    /// answer goes back on `reply` (`Some(text)` accepts, `None`
    /// dismisses).
    PageDialog {
        /// `confirm`, `prompt`, `alert` or `beforeunload`.
        kind: String,
        /// The text the page showed.
        message: String,
        /// Where the answer goes.
        reply: oneshot::Sender<Option<String>>,
    },
    /// The agent run task ended (after its `done` event, or without one
    /// when it could not start).
    RunEnded {
        /// Why it could not run, when it could not.
        error: Option<String>,
    },
    /// The sitemaps in use changed.
    Sitemaps {
        /// The good set now in use.
        sitemaps: SitemapSet,
        /// A file that failed to load, with file:line:column, if any.
        error: Option<String>,
    },
    /// The theme file was reloaded, or failed to (the message says where).
    ThemeReloaded(Result<Theme, ThemeError>),
    /// The scripts were (re)loaded: the command line now parses with this
    /// catalog (custom actions included) and offers these recipes.
    ScriptsLoaded {
        /// The built-in actions plus every loaded custom action.
        catalog: Box<Catalog>,
        /// Every loaded recipe.
        recipes: Vec<RecipeDef>,
        /// How many script files are loaded.
        files: usize,
    },
    /// The session was exported as a recipe to this file, or why not.
    Exported(Result<std::path::PathBuf, ExportError>),
    /// A fresh picture of the page, with the listing's marks.
    Picture(Box<crate::vision::Screenshot>),
    /// A picture encoded for the page pane.
    PictureRendered(Box<RenderedPicture>),
    /// A notice for the status line from a service.
    Notice {
        /// Whether it is an error.
        error: bool,
        /// The text.
        text: String,
    },
    /// The sessions directory was listed (newest first), or could not be.
    SessionsListed {
        /// Which opening of the view asked.
        generation: u64,
        /// The traces, or why there are none.
        files: Result<Vec<crate::events::TraceFile>, TraceListError>,
    },
    /// Some traces of the listing were read and summed up.
    SessionsRead {
        /// Which opening of the view asked.
        generation: u64,
        /// The first row they are for.
        from: usize,
        /// One per row, in order.
        summaries: Vec<crate::events::TraceSummary>,
    },
    /// A trace was read for the panes, or why it could not be.
    TraceOpened(Result<Box<ReplayData>, TraceReadError>),
    /// A replayed step's picture was read from its file (`None`: it could
    /// not be).
    ReplayPicture {
        /// The log row it is for.
        row: usize,
        /// The picture.
        shot: Option<Box<crate::vision::Screenshot>>,
    },
    /// A trace was read for resuming its run, or why it cannot be.
    ResumeReady(Result<Box<crate::session::ResumePlan>, ResumeReadError>),
    /// Debug this recipe as soon as the workbench is up (`recipe run
    /// FILE --debug`).
    StartDebug(super::state::DebugStart),
    /// The debugged recipe reported (a stop, its variables, …).
    Debug(crate::script::DebugReport),
    /// The debugged recipe's file as read: at the start, and after each
    /// save.
    DebugSource(String),
}

impl AppEvent {
    /// An agent event, boxed.
    pub fn agent(event: Event) -> Self {
        AppEvent::Agent(Box::new(event))
    }
}

/// Work the update asks for; the loop hands each to the services without
/// waiting.
#[derive(Debug)]
pub enum Effect {
    /// Outline this element in the page (the listing cursor moved onto
    /// it). Newest wins: a service drops older requests.
    Highlight(u32),
    /// Run an action typed on the command line, then observe.
    RunAction {
        /// Pairs the action with its [`AppEvent::ActionFinished`].
        id: u64,
        /// The validated action.
        action: Action,
    },
    /// Start an agent run on this task.
    StartRun {
        /// The task as typed.
        task: String,
        /// The approval mode at the start (it can change while it runs).
        approval: ApprovalMode,
        /// Start a fresh conversation rather than follow up on the
        /// earlier tasks.
        fresh: bool,
        /// Open this page first (running a past session's task again).
        start_url: Option<String>,
    },
    /// Hand the person's message to the running agent; it goes with the
    /// model's next request.
    Steer(String),
    /// Ask the model again for the run's failed step.
    RetryStep(usize),
    /// Forget the conversation: the next task starts fresh, in a new
    /// trace.
    NewConversation,
    /// Read the trace at this path (the latest unfinished one when
    /// `None`) to resume its run; answered by [`AppEvent::ResumeReady`].
    ReadResume(Option<std::path::PathBuf>),
    /// Continue the run the model handed to the person, now that they
    /// hand it back.
    HandBack {
        /// The approval mode it goes on with.
        approval: ApprovalMode,
    },
    /// Continue a run from its trace.
    Resume {
        /// Where it picks up.
        plan: Box<crate::session::ResumePlan>,
        /// The approval mode it resumes with.
        approval: ApprovalMode,
    },
    /// List the sessions directory and read its traces, off the loop.
    ListSessions {
        /// Which opening of the view this is.
        generation: u64,
    },
    /// Read a trace for the panes, off the loop.
    OpenTrace(std::path::PathBuf),
    /// Write a past session as the recipe `name`.
    ExportTrace {
        /// The past session's trace.
        path: std::path::PathBuf,
        /// The recipe's name, and its file's.
        name: String,
    },
    /// Read a replayed step's picture from its file, off the loop.
    LoadReplayPicture {
        /// The log row it is for.
        row: usize,
        /// The file.
        file: std::path::PathBuf,
        /// Its record (size, marks).
        record: Box<crate::events::ScreenshotRecord>,
    },
    /// The approval mode changed; a running agent asks accordingly from
    /// its next action.
    SetApprovalMode(ApprovalMode),
    /// Stop the run in progress.
    StopRun,
    /// Pause the run before its next step, or resume it.
    SetPaused(bool),
    /// Send the person's decision back to the waiting agent.
    Decide {
        /// The agent's reply channel.
        reply: oneshot::Sender<ApprovalDecision>,
        /// The decision.
        decision: ApprovalDecision,
    },
    /// Send the person's answer back to the model.
    Answer {
        /// The agent's reply channel.
        reply: oneshot::Sender<Option<String>>,
        /// The answer, or `None` when the person declined.
        answer: Option<String>,
    },
    /// Run a loaded recipe through the approval gate, its steps in the
    /// log like agent steps.
    RunRecipe {
        /// The recipe's name.
        name: String,
        /// Its parameters, checked against its declaration.
        params: serde_json::Map<String, serde_json::Value>,
        /// The approval mode at the start (it can change while it runs).
        approval: ApprovalMode,
    },
    /// Cancel the script running for a hand-typed custom action (a run or
    /// recipe stops through [`Effect::StopRun`]).
    CancelScript,
    /// Write the session so far as the recipe `name` and report the file.
    ExportSession {
        /// The recipe's name, and its file's.
        name: String,
    },
    /// Save cookies and local storage to this state file (`None`: the
    /// configured one).
    SaveState(Option<std::path::PathBuf>),
    /// Switch to this theme (by name or path) and watch its file.
    LoadTheme(String),
    /// The page pane was shown (take a picture now and with every
    /// observation) or hidden (take none for it).
    ShowPage(bool),
    /// Fit a picture into the page pane's cells, off the loop's thread.
    /// Newest wins: the service drops jobs a newer one replaced.
    RenderPicture(PictureJob),
    /// Read the locators of `element` from the page, for the locator
    /// picker's pick numbered `pick`.
    PickLocators {
        /// Which pick (see [`crate::tui::state::LocatorPick`]).
        pick: u64,
        /// The element.
        element: crate::script::PickedElement,
    },
    /// A click or a turn of the wheel on the page pane's picture, for the
    /// page at that point, or a key typed while the pane has the keyboard.
    PaneInput(crate::browser::record::PaneInput),
    /// Put this text on the terminal's clipboard (OSC 52).
    Copy(String),
    /// Start recording the person's actions on the page (`true`), or
    /// stop and hand back what was still to come (`false`).
    Record(bool),
    /// Write a recording's recipe to the new file `recipes/NAME.rhai`.
    SaveRecording {
        /// The recipe's name, and its file's.
        name: String,
        /// The recipe.
        source: String,
    },
    /// Run a recipe under the debugger: it stops at its first line and
    /// reports through [`AppEvent::Debug`]; its file is watched for
    /// [`AppEvent::DebugSource`].
    StartDebug {
        /// The recipe, its file and its parameters.
        start: super::state::DebugStart,
        /// The approval mode at the start (it can change while it runs).
        approval: ApprovalMode,
    },
    /// Hand a command to the debugged recipe (it takes it at its stop).
    Debug(crate::script::DebugCommand),
    /// Leave the workbench.
    Quit,
}
