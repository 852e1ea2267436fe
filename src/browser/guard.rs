//! Allowed domains: which URLs a tab may load, and the CDP interception
//! that enforces it.
//!
//! # The rules
//!
//! A [`DomainPolicy`] is a list of glob patterns (`*` matches any run of
//! characters, case-insensitively):
//!
//! - `example.com` — https on that host, any port. A pattern without a
//!   scheme matches https only, except for loopback hosts (`localhost`,
//!   `*.localhost`, `127.x.x.x`, `[::1]`), where http matches too.
//! - `*.example.com` — every subdomain, and `example.com` itself.
//! - `http://127.0.0.1:*` — a scheme and a port glob spelled out.
//! - `example.com/docs/*` — a path glob narrows a host to some pages.
//! - `data:`, `blob:`, `javascript:`, `file:` (optionally followed by a
//!   glob, e.g. `file:///tmp/*`) — these schemes are blocked unless a
//!   pattern names them.
//!
//! An empty policy allows everything (no list set). With a list set, a
//! host that is a plain IP address other than loopback is blocked unless a
//! pattern names that exact address (no wildcard reaches an IP), and
//! `about:blank` / `about:srcdoc` stay allowed (every tab starts there).
//!
//! # Enforcement
//!
//! `Fetch.enable` for Document requests at the request stage, on the
//! browser target (which sees every target's requests, including a popup's
//! first one, sent before anything can attach to the popup) and on each tab
//! webagent opens (and each popup one of them opens). Every main-frame or
//! frame navigation that goes to the network — each hop of a redirect
//! chain, a meta refresh, `location = …`, a form post, `window.open` —
//! pauses, is checked, and is failed with `BlockedByClient` when the policy
//! refuses it; a popup left on a refused URL is closed. Each tab's
//! [`NavigationGuard`] logs what was refused in it (a popup's refusals go to
//! its opener's), for the caller to report.
//!
//! What it does not cover: URLs that never reach the network stack do not
//! pause (`data:`, `blob:`, `javascript:`, `about:`); Chromium itself
//! refuses top-level `data:` navigations the page starts, and the agent's
//! own `navigate` is checked before it is sent, but a same-origin `blob:`
//! document a page opens is not seen. Subresources (images, scripts, XHR,
//! fetch, WebSocket) are not checked: the policy is about where the agent
//! goes, not what a page it may visit loads.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, EnableParams, EventRequestPaused, FailRequestParams, RequestPattern,
    RequestStage,
};
use chromiumoxide::cdp::browser_protocol::network::{ErrorReason, ResourceType};
use chromiumoxide::cdp::browser_protocol::target::{
    CloseTargetParams, EventTargetCreated, EventTargetInfoChanged, TargetId,
};
use chromiumoxide::{Browser, Page};
use futures_util::StreamExt;
use tokio::task::JoinHandle;

/// A pattern that cannot be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GuardError {
    /// The pattern is empty or blank.
    #[error(
        "an allowed-domain pattern is empty; give a host such as example.com or *.example.com"
    )]
    Empty,
    /// The pattern has a scheme but no host.
    #[error("allowed-domain pattern {0:?} has no host; write it like https://example.com or http://127.0.0.1:*")]
    NoHost(String),
}

/// Schemes that never reach a host and are refused unless named.
const LOCAL_SCHEMES: [&str; 4] = ["data", "blob", "javascript", "file"];

/// One allowed-domain pattern, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum DomainPattern {
    /// A network pattern: scheme, host, port and path globs.
    Network {
        /// `None` is https, plus http on loopback hosts.
        scheme: Option<String>,
        host: String,
        /// `None` is any port.
        port: Option<String>,
        /// `None` is any path.
        path: Option<String>,
    },
    /// `data:`, `blob:`, `javascript:` or `file:` with a glob over the
    /// whole URL.
    Local {
        /// The whole-URL glob (`data:*` for a bare `data:`).
        glob: String,
    },
}

