//! Keeping a run going through browser faults: a browser that died is
//! started again (or attached again) with the same options and the last
//! page reopened, up to [`MAX_RELAUNCHES`] times; a crashed renderer is
//! reloaded; a tab stuck in a navigation that never ends is replaced; a
//! page that stopped answering (a script spinning forever) has its
//! renderer stopped and a fresh tab takes over on the same page.

use super::{Driver, DriverError, MAX_RELAUNCHES};
use crate::browser::error::BrowserError;
use crate::browser::launch::LaunchOptions;
use crate::browser::session::{shown_address, BrowserSession};
use crate::browser::tab::Tab;

/// The shortest time a page gets to answer before it counts as hung,
/// whatever the action's limit: a busy machine can hold a healthy
/// renderer for seconds (two cores running several browsers), and
/// stopping one loses the page's state, so a false alarm costs more than
/// a few more seconds of waiting on a page that is truly stuck.
const MIN_HANG_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Resolves once `tab`'s page has not answered a trivial evaluation for
/// two `limit`s in a row (asked again every half `limit` while it
/// answers); never for a tab that closed (its calls end at once, and the
/// driver leaves it). Two, because a page's own work can hold its main
/// thread past one: a navigation to a page of twenty thousand rows
/// parsed and laid out on a busy machine took over five seconds, and
/// stopping its renderer lost the page; a script that never yields stays
/// silent through both.
pub(super) async fn until_hung(tab: &Tab, limit: std::time::Duration) {
    let mut silent = 0;
    loop {
        if tab.is_closed() {
            return std::future::pending().await;
        }
        if tab.hung(limit).await {
            silent += 1;
            if silent == 2 {
                return;
            }
            continue;
        }
        silent = 0;
        tokio::time::sleep(limit / 2).await;
    }
}

/// The longest pause between two attempts to attach again.
const MAX_REATTACH_PAUSE: std::time::Duration = std::time::Duration::from_secs(4);

/// A browser in place of one that went away. A launched one is started
/// again once. An attached one (`--connect`) is attached again with
/// growing pauses until `reconnect_window` has passed: a pool that
/// restarts, or a grid that replaces a node, is back after a while, and
/// attempts bunched into the first moments would all miss it.
async fn start_again(options: &LaunchOptions) -> Result<BrowserSession, BrowserError> {
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
                        url: shown_address(
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
    /// The browser is gone: start another with the same options and reopen
    /// the last page. The error says what happened; it is fatal only when
    /// no browser could be had.
    pub(super) async fn relaunch(&mut self, reason: String) -> DriverError {
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
    pub(super) async fn reload_after_crash(&mut self, error: BrowserError) -> DriverError {
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
    pub(super) async fn replace_stuck_tab(&mut self) -> String {
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

    /// How long the page gets to answer a trivial evaluation before its
    /// renderer counts as hung: the action's time limit, and at least
    /// [`MIN_HANG_LIMIT`].
    pub(super) fn hang_limit(&self) -> std::time::Duration {
        self.exec.action_timeout.max(MIN_HANG_LIMIT)
    }

    /// Whether the driven tab's page stopped answering. A call that ran
    /// out of time may be the page's fault (a load that never ends, a
    /// slow server) or its renderer's (a script that never yields); only
    /// the second needs the renderer stopped.
    pub(super) async fn page_hung(&self) -> bool {
        !self.tab.is_closed() && self.tab.hung(self.hang_limit()).await
    }

    /// The page stopped answering: its renderer is stopped (crashed, as
    /// a real crash would) and a fresh tab opens on the last page seen,
    /// so the next step has a page that answers. What was done, in words.
    pub(super) async fn stop_hung_page(&mut self) -> String {
        self.hung_stops += 1;
        if self.last_url.is_none() {
            // Hung before its first observation (a start page spinning
            // after its load): the browser still knows where it was.
            self.last_url = self.tab.url().await.ok().filter(|u| !u.is_empty());
        }
        tracing::warn!(url = ?self.last_url, "the page stopped answering; stopping its renderer");
        self.tab.crash_renderer().await;
        format!(
            "the page did not answer for {} s (a script that never yields), so its renderer was stopped; {}",
            (self.hang_limit() * 2).as_secs_f64(),
            self.replace_stuck_tab().await
        )
    }

    /// [`Driver::stop_hung_page`] when the observation failed with
    /// `error`. A fresh tab whose page stops answering again before it
    /// was ever observed ends the run: the page does it each time it
    /// loads, and reopening it again would only wait out the same limits.
    pub(super) async fn observe_hung_page(&mut self, error: BrowserError) -> DriverError {
        let url = self.last_url.clone().unwrap_or_else(|| "the page".into());
        if self.hung_stops > 0 {
            self.tab.crash_renderer().await;
            return DriverError {
                message: format!(
                    "{url} stopped answering again in a fresh tab ({error}); its renderer was stopped, and a page that keeps it busy each time it loads cannot be driven, so the run ends"
                ),
                fatal: true,
            };
        }
        let stopped = self.stop_hung_page().await;
        DriverError {
            message: format!("the page could not be observed ({error}); {stopped}"),
            fatal: false,
        }
    }
}
