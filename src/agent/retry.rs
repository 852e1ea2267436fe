//! A step asked again: the person's retry from the workbench (only for
//! the run's last step, when it failed) or at the approval instead of an
//! answer. The failed attempt stays in the history, marked.

use crate::environment::Environment;
use crate::events::Event;

use super::conversation;
use super::run::{Agent, RunState, StepEnd};

impl<E: Environment> Agent<E> {
    /// A retry the person asked for, when it names the step that may be
    /// asked again (the last one, failed); any other is reported and
    /// dropped.
    pub(super) fn retry_asked(&self, state: &mut RunState) -> Option<usize> {
        let asked = self.steering.as_ref()?.take_retry()?;
        self.accept_retry(asked, state)
    }

    pub(super) fn accept_retry(&self, asked: usize, state: &mut RunState) -> Option<usize> {
        if state.last_failed == Some(asked) {
            // The failed attempt stays in the history, marked, so the
            // model does not answer the same again.
            conversation::mark_retried(&mut state.history, asked);
            state.last_failed = None;
            self.emit(Event::StepRetried {
                step: asked,
                reason: "the person asked the model again for this failed step".into(),
            });
            return Some(asked);
        }
        self.emit(Event::Error {
            error: format!(
                "step {asked} cannot be asked again: only the run's last step, when it failed"
            ),
            fatal: false,
        });
        None
    }

    /// When the person asked, at the approval, for another answer: the
    /// step is asked again (the refused proposal stays in the history).
    pub(super) fn retry_at_approval(&mut self, step: usize) -> Option<StepEnd> {
        if !self.road.take_retry() {
            return None;
        }
        self.emit(Event::StepRetried {
            step,
            reason: "the person asked for another proposal at the approval".into(),
        });
        Some(StepEnd::Retry(step))
    }
}
