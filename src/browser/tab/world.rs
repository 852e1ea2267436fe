//! The tab's isolated world: where webagent's scripts run in the page,
//! out of the page's own scripts' reach. It follows the worlds Chromium
//! announces for new documents, creates one when none is known, and
//! evaluates in it, starting over when the document changed under a call.

use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::CreateIsolatedWorldParams;
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::Page;
use tokio::task::JoinHandle;

use super::{Tab, World};
use crate::browser::error::BrowserError;
use crate::browser::frames::{evaluate_in_world, send_to_world, WorldChannel};
use crate::browser::scripts::OBSERVER_JS;

/// The isolated world's name (shows in DevTools' context list).
pub(crate) const WORLD_NAME: &str = "webagent";

impl World {
    /// Sends `params` to this world, by its system-wide id when known.
    pub(super) fn aim(&self, params: &mut EvaluateParams) {
        match &self.unique {
            Some(unique) => {
                params.context_id = None;
                params.unique_context_id = Some(unique.clone());
            }
            None => params.context_id = Some(self.id),
        }
    }
}

/// Follows the contexts Chromium creates in the tab's main frame and keeps
/// the id of webagent's world in the newest document. The observer goes
/// into every new document's world as it starts (see [`Tab::wrap`]), so
/// the first observation after a navigation can use that world at once
/// instead of asking for it with `Page.createIsolatedWorld`, a call that
/// waits behind the renderer's work after the load (tens of milliseconds
/// on a big page).
pub(super) async fn watch_worlds(
    page: &Page,
    announced: Arc<std::sync::Mutex<Option<World>>>,
    announcements: Arc<tokio::sync::Notify>,
) -> Option<JoinHandle<()>> {
    use chromiumoxide::cdp::js_protocol::runtime::EventExecutionContextCreated;
    use futures_util::StreamExt;
    let mut created = match page.event_listener::<EventExecutionContextCreated>().await {
        Ok(created) => created,
        Err(error) => {
            tracing::debug!(%error, "no context events; worlds are asked for");
            return None;
        }
    };
    // A tab's main frame has the id of its target.
    let main_frame = page.target_id().inner().clone();
    Some(tokio::spawn(async move {
        while let Some(event) = created.next().await {
            let context = &event.context;
            let frame = context
                .aux_data
                .as_ref()
                .and_then(|a| a.get("frameId"))
                .and_then(|f| f.as_str());
            if context.name == WORLD_NAME && frame == Some(main_frame.as_str()) {
                if let Ok(mut slot) = announced.lock() {
                    *slot = Some(World {
                        id: context.id,
                        unique: Some(context.unique_id.clone()).filter(|u| !u.is_empty()),
                    });
                }
                announcements.notify_waiters();
            }
        }
    }))
}

/// The result of one evaluation in the isolated world.
pub(super) enum Evaluated {
    Value(serde_json::Value),
    /// The world's context no longer exists (the document changed).
    ContextGone,
}

/// The tab's own world is reached over its page.
impl WorldChannel for Tab {
    async fn send_evaluation(
        &self,
        params: EvaluateParams,
        what: &str,
        limit: Duration,
    ) -> Result<chromiumoxide::cdp::js_protocol::runtime::EvaluateReturns, BrowserError> {
        self.with_timeout(what, limit, self.page.execute(params))
            .await
            .map(|resp| resp.result)
    }
}

impl Tab {
    async fn create_world(&self) -> Result<Option<World>, BrowserError> {
        let limit = self.ctx.call_timeout;
        let frame = self
            .with_timeout("finding the main frame", limit, self.page.mainframe())
            .await?
            .ok_or_else(|| BrowserError::Script("the tab has no main frame yet".into()))?;
        let params = CreateIsolatedWorldParams::builder()
            .frame_id(frame)
            .world_name(WORLD_NAME)
            .grant_univeral_access(false)
            .build()
            .map_err(BrowserError::Script)?;
        let created = self
            .with_timeout(
                "creating the isolated world",
                limit,
                self.page.execute(params),
            )
            .await?;
        let world = World {
            id: created.result.execution_context_id,
            unique: None,
        };
        match self
            .evaluate_in(&world, OBSERVER_JS, "installing the observer", limit)
            .await?
        {
            Evaluated::Value(_) => Ok(Some(world)),
            // The page navigated while the observer was being installed.
            Evaluated::ContextGone => Ok(None),
        }
    }

    pub(super) async fn evaluate_in(
        &self,
        world: &World,
        expression: &str,
        what: &str,
        limit: Duration,
    ) -> Result<Evaluated, BrowserError> {
        let mut params = evaluate_in_world(expression, world.id);
        world.aim(&mut params);
        Ok(match send_to_world(self, params, what, limit).await? {
            Some(value) => Evaluated::Value(value),
            None => Evaluated::ContextGone,
        })
    }

    /// Evaluates `expression` in the isolated world of the current document
    /// (creating it when the document changed). `fresh_world` is true when
    /// the world had to be created for this call.
    pub(super) async fn world_eval(
        &self,
        expression: &str,
        what: &str,
        limit: Duration,
    ) -> Result<(serde_json::Value, bool), BrowserError> {
        let mut world = self.world.lock().await;
        let mut fresh = false;
        for _attempt in 0..3 {
            // A world announced since the held one was taken is the newest
            // document's, created as it started with the observer in it;
            // the held one belongs to a page that is gone.
            let newer = self.announced.lock().ok().and_then(|mut a| a.take());
            let adopted = newer.is_some();
            if let Some(newer) = newer {
                fresh |= world.as_ref() != Some(&newer);
                *world = Some(newer);
            }
            let current = match world.as_ref() {
                Some(current) => current.clone(),
                None => {
                    let Some(created) = self.create_world().await? else {
                        continue;
                    };
                    fresh = true;
                    *world = Some(created.clone());
                    created
                }
            };
            let evaluated = match self.evaluate_in(&current, expression, what, limit).await {
                Err(BrowserError::Script(message)) if adopted => {
                    // A world Chromium made for another reason (or before
                    // the observer's script was registered) lacks the
                    // observer: install it and ask again.
                    let probe = "typeof globalThis.__webagentObserver";
                    let missing = matches!(
                        self.evaluate_in(&current, probe, what, limit).await?,
                        Evaluated::Value(kind) if kind == "undefined"
                    );
                    if !missing {
                        return Err(BrowserError::Script(message));
                    }
                    match self
                        .evaluate_in(&current, OBSERVER_JS, "installing the observer", limit)
                        .await?
                    {
                        Evaluated::Value(_) => {
                            self.evaluate_in(&current, expression, what, limit).await?
                        }
                        gone => gone,
                    }
                }
                other => other?,
            };
            match evaluated {
                Evaluated::Value(v) => return Ok((v, fresh)),
                Evaluated::ContextGone => *world = None,
            }
        }
        Err(BrowserError::Script(format!(
            "{what}: the page kept navigating; try again once it settles"
        )))
    }

    /// Evaluates a JavaScript expression in webagent's isolated world of the
    /// current document and returns its JSON value.
    pub async fn eval(&self, expression: &str) -> Result<serde_json::Value, BrowserError> {
        Ok(self
            .world_eval(expression, "evaluating script", self.ctx.call_timeout)
            .await?
            .0)
    }
}
