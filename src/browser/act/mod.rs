//! Action execution: runs one [`Action`] from the catalog on a [`Tab`] and
//! hands back an [`ActionResult`]. Nothing here returns an error to the
//! caller: CDP failures, elements that went away, timeouts and navigations
//! all become results with the matching [`FailureReason`].
//!
//! # How an action lands where it was meant
//!
//! A helper script (the action helper, `scripts/action_helper/`) lives
//! in the same isolated world as the observer, so `index` reaches exactly
//! the listed node and the page cannot tamper with the checks. A selector takes the first visible match, and the
//! result's data says how many matched (`matched`, `used`).
//!
//! Before a click or hover, one evaluation checks that the element is
//! attached, visible and enabled, scrolls it into view (and centres it once
//! more if something such as a sticky header covers it where it is), and
//! hit-tests sample points through shadow roots and same-origin frames. The
//! mouse then moves to the chosen point; that move is acknowledged only
//! after the renderer's next frame, so a second evaluation right after it
//! compares the box with the first reading (stable across a frame) and
//! hit-tests the point again (a hover effect may have opened something over
//! it). Only then are the press and release sent. Fills check attached,
//! visible, enabled, editable and the hit target, then focus the element
//! directly, so they skip the frame wait: a field that moves cannot make
//! the text land elsewhere.
//!
//! When a check fails and waiting could help (hidden, disabled, covered,
//! moving, no match yet), the executor retries with backoff until the
//! action's time limit and then reports the last reason, naming the
//! covering element when there is one. Input is dispatched only right after
//! a passing check and never once the limit has passed, so a timed-out
//! action cannot land later.
//!
//! Clicks are real `Input.dispatchMouseEvent` events in top-level
//! coordinates; text goes in through `Input.insertText` after focusing and
//! selecting the field, which React's and Vue's value tracking see as
//! typing (the native value setter is the fallback when a page swallows
//! it), followed by a `change` event.
//!
//! # Settling
//!
//! Page events are subscribed to *before* acting, so a navigation the action
//! starts is never missed. Afterwards the executor waits for the DOM to stay
//! quiet for a short period, for a started navigation to load, and for
//! requests in flight to finish, all bounded ([`SettleOptions`]). The time
//! spent is `settle_ms` in the result's data, and `navigated` says whether
//! the document changed.

mod page;
mod settle;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType,
    InsertTextParams, MouseButton,
};
use chromiumoxide::cdp::browser_protocol::page::{
    BringToFrontParams, DialogType, EventJavascriptDialogOpening, HandleJavaScriptDialogParams,
};
use futures_util::StreamExt;
use serde_json::{json, Map, Value};

pub use settle::{SettleOptions, Settled};

use super::scripts::ACT_JS;
use super::{BrowserError, Tab};
use crate::actions::{
    typing_events, Action, ActionResult, FailureReason, InjectPosition, KeyChord, KeyEvent,
    KeyEventKind, OptionChoice, ScrollDirection, Target,
};
use crate::dom::PageState;
use crate::sitemap::SitemapSet;

/// Why an action could not be carried out. The executor turns every one of
/// these into an [`ActionResult`]; they never reach the caller as errors.
#[derive(Debug, thiserror::Error)]
pub enum ActError {
    /// The page-side checks refused the action (hidden, covered, gone, …).
    #[error("{message}")]
    Refused {
        /// The failure category.
        reason: FailureReason,
        /// What the page-side check found.
        message: String,
        /// Whether waiting could change the outcome.
        retry: bool,
    },
    /// Talking to the browser failed.
    #[error(transparent)]
    Browser(#[from] BrowserError),
    /// A local file could not be read or written.
    #[error("{what} {}: {source}", .path.display())]
    File {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl ActError {
    fn refused(reason: FailureReason, message: impl Into<String>) -> ActError {
        ActError::Refused {
            reason,
            message: message.into(),
            retry: false,
        }
    }

    /// The failure reason this error is reported with.
    pub fn reason(&self) -> FailureReason {
        match self {
            ActError::Refused { reason, .. } => *reason,
            ActError::Browser(err) => match err {
                BrowserError::ElementGone { .. }
                | BrowserError::StaleObservation { .. }
                | BrowserError::UnknownIndex { .. } => FailureReason::NotFound,
                BrowserError::Timeout { .. } => FailureReason::Timeout,
                BrowserError::Selector { .. } => FailureReason::InvalidParams,
                BrowserError::Blocked { .. } => FailureReason::Blocked,
                _ => FailureReason::Unknown,
            },
            ActError::File { .. } => FailureReason::Unknown,
        }
    }
}

impl From<ActError> for ActionResult {
    fn from(err: ActError) -> Self {
        ActionResult::fail(err.reason(), err.to_string())
    }
}

/// Limits and switches for executing actions.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecOptions {
    /// How long a click, fill or other element action may keep retrying its
    /// checks before it fails.
    pub action_timeout: Duration,
    /// How long `navigate`, `back`, `forward` and `reload` may take to load.
    pub navigation_timeout: Duration,
    /// What counts as settled after an action.
    pub settle: SettleOptions,
    /// Whether `execute_javascript` may run (it is `blocked` otherwise).
    pub allow_javascript: bool,
    /// Where `screenshot` writes when no path is given.
    pub screenshot_dir: PathBuf,
    /// The most characters `read_page` returns.
    pub read_limit: usize,
    /// Accept `confirm` and `prompt` dialogs instead of dismissing them
    /// (alerts and leave-page prompts are always accepted).
    pub accept_dialogs: bool,
    /// The observation a navigation's new document is first looked at
    /// with, as it loads (see [`crate::browser::Tab::first_look`]): the
    /// settings of the observation that follows. `None`: no first look.
    pub first_look: Option<crate::browser::ObserveOptions>,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            action_timeout: Duration::from_secs(5),
            navigation_timeout: Duration::from_secs(30),
            settle: SettleOptions::default(),
            allow_javascript: false,
            screenshot_dir: PathBuf::from(".webagent/screenshots"),
            read_limit: 20_000,
            accept_dialogs: false,
            first_look: None,
        }
    }
}