impl DomainPattern {
    fn parse(text: &str) -> Result<DomainPattern, GuardError> {
        let text = text.trim().to_ascii_lowercase();
        if text.is_empty() {
            return Err(GuardError::Empty);
        }
        for scheme in LOCAL_SCHEMES {
            if let Some(rest) = text.strip_prefix(scheme).and_then(|r| r.strip_prefix(':')) {
                let glob = if rest.is_empty() {
                    format!("{scheme}:*")
                } else {
                    text.clone()
                };
                return Ok(DomainPattern::Local { glob });
            }
        }
        let (scheme, rest) = match text.split_once("://") {
            Some((scheme, rest)) => (Some(scheme.to_string()), rest),
            None => (None, text.as_str()),
        };
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], Some(&rest[at..])),
            None => (rest, None),
        };
        let (host, port) = split_host_port(authority);
        if host.is_empty() {
            return Err(GuardError::NoHost(text.clone()));
        }
        Ok(DomainPattern::Network {
            scheme,
            host: host.to_string(),
            port: port.map(str::to_string),
            // A bare trailing slash means the whole site, as it reads.
            path: path.filter(|p| *p != "/" && *p != "/*").map(str::to_string),
        })
    }

    fn matches(&self, url: &ParsedUrl) -> bool {
        match self {
            DomainPattern::Local { glob } => glob_match(glob, &url.full),
            DomainPattern::Network {
                scheme,
                host,
                port,
                path,
            } => {
                let Some(url_host) = &url.host else {
                    return false;
                };
                let scheme_ok = match scheme {
                    Some(glob) => glob_match(glob, &url.scheme),
                    None => {
                        url.scheme == "https" || (url.scheme == "http" && is_loopback(url_host))
                    }
                };
                let host_ok = if is_ip(url_host) && !is_loopback(url_host) {
                    // Wildcards never reach a plain public or private IP.
                    host == url_host
                } else {
                    host_match(host, url_host)
                };
                let port_ok = match port {
                    Some(glob) => glob_match(glob, &url.port.to_string()),
                    None => true,
                };
                let path_ok = match path {
                    Some(glob) => glob_match(glob, &url.path),
                    None => true,
                };
                scheme_ok && host_ok && port_ok && path_ok
            }
        }
    }
}

/// `host[:port]`, with IPv6 literals in brackets kept whole.
fn split_host_port(authority: &str) -> (&str, Option<&str>) {
    if authority.starts_with('[') {
        if let Some(end) = authority.find(']') {
            let host = &authority[..=end];
            let port = authority[end + 1..].strip_prefix(':');
            return (host, port);
        }
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    }
}

/// `*.example.com` also covers `example.com` itself: people who allow a
/// site's subdomains expect the site too.
fn host_match(pattern: &str, host: &str) -> bool {
    if let Some(base) = pattern.strip_prefix("*.") {
        if host == base {
            return true;
        }
    }
    glob_match(pattern, host)
}

/// Glob with `*` only; both sides are already lower case.
fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    // Where the last star was, and how much of the text it has eaten.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

fn is_ip(host: &str) -> bool {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>()
        .is_ok()
}

fn is_loopback(host: &str) -> bool {
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>()
        .map(|ip| ip.is_loopback())
        .unwrap_or(false)
}

/// The parts of a URL the rules look at, lower-cased.
struct ParsedUrl {
    full: String,
    scheme: String,
    host: Option<String>,
    port: u16,
    path: String,
}

impl ParsedUrl {
    fn parse(text: &str) -> Option<ParsedUrl> {
        let url = url::Url::parse(text.trim()).ok()?;
        let host = url.host().map(|h| match h {
            url::Host::Ipv6(ip) => format!("[{ip}]"),
            other => other.to_string().to_ascii_lowercase(),
        });
        Some(ParsedUrl {
            full: url.as_str().to_ascii_lowercase(),
            scheme: url.scheme().to_string(),
            host,
            port: url.port_or_known_default().unwrap_or(0),
            path: url.path().to_ascii_lowercase(),
        })
    }
}

/// Whether a URL may be loaded, and why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The URL may load.
    Allowed,
    /// The URL is refused; the text says which rule refused it.
    Blocked(String),
}

impl Verdict {
    /// Whether the URL is refused.
    pub fn is_blocked(&self) -> bool {
        matches!(self, Verdict::Blocked(_))
    }
}

/// The allowed-domain list. Empty allows everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DomainPolicy {
    patterns: Vec<DomainPattern>,
    sources: Vec<String>,
}

