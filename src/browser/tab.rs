//! One tab: navigation, the isolated world, observations and element calls.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::dom_snapshot::CaptureSnapshotParams;
use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, CreateIsolatedWorldParams, NavigateParams,
};
use chromiumoxide::cdp::browser_protocol::target::{CreateTargetParams, GetTargetsParams};
use chromiumoxide::cdp::js_protocol::runtime::{EvaluateParams, ExecutionContextId};
use chromiumoxide::error::CdpError;
use chromiumoxide::{Browser, Page};
use tokio::sync::{watch, Mutex};
use tokio::task::JoinHandle;

use super::connection::{call, SessionStatus};
use super::error::BrowserError;
use super::frames::{FrameEval, FrameHub, FrameWorld, Frames, Layout, Owner, Route, Slot};
use super::guard::{protect_page, GuardRegistry, NavigationGuard, Verdict};
use super::launch::LaunchOptions;
use super::scripts::{ACT_JS, LISTENER_HOOK_JS, OBSERVER_JS};
use super::state::{OriginStorage, StorageEntry, StorageState};
use crate::dom::{ElementIndex, PageState, RawObservation, TabInfo};

mod oopif;

/// The isolated world's name (shows in DevTools' context list).
const WORLD_NAME: &str = "webagent";

/// Which part of the page an observation lists, and its limits.
#[derive(Debug, Clone, PartialEq)]
pub struct ObserveOptions {
    /// Walk the whole page instead of the viewport plus a margin.
    pub full_page: bool,
    /// The margin around the viewport in CSS pixels; `None` is half a
    /// viewport height.
    pub margin_px: Option<f64>,
    /// The most page-text characters to keep.
    pub text_limit: usize,
    /// Count elements with click-like listeners (added after the tab was
    /// opened by webagent) as interactive.
    pub click_listeners: bool,
    /// The time limit for the observation.
    pub timeout: Duration,
}

impl Default for ObserveOptions {
    fn default() -> Self {
        ObserveOptions {
            full_page: false,
            margin_px: None,
            text_limit: 4000,
            click_listeners: true,
            timeout: Duration::from_secs(30),
        }
    }
}

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
    pub downloads: Option<Arc<super::download::Downloads>>,
    /// The tabs that belong to the session.
    pub family: Arc<TabFamily>,
    /// The browser context the session's tabs open in (`None`: the
    /// browser's default one).
    pub browser_context: Option<BrowserContextId>,
}

/// The tabs a session owns: the ones it opened or took over, and every
/// page whose chain of openers leads to one of them (found afresh at each
/// listing). The other pages of the browser (a person's own tabs when
/// attached with `--cdp`, another session's on a shared browser) are
/// neither listed to the model nor taken for a tab an action opened.
#[derive(Debug, Default)]
pub(crate) struct TabFamily(std::sync::Mutex<std::collections::HashSet<String>>);

impl TabFamily {
    /// Counts the tab `id` as the session's.
    pub fn add(&self, id: &str) {
        if let Ok(mut ids) = self.0.lock() {
            ids.insert(id.to_string());
        }
    }

    /// The page targets among `targets` that belong to the session, in
    /// their order.
    pub fn members<'a>(
        &self,
        targets: &'a [chromiumoxide::cdp::browser_protocol::target::TargetInfo],
    ) -> Vec<&'a chromiumoxide::cdp::browser_protocol::target::TargetInfo> {
        let mut ids = self.0.lock().map(|ids| ids.clone()).unwrap_or_default();
        // Each pass adds the pages opened by a member; openers form
        // chains, so this ends after at most one pass per page.
        loop {
            let before = ids.len();
            for t in targets {
                if let Some(opener) = &t.opener_id {
                    if ids.contains(opener.inner()) {
                        ids.insert(t.target_id.inner().clone());
                    }
                }
            }
            if ids.len() == before {
                break;
            }
        }
        targets
            .iter()
            .filter(|t| t.r#type == "page" && ids.contains(t.target_id.inner()))
            .collect()
    }
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
    /// announced it when the document started (see [`watch_worlds`]).
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

impl World {
    /// Sends `params` to this world, by its system-wide id when known.
    fn aim(&self, params: &mut EvaluateParams) {
        match &self.unique {
            Some(unique) => {
                params.context_id = None;
                params.unique_context_id = Some(unique.clone());
            }
            None => params.context_id = Some(self.id),
        }
    }
}

