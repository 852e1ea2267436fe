//! The session's hold on its browser: observations from [`Tab::observe`],
//! actions through the executor, risk facts read from the page itself,
//! and what an action causes beyond its page (downloads, tabs it opens).
//! It is what every environment of a session ends in
//! (`environment::Environment` is implemented for it over there, so the
//! browser knows nothing of who chose an action).
//!
//! It also keeps a run going through browser faults: when the browser
//! process dies, the next observation starts a new one with the same
//! launch options and reopens the last URL (a non-fatal error the agent
//! reports as such), up to [`MAX_RELAUNCHES`] times; a crashed renderer
//! is reloaded once. Navigations the allowed domains refused during an
//! action turn its result into `blocked`, naming the URL.

use std::sync::{Arc, RwLock};

use serde_json::json;

use crate::actions::{Action, ActionResult, FailureReason, Target, TargetFacts};
use crate::dom::PageState;
use crate::events::{Event, EventSink};
use crate::secrets::Secrets;
use crate::sitemap::SitemapSet;
use crate::vision::{Screenshot, ShotRegion, ShotRequest};

use super::act::{ExecOptions, Executor};
use super::shot::{self, MarkColors};
use super::{BlockedNavigation, BrowserError, BrowserSession, ObserveOptions, StorageState, Tab};

/// Reads, from the element itself, what decides an action's risk: tag,
/// type, link target, and whether activating it submits a form (the
/// listing does not show form membership).
const TARGET_FACTS_JS: &str = "(el) => { \
    const tag = el.tagName.toLowerCase(); \
    const type = (el.getAttribute('type') || '').toLowerCase(); \
    const form = el.form || (el.closest && el.closest('form')); \
    const submits = !!form && ((tag === 'button' && (type === '' || type === 'submit')) \
        || (tag === 'input' && (type === 'submit' || type === 'image'))); \
    return { tag, type: type || null, inForm: !!form, isSubmit: submits, \
        href: el.getAttribute('href'), download: el.hasAttribute('download') }; }";

/// Why the page could not be observed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct DriverError {
    /// What went wrong, for the person and the model.
    pub message: String,
    /// Whether no browser could be had (the run must end), rather than a
    /// fault the next step may get past.
    pub fatal: bool,
}

/// One tab driven for a session (and the tabs it opened).
#[derive(Debug)]
pub struct Driver {
    tab: Tab,
    exec: ExecOptions,
    observe: ObserveOptions,
    sitemaps: Arc<RwLock<SitemapSet>>,
    last: Option<PageState>,
    /// The last URL observed, reopened after a relaunch or a crash.
    last_url: Option<String>,
    /// A browser started here after the original one died; it lives as long
    /// as the environment.
    replacement: Option<BrowserSession>,
    /// How many times the browser was relaunched in this run.
    relaunches: usize,
    /// Refusals of the allowed domains already reported (a guard mark).
    reported: u64,
    /// Where refusals the page caused on its own are reported.
    events: Option<EventSink>,
    /// The cookies at the last observation, put into a relaunched browser
    /// so a run on a profile or a state file stays signed in: Chromium
    /// writes cookies to disk in batches, so a killed one loses the last
    /// sign-in. Kept only when the session keeps sign-ins at all.
    cookies: Option<StorageState>,
    /// Tabs driven before (the opener of a tab a click opened), most
    /// recent last; closing the current tab goes back to the last one.
    others: Vec<Tab>,
    /// Switch to a tab a click opened.
    follow_new_tabs: bool,
    /// A click on a download link counts as a commit.
    downloads_commit: bool,
    /// Values covered in the `screenshot` action's pictures.
    covered: Secrets,
}

/// How long an action's result waits for the downloads it started.
const DOWNLOAD_WAIT: std::time::Duration = std::time::Duration::from_secs(30);
/// How long it waits for a download to be announced after a navigation
/// that brought no document: the announcement comes over the browser's
/// own connection and can trail the page's events.
const DOWNLOAD_BEGIN_WAIT: std::time::Duration = std::time::Duration::from_secs(1);
/// The most characters `read_file` returns.
const READ_FILE_LIMIT: usize = 20_000;
/// The largest file `read_file` opens.
const READ_FILE_MAX_BYTES: u64 = 8 * 1024 * 1024;

/// How many times a run relaunches a dead browser before it gives up.
pub const MAX_RELAUNCHES: usize = 3;

/// The longest pause between two attempts to attach again.
const MAX_REATTACH_PAUSE: std::time::Duration = std::time::Duration::from_secs(4);

/// A browser in place of one that went away. A launched one is started
/// again once. An attached one (`--connect`) is attached again with
/// growing pauses until `reconnect_window` has passed: a pool that
/// restarts, or a grid that replaces a node, is back after a while, and
/// attempts bunched into the first moments would all miss it.
async fn start_again(
    options: &crate::browser::LaunchOptions,
) -> Result<BrowserSession, BrowserError> {
    if options.connect.is_none() {
        return BrowserSession::start(options.clone()).await;
    }
    let deadline = std::time::Instant::now() + options.reconnect_window;
    let mut pause = std::time::Duration::from_millis(250);
    let mut attempts = 0;
    loop {
        attempts += 1;
        match BrowserSession::start(options.clone()).await {
            Ok(session) => return Ok(session),
            Err(error) => {
                let now = std::time::Instant::now();
                if now + pause >= deadline {
                    tracing::warn!(%error, attempts, "attaching again failed; giving up");
                    let last = match error {
                        BrowserError::Connect { reason, .. } => reason,
                        other => other.to_string(),
                    };
                    return Err(BrowserError::Connect {
                        url: super::session::shown_address(
                            options.connect.as_deref().unwrap_or_default(),
                        ),
                        reason: format!(
                            "tried {attempts} times over {}s (browser.reconnect_window); the last: {last}",
                            options.reconnect_window.as_secs()
                        ),
                    });
                }
                tracing::info!(%error, attempts, ?pause, "attaching again failed; trying again");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_REATTACH_PAUSE);
            }
        }
    }
}