impl DomainPolicy {
    /// Parses the patterns (config `allowed_domains`, `--allow-domain`).
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<DomainPolicy, GuardError> {
        let mut policy = DomainPolicy::default();
        for text in patterns {
            policy.patterns.push(DomainPattern::parse(text.as_ref())?);
            policy.sources.push(text.as_ref().trim().to_string());
        }
        Ok(policy)
    }

    /// Whether a list is set at all (an empty policy checks nothing).
    pub fn is_active(&self) -> bool {
        !self.patterns.is_empty()
    }

    /// The patterns as given.
    pub fn patterns(&self) -> &[String] {
        &self.sources
    }

    /// Checks one URL.
    pub fn check(&self, url: &str) -> Verdict {
        if !self.is_active() {
            return Verdict::Allowed;
        }
        let lowered = url.trim().to_ascii_lowercase();
        if lowered == "about:blank" || lowered == "about:srcdoc" {
            return Verdict::Allowed;
        }
        let Some(parsed) = ParsedUrl::parse(url) else {
            return Verdict::Blocked(format!(
                "{url} is not a URL the allowed domains can vouch for"
            ));
        };
        if self.patterns.iter().any(|p| p.matches(&parsed)) {
            return Verdict::Allowed;
        }
        let allowed = self.sources.join(", ");
        let why = match &parsed.host {
            _ if LOCAL_SCHEMES.contains(&parsed.scheme.as_str()) => format!(
                "{}: URLs are blocked unless allowed explicitly (add \"{}:\" to the allowed domains)",
                parsed.scheme, parsed.scheme
            ),
            Some(host) if is_ip(host) && !is_loopback(host) => format!(
                "{host} is a plain IP address; only loopback or an exact listed address is allowed (allowed: {allowed})"
            ),
            Some(host) => format!("{host} is not in the allowed domains ({allowed})"),
            None => format!("{}: URLs are not in the allowed domains ({allowed})", parsed.scheme),
        };
        Verdict::Blocked(why)
    }
}

/// One navigation the guard refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedNavigation {
    /// The URL that was refused.
    pub url: String,
    /// Which rule refused it.
    pub reason: String,
    /// A number that grows with each refusal, so a caller can ask for
    /// those after a point ([`NavigationGuard::blocked_since`]).
    pub seq: u64,
    /// The target id of the tab it happened in, when known.
    pub tab: Option<String>,
    /// For a popup, the target id of the tab that opened it.
    pub opener: Option<String>,
}

impl BlockedNavigation {
    /// Whether it happened in tab `tab` or in a popup that tab opened.
    pub fn concerns(&self, tab: &str) -> bool {
        self.tab.as_deref() == Some(tab) || self.opener.as_deref() == Some(tab)
    }
}

/// The policy plus the log of what it refused; shared by a session's tabs.
#[derive(Debug, Default)]
pub struct NavigationGuard {
    policy: DomainPolicy,
    blocked: Mutex<Vec<BlockedNavigation>>,
}

/// How many refusals the log keeps (a page stuck in a redirect loop to a
/// blocked host must not grow it without end).
const LOG_LIMIT: usize = 1000;

impl NavigationGuard {
    /// A guard enforcing `policy`.
    pub fn new(policy: DomainPolicy) -> NavigationGuard {
        NavigationGuard {
            policy,
            blocked: Mutex::new(Vec::new()),
        }
    }

    /// The policy it enforces.
    pub fn policy(&self) -> &DomainPolicy {
        &self.policy
    }

    /// Checks a URL, and logs it when refused.
    pub fn check(&self, url: &str) -> Verdict {
        self.check_in(url, None, None)
    }

    /// Checks a URL loading in tab `tab` (a popup of `opener`), and logs it
    /// with them when refused.
    pub fn check_in(&self, url: &str, tab: Option<&str>, opener: Option<&str>) -> Verdict {
        let verdict = self.policy.check(url);
        if let Verdict::Blocked(reason) = &verdict {
            self.record(url, reason, tab, opener);
        }
        verdict
    }

