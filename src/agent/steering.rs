//! The person's hand on a run while it goes: messages that reach the model
//! with its next request, and asking the model again for a step that
//! failed. The person's side holds a clone and never waits; the run takes
//! what is waiting at each step.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Notify;

#[derive(Debug, Default)]
struct Inbox {
    messages: Vec<String>,
    retry: Option<usize>,
}

/// A run's inbox for the person's messages and retries.
#[derive(Debug, Clone, Default)]
pub struct Steering {
    inbox: Arc<Mutex<Inbox>>,
    retry_asked: Arc<Notify>,
}

impl Steering {
    /// An empty inbox.
    pub fn new() -> Self {
        Steering::default()
    }

    fn inbox(&self) -> std::sync::MutexGuard<'_, Inbox> {
        self.inbox.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Leaves a message for the model; it goes with the next request
    /// built (one already on its way does not carry it, and it is not
    /// lost).
    pub fn say(&self, text: impl Into<String>) {
        let text = text.into();
        if !text.trim().is_empty() {
            self.inbox().messages.push(text);
        }
    }

    /// Asks the model again for `step` (the run's last, failed, step). A
    /// model call already going for the step after it is abandoned.
    pub fn retry(&self, step: usize) {
        self.inbox().retry = Some(step);
        self.retry_asked.notify_one();
    }

    /// The messages waiting, oldest first; the inbox keeps none.
    pub fn take_messages(&self) -> Vec<String> {
        std::mem::take(&mut self.inbox().messages)
    }

    /// The step asked for again, if any; the inbox keeps none.
    pub fn take_retry(&self) -> Option<usize> {
        self.inbox().retry.take()
    }

    /// Resolves when a retry is asked for (at once when one waits), taking
    /// it.
    pub async fn next_retry(&self) -> usize {
        loop {
            let asked = self.retry_asked.notified();
            if let Some(step) = self.take_retry() {
                return step;
            }
            asked.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_wait_until_taken_and_a_retry_wakes_a_waiter() {
        let steering = Steering::new();
        steering.say("the export button is in the ⋯ menu");
        steering.say("  ");
        let clone = steering.clone();
        assert_eq!(
            clone.take_messages(),
            vec!["the export button is in the ⋯ menu".to_string()]
        );
        assert!(steering.take_messages().is_empty());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let waiter = steering.clone();
            let waiting = tokio::spawn(async move { waiter.next_retry().await });
            tokio::task::yield_now().await;
            clone.retry(4);
            assert_eq!(waiting.await.unwrap(), 4);
            assert_eq!(steering.take_retry(), None, "taken once");
        });
    }
}
