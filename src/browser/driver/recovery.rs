//! Keeping a run going through browser faults: a browser that died is
//! started again (or attached again) with the same options and the last
//! page reopened, up to [`MAX_RELAUNCHES`] times; a crashed renderer is
//! reloaded; a tab stuck in a navigation that never ends is replaced.

use super::{Driver, DriverError, MAX_RELAUNCHES};
use crate::browser::error::BrowserError;
use crate::browser::launch::LaunchOptions;
use crate::browser::session::{shown_address, BrowserSession};

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
}