impl Driver {
    /// Drives `tab`; `goto_page` searches `sitemaps` as they are at each
    /// step (a watcher may replace them in between).
    ///
    /// Every refusal already in the tab's guard is still to be reported:
    /// a page that sends itself off-site while the tab is being opened is
    /// the driver's to tell about at its first observation.
    pub fn new(tab: Tab, exec: ExecOptions, sitemaps: Arc<RwLock<SitemapSet>>) -> Self {
        Driver {
            tab,
            exec,
            observe: ObserveOptions::default(),
            sitemaps,
            last: None,
            last_url: None,
            replacement: None,
            relaunches: 0,
            reported: 0,
            events: None,
            cookies: None,
            others: Vec::new(),
            follow_new_tabs: false,
            downloads_commit: false,
            covered: Secrets::new(),
        }
    }

    /// Covers text fields holding one of these values in the pictures the
    /// `screenshot` action writes.
    pub fn with_secrets(mut self, secrets: Secrets) -> Self {
        self.covered = secrets;
        self
    }

    /// Whether a tab a click opened becomes the driven one (default no;
    /// sessions follow `downloads.follow_new_tabs`), and whether a click on a download link counts as a commit (default
    /// no).
    pub fn with_tab_and_download_policy(
        mut self,
        follow_new_tabs: bool,
        downloads_commit: bool,
    ) -> Self {
        self.follow_new_tabs = follow_new_tabs;
        self.downloads_commit = downloads_commit;
        self
    }

    /// Whether this session keeps sign-ins (a persistent profile or a
    /// state file), so its cookies are worth carrying over a relaunch.
    fn keeps_sign_ins(&self) -> bool {
        let launch = self.tab.launch_options();
        launch.profile.is_some() || launch.state.is_some()
    }

    /// Reports navigations the allowed domains refused outside any action
    /// (a page's own timer or script) as non-fatal `error` events here.
    pub fn with_events(mut self, events: EventSink) -> Self {
        self.events = Some(events);
        self
    }

    /// Uses these observation settings.
    pub fn with_observe_options(mut self, observe: ObserveOptions) -> Self {
        self.observe = observe;
        self
    }

    /// The tab being driven.
    pub fn tab(&self) -> &Tab {
        &self.tab
    }

    /// The tab, for the caller to close after the run.
    pub fn into_tab(self) -> Tab {
        self.tab
    }

    /// The tab and the browser started after the first one died, if any,
    /// for the caller to close both.
    pub fn into_parts(self) -> (Tab, Option<BrowserSession>) {
        (self.tab, self.replacement)
    }