    fn record(&self, url: &str, reason: &str, tab: Option<&str>, opener: Option<&str>) {
        tracing::warn!(%url, %reason, ?tab, "blocked a navigation");
        let mut log = self.blocked.lock().unwrap_or_else(|e| e.into_inner());
        let seq = log.last().map_or(1, |b| b.seq + 1);
        log.push(BlockedNavigation {
            url: url.to_string(),
            reason: reason.to_string(),
            seq,
            tab: tab.map(str::to_string),
            opener: opener.map(str::to_string),
        });
        if log.len() > LOG_LIMIT {
            let excess = log.len() - LOG_LIMIT;
            log.drain(..excess);
        }
    }

    /// The sequence number of the latest refusal (0 when none yet).
    pub fn mark(&self) -> u64 {
        let log = self.blocked.lock().unwrap_or_else(|e| e.into_inner());
        log.last().map_or(0, |b| b.seq)
    }

    /// Refusals after `mark` (see [`NavigationGuard::mark`]), oldest first.
    pub fn blocked_since(&self, mark: u64) -> Vec<BlockedNavigation> {
        let log = self.blocked.lock().unwrap_or_else(|e| e.into_inner());
        log.iter().filter(|b| b.seq > mark).cloned().collect()
    }
}

/// The session's side of the guard: the policy, and one
/// [`NavigationGuard`] per tab (a popup logs into its opener's), so that
/// what one tab's page did is never blamed on an action in another.
#[derive(Debug)]
pub(crate) struct GuardRegistry {
    policy: DomainPolicy,
    tabs: Mutex<HashMap<String, Weak<NavigationGuard>>>,
    /// For popups whose opener webagent does not drive.
    fallback: Arc<NavigationGuard>,
}