/// Runs actions on one tab.
///
/// ```no_run
/// # async fn demo(tab: &webagent::browser::Tab) {
/// use webagent::actions::Catalog;
/// use webagent::browser::act::{Executor, ExecOptions};
/// let state = tab.observe(&Default::default()).await.ok();
/// let action = Catalog::builtin().parse(&serde_json::json!({"click": {"index": 0}}));
/// if let (Ok(action), Some(state)) = (action, state) {
///     let result = Executor::new(tab, ExecOptions::default())
///         .execute(&action, Some(&state))
///         .await;
///     println!("{}", serde_json::to_string(&result).unwrap_or_default());
/// }
/// # }
/// ```
pub struct Executor<'a> {
    tab: &'a Tab,
    options: ExecOptions,
    sitemaps: Option<&'a SitemapSet>,
}

impl std::fmt::Debug for Executor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("tab", self.tab)
            .field("options", &self.options)
            .field("sitemaps", &self.sitemaps.is_some())
            .finish()
    }
}

/// A point in top-level viewport coordinates, plus what the check reported.
struct Checked {
    x: f64,
    y: f64,
    reply: Value,
}

impl<'a> Executor<'a> {
    /// An executor for `tab` with the given limits.
    pub fn new(tab: &'a Tab, options: ExecOptions) -> Self {
        Executor {
            tab,
            options,
            sitemaps: None,
        }
    }

    /// Lets `goto_page` search these sitemaps.
    pub fn with_sitemaps(mut self, sitemaps: &'a SitemapSet) -> Self {
        self.sitemaps = Some(sitemaps);
        self
    }

    /// The options in use.
    pub fn options(&self) -> &ExecOptions {
        &self.options
    }

    /// Runs `action`. `state` is the latest observation, which `index`
    /// targets refer to (without one, index targets are `not_found`).
    pub async fn execute(&self, action: &Action, state: Option<&PageState>) -> ActionResult {
        // The last-resort guard: every step has its own limit, so this only
        // fires if something unforeseen hangs.
        let guard = self.options.action_timeout
            + self.options.navigation_timeout
            + self.options.settle.max
            + Duration::from_secs(5);
        let started = Instant::now();
        let guard_mark = self.tab.guard().map(|g| g.mark());
        let mut dialogs = Vec::new();
        let outcome = tokio::time::timeout(
            guard,
            self.answering_dialogs(self.dispatch(action, state), &mut dialogs),
        )
        .await;
        let result = match outcome {
            Ok(Ok(result)) => result,
            Ok(Err(err)) => err.into(),
            Err(_) => ActionResult::timeout(format!(
                "{} did not finish within {:.0} s",
                action.name(),
                guard.as_secs_f64()
            )),
        };
        tracing::debug!(action = %action, ms = started.elapsed().as_millis() as u64, ok = result.is_ok(), "executed");
        let result = with_dialogs(result, dialogs);
        // Navigations the allowed-domain list refused while the action ran
        // in this tab or a popup it opened (a clicked link, a form post, a
        // redirect) fail the action: the model must learn it did not get
        // where the action leads. This is the one place that says so.
        let me = self.tab.target_id();
        let refused: Vec<_> = match (self.tab.guard(), guard_mark) {
            (Some(guard), Some(mark)) => guard
                .blocked_since(mark)
                .into_iter()
                .filter(|b| b.concerns(me))
                .collect(),
            _ => Vec::new(),
        };
        match refused.first() {
            Some(first) if result.reason() != Some(FailureReason::Blocked) => {
                ActionResult::blocked(format!(
                    "{} ran, but the navigation it started to {} was blocked: {}",
                    action.name(),
                    first.url,
                    first.reason
                ))
            }
            _ => result,
        }
    }

    /// Drives `work` while answering JavaScript dialogs it causes. A dialog
    /// blocks the page, and with it every input event and evaluation the
    /// action is waiting on, so it is answered at once: alerts and
    /// beforeunload accepted, confirm and prompt dismissed unless
    /// [`ExecOptions::accept_dialogs`]. Each one is reported in the result.
    async fn answering_dialogs<T>(
        &self,
        work: impl std::future::Future<Output = T>,
        seen: &mut Vec<Value>,
    ) -> T {
        let mut opened = match self
            .tab
            .page()
            .event_listener::<EventJavascriptDialogOpening>()
            .await
        {
            Ok(stream) => Some(stream),
            Err(err) => {
                tracing::debug!(%err, "cannot watch for dialogs during this action");
                None
            }
        };
        tokio::pin!(work);
        loop {
            let next_dialog = async {
                match opened.as_mut() {
                    Some(stream) => stream.next().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                out = &mut work => return out,
                Some(dialog) = next_dialog => {
                    let kind = dialog.r#type.as_ref().to_string();
                    let accept = match dialog.r#type {
                        DialogType::Alert | DialogType::Beforeunload => true,
                        DialogType::Confirm | DialogType::Prompt => self.options.accept_dialogs,
                    };
                    let answered = self
                        .tab
                        .with_timeout(
                            "answering a dialog",
                            self.tab.call_timeout(),
                            self.tab.page().execute(HandleJavaScriptDialogParams::new(accept)),
                        )
                        .await;
                    if let Err(err) = answered {
                        tracing::warn!(%err, "could not answer a {kind} dialog");
                    }
                    seen.push(json!({"type": kind, "message": dialog.message, "accepted": accept}));
                }
            }
        }
    }

