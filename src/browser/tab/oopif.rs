//! The tab's side of cross-origin frames (see [`crate::browser::frames`]):
//! listing their elements under their `<iframe>` and reaching them again
//! by index.
//!
//! An observation that finds no cross-origin frame costs nothing more.
//! When it finds some, each is observed in its own world with the part of
//! it the top page shows, and its elements are spliced into the listing
//! right after the `<iframe>`, one level deeper; every index of the merged
//! listing then routes to a world and that world's own index.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::dom::{
    DescribeNodeParams, GetDocumentParams, QuerySelectorParams, SetFileInputFilesParams,
};
use chromiumoxide::cdp::js_protocol::runtime::{EvaluateParams, ReleaseObjectGroupParams};

use super::options::ObserveOptions;
use super::world::WORLD_NAME;
use super::Tab;
use crate::browser::error::BrowserError;
use crate::browser::frames::{FrameEval, FrameHub, FrameWorld, Frames, Layout, Owner, Route, Slot};
use crate::browser::scripts::{LOCATE_JS, OBSERVER_JS};
use crate::dom::{RawElement, RawObservation};

/// How deep cross-origin frames are followed (a frame in a frame in …).
const MAX_FRAME_DEPTH: usize = 4;

/// Where an `<iframe>`'s content starts, in its world's top coordinates.
const CONTENT_ORIGIN_JS: &str = "(el, a, h) => { const r = h.topRect(el); \
    const cs = getComputedStyle(el); \
    return [r.x + el.clientLeft + parseFloat(cs.paddingLeft || '0'), \
            r.y + el.clientTop + parseFloat(cs.paddingTop || '0')]; }";

/// The object group of the node handles taken while observing.
const HANDLES: &str = "webagent-frames";

/// The top page's geometry an observation of a frame is cut to, in
/// top-level viewport coordinates.
struct Geometry {
    full: bool,
    margin: f64,
    /// The viewport.
    view: [f64; 4],
    /// The viewport plus the margin.
    band: [f64; 4],
    text_limit: usize,
    listeners: bool,
    timeout: Duration,
}

/// The merged listing being built.
#[derive(Default)]
struct Merge {
    elements: Vec<RawElement>,
    routes: Vec<Route>,
    slots: Vec<Slot>,
    text: String,
}

/// A world the merge walks: the top (`None`) or a frame's slot.
type WorldAt = Option<(usize, Arc<FrameWorld>)>;

fn intersect(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    [
        a[0].max(b[0]),
        a[1].max(b[1]),
        a[2].min(b[2]),
        a[3].min(b[3]),
    ]
}

fn shifted(r: [f64; 4], (x, y): (f64, f64)) -> [f64; 4] {
    [r[0] - x, r[1] - y, r[2] - x, r[3] - y]
}

impl Tab {
    /// Adds the contents of the cross-origin frames `raw` found to it, and
    /// records where each index of the result points.
    pub(super) async fn observe_frames(
        &self,
        mut raw: RawObservation,
        opts: &ObserveOptions,
    ) -> RawObservation {
        let mut frames = self.frames.lock().await;
        if !raw.elements.iter().any(|e| e.frame_at.is_some()) {
            frames.layout = Layout {
                observation: raw.sequence,
                ..Layout::default()
            };
            frames.worlds.clear();
            return raw;
        }
        let (vw, vh) = (raw.scroll.viewport_width, raw.scroll.viewport_height);
        let margin = opts.margin_px.filter(|m| *m >= 0.0).unwrap_or(vh / 2.0);
        let geometry = Geometry {
            full: raw.full_page,
            margin,
            view: [0.0, 0.0, vw, vh],
            band: if raw.full_page {
                [f64::MIN, f64::MIN, f64::MAX, f64::MAX]
            } else {
                [-margin, -margin, vw + margin, vh + margin]
            },
            text_limit: opts.text_limit,
            listeners: opts.click_listeners,
            timeout: opts.timeout,
        };
        let mut merge = Merge::default();
        let elements = std::mem::take(&mut raw.elements);
        self.expand(
            &mut frames,
            &mut merge,
            None,
            raw.sequence,
            elements,
            (0.0, 0.0),
            0,
            None,
            &geometry,
        )
        .await;
        // Frames no longer on the page are let go (detached).
        let kept: std::collections::HashSet<String> = merge
            .slots
            .iter()
            .map(|s| s.world.session.target_id().to_string())
            .collect();
        frames.worlds.retain(|id, _| kept.contains(id));
        frames.layout = Layout {
            observation: raw.sequence,
            routes: merge.routes,
            slots: merge.slots,
        };
        raw.elements = merge.elements;
        if !merge.text.is_empty() {
            let room = raw.text_limit.saturating_sub(raw.text.chars().count());
            let extra: String = merge.text.chars().take(room).collect();
            if extra.chars().count() < merge.text.chars().count() {
                raw.text_clipped = true;
            }
            raw.text.push_str(&extra);
        }
        raw
    }

