//! Cross-origin frames: Chromium runs a frame of another site in a process
//! of its own, as a target of its own (site isolation). A tab's CDP session
//! cannot evaluate there, so webagent attaches to each such frame target and
//! runs the same observer and action helper in an isolated world inside it.
//!
//! chromiumoxide drives only page targets: commands for a frame target
//! cannot go through a `Page`. A frame is therefore reached the way CDP
//! offers for any target over the browser connection: attached without
//! flattening, each command sent as a `Target.sendMessageToTarget` and each
//! answer read from `Target.receivedMessageFromTarget`. The commands and
//! their answers keep chromiumoxide's typed CDP structs; only the envelope
//! (id, method, params) is built here.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::{CreateIsolatedWorldParams, FrameId};
use chromiumoxide::cdp::browser_protocol::target::{
    AttachToTargetParams, DetachFromTargetParams, EventReceivedMessageFromTarget, SessionId,
    TargetId,
};
use chromiumoxide::cdp::js_protocol::runtime::{
    EvaluateParams, EvaluateReturns, ExecutionContextId,
};
use chromiumoxide::types::{Command, Method, MethodId};
use chromiumoxide::Browser;
use futures_util::StreamExt;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, Mutex};
use tokio::task::JoinHandle;

use super::error::BrowserError;

/// `Target.sendMessageToTarget`, which chromiumoxide's generated commands
/// leave out (CDP marks it deprecated in favour of flattened sessions,
/// which chromiumoxide routes only for pages).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SendMessageToTarget {
    message: String,
    session_id: String,
}

impl Method for SendMessageToTarget {
    fn identifier(&self) -> MethodId {
        "Target.sendMessageToTarget".into()
    }
}

impl Command for SendMessageToTarget {
    type Response = Value;
}

type Pending = std::sync::Mutex<HashMap<(String, u64), oneshot::Sender<Value>>>;

/// Who hears the events of which frame session (the recorder listens to
/// its binding there).
type Listeners = std::sync::Mutex<HashMap<String, mpsc::UnboundedSender<Value>>>;

/// Routes the answers of frame sessions to their callers. One per tab,
/// started the first time the tab meets a cross-origin frame.
#[derive(Debug)]
pub(crate) struct FrameHub {
    browser: Weak<Browser>,
    pending: Arc<Pending>,
    listeners: Arc<Listeners>,
    next_id: AtomicU64,
    reader: JoinHandle<()>,
}

impl Drop for FrameHub {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl FrameHub {
    /// Starts reading the browser's messages from attached targets.
    pub async fn start(browser: &Arc<Browser>) -> Result<Arc<FrameHub>, BrowserError> {
        let mut messages = browser
            .event_listener::<EventReceivedMessageFromTarget>()
            .await
            .map_err(|e| BrowserError::Cdp {
                what: "listening to frame targets".into(),
                message: e.to_string(),
            })?;
        let pending: Arc<Pending> = Arc::default();
        let listeners: Arc<Listeners> = Arc::default();
        let routes = Arc::clone(&pending);
        let hearing = Arc::clone(&listeners);
        let reader = tokio::spawn(async move {
            while let Some(event) = messages.next().await {
                let Ok(message) = serde_json::from_str::<Value>(&event.message) else {
                    tracing::debug!("an unreadable message from a frame target");
                    continue;
                };
                // An event of the frame (no id) goes to whoever listens to
                // that session, if anyone does.
                let Some(id) = message.get("id").and_then(Value::as_u64) else {
                    let session = event.session_id.inner();
                    let listener = hearing.lock().ok().and_then(|l| l.get(session).cloned());
                    if let Some(listener) = listener {
                        let _ = listener.send(message);
                    }
                    continue;
                };
                let key = (event.session_id.inner().clone(), id);
                let waiter = routes.lock().ok().and_then(|mut p| p.remove(&key));
                if let Some(waiter) = waiter {
                    let _ = waiter.send(message);
                }
            }
        });
        Ok(Arc::new(FrameHub {
            browser: Arc::downgrade(browser),
            pending,
            listeners,
            next_id: AtomicU64::new(1),
            reader,
        }))
    }

    fn browser(&self) -> Result<Arc<Browser>, BrowserError> {
        self.browser
            .upgrade()
            .ok_or_else(|| BrowserError::Disconnected("the session was closed".into()))
    }

