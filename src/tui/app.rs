//! Everything the workbench draws, in one value. Only [`super::update()`]
//! changes it; draw functions read it.

use ratatui::layout::Rect;
use tokio::sync::oneshot;
use tui_textarea::TextArea;

use crate::actions::Catalog;
use crate::dom::PageState;
use crate::environment::{ApprovalDecision, ApprovalMode, ApprovalRequest};
use crate::events::{StepRecord, TokenUsage};
use crate::script::RecipeDef;
use crate::sitemap::SitemapSet;

use super::draw::areas_with;
use super::keymap::{KeyContext, Keymap};
use super::theme::Theme;

/// The panes that can have the focus, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    /// The element listing.
    Elements,
    /// The reflection of the current step.
    Reflection,
    /// The action log.
    Log,
    /// The sitemap tree.
    Sitemap,
    /// The task input.
    Task,
}

impl Pane {
    /// Tab order.
    pub const ORDER: [Pane; 5] = [
        Pane::Elements,
        Pane::Reflection,
        Pane::Sitemap,
        Pane::Log,
        Pane::Task,
    ];

    /// The keys that apply while this pane has the focus.
    pub fn context(self) -> KeyContext {
        match self {
            Pane::Elements => KeyContext::Elements,
            Pane::Reflection => KeyContext::Reflection,
            Pane::Log => KeyContext::Log,
            Pane::Sitemap => KeyContext::Sitemap,
            Pane::Task => KeyContext::Task,
        }
    }

    /// The pane after this one (`forward`) or before it.
    pub fn cycle(self, forward: bool) -> Pane {
        let n = Pane::ORDER.len();
        let at = Pane::ORDER.iter().position(|p| *p == self).unwrap_or(0);
        let next = if forward {
            (at + 1) % n
        } else {
            (at + n - 1) % n
        };
        Pane::ORDER[next]
    }
}

/// A cursor in a list and the first row shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListView {
    /// The selected row.
    pub cursor: usize,
    /// The first visible row.
    pub offset: usize,
}

impl ListView {
    /// Moves the cursor to `target` (clamped to `len` rows) and scrolls so
    /// it stays within `height` visible rows.
    pub fn move_to(&mut self, target: usize, len: usize, height: usize) {
        self.cursor = if len == 0 { 0 } else { target.min(len - 1) };
        self.follow(len, height);
    }

    /// Keeps the cursor visible and the window inside the list (after a
    /// move, a resize or a shorter list).
    pub fn follow(&mut self, len: usize, height: usize) {
        let height = height.max(1);
        if len == 0 {
            self.cursor = 0;
            self.offset = 0;
            return;
        }
        self.cursor = self.cursor.min(len - 1);
        if self.cursor < self.offset {
            self.offset = self.cursor;
        } else if self.cursor >= self.offset + height {
            self.offset = self.cursor + 1 - height;
        }
        self.offset = self.offset.min(len.saturating_sub(height));
    }
}

/// Where the run is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum RunStatus {
    /// No run yet, or the last one ended.
    #[default]
    Idle,
    /// The agent is working.
    Running,
    /// The agent waits before its next step.
    Paused,
    /// A stop was asked for; the step in flight is ending.
    Stopping,
    /// The run ended.
    Finished {
        /// Whether the task was accomplished.
        success: bool,
    },
}

/// The browser as the status line shows it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BrowserStatus {
    /// Launching.
    #[default]
    Starting,
    /// Up.
    Ready,
    /// Failed to start or went away.
    Failed(String),
}

/// Whether a kind of file (sitemaps, scripts, theme) is loaded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum LoadState {
    /// None given.
    #[default]
    None,
    /// Loaded; how many.
    Loaded(usize),
    /// The last load failed (file:line:column: message); the last good
    /// version stays in use.
    Failed(String),
}

/// A message in the status line until the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// Whether it reports a failure.
    pub error: bool,
    /// The words.
    pub text: String,
}

/// What the status line shows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StatusInfo {
    /// The page URL.
    pub url: String,
    /// The step being worked on (0 before the first).
    pub step: usize,
    /// The step limit of the run.
    pub max_steps: usize,
    /// The model, or empty when none is configured.
    pub model: String,
    /// When the person is asked.
    pub approval: ApprovalMode,
    /// Tokens used by this session's runs.
    pub tokens: TokenUsage,
    /// Where the run is.
    pub run: RunStatus,
    /// The browser.
    pub browser: BrowserStatus,
    /// Sitemaps.
    pub sitemaps: LoadState,
    /// Recipe scripts.
    pub scripts: LoadState,
    /// A theme file that failed to load (the last good theme stays).
    pub theme_error: Option<String>,
    /// The latest notice.
    pub notice: Option<Notice>,
    /// What keeps sign-ins (`profile DIR`, `state FILE`); `None` for a
    /// fresh profile.
    pub sign_in: Option<String>,
    /// What the task cache did for the latest run (`cache: hit`), when it
    /// was used.
    pub cache: Option<crate::events::CacheState>,
}

