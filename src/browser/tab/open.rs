//! Opening a tab, taking over one a click opened, and closing tabs. A
//! tab opens blank, in a window of its own, and gets webagent's scripts
//! (the listener hook, the observer, the action helper, the state file's
//! local storage) and the allowed-domain interception before any page of
//! the site loads in it.

use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use chromiumoxide::cdp::browser_protocol::page::AddScriptToEvaluateOnNewDocumentParams;
use chromiumoxide::cdp::browser_protocol::target::{
    CreateTargetParams, GetTargetInfoParams, TargetId,
};
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::{Browser, Page};
use tokio::sync::{watch, Mutex};

use super::closing::watch_closing;
use super::dialogs::answer_dialogs;
use super::world::{watch_worlds, WORLD_NAME};
use super::{Tab, TabContext};
use crate::browser::connection::call;
use crate::browser::error::BrowserError;
use crate::browser::frames::Frames;
use crate::browser::guard::protect_page;
use crate::browser::scripts::{ACT_JS, LISTENER_HOOK_JS, OBSERVER_JS};

/// How long closing a tab waits for the browser to destroy it.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// `script` run only in a tab's top document, not in the frames a
/// new-document script also reaches.
fn top_document_only(script: &str) -> String {
    format!("if (window === window.top) {{\n{script}\n}}")
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
            closed: Arc::new(watch::channel(false).0),
            closed_watch: None,
            dialogs: Arc::default(),
            dialog_watch: None,
        };
        // First: a dialog the page opens from here on, its first load
        // included, must not block the calls below or the load.
        tab.dialog_watch =
            answer_dialogs(&tab.page, Arc::clone(&tab.dialogs), tab.ctx.call_timeout).await;
        if let Some(browser) = tab.ctx.browser.upgrade() {
            let id = tab.target_id().to_string();
            tab.closed_watch = watch_closing(&browser, id, Arc::clone(&tab.closed)).await;
        }
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
            .browser_call(
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

    /// The tab that opened the tab `target_id`, as the browser knows it
    /// (`None` when it has no opener: the session opened it itself).
    pub(crate) async fn opener_of(&self, target_id: &str) -> Option<String> {
        let browser = self.ctx.browser.upgrade()?;
        let params = GetTargetInfoParams::builder()
            .target_id(TargetId::from(target_id.to_string()))
            .build();
        let info = self
            .browser_call(
                "reading a tab's opener",
                self.ctx.call_timeout,
                browser.execute(params),
            )
            .await
            .ok()?;
        info.result
            .target_info
            .opener_id
            .map(|id| id.inner().clone())
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

    /// Closes the tab, and waits (a little) until the browser has
    /// destroyed it: `Page.close` is answered before, and a tab list asked
    /// for right after would still have it.
    pub async fn close(self) -> Result<(), BrowserError> {
        let limit = self.ctx.call_timeout;
        call(
            "closing the tab",
            limit,
            &self.ctx.status,
            self.page.clone().close(),
        )
        .await?;
        if !self.closed_within(CLOSE_WAIT).await {
            tracing::debug!("the browser did not say the closed tab was gone");
        }
        Ok(())
    }
}
