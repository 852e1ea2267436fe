//! JavaScript dialogs, answered as they open, for the tab's whole life. A
//! dialog blocks its page: no load event, no evaluation, no input until it
//! is answered. Answering only while an action runs left an `alert()` in
//! a page's first load (a session's start page, a tab taken over, a page
//! reopened after a crash) to block that load until its time limit. So
//! each tab answers its own dialogs from the moment webagent holds it, and
//! keeps a log of them: an action's result lists those it caused, and the
//! driver reports the page's own.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::{
    DialogType, EventJavascriptDialogOpening, HandleJavaScriptDialogParams,
};
use chromiumoxide::Page;
use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::task::JoinHandle;

use super::Tab;

/// How many dialogs the log keeps (a page opening them in a loop must not
/// grow it without end).
const LOG_LIMIT: usize = 200;

/// One dialog the tab answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnsweredDialog {
    /// Grows with each dialog (see [`Tab::dialog_mark`]).
    pub seq: u64,
    /// `alert`, `confirm`, `prompt` or `beforeunload`; `unknown` for one
    /// already open when webagent took the tab over.
    pub kind: String,
    /// The text the page showed.
    pub message: String,
    /// Whether it was accepted (rather than dismissed).
    pub accepted: bool,
}

impl AnsweredDialog {
    /// As an action's result lists it.
    pub fn to_json(&self) -> Value {
        json!({"type": self.kind, "message": self.message, "accepted": self.accepted})
    }

    /// In words: `alert "Saved" (accepted)`.
    pub fn describe(&self) -> String {
        let answer = if self.accepted {
            "accepted"
        } else {
            "dismissed"
        };
        format!("{} {:?} ({answer})", self.kind, self.message)
    }
}

/// The dialogs a tab answered, and how it answers the next ones.
#[derive(Debug, Default)]
pub(super) struct DialogLog {
    answered: Mutex<Vec<AnsweredDialog>>,
    /// Accept `confirm` and `prompt` (else dismiss them).
    accept: AtomicBool,
    /// What an accepted `prompt` is answered with.
    prompt_text: Mutex<Option<String>>,
    /// Leave dialogs to the person (while a recording runs: they answer
    /// in the window or the workbench, and the answer is a step).
    held: AtomicBool,
    /// The last dialog already told about.
    reported: AtomicU64,
}

impl DialogLog {
    fn record(&self, kind: String, message: String, accepted: bool) {
        let mut log = self.answered.lock().unwrap_or_else(|e| e.into_inner());
        let seq = log.last().map_or(1, |d| d.seq + 1);
        log.push(AnsweredDialog {
            seq,
            kind,
            message,
            accepted,
        });
        if log.len() > LOG_LIMIT {
            let excess = log.len() - LOG_LIMIT;
            log.drain(..excess);
        }
    }

    fn mark(&self) -> u64 {
        let log = self.answered.lock().unwrap_or_else(|e| e.into_inner());
        log.last().map_or(0, |d| d.seq)
    }

    fn since(&self, mark: u64) -> Vec<AnsweredDialog> {
        let log = self.answered.lock().unwrap_or_else(|e| e.into_inner());
        log.iter().filter(|d| d.seq > mark).cloned().collect()
    }
}

/// A tab's dialogs left to the person (see [`Tab::hold_dialogs`]); the
/// tab answers them again once this is dropped.
#[derive(Debug)]
pub struct DialogHold(Arc<DialogLog>);

impl Drop for DialogHold {
    fn drop(&mut self) {
        self.0.held.store(false, Ordering::Relaxed);
    }
}

/// Answers every dialog `page` opens, logging it in `log` first (so an
/// action blocked by one finds it logged), within `limit` each. One
/// already open when this starts (a popup's, before the tab was taken
/// over) is dismissed blind: its event was sent before anyone listened.
pub(super) async fn answer_dialogs(
    page: &Page,
    log: Arc<DialogLog>,
    limit: Duration,
) -> Option<JoinHandle<()>> {
    let mut opened = match page.event_listener::<EventJavascriptDialogOpening>().await {
        Ok(opened) => opened,
        Err(error) => {
            tracing::warn!(%error, "cannot watch for dialogs; one would block the page");
            return None;
        }
    };
    let page = page.clone();
    Some(tokio::spawn(async move {
        let blind = HandleJavaScriptDialogParams::new(false);
        // "No dialog is showing" is the usual answer.
        if let Ok(Ok(_)) = tokio::time::timeout(limit, page.execute(blind)).await {
            log.record(
                "unknown".into(),
                "(open before webagent took the tab over)".into(),
                false,
            );
        }
        while let Some(dialog) = opened.next().await {
            if log.held.load(Ordering::Relaxed) {
                continue;
            }
            let accept = match dialog.r#type {
                DialogType::Alert | DialogType::Beforeunload => true,
                DialogType::Confirm | DialogType::Prompt => log.accept.load(Ordering::Relaxed),
            };
            let kind = dialog.r#type.as_ref().to_string();
            log.record(kind.clone(), dialog.message.clone(), accept);
            let mut answer = HandleJavaScriptDialogParams::new(accept);
            if accept && dialog.r#type == DialogType::Prompt {
                answer.prompt_text = log
                    .prompt_text
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone();
            }
            match tokio::time::timeout(limit, page.execute(answer)).await {
                Ok(Ok(_)) => {}
                Ok(Err(error)) => tracing::warn!(%error, "could not answer a {kind} dialog"),
                Err(_) => tracing::warn!("answering a {kind} dialog took over {limit:?}"),
            }
        }
    }))
}

impl Tab {
    /// Whether `confirm` and `prompt` dialogs are accepted from now on
    /// (alerts and leave-page prompts always are; dismissed by default),
    /// and what an accepted prompt is answered with (`None`: its default).
    pub fn set_dialog_answer(&self, accept: bool, prompt_text: Option<String>) {
        self.dialogs.accept.store(accept, Ordering::Relaxed);
        *self
            .dialogs
            .prompt_text
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = prompt_text;
    }

    /// Leaves the dialogs that open from now on to the person, until the
    /// hold is dropped. While they are held, a dialog blocks its page until
    /// someone answers it ([`Tab::answer_dialog`], or the window's own
    /// buttons).
    pub fn hold_dialogs(&self) -> DialogHold {
        self.dialogs.held.store(true, Ordering::Relaxed);
        DialogHold(Arc::clone(&self.dialogs))
    }

    /// The number of the latest dialog answered (0 when none yet), to
    /// ask for the ones after it ([`Tab::dialogs_since`]).
    pub fn dialog_mark(&self) -> u64 {
        self.dialogs.mark()
    }

    /// Dialogs answered after `mark`, oldest first; they count as told
    /// about.
    pub fn dialogs_since(&self, mark: u64) -> Vec<AnsweredDialog> {
        let since = self.dialogs.since(mark);
        if let Some(last) = since.last() {
            self.dialogs.reported.fetch_max(last.seq, Ordering::Relaxed);
        }
        since
    }

    /// Dialogs answered that nobody told about yet (the page's own, while
    /// it loaded or between actions); they count as told about now.
    pub fn unreported_dialogs(&self) -> Vec<AnsweredDialog> {
        self.dialogs_since(self.dialogs.reported.load(Ordering::Relaxed))
    }
}
