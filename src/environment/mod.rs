//! Where an action runs, and the one road to it.
//!
//! This module stands between the ones that choose actions (the agent, a
//! recipe, an MCP client, a person at the `:` line) and the browser that
//! runs them. Every chosen action travels the same [`Road`] downwards,
//! once:
//!
//! 1. the [`Policy`] refuses what the configuration rules out
//!    (`execute_javascript` when off, a destination off the allowed
//!    domains, an upload from outside the allowed paths), before anyone
//!    is asked;
//! 2. the approval gate asks a person when the live [`ApprovalMode`] says so,
//!    and only then records an approval;
//! 3. the [`Environment`] runs it: behaviour a caller adds around a run (the
//!    workbench's pause and page forwarding, a script's custom actions and
//!    locators) wraps the environment from outside and calls the inner one
//!    once; at the bottom, [`Masked`] fills `<secret>NAME</secret>`
//!    placeholders with their values on the way down and masks every value
//!    in what comes back up, so nothing above it ever holds a secret;
//! 4. `extract` hands the page text the browser read to an [`Extractor`] on
//!    the model's side of the house (the browser never asks a model).
//!
//! The browser's own environment is [`crate::browser::Driver`]; its
//! [`Environment`] face is in `browser.rs` here, so the browser knows
//! nothing of this module.

mod approval;
mod browser;
mod masked;
mod policy;
mod road;
mod sites;

use std::future::Future;

use crate::actions::{Action, ActionResult, RiskFacts, Target, TargetFacts};
use crate::dom::{LocateFailure, Location, Locator, PageState};
use crate::vision::{Screenshot, ShotError, ShotRequest};

pub use approval::{
    ApprovalBinding, ApprovalDecision, ApprovalMode, ApprovalRequest, Approver, BoxFuture,
    HeadlessApprover, LiveMode, PersonsOwn, RecipeRewrite,
};
pub use masked::{CatalogSource, Masked};
pub use policy::{Policy, UploadPolicy};
pub use road::{Cleared, Extractor, Passage, RewriteRefused, Road, RETRY_ASKED};
pub use sites::SecretSites;

/// Where a value an action types would go: the page a person sees and the
/// document that holds the field, which is another site's when the field
/// is in a frame of another origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldLocation {
    /// The URL of the top page (for `navigate`, where it goes).
    pub top: String,
    /// The URL of the document holding the target field; the top page's
    /// for a field of the top document or an action with no field.
    pub frame: String,
}

/// A failure of the environment (the browser) outside an action.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct EnvironmentError {
    /// What went wrong, for the person and the model.
    pub message: String,
    /// Whether the run must end (the browser is gone) rather than try the
    /// next step.
    pub fatal: bool,
}

/// Where actions run and pages are observed. The real one is a browser tab
/// ([`crate::browser::Driver`]); tests use scripted ones.
pub trait Environment: Send {
    /// The page as it is now.
    fn observe(&mut self) -> impl Future<Output = Result<PageState, EnvironmentError>> + Send;

    /// Runs one action on the page last observed. Failures are results,
    /// not errors.
    fn execute(&mut self, action: &Action) -> impl Future<Output = ActionResult> + Send;

    /// The URL of the page now, cheaply, to check that an approval still
    /// holds.
    fn current_url(&mut self) -> impl Future<Output = Option<String>> + Send;

    /// Facts that decide the action's risk on this page. The default reads
    /// them from the listing; a browser may look closer (form membership).
    fn risk_facts(
        &mut self,
        action: &Action,
        page: &PageState,
    ) -> impl Future<Output = RiskFacts> + Send {
        let facts = listing_risk_facts(action, page);
        async move { facts }
    }

    /// A picture of the page as last observed, its listed elements marked
    /// when asked. [`ShotError::NoPictures`] when there is nothing to take
    /// a picture of (a scripted page); a capture that failed is an error
    /// for the caller to report, never a crash.
    fn screenshot(
        &mut self,
        request: &ShotRequest,
    ) -> impl Future<Output = Result<Screenshot, ShotError>> + Send {
        let _ = request;
        async { Err(ShotError::NoPictures) }
    }

    /// What `target` names on the page, as a person checking an approval
    /// reads it: the element's listing line. The default reads an index
    /// from the listing; a browser also finds what a selector matches.
    fn describe_target(
        &mut self,
        target: &Target,
        page: &PageState,
    ) -> impl Future<Output = Option<String>> + Send {
        let line = listed_line(target, page);
        async move { line }
    }

