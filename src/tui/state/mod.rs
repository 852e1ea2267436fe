//! Everything the workbench draws, in one value, and every view type it
//! holds. Only the update changes it; draw functions read it.
//!
//! The state sits at the bottom of the workbench: it imports no pane, so
//! every pane, the update and the services can import it. Its geometry
//! comes from [`super::layout`], its key types from [`super::keys`].

mod debug;
mod list;
mod log;
mod modal;
mod picture;
mod reflection;
mod replay;
mod sessions;
mod status;

use std::time::{Duration, Instant};

use ratatui::layout::Rect;
use tui_textarea::TextArea;

use crate::actions::Catalog;
use crate::dom::PageState;
use crate::script::RecipeDef;
use crate::sitemap::SitemapSet;

use super::keys::{KeyContext, Keymap};
use super::layout::{areas_with, rows_inside};
use super::theme::Theme;

pub use debug::{DebugStart, DebugView};
pub use list::ListView;
pub use log::{healed_row, rows, LogEntry, Outcome};
pub use modal::{ApprovalModal, AskModal, Modal};
pub use picture::{PictureJob, PictureJobKey, PictureView, RenderedPicture};
pub use reflection::{partial_field, ReflectionView};
pub use replay::{LiveView, Replay, ReplayData, ReplayRow};
pub use sessions::SessionsView;
pub use status::{BrowserStatus, LoadState, ModelWait, Notice, RunStatus, StatusInfo};

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

/// How long after a key typed into a text field a key still counts as
/// part of that typing: a dialog that opens over the field within this
/// time does not take the keys typed after it as commands.
pub const TYPING_GRACE: Duration = Duration::from_millis(600);

/// The person is typing into a text field: keys that come quickly after
/// one another belong to it, even when the keys have been taken away from
/// the field meanwhile (see `update/keypress.rs` for the whole rule).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Typing {
    /// The field typed in.
    pub field: KeyContext,
    /// When the last key of this typing came.
    pub at: Instant,
    /// The characters held back since the keys were taken away, for the
    /// status line.
    pub held: String,
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
    /// The keys: every pane's own, as `keymap.rs` gathers them into the
    /// default [`Keymap`].
    pub keymap: Keymap,
    /// The person asked to leave.
    pub quit: bool,
    /// The id of the next action run by hand.
    pub next_action_id: u64,
    /// Where the current run's entries begin in the log (step numbers
    /// restart with every run).
    pub run_log_start: usize,
    /// The page pane's picture.
    pub picture: PictureView,
    /// Pictures received so far (numbers them for the renderer).
    pub pictures_seen: u64,
    /// Tasks run so far in the conversation (a new task follows up on
    /// them; `N` or `:new` starts a fresh conversation).
    pub conversation_tasks: usize,
    /// A resumed trace whose run was handed to the person: it goes on
    /// when they hand back.
    pub handed_over_plan: Option<Box<crate::session::ResumePlan>>,
    /// The sessions view, while it is open.
    pub sessions: Option<SessionsView>,
    /// A past session shown in the panes, while one is open.
    pub replay: Option<Box<Replay>>,
    /// Numbers each opening of the sessions view, so a listing for an
    /// earlier one is dropped.
    pub sessions_opened: u64,
    /// MCP clients drive this session (their calls are numbered like
    /// steps).
    pub mcp: bool,
    /// The typing going on in a text field, if any.
    pub typing: Option<Typing>,
    /// How long a pause ends a typing ([`TYPING_GRACE`]; tests set it to
    /// show both sides of the rule without waiting).
    pub typing_grace: Duration,
    /// The person's actions being recorded into a recipe (`:record`).
    pub recording: Option<crate::script::Recording>,
    /// The locator picker's report for an element (`L`).
    pub locators: Option<LocatorPick>,
    /// How many times the locator picker was opened (numbers its picks).
    pub picks: u64,
    /// A recipe under the debugger (`:debug`), while one runs.
    pub debugger: Option<DebugView>,
}

