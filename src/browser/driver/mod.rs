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
//!
//! The driver's rooms, each an `impl Driver` of one concern: `recovery`
//! (a browser or page that died), `refusals` (what the allowed domains
//! refused), `effects` (what an action caused beyond its page), `tabs`
//! (tabs opened, switched to and closed), `files` (`read_file` on the
//! downloads), `screenshots` and `target` (what an action's target is,
//! read from the page for risk and approval). Here: the driver itself,
//! observing, and the way an action travels.

use std::sync::{Arc, RwLock};

use crate::actions::{Action, ActionResult, FailureReason, Target};
use crate::dom::PageState;
use crate::events::EventSink;
use crate::secrets::Secrets;
use crate::sitemap::SitemapSet;

use super::act::{ExecOptions, Executor};
use super::connection::SessionStatus;
use super::error::BrowserError;
use super::session::BrowserSession;
use super::state::StorageState;
use super::tab::{ObserveOptions, Tab};

mod effects;
mod files;
mod recovery;
mod refusals;
mod screenshots;
mod tabs;
mod target;
#[cfg(test)]
mod tests;

/// How many times a run relaunches a dead browser before it gives up.
pub const MAX_RELAUNCHES: usize = 3;

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
    /// Renderers stopped for not answering since the last observation
    /// that worked.
    hung_stops: usize,
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

impl Driver {
    /// Drives `tab`; `goto_page` searches `sitemaps` as they are at each
    /// step (a watcher may replace them in between).
    ///
    /// Every refusal already in the tab's guard is still to be reported:
    /// a page that sends itself off-site while the tab is being opened is
    /// the driver's to tell about at its first observation.
    pub fn new(tab: Tab, exec: ExecOptions, sitemaps: Arc<RwLock<SitemapSet>>) -> Self {
        // Dialogs the page opens between actions get the actions' answer.
        tab.set_dialog_answer(exec.accept_dialogs, exec.prompt_text.clone());
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
            hung_stops: 0,
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
    /// The page as it is now. A browser that died is relaunched (up to
    /// [`MAX_RELAUNCHES`] times) and a crashed page reloaded; the error
    /// then says so and is fatal only when no browser could be had.
    pub async fn observe(&mut self) -> Result<PageState, DriverError> {
        // A popup that closed itself after the last action's result: the
        // tab before it is observed instead (its tab list no longer has
        // the popup).
        if self.tab.is_closed() {
            let closed = self.leave_closed_tab().await;
            tracing::info!(%closed, "the driven tab closed between steps");
        }
        self.others.retain(|tab| !tab.is_closed());
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
            Err(error @ BrowserError::TabClosed { .. }) => {
                let closed = self.leave_closed_tab().await;
                return Err(DriverError {
                    message: format!("{error} while it was observed; {}", now_on(&closed)),
                    fatal: false,
                });
            }
            Err(error) => {
                // The connection may have died during the call.
                if let SessionStatus::Disconnected(reason) = self.tab.status() {
                    return Err(self.relaunch(reason).await);
                }
                if matches!(error, BrowserError::Timeout { .. }) && self.page_hung().await {
                    return Err(self.observe_hung_page(error).await);
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
        self.hung_stops = 0;
        self.report_dialogs();
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
            Action::ReadFile { path } => return self.read_file(path).await,
            Action::SwitchTab { tab, url } => {
                return match (tab, url) {
                    (Some(number), _) => self.switch_tab(*number).await,
                    (None, Some(pattern)) => self.switch_tab_to(pattern).await,
                    (None, None) => {
                        ActionResult::invalid_params("give the tab's number or its url")
                    }
                }
            }
            Action::AnswerDialogs { accept, text } => {
                self.exec.accept_dialogs = *accept;
                self.exec.prompt_text = text.clone();
                self.tab.set_dialog_answer(*accept, text.clone());
                return ActionResult::ok_with(action.params());
            }
            Action::CloseTab { tab } => return self.close_tab(*tab).await,
            _ => {}
        }
        if self.tab.is_closed() {
            // It closed after the page the model chose from was observed:
            // the action was meant for a page that is gone.
            let closed = self.leave_closed_tab().await;
            return ActionResult::navigation(format!(
                "{} did not run: the tab {} closed before it; {}; observe it and act there",
                action.name(),
                closed["url"].as_str().unwrap_or_default(),
                now_on(&closed)
            ));
        }
        let download_mark = self.tab.downloads().map(|d| d.mark());
        let documentless_before = self.tab.navigations_without_document();
        let tabs_before = match action.target() {
            // Only acting on an element opens a tab of the page's making.
            Some(_) => self.tab.open_tabs().await.ok(),
            None => None,
        };
        // Refusals and dialogs before the action were the page's own
        // doing.
        let earlier = self.take_blocked();
        self.report_blocked(&earlier);
        self.report_dialogs();
        let sitemaps = self.sitemap_snapshot();
        // The driver observes after every action: a navigation's new
        // document is first looked at with the driver's own settings.
        let exec = ExecOptions {
            first_look: Some(self.observe.clone()),
            ..self.exec.clone()
        };
        let executor = Executor::new(&self.tab, exec).with_sitemaps(&sitemaps);
        let work = executor.execute(action, self.last.as_ref());
        // A page whose script never yields answers nothing the action
        // asks (each call would wait out its own limit): the action ends
        // as soon as the page is found not answering.
        let result = tokio::select! {
            result = work => result,
            () = recovery::until_hung(&self.tab, self.hang_limit()) => {
                let stopped = self.stop_hung_page().await;
                return ActionResult::timeout(format!(
                    "{} did not finish: {stopped}",
                    action.name()
                ));
            }
        };
        let result = match result {
            ActionResult::Failure {
                reason: FailureReason::Timeout,
                message,
            } => {
                if self.page_hung().await {
                    let stopped = self.stop_hung_page().await;
                    ActionResult::timeout(format!("{message}; {stopped}"))
                } else if is_navigation(action) || message.contains("loading") {
                    let replaced = self.replace_stuck_tab().await;
                    ActionResult::timeout(format!("{message}; {replaced}"))
                } else {
                    ActionResult::timeout(message)
                }
            }
            other => other,
        };
        let result = self
            .after_action(
                result,
                download_mark,
                documentless_before,
                tabs_before,
                action.name(),
            )
            .await;
        // The action closed its own tab (a popup handing a value to its
        // opener): the session goes back, and the result says so.
        let result = if self.tab.is_closed() {
            let closed = self.leave_closed_tab().await;
            effects::with_extras(
                result,
                serde_json::Map::from_iter([("tab_closed".into(), closed)]),
            )
        } else {
            result
        };
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

    /// The URL of the document of another origin that holds `target`
    /// (read from the frame now), or `None` for the top document; `Err`
    /// when the target or its frame cannot be found.
    pub async fn frame_url_of(&self, target: &Target) -> Result<Option<String>, String> {
        let executor = Executor::new(&self.tab, self.exec.clone());
        executor
            .frame_url_of(target, self.last.as_ref().map(|page| page.observation))
            .await
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
}

/// Where the session went after its tab closed, in words, from what
/// [`Driver::leave_closed_tab`] reported.
fn now_on(closed: &serde_json::Value) -> String {
    match closed["now_on"].as_str() {
        Some(url) => format!("the session is now on {url}"),
        None => closed["error"].as_str().unwrap_or_default().to_string(),
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