/// An observation taken in a new document's load task.
#[derive(Debug)]
struct FirstLook {
    world: World,
    taken: Instant,
    options: serde_json::Value,
    json: String,
}

/// How long a first look stays the answer to the next observation: the
/// observation that follows a navigation comes at once, and one asked for
/// later looks at the page again.
const FIRST_LOOK_FRESH: Duration = Duration::from_millis(250);

impl Drop for Tab {
    fn drop(&mut self) {
        if let Some(task) = self.interception.take() {
            task.abort();
        }
        if let Some(task) = self.world_watch.take() {
            task.abort();
        }
    }
}

/// Follows the contexts Chromium creates in the tab's main frame and keeps
/// the id of webagent's world in the newest document. The observer goes
/// into every new document's world as it starts (see [`Tab::wrap`]), so
/// the first observation after a navigation can use that world at once
/// instead of asking for it with `Page.createIsolatedWorld`, a call that
/// waits behind the renderer's work after the load (tens of milliseconds
/// on a big page).
async fn watch_worlds(
    page: &Page,
    announced: Arc<std::sync::Mutex<Option<World>>>,
    announcements: Arc<tokio::sync::Notify>,
) -> Option<JoinHandle<()>> {
    use chromiumoxide::cdp::js_protocol::runtime::EventExecutionContextCreated;
    use futures_util::StreamExt;
    let mut created = match page.event_listener::<EventExecutionContextCreated>().await {
        Ok(created) => created,
        Err(error) => {
            tracing::debug!(%error, "no context events; worlds are asked for");
            return None;
        }
    };
    // A tab's main frame has the id of its target.
    let main_frame = page.target_id().inner().clone();
    Some(tokio::spawn(async move {
        while let Some(event) = created.next().await {
            let context = &event.context;
            let frame = context
                .aux_data
                .as_ref()
                .and_then(|a| a.get("frameId"))
                .and_then(|f| f.as_str());
            if context.name == WORLD_NAME && frame == Some(main_frame.as_str()) {
                if let Ok(mut slot) = announced.lock() {
                    *slot = Some(World {
                        id: context.id,
                        unique: Some(context.unique_id.clone()).filter(|u| !u.is_empty()),
                    });
                }
                announcements.notify_waiters();
            }
        }
    }))
}

/// The observer's options as its `observe` call takes them.
fn observer_options(opts: &ObserveOptions) -> serde_json::Value {
    serde_json::json!({
        "fullPage": opts.full_page,
        "marginPx": opts.margin_px.unwrap_or(-1.0),
        "textLimit": opts.text_limit,
        "listeners": opts.click_listeners,
    })
}

/// `script` run only in a tab's top document, not in the frames a
/// new-document script also reaches.
fn top_document_only(script: &str) -> String {
    format!("if (window === window.top) {{\n{script}\n}}")
}

/// The result of one evaluation in the isolated world.
enum Evaluated {
    Value(serde_json::Value),
    /// The world's context no longer exists (the document changed).
    ContextGone,
}

/// The tab's own world is reached over its page.
impl super::frames::WorldChannel for Tab {
    async fn send_evaluation(
        &self,
        params: EvaluateParams,
        what: &str,
        limit: Duration,
    ) -> Result<chromiumoxide::cdp::js_protocol::runtime::EvaluateReturns, BrowserError> {
        self.with_timeout(what, limit, self.page.execute(params))
            .await
            .map(|resp| resp.result)
    }
}

impl Tab {
    /// Opens a tab at `url` in `browser`, with its own allowed-domain guard.
    pub(crate) async fn open(
        browser: &Browser,
        mut ctx: TabContext,
        url: &str,
    ) -> Result<Tab, BrowserError> {
        let what = format!("opening a tab at {url}");
        // The tab starts blank so the listener hook is in place before the
        // page's own scripts run.
        // Each tab gets a window of its own: a tab behind another in the same
        // window is hidden, and a hidden page paints no frames, so the input
        // events and frame waits of one tab would stall while another one of
        // the session (or of a shared browser) is in front.
        let mut params = CreateTargetParams::new("about:blank");
        params.new_window = Some(true);
        params.browser_context_id = ctx.browser_context.clone();
        let page = call(
            &what,
            Duration::from_secs(30),
            &ctx.status,
            browser.new_page(params),
        )
        .await?;
        ctx.family.add(page.target_id().inner());
        ctx.guard = ctx
            .registry
            .as_ref()
            .map(|g| g.for_tab(page.target_id().inner()));
        let tab = Tab::wrap(page, ctx, true).await?;
        if url != "about:blank" {
            tab.navigate(url, Duration::from_secs(30)).await?;
        }
        Ok(tab)
    }

