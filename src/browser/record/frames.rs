//! Frames of another origin inside a recorded tab. Chromium runs each in a
//! process of its own, as a target of its own, which the tab's binding and
//! new-document script do not reach. Each such frame gets a session of its
//! own (see [`crate::browser::frames`]) with the binding and the recorder.
//!
//! What the recorder in a frame reports names its element from the frame's
//! own document, so two facts are put right before it becomes a step: the
//! CSS path gets the way in front (the `<iframe>`'s path from the tab's top
//! document, across each frame between, joined with `>>>` as an action's
//! selector enters a frame), and the address is the tab's, which is where
//! a replay checks it is. The other locators (test id, role and name,
//! label, …) stay as they are: a replay looks for them in every frame.

use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::dom::{
    BackendNodeId, GetFrameOwnerParams, ResolveNodeParams,
};
use chromiumoxide::cdp::browser_protocol::page::{
    CreateIsolatedWorldParams, FrameId, GetFrameTreeParams,
};
use chromiumoxide::cdp::browser_protocol::target::{GetTargetsParams, TargetInfo};
use chromiumoxide::cdp::js_protocol::runtime::{
    CallArgument, CallFunctionOnParams, EnableParams, EvaluateParams, ReleaseObjectParams,
};
use chromiumoxide::{Browser, Page};
use serde_json::{json, Value};
use tokio::sync::{mpsc, Mutex};

use super::{Input, Tasks, BINDING};
use crate::browser::error::BrowserError;
use crate::browser::frames::{CdpTarget, FrameHub, FrameSession};
use crate::browser::scripts::LOCATE_JS;
use crate::browser::tab::WORLD_NAME;

/// The frames of another origin the recorder follows, in every recorded
/// tab; their sessions detach when this goes.
pub(super) struct FarFrames {
    hub: Arc<FrameHub>,
    frames: Mutex<Vec<FarFrame>>,
    limit: Duration,
}

/// One followed frame.
struct FarFrame {
    session: FrameSession,
    /// The tab it is in.
    page: Page,
    /// The way to its `<iframe>` from the tab's top document (`None` when
    /// it could not be read: its steps then keep no CSS path).
    path: Option<String>,
}

