//! Talking to the action helper in the page: one call in the right world
//! (installing the helper into a document that lacks it), with points and
//! boxes moved between a frame's coordinates and the top page's.

use serde_json::Value;

use super::error::ActError;
use super::replies::{has_points, reply, shift_points};
use super::Executor;
use crate::actions::FailureReason;
use crate::browser::scripts::ACT_JS;

impl Executor<'_> {
    /// Evaluates `call` (an expression using `A` for the helper) in the
    /// world, installing the helper first when the document is new.
    pub(super) async fn world_call(
        &self,
        slot: Option<usize>,
        call: &str,
    ) -> Result<Value, ActError> {
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
    pub(super) async fn run(
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
    pub(super) async fn helper(&self, method: &str, args: Value) -> Result<Value, ActError> {
        self.world_call(None, &format!("A.{method}({args})")).await
    }
}