    async fn dispatch(
        &self,
        action: &Action,
        state: Option<&PageState>,
    ) -> Result<ActionResult, ActError> {
        let seq = state.map(|s| s.observation);
        match action {
            Action::Navigate { url } => self.navigate(url).await,
            Action::Back {} => self.history(-1).await,
            Action::Forward {} => self.history(1).await,
            Action::Reload {} => self.reload().await,
            Action::GotoPage { name } => self.goto_page(name).await,
            Action::Wait { seconds } => {
                let wait = Duration::from_secs_f64(seconds.clamp(0.0, 10.0));
                tokio::time::sleep(wait).await;
                Ok(ActionResult::ok_with(
                    json!({"waited_ms": wait.as_millis() as u64}),
                ))
            }
            Action::WaitFor {
                condition,
                timeout_ms,
            } => self.wait_for(condition, *timeout_ms).await,
            Action::Click { target } => self.click(&self.aim(target, seq).await?).await,
            Action::Hover { target } => self.hover(&self.aim(target, seq).await?).await,
            Action::InputText {
                target,
                text,
                clear,
            } => {
                self.fill(&self.aim(target, seq).await?, text, *clear, false)
                    .await
            }
            Action::SetText { target, text } => {
                self.fill(&self.aim(target, seq).await?, text, true, true)
                    .await
            }
            Action::ClearInput { target } => {
                self.element_op(&self.aim(target, seq).await?, "clear", json!({}), true)
                    .await
            }
            Action::SelectOption { target, choice } => {
                let args = match choice {
                    OptionChoice::Value { value } => json!({"value": value}),
                    OptionChoice::Text { text } => json!({"text": text}),
                };
                self.element_op(&self.aim(target, seq).await?, "select", args, true)
                    .await
            }
            Action::SelectText { target, text } => {
                let target = match target {
                    Some(t) => self.aim(t, seq).await?,
                    None => Value::Null,
                };
                self.select_text(&target, text.as_deref()).await
            }
            Action::SubmitForm { target } => {
                self.element_op(&self.aim(target, seq).await?, "submit", json!({}), false)
                    .await
            }
            Action::ScrollTo { target } => {
                self.element_op(&self.aim(target, seq).await?, "scrollTo", json!({}), false)
                    .await
            }
            Action::PressKeys { keys, repeat } => self.press_keys(keys, *repeat).await,
            Action::Scroll {
                direction,
                pages,
                target,
            } => {
                let target = match target {
                    Some(t) => Some(self.aim(t, seq).await?),
                    None => None,
                };
                self.scroll(*direction, *pages, target.as_ref()).await
            }
            Action::DragAndDrop { from, to } => {
                self.drag(&self.aim(from, seq).await?, &self.aim(to, seq).await?)
                    .await
            }
            Action::UploadFile { target, path } => {
                self.upload(&self.aim(target, seq).await?, path).await
            }
            Action::Highlight {
                target,
                color,
                label,
            } => {
                let args = json!({"kind": "highlight", "color": color, "label": label});
                self.overlay(Some(&self.aim(target, seq).await?), args)
                    .await
            }
            Action::Border {
                target,
                color,
                label,
            } => {
                let args = json!({"kind": "border", "color": color, "label": label});
                self.overlay(Some(&self.aim(target, seq).await?), args)
                    .await
            }
            Action::Spotlight { target } => {
                self.overlay(
                    Some(&self.aim(target, seq).await?),
                    json!({"kind": "spotlight"}),
                )
                .await
            }
            Action::Inject {
                target,
                text,
                position,
            } => {
                let position = match position {
                    InjectPosition::Before => "before",
                    InjectPosition::After => "after",
                };
                let args = json!({"kind": "inject", "text": text, "position": position});
                self.overlay(Some(&self.aim(target, seq).await?), args)
                    .await
            }
            Action::ClearOverlays {} => self.overlay(None, json!({"kind": "clear"})).await,
            Action::ShowSubtitle { text } => {
                self.overlay(None, json!({"kind": "subtitle", "text": text}))
                    .await
            }
            // `extract` reads what `read_page` reads; the model's side of
            // the house answers the instruction from it (the browser never
            // asks a model).
            Action::Extract { .. } | Action::ReadPage {} => {
                let reply = self
                    .helper("readPage", json!({"limit": self.options.read_limit}))
                    .await?;
                Ok(ActionResult::ok_with(strip_ok(reply)))
            }
            Action::Screenshot {
                path, full_page, ..
            } => self.screenshot(path.as_deref(), *full_page).await,
            Action::AskUser { .. } | Action::Think { .. } | Action::Done { .. } => {
                // The agent loop acts on these; the browser has nothing to do.
                Ok(ActionResult::ok_with(action.params()))
            }
            Action::ExecuteJavascript { script } => self.execute_javascript(script).await,
            // They concern the session's files and tabs, not one page.
            Action::ReadFile { .. } | Action::SwitchTab { .. } | Action::CloseTab { .. } => {
                Ok(ActionResult::unknown(format!(
                    "`{}` runs in the session's environment, not in one tab's executor",
                    action.name()
                )))
            }
            Action::Custom(custom) => Ok(ActionResult::unknown(format!(
                "custom action `{}` runs in the script host, not in the browser executor",
                custom.name
            ))),
        }
    }

    // ---- talking to the helper script ----

    /// The helper's view of a target: the world it lives in (`slot`, left
    /// out for the top document) with that world's observation and index,
    /// or a selector.
    async fn aim(&self, target: &Target, observation: Option<u64>) -> Result<Value, ActError> {
        match target {
            Target::Index { index } => {
                let Some(seq) = observation else {
                    return Err(ActError::refused(
                        FailureReason::NotFound,
                        format!("there is no observation yet, so index {index} means nothing; observe the page first"),
                    ));
                };
                let (slot, seq, local) = self.tab.element_route(seq, index.0).await?;
                let mut spec =
                    json!({"seq": seq, "index": local, "label": format!("element {index}")});
                if let Some(slot) = slot {
                    spec["slot"] = json!(slot);
                }
                Ok(spec)
            }
            Target::Selector { selector } if selector.pierces() => {
                self.aim_through_frames(selector.as_str()).await
            }
            Target::Selector { selector } => Ok(json!({"selector": selector.as_str()})),
        }
    }