    /// Attaches to the frame target `target_id` (a cross-origin frame's
    /// target id is its frame id).
    pub async fn attach(
        self: &Arc<Self>,
        target_id: &str,
        limit: Duration,
    ) -> Result<FrameSession, BrowserError> {
        let browser = self.browser()?;
        let params = AttachToTargetParams::builder()
            .target_id(TargetId::from(target_id.to_string()))
            .flatten(false)
            .build()
            .map_err(BrowserError::Script)?;
        let what = "attaching to a cross-origin frame";
        let attached = tokio::time::timeout(limit, browser.execute(params))
            .await
            .map_err(|_| BrowserError::Timeout {
                what: what.into(),
                after: limit,
            })?
            .map_err(|e| BrowserError::Cdp {
                what: what.into(),
                message: e.to_string(),
            })?;
        Ok(FrameSession {
            hub: Arc::clone(self),
            session_id: attached.result.session_id.inner().clone(),
            target_id: target_id.to_string(),
        })
    }
}

/// One attached cross-origin frame target; detaches when dropped.
#[derive(Debug)]
pub(crate) struct FrameSession {
    hub: Arc<FrameHub>,
    session_id: String,
    target_id: String,
}

impl Drop for FrameSession {
    fn drop(&mut self) {
        if let Ok(mut listeners) = self.hub.listeners.lock() {
            listeners.remove(&self.session_id);
        }
        let Ok(browser) = self.hub.browser() else {
            return;
        };
        let detach = DetachFromTargetParams::builder()
            .session_id(SessionId::from(self.session_id.clone()))
            .build();
        // Dropped in async code almost always; a frame left attached goes
        // with its target anyway.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = browser.execute(detach).await;
            });
        }
    }
}

impl FrameSession {
    /// The frame's target id, which is also its frame id.
    pub fn target_id(&self) -> &str {
        &self.target_id
    }

    /// The frame's events from now on (`{"method", "params"}`), for as
    /// long as the session lives; a second call takes them over.
    pub fn events(&self) -> mpsc::UnboundedReceiver<Value> {
        let (sender, events) = mpsc::unbounded_channel();
        if let Ok(mut listeners) = self.hub.listeners.lock() {
            listeners.insert(self.session_id.clone(), sender);
        }
        events
    }

    /// Sends one CDP command to the frame and waits for its answer.
    pub async fn execute<C: Command>(
        &self,
        command: C,
        what: &str,
        limit: Duration,
    ) -> Result<C::Response, BrowserError> {
        let browser = self.hub.browser()?;
        let id = self.hub.next_id.fetch_add(1, Ordering::Relaxed);
        let method = command.identifier();
        let params =
            serde_json::to_value(&command).map_err(|e| BrowserError::Script(e.to_string()))?;
        let message = serde_json::json!({"id": id, "method": method, "params": params}).to_string();
        let (tx, rx) = oneshot::channel();
        let key = (self.session_id.clone(), id);
        if let Ok(mut pending) = self.hub.pending.lock() {
            pending.insert(key.clone(), tx);
        }
        let forget = || {
            if let Ok(mut pending) = self.hub.pending.lock() {
                pending.remove(&key);
            }
        };
        let envelope = SendMessageToTarget {
            message,
            session_id: self.session_id.clone(),
        };
        let answer = tokio::time::timeout(limit, async {
            browser
                .execute(envelope)
                .await
                .map_err(|e| BrowserError::Cdp {
                    what: what.to_string(),
                    message: e.to_string(),
                })?;
            rx.await.map_err(|_| BrowserError::Cdp {
                what: what.to_string(),
                message: "the frame went away before answering".into(),
            })
        })
        .await;
        let answer = match answer {
            Ok(Ok(answer)) => answer,
            Ok(Err(error)) => {
                forget();
                return Err(error);
            }
            Err(_) => {
                forget();
                return Err(BrowserError::Timeout {
                    what: what.to_string(),
                    after: limit,
                });
            }
        };
        if let Some(error) = answer.get("error") {
            return Err(BrowserError::Cdp {
                what: what.to_string(),
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error")
                    .to_string(),
            });
        }
        let result = answer.get("result").cloned().unwrap_or(Value::Null);
        C::response_from_value(result).map_err(|e| BrowserError::Decode(format!("{what}: {e}")))
    }
}

/// An evaluation in webagent's world `context`, answered by value.
pub(crate) fn evaluate_in_world(expression: &str, context: ExecutionContextId) -> EvaluateParams {
    let mut params = EvaluateParams::new(expression);
    params.context_id = Some(context);
    params.return_by_value = Some(true);
    params.await_promise = Some(true);
    params.silent = Some(true);
    params
}

/// The value of an evaluation, or what it threw.
pub(crate) fn evaluated(resp: &EvaluateReturns, what: &str) -> Result<Value, BrowserError> {
    if let Some(ex) = &resp.exception_details {
        let message = ex
            .exception
            .as_ref()
            .and_then(|e| e.description.clone())
            .unwrap_or_else(|| ex.text.clone());
        return Err(BrowserError::Script(format!("{what}: {message}")));
    }
    Ok(resp.result.value.clone().unwrap_or(Value::Null))
}

