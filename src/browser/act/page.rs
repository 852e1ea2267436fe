//! The executor's page-level actions: navigation and history, waiting,
//! sitemap pages, screenshots and the opt-in JavaScript escape hatch.
//! Element actions live in the parent module.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::page::{
    GetNavigationHistoryParams, NavigateParams, NavigateToHistoryEntryParams, ReloadParams,
};
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::page::ScreenshotParams;
use serde_json::{json, Value};

use super::error::ActError;
use super::replies::strip_ok;
use super::settle::{self, SettleOptions, Settled};
use super::{unique, Executor};
use crate::actions::{resolve_url, ActionResult, FailureReason, WaitCondition};
use crate::browser::error::BrowserError;

/// How long a navigation's answer waits for its first look before asking
/// whether the new document's world was announced at all: a document our
/// scripts never reached (an error page, a download) gives no look.
const FIRST_LOOK_GRACE: Duration = Duration::from_millis(100);

impl Executor<'_> {
    pub(super) async fn wait_for(
        &self,
        condition: &WaitCondition,
        timeout_ms: u64,
    ) -> Result<ActionResult, ActError> {
        let started = Instant::now();
        let deadline = started + Duration::from_millis(timeout_ms);
        let (args, what) = match condition {
            WaitCondition::Selector { selector } => (
                json!({"selector": selector.as_str()}),
                format!("an element matching `{selector}`"),
            ),
            WaitCondition::Text { text } => (json!({"text": text}), format!("the text {text:?}")),
        };
        let mut pause = Duration::from_millis(25);
        loop {
            match self.helper("present", args.clone()).await {
                Ok(reply) if reply.get("found").and_then(Value::as_bool) == Some(true) => {
                    let mut data = strip_ok(reply);
                    if let Value::Object(map) = &mut data {
                        map.remove("found");
                        map.insert(
                            "waited_ms".into(),
                            json!(started.elapsed().as_millis() as u64),
                        );
                    }
                    return Ok(ActionResult::ok_with(data));
                }
                Ok(_) => {}
                // A navigation while waiting replaces the world; look again.
                Err(ActError::Browser(err)) => tracing::debug!(%err, "wait_for check failed"),
                Err(other) => return Err(other),
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(ActionResult::timeout(format!(
                    "{what} did not appear within {timeout_ms} ms"
                )));
            }
            tokio::time::sleep(pause.min(deadline - now)).await;
            pause = (pause * 2).min(Duration::from_millis(100));
        }
    }

    pub(super) async fn navigate(&self, url: &str) -> Result<ActionResult, ActError> {
        let current = self.tab.url().await.ok();
        let url = match resolve_url(current.as_deref(), url) {
            Ok(url) => url,
            Err(err) => return Ok(err.to_result()),
        };
        self.load(&url).await
    }

    /// Navigates with `Page.navigate` and waits through [`settle`] rather
    /// than the tab's own load wait, which never ends for a same-document
    /// navigation (`#section`).
    pub(super) async fn load(&self, url: &str) -> Result<ActionResult, ActError> {
        // Checked before sending: URLs that never reach the network
        // (`data:`, `javascript:`) are not seen by the interception.
        if let Err(err) = self.tab.check_navigation(url) {
            return Ok(ActionResult::blocked(err.to_string()));
        }
        let mut watch = settle::NavWatch::start(self.tab).await;
        let current = self.tab.url().await.unwrap_or_default();
        if same_document(&current, url) {
            // chromiumoxide answers Page.navigate only once a new document
            // loads, which a fragment change never does; let the page's own
            // location move instead.
            let target = Value::String(url.to_string());
            self.tab
                .eval(&format!("(location.href = {target}, true)"))
                .await?;
            let settled = watch.settle(self.tab, &self.options.settle).await;
            return self.finish_navigation(settled, url).await;
        }
        let sending = Instant::now();
        let (sent, looked) = self.send_navigation(url).await;
        let settling = Instant::now();
        let answer = match sent {
            Ok(answer) => answer,
            Err(err) => {
                let reason = match err {
                    BrowserError::Timeout { .. } => FailureReason::Timeout,
                    BrowserError::Disconnected(_) => FailureReason::Unknown,
                    _ => FailureReason::Navigation,
                };
                return Ok(ActionResult::fail(
                    reason,
                    format!("could not load {url}: {err}"),
                ));
            }
        };
        if let Some(error) = &answer.error_text {
            return Ok(ActionResult::navigation(format!(
                "could not load {url}: {error}"
            )));
        }
        if answer.loader_id.is_some() {
            // A new document is on its way even if its first event has not
            // arrived yet.
            watch.expect_navigation();
        }
        let at_load = if looked {
            watch.settled_at_load(settling)
        } else {
            None
        };
        let settled = match at_load {
            Some(settled) => settled,
            None => {
                // Requests still running may change the page: look again
                // once it settles.
                self.tab.expect_first_look_unused();
                // The load may have been waited for already (for the look):
                // the navigation's time counts from its start.
                let mut opts = self.nav_settle();
                opts.navigation = opts.navigation.saturating_sub(sending.elapsed());
                watch.settle(self.tab, &opts).await
            }
        };
        self.finish_navigation(settled, url).await
    }

    /// `Page.navigate`, with the new document's first look beside it when
    /// the executor takes one (see Tab::first_look); true when it did.
    async fn send_navigation(
        &self,
        url: &str,
    ) -> (
        Result<chromiumoxide::cdp::browser_protocol::page::NavigateReturns, BrowserError>,
        bool,
    ) {
        let what = format!("loading {url}");
        let navigation = async {
            self.tab
                .with_timeout(
                    &what,
                    self.options.navigation_timeout,
                    self.tab.page().execute(NavigateParams::new(url)),
                )
                .await
                .map(|answer| answer.result)
        };
        let Some(opts) = &self.options.first_look else {
            return (navigation.await, false);
        };
        self.tab.expect_new_document();
        // On the heap: the two futures side by side would make every
        // navigation's future (and the stacks of the recipe host and
        // scripts that wait on it) larger.
        let mut navigation = Box::pin(navigation);
        let mut look = Box::pin(self.tab.first_look(opts));
        let mut looked = None;
        let sent = loop {
            tokio::select! {
                sent = &mut navigation => break sent,
                done = &mut look, if looked.is_none() => looked = Some(done),
            }
        };
        // The navigation is answered at the new document's load event and
        // the look after the load listeners, in the same task, so a long
        // look answers later; a navigation that brought no document (a
        // download, an error) gives none.
        let brought_document = matches!(&sent, Ok(answer)
            if answer.error_text.is_none() && answer.loader_id.is_some());
        let looked = match looked {
            Some(done) => done,
            None if brought_document => {
                match tokio::time::timeout(FIRST_LOOK_GRACE, &mut look).await {
                    Ok(done) => done,
                    // The document's world was announced, so the look will
                    // be answered: at its load, or as gone if the document
                    // is replaced. A page that never loads keeps it until
                    // the navigation's time is up, as settling would.
                    Err(_) if self.tab.world_announced() => {
                        let left = self
                            .options
                            .navigation_timeout
                            .saturating_sub(FIRST_LOOK_GRACE);
                        tokio::time::timeout(left, look).await.unwrap_or(false)
                    }
                    // Our scripts never reached a document: no look comes.
                    Err(_) => false,
                }
            }
            None => false,
        };
        (sent, looked)
    }

    /// Success after a navigation, or `timeout` when the new page did not
    /// finish loading in time.
    pub(super) async fn finish_navigation(
        &self,
        settled: Settled,
        url: &str,
    ) -> Result<ActionResult, ActError> {
        if settled.load_timed_out {
            return Ok(ActionResult::timeout(format!(
                "{url} did not finish loading within {:.0} s",
                self.options.navigation_timeout.as_secs_f64()
            )));
        }
        self.finish(&json!({}), json!({}), settled).await
    }

    pub(super) async fn history(&self, delta: i64) -> Result<ActionResult, ActError> {
        let limit = self.tab.call_timeout();
        let history = self
            .tab
            .with_timeout(
                "reading the history",
                limit,
                self.tab
                    .page()
                    .execute(GetNavigationHistoryParams::default()),
            )
            .await?;
        let wanted = history.result.current_index + delta;
        let entry = usize::try_from(wanted)
            .ok()
            .and_then(|i| history.result.entries.get(i));
        let Some(entry) = entry else {
            let word = if delta < 0 { "earlier" } else { "later" };
            return Ok(ActionResult::navigation(format!(
                "there is no {word} page in this tab's history"
            )));
        };
        let mut watch = settle::NavWatch::start(self.tab).await;
        self.tab
            .with_timeout(
                "moving through history",
                limit,
                self.tab
                    .page()
                    .execute(NavigateToHistoryEntryParams::new(entry.id)),
            )
            .await?;
        let settled = watch.settle(self.tab, &self.nav_settle()).await;
        self.finish_navigation(settled, &entry.url).await
    }

    pub(super) async fn reload(&self) -> Result<ActionResult, ActError> {
        let mut watch = settle::NavWatch::start(self.tab).await;
        self.tab
            .with_timeout(
                "reloading",
                self.tab.call_timeout(),
                self.tab.page().execute(ReloadParams::default()),
            )
            .await?;
        watch.expect_navigation();
        let settled = watch.settle(self.tab, &self.nav_settle()).await;
        let url = self.tab.url().await.unwrap_or_default();
        self.finish_navigation(settled, &url).await
    }

    pub(super) fn nav_settle(&self) -> SettleOptions {
        SettleOptions {
            navigation: self.options.navigation_timeout,
            ..self.options.settle.clone()
        }
    }

    pub(super) async fn goto_page(&self, name: &str) -> Result<ActionResult, ActError> {
        let Some(set) = self.sitemaps.filter(|s| !s.is_empty()) else {
            return Ok(ActionResult::not_found(
                "goto_page needs a sitemap and none is loaded; use navigate with a URL or path",
            ));
        };
        let current = self.tab.url().await.ok();
        let sitemap = current
            .as_deref()
            .and_then(|u| set.for_url(u))
            .or_else(|| set.iter().next());
        let Some(sitemap) = sitemap else {
            return Ok(ActionResult::not_found("no sitemap is loaded"));
        };
        let Some(found) = sitemap.search(name, 1).into_iter().next() else {
            return Ok(ActionResult::not_found(format!(
                "no page in the sitemap matches {name:?}"
            )));
        };
        if found.path.split('/').any(|s| s.starts_with(':')) {
            return Ok(ActionResult::invalid_params(format!(
                "goto_page.name: the best match, {} ({}), needs parameters; navigate to the full path instead",
                found.path, found.title
            )));
        }
        let base = sitemap
            .origin()
            .map(str::to_string)
            .or_else(|| current.as_deref().and_then(crate::actions::origin_of));
        let url = match base {
            Some(origin) => format!("{}{}", origin.trim_end_matches('/'), found.path),
            None => {
                return Ok(ActionResult::invalid_params(format!(
                    "goto_page.name: found {} but neither the sitemap nor the current page gives an origin",
                    found.path
                )))
            }
        };
        let mut result = self.load(&url).await?;
        if let ActionResult::Success {
            data: Some(Value::Object(map)),
        } = &mut result
        {
            map.insert(
                "page".into(),
                json!({"path": found.path, "title": found.title}),
            );
        }
        Ok(result)
    }

    pub(super) async fn screenshot(
        &self,
        path: Option<&str>,
        full_page: bool,
    ) -> Result<ActionResult, ActError> {
        let file = match path {
            Some(p) => PathBuf::from(p),
            None => self
                .options
                .screenshot_dir
                .join(format!("screenshot-{}.png", unique())),
        };
        let params = ScreenshotParams::builder().full_page(full_page).build();
        let png = self
            .tab
            .with_timeout(
                "taking a screenshot",
                self.options.navigation_timeout,
                self.tab.page().screenshot(params),
            )
            .await?;
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| ActError::File {
                what: "creating the directory for",
                path: file.clone(),
                source,
            })?;
        }
        std::fs::write(&file, &png).map_err(|source| ActError::File {
            what: "writing",
            path: file.clone(),
            source,
        })?;
        Ok(ActionResult::ok_with(json!({
            "path": file.to_string_lossy(),
            "bytes": png.len(),
            "full_page": full_page,
        })))
    }

    /// Asks the model for data from the page's text, through a forced tool
    /// whose parameters are the wanted schema, so the answer is JSON of that
    /// shape rather than prose.
    pub(super) async fn execute_javascript(&self, script: &str) -> Result<ActionResult, ActError> {
        if !self.options.allow_javascript {
            return Ok(ActionResult::blocked(
                "execute_javascript is off; enable it in the config or with --allow-javascript",
            ));
        }
        let mut watch = settle::NavWatch::start(self.tab).await;
        let mut params = EvaluateParams::new(script);
        params.await_promise = Some(true);
        params.return_by_value = Some(true);
        params.user_gesture = Some(true);
        let evaluated = self
            .tab
            .with_timeout(
                "running the script",
                self.options.action_timeout,
                self.tab.page().execute(params),
            )
            .await?;
        if let Some(ex) = &evaluated.result.exception_details {
            let message = ex
                .exception
                .as_ref()
                .and_then(|e| e.description.clone())
                .unwrap_or_else(|| ex.text.clone());
            return Ok(ActionResult::unknown(format!(
                "the script threw: {message}"
            )));
        }
        let value = evaluated.result.result.value.clone().unwrap_or(Value::Null);
        let settled = watch.settle(self.tab, &self.options.settle).await;
        self.finish(&json!({}), json!({"value": value}), settled)
            .await
    }
}

/// Whether going from `current` to `next` only changes the fragment.
pub(super) fn same_document(current: &str, next: &str) -> bool {
    match (url::Url::parse(current), url::Url::parse(next)) {
        (Ok(mut a), Ok(mut b)) if b.fragment().is_some() => {
            a.set_fragment(None);
            b.set_fragment(None);
            a == b
        }
        _ => false,
    }
}