    /// Follows a selector's `>>>` hops into frames of other origins: each
    /// world says whether the selector ends in it or which `<iframe>` to
    /// enter with the rest. Waits (within the action's time limit) for a
    /// hop that is not on the page yet.
    async fn aim_through_frames(&self, selector: &str) -> Result<Value, ActError> {
        let deadline = Instant::now() + self.options.action_timeout;
        let mut slot: Option<usize> = None;
        let mut rest = selector.to_string();
        let mut hops = 0;
        loop {
            let call = format!("A.route({})", Value::String(rest.clone()));
            let routed = match self.world_call(slot, &call).await {
                Ok(routed) => routed,
                Err(ActError::Refused { retry: true, .. }) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
                Err(other) => return Err(other),
            };
            if routed.get("cross").and_then(Value::as_bool) != Some(true) {
                let mut spec = json!({"selector": rest, "label": format!("`{selector}`")});
                if let Some(slot) = slot {
                    spec["slot"] = json!(slot);
                }
                return Ok(spec);
            }
            hops += 1;
            if hops > 4 {
                return Err(ActError::refused(
                    FailureReason::InvalidParams,
                    format!("`{selector}` enters more than 4 frames of other origins"),
                ));
            }
            let prefix = routed["prefix"].as_str().unwrap_or_default().to_string();
            rest = routed["rest"].as_str().unwrap_or_default().to_string();
            slot = Some(self.tab.enter_frame(slot, &prefix).await?);
        }
    }

    /// Evaluates `call` (an expression using `A` for the helper) in the
    /// world, installing the helper first when the document is new.
    async fn world_call(&self, slot: Option<usize>, call: &str) -> Result<Value, ActError> {
        let expression = format!(
            "(globalThis.__webagentAct ? ((A) => {call})(globalThis.__webagentAct) : 'missing')"
        );
        for _ in 0..2 {
            let (value, _) = self
                .tab
                .eval_in(slot, &expression, "evaluating script")
                .await?;
            if value.as_str() == Some("missing") {
                self.tab
                    .eval_in(slot, ACT_JS, "installing the action helper")
                    .await?;
                continue;
            }
            return reply(value);
        }
        Err(ActError::refused(
            FailureReason::Navigation,
            "the page kept replacing its document; try again once it settles",
        ))
    }

    /// Runs one of the helper's element operations once.
    ///
    /// In a cross-origin frame the helper works in the frame's own
    /// coordinates: points and boxes it is given are moved into them, and
    /// the ones it answers are moved back to the top page's, where input
    /// events go.
    async fn run(
        &self,
        target: Option<&Value>,
        op: &str,
        mut args: Value,
    ) -> Result<Value, ActError> {
        let slot = target
            .and_then(|t| t.get("slot"))
            .and_then(Value::as_u64)
            .map(|s| s as usize);
        if let Some(to) = args.get("to") {
            if to.get("slot").and_then(Value::as_u64).map(|s| s as usize) != slot {
                return Err(ActError::refused(
                    FailureReason::InvalidParams,
                    "the two elements are in different frames; a drag stays within one document",
                ));
            }
        }
        if let Some(slot) = slot {
            if has_points(&args) {
                let (x, y) = self.tab.frame_origin(slot).await?;
                shift_points(&mut args, -x, -y);
            }
        }
        let target = target.cloned().unwrap_or(Value::Null);
        let op = Value::String(op.to_string());
        let mut reply = self
            .world_call(slot, &format!("A.run({target}, {op}, {args})"))
            .await?;
        if let Some(slot) = slot {
            if has_points(&reply) {
                let (x, y) = self.tab.frame_origin(slot).await?;
                shift_points(&mut reply, x, y);
            }
        }
        Ok(reply)
    }

    /// Calls a helper function that takes no target.
    async fn helper(&self, method: &str, args: Value) -> Result<Value, ActError> {
        self.world_call(None, &format!("A.{method}({args})")).await
    }

    /// Runs an element operation until it passes or the action's time limit
    /// runs out. Returns only while the limit still holds, so the caller's
    /// dispatch that follows is part of the same attempt.
    async fn until_ready(&self, target: &Value, op: &str, args: Value) -> Result<Value, ActError> {
        let started = Instant::now();
        let deadline = started + self.options.action_timeout;
        let backoff_ms = [0u64, 20, 40, 80, 160, 320, 500];
        let mut attempts = 0usize;
        loop {
            attempts += 1;
            match self.run(Some(target), op, args.clone()).await {
                Ok(reply) => {
                    if Instant::now() >= deadline {
                        return Err(ActError::refused(
                            FailureReason::Timeout,
                            format!(
                                "the element became ready only after the {:.1} s limit; nothing was done",
                                self.options.action_timeout.as_secs_f64()
                            ),
                        ));
                    }
                    return Ok(reply);
                }
                Err(ActError::Refused {
                    reason,
                    message,
                    retry: true,
                }) => {
                    let pause =
                        Duration::from_millis(backoff_ms[attempts.min(backoff_ms.len() - 1)]);
                    if Instant::now() + pause >= deadline {
                        return Err(ActError::Refused {
                            reason,
                            message: format!(
                                "{message} (still so after {attempts} attempts over {:.1} s)",
                                started.elapsed().as_secs_f64()
                            ),
                            retry: false,
                        });
                    }
                    tokio::time::sleep(pause).await;
                }
                Err(other) => return Err(other),
            }
        }
    }

    async fn checked_point(&self, target: &Value, hit_test: bool) -> Result<Checked, ActError> {
        let reply = self
            .until_ready(
                target,
                "point",
                json!({"enabled": hit_test, "hitTest": hit_test}),
            )
            .await?;
        point_of(reply)
    }

    // ---- input events ----

    async fn mouse(
        &self,
        kind: DispatchMouseEventType,
        x: f64,
        y: f64,
        pressed: bool,
    ) -> Result<(), ActError> {
        let mut params = DispatchMouseEventParams::new(kind.clone(), x, y);
        params.button = Some(MouseButton::Left);
        params.buttons = Some(if pressed { 1 } else { 0 });
        if kind != DispatchMouseEventType::MouseMoved {
            params.click_count = Some(1);
        }
        self.tab
            .with_timeout(
                "dispatching a mouse event",
                self.tab.call_timeout(),
                self.tab.page().execute(params),
            )
            .await?;
        Ok(())
    }

