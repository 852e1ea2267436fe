//! What a run sent on its event channel, read back once it is over.

use tokio::sync::mpsc;
use webagent::events::Event;

/// The events waiting on `rx`, in order; nothing more is waited for.
pub fn drain(mut rx: mpsc::UnboundedReceiver<Event>) -> Vec<Event> {
    let mut events = Vec::new();
    while let Ok(event) = rx.try_recv() {
        events.push(event);
    }
    events
}
