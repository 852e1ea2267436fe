//! Observing the page: the walk in the isolated world (or the first look
//! that already took it), the cross-origin frames merged in, the session's
//! tabs listed beside it, and a bare DOM snapshot to compare with.

use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::dom_snapshot::CaptureSnapshotParams;
use chromiumoxide::cdp::browser_protocol::target::GetTargetsParams;

use super::options::{observer_options, ObserveOptions};
use super::Tab;
use crate::browser::error::BrowserError;
use crate::dom::{PageState, RawObservation, TabInfo};

impl Tab {
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

    /// The open tabs, this one marked.
    pub async fn open_tabs(&self) -> Result<Vec<TabInfo>, BrowserError> {
        self.list_tabs()
            .await
            .ok_or_else(|| BrowserError::Script("the tabs could not be listed".into()))
    }

    /// The open tabs, with this one marked; `None` when they could not be
    /// listed, which is not worth failing an observation for. Asked of the
    /// browser, so a tab that closed still finds the others.
    pub(super) async fn list_tabs(&self) -> Option<Vec<TabInfo>> {
        let me = self.page.target_id().inner().clone();
        let browser = self.ctx.browser.upgrade()?;
        let listed = self
            .browser_call(
                "listing tabs",
                self.ctx.call_timeout,
                browser.execute(GetTargetsParams::default()),
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
}