/// How an action in the log ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Still running.
    Pending,
    /// It worked.
    Ok,
    /// It failed.
    Failed {
        /// The failure reason word (`not_found`, `denied`, …).
        reason: String,
        /// The message.
        message: String,
    },
}

/// One row of the action log.
#[derive(Debug, Clone, PartialEq)]
pub struct LogEntry {
    /// The agent step, or `None` for an action run by hand.
    pub step: Option<usize>,
    /// For an action run by hand, the id pairing it with its result.
    pub manual_id: Option<u64>,
    /// The action's name.
    pub action: String,
    /// Its parameters, compact JSON.
    pub params: String,
    /// The target element's text (or selector), when it has a target.
    pub target: String,
    /// How it ended.
    pub outcome: Outcome,
    /// Milliseconds the action itself took.
    pub ms: Option<u64>,
    /// Milliseconds it waited for the person's approval first.
    pub wait_ms: Option<u64>,
    /// The whole step, for the inspector (agent steps only).
    pub record: Option<StepRecord>,
    /// The model's answer as it streamed in.
    pub raw_response: String,
}

/// The reflection of the current step, filled in as the model streams.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReflectionView {
    /// The step it belongs to.
    pub step: usize,
    /// How the previous step went.
    pub evaluation: String,
    /// What the model keeps in mind.
    pub memory: String,
    /// What this step is for.
    pub next_goal: String,
    /// The proposed action, `click {"index":3}`.
    pub action: Option<String>,
    /// The streamed text so far.
    pub raw: String,
    /// Whether the model is still answering.
    pub streaming: bool,
    /// The fields still show this earlier step while the model has not
    /// written anything for the current one (a model that does not stream
    /// would otherwise leave the pane blank for the whole call).
    pub shown_step: Option<usize>,
}

/// The approval modal.
#[derive(Debug)]
pub struct ApprovalModal {
    /// What the agent asks.
    pub request: ApprovalRequest,
    /// Where the decision goes; taken when it is sent.
    pub reply: Option<oneshot::Sender<ApprovalDecision>>,
    /// The parameters being edited, as JSON `{"name": {params}}`.
    pub editor: Option<TextArea<'static>>,
    /// Why the edited parameters were refused.
    pub error: Option<String>,
    /// The person is choosing another element in the listing.
    pub picking: bool,
}

/// The answer box for `ask_user`.
#[derive(Debug)]
pub struct AskModal {
    /// The model's question.
    pub question: String,
    /// The answer being typed.
    pub answer: TextArea<'static>,
    /// Where the answer goes; taken when it is sent.
    pub reply: Option<oneshot::Sender<Option<String>>>,
}

/// A dialog over the panes.
#[derive(Debug)]
pub enum Modal {
    /// An action waits for the person's decision.
    Approval(Box<ApprovalModal>),
    /// The model asked a question.
    AskUser(Box<AskModal>),
    /// One logged step in full.
    Inspector {
        /// Which log entry.
        entry: usize,
        /// The first line shown.
        scroll: usize,
    },
    /// Every key.
    Help {
        /// The first line shown.
        scroll: usize,
    },
}

impl LogEntry {
    /// A row for `action` on `target`, with nothing else known yet.
    pub fn row(action: &str, target: impl Into<String>, outcome: Outcome) -> Self {
        LogEntry {
            step: None,
            manual_id: None,
            action: action.to_string(),
            params: String::new(),
            target: target.into(),
            outcome,
            ms: None,
            wait_ms: None,
            record: None,
            raw_response: String::new(),
        }
    }
}