    /// Wraps a page and installs the click-listener hook for every document
    /// it loads from now on (and the current one); with `intercept`, the
    /// allowed-domain interception too (a popup has its own already).
    async fn wrap(page: Page, ctx: TabContext, intercept: bool) -> Result<Tab, BrowserError> {
        let mut tab = Tab {
            page,
            ctx,
            world: Mutex::new(None),
            interception: None,
            frames: Mutex::new(Frames::default()),
            announced: Arc::default(),
            world_watch: None,
            announcements: Arc::default(),
            first_look: std::sync::Mutex::new(None),
            looks_used: std::sync::atomic::AtomicU64::new(0),
            documentless: std::sync::atomic::AtomicU64::new(0),
        };
        tab.world_watch = watch_worlds(
            &tab.page,
            Arc::clone(&tab.announced),
            Arc::clone(&tab.announcements),
        )
        .await;
        let limit = tab.ctx.call_timeout;
        if let Some(guard) = tab.ctx.guard.clone().filter(|_| intercept) {
            let task = tab
                .with_timeout(
                    "intercepting navigations for the allowed domains",
                    limit,
                    protect_page(&tab.page, guard, None),
                )
                .await?;
            tab.interception = Some(task);
        }
        // The configured window size is the viewport the page sees. A window
        // of that size loses height to the browser's own frame (headless
        // too: 1280×800 left 1280×713), so listings and screenshots would
        // not match the configuration.
        let (width, height) = tab.ctx.launch.window;
        tab.with_timeout(
            "setting the viewport size",
            limit,
            tab.page.execute(SetDeviceMetricsOverrideParams::new(
                i64::from(width),
                i64::from(height),
                0.0,
                false,
            )),
        )
        .await?;
        tab.with_timeout(
            "installing the listener hook",
            limit,
            tab.page
                .execute(AddScriptToEvaluateOnNewDocumentParams::new(
                    LISTENER_HOOK_JS,
                )),
        )
        .await?;
        if let Some(script) = tab.ctx.storage_script.clone() {
            tab.with_timeout(
                "installing the state file's local storage",
                limit,
                tab.page
                    .execute(AddScriptToEvaluateOnNewDocumentParams::new(&*script)),
            )
            .await?;
        }
        tab.with_timeout(
            "installing the listener hook",
            limit,
            tab.page.execute(EvaluateParams::new(LISTENER_HOOK_JS)),
        )
        .await?;
        // The observer goes into each new document's isolated world as the
        // document starts, so its compile and its first layout overlap the
        // load wait instead of following it (createIsolatedWorld then finds
        // the same named world, where the observer is already installed).
        // Only the top document's: the observer walks same-origin frames
        // from there, and frames of other origins get theirs when they are
        // attached, so a page of twenty frames does not compile it twenty
        // more times before its load.
        let observer = AddScriptToEvaluateOnNewDocumentParams::builder()
            .source(top_document_only(OBSERVER_JS))
            .world_name(WORLD_NAME)
            .build()
            .map_err(BrowserError::Script)?;
        tab.with_timeout(
            "installing the observer for new documents",
            limit,
            tab.page.execute(observer),
        )
        .await?;
        // The action helper likewise: settling after a navigation finds it
        // in place rather than installing it after the load, and it sees
        // the load event it counts the quiet from.
        let helper = AddScriptToEvaluateOnNewDocumentParams::builder()
            .source(top_document_only(ACT_JS))
            .world_name(WORLD_NAME)
            .build()
            .map_err(BrowserError::Script)?;
        tab.with_timeout(
            "installing the action helper for new documents",
            limit,
            tab.page.execute(helper),
        )
        .await?;
        Ok(tab)
    }

