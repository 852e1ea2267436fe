//! What a caller wraps around the session's environment for one run.
//!
//! A run (an agent's task, a recipe, a task through the cache) is built
//! and driven in one place, the session (`Session::run_agent` and its siblings); callers that add behaviour
//! around it (the workbench holds the run while paused and sends every
//! observation to its panes) hand in a [`Layer`] instead of building the
//! run themselves. The layer wraps the session's environment from
//! outside and calls the inner one once per call, the way a tower `Layer`
//! wraps a `Service`; the headless commands hand in [`Bare`].

use crate::environment::{Environment, Masked};
use crate::script::ScriptEnvironment;

/// The environment every session action runs in: the secrets' boundary
/// over the scripts' custom actions and locators over the browser's
/// driver.
pub type SessionEnvironment = Masked<ScriptEnvironment>;

/// Behaviour a caller adds around the session's environment for a run.
pub trait Layer: Sync {
    /// The session's environment as the run sees it.
    type Wrapped<'a>: Environment + 'a
    where
        Self: 'a;

    /// Wraps `inner` for one run.
    fn wrap<'a>(&'a self, inner: &'a mut SessionEnvironment) -> Self::Wrapped<'a>;
}

/// No layer: the run sees the session's environment as it is.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bare;

impl Layer for Bare {
    type Wrapped<'a> = &'a mut SessionEnvironment;

    fn wrap<'a>(&'a self, inner: &'a mut SessionEnvironment) -> Self::Wrapped<'a> {
        inner
    }
}
