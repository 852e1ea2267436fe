//! One browser and its CDP connection.

use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::browser::{
    BrowserContextId, SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::cdp::browser_protocol::target::{
    CloseTargetParams, CreateBrowserContextParams, CreateTargetParams, DisposeBrowserContextParams,
    GetTargetsParams, TargetId,
};
use chromiumoxide::error::CdpError;
use chromiumoxide::handler::HandlerConfig;
use chromiumoxide::{Browser, Handler};
use futures_util::StreamExt;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::connection::{call, SessionStatus};
use super::download::{watch_downloads, Downloads};
use super::error::BrowserError;
use super::guard::{watch_popups, DomainPolicy, GuardRegistry};
use super::launch::{LaunchOptions, LaunchedChrome};
use super::state::StorageState;
use super::tab::{Tab, TabContext, TabFamily};
use crate::dom::TabInfo;

/// A Chromium (launched or attached) with its CDP connection.
///
/// Dropping the session stops a launched browser and removes its profile;
/// an attached browser is left running.
pub struct BrowserSession {
    options: LaunchOptions,
    browser: Option<Arc<Browser>>,
    handler: Option<JoinHandle<()>>,
    status: watch::Receiver<SessionStatus>,
    chrome: Option<LaunchedChrome>,
    call_timeout: Duration,
    /// The allowed-domain guard every tab shares; `None` when no list is
    /// set. It outlives relaunches so its log of refusals stays whole.
    guard: Option<Arc<GuardRegistry>>,
    /// Closes popups to refused URLs; restarted with each connection.
    popup_watch: Option<JoinHandle<()>>,
    /// The blank tab a launched Chromium opens by itself. Nobody asked for
    /// it, so it goes once the first tab of ours is open (closing it before
    /// would leave a browser with no window).
    startup_tab: std::sync::Mutex<Option<TargetId>>,
    /// The script that writes the state file's local storage, run in each
    /// tab before the page's own (see [`super::state`]).
    storage_script: Option<Arc<str>>,
    /// The downloads of the current connection, when they are kept.
    downloads: Option<Arc<Downloads>>,
    download_watch: Option<JoinHandle<()>>,
    /// The tabs that are the session's (see [`TabFamily`]).
    family: Arc<TabFamily>,
}

impl std::fmt::Debug for BrowserSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrowserSession")
            .field("status", &*self.status.borrow())
            .field("connect", &self.options.connect)
            .finish()
    }
}

/// A browser context of a shared browser (see
/// [`BrowserSession::isolated_context`]): its id, and the tabs of the
/// session that uses it.
#[derive(Debug)]
pub struct IsolatedContext {
    id: BrowserContextId,
    family: Arc<TabFamily>,
}

/// How long a closing browser may take to finish writing its profile.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);
/// The default limit for one CDP call (observations have their own).
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

impl BrowserSession {
    /// Launches Chromium (or attaches to `options.connect`) and connects.
    /// With `options.allowed_domains` set, every tab enforces them (see
    /// [`super::guard`]); a pattern that cannot be parsed fails here.
    pub async fn start(options: LaunchOptions) -> Result<BrowserSession, BrowserError> {
        let policy = DomainPolicy::new(&options.allowed_domains)?;
        let guard = policy
            .is_active()
            .then(|| Arc::new(GuardRegistry::new(policy)));
        // A broken state file stops the start before any browser runs.
        let state = match &options.state {
            Some(path) => StorageState::load_if_present(path)?,
            None => None,
        };
        let (browser, handler, status, chrome) = connect(&options).await?;
        let startup_tab = startup_tab(&browser, &status, chrome.is_some()).await;
        let browser = Arc::new(browser);
        let popup_watch = match &guard {
            Some(guard) => Some(watch_popups(browser.clone(), guard.clone()).await),
            None => None,
        };
        let mut session = BrowserSession {
            options,
            browser: Some(browser),
            handler: Some(handler),
            status,
            chrome,
            call_timeout: CALL_TIMEOUT,
            guard,
            popup_watch,
            startup_tab: std::sync::Mutex::new(startup_tab),
            storage_script: None,
            downloads: None,
            download_watch: None,
            family: Arc::default(),
        };
        session.watch_downloads().await?;
        if let Some(state) = state {
            session.load_state(&state).await?;
        }
        Ok(session)
    }