    /// The raw chromiumoxide page, for CDP commands this type does not wrap
    /// (e.g. `Input.dispatchMouseEvent`); wrap calls in [`Tab::with_timeout`].
    pub fn page(&self) -> &Page {
        &self.page
    }

    /// The default limit for one CDP call.
    pub fn call_timeout(&self) -> Duration {
        self.ctx.call_timeout
    }

    /// Runs a CDP future with a time limit; a dead browser becomes
    /// [`BrowserError::Disconnected`], a late answer [`BrowserError::Timeout`].
    pub async fn with_timeout<T>(
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

    /// Opens another tab at `url` in the same browser, with the same
    /// allowed domains (to replace a tab that is stuck).
    pub async fn open_sibling(&self, url: &str) -> Result<Tab, BrowserError> {
        let browser = self
            .ctx
            .browser
            .upgrade()
            .ok_or_else(|| BrowserError::Disconnected("the session was closed".into()))?;
        Tab::open(&browser, self.ctx.clone(), url).await
    }

    /// Takes over another open tab of the same browser (a tab a click
    /// opened), by its target id. Its allowed-domain guard is the one it
    /// was given when it opened (a popup's interception is already in
    /// place and is not started twice).
    pub async fn adopt(&self, target_id: &str) -> Result<Tab, BrowserError> {
        let browser = self
            .ctx
            .browser
            .upgrade()
            .ok_or_else(|| BrowserError::Disconnected("the session was closed".into()))?;
        let id =
            chromiumoxide::cdp::browser_protocol::target::TargetId::from(target_id.to_string());
        let page = self
            .with_timeout(
                "finding the tab",
                self.ctx.call_timeout,
                browser.get_page(id),
            )
            .await?;
        let mut ctx = self.ctx.clone();
        ctx.guard = ctx.registry.as_ref().map(|r| r.of(target_id));
        ctx.family.add(target_id);
        Tab::wrap(page, ctx, false).await
    }

    /// Closes another tab of the same browser by its target id.
    pub async fn close_target(&self, target_id: &str) -> Result<(), BrowserError> {
        let id =
            chromiumoxide::cdp::browser_protocol::target::TargetId::from(target_id.to_string());
        self.with_timeout(
            "closing a tab",
            self.ctx.call_timeout,
            self.page
                .execute(chromiumoxide::cdp::browser_protocol::target::CloseTargetParams::new(id)),
        )
        .await
        .map(|_| ())
    }

    /// The open tabs, this one marked.
    pub async fn open_tabs(&self) -> Result<Vec<TabInfo>, BrowserError> {
        self.list_tabs()
            .await
            .ok_or_else(|| BrowserError::Script("the tabs could not be listed".into()))
    }

    /// The browser's id for this tab (its CDP target id).
    pub fn target_id(&self) -> &str {
        self.page.target_id().inner().as_str()
    }

    /// The session's downloads, when they are kept.
    pub fn downloads(&self) -> Option<&Arc<super::download::Downloads>> {
        self.ctx.downloads.as_ref()
    }

    /// The allowed-domain guard this tab enforces, when a list is set.
    pub fn guard(&self) -> Option<&Arc<NavigationGuard>> {
        self.ctx.guard.as_ref()
    }

    /// Refuses `url` up front when the allowed domains do not cover it.
    /// Interception catches network navigations anyway; this also covers
    /// the ones that never reach the network (`data:`, `javascript:`).
    pub fn check_navigation(&self, url: &str) -> Result<(), BrowserError> {
        let me = self.page.target_id().inner().as_str();
        match self
            .ctx
            .guard
            .as_ref()
            .map(|g| g.check_in(url, Some(me), None))
        {
            Some(Verdict::Blocked(reason)) => Err(BrowserError::Blocked {
                url: url.to_string(),
                reason,
            }),
            _ => Ok(()),
        }
    }

    /// Navigates to `url` and waits for the load event; a URL outside the
    /// allowed domains fails with [`BrowserError::Blocked`].
    pub async fn navigate(&self, url: &str, limit: Duration) -> Result<(), BrowserError> {
        self.check_navigation(url)?;
        let what = format!("loading {url}");
        self.with_timeout(&what, limit, self.page.goto(NavigateParams::new(url)))
            .await?;
        // The new document has no world yet; the old context id is dead.
        *self.world.lock().await = None;
        Ok(())
    }

    /// The browser's cookies, as a state file holds them.
    pub async fn cookies(&self) -> Result<StorageState, BrowserError> {
        let browser = self
            .ctx
            .browser
            .upgrade()
            .ok_or_else(|| BrowserError::Disconnected("the session was closed".into()))?;
        let cookies = self
            .with_timeout("reading the cookies", self.ctx.call_timeout, async {
                browser.get_cookies().await
            })
            .await?;
        Ok(StorageState::from_cookies(&cookies))
    }

    /// The browser's cookies and this document's local storage, as a state
    /// file holds them.
    pub async fn storage_state(&self) -> Result<StorageState, BrowserError> {
        let mut state = self.cookies().await?;
        // An opaque origin (about:blank, data:) has no storage to read.
        let local = self
            .eval(
                "(() => { try { if (location.origin === 'null') return null; \
                 return { origin: location.origin, entries: Object.entries(localStorage) }; } \
                 catch (e) { return null; } })()",
            )
            .await?;
        if let Some(origin) = local.get("origin").and_then(|o| o.as_str()) {
            let entries = local
                .get("entries")
                .and_then(|e| e.as_array())
                .map(|list| {
                    list.iter()
                        .filter_map(|pair| {
                            Some(StorageEntry {
                                name: pair.get(0)?.as_str()?.to_string(),
                                value: pair.get(1)?.as_str()?.to_string(),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            state.set_origin(OriginStorage {
                origin: origin.to_string(),
                local_storage: entries,
            });
        }
        Ok(state)
    }

    /// Writes [`Tab::storage_state`] to `path` (owner-only permissions);
    /// local storage of other origins already in the file is kept.
    pub async fn save_state(&self, path: &std::path::Path) -> Result<StorageState, BrowserError> {
        let mut state = self.storage_state().await?;
        if let Ok(Some(earlier)) = StorageState::load_if_present(path) {
            for origin in earlier.origins {
                if !state.origins.iter().any(|o| o.origin == origin.origin) {
                    state.origins.push(origin);
                }
            }
        }
        state.save(path)?;
        Ok(state)
    }

    /// Closes the tab.
    pub async fn close(self) -> Result<(), BrowserError> {
        let limit = self.ctx.call_timeout;
        call(
            "closing the tab",
            limit,
            &self.ctx.status,
            self.page.clone().close(),
        )
        .await
    }

    /// The current URL.
    pub async fn url(&self) -> Result<String, BrowserError> {
        let url = self
            .with_timeout("reading the URL", self.ctx.call_timeout, self.page.url())
            .await?;
        Ok(url.unwrap_or_default())
    }

    async fn create_world(&self) -> Result<Option<World>, BrowserError> {
        let limit = self.ctx.call_timeout;
        let frame = self
            .with_timeout("finding the main frame", limit, self.page.mainframe())
            .await?
            .ok_or_else(|| BrowserError::Script("the tab has no main frame yet".into()))?;
        let params = CreateIsolatedWorldParams::builder()
            .frame_id(frame)
            .world_name(WORLD_NAME)
            .grant_univeral_access(false)
            .build()
            .map_err(BrowserError::Script)?;
        let created = self
            .with_timeout(
                "creating the isolated world",
                limit,
                self.page.execute(params),
            )
            .await?;
        let world = World {
            id: created.result.execution_context_id,
            unique: None,
        };
        match self
            .evaluate_in(&world, OBSERVER_JS, "installing the observer", limit)
            .await?
        {
            Evaluated::Value(_) => Ok(Some(world)),
            // The page navigated while the observer was being installed.
            Evaluated::ContextGone => Ok(None),
        }
    }

    async fn evaluate_in(
        &self,
        world: &World,
        expression: &str,
        what: &str,
        limit: Duration,
    ) -> Result<Evaluated, BrowserError> {
        let mut params = super::frames::evaluate_in_world(expression, world.id);
        world.aim(&mut params);
        Ok(
            match super::frames::send_to_world(self, params, what, limit).await? {
                Some(value) => Evaluated::Value(value),
                None => Evaluated::ContextGone,
            },
        )
    }

    /// Evaluates `expression` in the isolated world of the current document
    /// (creating it when the document changed). `fresh_world` is true when
    /// the world had to be created for this call.
    async fn world_eval(
        &self,
        expression: &str,
        what: &str,
        limit: Duration,
    ) -> Result<(serde_json::Value, bool), BrowserError> {
        let mut world = self.world.lock().await;
        let mut fresh = false;
        for _attempt in 0..3 {
            // A world announced since the held one was taken is the newest
            // document's, created as it started with the observer in it;
            // the held one belongs to a page that is gone.
            let newer = self.announced.lock().ok().and_then(|mut a| a.take());
            let adopted = newer.is_some();
            if let Some(newer) = newer {
                fresh |= world.as_ref() != Some(&newer);
                *world = Some(newer);
            }
            let current = match world.as_ref() {
                Some(current) => current.clone(),
                None => {
                    let Some(created) = self.create_world().await? else {
                        continue;
                    };
                    fresh = true;
                    *world = Some(created.clone());
                    created
                }
            };
            let evaluated = match self.evaluate_in(&current, expression, what, limit).await {
                Err(BrowserError::Script(message)) if adopted => {
                    // A world Chromium made for another reason (or before
                    // the observer's script was registered) lacks the
                    // observer: install it and ask again.
                    let probe = "typeof globalThis.__webagentObserver";
                    let missing = matches!(
                        self.evaluate_in(&current, probe, what, limit).await?,
                        Evaluated::Value(kind) if kind == "undefined"
                    );
                    if !missing {
                        return Err(BrowserError::Script(message));
                    }
                    match self
                        .evaluate_in(&current, OBSERVER_JS, "installing the observer", limit)
                        .await?
                    {
                        Evaluated::Value(_) => {
                            self.evaluate_in(&current, expression, what, limit).await?
                        }
                        gone => gone,
                    }
                }
                other => other?,
            };
            match evaluated {
                Evaluated::Value(v) => return Ok((v, fresh)),
                Evaluated::ContextGone => *world = None,
            }
        }
        Err(BrowserError::Script(format!(
            "{what}: the page kept navigating; try again once it settles"
        )))
    }

    /// Evaluates a JavaScript expression in webagent's isolated world of the
    /// current document and returns its JSON value.
    pub async fn eval(&self, expression: &str) -> Result<serde_json::Value, BrowserError> {
        Ok(self
            .world_eval(expression, "evaluating script", self.ctx.call_timeout)
            .await?
            .0)
    }

    /// Forgets which world the last document announced: a navigation is
    /// about to start, and [`Tab::first_look`] waits for the next one.
    pub(crate) fn expect_new_document(&self) {
        if let Ok(mut announced) = self.announced.lock() {
            *announced = None;
        }
        self.expect_first_look_unused();
    }

    /// The first look at the document a navigation is loading: waits for
    /// its world to be announced, then asks the page to take the
    /// observation for `opts` in its load task (after every load listener,
    /// before the first frame), when the page is done loading by then.
    /// True when it did; the next [`Tab::observe`] with the same options
    /// then answers with it. Meant to run beside the navigation, and to be
    /// dropped when the navigation brings no document.
    pub(crate) async fn first_look(&self, opts: &ObserveOptions) -> bool {
        let world = loop {
            let announced = self.announcements.notified();
            if let Some(world) = self.announced.lock().ok().and_then(|a| a.clone()) {
                break world;
            }
            announced.await;
        };
        let options = observer_options(opts);
        let expression = format!(
            "globalThis.__webagentAct ? globalThis.__webagentAct.firstLook({options}) : {{early: false}}"
        );
        let looked = self
            .evaluate_in(&world, &expression, "taking the first look", opts.timeout)
            .await;
        let json = match looked {
            Ok(Evaluated::Value(v)) if v.get("early").and_then(|e| e.as_bool()) == Some(true) => v
                .get("observation")
                .and_then(|o| o.as_str())
                .map(str::to_owned),
            Ok(_) => None,
            Err(err) => {
                tracing::debug!(%err, "no first look");
                None
            }
        };
        let Some(json) = json else { return false };
        if let Ok(mut first) = self.first_look.lock() {
            *first = Some(FirstLook {
                world,
                taken: Instant::now(),
                options,
                json,
            });
        }
        true
    }

    /// Whether a world was announced since [`Tab::expect_new_document`]:
    /// the new document started with webagent's scripts in it.
    pub(crate) fn world_announced(&self) -> bool {
        self.announced.lock().is_ok_and(|a| a.is_some())
    }

    /// How many observations a first look answered, over the tab's life:
    /// what `bench observe` and the tests read to see the look was used.
    pub fn first_looks_used(&self) -> u64 {
        self.looks_used.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Counts a navigation of the top frame that an action's settling saw
    /// stop before any document came (a download, a 204).
    pub(crate) fn note_navigation_without_document(&self) {
        self.documentless
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// How many navigations stopped before a document came, over the
    /// tab's life.
    pub(crate) fn navigations_without_document(&self) -> u64 {
        self.documentless.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Drops a first look the page may change before it is read.
    pub(crate) fn expect_first_look_unused(&self) {
        if let Ok(mut first) = self.first_look.lock() {
            *first = None;
        }
    }

    /// A first look taken for `options` in the current document, still
    /// fresh; the world it was taken in becomes the tab's world.
    async fn take_first_look(&self, options: &serde_json::Value) -> Option<String> {
        let first = self.first_look.lock().ok()?.take()?;
        if &first.options != options || first.taken.elapsed() > FIRST_LOOK_FRESH {
            return None;
        }
        let mut world = self.world.lock().await;
        let mut announced = self.announced.lock().ok()?;
        match announced.take() {
            // Not adopted yet: the world the newest document announced,
            // which the tab now takes as its own.
            Some(newest) if newest == first.world => *world = Some(newest),
            // A newer document started since: the look is of a page gone.
            Some(newest) => {
                *announced = Some(newest);
                return None;
            }
            None if world.as_ref() == Some(&first.world) => {}
            None => return None,
        }
        self.looks_used
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(first.json)
    }

    /// Observes the page: the indexed listing, scroll position, tabs, text.
    pub async fn observe(&self, opts: &ObserveOptions) -> Result<PageState, BrowserError> {
        let started = Instant::now();
        let js_opts = observer_options(opts);
        let (json, tabs) = match self.take_first_look(&js_opts).await {
            Some(json) => (json, self.list_tabs().await),
            None => {
                let expression = format!("globalThis.__webagentObserver.observe({js_opts})");
                // The tab list does not depend on the walk: ask for both at
                // once and save a round trip.
                let (walked, tabs) = tokio::join!(
                    self.world_eval(&expression, "observing the page", opts.timeout),
                    self.list_tabs()
                );
                let (value, _) = walked?;
                let serde_json::Value::String(json) = value else {
                    return Err(BrowserError::Decode(format!(
                        "expected a JSON string, got {value}"
                    )));
                };
                (json, tabs)
            }
        };
        let raw = RawObservation::parse(&json).map_err(|e| BrowserError::Decode(e.to_string()))?;
        let raw = self.observe_frames(raw, opts).await;
        let tabs = tabs.unwrap_or_else(|| {
            vec![TabInfo {
                id: self.page.target_id().inner().clone(),
                url: raw.url.clone(),
                title: raw.title.clone(),
                current: true,
            }]
        });
        let extract_ms = started.elapsed().as_secs_f64() * 1000.0;
        let mut state = raw.into_page_state(tabs, extract_ms);
        // Rendering is part of the observation the model waits for.
        state.extract_ms = started.elapsed().as_secs_f64() * 1000.0;
        Ok(state)
    }

    /// The open tabs, with this one marked; `None` when they could not be
    /// listed, which is not worth failing an observation for.
    async fn list_tabs(&self) -> Option<Vec<TabInfo>> {
        let me = self.page.target_id().inner().clone();
        let listed = self
            .with_timeout(
                "listing tabs",
                self.ctx.call_timeout,
                self.page.execute(GetTargetsParams::default()),
            )
            .await;
        match listed {
            Ok(resp) => Some(
                self.ctx
                    .family
                    .members(&resp.result.target_infos)
                    .into_iter()
                    .map(|t| TabInfo {
                        id: t.target_id.inner().clone(),
                        url: t.url.clone(),
                        title: t.title.clone(),
                        current: *t.target_id.inner() == me,
                    })
                    .collect(),
            ),
            Err(err) => {
                tracing::debug!(%err, "could not list tabs");
                None
            }
        }
    }

    /// Runs `function` — JavaScript source of `(element, args, helpers) =>
    /// value` — on exactly the element listed as `index` by observation
    /// `observation`, in the isolated world, and returns its JSON value.
    ///
    /// `helpers.topRect(el)` gives the element's box in top-level viewport
    /// coordinates (frame offsets added); `helpers.composedParent(el)` steps
    /// out of shadow roots.
    pub async fn eval_on_index(
        &self,
        observation: u64,
        index: ElementIndex,
        function: &str,
        args: serde_json::Value,
    ) -> Result<serde_json::Value, BrowserError> {
        let (slot, seq, local) = self.element_route(observation, index.0).await?;
        let expression =
            format!("globalThis.__webagentObserver.call({seq}, {local}, ({function}), {args})");
        let (value, fresh) = self
            .eval_in(slot, &expression, "running script on an element")
            .await?;
        if fresh {
            return Err(BrowserError::ElementGone {
                index: index.0,
                detail: "the page navigated or reloaded since it was listed".into(),
            });
        }
        self.unwrap_call(value, index.0, "")
    }

    /// Runs `function` — `(elements, args, helpers) => value` — on the
    /// elements a CSS selector matches in the top document.
    pub async fn eval_on_selector(
        &self,
        selector: &str,
        function: &str,
        args: serde_json::Value,
    ) -> Result<serde_json::Value, BrowserError> {
        let quoted = serde_json::Value::String(selector.to_string());
        let expression =
            format!("globalThis.__webagentObserver.callSelector({quoted}, ({function}), {args})");
        let (value, _) = self
            .world_eval(
                &expression,
                "running script on a selector",
                self.ctx.call_timeout,
            )
            .await?;
        self.unwrap_call(value, 0, selector)
    }

    fn unwrap_call(
        &self,
        value: serde_json::Value,
        index: usize,
        selector: &str,
    ) -> Result<serde_json::Value, BrowserError> {
        let text = value
            .as_str()
            .ok_or_else(|| BrowserError::Decode(format!("expected a JSON string, got {value}")))?;
        let mut reply: serde_json::Value =
            serde_json::from_str(text).map_err(|e| BrowserError::Decode(e.to_string()))?;
        if reply.get("ok").and_then(|v| v.as_bool()) == Some(true) {
            return Ok(reply
                .get_mut("value")
                .map(serde_json::Value::take)
                .unwrap_or_default());
        }
        let detail = reply
            .get("detail")
            .and_then(|v| v.as_str())
            .unwrap_or("no detail")
            .to_string();
        Err(match reply.get("error").and_then(|v| v.as_str()) {
            Some("gone") => BrowserError::ElementGone { index, detail },
            Some("stale") => BrowserError::StaleObservation { index, detail },
            Some("unknown") => BrowserError::UnknownIndex { index, detail },
            Some("selector") => BrowserError::Selector {
                selector: selector.to_string(),
                detail,
            },
            _ => BrowserError::Script(detail),
        })
    }

    /// A bare `DOMSnapshot.captureSnapshot` with the computed styles an
    /// observer would need (display, visibility, opacity, overflow, cursor,
    /// pointer-events, position, background-color), paint order and DOM
    /// rects. It is the baseline of `webagent bench observe`; returns the
    /// number of nodes captured.
    pub async fn capture_snapshot(&self, limit: Duration) -> Result<usize, BrowserError> {
        let styles = [
            "display",
            "visibility",
            "opacity",
            "overflow",
            "cursor",
            "pointer-events",
            "position",
            "background-color",
        ];
        let params = CaptureSnapshotParams::builder()
            .computed_styles(styles.iter().map(|s| s.to_string()))
            .include_paint_order(true)
            .include_dom_rects(true)
            .build()
            .map_err(BrowserError::Script)?;
        let snap = self
            .with_timeout("capturing a DOM snapshot", limit, self.page.execute(params))
            .await?;
        Ok(snap
            .result
            .documents
            .iter()
            .map(|d| d.nodes.node_name.as_ref().map_or(0, |n| n.len()))
            .sum())
    }
}
