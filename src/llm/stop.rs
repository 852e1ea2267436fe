//! Stopping a call: the [`StopHandle`] whoever takes the person's stop
//! holds, and the [`StopSignal`] each call watches. Kept apart from the
//! client so a caller that only stops calls needs nothing else of it.

use std::future::pending;

use tokio::sync::watch;

/// The side that stops calls: held by whoever takes the user's stop.
#[derive(Debug)]
pub struct StopHandle(watch::Sender<bool>);

impl StopHandle {
    /// Stops every call holding a signal of this handle, now and later.
    pub fn stop(&self) {
        self.0.send_replace(true);
    }
}

/// The side a call watches; cheap to clone into each call.
#[derive(Debug, Clone)]
pub struct StopSignal(Option<watch::Receiver<bool>>);

impl StopSignal {
    /// A signal that never fires (for callers without a stop button).
    pub fn never() -> Self {
        StopSignal(None)
    }

    /// Whether the stop was given.
    pub fn is_stopped(&self) -> bool {
        self.0.as_ref().is_some_and(|rx| *rx.borrow())
    }

    /// Completes once the stop is given; never, if the handle is dropped
    /// without stopping.
    pub async fn stopped(&self) {
        let Some(rx) = &self.0 else {
            return pending().await;
        };
        let mut rx = rx.clone();
        loop {
            if *rx.borrow_and_update() {
                return;
            }
            if rx.changed().await.is_err() {
                return pending().await;
            }
        }
    }
}

/// A connected pair: the handle stops the calls that watch the signal.
pub fn stop_pair() -> (StopHandle, StopSignal) {
    let (tx, rx) = watch::channel(false);
    (StopHandle(tx), StopSignal(Some(rx)))
}