    /// Sends the browser's downloads to the configured directory.
    async fn watch_downloads(&mut self) -> Result<(), BrowserError> {
        let Some(options) = self.options.downloads.clone() else {
            return Ok(());
        };
        let browser = self.live_browser()?.clone();
        let (downloads, task) = watch_downloads(browser, options, self.call_timeout).await?;
        self.downloads = Some(downloads);
        self.download_watch = Some(task);
        Ok(())
    }

    /// The downloads of this browser, when they are kept.
    pub fn downloads(&self) -> Option<&Arc<Downloads>> {
        self.downloads.as_ref()
    }

    /// Puts the cookies of `state` into the browser (over any it has).
    pub async fn add_cookies(&self, state: &StorageState) -> Result<(), BrowserError> {
        self.set_cookies(state, None).await
    }

    /// Puts the cookies of `state` into `context` (`None`: the default
    /// one).
    async fn set_cookies(
        &self,
        state: &StorageState,
        context: Option<&BrowserContextId>,
    ) -> Result<(), BrowserError> {
        let browser = self.live_browser()?;
        let cookies = state.cookie_params();
        if cookies.is_empty() {
            return Ok(());
        }
        let mut params =
            chromiumoxide::cdp::browser_protocol::storage::SetCookiesParams::new(cookies);
        params.browser_context_id = context.cloned();
        call(
            "restoring cookies",
            self.call_timeout,
            &self.status,
            browser.execute(params),
        )
        .await
        .map(|_| ())
    }

    /// Puts the cookies of `state` into the browser and has every tab
    /// opened from now on write its local storage.
    async fn load_state(&mut self, state: &StorageState) -> Result<(), BrowserError> {
        self.add_cookies(state).await?;
        self.storage_script = state.local_storage_script().map(Arc::from);
        tracing::info!(
            cookies = state.cookies.len(),
            origins = state.origins.len(),
            "loaded the state file"
        );
        Ok(())
    }

    /// The allowed domains every tab enforces, when a list is set (each
    /// tab's log of refusals is [`Tab::guard`]).
    pub fn domain_policy(&self) -> Option<&DomainPolicy> {
        self.guard.as_ref().map(|g| g.policy())
    }

    /// The current status; cheap, never waits.
    pub fn status(&self) -> SessionStatus {
        self.status.borrow().clone()
    }