/// Where an evaluation in one of webagent's worlds is sent: a tab's own
/// page, or a cross-origin frame's session.
pub(crate) trait WorldChannel {
    /// Sends the evaluation, bounded by `limit`.
    async fn send_evaluation(
        &self,
        params: EvaluateParams,
        what: &str,
        limit: Duration,
    ) -> Result<EvaluateReturns, BrowserError>;
}

impl WorldChannel for FrameSession {
    async fn send_evaluation(
        &self,
        params: EvaluateParams,
        what: &str,
        limit: Duration,
    ) -> Result<EvaluateReturns, BrowserError> {
        self.execute(params, what, limit).await
    }
}

/// Evaluates `expression` in webagent's world `context` over `channel`:
/// its value; `None` when the document went away under the call, which
/// Chromium says as a lost context or as the target having navigated; or
/// the error.
pub(crate) async fn evaluate_in(
    channel: &impl WorldChannel,
    context: ExecutionContextId,
    expression: &str,
    what: &str,
    limit: Duration,
) -> Result<Option<Value>, BrowserError> {
    send_to_world(channel, evaluate_in_world(expression, context), what, limit).await
}

/// Sends an evaluation made for one of webagent's worlds, as
/// [`evaluate_in`] does.
pub(crate) async fn send_to_world(
    channel: &impl WorldChannel,
    params: EvaluateParams,
    what: &str,
    limit: Duration,
) -> Result<Option<Value>, BrowserError> {
    match channel.send_evaluation(params, what, limit).await {
        Ok(resp) => evaluated(&resp, what).map(Some),
        // "Cannot find context with specified id", "uniqueContextId not
        // found", "Inspected target navigated or closed".
        Err(BrowserError::Cdp { message, .. })
            if message.to_ascii_lowercase().contains("context")
                || message.contains("navigated or closed") =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// What an evaluation in a frame's world gave.
pub(crate) enum FrameEval {
    /// The expression's JSON value; `fresh` when the world was created for
    /// this call (so indices of an earlier observation mean nothing).
    Value { value: Value, fresh: bool },
    /// The frame's document kept changing under the call.
    Gone,
}

/// webagent's isolated world inside one cross-origin frame, with the
/// observer (and, on demand, the action helper) installed.
#[derive(Debug)]
pub(crate) struct FrameWorld {
    pub session: FrameSession,
    context: Mutex<Option<ExecutionContextId>>,
    observer: &'static str,
    world_name: &'static str,
}

impl FrameWorld {
    pub fn new(session: FrameSession, observer: &'static str, world_name: &'static str) -> Self {
        FrameWorld {
            session,
            context: Mutex::new(None),
            observer,
            world_name,
        }
    }

    async fn create(&self, limit: Duration) -> Result<Option<ExecutionContextId>, BrowserError> {
        let params = CreateIsolatedWorldParams::builder()
            .frame_id(FrameId::from(self.session.target_id().to_string()))
            .world_name(self.world_name)
            .grant_univeral_access(false)
            .build()
            .map_err(BrowserError::Script)?;
        let created = match self
            .session
            .execute(params, "creating a frame's isolated world", limit)
            .await
        {
            Ok(created) => created,
            // Between two documents the frame has no frame to create in.
            Err(BrowserError::Cdp { message, .. }) if message.contains("frame") => return Ok(None),
            Err(e) => return Err(e),
        };
        let id = created.execution_context_id;
        let installing = "installing the observer in a frame";
        match evaluate_in(&self.session, id, self.observer, installing, limit).await? {
            Some(_) => Ok(Some(id)),
            None => Ok(None),
        }
    }

    /// Evaluates `expression` in the world, creating it (and installing
    /// the observer) when the frame's document is new.
    pub async fn eval(
        &self,
        expression: &str,
        what: &str,
        limit: Duration,
    ) -> Result<FrameEval, BrowserError> {
        let mut context = self.context.lock().await;
        let mut fresh = false;
        for _ in 0..3 {
            let id = match *context {
                Some(id) => id,
                None => match self.create(limit).await? {
                    Some(id) => {
                        *context = Some(id);
                        fresh = true;
                        id
                    }
                    None => {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
                },
            };
            match evaluate_in(&self.session, id, expression, what, limit).await? {
                Some(value) => return Ok(FrameEval::Value { value, fresh }),
                None => *context = None,
            }
        }
        Ok(FrameEval::Gone)
    }

    /// The execution context of the world, when it exists.
    pub async fn context(&self) -> Option<ExecutionContextId> {
        *self.context.lock().await
    }
}

/// The cross-origin frames a tab knows: the attached worlds by frame id,
/// and where the elements of the latest observation live.
#[derive(Debug, Default)]
pub(crate) struct Frames {
    pub hub: Option<Arc<FrameHub>>,
    pub worlds: HashMap<String, Arc<FrameWorld>>,
    pub layout: Layout,
}

/// Where each index of one observation points.
#[derive(Debug, Default, Clone)]
pub(crate) struct Layout {
    /// The top document's observation number.
    pub observation: u64,
    /// One route per listed index; empty when the page has no observed
    /// cross-origin frame (every index is then the top document's own).
    pub routes: Vec<Route>,
    /// The frames observed, in the order met.
    pub slots: Vec<Slot>,
}

/// Which world lists an element, and under which number there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Route {
    /// The frame's slot; `None` for the top document.
    pub slot: Option<usize>,
    /// The element's index in that world's own observation.
    pub local: usize,
}

/// One observed cross-origin frame.
#[derive(Debug, Clone)]
pub(crate) struct Slot {
    pub world: Arc<FrameWorld>,
    /// The frame world's observation number.
    pub seq: u64,
    /// The world that holds the `<iframe>` element (`None`: the top).
    pub parent: Option<usize>,
    /// How to find the `<iframe>` again in the parent world.
    pub owner: Owner,
}

/// The `<iframe>` element of a frame, as its parent world knows it.
#[derive(Debug, Clone)]
pub(crate) enum Owner {
    /// Listed under this index in the parent world's observation.
    Index(usize),
    /// Found by this selector (it may hop through same-origin frames and
    /// shadow roots) in the parent world.
    Selector(String),
}

impl Layout {
    /// Where `index` of observation `observation` points; `None` for an
    /// index the observation did not list. Indices of another observation
    /// are left to the top world, whose observer reports them stale.
    pub fn route(&self, observation: u64, index: usize) -> Option<Route> {
        if observation != self.observation || self.routes.is_empty() {
            return Some(Route {
                slot: None,
                local: index,
            });
        }
        self.routes.get(index).copied()
    }

    /// The observation number of the world `slot` (`None`: the top).
    pub fn seq_of(&self, slot: Option<usize>) -> u64 {
        match slot {
            Some(k) => self.slots.get(k).map_or(0, |s| s.seq),
            None => self.observation,
        }
    }
}

/// Puts right the facts `locate.js` read in a frame of another origin,
/// which sees only the frame's own document: the CSS path gets `way_in`
/// (the path to the frame's `<iframe>` from the tab's top document) in
/// front, or is dropped when that way is unknown, and the address is the
/// tab's `url` when known.
pub(crate) fn place_in_frame(facts: &mut Value, way_in: Option<&str>, url: Option<&str>) {
    let Some(facts) = facts.as_object_mut() else {
        return;
    };
    let inner = facts.remove("css");
    if let (Some(way_in), Some(Value::String(inner))) = (way_in, inner) {
        facts.insert("css".into(), Value::String(format!("{way_in} >>> {inner}")));
    }
    if let Some(url) = url {
        facts.insert("url".into(), Value::String(url.to_string()));
    }
}

/// Where CDP commands go: a tab's page, or a cross-origin frame's session.
pub(crate) trait CdpTarget {
    /// Sends `command` and waits for its answer, within `limit`.
    async fn run<C: Command>(
        &self,
        command: C,
        what: &str,
        limit: Duration,
    ) -> Result<C::Response, BrowserError>;
}

impl CdpTarget for chromiumoxide::Page {
    async fn run<C: Command>(
        &self,
        command: C,
        what: &str,
        limit: Duration,
    ) -> Result<C::Response, BrowserError> {
        within(what, limit, self.execute(command))
            .await
            .map(|answer| answer.result)
    }
}

/// A CDP call made through chromiumoxide (on a page, or the browser),
/// within `limit`.
pub(crate) async fn within<T>(
    what: &str,
    limit: Duration,
    call: impl std::future::Future<Output = Result<T, chromiumoxide::error::CdpError>>,
) -> Result<T, BrowserError> {
    match tokio::time::timeout(limit, call).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(BrowserError::Cdp {
            what: what.to_string(),
            message: error.to_string(),
        }),
        Err(_) => Err(BrowserError::Timeout {
            what: what.to_string(),
            after: limit,
        }),
    }
}

impl CdpTarget for FrameSession {
    async fn run<C: Command>(
        &self,
        command: C,
        what: &str,
        limit: Duration,
    ) -> Result<C::Response, BrowserError> {
        self.execute(command, what, limit).await
    }
}