    fn sitemap_snapshot(&self) -> SitemapSet {
        match self.sitemaps.read() {
            Ok(set) => set.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl Driver {
    /// Refusals since the last report, marked as reported.
    fn take_blocked(&mut self) -> Vec<BlockedNavigation> {
        let Some(guard) = self.tab.guard() else {
            return Vec::new();
        };
        let all = guard.blocked_since(self.reported);
        if let Some(last) = all.last() {
            self.reported = last.seq;
        }
        // Other tabs of the same browser have their own drivers.
        let me = self.tab.target_id();
        all.into_iter().filter(|b| b.concerns(me)).collect()
    }

    fn report_blocked(&self, blocked: &[BlockedNavigation]) {
        let Some(events) = &self.events else { return };
        for b in blocked {
            events.send(Event::Error {
                error: format!("blocked a navigation to {}: {}", b.url, b.reason),
                fatal: false,
            });
        }
    }

    /// The browser is gone: start another with the same options and reopen
    /// the last page. The error says what happened; it is fatal only when
    /// no browser could be had.
    async fn relaunch(&mut self, reason: String) -> DriverError {
        if self.relaunches >= MAX_RELAUNCHES {
            return DriverError {
                message: format!(
                    "the browser is gone ({reason}) and was already relaunched {MAX_RELAUNCHES} times; giving up"
                ),
                fatal: true,
            };
        }
        self.relaunches += 1;
        tracing::warn!(%reason, attempt = self.relaunches, "the browser is gone; relaunching");
        let options = self.tab.launch_options().clone();
        // An attached browser is not started by us: it is attached again.
        let (again, again_done) = match options.connect {
            Some(_) => ("attached again", "attached to it again"),
            None => ("relaunched", "started a new one"),
        };
        let session = match start_again(&options).await {
            Ok(session) => session,
            Err(error) => {
                return DriverError {
                    message: format!(
                        "the browser is gone ({reason}) and could not be {again}: {error}"
                    ),
                    fatal: true,
                }
            }
        };
        if let Some(cookies) = &self.cookies {
            if let Err(error) = session.add_cookies(cookies).await {
                tracing::warn!(%error, "could not carry the cookies over to the new browser");
            }
        }
        let tab = match session.new_tab("about:blank").await {
            Ok(tab) => tab,
            Err(error) => {
                return DriverError {
                    message: format!(
                        "the browser is gone ({reason}); a new one started but could not open a tab: {error}"
                    ),
                    fatal: true,
                }
            }
        };
        let url = self
            .last_url
            .clone()
            .unwrap_or_else(|| "about:blank".into());
        // What the reopened page itself does is reported, so the mark is
        // taken before it loads.
        self.reported = tab.guard().map_or(0, |g| g.mark());
        let reopened = match tab.navigate(&url, self.exec.navigation_timeout).await {
            Ok(()) => format!("reopened {url}"),
            Err(error) => format!("could not reopen {url}: {error}"),
        };
        self.tab = tab;
        self.replacement = Some(session);
        self.last = None;
        DriverError {
            message: format!(
                "the browser was gone ({reason}); {again_done} (time {} of at most {MAX_RELAUNCHES}) and {reopened}",
                self.relaunches
            ),
            fatal: false,
        }
    }

    /// A renderer that crashed answers nothing; loading the page again
    /// gives the tab a new one. A tab that cannot load (closed under us)
    /// is replaced.
    async fn reload_after_crash(&mut self, error: BrowserError) -> DriverError {
        let url = self
            .last_url
            .clone()
            .unwrap_or_else(|| "about:blank".into());
        let reloaded = match self.tab.navigate(&url, self.exec.navigation_timeout).await {
            Ok(()) => format!("reloaded {url}"),
            // The tab itself is gone (closed) or wedged: take a new one.
            Err(again) => format!(
                "reloading {url} failed too ({again}); {}",
                self.replace_stuck_tab().await
            ),
        };
        self.last = None;
        DriverError {
            message: format!("the page could not be observed ({error}); {reloaded}"),
            fatal: false,
        }
    }

    /// A navigation that never finishes leaves the tab unable to start
    /// another (the CDP client waits for the first one for a minute):
    /// swap in a fresh tab on the last page seen, and close the stuck one.
    async fn replace_stuck_tab(&mut self) -> String {
        let url = self
            .last_url
            .clone()
            .unwrap_or_else(|| "about:blank".into());
        let fresh = match self.tab.open_sibling("about:blank").await {
            Ok(tab) => tab,
            Err(error) => {
                return format!("the tab is still loading and no new one could be opened: {error}")
            }
        };
        let mark = fresh.guard().map_or(0, |g| g.mark());
        let reopened = match fresh.navigate(&url, self.exec.navigation_timeout).await {
            Ok(()) => format!("a new tab took over on {url}"),
            Err(error) => format!("a new tab took over, but {url} did not load: {error}"),
        };
        let stuck = std::mem::replace(&mut self.tab, fresh);
        self.reported = mark;
        self.last = None;
        if let Err(error) = stuck.close().await {
            tracing::debug!(%error, "closing the stuck tab");
        }
        reopened
    }

    /// Whether the allowed domains refuse `url` (without logging it).
    fn refused(&self, url: &str) -> bool {
        !is_error_page(url)
            && self
                .tab
                .guard()
                .is_some_and(|g| g.policy().check(url).is_blocked())
    }

    /// Documents that never touch the network (a `blob:` the page built)
    /// get past the interception; when the tab shows one the allowed
    /// domains refuse, log it and load the page last seen again.
    async fn leave_refused_document(&mut self) -> Option<String> {
        self.tab.guard()?;
        let now = self.tab.eval("location.href").await.ok()?;
        let now = now.as_str()?.to_string();
        if !self.refused(&now) {
            return None;
        }
        // Logs the refusal in the tab's guard, like the interception would.
        let _ = self.tab.check_navigation(&now);
        let url = self.last_url.clone().filter(|u| !self.refused(u))?;
        Some(
            match self.tab.navigate(&url, self.exec.navigation_timeout).await {
                Ok(()) => {
                    self.last = None;
                    format!("{now} had loaded without reaching the network; the tab was put back on {url}")
                }
                Err(error) => {
                    format!("{now} had loaded; putting the tab back on {url} failed: {error}")
                }
            },
        )
    }

    /// A refused navigation the page started leaves Chromium's error page
    /// in the tab; load the page last seen again so the agent keeps its
    /// place. Says what it did, or `None` when the page was not lost.
    async fn restore_after_block(&mut self) -> Option<String> {
        let now = match self.tab.eval("location.href").await {
            Ok(value) => value.as_str().map(str::to_owned).unwrap_or_default(),
            Err(_) => self.tab.url().await.ok()?,
        };
        if !is_error_page(&now) {
            return None;
        }
        let url = self.last_url.clone().filter(|u| !is_error_page(u))?;
        Some(
            match self.tab.navigate(&url, self.exec.navigation_timeout).await {
                Ok(()) => {
                    self.last = None;
                    format!("the tab was put back on {url}")
                }
                Err(error) => format!("putting the tab back on {url} failed: {error}"),
            },
        )
    }
}

impl Driver {
    /// Adds what an action caused beyond its page to its result: the
    /// files it downloaded, and a tab it opened (switched to, unless
    /// configured otherwise).
    async fn after_action(
        &mut self,
        result: ActionResult,
        download_mark: Option<u64>,
        documentless_before: u64,
        tabs_before: Option<Vec<crate::dom::TabInfo>>,
    ) -> ActionResult {
        let mut extra = serde_json::Map::new();
        if let (Some(downloads), Some(mark)) = (self.tab.downloads().cloned(), download_mark) {
            // A navigation the action started that stopped without a
            // document was most likely a download not announced yet.
            if self.tab.navigations_without_document() > documentless_before {
                downloads.begun_since(mark, DOWNLOAD_BEGIN_WAIT).await;
            }
            let done = downloads.since(mark, DOWNLOAD_WAIT).await;
            if !done.is_empty() {
                for d in &done {
                    tracing::info!(file = %d.file.display(), size = d.size, "downloaded");
                    self.report(format!(
                        "downloaded {} ({} bytes, {}, {})",
                        d.file.display(),
                        d.size,
                        d.mime(),
                        d.to_json()["state"].as_str().unwrap_or_default()
                    ));
                }
                extra.insert(
                    "downloads".into(),
                    serde_json::Value::Array(done.iter().map(|d| d.to_json()).collect()),
                );
            }
        }
        if let Some(before) = tabs_before {
            if let Some(opened) = self.new_tab_since(&before).await {
                extra.insert("new_tab".into(), opened);
            }
        }
        with_extras(result, extra)
    }

    /// A note in the log file (the action's result carries the facts to
    /// the events, the trace and the workbench).
    fn report(&self, text: String) {
        tracing::info!("{text}");
    }

    /// A page tab that was not open in `before`: waits for it to load, and
    /// switches to it when configured to. Its URL and title, or `None`.
    async fn new_tab_since(&mut self, before: &[crate::dom::TabInfo]) -> Option<serde_json::Value> {
        // A tab a click opens is announced while the click is handled;
        // one more turn of the page's event loop covers a `window.open`
        // the page does right after (a timer of 0).
        let mut opened = None;
        for attempt in 0..2 {
            let now = self.tab.open_tabs().await.ok()?;
            opened = now.into_iter().find(|t| {
                // A tab this environment made itself (one that took
                // over from a stuck tab) is not the page's doing.
                before.iter().all(|b| b.id != t.id)
                    && t.id != self.tab.target_id()
                    && self.others.iter().all(|o| o.target_id() != t.id)
            });
            if opened.is_some() || attempt == 1 {
                break;
            }
            let _ = self
                .tab
                .eval("new Promise(r => setTimeout(() => setTimeout(() => r(true), 0), 0))")
                .await;
        }
        let opened = opened?;
        let tab = match self.tab.adopt(&opened.id).await {
            Ok(tab) => tab,
            Err(error) => {
                return Some(json!({"url": opened.url, "title": opened.title,
                    "switched": false, "error": error.to_string()}))
            }
        };
        let (url, title) = wait_loaded(&tab, self.exec.navigation_timeout).await;
        let url = url.unwrap_or(opened.url);
        let title = title.unwrap_or(opened.title);
        // A popup the allowed domains refused is closed by the guard; it
        // is reported, never driven.
        if is_error_page(&url) || self.refused(&url) {
            return Some(json!({"url": url, "switched": false, "blocked": true}));
        }
        self.report(format!("a tab opened: {url} ({title})"));
        let switched = self.follow_new_tabs;
        if switched {
            self.drive(tab);
        } else {
            self.others.push(tab);
        }
        Some(json!({"url": url, "title": title, "switched": switched}))
    }

    /// Makes `tab` the driven one; the previous one is kept to go back to.
    fn drive(&mut self, tab: Tab) {
        let previous = std::mem::replace(&mut self.tab, tab);
        self.others
            .retain(|t| t.target_id() != self.tab.target_id());
        self.others.push(previous);
        self.reported = self.tab.guard().map_or(0, |g| g.mark());
        self.last = None;
    }

    /// The target id of the tab numbered `number` in the last observation.
    fn tab_id(&self, number: u32) -> Result<String, ActionResult> {
        let Some(page) = &self.last else {
            return Err(ActionResult::invalid_params(
                "no tab list yet: observe the page first",
            ));
        };
        page.tabs
            .get(number as usize)
            .map(|t| t.id.clone())
            .ok_or_else(|| {
                ActionResult::invalid_params(format!(
                    "there is no tab {number}: the tab list has {} (0 to {})",
                    page.tabs.len(),
                    page.tabs.len().saturating_sub(1)
                ))
            })
    }

    async fn switch_tab(&mut self, number: u32) -> ActionResult {
        let id = match self.tab_id(number) {
            Ok(id) => id,
            Err(result) => return result,
        };
        if id == self.tab.target_id() {
            return ActionResult::ok_with(json!({"tab": number, "already": true}));
        }
        let tab = match self.others.iter().position(|t| t.target_id() == id) {
            Some(at) => self.others.remove(at),
            None => match self.tab.adopt(&id).await {
                Ok(tab) => tab,
                Err(error) => {
                    return ActionResult::not_found(format!(
                        "tab {number} could not be taken over: {error}"
                    ))
                }
            },
        };
        let url = tab.url().await.unwrap_or_default();
        self.drive(tab);
        ActionResult::ok_with(json!({"tab": number, "url": url}))
    }

    async fn close_tab(&mut self, number: Option<u32>) -> ActionResult {
        let id = match number {
            Some(n) => match self.tab_id(n) {
                Ok(id) => id,
                Err(result) => return result,
            },
            None => self.tab.target_id().to_string(),
        };
        if id != self.tab.target_id() {
            if let Some(at) = self.others.iter().position(|t| t.target_id() == id) {
                let tab = self.others.remove(at);
                return match tab.close().await {
                    Ok(()) => ActionResult::ok_with(json!({"closed": id})),
                    Err(error) => ActionResult::unknown(format!("closing the tab: {error}")),
                };
            }
            return match self.tab.close_target(&id).await {
                Ok(()) => ActionResult::ok_with(json!({"closed": id})),
                Err(error) => ActionResult::unknown(format!("closing the tab: {error}")),
            };
        }
        // The current tab: go back to the one driven before, else any
        // other open tab, else a blank one.
        let next = match self.others.pop() {
            Some(tab) => Ok(tab),
            None => {
                let other = self
                    .tab
                    .open_tabs()
                    .await
                    .ok()
                    .and_then(|tabs| tabs.into_iter().find(|t| t.id != id));
                match other {
                    Some(info) => self.tab.adopt(&info.id).await,
                    None => self.tab.open_sibling("about:blank").await,
                }
            }
        };
        let next = match next {
            Ok(tab) => tab,
            Err(error) => {
                return ActionResult::unknown(format!(
                    "no other tab to go to, so the tab stays open: {error}"
                ))
            }
        };
        let closing = std::mem::replace(&mut self.tab, next);
        self.reported = self.tab.guard().map_or(0, |g| g.mark());
        self.last = None;
        let url = self.tab.url().await.unwrap_or_default();
        match closing.close().await {
            Ok(()) => ActionResult::ok_with(json!({"closed": id, "now_on": url})),
            Err(error) => ActionResult::unknown(format!("closing the tab: {error}")),
        }
    }

    /// `screenshot`: the viewport, the whole page or one element at full
    /// size as a PNG, written where asked (else the screenshots directory),
    /// with text fields that show a secret covered like in the model's
    /// pictures.
    async fn screenshot_file(
        &self,
        path: Option<&str>,
        full_page: bool,
        target: Option<&Target>,
    ) -> ActionResult {
        let region = match (target, full_page) {
            (Some(target), _) => ShotRegion::Element(target.clone()),
            (None, true) => ShotRegion::FullPage,
            (None, false) => ShotRegion::Viewport,
        };
        let request = ShotRequest {
            region,
            width: u32::MAX,
            marks: false,
            secrets: self.covered.values(),
            png: true,
        };
        let shot = match Box::pin(shot::capture(
            &self.tab,
            self.last.as_ref(),
            &request,
            &MarkColors::default(),
        ))
        .await
        {
            Ok(shot) => shot,
            Err(error) => {
                let reason = match error {
                    BrowserError::Script(_) => FailureReason::NotFound,
                    BrowserError::Timeout { .. } => FailureReason::Timeout,
                    _ => FailureReason::Unknown,
                };
                return ActionResult::fail(reason, format!("the screenshot failed: {error}"));
            }
        };
        let file = match path {
            Some(path) => std::path::PathBuf::from(path),
            None => self.exec.screenshot_dir.join(format!(
                "screenshot-{}.png",
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis())
                    .unwrap_or(0)
            )),
        };
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            if let Err(error) = std::fs::create_dir_all(dir) {
                return ActionResult::unknown(format!("creating {}: {error}", dir.display()));
            }
        }
        if let Err(error) = std::fs::write(&file, &shot.image) {
            return ActionResult::unknown(format!("writing {}: {error}", file.display()));
        }
        ActionResult::ok_with(json!({
            "path": file.to_string_lossy(),
            "bytes": shot.image.len(),
            "full_page": full_page,
            "width": shot.width,
            "height": shot.height,
        }))
    }

    /// `read_file`: a downloaded file's text, clipped. Only files in the
    /// downloads directory can be read.
    fn read_file(&self, path: &str) -> ActionResult {
        match self.tab.downloads() {
            Some(downloads) => read_download(downloads.dir(), path),
            None => ActionResult::blocked(
                "read_file reads downloaded files, and this session keeps no downloads",
            ),
        }
    }
}

/// What an action caused beyond its page, added to its result: to a
/// success's data (a bare value moves under `result`), or to a failure's
/// message.
fn with_extras(
    result: ActionResult,
    extra: serde_json::Map<String, serde_json::Value>,
) -> ActionResult {
    if extra.is_empty() {
        return result;
    }
    match result {
        ActionResult::Success { data } => {
            let mut object = match data {
                Some(serde_json::Value::Object(map)) => map,
                Some(other) => {
                    let mut map = serde_json::Map::new();
                    map.insert("result".into(), other);
                    map
                }
                None => serde_json::Map::new(),
            };
            object.extend(extra);
            ActionResult::ok_with(serde_json::Value::Object(object))
        }
        ActionResult::Failure { reason, message } => {
            let text = serde_json::Value::Object(extra).to_string();
            ActionResult::Failure {
                reason,
                message: format!("{message}; meanwhile: {text}"),
            }
        }
    }
}

/// A downloaded file's text, clipped to [`READ_FILE_LIMIT`] characters:
/// `path` is taken in `dir` (an absolute one must lie inside it), and only
/// text files up to [`READ_FILE_MAX_BYTES`] are read.
fn read_download(dir: &std::path::Path, path: &str) -> ActionResult {
    let dir = &dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let given = std::path::Path::new(path.trim());
    let candidate = if given.is_absolute() {
        given.to_path_buf()
    } else {
        dir.join(given)
    };
    let file = match candidate.canonicalize() {
        Ok(file) => file,
        Err(_) => {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .map(|entries| {
                    entries
                        .flatten()
                        .filter(|e| e.path().is_file())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            names.truncate(20);
            return ActionResult::not_found(format!(
                "no downloaded file `{path}` in {}; there are: {}",
                dir.display(),
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            ));
        }
    };
    if !file.starts_with(dir) || !file.is_file() {
        return ActionResult::blocked(format!(
            "read_file reads only files in the downloads directory {}; `{path}` is not one",
            dir.display()
        ));
    }
    let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
    let mime = crate::browser::download::mime_of(&file);
    if size > READ_FILE_MAX_BYTES {
        return ActionResult::invalid_params(format!(
            "{} is {size} bytes; read_file opens files up to {READ_FILE_MAX_BYTES} bytes",
            file.display()
        ));
    }
    let bytes = match std::fs::read(&file) {
        Ok(bytes) => bytes,
        Err(error) => return ActionResult::unknown(format!("reading {}: {error}", file.display())),
    };
    let text = match String::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => text,
        _ => {
            return ActionResult::invalid_params(format!(
                "{} is not a text file ({mime}, {size} bytes); read_file reads text, CSV and JSON",
                file.display()
            ))
        }
    };
    let clipped = text.chars().count() > READ_FILE_LIMIT;
    // Secrets the file holds are masked above, at the environment's
    // boundary, like everything else a page hands back.
    let shown: String = text.chars().take(READ_FILE_LIMIT).collect();
    ActionResult::ok_with(json!({
        "file": file.display().to_string(),
        "size": size,
        "type": mime,
        "clipped": clipped,
        "text": shown,
    }))
}

/// Waits (up to `limit`) for a tab to leave `about:blank` and finish
/// loading; its URL and title as far as they are known.
async fn wait_loaded(tab: &Tab, limit: std::time::Duration) -> (Option<String>, Option<String>) {
    let deadline = tokio::time::Instant::now() + limit;
    let mut last = (None, None);
    loop {
        let read = tab
            .eval("[location.href, document.readyState, document.title]")
            .await;
        if read.is_err() {
            // A tab closed under us (a refused popup) will not load.
            let listed = tab.open_tabs().await.ok();
            if listed.is_some_and(|tabs| tabs.iter().all(|t| t.id != tab.target_id())) {
                return last;
            }
        }
        if let Ok(value) = read {
            let text = |i: usize| value.get(i).and_then(|v| v.as_str()).map(str::to_owned);
            last = (text(0), text(2));
            let loaded = text(1).as_deref() == Some("complete");
            if loaded && text(0).as_deref() != Some("about:blank") {
                return last;
            }
        }
        if tokio::time::Instant::now() >= deadline {
            return last;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
}

/// Chromium's page for a navigation that failed (or was refused).
fn is_error_page(url: &str) -> bool {
    url.starts_with("chrome-error://")
}

/// Actions whose whole point is loading a document.
fn is_navigation(action: &Action) -> bool {
    matches!(
        action,
        Action::Navigate { .. }
            | Action::GotoPage { .. }
            | Action::Back {}
            | Action::Forward {}
            | Action::Reload {}
    )
}

fn driver_error(error: BrowserError) -> DriverError {
    let fatal = matches!(error, BrowserError::Disconnected(_));
    DriverError {
        message: error.to_string(),
        fatal,
    }
}

impl Driver {
    /// The page as it is now. A browser that died is relaunched (up to
    /// [`MAX_RELAUNCHES`] times) and a crashed page reloaded; the error
    /// then says so and is fatal only when no browser could be had.
    pub async fn observe(&mut self) -> Result<PageState, DriverError> {
        // The cookie read runs beside the walk, so it adds no wait.
        let (observed, cookies) = if self.keeps_sign_ins() {
            let (observed, cookies) =
                tokio::join!(self.tab.observe(&self.observe), self.tab.cookies());
            (observed, cookies.ok())
        } else {
            (self.tab.observe(&self.observe).await, None)
        };
        if cookies.is_some() {
            self.cookies = cookies;
        }
        let observed = match observed {
            Ok(state) if self.tab.guard().is_some() && self.refused(&state.url) => {
                match self.leave_refused_document().await {
                    Some(_) => self.tab.observe(&self.observe).await,
                    None => Ok(state),
                }
            }
            other => other,
        };
        let blocked = self.take_blocked();
        self.report_blocked(&blocked);
        let observed = match observed {
            // The page's own navigation was refused while the model
            // thought, leaving Chromium's error page: put the page back.
            Ok(state) if !blocked.is_empty() && is_error_page(&state.url) => {
                match self.restore_after_block().await {
                    Some(restored) => {
                        tracing::info!(%restored, "after a refused navigation");
                        self.tab.observe(&self.observe).await
                    }
                    None => Ok(state),
                }
            }
            other => other,
        };
        let state = match observed {
            Ok(state) => state,
            Err(BrowserError::Disconnected(reason)) => return Err(self.relaunch(reason).await),
            Err(error) => {
                // The connection may have died during the call.
                if let crate::browser::SessionStatus::Disconnected(reason) = self.tab.status() {
                    return Err(self.relaunch(reason).await);
                }
                if matches!(error, BrowserError::Timeout { .. })
                    || error.to_string().to_ascii_lowercase().contains("crash")
                {
                    return Err(self.reload_after_crash(error).await);
                }
                return Err(driver_error(error));
            }
        };
        self.last_url = Some(state.url.clone());
        self.last = Some(state.clone());
        Ok(state)
    }

    /// Runs one action on the page last observed; a failure is a result.
    /// What it caused beyond the page (downloads, a tab it opened, a
    /// navigation the allowed domains refused) is added to the result.
    pub async fn execute(&mut self, action: &Action) -> ActionResult {
        match action {
            Action::Screenshot {
                path,
                full_page,
                target,
            } => {
                return self
                    .screenshot_file(path.as_deref(), *full_page, target.as_ref())
                    .await
            }
            Action::ReadFile { path } => return self.read_file(path),
            Action::SwitchTab { tab } => return self.switch_tab(*tab).await,
            Action::CloseTab { tab } => return self.close_tab(*tab).await,
            _ => {}
        }
        let download_mark = self.tab.downloads().map(|d| d.mark());
        let documentless_before = self.tab.navigations_without_document();
        let tabs_before = match action.target() {
            // Only acting on an element opens a tab of the page's making.
            Some(_) => self.tab.open_tabs().await.ok(),
            None => None,
        };
        // Refusals before the action were the page's own doing.
        let earlier = self.take_blocked();
        self.report_blocked(&earlier);
        let sitemaps = self.sitemap_snapshot();
        // The driver observes after every action: a navigation's new
        // document is first looked at with the driver's own settings.
        let exec = ExecOptions {
            first_look: Some(self.observe.clone()),
            ..self.exec.clone()
        };
        let executor = Executor::new(&self.tab, exec).with_sitemaps(&sitemaps);
        let result = executor.execute(action, self.last.as_ref()).await;
        let result = match result {
            ActionResult::Failure {
                reason: FailureReason::Timeout,
                message,
            } if is_navigation(action) || message.contains("loading") => {
                let replaced = self.replace_stuck_tab().await;
                ActionResult::timeout(format!("{message}; {replaced}"))
            }
            other => other,
        };
        let result = self
            .after_action(result, download_mark, documentless_before, tabs_before)
            .await;
        let left = self.leave_refused_document().await;
        // The executor turned a refusal during the action into `blocked`
        // (its one place for it); what is left here is to mark them seen
        // and to give the agent its page back.
        let blocked = self.take_blocked();
        match (result, left) {
            (
                ActionResult::Failure {
                    reason: FailureReason::Blocked,
                    message,
                },
                left,
            ) => match left.or(self.restore_after_block().await) {
                Some(restored) => ActionResult::blocked(format!("{message}; {restored}")),
                None => ActionResult::blocked(message),
            },
            // A document that never touched the network (a `blob:` the
            // page built) got past the interception during the action.
            (_, Some(left)) => ActionResult::blocked(format!("{} ran, but {left}", action.name())),
            (other, None) => {
                // Refused after the action's own wait (a timer of the
                // page's): the page's doing, reported like one.
                self.report_blocked(&blocked);
                other
            }
        }
    }

    /// The URL of the driven tab now.
    pub async fn current_url(&mut self) -> Option<String> {
        match self.tab.url().await {
            Ok(url) => Some(url),
            Err(error) => {
                tracing::debug!(%error, "reading the tab's URL");
                None
            }
        }
    }

    /// A picture of the page as last observed, as `request` asks.
    pub async fn screenshot(&mut self, request: &ShotRequest) -> Result<Screenshot, BrowserError> {
        // Boxed: the capture's state is large, and the futures of a run,
        // a recipe or an MCP call nest it on a thread's stack.
        Box::pin(shot::capture(
            &self.tab,
            self.last.as_ref(),
            request,
            &MarkColors::default(),
        ))
        .await
    }

    /// What decides the risk of acting on `action`'s target, read from the
    /// element itself (the listing does not show form membership); `None`
    /// for an action without a target, or one whose element is gone (the
    /// executor will say so).
    pub async fn target_facts(&mut self, action: &Action, page: &PageState) -> Option<TargetFacts> {
        let reply = match action.target() {
            Some(Target::Index { index }) => {
                self.tab
                    .eval_on_index(page.observation, *index, TARGET_FACTS_JS, json!({}))
                    .await
            }
            Some(Target::Selector { selector }) => {
                let first = format!("(els) => els.length ? ({TARGET_FACTS_JS})(els[0]) : null");
                self.tab
                    .eval_on_selector(selector.as_str(), &first, json!({}))
                    .await
            }
            None => return None,
        };
        match reply {
            Ok(value) if value.is_object() => {
                let mut target = target_facts(&value);
                // Downloads are a commit only when the person said so.
                target.download &= self.downloads_commit;
                Some(target)
            }
            Ok(_) => None,
            Err(error) => {
                tracing::debug!(%error, "reading the target's risk facts");
                None
            }
        }
    }
}

/// Finds the first element a selector matches among the listed ones (or
/// describes it briefly when it is not listed).
const DESCRIBE_SELECTOR_JS: &str = "(els, args) => { \
    if (!els.length) return null; \
    const o = globalThis.__webagentObserver; \
    for (const i of args.indices) { if (o.element(args.seq, i) === els[0]) return { index: i, count: els.length }; } \
    const el = els[0]; \
    const text = String(el.innerText || el.value || '').replace(/\\s+/g, ' ').trim().slice(0, 60); \
    const attrs = ['id', 'type', 'name', 'aria-label', 'placeholder', 'href', 'role'] \
      .filter((a) => el.hasAttribute(a)) \
      .map((a) => ` ${a}=\"${String(el.getAttribute(a)).slice(0, 40)}\"`).join(''); \
    return { tag: el.localName, attrs, text, count: els.length }; \
  }";

impl Driver {
    /// What a selector target matches on `page`, as a person checking an
    /// approval reads it: the listing line of the listed element it
    /// matches, else a short description of the element, else that it
    /// matches nothing. `None` for an index target or when the page could
    /// not be asked.
    pub async fn describe_selector(&mut self, target: &Target, page: &PageState) -> Option<String> {
        let Target::Selector { selector } = target else {
            return None;
        };
        let indices: Vec<usize> = page.elements.iter().map(|e| e.index.0).collect();
        let args = json!({"seq": page.observation, "indices": indices});
        let reply = self
            .tab
            .eval_on_selector(selector.as_str(), DESCRIBE_SELECTOR_JS, args)
            .await;
        let value = match reply {
            Ok(value) => value,
            Err(error) => {
                tracing::debug!(%error, "describing a selector target");
                return None;
            }
        };
        if value.is_null() {
            return Some(format!("`{selector}` matches nothing on the page now"));
        }
        let count = value.get("count").and_then(|v| v.as_u64()).unwrap_or(1);
        let more = if count > 1 {
            format!(" (first of {count} matches)")
        } else {
            String::new()
        };
        if let Some(index) = value.get("index").and_then(|v| v.as_u64()) {
            let listed = page
                .elements
                .iter()
                .find(|e| e.index.0 as u64 == index)
                .map(crate::dom::element_line)?;
            return Some(format!("{listed}{more}"));
        }
        let text = |key: &str| value.get(key).and_then(|v| v.as_str()).unwrap_or("");
        let tag = text("tag");
        let body = text("text");
        let element = if body.is_empty() {
            format!("<{tag}{} />", text("attrs"))
        } else {
            format!("<{tag}{}>{body}</{tag}>", text("attrs"))
        };
        Some(format!("{element} (not in the listing){more}"))
    }
}

fn target_facts(value: &serde_json::Value) -> TargetFacts {
    let text = |key: &str| value.get(key).and_then(|v| v.as_str()).map(str::to_owned);
    let flag = |key: &str| value.get(key).and_then(|v| v.as_bool()).unwrap_or(false);
    TargetFacts {
        tag: text("tag").unwrap_or_default(),
        input_type: text("type"),
        in_form: flag("inForm"),
        is_submit: flag("isSubmit"),
        href: text("href"),
        download: flag("download"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("webagent-driver-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        dir
    }

    #[test]
    fn read_file_reads_downloads_only_and_says_what_is_there() {
        let dir = scratch("read");
        std::fs::write(dir.join("orders.csv"), "id,total\n1,42\n").expect("a file");
        let read = read_download(&dir, "orders.csv");
        let data = read.data().expect("read");
        assert_eq!(data["text"], "id,total\n1,42\n");
        assert_eq!(data["type"], "text/csv");
        assert_eq!(data["clipped"], false);
        // By its absolute path too, when it lies inside.
        let absolute = dir.join("orders.csv").display().to_string();
        assert!(read_download(&dir, &absolute).is_ok());
        // Outside the directory, nothing is read, whatever the path says.
        let outside = dir
            .parent()
            .expect("a parent")
            .join(format!("outside-{}.txt", std::process::id()));
        std::fs::write(&outside, "not yours").expect("a file outside");
        let escaped = read_download(
            &dir,
            &format!(
                "../{}",
                outside
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or_default()
            ),
        );
        assert_eq!(
            escaped.reason(),
            Some(FailureReason::Blocked),
            "{escaped:?}"
        );
        let _ = std::fs::remove_file(&outside);
        // A missing file names the ones there are.
        let missing = read_download(&dir, "invoice.pdf");
        assert_eq!(missing.reason(), Some(FailureReason::NotFound));
        assert!(format!("{missing:?}").contains("orders.csv"), "{missing:?}");
        // Binary files are refused, long text is clipped.
        std::fs::write(dir.join("logo.png"), [0x89, b'P', b'N', b'G', 0, 0, 1]).expect("a file");
        assert_eq!(
            read_download(&dir, "logo.png").reason(),
            Some(FailureReason::InvalidParams)
        );
        std::fs::write(dir.join("long.txt"), "x".repeat(READ_FILE_LIMIT + 10)).expect("a file");
        let long = read_download(&dir, "long.txt");
        let data = long.data().expect("read");
        assert_eq!(data["clipped"], true);
        assert_eq!(data["text"].as_str().map(str::len), Some(READ_FILE_LIMIT));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn what_an_action_caused_joins_its_result() {
        let mut extra = serde_json::Map::new();
        extra.insert("new_tab".into(), json!({"url": "http://a.test/"}));
        let joined = with_extras(ActionResult::ok_with(json!("clicked")), extra.clone());
        assert_eq!(
            joined.data(),
            Some(&json!({"result": "clicked", "new_tab": {"url": "http://a.test/"}}))
        );
        let joined = with_extras(ActionResult::ok(), extra.clone());
        assert_eq!(
            joined.data(),
            Some(&json!({"new_tab": {"url": "http://a.test/"}}))
        );
        let failed = with_extras(ActionResult::timeout("slow"), extra);
        assert_eq!(failed.reason(), Some(FailureReason::Timeout));
        assert!(format!("{failed:?}").contains("meanwhile"), "{failed:?}");
        // Nothing caused, nothing added.
        assert_eq!(
            with_extras(ActionResult::ok(), serde_json::Map::new()),
            ActionResult::ok()
        );
    }

    #[test]
    fn only_a_lost_browser_is_fatal_and_navigations_are_known() {
        assert!(driver_error(BrowserError::Disconnected("gone".into())).fatal);
        assert!(!driver_error(BrowserError::Script("boom".into())).fatal);
        assert!(is_error_page("chrome-error://chromewebdata/"));
        assert!(!is_error_page("http://a.test/"));
        let catalog = crate::actions::Catalog::builtin();
        let parse = |v| catalog.parse(&v).expect("valid");
        assert!(is_navigation(&parse(json!({"navigate": {"url": "/x"}}))));
        assert!(is_navigation(&parse(json!({"back": {}}))));
        assert!(!is_navigation(&parse(json!({"click": {"index": 1}}))));
    }

    #[test]
    fn a_targets_risk_facts_are_read_from_the_helpers_answer() {
        let facts = target_facts(&json!({
            "tag": "button", "type": null, "inForm": true, "isSubmit": true,
            "href": null, "download": false
        }));
        assert!(facts.submits_form());
        assert_eq!(facts.tag, "button");
        let link = target_facts(&json!({"tag": "a", "href": "/x.csv", "download": true}));
        assert!(link.download && !link.in_form);
        assert_eq!(link.href.as_deref(), Some("/x.csv"));
    }
}
