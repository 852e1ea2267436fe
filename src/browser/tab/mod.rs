//! One tab: navigation, the isolated world, observations and element calls.
//!
//! [`Tab`] is one type whose work is spread over rooms by concern, each an
//! `impl Tab` of its own: `open` (opening, taking over and closing tabs,
//! with webagent's scripts installed), `closing` (a tab that closed, its
//! calls ending at once), `dialogs` (dialogs answered as they open),
//! `hung` (a renderer that stopped answering), `world` (the isolated
//! world and evaluating in it), `first_look` (the observation a new
//! document takes as it loads), `observe` (the listing and the tabs
//! beside it), `elements` (script run on listed elements), `oopif`
//! (cross-origin frames), `navigation` and `storage` (cookies and local
//! storage).
//! `options` and `family` are plain types the tab is given.
//!
//! Here stays the tab's state, which every room reads: what it shares with
//! its session, the tab itself, and the world and first look it holds.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::js_protocol::runtime::ExecutionContextId;
use chromiumoxide::error::CdpError;
use chromiumoxide::{Browser, Page};
use tokio::sync::{watch, Mutex};
use tokio::task::JoinHandle;

use super::connection::{call, SessionStatus};
use super::download::Downloads;
use super::error::BrowserError;
use super::frames::Frames;
use super::guard::{GuardRegistry, NavigationGuard};
use super::launch::LaunchOptions;

mod closing;
mod dialogs;
mod elements;
mod family;
mod first_look;
mod hung;
mod navigation;
mod observe;
mod oopif;
mod open;
mod options;
mod storage;
mod world;

pub(crate) use world::WORLD_NAME;

pub use dialogs::{AnsweredDialog, DialogHold};
pub(crate) use family::TabFamily;
pub use options::ObserveOptions;

/// What a tab shares with its session.
#[derive(Debug, Clone)]
pub(crate) struct TabContext {
    pub status: watch::Receiver<SessionStatus>,
    pub call_timeout: Duration,
    /// The session's allowed-domain guard, if a list is set.
    pub guard: Option<Arc<NavigationGuard>>,
    /// How the session was started, so a caller holding only the tab can
    /// start a replacement browser when this one dies.
    pub launch: LaunchOptions,
    /// The session's guards, to give a sibling tab its own.
    pub registry: Option<Arc<GuardRegistry>>,
    /// The browser, to open a sibling tab (weak: the session owns it).
    pub browser: Weak<Browser>,
    /// Writes the state file's local storage before the page's scripts.
    pub storage_script: Option<Arc<str>>,
    /// The session's downloads, when they are kept.
    pub downloads: Option<Arc<Downloads>>,
    /// The tabs that belong to the session.
    pub family: Arc<TabFamily>,
    /// The browser context the session's tabs open in (`None`: the
    /// browser's default one).
    pub browser_context: Option<BrowserContextId>,
}

/// One browser tab.
#[derive(Debug)]
pub struct Tab {
    page: Page,
    ctx: TabContext,
    /// The isolated world of the current document, once created.
    world: Mutex<Option<World>>,
    /// Answers this tab's paused document requests (allowed domains).
    interception: Option<JoinHandle<()>>,
    /// The cross-origin frames of the latest observation.
    frames: Mutex<Frames>,
    /// webagent's world in the newest main-frame document, as Chromium
    /// announced it when the document started (see [`world::watch_worlds`]).
    announced: Arc<std::sync::Mutex<Option<World>>>,
    /// Keeps `announced` up to date.
    world_watch: Option<JoinHandle<()>>,
    /// Woken whenever `announced` changes.
    announcements: Arc<tokio::sync::Notify>,
    /// The observation a new document's first look took as it loaded,
    /// until the next observation picks it up (see [`Tab::first_look`]).
    first_look: std::sync::Mutex<Option<FirstLook>>,
    /// Observations a first look answered.
    looks_used: std::sync::atomic::AtomicU64,
    /// Navigations of the top frame that stopped before a document came.
    documentless: std::sync::atomic::AtomicU64,
    /// Set once the browser destroyed the tab (see [`closing`]).
    closed: Arc<watch::Sender<bool>>,
    /// Sets `closed` when the browser says the tab is gone.
    closed_watch: Option<JoinHandle<()>>,
    /// The dialogs the tab answered (see [`dialogs`]).
    dialogs: Arc<dialogs::DialogLog>,
    /// Answers them as they open.
    dialog_watch: Option<JoinHandle<()>>,
}