    /// Resolves when the browser goes away, with the reason.
    pub fn disconnected(&self) -> impl std::future::Future<Output = String> + Send + 'static {
        let mut status = self.status.clone();
        async move {
            loop {
                if let SessionStatus::Disconnected(reason) = &*status.borrow_and_update() {
                    return reason.clone();
                }
                if status.changed().await.is_err() {
                    return "the session was closed".to_string();
                }
            }
        }
    }

    /// The DevTools websocket address of the browser.
    pub fn websocket_url(&self) -> Option<String> {
        self.browser.as_ref().map(|b| b.websocket_address().clone())
    }

    /// The Chromium executable this session launched (none when attached).
    pub fn executable(&self) -> Option<&std::path::Path> {
        self.chrome.as_ref().map(|c| c.executable.as_path())
    }

    /// The profile of a launched browser (a temporary one is removed when
    /// it stops).
    pub fn profile_dir(&self) -> Option<&std::path::Path> {
        self.chrome.as_ref().map(|c| c.profile())
    }

    fn live_browser(&self) -> Result<&Arc<Browser>, BrowserError> {
        if let SessionStatus::Disconnected(reason) = self.status() {
            return Err(BrowserError::Disconnected(reason));
        }
        self.browser
            .as_ref()
            .ok_or_else(|| BrowserError::Disconnected("the session was closed".into()))
    }

    /// Opens a new tab at `url` and waits for it to load.
    pub async fn new_tab(&self, url: &str) -> Result<Tab, BrowserError> {
        self.open_in(self.family.clone(), None, url).await
    }

    /// Makes a browser context of its own in this browser: cookies, local
    /// storage and cache apart from every other context's (CDP
    /// `Target.createBrowserContext`), so sessions sharing one browser
    /// (a suite's cases) cannot see each other's sign-ins. The state file's
    /// cookies, when one is loaded, are put into it as into the default
    /// context.
    pub async fn isolated_context(&self) -> Result<IsolatedContext, BrowserError> {
        let browser = self.live_browser()?;
        let created = call(
            "creating a browser context",
            self.call_timeout,
            &self.status,
            browser.execute(CreateBrowserContextParams::default()),
        )
        .await?;
        let context = IsolatedContext {
            id: created.result.browser_context_id,
            family: Arc::default(),
        };
        if let Some(path) = &self.options.state {
            if let Some(state) = StorageState::load_if_present(path)? {
                self.set_cookies(&state, Some(&context.id)).await?;
            }
        }
        // Downloads of the context go where the default context's go, and
        // are reported to the same watcher.
        if let Some(options) = &self.options.downloads {
            let params = SetDownloadBehaviorParams::builder()
                .behavior(SetDownloadBehaviorBehavior::AllowAndName)
                .browser_context_id(context.id.clone())
                .download_path(options.dir.display().to_string())
                .events_enabled(true)
                .build()
                .map_err(BrowserError::Script)?;
            call(
                "setting where the context's downloads go",
                self.call_timeout,
                &self.status,
                browser.execute(params),
            )
            .await?;
        }
        Ok(context)
    }

    /// Opens a new tab at `url` in `context` and waits for it to load.
    pub async fn new_tab_in(
        &self,
        context: &IsolatedContext,
        url: &str,
    ) -> Result<Tab, BrowserError> {
        self.open_in(context.family.clone(), Some(context.id.clone()), url)
            .await
    }

    /// Closes `context` with every tab in it, and forgets its cookies and
    /// storage.
    pub async fn dispose_context(&self, context: IsolatedContext) -> Result<(), BrowserError> {
        let browser = self.live_browser()?;
        call(
            "closing a browser context",
            self.call_timeout,
            &self.status,
            browser.execute(DisposeBrowserContextParams::new(context.id)),
        )
        .await
        .map(|_| ())
    }

    async fn open_in(
        &self,
        family: Arc<TabFamily>,
        browser_context: Option<BrowserContextId>,
        url: &str,
    ) -> Result<Tab, BrowserError> {
        let browser = self.live_browser()?;
        let ctx = TabContext {
            status: self.status.clone(),
            call_timeout: self.call_timeout,
            guard: None,
            registry: self.guard.clone(),
            browser: Arc::downgrade(browser),
            launch: self.options.clone(),
            storage_script: self.storage_script.clone(),
            downloads: self.downloads.clone(),
            family,
            browser_context,
        };
        let tab = Tab::open(browser, ctx, url).await?;
        let blank = self
            .startup_tab
            .lock()
            .map(|mut t| t.take())
            .unwrap_or_default();
        if let Some(id) = blank {
            self.close_startup_tab(browser, id).await;
        }
        Ok(tab)
    }

    /// A blank tab in a window of its own with nothing of webagent's in
    /// it (no listener hook, no observer, no interception, no viewport
    /// override): what a bare CDP client drives, for the floors the
    /// benchmarks compare against. The caller closes it.
    pub async fn bare_page(&self) -> Result<chromiumoxide::Page, BrowserError> {
        let browser = self.live_browser()?;
        let mut params = CreateTargetParams::new("about:blank");
        params.new_window = Some(true);
        call(
            "opening a bare tab",
            Duration::from_secs(30),
            &self.status,
            browser.new_page(params),
        )
        .await
    }

    /// Closes the tab Chromium opened at launch and waits (briefly) until
    /// it is gone: the close is answered before the target goes, and the
    /// first observation must not list it.
    async fn close_startup_tab(&self, browser: &Browser, id: TargetId) {
        let closed = call(
            "closing the startup tab",
            self.call_timeout,
            &self.status,
            browser.execute(CloseTargetParams::new(id.clone())),
        )
        .await;
        if let Err(err) = closed {
            tracing::debug!(%err, "the startup tab stays open");
            return;
        }
        for _ in 0..50 {
            let listed = call(
                "listing tabs",
                self.call_timeout,
                &self.status,
                browser.execute(GetTargetsParams::default()),
            )
            .await;
            match listed {
                Ok(resp) if resp.result.target_infos.iter().any(|t| t.target_id == id) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                _ => return,
            }
        }
    }

    /// The session's open tabs (see [`TabFamily`]), in the browser's order.
    pub async fn tabs(&self) -> Result<Vec<TabInfo>, BrowserError> {
        let browser = self.live_browser()?;
        let targets = call(
            "listing tabs",
            self.call_timeout,
            &self.status,
            browser.execute(GetTargetsParams::default()),
        )
        .await?;
        Ok(self
            .family
            .members(&targets.result.target_infos)
            .into_iter()
            .map(|t| TabInfo {
                id: t.target_id.inner().clone(),
                url: t.url.clone(),
                title: t.title.clone(),
                current: false,
            })
            .collect())
    }

    /// Stops the old browser (if any) and starts a new one with the same
    /// options; tabs of the old browser are unusable afterwards.
    pub async fn relaunch(&mut self) -> Result<(), BrowserError> {
        self.shutdown();
        let state = match &self.options.state {
            Some(path) => StorageState::load_if_present(path)?,
            None => None,
        };
        let (browser, handler, status, chrome) = connect(&self.options).await?;
        let blank = startup_tab(&browser, &status, chrome.is_some()).await;
        if let Ok(mut t) = self.startup_tab.lock() {
            *t = blank;
        }
        let browser = Arc::new(browser);
        if let Some(guard) = &self.guard {
            self.popup_watch = Some(watch_popups(browser.clone(), guard.clone()).await);
        }
        self.browser = Some(browser);
        self.handler = Some(handler);
        self.status = status;
        self.chrome = chrome;
        self.storage_script = None;
        if let Some(state) = state {
            self.load_state(&state).await?;
        }
        self.watch_downloads().await?;
        Ok(())
    }

    /// Closes a browser on a persistent profile the way a person quitting
    /// it would, so that the profile keeps what the session wrote (Chromium writes
    /// cookies to disk in batches; a browser stopped by a signal may lose
    /// the last ones). Waits for it to go, then stops it regardless; an
    /// attached browser is left running.
    pub async fn close(mut self) {
        // Only a persistent profile has anything to keep.
        if self.chrome.is_some() && self.options.profile.is_some() {
            if let Some(browser) = self.browser.clone() {
                let gone = self.disconnected();
                let closed = call(
                    "closing the browser",
                    self.call_timeout,
                    &self.status,
                    browser.execute(
                        chromiumoxide::cdp::browser_protocol::browser::CloseParams::default(),
                    ),
                )
                .await;
                match closed {
                    Ok(_) => {
                        let _ = tokio::time::timeout(CLOSE_TIMEOUT, gone).await;
                    }
                    Err(error) => tracing::debug!(%error, "closing the browser"),
                }
            }
        }
        self.shutdown();
    }

    /// Closes the connection and stops a launched browser.
    pub fn shutdown(&mut self) {
        self.browser = None;
        if let Some(watch) = self.popup_watch.take() {
            watch.abort();
        }
        if let Some(watch) = self.download_watch.take() {
            watch.abort();
        }
        if let Some(handler) = self.handler.take() {
            handler.abort();
        }
        if let Some(mut chrome) = self.chrome.take() {
            chrome.stop();
        }
    }
}

