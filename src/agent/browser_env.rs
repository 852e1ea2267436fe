//! The agent's [`Environment`] on a real browser tab: observations from
//! [`Tab::observe`], actions through the browser executor, and risk facts
//! read from the page itself.

use std::sync::{Arc, RwLock};

use serde_json::json;

use crate::actions::{Action, ActionResult, RiskFacts, Target, TargetFacts};
use crate::browser::act::{ExecOptions, Executor};
use crate::browser::{BrowserError, ObserveOptions, Tab};
use crate::dom::{ElementIndex, PageState};
use crate::sitemap::SitemapSet;

use super::{listing_risk_facts, Environment, EnvironmentError};

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

/// One tab driven by the agent.
#[derive(Debug)]
pub struct BrowserEnvironment {
    tab: Tab,
    exec: ExecOptions,
    observe: ObserveOptions,
    sitemaps: Arc<RwLock<SitemapSet>>,
    last: Option<PageState>,
}

impl BrowserEnvironment {
    /// Drives `tab`; `goto_page` searches `sitemaps` as they are at each
    /// step (a watcher may replace them in between).
    pub fn new(tab: Tab, exec: ExecOptions, sitemaps: Arc<RwLock<SitemapSet>>) -> Self {
        BrowserEnvironment {
            tab,
            exec,
            observe: ObserveOptions::default(),
            sitemaps,
            last: None,
        }
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

    fn sitemap_snapshot(&self) -> SitemapSet {
        match self.sitemaps.read() {
            Ok(set) => set.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

fn environment_error(error: BrowserError) -> EnvironmentError {
    let fatal = matches!(error, BrowserError::Disconnected(_));
    EnvironmentError {
        message: error.to_string(),
        fatal,
    }
}

impl Environment for BrowserEnvironment {
    async fn observe(&mut self) -> Result<PageState, EnvironmentError> {
        let state = self
            .tab
            .observe(&self.observe)
            .await
            .map_err(environment_error)?;
        self.last = Some(state.clone());
        Ok(state)
    }

    async fn execute(&mut self, action: &Action) -> ActionResult {
        let sitemaps = self.sitemap_snapshot();
        Executor::new(&self.tab, self.exec.clone())
            .with_sitemaps(&sitemaps)
            .execute(action, self.last.as_ref())
            .await
    }

    async fn current_url(&mut self) -> Option<String> {
        match self.tab.url().await {
            Ok(url) => Some(url),
            Err(error) => {
                tracing::debug!(%error, "reading the tab's URL");
                None
            }
        }
    }

    async fn risk_facts(&mut self, action: &Action, page: &PageState) -> RiskFacts {
        let mut facts = listing_risk_facts(action, page);
        let reply = match action.target() {
            Some(Target::Index { index }) => {
                self.tab
                    .eval_on_index(
                        page.observation,
                        ElementIndex(*index as usize),
                        TARGET_FACTS_JS,
                        json!({}),
                    )
                    .await
            }
            Some(Target::Selector { selector }) => {
                let first = format!("(els) => els.length ? ({TARGET_FACTS_JS})(els[0]) : null");
                self.tab
                    .eval_on_selector(selector.as_str(), &first, json!({}))
                    .await
            }
            None => return facts,
        };
        match reply {
            Ok(value) if value.is_object() => facts.target = Some(target_facts(&value)),
            Ok(_) => {}
            // The element may be gone; the executor will say so. The risk
            // stays what the listing shows.
            Err(error) => tracing::debug!(%error, "reading the target's risk facts"),
        }
        facts
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