    /// Where a value `action` types would go (see [`FieldLocation`]);
    /// `Err` says why that cannot be told, and then a secret bound to its
    /// sites is not filled. The default knows no frames: a scripted page
    /// is its own top document.
    fn field_location(
        &mut self,
        action: &Action,
    ) -> impl Future<Output = Result<FieldLocation, String>> + Send {
        async move {
            let here = self.current_url().await;
            let top = match action {
                Action::Navigate { url } => crate::actions::resolve_url(here.as_deref(), url).ok(),
                _ => here,
            };
            let top = top.ok_or_else(|| "the page's address cannot be read".to_string())?;
            Ok(FieldLocation {
                frame: top.clone(),
                top,
            })
        }
    }

    /// Waits for `deciding`, the person's answer to an approval, while
    /// the page stays as the approval shows it. The default only waits;
    /// the workbench's environment meanwhile answers the person's
    /// questions about the page (the locator picker on the action's
    /// target), since nothing else may touch the page then.
    fn while_approving<F>(&mut self, deciding: F) -> impl Future<Output = F::Output> + Send
    where
        F: Future + Send,
        F::Output: Send,
    {
        deciding
    }

    /// The one element a recipe step's `locators` name on the page now,
    /// tried in order (see [`Locator`]): the first locator that names an
    /// element wins, and locators that name different elements make the
    /// step ambiguous rather than a guess. The default cannot look
    /// (a scripted page); the browser's environment can.
    fn locate(
        &mut self,
        locators: &[Locator],
    ) -> impl Future<Output = Result<Location, LocateFailure>> + Send {
        let _ = locators;
        async {
            Err(LocateFailure::unavailable(
                "this environment cannot look elements up by locator",
            ))
        }
    }
}

/// The listing line of an index target, when the index is listed.
pub fn listed_line(target: &Target, page: &PageState) -> Option<String> {
    match target {
        Target::Index { index } => page
            .elements
            .iter()
            .find(|e| e.index == *index)
            .map(crate::dom::element_line),
        Target::Selector { .. } => None,
    }
}

/// An environment lent for a while (to a sub-agent, a recipe) is still an
/// environment, so nothing needs a forwarding wrapper.
impl<E: Environment> Environment for &mut E {
    fn observe(&mut self) -> impl Future<Output = Result<PageState, EnvironmentError>> + Send {
        (**self).observe()
    }

    fn execute(&mut self, action: &Action) -> impl Future<Output = ActionResult> + Send {
        (**self).execute(action)
    }

    fn current_url(&mut self) -> impl Future<Output = Option<String>> + Send {
        (**self).current_url()
    }

    fn risk_facts(
        &mut self,
        action: &Action,
        page: &PageState,
    ) -> impl Future<Output = RiskFacts> + Send {
        (**self).risk_facts(action, page)
    }

    fn while_approving<F>(&mut self, deciding: F) -> impl Future<Output = F::Output> + Send
    where
        F: Future + Send,
        F::Output: Send,
    {
        (**self).while_approving(deciding)
    }

    fn screenshot(
        &mut self,
        request: &ShotRequest,
    ) -> impl Future<Output = Result<Screenshot, ShotError>> + Send {
        (**self).screenshot(request)
    }

    fn describe_target(
        &mut self,
        target: &Target,
        page: &PageState,
    ) -> impl Future<Output = Option<String>> + Send {
        (**self).describe_target(target, page)
    }

    fn locate(
        &mut self,
        locators: &[Locator],
    ) -> impl Future<Output = Result<Location, LocateFailure>> + Send {
        (**self).locate(locators)
    }

    fn field_location(
        &mut self,
        action: &Action,
    ) -> impl Future<Output = Result<FieldLocation, String>> + Send {
        (**self).field_location(action)
    }
}

/// Risk facts read from the listing alone: the page URL and the tag,
/// type, href and download flag of an indexed target.
pub fn listing_risk_facts(action: &Action, page: &PageState) -> RiskFacts {
    let target = match action.target() {
        Some(Target::Index { index }) => {
            page.elements
                .iter()
                .find(|e| e.index == *index)
                .map(|e| TargetFacts {
                    tag: e.tag.clone(),
                    input_type: e.attribute("type").map(str::to_ascii_lowercase),
                    in_form: false,
                    is_submit: false,
                    href: e.attribute("href").map(str::to_owned),
                    download: e.attribute("download").is_some(),
                })
        }
        _ => None,
    };
    RiskFacts {
        page_url: Some(page.url.clone()),
        target,
    }
}