impl GuardRegistry {
    pub(crate) fn new(policy: DomainPolicy) -> GuardRegistry {
        GuardRegistry {
            fallback: Arc::new(NavigationGuard::new(policy.clone())),
            policy,
            tabs: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn policy(&self) -> &DomainPolicy {
        &self.policy
    }

    /// A new guard for the tab with this target id.
    pub(crate) fn for_tab(&self, target: &str) -> Arc<NavigationGuard> {
        let guard = Arc::new(NavigationGuard::new(self.policy.clone()));
        self.register(target, &guard);
        guard
    }

    fn register(&self, target: &str, guard: &Arc<NavigationGuard>) {
        let mut tabs = self.tabs.lock().unwrap_or_else(|e| e.into_inner());
        tabs.retain(|_, g| g.strong_count() > 0);
        tabs.insert(target.to_string(), Arc::downgrade(guard));
    }

    /// Whether a tab with its own interception has this target id.
    fn is_tab(&self, target: &str) -> bool {
        let tabs = self.tabs.lock().unwrap_or_else(|e| e.into_inner());
        tabs.get(target).is_some_and(|g| g.strong_count() > 0)
    }

    /// The guard of the tab with this target id, or the fallback.
    pub(crate) fn of(&self, target: &str) -> Arc<NavigationGuard> {
        let tabs = self.tabs.lock().unwrap_or_else(|e| e.into_inner());
        tabs.get(target)
            .and_then(Weak::upgrade)
            .unwrap_or_else(|| self.fallback.clone())
    }
}

/// Starts intercepting `page`'s document requests. The returned task runs
/// until the page's event stream ends; abort it when the tab is dropped.
/// `opener` is the tab that opened it, for a popup.
pub(crate) async fn protect_page(
    page: &Page,
    guard: Arc<NavigationGuard>,
    opener: Option<String>,
) -> Result<JoinHandle<()>, chromiumoxide::error::CdpError> {
    let tab = page.target_id().inner().clone();
    // Listen before enabling, so the first paused request is not missed.
    let mut paused = page.event_listener::<EventRequestPaused>().await?;
    let pattern = RequestPattern {
        url_pattern: Some("*".to_string()),
        resource_type: Some(ResourceType::Document),
        request_stage: Some(RequestStage::Request),
    };
    page.execute(EnableParams {
        patterns: Some(vec![pattern]),
        handle_auth_requests: None,
    })
    .await?;
    let page = page.clone();
    Ok(tokio::spawn(async move {
        while let Some(event) = paused.next().await {
            let url = event.request.url.clone();
            let sent = match guard.check_in(&url, Some(&tab), opener.as_deref()) {
                Verdict::Allowed => page
                    .execute(ContinueRequestParams::new(event.request_id.clone()))
                    .await
                    .map(drop),
                Verdict::Blocked(_) => page
                    .execute(FailRequestParams::new(
                        event.request_id.clone(),
                        ErrorReason::BlockedByClient,
                    ))
                    .await
                    .map(drop),
            };
            if let Err(error) = sent {
                // The page may have closed or moved on; nothing waits on it.
                tracing::debug!(%error, %url, "answering a paused request");
            }
        }
    }))
}

/// Watches the browser for popups (pages with an opener): each gets the
/// same interception as a tab, and one whose URL the policy refuses is
/// closed. A popup's first request can leave before interception is in
/// place, so closing is the backstop, not the first line.
pub(crate) async fn watch_popups(
    browser: Arc<Browser>,
    registry: Arc<GuardRegistry>,
) -> JoinHandle<()> {
    let created = browser.event_listener::<EventTargetCreated>().await;
    let changed = browser.event_listener::<EventTargetInfoChanged>().await;
    let (created, changed) = match (created, changed) {
        (Ok(created), Ok(changed)) => (created, changed),
        (Err(error), _) | (_, Err(error)) => {
            tracing::warn!(%error, "cannot watch for popups; popups to refused URLs stay open");
            return tokio::spawn(async {});
        }
    };
    let browser_wide = intercept_browser_wide(&browser, &registry).await;
    tokio::spawn(async move {
        // Lives as long as the watcher.
        let _browser_wide = AbortOnDrop(browser_wide);
        let created = created.map(|e| (true, e.target_info.clone()));
        let changed = changed.map(|e| (false, e.target_info.clone()));
        let mut targets = futures_util::stream::select(created, changed);
        let mut closed: Vec<TargetId> = Vec::new();
        while let Some((is_new, info)) = targets.next().await {
            if info.r#type != "page" || info.opener_id.is_none() || closed.contains(&info.target_id)
            {
                continue;
            }
            let opener = info.opener_id.as_ref().map(|o| o.inner().clone());
            let guard = registry.of(opener.as_deref().unwrap_or_default());
            if is_new {
                // Popups of this popup log into the same tab's guard.
                registry.register(info.target_id.inner(), &guard);
                tokio::spawn(protect_popup(
                    browser.clone(),
                    guard.clone(),
                    info.target_id.clone(),
                    opener.clone(),
                ));
            }
            let popup = info.target_id.inner().as_str();
            if info.url.is_empty()
                || !guard
                    .check_in(&info.url, Some(popup), opener.as_deref())
                    .is_blocked()
            {
                continue;
            }
            closed.push(info.target_id.clone());
            let close = CloseTargetParams::new(info.target_id.clone());
            if let Err(error) = browser.execute(close).await {
                tracing::warn!(%error, url = %info.url, "could not close a popup to a refused URL");
            }
        }
    })
}

/// Aborts a task when dropped.
struct AbortOnDrop(Option<JoinHandle<()>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// Interception on the browser target itself: it also sees a popup's first
/// request, which leaves before the popup can be attached to. A tab's own
/// interception logs what it refuses; this one logs only for frames that
/// are not a known tab (a new popup's main frame has its target's id).
async fn intercept_browser_wide(
    browser: &Arc<Browser>,
    registry: &Arc<GuardRegistry>,
) -> Option<JoinHandle<()>> {
    let mut paused = match browser.event_listener::<EventRequestPaused>().await {
        Ok(paused) => paused,
        Err(error) => {
            tracing::warn!(%error, "no browser-wide interception");
            return None;
        }
    };
    let pattern = RequestPattern {
        url_pattern: Some("*".to_string()),
        resource_type: Some(ResourceType::Document),
        request_stage: Some(RequestStage::Request),
    };
    let enabled = browser
        .execute(EnableParams {
            patterns: Some(vec![pattern]),
            handle_auth_requests: None,
        })
        .await;
    if let Err(error) = enabled {
        tracing::warn!(%error, "the browser refused browser-wide interception; popups are checked after they open");
        return None;
    }
    let browser = browser.clone();
    let registry = registry.clone();
    Some(tokio::spawn(async move {
        while let Some(event) = paused.next().await {
            let url = event.request.url.clone();
            let frame = event.frame_id.inner().clone();
            let verdict = registry.policy.check(&url);
            let sent = match verdict {
                Verdict::Allowed => browser
                    .execute(ContinueRequestParams::new(event.request_id.clone()))
                    .await
                    .map(drop),
                Verdict::Blocked(reason) => {
                    if !registry.is_tab(&frame) {
                        registry
                            .of(&frame)
                            .record(&url, &reason, Some(&frame), None);
                    }
                    browser
                        .execute(FailRequestParams::new(
                            event.request_id.clone(),
                            ErrorReason::BlockedByClient,
                        ))
                        .await
                        .map(drop)
                }
            };
            if let Err(error) = sent {
                tracing::debug!(%error, %url, "answering a paused request (browser-wide)");
            }
        }
    }))
}

/// Puts a popup under interception once chromiumoxide has attached to it.
async fn protect_popup(
    browser: Arc<Browser>,
    guard: Arc<NavigationGuard>,
    target: TargetId,
    opener: Option<String>,
) {
    // Attaching happens in the handler task; give it a moment.
    for _attempt in 0..20 {
        if let Ok(page) = browser.get_page(target.clone()).await {
            match protect_page(&page, guard, opener).await {
                Ok(task) => drop(task),
                Err(error) => tracing::debug!(%error, "protecting a popup"),
            }
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    tracing::debug!(target = ?target, "a popup was never attached; only its URL is watched");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(patterns: &[&str]) -> DomainPolicy {
        DomainPolicy::new(patterns).expect("valid patterns")
    }

    fn allowed(p: &DomainPolicy, url: &str) -> bool {
        !p.check(url).is_blocked()
    }

    #[test]
    fn no_list_allows_everything() {
        let p = policy(&[]);
        assert!(allowed(&p, "data:text/html,hi"));
        assert!(allowed(&p, "http://8.8.8.8/"));
    }

    #[test]
    fn a_bare_host_means_https_on_any_port() {
        let p = policy(&["example.com"]);
        assert!(allowed(&p, "https://example.com/a?b#c"));
        assert!(allowed(&p, "https://EXAMPLE.com:8443/"));
        assert!(!allowed(&p, "http://example.com/"));
        assert!(!allowed(&p, "https://www.example.com/"));
        assert!(!allowed(&p, "https://example.com.evil.net/"));
        assert!(!allowed(&p, "https://evilexample.com/"));
    }

    #[test]
    fn a_star_subdomain_covers_the_site_and_its_subdomains() {
        let p = policy(&["*.example.com"]);
        assert!(allowed(&p, "https://example.com/"));
        assert!(allowed(&p, "https://a.b.example.com/"));
        assert!(!allowed(&p, "https://example.org/"));
        assert!(!allowed(&p, "https://notexample.com/"));
    }

    #[test]
    fn loopback_hosts_also_match_http_without_a_scheme() {
        let p = policy(&["localhost", "127.0.0.1"]);
        assert!(allowed(&p, "http://localhost:3000/x"));
        assert!(allowed(&p, "http://127.0.0.1:8080/"));
        assert!(!allowed(&p, "http://127.0.0.2/"), "only the listed address");
    }

    #[test]
    fn scheme_and_port_globs_are_honoured() {
        let p = policy(&["http://127.0.0.1:*"]);
        assert!(allowed(&p, "http://127.0.0.1:41234/page"));
        assert!(!allowed(&p, "https://127.0.0.1:41234/page"));
        assert!(!allowed(&p, "http://localhost:41234/page"));
        let p = policy(&["http://127.0.0.1:8080"]);
        assert!(allowed(&p, "http://127.0.0.1:8080/"));
        assert!(!allowed(&p, "http://127.0.0.1:8081/"));
    }

    #[test]
    fn a_path_glob_narrows_a_host() {
        let p = policy(&["example.com/docs/*"]);
        assert!(allowed(&p, "https://example.com/docs/intro"));
        assert!(!allowed(&p, "https://example.com/admin"));
        assert!(allowed(&policy(&["example.com/"]), "https://example.com/x"));
    }

    #[test]
    fn local_schemes_are_blocked_unless_named() {
        let p = policy(&["example.com"]);
        for url in [
            "data:text/html,<b>x</b>",
            "blob:https://example.com/1234",
            "javascript:alert(1)",
            "file:///etc/passwd",
        ] {
            let verdict = p.check(url);
            assert!(verdict.is_blocked(), "{url}");
        }
        assert!(matches!(p.check("data:,x"), Verdict::Blocked(r) if r.contains("\"data:\"")));
        let p = policy(&["example.com", "data:", "file:///tmp/*"]);
        assert!(allowed(&p, "data:text/plain,ok"));
        assert!(allowed(&p, "file:///tmp/report.html"));
        assert!(!allowed(&p, "file:///etc/passwd"));
        assert!(!allowed(&p, "javascript:void(0)"));
    }

    #[test]
    fn plain_ips_other_than_loopback_need_an_exact_pattern() {
        let p = policy(&["*"]);
        assert!(allowed(&p, "https://example.com/"));
        assert!(!allowed(&p, "https://10.0.0.5/"));
        assert!(!allowed(&p, "https://[2001:db8::1]/"));
        assert!(
            matches!(p.check("https://192.168.1.1/"), Verdict::Blocked(r) if r.contains("plain IP"))
        );
        assert!(allowed(
            &policy(&["*", "https://10.0.0.5"]),
            "https://10.0.0.5/"
        ));
        assert!(allowed(&policy(&["http://*"]), "http://127.0.0.1:9/"));
        assert!(allowed(&policy(&["[::1]"]), "http://[::1]:8080/"));
    }

    #[test]
    fn blank_pages_stay_allowed_and_garbage_does_not() {
        let p = policy(&["example.com"]);
        assert!(allowed(&p, "about:blank"));
        assert!(!allowed(&p, "about:config"));
        assert!(!allowed(&p, "not a url"));
        assert!(!allowed(&p, "chrome://crash"));
    }

    #[test]
    fn bad_patterns_say_how_to_write_them() {
        assert_eq!(DomainPolicy::new(&[" "]), Err(GuardError::Empty));
        let err = DomainPolicy::new(&["https://"]).unwrap_err();
        assert!(err.to_string().contains("https://example.com"), "{err}");
    }

    #[test]
    fn the_guard_logs_refusals_after_a_mark() {
        let guard = NavigationGuard::new(policy(&["example.com"]));
        assert!(!guard.check("https://example.com/").is_blocked());
        let mark = guard.mark();
        assert!(guard.check("https://evil.test/").is_blocked());
        let since = guard.blocked_since(mark);
        assert_eq!(since.len(), 1);
        assert_eq!(since[0].url, "https://evil.test/");
        assert!(since[0].reason.contains("evil.test"), "{}", since[0].reason);
        assert!(guard.blocked_since(guard.mark()).is_empty());
    }

    #[test]
    fn each_tab_has_its_own_log_and_popups_log_into_their_opener() {
        let registry = GuardRegistry::new(policy(&["example.com"]));
        let first = registry.for_tab("tab-1");
        let second = registry.for_tab("tab-2");
        first.check_in("https://evil.test/a", Some("tab-1"), None);
        assert_eq!(first.blocked_since(0).len(), 1);
        assert!(second.blocked_since(0).is_empty(), "tab 2 saw nothing");
        // A popup opened by tab 1 is looked up through its opener.
        registry.register("popup-1", &first);
        registry
            .of("popup-1")
            .check_in("https://evil.test/b", Some("popup-1"), Some("tab-1"));
        let logged = first.blocked_since(0);
        assert_eq!(logged.len(), 2);
        assert!(logged[1].concerns("tab-1"), "the opener is concerned");
        assert!(!logged[1].concerns("tab-2"));
        assert!(registry.is_tab("tab-2"));
        drop(second);
        assert!(!registry.is_tab("tab-2"), "a dropped tab is forgotten");
    }

    #[test]
    fn the_log_keeps_the_latest_refusals_only() {
        let guard = NavigationGuard::new(policy(&["example.com"]));
        for n in 0..(LOG_LIMIT + 5) {
            guard.check(&format!("https://evil.test/{n}"));
        }
        let all = guard.blocked_since(0);
        assert_eq!(all.len(), LOG_LIMIT);
        assert_eq!(all[0].url, "https://evil.test/5");
        assert_eq!(guard.mark(), (LOG_LIMIT + 5) as u64);
    }

    #[test]
    fn globs_backtrack() {
        assert!(glob_match("a*b*c", "axxbyyc"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("a*b", "ac"));
        assert!(glob_match("*.x.com", "a.b.x.com"));
    }
}
