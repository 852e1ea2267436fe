//! Mouse and keys: real `Input.dispatchMouseEvent` and
//! `Input.dispatchKeyEvent` events in top-level coordinates, text typed
//! into the focus, and the `press_keys` action.

use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType,
    InsertTextParams, MouseButton,
};
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use serde_json::json;

use super::error::ActError;
use super::settle;
use super::Executor;
use crate::actions::{ActionResult, KeyChord, KeyEvent, KeyEventKind, TypedPart};
use crate::browser::error::BrowserError;

impl Executor<'_> {
    pub(super) async fn mouse(
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

    pub(super) async fn press_release(&self, x: f64, y: f64) -> Result<(), ActError> {
        self.mouse(DispatchMouseEventType::MousePressed, x, y, true)
            .await?;
        self.mouse(DispatchMouseEventType::MouseReleased, x, y, false)
            .await
    }

    async fn keys(&self, chord: &KeyChord) -> Result<(), ActError> {
        self.key_events(&chord.events()).await
    }

    /// Sends key events to whatever has focus, in order (see [`InOrder`]).
    pub(super) async fn key_events(&self, events: &[KeyEvent]) -> Result<(), ActError> {
        let mut sent = InOrder::default();
        for event in events {
            self.send_key(&mut sent, event).await?;
        }
        Ok(sent.answered().await?)
    }

    /// Types into whatever has focus, in order (see [`InOrder`]): key
    /// presses, and text put in at once (`Input.insertText`, which the
    /// page sees as typing: one `beforeinput` and `input`, no key events).
    pub(super) async fn type_into_focus(&self, parts: &[TypedPart]) -> Result<(), ActError> {
        let mut sent = InOrder::default();
        for part in parts {
            match part {
                TypedPart::Keys(events) => {
                    for event in events {
                        self.send_key(&mut sent, event).await?;
                    }
                }
                TypedPart::Text(text) => {
                    let call = self.tab.with_timeout(
                        "typing text",
                        self.tab.call_timeout(),
                        self.tab.page().execute(InsertTextParams::new(text)),
                    );
                    sent.send(call).await?;
                }
            }
        }
        Ok(sent.answered().await?)
    }

    async fn send_key<'a>(
        &'a self,
        sent: &mut InOrder<'a>,
        event: &KeyEvent,
    ) -> Result<(), BrowserError> {
        let call = self.tab.with_timeout(
            "dispatching a key event",
            self.tab.call_timeout(),
            self.tab.page().execute(key_event_params(event)),
        );
        sent.send(call).await
    }

    pub(super) async fn press_keys(
        &self,
        chord: &KeyChord,
        repeat: u32,
    ) -> Result<ActionResult, ActError> {
        let mut watch = settle::NavWatch::start(self.tab).await;
        let presses = repeat.max(1);
        for _ in 0..presses {
            self.keys(chord).await?;
        }
        let settled = watch.settle(self.tab, &self.options.settle).await;
        self.finish(&json!({}), json!({"presses": presses}), settled)
            .await
    }
}

/// The CDP event for one key event (shared by actions and the keys a
/// person types on the workbench's page pane).
pub(crate) fn key_event_params(event: &KeyEvent) -> DispatchKeyEventParams {
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
    params
}

/// Input sent to a tab one call after another without waiting for each
/// answer, then the answers awaited together. Chromium takes a tab's input
/// in the order it comes and answers a key event only once the page has
/// handled it, so waiting for each answer before sending the next would
/// cost a round trip through the page per key; the page still handles
/// every key, its listeners and its `input` event, before the next.
#[derive(Default)]
struct InOrder<'a> {
    waiting: Vec<Answer<'a>>,
}

/// The answer to one call sent ahead.
type Answer<'a> = Pin<Box<dyn Future<Output = Result<(), BrowserError>> + Send + 'a>>;

impl<'a> InOrder<'a> {
    /// Sends one call: its first poll hands the command to the CDP client,
    /// which writes commands out in the order it was handed them.
    async fn send<T: Send + 'a>(
        &mut self,
        call: impl Future<Output = Result<T, BrowserError>> + Send + 'a,
    ) -> Result<(), BrowserError> {
        let mut call: Answer<'a> = Box::pin(async move { call.await.map(|_| ()) });
        match futures_util::poll!(call.as_mut()) {
            Poll::Ready(answer) => answer,
            Poll::Pending => {
                self.waiting.push(call);
                Ok(())
            }
        }
    }

    /// Waits for every answer; the first failure, if any.
    async fn answered(self) -> Result<(), BrowserError> {
        for call in self.waiting {
            call.await?;
        }
        Ok(())
    }
}
