//! Dragging one element onto another: by HTML5 drag events when the
//! element is draggable, else by the mouse in small steps, and what the
//! drag did to the element's place as far as the page shows it.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::input::DispatchMouseEventType;
use serde_json::{json, Value};

use super::aim::Checked;
use super::error::ActError;
use super::settle;
use super::Executor;
use crate::actions::{ActionResult, FailureReason};

impl Executor<'_> {
    pub(super) async fn drag(&self, from: &Value, to: &Value) -> Result<ActionResult, ActError> {
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
pub(super) fn drag_path(from: (f64, f64), to: (f64, f64), steps: u32) -> Vec<(f64, f64)> {
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