/// The locator picker on one element: a row of the listing, an
/// approval's target, a past step's element or one picked on the page.
#[derive(Debug, Clone, PartialEq)]
pub struct LocatorPick {
    /// Numbers the picks, so the page's late answer for an earlier one
    /// is dropped.
    pub pick: u64,
    /// The element's row in the listing, when the picker was opened on
    /// the listing (the view then shows the row in full too).
    pub position: Option<usize>,
    /// What the element is, for the view's title when it is not a row.
    pub title: String,
    /// What the page said, once it answered: the report, or why not.
    pub report: Option<Result<crate::script::LocatorReport, String>>,
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
            picture: PictureView::default(),
            pictures_seen: 0,
            conversation_tasks: 0,
            handed_over_plan: None,
            sessions: None,
            replay: None,
            sessions_opened: 0,
            mcp: false,
            typing: None,
            typing_grace: TYPING_GRACE,
            recording: None,
            locators: None,
            picks: 0,
            debugger: None,
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
            Some(Modal::Approval(m)) if m.note.is_some() => KeyContext::ApprovalNote,
            Some(Modal::Approval(_)) => KeyContext::Approval,
            Some(Modal::AskUser(_)) => KeyContext::AskUser,
            Some(Modal::Inspector { .. }) => KeyContext::Inspector,
            Some(Modal::Help { .. }) => KeyContext::Help,
            Some(Modal::Element { .. } | Modal::Locators { .. }) => KeyContext::ElementDetail,
            None => match &self.sessions {
                Some(view) if view.search.is_some() => KeyContext::SessionSearch,
                Some(_) => KeyContext::Sessions,
                None => self.focus.context(),
            },
        }
    }

    /// The layers of keys that apply now, first match wins: a replay's
    /// own keys over the pane's while a past session is shown, the
    /// debugger's while a recipe is debugged.
    pub fn key_layers(&self) -> Vec<KeyContext> {
        let context = self.key_context();
        if self.replay.is_some() && context.has_pane_keys() {
            vec![KeyContext::Replay, context]
        } else if self.debugger.is_some() && context.has_pane_keys() {
            vec![KeyContext::Debug, context]
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
        rows_inside(match pane {
            Pane::Elements => a.elements,
            Pane::Reflection => a.reflection,
            Pane::Log => a.log,
            Pane::Sitemap => a.sitemap,
            Pane::Task => a.task,
        })
    }

    /// How many rows the listing has (a replay's are its recorded lines).
    pub fn element_count(&self) -> usize {
        if let Some(replay) = &self.replay {
            return replay.listing.len();
        }
        self.page.as_ref().map_or(0, |p| p.elements.len())
    }

    /// Shows a message in the status line until the next one.
    pub fn notice(&mut self, error: bool, text: String) {
        // The status line has one row: a message of several (a script
        // error's source line and caret) shows its first there and goes
        // whole into the log, where the inspector shows it.
        let text = match text.split_once('\n') {
            Some((first, _)) if error => {
                let first = format!("{first} (Enter on the log's last row shows it whole)");
                self.log.push(LogEntry::row(
                    "error",
                    String::new(),
                    Outcome::Failed {
                        reason: "error".into(),
                        message: text.clone(),
                    },
                ));
                first
            }
            Some((first, _)) => first.to_string(),
            None => text,
        };
        self.status.notice = Some(Notice { error, text });
    }

    /// Whether a run is in progress.
    pub fn run_active(&self) -> bool {
        self.status.run.is_active()
    }

    /// Trades what the panes show with what `live` holds: the live
    /// session's panes go aside while a replay is shown, and come back.
    pub fn trade_live(&mut self, live: &mut LiveView) {
        std::mem::swap(&mut live.page, &mut self.page);
        std::mem::swap(&mut live.elements, &mut self.elements);
        std::mem::swap(&mut live.reflection, &mut self.reflection);
        std::mem::swap(&mut live.reflection_view, &mut self.reflection_view);
        std::mem::swap(&mut live.log, &mut self.log);
        std::mem::swap(&mut live.log_view, &mut self.log_view);
        std::mem::swap(&mut live.run_log_start, &mut self.run_log_start);
        std::mem::swap(&mut live.url, &mut self.status.url);
        std::mem::swap(&mut live.step, &mut self.status.step);
        std::mem::swap(&mut live.max_steps, &mut self.status.max_steps);
        std::mem::swap(&mut live.model, &mut self.status.model);
        std::mem::swap(&mut live.tokens, &mut self.status.tokens);
        std::mem::swap(&mut live.run, &mut self.status.run);
        std::mem::swap(&mut live.shot, &mut self.picture.shot);
        std::mem::swap(&mut live.rendered, &mut self.picture.rendered);
        std::mem::swap(&mut live.requested, &mut self.picture.requested);
    }

    /// Puts the live panes back, if a replay was shown.
    pub fn close_replay(&mut self) {
        if let Some(mut replay) = self.replay.take() {
            self.trade_live(&mut replay.live);
            self.picture.requested = None;
        }
    }
}