impl Drop for BrowserSession {
    fn drop(&mut self) {
        self.shutdown();
    }
}

type Connected = (
    Browser,
    JoinHandle<()>,
    watch::Receiver<SessionStatus>,
    Option<LaunchedChrome>,
);

async fn connect(options: &LaunchOptions) -> Result<Connected, BrowserError> {
    let (ws_url, chrome) = match &options.connect {
        Some(url) => (connect_address(url), None),
        None => {
            let opts = options.clone();
            let chrome = tokio::task::spawn_blocking(move || LaunchedChrome::start(&opts))
                .await
                .map_err(|e| BrowserError::Launch(format!("launch task failed: {e}")))??;
            (chrome.ws_url.clone(), Some(chrome))
        }
    };
    let config = HandlerConfig {
        // The window size is the viewport; emulating another one would cost
        // a round trip per new tab and confuse headed use.
        viewport: None,
        ignore_invalid_messages: true,
        request_timeout: Duration::from_secs(60),
        ..HandlerConfig::default()
    };
    let limit = options.connect_timeout;
    let connected =
        tokio::time::timeout(limit, Browser::connect_with_config(ws_url.clone(), config)).await;
    let (browser, handler) = match connected {
        Ok(Ok(pair)) => pair,
        Ok(Err(e)) => {
            let reason = e.to_string();
            let hint = connect_hint(&reason);
            return Err(BrowserError::Connect {
                url: shown_address(&ws_url),
                reason: format!("{reason}{hint}"),
            });
        }
        Err(_) => {
            return Err(BrowserError::Connect {
                url: shown_address(&ws_url),
                reason: format!(
                    "no answer within {}s (a pool that queues sessions answers when a browser \
                     frees: raise --connect-timeout / browser.connect_timeout above its queue wait)",
                    limit.as_secs()
                ),
            })
        }
    };
    let (tx, rx) = watch::channel(SessionStatus::Running);
    let task = tokio::spawn(drive_handler(handler, tx));
    tracing::info!(address = %shown_address(&ws_url), "connected to the browser");
    Ok((browser, task, rx, chrome))
}