    /// Moves the mouse onto a checked point of the target and confirms it
    /// is still the target there, retrying like [`Self::until_ready`].
    /// On success the mouse is over the element and the caller presses
    /// at once.
    async fn hover_checked(&self, target: &Value) -> Result<Checked, ActError> {
        let started = Instant::now();
        let deadline = started + self.options.action_timeout;
        let mut attempts = 0usize;
        loop {
            attempts += 1;
            let point = point_of(
                self.until_ready(
                    target,
                    "point",
                    json!({"enabled": true, "hitTest": true, "deferStable": true}),
                )
                .await?,
            )?;
            // A background tab paints no frames, and mouse moves wait for
            // one: bring it to the front, as a person would before clicking.
            if point.reply.get("hidden").and_then(Value::as_bool) == Some(true) {
                self.tab
                    .with_timeout(
                        "bringing the tab to the front",
                        self.tab.call_timeout(),
                        self.tab.page().execute(BringToFrontParams::default()),
                    )
                    .await?;
            }
            // The move waits for the renderer's next frame, which is the
            // frame the stability check compares against.
            self.mouse(DispatchMouseEventType::MouseMoved, point.x, point.y, false)
                .await?;
            let args = json!({
                "x": point.x,
                "y": point.y,
                "box": point.reply.get("box").cloned().unwrap_or(Value::Null),
                "at": point.reply.get("at").cloned().unwrap_or(Value::Null),
            });
            match self.run(Some(target), "confirm", args).await {
                Ok(_) if Instant::now() < deadline => return Ok(point),
                Ok(_) => {
                    return Err(ActError::refused(
                        FailureReason::Timeout,
                        format!(
                        "the element became ready only after the {:.1} s limit; nothing was done",
                        self.options.action_timeout.as_secs_f64()
                    ),
                    ))
                }
                Err(ActError::Refused {
                    reason,
                    message,
                    retry: true,
                }) => {
                    let pause = Duration::from_millis(20 * attempts.min(10) as u64);
                    if Instant::now() + pause >= deadline {
                        return Err(ActError::Refused {
                            reason,
                            message: format!(
                                "{message} (still so after {attempts} attempts over {:.1} s)",
                                started.elapsed().as_secs_f64()
                            ),
                            retry: false,
                        });
                    }
                    tokio::time::sleep(pause).await;
                }
                Err(other) => return Err(other),
            }
        }
    }

    async fn press_release(&self, x: f64, y: f64) -> Result<(), ActError> {
        self.mouse(DispatchMouseEventType::MousePressed, x, y, true)
            .await?;
        self.mouse(DispatchMouseEventType::MouseReleased, x, y, false)
            .await
    }

    async fn keys(&self, chord: &KeyChord) -> Result<(), ActError> {
        self.key_events(&chord.events()).await
    }

    /// Sends key events to whatever has focus, one CDP call each.
    async fn key_events(&self, events: &[KeyEvent]) -> Result<(), ActError> {
        for event in events {
            let kind = match event.kind {
                KeyEventKind::KeyDown => DispatchKeyEventType::KeyDown,
                KeyEventKind::RawKeyDown => DispatchKeyEventType::RawKeyDown,
                KeyEventKind::KeyUp => DispatchKeyEventType::KeyUp,
            };
            let mut params = DispatchKeyEventParams::new(kind);
            params.modifiers = Some(i64::from(event.modifiers.bits()));
            params.key = Some(event.key.clone());
            params.code = Some(event.code.clone());
            params.windows_virtual_key_code = Some(i64::from(event.windows_virtual_key_code));
            params.native_virtual_key_code = Some(i64::from(event.windows_virtual_key_code));
            params.text = event.text.clone();
            params.unmodified_text = event.unmodified_text.clone();
            params.location = Some(i64::from(event.location));
            self.tab
                .with_timeout(
                    "dispatching a key event",
                    self.tab.call_timeout(),
                    self.tab.page().execute(params),
                )
                .await?;
        }
        Ok(())
    }

    // ---- element actions ----

    async fn click(&self, target: &Value) -> Result<ActionResult, ActError> {
        let mut watch = settle::NavWatch::start(self.tab).await;
        let point = self.hover_checked(target).await?;
        self.press_release(point.x, point.y).await?;
        let settled = watch.settle(self.tab, &self.options.settle).await;
        self.finish(
            &point.reply,
            json!({"x": round1(point.x), "y": round1(point.y)}),
            settled,
        )
        .await
    }

    async fn hover(&self, target: &Value) -> Result<ActionResult, ActError> {
        let mut watch = settle::NavWatch::start(self.tab).await;
        let point = self.hover_checked(target).await?;
        let settled = watch.settle(self.tab, &self.options.settle).await;
        self.finish(
            &point.reply,
            json!({"x": round1(point.x), "y": round1(point.y)}),
            settled,
        )
        .await
    }

    async fn fill(
        &self,
        target: &Value,
        text: &str,
        clear: bool,
        content_editable: bool,
    ) -> Result<ActionResult, ActError> {
        let mut watch = settle::NavWatch::start(self.tab).await;
        let args = json!({"text": text, "clear": clear, "contentEditable": content_editable});
        let begun = self.until_ready(target, "beginFill", args.clone()).await?;
        if begun.get("keys").and_then(Value::as_bool) == Some(true) {
            // A widget that is no field: typed into key by key, and there
            // is no value to empty first or to read back.
            let events = typing_events(text);
            self.key_events(&events).await?;
            let settled = watch.settle(self.tab, &self.options.settle).await;
            let presses = events
                .iter()
                .filter(|e| e.kind != KeyEventKind::KeyUp)
                .count();
            let mut extra = json!({"typed": "keystrokes", "keystrokes": presses});
            if let Some(into) = begun.get("into") {
                extra["into"] = into.clone();
            }
            return self.finish(&begun, extra, settled).await;
        }
        let mut reply = begun.clone();
        if begun.get("done").and_then(Value::as_bool) != Some(true) {
            if !text.is_empty() {
                self.tab
                    .with_timeout(
                        "typing text",
                        self.tab.call_timeout(),
                        self.tab.page().execute(InsertTextParams::new(text)),
                    )
                    .await?;
            }
            reply = self.run(Some(target), "endFill", args).await?;
            copy_matches(&begun, &mut reply);
        }
        let settled = watch.settle(self.tab, &self.options.settle).await;
        let extra = json!({
            "value": reply.get("value").cloned().unwrap_or(Value::Null),
            "repaired": reply.get("repaired").cloned().unwrap_or(Value::Bool(false)),
        });
        self.finish(&reply, extra, settled).await
    }