/// The document that holds a frame's `<iframe>`.
enum Holder<'a> {
    /// A recorded tab's own (or a frame of its process).
    Tab(&'a Page),
    /// A followed frame's.
    Frame(&'a FarFrame),
}

impl FarFrames {
    /// Starts following frames of another origin; none is followed yet.
    pub async fn start(browser: &Arc<Browser>, limit: Duration) -> Result<FarFrames, BrowserError> {
        Ok(FarFrames {
            hub: FrameHub::start(browser).await?,
            frames: Mutex::new(Vec::new()),
            limit,
        })
    }

    /// Follows the frames of another origin open now in `pages`, a frame
    /// inside another once that one is followed.
    pub async fn adopt_open(
        &self,
        browser: &Browser,
        pages: &[Page],
        sender: &mpsc::UnboundedSender<Input>,
        tasks: &Tasks,
    ) {
        let targets = match browser.execute(GetTargetsParams::default()).await {
            Ok(answer) => answer.result.target_infos,
            Err(error) => {
                tracing::debug!(%error, "listing the browser's frames");
                return;
            }
        };
        let mut left: Vec<TargetInfo> = targets
            .into_iter()
            .filter(|t| t.r#type == "iframe")
            .collect();
        while !left.is_empty() {
            let before = left.len();
            let mut rest = Vec::new();
            for target in left {
                if !self.adopt(&target, pages, sender, tasks).await {
                    rest.push(target);
                }
            }
            if rest.len() == before {
                break;
            }
            left = rest;
        }
    }

    /// Follows the frame target `target` when its `<iframe>` is in one of
    /// `pages` or in a frame already followed; whether it is followed now.
    pub async fn adopt(
        &self,
        target: &TargetInfo,
        pages: &[Page],
        sender: &mpsc::UnboundedSender<Input>,
        tasks: &Tasks,
    ) -> bool {
        let frame_id = target.target_id.inner().clone();
        let mut frames = self.frames.lock().await;
        if frames.iter().any(|f| f.session.target_id() == frame_id) {
            return true;
        }
        let owner = GetFrameOwnerParams::new(FrameId::from(frame_id.clone()));
        let mut holder = None;
        for page in pages {
            if let Ok(found) = page
                .run(owner.clone(), "finding a frame's element", self.limit)
                .await
            {
                holder = Some((Holder::Tab(page), found.backend_node_id));
                break;
            }
        }
        if holder.is_none() {
            for frame in frames.iter() {
                let asked =
                    frame
                        .session
                        .run(owner.clone(), "finding a frame's element", self.limit);
                if let Ok(found) = asked.await {
                    holder = Some((Holder::Frame(frame), found.backend_node_id));
                    break;
                }
            }
        }
        let Some((holder, element)) = holder else {
            return false;
        };
        let path = match &holder {
            Holder::Tab(page) => css_of(*page, &element, self.limit).await,
            Holder::Frame(frame) => match (
                &frame.path,
                css_of(&frame.session, &element, self.limit).await,
            ) {
                (Some(outer), Some(inner)) => Some(format!("{outer} >>> {inner}")),
                _ => None,
            },
        };
        let page = match holder {
            Holder::Tab(page) => page.clone(),
            Holder::Frame(frame) => frame.page.clone(),
        };
        let session = match self.hub.attach(&frame_id, self.limit).await {
            Ok(session) => session,
            Err(error) => {
                tracing::debug!(%error, "a frame of another origin is not recorded");
                return false;
            }
        };
        let events = session.events();
        if let Err(error) = install(&session, self.limit).await {
            tracing::debug!(%error, "a frame of another origin is not recorded");
            return false;
        }
        let reported = reports(events, page.clone(), path.clone(), sender.clone());
        tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(tokio::spawn(reported));
        frames.push(FarFrame {
            session,
            page,
            path,
        });
        true
    }

    /// Has each followed frame send the fill of a field still being typed
    /// into.
    pub async fn flush(&self) {
        let frames = self.frames.lock().await;
        for frame in frames.iter() {
            let session = &frame.session;
            let Ok(world) = session
                .run(
                    isolated_world(frame.session.target_id()),
                    "flushing a frame",
                    self.limit,
                )
                .await
            else {
                continue;
            };
            let mut flush = EvaluateParams::new(
                "globalThis.__webagentRecorderFlush && globalThis.__webagentRecorderFlush()",
            );
            flush.context_id = Some(world.execution_context_id);
            let _ = session.run(flush, "flushing a frame", self.limit).await;
        }
    }
}

/// Webagent's world in `frame`: created, or the one already there.
fn isolated_world(frame: &str) -> CreateIsolatedWorldParams {
    let mut world = CreateIsolatedWorldParams::new(FrameId::from(frame.to_string()));
    world.world_name = Some(WORLD_NAME.to_string());
    world
}

/// Gives `session` the binding and the recorder, for its documents to come
/// and those open now.
async fn install(session: &FrameSession, limit: Duration) -> Result<(), BrowserError> {
    // The binding's calls are events of the runtime domain.
    session
        .run(EnableParams::default(), "following a frame", limit)
        .await?;
    super::register(session, limit).await?;
    super::install_in_open_documents(session, limit).await
}

/// The CSS path, from its own document's top, of the element
/// `element` of `target` (an `<iframe>`), read by `locate.js` in webagent's
/// world; `None` when it cannot be read.
async fn css_of(
    target: &impl CdpTarget,
    element: &BackendNodeId,
    limit: Duration,
) -> Option<String> {
    let tree = target
        .run(GetFrameTreeParams::default(), "reading frames", limit)
        .await
        .ok()?;
    let mut frames = Vec::new();
    super::collect_frames(&tree.frame_tree, &mut frames);
    // The element's own document is one of them, most often the first.
    for frame in frames {
        let Ok(world) = target
            .run(
                isolated_world(frame.inner()),
                "reading a frame's element",
                limit,
            )
            .await
        else {
            continue;
        };
        let resolve = ResolveNodeParams::builder()
            .backend_node_id(*element)
            .execution_context_id(world.execution_context_id)
            .build();
        let Ok(resolved) = target
            .run(resolve, "reading a frame's element", limit)
            .await
        else {
            continue;
        };
        let Some(object) = resolved.object.object_id else {
            continue;
        };
        let mut read = CallFunctionOnParams::new(format!(
            "function (args) {{ return ({LOCATE_JS})(this, args); }}"
        ));
        read.object_id = Some(object.clone());
        read.arguments = Some(vec![CallArgument::builder()
            .value(json!({"record": true}))
            .build()]);
        read.return_by_value = Some(true);
        read.silent = Some(true);
        let facts = target.run(read, "reading a frame's element", limit).await;
        let _ = target
            .run(
                ReleaseObjectParams::new(object),
                "releasing a handle",
                limit,
            )
            .await;
        let css = facts.ok()?.result.value?.get("css")?.as_str()?.to_string();
        return Some(css);
    }
    None
}

/// Sends what the recorder in one frame reports, put right for the tab
/// it is in (see the module's text), until the frame goes.
async fn reports(
    mut events: mpsc::UnboundedReceiver<Value>,
    page: Page,
    path: Option<String>,
    sender: mpsc::UnboundedSender<Input>,
) {
    while let Some(event) = events.recv().await {
        if event.get("method").and_then(Value::as_str) != Some("Runtime.bindingCalled") {
            continue;
        }
        let params = &event["params"];
        if params.get("name").and_then(Value::as_str) != Some(BINDING) {
            continue;
        }
        let payload = params
            .get("payload")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let Some(mut input) = Input::from_payload(payload) else {
            tracing::debug!(%payload, "not a recorded input");
            continue;
        };
        let url = page.url().await.ok().flatten().unwrap_or_default();
        input.place_in_frame(path.as_deref(), &url);
        if sender.send(input).is_err() {
            return;
        }
    }
}
