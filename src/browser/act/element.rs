//! The actions on one element: click, hover, fill, select text, the
//! helper's element operations, scroll, upload and overlays, and the
//! success data every action's result carries.

use std::path::Path;

use chromiumoxide::cdp::browser_protocol::input::DispatchMouseEventType;
use serde_json::{json, Map, Value};

use super::aim::point_of;
use super::drag::drag_path;
use super::error::ActError;
use super::replies::{copy_matches, round1, strip_ok};
use super::settle::{self, Settled};
use super::{unique, Executor};
use crate::actions::{
    field_typing, typing_events, ActionResult, KeyEventKind, ScrollDirection, TypedPart,
};

impl Executor<'_> {
    pub(super) async fn click(&self, target: &Value) -> Result<ActionResult, ActError> {
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

    pub(super) async fn hover(&self, target: &Value) -> Result<ActionResult, ActError> {
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

    pub(super) async fn fill(
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
            let multiline = begun.get("multiline").and_then(Value::as_bool) == Some(true);
            let typing = if self.options.type_keys {
                field_typing(text, multiline)
            } else {
                vec![TypedPart::Text(text.to_string())]
            };
            self.type_into_focus(&typing).await?;
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
    pub(super) async fn select_text(
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
    pub(super) async fn element_op(
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

    pub(super) async fn scroll(
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

    pub(super) async fn upload(
        &self,
        target: &Value,
        path: &str,
    ) -> Result<ActionResult, ActError> {
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

    pub(super) async fn overlay(
        &self,
        target: Option<&Value>,
        args: Value,
    ) -> Result<ActionResult, ActError> {
        let reply = self.run(target, "overlay", args).await?;
        Ok(ActionResult::ok_with(strip_ok(reply)))
    }

    /// Success data: the action's own fields, selector matches, settle time
    /// and, after a navigation, the new URL.
    pub(super) async fn finish(
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