    /// Appends the elements of one world to the merge, each cross-origin
    /// `<iframe>` followed by its frame's elements.
    #[allow(clippy::too_many_arguments)]
    fn expand<'a>(
        &'a self,
        frames: &'a mut Frames,
        merge: &'a mut Merge,
        world: WorldAt,
        seq: u64,
        elements: Vec<RawElement>,
        origin: (f64, f64),
        base_depth: usize,
        owner: Option<usize>,
        geometry: &'a Geometry,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async move {
            let level = world
                .as_ref()
                .map_or(0, |(k, _)| depth_of(&merge.slots, *k));
            let mut globals = Vec::with_capacity(elements.len());
            for (local, mut e) in elements.into_iter().enumerate() {
                let global = merge.elements.len();
                globals.push(global);
                e.parent = e.parent.and_then(|p| globals.get(p).copied()).or(owner);
                e.frame = e.frame.and_then(|f| globals.get(f).copied()).or(owner);
                e.depth += base_depth;
                if world.is_some() {
                    // A frame's world numbers its elements on its own.
                    e.id = None;
                }
                let depth = e.depth;
                let at = e.frame_at.take();
                merge.elements.push(e);
                merge.routes.push(Route {
                    slot: world.as_ref().map(|(k, _)| *k),
                    local,
                });
                let Some(at) = at else { continue };
                if level >= MAX_FRAME_DEPTH {
                    continue;
                }
                let parent = world.as_ref().map(|(_, w)| Arc::clone(w));
                let observed = self
                    .observe_frame(frames, parent.as_deref(), seq, local, at, origin, geometry)
                    .await;
                let (child_world, child, child_origin) = match observed {
                    Ok(found) => found,
                    Err(error) => {
                        tracing::debug!(%error, "a cross-origin frame stays unlisted");
                        continue;
                    }
                };
                merge.elements[global].cross_origin = false;
                let slot = merge.slots.len();
                merge.slots.push(Slot {
                    world: Arc::clone(&child_world),
                    seq: child.sequence,
                    parent: world.as_ref().map(|(k, _)| *k),
                    owner: Owner::Index(local),
                });
                if !child.text.is_empty() {
                    merge.text.push('\n');
                    merge.text.push_str(&child.text);
                }
                self.expand(
                    frames,
                    merge,
                    Some((slot, child_world)),
                    child.sequence,
                    child.elements,
                    child_origin,
                    depth + 1,
                    Some(global),
                    geometry,
                )
                .await;
            }
        })
    }

    /// Observes the cross-origin frame of the `<iframe>` listed as `local`
    /// by `parent` (`None`: the top), cut to what the top page shows.
    #[allow(clippy::too_many_arguments)]
    async fn observe_frame(
        &self,
        frames: &mut Frames,
        parent: Option<&FrameWorld>,
        parent_seq: u64,
        local: usize,
        at: [f64; 6],
        parent_origin: (f64, f64),
        geometry: &Geometry,
    ) -> Result<(Arc<FrameWorld>, RawObservation, (f64, f64)), BrowserError> {
        let expression = format!("globalThis.__webagentObserver.element({parent_seq}, {local})");
        let frame_id = self.frame_id_of(parent, &expression).await?;
        let world = self.frame_world(frames, &frame_id).await?;
        let origin = (parent_origin.0 + at[0], parent_origin.1 + at[1]);
        let (px, py) = parent_origin;
        let shown = [at[2] + px, at[3] + py, at[4] + px, at[5] + py];
        let view = shifted(intersect(shown, geometry.view), origin);
        let band = shifted(intersect(shown, geometry.band), origin);
        let js_opts = serde_json::json!({
            "fullPage": geometry.full,
            "marginPx": geometry.margin,
            "textLimit": geometry.text_limit,
            "listeners": geometry.listeners,
            "view": view,
            "band": band,
        });
        let expression = format!("globalThis.__webagentObserver.observe({js_opts})");
        let value = match world
            .eval(
                &expression,
                "observing a cross-origin frame",
                geometry.timeout,
            )
            .await?
        {
            FrameEval::Value { value, .. } => value,
            FrameEval::Gone => {
                return Err(BrowserError::Script(
                    "the frame kept replacing its document".into(),
                ))
            }
        };
        let json = value
            .as_str()
            .ok_or_else(|| BrowserError::Decode(format!("expected a JSON string, got {value}")))?;
        let raw = RawObservation::parse(json).map_err(|e| BrowserError::Decode(e.to_string()))?;
        Ok((world, raw, origin))
    }

    /// The frame id of the frame held by the `<iframe>` element that
    /// `expression` gives in world `parent` (`None`: the top).
    async fn frame_id_of(
        &self,
        parent: Option<&FrameWorld>,
        expression: &str,
    ) -> Result<String, BrowserError> {
        let limit = self.ctx.call_timeout;
        let mut params = EvaluateParams::new(expression);
        params.return_by_value = Some(false);
        params.object_group = Some(HANDLES.into());
        params.silent = Some(true);
        let missing = || BrowserError::Script("the frame's element is gone".into());
        let node = match parent {
            None => {
                if let Some(world) = self.world.lock().await.as_ref() {
                    world.aim(&mut params);
                }
                let handle = self
                    .with_timeout(
                        "finding a frame's element",
                        limit,
                        self.page.execute(params),
                    )
                    .await?;
                let object = handle.result.result.object_id.clone().ok_or_else(missing)?;
                let described = self
                    .with_timeout(
                        "describing a frame's element",
                        limit,
                        self.page
                            .execute(DescribeNodeParams::builder().object_id(object).build()),
                    )
                    .await;
                let _ = self
                    .with_timeout(
                        "releasing node handles",
                        limit,
                        self.page.execute(ReleaseObjectGroupParams::new(HANDLES)),
                    )
                    .await;
                described?.result.node.clone()
            }
            Some(world) => {
                params.context_id = world.context().await;
                let session = &world.session;
                let handle = session
                    .execute(params, "finding a frame's element", limit)
                    .await?;
                let object = handle.result.object_id.clone().ok_or_else(missing)?;
                let described = session
                    .execute(
                        DescribeNodeParams::builder().object_id(object).build(),
                        "describing a frame's element",
                        limit,
                    )
                    .await;
                let _ = session
                    .execute(
                        ReleaseObjectGroupParams::new(HANDLES),
                        "releasing node handles",
                        limit,
                    )
                    .await;
                described?.node
            }
        };
        node.frame_id
            .map(|f| f.inner().clone())
            .ok_or_else(|| BrowserError::Script("the <iframe> holds no frame yet".into()))
    }

    /// The attached world of frame `frame_id`, attaching on first use.
    async fn frame_world(
        &self,
        frames: &mut Frames,
        frame_id: &str,
    ) -> Result<Arc<FrameWorld>, BrowserError> {
        if let Some(world) = frames.worlds.get(frame_id) {
            return Ok(Arc::clone(world));
        }
        let hub = match &frames.hub {
            Some(hub) => Arc::clone(hub),
            None => {
                let browser =
                    self.ctx.browser.upgrade().ok_or_else(|| {
                        BrowserError::Disconnected("the session was closed".into())
                    })?;
                let hub = FrameHub::start(&browser).await?;
                frames.hub = Some(Arc::clone(&hub));
                hub
            }
        };
        let session = hub.attach(frame_id, self.ctx.call_timeout).await?;
        let world = Arc::new(FrameWorld::new(session, OBSERVER_JS, WORLD_NAME));
        frames
            .worlds
            .insert(frame_id.to_string(), Arc::clone(&world));
        Ok(world)
    }

    /// Where index `index` of observation `observation` points: the
    /// frame's slot (`None`: the top document), that world's observation
    /// number and its own index there.
    pub(crate) async fn element_route(
        &self,
        observation: u64,
        index: usize,
    ) -> Result<(Option<usize>, u64, usize), BrowserError> {
        let frames = self.frames.lock().await;
        let route =
            frames
                .layout
                .route(observation, index)
                .ok_or_else(|| BrowserError::UnknownIndex {
                    index,
                    detail: format!("observation {observation} has no index {index}"),
                })?;
        let seq = match route.slot {
            Some(k) => frames.layout.seq_of(Some(k)),
            None => observation,
        };
        Ok((route.slot, seq, route.local))
    }

    /// The world of frame slot `slot` of the latest observation.
    fn slot_world(frames: &Frames, slot: usize) -> Result<Arc<FrameWorld>, BrowserError> {
        frames
            .layout
            .slots
            .get(slot)
            .map(|s| Arc::clone(&s.world))
            .ok_or_else(|| {
                BrowserError::Script("the frame is no longer listed; observe the page again".into())
            })
    }

    /// Evaluates `expression` in webagent's world of frame `slot` (`None`:
    /// the top document). `fresh` is true when the world was created for
    /// this call.
    pub(crate) async fn eval_in(
        &self,
        slot: Option<usize>,
        expression: &str,
        what: &str,
    ) -> Result<(serde_json::Value, bool), BrowserError> {
        let Some(slot) = slot else {
            return self
                .world_eval(expression, what, self.ctx.call_timeout)
                .await;
        };
        let world = Self::slot_world(&*self.frames.lock().await, slot)?;
        match world.eval(expression, what, self.ctx.call_timeout).await? {
            FrameEval::Value { value, fresh } => Ok((value, fresh)),
            FrameEval::Gone => Err(BrowserError::Script(format!(
                "{what}: the frame kept replacing its document; try again once it settles"
            ))),
        }
    }

    /// Where the content of frame `slot` starts now, in top-level viewport
    /// coordinates (the page may have scrolled since it was listed).
    pub(crate) async fn frame_origin(&self, slot: usize) -> Result<(f64, f64), BrowserError> {
        let chain: Vec<(Option<usize>, Owner)> = {
            let frames = self.frames.lock().await;
            let mut chain = Vec::new();
            let mut at = Some(slot);
            while let Some(k) = at {
                let s = frames.layout.slots.get(k).ok_or_else(|| {
                    BrowserError::Script("the frame is no longer listed; observe again".into())
                })?;
                chain.push((s.parent, s.owner.clone()));
                at = s.parent;
                if chain.len() > MAX_FRAME_DEPTH + 1 {
                    break;
                }
            }
            chain
        };
        let mut origin = (0.0, 0.0);
        for (parent, owner) in chain {
            let seq = self.frames.lock().await.layout.seq_of(parent);
            let (expression, index, selector) = match &owner {
                Owner::Index(local) => (
                    format!(
                        "globalThis.__webagentObserver.call({seq}, {local}, ({CONTENT_ORIGIN_JS}), null)"
                    ),
                    *local,
                    "",
                ),
                Owner::Selector(prefix) => (
                    format!(
                        "globalThis.__webagentObserver.callSelector({}, (els, a, h) => ({CONTENT_ORIGIN_JS})(els.find((e) => e.checkVisibility()) || els[0], a, h), null)",
                        serde_json::Value::String(prefix.clone())
                    ),
                    0,
                    prefix.as_str(),
                ),
            };
            let (value, _) = self
                .eval_in(parent, &expression, "locating a frame")
                .await?;
            let value = self.unwrap_call(value, index, selector)?;
            let x = value.get(0).and_then(|v| v.as_f64()).unwrap_or(0.0);
            let y = value.get(1).and_then(|v| v.as_f64()).unwrap_or(0.0);
            origin = (origin.0 + x, origin.1 + y);
        }
        Ok(origin)
    }

    /// The slot of the cross-origin frame whose `<iframe>` the last
    /// `pierce` in world `parent` stopped at (found by `prefix` there),
    /// attaching to it when the latest observation did not list it.
    pub(crate) async fn enter_frame(
        &self,
        parent: Option<usize>,
        prefix: &str,
    ) -> Result<usize, BrowserError> {
        let parent_world = match parent {
            Some(k) => Some(Self::slot_world(&*self.frames.lock().await, k)?),
            None => None,
        };
        let frame_id = self
            .frame_id_of(
                parent_world.as_deref(),
                "globalThis.__webagentObserver.hopped()",
            )
            .await?;
        let mut frames = self.frames.lock().await;
        if let Some(k) = frames
            .layout
            .slots
            .iter()
            .position(|s| s.world.session.target_id() == frame_id)
        {
            return Ok(k);
        }
        let world = self.frame_world(&mut frames, &frame_id).await?;
        frames.layout.slots.push(Slot {
            world,
            seq: 0,
            parent,
            owner: Owner::Selector(prefix.to_string()),
        });
        Ok(frames.layout.slots.len() - 1)
    }

    /// The slot of the frame of another origin whose `<iframe>` `path`
    /// (a CSS path, across same-origin frames and shadow roots) names in
    /// world `parent` (`None`: the top document).
    pub(crate) async fn frame_slot(
        &self,
        parent: Option<usize>,
        path: &str,
    ) -> Result<usize, BrowserError> {
        let enter = format!(
            "globalThis.__webagentObserver.pierce({}).cross === true",
            serde_json::Value::String(format!("{path} >>> :root"))
        );
        let (crossed, _) = self.eval_in(parent, &enter, "entering a frame").await?;
        if crossed != serde_json::Value::Bool(true) {
            return Err(BrowserError::Selector {
                selector: path.to_string(),
                detail: "it names no frame of another origin".into(),
            });
        }
        self.enter_frame(parent, path).await
    }

    /// The way to frame `slot`'s `<iframe>` from the top document, as a
    /// selector's `>>>` hops take it (what a recorded step's CSS path
    /// puts before the element's own path in the frame).
    pub(crate) async fn frame_path(&self, slot: usize) -> Result<String, BrowserError> {
        let mut parts = Vec::new();
        let mut at = Some(slot);
        while let Some(k) = at {
            let (parent, owner, seq) = {
                let frames = self.frames.lock().await;
                let s = frames.layout.slots.get(k).ok_or_else(|| {
                    BrowserError::Script("the frame is no longer listed; observe again".into())
                })?;
                (s.parent, s.owner.clone(), frames.layout.seq_of(s.parent))
            };
            let part = match owner {
                Owner::Selector(prefix) => prefix,
                Owner::Index(local) => {
                    let expression = format!(
                        "globalThis.__webagentObserver.call({seq}, {local}, ({LOCATE_JS}), {{\"record\": true}})"
                    );
                    let (value, _) = self
                        .eval_in(parent, &expression, "reading a frame's path")
                        .await?;
                    let facts = self.unwrap_call(value, local, "")?;
                    facts
                        .get("css")
                        .and_then(serde_json::Value::as_str)
                        .map(str::to_string)
                        .ok_or_else(|| BrowserError::Script("a frame without a path".into()))?
                }
            };
            parts.push(part);
            at = parent;
            if parts.len() > MAX_FRAME_DEPTH {
                break;
            }
        }
        parts.reverse();
        Ok(parts.join(" >>> "))
    }

    /// Sets `file` on the `<input type=file>` matching `selector` in frame
    /// `slot` (`None`: the top document).
    pub(crate) async fn set_input_files(
        &self,
        slot: Option<usize>,
        selector: &str,
        file: &str,
    ) -> Result<(), BrowserError> {
        let limit = self.ctx.call_timeout;
        let files = vec![file.to_string()];
        let Some(slot) = slot else {
            let doc = self
                .with_timeout(
                    "reading the document",
                    limit,
                    self.page.execute(GetDocumentParams::default()),
                )
                .await?;
            let found = self
                .with_timeout(
                    "finding the file input",
                    limit,
                    self.page
                        .execute(QuerySelectorParams::new(doc.result.root.node_id, selector)),
                )
                .await?;
            let mut params = SetFileInputFilesParams::new(files);
            params.node_id = Some(found.result.node_id);
            self.with_timeout("setting the file", limit, self.page.execute(params))
                .await?;
            return Ok(());
        };
        let world = Self::slot_world(&*self.frames.lock().await, slot)?;
        let session = &world.session;
        let doc = session
            .execute(
                GetDocumentParams::default(),
                "reading the frame's document",
                limit,
            )
            .await?;
        let found = session
            .execute(
                QuerySelectorParams::new(doc.root.node_id, selector),
                "finding the file input",
                limit,
            )
            .await?;
        let mut params = SetFileInputFilesParams::new(files);
        params.node_id = Some(found.node_id);
        session.execute(params, "setting the file", limit).await?;
        Ok(())
    }
}

/// How many frames deep slot `k` is (1 for a frame of the top document).
fn depth_of(slots: &[Slot], mut k: usize) -> usize {
    let mut depth = 1;
    while let Some(parent) = slots.get(k).and_then(|s| s.parent) {
        depth += 1;
        k = parent;
        if depth > MAX_FRAME_DEPTH + 1 {
            break;
        }
    }
    depth
}
