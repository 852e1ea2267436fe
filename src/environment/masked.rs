//! The secrets' boundary: below it the page holds real values, above it
//! only `<secret>NAME</secret>` placeholders exist.

use std::sync::Arc;

use crate::actions::{Action, ActionResult, Catalog, RiskFacts, Target};
use crate::dom::{LocateFailure, Location, Locator, PageState};
use crate::secrets::Secrets;
use crate::vision::{Screenshot, ShotError, ShotRequest};

use super::{Environment, EnvironmentError};

/// Gives the catalog as it is now (custom actions come and go as their
/// scripts reload), to validate an action again once its values are in.
pub type CatalogSource = Arc<dyn Fn() -> Catalog + Send + Sync>;

/// An environment as everything above it sees it: placeholders are filled
/// with their values on the way down, and every value is masked in what
/// comes back up (pages, results, URLs, errors). Pictures cover text
/// fields that hold a value. Whatever reads the page through it (the
/// agent's prompt, the workbench's panes, an MCP result, `exec`'s output,
/// a file `read_file` returns) cannot show a secret it never received.
pub struct Masked<E> {
    inner: E,
    secrets: Secrets,
    catalog: CatalogSource,
}

impl<E> std::fmt::Debug for Masked<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Masked")
            .field("secrets", &self.secrets)
            .finish_non_exhaustive()
    }
}

impl<E> Masked<E> {
    /// Guards `inner` with `secrets`; filled actions are validated again
    /// against the catalog `catalog` gives at that moment.
    pub fn new(inner: E, secrets: Secrets, catalog: CatalogSource) -> Self {
        Masked {
            inner,
            secrets,
            catalog,
        }
    }

    /// The environment below the boundary, for what must reach the page
    /// itself (closing it, saving its cookies). What it returns holds real
    /// values.
    pub fn inner(&self) -> &E {
        &self.inner
    }

    /// See [`Masked::inner`].
    pub fn inner_mut(&mut self) -> &mut E {
        &mut self.inner
    }

    /// The environment below, for the caller to close.
    pub fn into_inner(self) -> E {
        self.inner
    }

    /// The names of the secrets, for a prompt that tells the model which
    /// placeholders it may write.
    pub fn secret_names(&self) -> Vec<String> {
        self.secrets.names()
    }

    fn error(&self, error: EnvironmentError) -> EnvironmentError {
        EnvironmentError {
            message: self.secrets.mask(&error.message),
            fatal: error.fatal,
        }
    }
}

impl<E: Environment> Environment for Masked<E> {
    async fn observe(&mut self) -> Result<PageState, EnvironmentError> {
        match self.inner.observe().await {
            Ok(mut page) => {
                self.secrets.mask_page(&mut page);
                Ok(page)
            }
            Err(error) => Err(self.error(error)),
        }
    }

    async fn execute(&mut self, action: &Action) -> ActionResult {
        let catalog = (self.catalog)();
        match self.secrets.fill_action(&catalog, action) {
            Ok(runnable) => self.secrets.masked(self.inner.execute(&runnable).await),
            // A value can break a limit the placeholder kept (a maximum
            // length, say); the message names the placeholder.
            Err(error) => ActionResult::invalid_params(format!(
                "with the secret values filled in, the action is not valid: {}",
                self.secrets.mask(&error.to_string())
            )),
        }
    }

    async fn current_url(&mut self) -> Option<String> {
        let url = self.inner.current_url().await?;
        Some(self.secrets.mask(&url))
    }

    async fn risk_facts(&mut self, action: &Action, page: &PageState) -> RiskFacts {
        let catalog = (self.catalog)();
        let runnable = self
            .secrets
            .fill_action(&catalog, action)
            .unwrap_or_else(|_| action.clone());
        self.inner.risk_facts(&runnable, page).await
    }

    async fn describe_target(&mut self, target: &Target, page: &PageState) -> Option<String> {
        // A field's value may show a secret: the line leaves masked.
        let line = self.inner.describe_target(target, page).await?;
        Some(self.secrets.mask(&line))
    }

    async fn screenshot(&mut self, request: &ShotRequest) -> Result<Screenshot, ShotError> {
        let mut request = request.clone();
        request.secrets = self.secrets.values();
        match self.inner.screenshot(&request).await {
            Err(ShotError::Failed(error)) => Err(ShotError::Failed(self.secrets.mask(&error))),
            shot => shot,
        }
    }

    async fn locate(&mut self, locators: &[Locator]) -> Result<Location, LocateFailure> {
        // A locator is what a page showed (a label, a text); a secret's
        // placeholder in one is looked for as its value.
        let filled: Vec<Locator> = locators
            .iter()
            .map(|l| self.secrets.filled_locator(l))
            .collect();
        match self.inner.locate(&filled).await {
            Ok(location) => Ok(self.secrets.masked(location)),
            Err(failure) => Err(self.secrets.masked(failure)),
        }
    }
}