    /// Selects text the way a person does: the mouse pressed just inside
    /// the passage's first character, moved in steps to just inside its
    /// last (the page scrolled there while the button is held, when it is
    /// out of view), and released. `target` is `null` for the whole page.
    async fn select_text(
        &self,
        target: &Value,
        text: Option<&str>,
    ) -> Result<ActionResult, ActError> {
        let mut watch = settle::NavWatch::start(self.tab).await;
        let args = match text {
            Some(text) => json!({"text": text}),
            None => json!({}),
        };
        let start = point_of(self.until_ready(target, "textStart", args).await?)?;
        self.mouse(DispatchMouseEventType::MouseMoved, start.x, start.y, false)
            .await?;
        self.mouse(DispatchMouseEventType::MousePressed, start.x, start.y, true)
            .await?;
        let end = point_of(self.run(Some(target), "textEnd", json!({})).await?)?;
        for (x, y) in drag_path((start.x, start.y), (end.x, end.y), 5)
            .into_iter()
            .skip(1)
        {
            self.mouse(DispatchMouseEventType::MouseMoved, x, y, true)
                .await?;
        }
        self.mouse(DispatchMouseEventType::MouseReleased, end.x, end.y, false)
            .await?;
        let reply = self.run(Some(target), "textSelected", json!({})).await?;
        let settled = watch.settle(self.tab, &self.options.settle).await;
        let mut extra = strip_ok(reply.clone());
        if let Some(count) = start.reply.get("occurrences").and_then(Value::as_u64) {
            if count > 1 {
                extra["occurrences"] = json!(count);
            }
        }
        self.finish(&start.reply, extra, settled).await
    }

    /// One helper operation on an element (retried while waiting could
    /// help when `retry` is set), then settle.
    async fn element_op(
        &self,
        target: &Value,
        op: &str,
        args: Value,
        retry: bool,
    ) -> Result<ActionResult, ActError> {
        let mut watch = settle::NavWatch::start(self.tab).await;
        let reply = if retry {
            self.until_ready(target, op, args).await?
        } else {
            self.run(Some(target), op, args).await?
        };
        let settled = watch.settle(self.tab, &self.options.settle).await;
        let extra = strip_ok(reply.clone());
        self.finish(&reply, extra, settled).await
    }

    async fn press_keys(&self, chord: &KeyChord, repeat: u32) -> Result<ActionResult, ActError> {
        let mut watch = settle::NavWatch::start(self.tab).await;
        let presses = repeat.max(1);
        for _ in 0..presses {
            self.keys(chord).await?;
        }
        let settled = watch.settle(self.tab, &self.options.settle).await;
        self.finish(&json!({}), json!({"presses": presses}), settled)
            .await
    }

    async fn scroll(
        &self,
        direction: ScrollDirection,
        pages: f64,
        target: Option<&Value>,
    ) -> Result<ActionResult, ActError> {
        let mut watch = settle::NavWatch::start(self.tab).await;
        let (vertical, sign) = match direction {
            ScrollDirection::Up => (true, -1),
            ScrollDirection::Down => (true, 1),
            ScrollDirection::Left => (false, -1),
            ScrollDirection::Right => (false, 1),
        };
        let args = json!({"vertical": vertical, "sign": sign, "pages": pages});
        let reply = self.run(target, "scroll", args).await?;
        let settled = watch.settle(self.tab, &self.options.settle).await;
        let extra = strip_ok(reply.clone());
        self.finish(&reply, extra, settled).await
    }

    async fn drag(&self, from: &Value, to: &Value) -> Result<ActionResult, ActError> {
        let mut watch = settle::NavWatch::start(self.tab).await;
        self.checked_point(from, true).await?;
        let end = self.checked_point(to, false).await?;
        // Bringing the drop target into view may have moved the source.
        let start = self.checked_point(from, true).await?;
        let before = self.run(Some(from), "order", json!({"keep": true})).await?;
        let target_order = self.run(Some(to), "order", json!({})).await?;
        let drop = drop_point(&start, &end);
        let path = drag_path((start.x, start.y), drop, 10);
        let draggable = self
            .run(Some(from), "isDraggable", json!({}))
            .await?
            .get("draggable")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let mut accepted = false;
        let mode = if draggable {
            let points: Vec<[f64; 2]> = path.iter().map(|&(x, y)| [x, y]).collect();
            let args = json!({"to": to, "path": points});
            let reply = self.run(Some(from), "html5Drag", args).await?;
            accepted = reply.get("dropped").and_then(Value::as_bool) == Some(true);
            "html5"
        } else {
            self.mouse(DispatchMouseEventType::MouseMoved, start.x, start.y, false)
                .await?;
            self.mouse(DispatchMouseEventType::MousePressed, start.x, start.y, true)
                .await?;
            // Drag libraries wait for a distance threshold, track each
            // position and often reorder on a timer or a frame: move in
            // steps with a frame's pause between them, then rest on the
            // drop point once more before letting go.
            for &(x, y) in &path[1..] {
                self.mouse(DispatchMouseEventType::MouseMoved, x, y, true)
                    .await?;
                tokio::time::sleep(DRAG_STEP_PAUSE).await;
            }
            self.mouse(DispatchMouseEventType::MouseMoved, drop.0, drop.1, true)
                .await?;
            tokio::time::sleep(DRAG_STEP_PAUSE).await;
            self.mouse(DispatchMouseEventType::MouseReleased, drop.0, drop.1, false)
                .await?;
            "mouse"
        };
        let settled = watch.settle(self.tab, &self.options.settle).await;
        let after = self.run(None, "order", json!({"again": true})).await.ok();
        let mut data = json!({"mode": mode});
        match moved(&before, &target_order, after.as_ref()) {
            Moved::Reordered(text) | Moved::Elsewhere(text) | Moved::Unknown(text) => {
                data["order"] = Value::String(text);
            }
            // A drop zone that took the drop keeps the element in place.
            Moved::Unchanged(text) if accepted => {
                data["order"] = Value::String(format!("{text}; the page accepted the drop"));
            }
            Moved::Unchanged(text) => {
                return Ok(ActionResult::fail(FailureReason::NotInteractive, text));
            }
        }
        self.finish(&start.reply, data, settled).await
    }

