//! Running script on listed elements: by index (exactly the node an
//! observation listed, in whichever world it lives) or by CSS selector,
//! and reading the observer's answer into a value or a typed error.

use super::Tab;
use crate::browser::error::BrowserError;
use crate::dom::ElementIndex;

impl Tab {
    /// Runs `function` — JavaScript source of `(element, args, helpers) =>
    /// value` — on exactly the element listed as `index` by observation
    /// `observation`, in the isolated world, and returns its JSON value.
    ///
    /// `helpers.topRect(el)` gives the element's box in top-level viewport
    /// coordinates (frame offsets added); `helpers.composedParent(el)` steps
    /// out of shadow roots.
    pub async fn eval_on_index(
        &self,
        observation: u64,
        index: ElementIndex,
        function: &str,
        args: serde_json::Value,
    ) -> Result<serde_json::Value, BrowserError> {
        let (slot, seq, local) = self.element_route(observation, index.0).await?;
        let expression =
            format!("globalThis.__webagentObserver.call({seq}, {local}, ({function}), {args})");
        let (value, fresh) = self
            .eval_in(slot, &expression, "running script on an element")
            .await?;
        if fresh {
            return Err(BrowserError::ElementGone {
                index: index.0,
                detail: "the page navigated or reloaded since it was listed".into(),
            });
        }
        self.unwrap_call(value, index.0, "")
    }

    /// Runs `function` — `(elements, args, helpers) => value` — on the
    /// elements a CSS selector matches in the top document.
    pub async fn eval_on_selector(
        &self,
        selector: &str,
        function: &str,
        args: serde_json::Value,
    ) -> Result<serde_json::Value, BrowserError> {
        self.eval_on_selector_in(None, selector, function, args)
            .await
    }

    /// [`Tab::eval_on_selector`] in the document of frame `slot` (of
    /// another origin; `None`: the top document).
    pub(crate) async fn eval_on_selector_in(
        &self,
        slot: Option<usize>,
        selector: &str,
        function: &str,
        args: serde_json::Value,
    ) -> Result<serde_json::Value, BrowserError> {
        let quoted = serde_json::Value::String(selector.to_string());
        let expression =
            format!("globalThis.__webagentObserver.callSelector({quoted}, ({function}), {args})");
        let (value, _) = self
            .eval_in(slot, &expression, "running script on a selector")
            .await?;
        self.unwrap_call(value, 0, selector)
    }

    pub(super) fn unwrap_call(
        &self,
        value: serde_json::Value,
        index: usize,
        selector: &str,
    ) -> Result<serde_json::Value, BrowserError> {
        let text = value
            .as_str()
            .ok_or_else(|| BrowserError::Decode(format!("expected a JSON string, got {value}")))?;
        let mut reply: serde_json::Value =
            serde_json::from_str(text).map_err(|e| BrowserError::Decode(e.to_string()))?;
        if reply.get("ok").and_then(|v| v.as_bool()) == Some(true) {
            return Ok(reply
                .get_mut("value")
                .map(serde_json::Value::take)
                .unwrap_or_default());
        }
        let detail = reply
            .get("detail")
            .and_then(|v| v.as_str())
            .unwrap_or("no detail")
            .to_string();
        Err(match reply.get("error").and_then(|v| v.as_str()) {
            Some("gone") => BrowserError::ElementGone { index, detail },
            Some("stale") => BrowserError::StaleObservation { index, detail },
            Some("unknown") => BrowserError::UnknownIndex { index, detail },
            Some("selector") => BrowserError::Selector {
                selector: selector.to_string(),
                detail,
            },
            _ => BrowserError::Script(detail),
        })
    }
}