/// Everything the workbench shows.
#[derive(Debug)]
pub struct AppState {
    /// The terminal size (columns, rows).
    pub size: (u16, u16),
    /// The pane with the focus.
    pub focus: Pane,
    /// The open dialog.
    pub modal: Option<Modal>,
    /// The latest observation.
    pub page: Option<PageState>,
    /// The listing's cursor.
    pub elements: ListView,
    /// The current step's reflection.
    pub reflection: ReflectionView,
    /// The reflection pane's scroll.
    pub reflection_view: ListView,
    /// Every action, agent and manual.
    pub log: Vec<LogEntry>,
    /// The log's cursor.
    pub log_view: ListView,
    /// The good sitemaps in use.
    pub sitemaps: SitemapSet,
    /// The sitemap pane's cursor.
    pub sitemap_view: ListView,
    /// The status line.
    pub status: StatusInfo,
    /// The task input.
    pub task: TextArea<'static>,
    /// The `:` command line, while open.
    pub command_line: Option<TextArea<'static>>,
    /// The action catalog for the command line and edited parameters.
    pub catalog: Catalog,
    /// The recipes the loaded scripts offer (`:recipe NAME`).
    pub recipes: Vec<RecipeDef>,
    /// The recipe running now, if the run is a recipe (its steps are
    /// numbered as they are proposed, there being no observation events).
    pub recipe: Option<String>,
    /// The running recipe's own `run_started` has arrived (a later one is
    /// an `agent("…")` sub-goal).
    pub recipe_began: bool,
    /// The recipe's step number at each sub-goal in progress, restored
    /// when the sub-goal is done.
    pub recipe_subgoals: Vec<usize>,
    /// The colours.
    pub theme: Theme,
    /// The keys.
    pub keymap: Keymap,
    /// The person asked to leave.
    pub quit: bool,
    /// The id of the next action run by hand.
    pub next_action_id: u64,
    /// Where the current run's entries begin in the log (step numbers
    /// restart with every run).
    pub run_log_start: usize,
    /// The page pane's picture.
    pub picture: super::page::PictureView,
    /// Pictures received so far (numbers them for the renderer).
    pub pictures_seen: u64,
    /// Tasks run so far in the conversation (a new task follows up on
    /// them; `N` or `:new` starts a fresh conversation).
    pub conversation_tasks: usize,
    /// The sessions view, while it is open.
    pub sessions: Option<super::sessions::SessionsView>,
    /// A past session shown in the panes, while one is open.
    pub replay: Option<Box<super::replay::Replay>>,
    /// Numbers each opening of the sessions view, so a listing for an
    /// earlier one is dropped.
    pub sessions_opened: u64,
    /// MCP clients drive this session (their calls are numbered like
    /// steps).
    pub mcp: bool,
}

impl AppState {
    /// A fresh workbench of this size.
    pub fn new(size: (u16, u16)) -> Self {
        let mut task = TextArea::default();
        task.set_placeholder_text("Describe a task and press Enter (t to focus, Esc to leave)");
        AppState {
            size,
            focus: Pane::Elements,
            modal: None,
            page: None,
            elements: ListView::default(),
            reflection: ReflectionView::default(),
            reflection_view: ListView::default(),
            log: Vec::new(),
            log_view: ListView::default(),
            sitemaps: SitemapSet::new(),
            sitemap_view: ListView::default(),
            status: StatusInfo::default(),
            task,
            command_line: None,
            catalog: Catalog::builtin(),
            recipes: Vec::new(),
            recipe: None,
            recipe_began: false,
            recipe_subgoals: Vec::new(),
            theme: Theme::builtin(),
            keymap: Keymap::default(),
            quit: false,
            next_action_id: 1,
            run_log_start: 0,
            picture: super::page::PictureView::default(),
            pictures_seen: 0,
            conversation_tasks: 0,
            sessions: None,
            replay: None,
            sessions_opened: 0,
            mcp: false,
        }
    }

    /// Where keys go now.
    pub fn key_context(&self) -> KeyContext {
        if self.command_line.is_some() {
            return KeyContext::CommandLine;
        }
        match &self.modal {
            Some(Modal::Approval(m)) if m.picking => KeyContext::Picking,
            Some(Modal::Approval(m)) if m.editor.is_some() => KeyContext::ApprovalEdit,
            Some(Modal::Approval(_)) => KeyContext::Approval,
            Some(Modal::AskUser(_)) => KeyContext::AskUser,
            Some(Modal::Inspector { .. }) => KeyContext::Inspector,
            Some(Modal::Help { .. }) => KeyContext::Help,
            None => match &self.sessions {
                Some(view) if view.search.is_some() => KeyContext::SessionSearch,
                Some(_) => KeyContext::Sessions,
                None => self.focus.context(),
            },
        }
    }

    /// The layers of keys that apply now, first match wins: a replay's
    /// own keys over the pane's while a past session is shown.
    pub fn key_layers(&self) -> Vec<KeyContext> {
        let context = self.key_context();
        if self.replay.is_some() && context.has_pane_keys() {
            vec![KeyContext::Replay, context]
        } else {
            vec![context]
        }
    }

    /// The terminal area.
    pub fn area(&self) -> Rect {
        Rect::new(0, 0, self.size.0, self.size.1)
    }

    /// Rows visible inside a pane (its height less the borders).
    pub fn visible_rows(&self, pane: Pane) -> usize {
        let a = areas_with(self.area(), self.picture.visible);
        let rect = match pane {
            Pane::Elements => a.elements,
            Pane::Reflection => a.reflection,
            Pane::Log => a.log,
            Pane::Sitemap => a.sitemap,
            Pane::Task => a.task,
        };
        usize::from(rect.height.saturating_sub(2)).max(1)
    }

    /// How many rows the listing has (a replay's are its recorded lines).
    pub fn element_count(&self) -> usize {
        if let Some(replay) = &self.replay {
            return replay.listing.len();
        }
        self.page.as_ref().map_or(0, |p| p.elements.len())
    }
}