    async fn upload(&self, target: &Value, path: &str) -> Result<ActionResult, ActError> {
        let file = Path::new(path);
        if !file.is_file() {
            return Ok(ActionResult::invalid_params(format!(
                "upload_file.path: no readable file at {path}"
            )));
        }
        let absolute = std::fs::canonicalize(file).map_err(|source| ActError::File {
            what: "resolving",
            path: file.to_path_buf(),
            source,
        })?;
        let mut watch = settle::NavWatch::start(self.tab).await;
        let token = format!("{:x}", std::process::id() as u128 ^ unique());
        let marked = self
            .run(Some(target), "mark", json!({"token": token}))
            .await?;
        let slot = target
            .get("slot")
            .and_then(Value::as_u64)
            .map(|s| s as usize);
        let selector = format!("input[data-webagent-mark=\"{token}\"]");
        let set = self
            .tab
            .set_input_files(slot, &selector, &absolute.to_string_lossy())
            .await
            .map_err(ActError::from);
        if let Err(err) = self.run(Some(target), "unmark", json!({})).await {
            tracing::debug!(%err, "removing the upload mark");
        }
        set?;
        let settled = watch.settle(self.tab, &self.options.settle).await;
        let name = absolute
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.finish(&marked, json!({"file": name}), settled).await
    }

    async fn overlay(&self, target: Option<&Value>, args: Value) -> Result<ActionResult, ActError> {
        let reply = self.run(target, "overlay", args).await?;
        Ok(ActionResult::ok_with(strip_ok(reply)))
    }

    /// Success data: the action's own fields, selector matches, settle time
    /// and, after a navigation, the new URL.
    async fn finish(
        &self,
        reply: &Value,
        extra: Value,
        settled: Settled,
    ) -> Result<ActionResult, ActError> {
        let mut data = match extra {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                let mut map = Map::new();
                map.insert("value".into(), other);
                map
            }
        };
        for key in ["matched", "used"] {
            if let Some(v) = reply.get(key) {
                data.insert(key.into(), v.clone());
            }
        }
        data.insert("settle_ms".into(), json!(round1(settled.settle_ms)));
        data.insert("navigated".into(), Value::Bool(settled.navigated));
        if settled.navigated {
            if let Ok(url) = self.tab.url().await {
                data.insert("url".into(), Value::String(url));
            }
        }
        if settled.load_timed_out {
            data.insert("load_timed_out".into(), Value::Bool(true));
        }
        Ok(ActionResult::ok_with(Value::Object(data)))
    }
}

/// The pause between drag steps: about a frame, so handlers that work per
/// frame or on short timers see each position.
const DRAG_STEP_PAUSE: Duration = Duration::from_millis(16);

/// Where to let go over the target: past its midpoint in the direction of
/// travel (a quarter of its size in from the far edge), because sortable
/// lists swap places only once the pointer crosses the middle of the item.
fn drop_point(start: &Checked, end: &Checked) -> (f64, f64) {
    let Some([left, top, right, bottom]) = end
        .reply
        .get("box")
        .and_then(|b| serde_json::from_value::<[f64; 4]>(b.clone()).ok())
    else {
        return (end.x, end.y);
    };
    let (dx, dy) = (end.x - start.x, end.y - start.y);
    if dy.abs() >= dx.abs() {
        let y = if dy > 0.0 {
            top + (bottom - top) * 0.75
        } else {
            top + (bottom - top) * 0.25
        };
        (end.x, y)
    } else {
        let x = if dx > 0.0 {
            left + (right - left) * 0.75
        } else {
            left + (right - left) * 0.25
        };
        (x, end.y)
    }
}

/// Points from `from` to `to`: a first small move that passes drag
/// thresholds, then `steps` even steps.
fn drag_path(from: (f64, f64), to: (f64, f64), steps: u32) -> Vec<(f64, f64)> {
    let mut path = vec![from];
    let (dx, dy) = (to.0 - from.0, to.1 - from.1);
    let length = (dx * dx + dy * dy).sqrt();
    if length > 0.0 {
        let nudge = 6.0_f64.min(length / 2.0);
        path.push((from.0 + dx / length * nudge, from.1 + dy / length * nudge));
    }
    for i in 1..=steps.max(1) {
        let t = f64::from(i) / f64::from(steps.max(1));
        path.push((from.0 + dx * t, from.1 + dy * t));
    }
    path
}

/// What a drag did to the dragged element's place, as far as the page
/// shows it.
#[derive(Debug, PartialEq)]
enum Moved {
    /// Same list, new position.
    Reordered(String),
    /// Now in another container.
    Elsewhere(String),
    /// Same list, same position, where the target was in that list too: a
    /// sortable that ignored the drag.
    Unchanged(String),
    /// Not observable (the element was replaced, or was not in a list).
    Unknown(String),
}

fn moved(before: &Value, target: &Value, after: Option<&Value>) -> Moved {
    let num = |v: &Value, k: &str| v.get(k).and_then(Value::as_i64);
    let Some(after) = after else {
        return Moved::Unknown("the dragged element cannot be found any more, so the new order is not known; observe to see it".into());
    };
    if after.get("connected").and_then(Value::as_bool) != Some(true) {
        return Moved::Unknown(
            "the page replaced the dragged element; observe to see the new order".into(),
        );
    }
    let list = before
        .get("list")
        .and_then(Value::as_str)
        .unwrap_or("its list");
    match (
        num(before, "parent"),
        num(after, "parent"),
        num(before, "index"),
        num(after, "index"),
    ) {
        (Some(p0), Some(p1), Some(i0), Some(i1)) if p0 == p1 && i0 != i1 => {
            Moved::Reordered(format!(
                "moved from position {} to {} of {} in {list}",
                i0 + 1,
                i1 + 1,
                num(after, "count").unwrap_or(0)
            ))
        }
        (Some(p0), Some(p1), _, _) if p0 != p1 => Moved::Elsewhere(format!(
            "moved out of {list} into {}",
            after.get("list").and_then(Value::as_str).unwrap_or("another container")
        )),
        (Some(p0), Some(_), Some(i0), Some(_))
            if num(target, "parent") == Some(p0)
                && before.get("kind") == target.get("kind") =>
        {
            Moved::Unchanged(format!(
                "the drag ran, but the element is still at position {} of {} in {list}: the list did not reorder",
                i0 + 1,
                num(before, "count").unwrap_or(0)
            ))
        }
        _ => Moved::Unknown(
            "the element stayed where it was in its container; the drop target may have copied it".into(),
        ),
    }
}

