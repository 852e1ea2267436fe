//! JavaScript dialogs an action causes, answered at once so they cannot
//! block the page the action waits on.

use chromiumoxide::cdp::browser_protocol::page::{
    DialogType, EventJavascriptDialogOpening, HandleJavaScriptDialogParams,
};
use futures_util::StreamExt;
use serde_json::{json, Value};

use super::Executor;

impl Executor<'_> {
    /// Drives `work` while answering JavaScript dialogs it causes. A dialog
    /// blocks the page, and with it every input event and evaluation the
    /// action is waiting on, so it is answered at once: alerts and
    /// beforeunload accepted, confirm and prompt dismissed unless
    /// [`super::ExecOptions::accept_dialogs`]. Each one is reported in the
    /// result.
    pub(super) async fn answering_dialogs<T>(
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
}