/// One of webagent's isolated worlds. Chromium numbers contexts per
/// renderer process, so after a navigation into another process the old
/// number can name a context of the new page (one without the observer);
/// the system-wide id Chromium announces a world with cannot, and an
/// evaluation sent with it to a world that is gone fails as gone.
#[derive(Debug, Clone, PartialEq, Eq)]
struct World {
    id: ExecutionContextId,
    /// Known for worlds Chromium announced; not for one webagent created
    /// with `Page.createIsolatedWorld`, whose answer carries the number only.
    unique: Option<String>,
}

/// An observation taken in a new document's load task.
#[derive(Debug)]
struct FirstLook {
    world: World,
    taken: Instant,
    options: serde_json::Value,
    json: String,
}

impl Drop for Tab {
    fn drop(&mut self) {
        if let Some(task) = self.interception.take() {
            task.abort();
        }
        if let Some(task) = self.world_watch.take() {
            task.abort();
        }
        if let Some(task) = self.closed_watch.take() {
            task.abort();
        }
        if let Some(task) = self.dialog_watch.take() {
            task.abort();
        }
    }
}

impl Tab {
    /// The raw chromiumoxide page, for CDP commands this type does not wrap
    /// (e.g. `Input.dispatchMouseEvent`); wrap calls in [`Tab::with_timeout`].
    pub fn page(&self) -> &Page {
        &self.page
    }

    /// The default limit for one CDP call.
    pub fn call_timeout(&self) -> Duration {
        self.ctx.call_timeout
    }

    /// Runs a CDP future on this tab's page with a time limit; a dead
    /// browser becomes [`BrowserError::Disconnected`], a late answer
    /// [`BrowserError::Timeout`], and a tab that closed (before or during
    /// the call) [`BrowserError::TabClosed`] at once.
    pub async fn with_timeout<T>(
        &self,
        what: &str,
        limit: Duration,
        fut: impl std::future::Future<Output = Result<T, CdpError>>,
    ) -> Result<T, BrowserError> {
        self.unless_closed(what, call(what, limit, &self.ctx.status, fut))
            .await
    }

    /// Runs a CDP future on the browser's own connection (the tab list,
    /// cookies, another tab) with a time limit: it goes through whether
    /// or not this tab is still open.
    pub(crate) async fn browser_call<T>(
        &self,
        what: &str,
        limit: Duration,
        fut: impl std::future::Future<Output = Result<T, CdpError>>,
    ) -> Result<T, BrowserError> {
        call(what, limit, &self.ctx.status, fut).await
    }

    /// Whether the browser behind this tab is still connected; the text
    /// says why not.
    pub fn status(&self) -> SessionStatus {
        self.ctx.status.borrow().clone()
    }

    /// The options the tab's session was started with (to start a
    /// replacement browser after a crash).
    pub fn launch_options(&self) -> &LaunchOptions {
        &self.ctx.launch
    }

    /// The browser the tab is in, while the session holds it.
    pub(crate) fn browser(&self) -> Option<Arc<Browser>> {
        self.ctx.browser.upgrade()
    }

    /// The browser's id for this tab (its CDP target id).
    pub fn target_id(&self) -> &str {
        self.page.target_id().inner().as_str()
    }

    /// The session's downloads, when they are kept.
    pub fn downloads(&self) -> Option<&Arc<Downloads>> {
        self.ctx.downloads.as_ref()
    }

    /// The allowed-domain guard this tab enforces, when a list is set.
    pub fn guard(&self) -> Option<&Arc<NavigationGuard>> {
        self.ctx.guard.as_ref()
    }
}