/// Adds the dialogs an action caused to its result: under `dialogs` in a
/// success's data, as a sentence after a failure's message.
fn with_dialogs(result: ActionResult, dialogs: Vec<Value>) -> ActionResult {
    if dialogs.is_empty() {
        return result;
    }
    match result {
        ActionResult::Success { data } => {
            let mut map = match data {
                Some(Value::Object(map)) => map,
                Some(other) => Map::from_iter([("value".to_string(), other)]),
                None => Map::new(),
            };
            map.insert("dialogs".into(), Value::Array(dialogs));
            ActionResult::ok_with(Value::Object(map))
        }
        ActionResult::Failure { reason, message } => {
            let list: Vec<String> = dialogs
                .iter()
                .map(|d| {
                    format!(
                        "{} {}",
                        d["type"].as_str().unwrap_or("dialog"),
                        d["message"]
                    )
                })
                .collect();
            ActionResult::fail(
                reason,
                format!("{message} (dialogs answered: {})", list.join("; ")),
            )
        }
    }
}

/// Whether a helper message carries points or boxes (`x`/`y`, `box`,
/// `path`).
fn has_points(value: &Value) -> bool {
    ["x", "y", "box", "path"]
        .iter()
        .any(|k| value.get(k).is_some_and(|v| !v.is_null()))
}

/// Moves the points and boxes of a helper message by (`dx`, `dy`).
fn shift_points(value: &mut Value, dx: f64, dy: f64) {
    let mv = |v: &mut Value, d: f64| {
        if let Some(n) = v.as_f64() {
            *v = json!(n + d);
        }
    };
    if let Some(x) = value.get_mut("x") {
        mv(x, dx);
    }
    if let Some(y) = value.get_mut("y") {
        mv(y, dy);
    }
    // [left, top, right, bottom]
    if let Some(Value::Array(b)) = value.get_mut("box") {
        for (i, v) in b.iter_mut().enumerate() {
            mv(v, if i % 2 == 0 { dx } else { dy });
        }
    }
    // [[x, y], …]
    if let Some(Value::Array(path)) = value.get_mut("path") {
        for p in path.iter_mut() {
            if let Value::Array(p) = p {
                if let [x, y, ..] = p.as_mut_slice() {
                    mv(x, dx);
                    mv(y, dy);
                }
            }
        }
    }
}

/// Reads the helper's `{ok, …}` reply.
fn reply(value: Value) -> Result<Value, ActError> {
    match value.get("ok").and_then(Value::as_bool) {
        Some(true) => Ok(value),
        Some(false) => {
            let reason = value
                .get("reason")
                .cloned()
                .and_then(|r| serde_json::from_value::<FailureReason>(r).ok())
                .unwrap_or(FailureReason::Unknown);
            let message = value
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("the page-side check failed without saying why")
                .to_string();
            let retry = value.get("retry").and_then(Value::as_bool).unwrap_or(false);
            Err(ActError::Refused {
                reason,
                message,
                retry,
            })
        }
        None => Err(ActError::Browser(BrowserError::Decode(format!(
            "unexpected reply from the action helper: {value}"
        )))),
    }
}

fn point_of(reply: Value) -> Result<Checked, ActError> {
    let x = reply.get("x").and_then(Value::as_f64);
    let y = reply.get("y").and_then(Value::as_f64);
    match (x, y) {
        (Some(x), Some(y)) => Ok(Checked { x, y, reply }),
        _ => Err(ActError::Browser(BrowserError::Decode(format!(
            "the action helper returned no point: {reply}"
        )))),
    }
}

/// The reply without its `ok` flag and the internal `done` marker.
fn strip_ok(mut reply: Value) -> Value {
    if let Value::Object(map) = &mut reply {
        map.remove("ok");
        map.remove("done");
        map.remove("focused");
        map.remove("retry");
    }
    reply
}

fn copy_matches(from: &Value, to: &mut Value) {
    if let Value::Object(map) = to {
        for key in ["matched", "used"] {
            if let Some(v) = from.get(key) {
                map.insert(key.into(), v.clone());
            }
        }
    }
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// A number unlikely to repeat within a run (time in nanoseconds), for
/// marker tokens and file names.
fn unique() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::page::same_document;
    use super::*;

    #[test]
    fn only_a_fragment_change_is_the_same_document() {
        assert!(same_document(
            "http://a.test/p?q=1",
            "http://a.test/p?q=1#s"
        ));
        assert!(same_document("http://a.test/p#x", "http://a.test/p#y"));
        assert!(!same_document("http://a.test/p", "http://a.test/p"));
        assert!(!same_document("http://a.test/p", "http://a.test/other#s"));
        assert!(!same_document("about:blank", "not a url"));
    }

    #[test]
    fn helper_replies_become_results_with_their_reason() {
        let refused = reply(
            json!({"ok": false, "reason": "not_visible", "message": "hidden", "retry": true}),
        );
        match refused {
            Err(ActError::Refused {
                reason,
                message,
                retry,
            }) => {
                assert_eq!(reason, FailureReason::NotVisible);
                assert_eq!(message, "hidden");
                assert!(retry);
            }
            other => panic!("unexpected {other:?}"),
        }
        let odd = reply(json!({"ok": false, "reason": "no_such_reason"}));
        assert_eq!(
            odd.map_err(|e| e.reason()).err(),
            Some(FailureReason::Unknown)
        );
        assert!(reply(json!("missing")).is_err());
        let result: ActionResult = ActError::Browser(BrowserError::ElementGone {
            index: 3,
            detail: "removed".into(),
        })
        .into();
        assert_eq!(result.reason(), Some(FailureReason::NotFound));
    }
}