/// The address to attach to, as a client must send it: a `ws://` URL with
/// no path (`ws://host:3000?token=x`, the form browser pools document)
/// gets the root path, so the request line reads `GET /?token=x`.
fn connect_address(given: &str) -> String {
    match url::Url::parse(given) {
        Ok(parsed) if matches!(parsed.scheme(), "ws" | "wss" | "http" | "https") => {
            parsed.to_string()
        }
        _ => given.to_string(),
    }
}

/// The address as errors and logs show it: the query's values (a pool's
/// token, an API key) are credentials, so they are left out.
pub(crate) fn shown_address(address: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(address) else {
        return address.to_string();
    };
    if parsed.query().is_none() {
        return address.to_string();
    }
    let hidden: Vec<String> = parsed
        .query_pairs()
        .map(|(name, _)| format!("{name}=***"))
        .collect();
    parsed.set_query(Some(&hidden.join("&")));
    parsed.to_string()
}

/// What a failed attach most likely means, said after the reason: an HTTP
/// answer names a wrong path or token (the server is there); a refused or
/// unreachable connection names a browser that is not listening.
fn connect_hint(reason: &str) -> &'static str {
    let answered = |code: &str| reason.contains(code);
    if answered("401") || answered("403") {
        " (the server refused the credentials: check the token in the address)"
    } else if answered("400") || answered("404") {
        " (the server answered but not as a DevTools endpoint: check the address's path and token)"
    } else if reason.contains("HTTP error") {
        " (the server answered but did not open a DevTools connection)"
    } else {
        " (is it running with --remote-debugging-port?)"
    }
}

/// The blank page target a browser this process launched opened on its
/// own; `None` for an attached browser, whose tabs belong to someone else.
/// Chromium announces its DevTools address before it opens that tab, so
/// this looks a few times, briefly.
async fn startup_tab(
    browser: &Browser,
    status: &watch::Receiver<SessionStatus>,
    launched: bool,
) -> Option<TargetId> {
    if !launched {
        return None;
    }
    for _ in 0..50 {
        let targets = call(
            "listing the startup tabs",
            CALL_TIMEOUT,
            status,
            browser.execute(GetTargetsParams::default()),
        )
        .await
        .ok()?;
        let blank = targets
            .result
            .target_infos
            .into_iter()
            .find(|t| t.r#type == "page")
            .map(|t| t.target_id);
        if blank.is_some() {
            return blank;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

/// Polls the CDP handler until the connection ends. A message that cannot
/// be decoded is logged and skipped; only a closed or broken websocket ends
/// the session.
async fn drive_handler(mut handler: Handler, status: watch::Sender<SessionStatus>) {
    let reason = loop {
        match handler.next().await {
            Some(Ok(())) => {}
            Some(Err(CdpError::Ws(err))) => break format!("connection lost: {err}"),
            Some(Err(CdpError::InvalidMessage(msg, err))) => {
                tracing::warn!(%err, len = msg.len(), "skipping a CDP message that could not be decoded");
            }
            Some(Err(err)) => tracing::warn!(%err, "CDP handler error (continuing)"),
            None => break "the browser closed the connection".to_string(),
        }
    };
    tracing::warn!(%reason, "browser disconnected");
    // Nobody listening is fine: the session was dropped first.
    let _ = status.send(SessionStatus::Disconnected(reason));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_without_a_path_is_asked_for_at_the_root() {
        assert_eq!(
            connect_address("ws://127.0.0.1:3000?token=x"),
            "ws://127.0.0.1:3000/?token=x"
        );
        assert_eq!(
            connect_address("ws://127.0.0.1:9222/devtools/browser/abc"),
            "ws://127.0.0.1:9222/devtools/browser/abc"
        );
        assert_eq!(
            connect_address("http://127.0.0.1:9222"),
            "http://127.0.0.1:9222/"
        );
        assert_eq!(connect_address("not a url"), "not a url");
    }

    #[test]
    fn a_token_in_the_address_is_not_shown() {
        let shown = shown_address("ws://127.0.0.1:3000/?token=s3cret&launch=x");
        assert_eq!(shown, "ws://127.0.0.1:3000/?token=***&launch=***");
        assert_eq!(
            shown_address("ws://h:1/devtools/browser/a"),
            "ws://h:1/devtools/browser/a"
        );
    }

    #[test]
    fn the_hint_follows_what_the_server_answered() {
        assert!(connect_hint("HTTP error: 401 Unauthorized").contains("token"));
        assert!(connect_hint("HTTP error: 404 Not Found").contains("path"));
        assert!(
            connect_hint("Connection refused (os error 111)").contains("--remote-debugging-port")
        );
    }
}
