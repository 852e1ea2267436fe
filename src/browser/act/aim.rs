//! Aiming: where an action lands. A target becomes the helper's view of
//! it (through frames of other origins when a selector says so), and its
//! point is checked (attached, visible, enabled, not covered, not moving)
//! until it is ready or the action's time limit runs out.

use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::input::DispatchMouseEventType;
use chromiumoxide::cdp::browser_protocol::page::BringToFrontParams;
use serde_json::{json, Value};

use super::error::ActError;
use super::Executor;
use crate::actions::{FailureReason, Target};
use crate::browser::error::BrowserError;

/// A point in top-level viewport coordinates, plus what the check reported.
pub(super) struct Checked {
    pub(super) x: f64,
    pub(super) y: f64,
    pub(super) reply: Value,
}

impl Executor<'_> {
    /// The helper's view of a target: the world it lives in (`slot`, left
    /// out for the top document) with that world's observation and index,
    /// or a selector.
    pub(super) async fn aim(
        &self,
        target: &Target,
        observation: Option<u64>,
    ) -> Result<Value, ActError> {
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

    /// The URL of the document of another origin that holds `target` (a
    /// frame's own, read from it now); `None` when the target is in the
    /// top document (or a frame of its origin, which the observer walks
    /// as part of it). `Err` when the target or its frame cannot be found.
    pub async fn frame_url_of(
        &self,
        target: &Target,
        observation: Option<u64>,
    ) -> Result<Option<String>, String> {
        let spec = self
            .aim(target, observation)
            .await
            .map_err(|e| e.to_string())?;
        let Some(slot) = spec.get("slot").and_then(Value::as_u64) else {
            return Ok(None);
        };
        // A document without a network address (`about:srcdoc`, a
        // sandboxed frame) is judged by its origin: a sandbox's is opaque
        // (`null`), which no site matches.
        let (value, _) = self
            .tab
            .eval_in(
                Some(slot as usize),
                "(location.protocol === 'http:' || location.protocol === 'https:') \
                 ? location.href : location.origin + '/'",
                "reading a frame's address",
            )
            .await
            .map_err(|e| e.to_string())?;
        value
            .as_str()
            .map(|url| Some(url.to_string()))
            .ok_or_else(|| "the frame did not say its address".to_string())
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

    /// Runs an element operation until it passes or the action's time limit
    /// runs out. Returns only while the limit still holds, so the caller's
    /// dispatch that follows is part of the same attempt.
    pub(super) async fn until_ready(
        &self,
        target: &Value,
        op: &str,
        args: Value,
    ) -> Result<Value, ActError> {
        let mut attempts = Attempts::start(self.options.action_timeout);
        let backoff_ms = [0u64, 20, 40, 80, 160, 320, 500];
        loop {
            let attempt = attempts.count_one();
            match self.run(Some(target), op, args.clone()).await {
                Ok(reply) => return attempts.in_time(reply),
                Err(ActError::Refused {
                    reason,
                    message,
                    retry: true,
                }) => {
                    let pause =
                        Duration::from_millis(backoff_ms[attempt.min(backoff_ms.len() - 1)]);
                    attempts.pause_or_give_up(reason, message, pause).await?;
                }
                Err(other) => return Err(other),
            }
        }
    }

    pub(super) async fn checked_point(
        &self,
        target: &Value,
        hit_test: bool,
    ) -> Result<Checked, ActError> {
        let reply = self
            .until_ready(
                target,
                "point",
                json!({"enabled": hit_test, "hitTest": hit_test}),
            )
            .await?;
        point_of(reply)
    }

    /// Moves the mouse onto a checked point of the target and confirms it
    /// is still the target there, retrying like [`Self::until_ready`].
    /// On success the mouse is over the element and the caller presses
    /// at once.
    pub(super) async fn hover_checked(&self, target: &Value) -> Result<Checked, ActError> {
        let mut attempts = Attempts::start(self.options.action_timeout);
        loop {
            let attempt = attempts.count_one();
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
                Ok(_) => return attempts.in_time(point),
                Err(ActError::Refused {
                    reason,
                    message,
                    retry: true,
                }) => {
                    let pause = Duration::from_millis(20 * attempt.min(10) as u64);
                    attempts.pause_or_give_up(reason, message, pause).await?;
                }
                Err(other) => return Err(other),
            }
        }
    }
}

/// The attempts of one action against its time limit: both the wait for a
/// ready element and the hover that confirms it count and give up alike.
struct Attempts {
    started: Instant,
    limit: Duration,
    count: usize,
}

impl Attempts {
    fn start(limit: Duration) -> Self {
        Attempts {
            started: Instant::now(),
            limit,
            count: 0,
        }
    }

    /// Counts one more attempt and says which it is (the first is 1).
    fn count_one(&mut self) -> usize {
        self.count += 1;
        self.count
    }

    fn deadline(&self) -> Instant {
        self.started + self.limit
    }

    /// What a passed check gives, unless the limit ran out meanwhile: an
    /// element ready too late is refused, and nothing is done to it.
    fn in_time<T>(&self, passed: T) -> Result<T, ActError> {
        if Instant::now() >= self.deadline() {
            return Err(ActError::refused(
                FailureReason::Timeout,
                format!(
                    "the element became ready only after the {:.1} s limit; nothing was done",
                    self.limit.as_secs_f64()
                ),
            ));
        }
        Ok(passed)
    }

    /// Waits `pause` before the next attempt, or, when the limit would run
    /// out first, gives up with the last refusal and how long it lasted.
    async fn pause_or_give_up(
        &self,
        reason: FailureReason,
        message: String,
        pause: Duration,
    ) -> Result<(), ActError> {
        if Instant::now() + pause >= self.deadline() {
            return Err(ActError::Refused {
                reason,
                message: format!(
                    "{message} (still so after {} attempts over {:.1} s)",
                    self.count,
                    self.started.elapsed().as_secs_f64()
                ),
                retry: false,
            });
        }
        tokio::time::sleep(pause).await;
        Ok(())
    }
}

pub(super) fn point_of(reply: Value) -> Result<Checked, ActError> {
    let x = reply.get("x").and_then(Value::as_f64);
    let y = reply.get("y").and_then(Value::as_f64);
    match (x, y) {
        (Some(x), Some(y)) => Ok(Checked { x, y, reply }),
        _ => Err(ActError::Browser(BrowserError::Decode(format!(
            "the action helper returned no point: {reply}"
        )))),
    }
}
