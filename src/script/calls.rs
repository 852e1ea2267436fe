//! What a script call on this thread holds while it runs: its cancel
//! flag, its channel to the host, how deeply custom actions nest, and the
//! source of the files it loaded. The engine sets it up for each call;
//! the host functions, the debugger and the error text read it. It sits
//! below all three, so none of them imports another back.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rhai::{Dynamic, EvalAltResult, Position};
use serde_json::Value;

use super::bounds;
use super::host::HostCall;

/// The answer channel of one host call.
pub(crate) type Reply = std::sync::mpsc::Sender<Result<Value, String>>;

/// The script thread's end of the channel to the host.
pub(crate) type Bridge = tokio::sync::mpsc::UnboundedSender<(HostCall, Reply)>;

/// The text of a loaded file by its name, for the line an error shows.
pub(crate) type Sources = Arc<dyn Fn(&str) -> Option<Arc<str>> + Send + Sync>;

type HostResult<T> = Result<T, Box<EvalAltResult>>;

thread_local! {
    /// The cancel flag of the call running on this thread.
    static CANCEL: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
    /// The channel to the host while an action or recipe runs.
    static BRIDGE: RefCell<Option<Bridge>> = const { RefCell::new(None) };
    /// How deeply custom actions call each other.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    /// The files the call loaded.
    static SOURCES: RefCell<Option<Sources>> = const { RefCell::new(None) };
}

/// Sets up this (script) thread for one call.
pub(crate) fn enter(cancel: Arc<AtomicBool>, bridge: Option<Bridge>, sources: Sources) {
    CANCEL.with(|c| *c.borrow_mut() = Some(cancel));
    BRIDGE.with(|b| *b.borrow_mut() = bridge);
    SOURCES.with(|s| *s.borrow_mut() = Some(sources));
    DEPTH.with(|d| d.set(0));
}

/// The text of `file` when the call on this thread loaded it (for the
/// line an error points at).
pub(crate) fn loaded_source(file: &str) -> Option<Arc<str>> {
    SOURCES.with(|s| s.borrow().as_ref().and_then(|sources| sources(file)))
}

/// Whether the call on this thread was cancelled.
pub(crate) fn cancelled() -> bool {
    CANCEL.with(|c| {
        c.borrow()
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::Relaxed))
    })
}

/// How deeply custom actions are calling each other on this thread.
pub(crate) fn action_depth() -> usize {
    DEPTH.with(Cell::get)
}

/// Sets how deeply custom actions are calling each other.
pub(crate) fn set_action_depth(depth: usize) {
    DEPTH.with(|d| d.set(depth));
}

/// The channel to the host, while an action or recipe runs.
pub(crate) fn bridge() -> Option<Bridge> {
    BRIDGE.with(|b| b.borrow().clone())
}

/// A script error with `message` at `pos`.
pub(crate) fn runtime(message: impl Into<String>, pos: Position) -> Box<EvalAltResult> {
    EvalAltResult::ErrorRuntime(Dynamic::from(message.into()), pos).into()
}

/// Sends one call to the host and waits for its answer.
pub(crate) fn host_call(call: HostCall, pos: Position) -> HostResult<Value> {
    let bridge = bridge().ok_or_else(|| {
        runtime(
            "page functions only work while an action or recipe runs, not while the file loads",
            pos,
        )
    })?;
    if bounds::timed_out() {
        return Err(bounds::time_limit_error(pos));
    }
    let (reply_tx, reply_rx) = std::sync::mpsc::channel();
    if bridge.send((call, reply_tx)).is_err() {
        return Err(runtime("the host stopped listening to the script", pos));
    }
    match reply_rx.recv() {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(message)) => Err(runtime(message, pos)),
        Err(_) if cancelled() => {
            Err(EvalAltResult::ErrorTerminated(Dynamic::from(bounds::CANCELLED), pos).into())
        }
        Err(_) if bounds::timed_out() => Err(bounds::time_limit_error(pos)),
        Err(_) => Err(runtime("the host went away before answering", pos)),
    }
}
