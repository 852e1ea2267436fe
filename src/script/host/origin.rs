//! Where a recipe's paths open: on the origin the run gives or finds, the
//! way both hosts read `navigate(...)` and `start_at(...)`.

use serde_json::json;

use super::call::HostError;
use crate::actions::{Action, Catalog};

pub(super) fn navigate_action(url: &str) -> Result<Action, HostError> {
    Catalog::builtin()
        .parse(&json!({"navigate": {"url": url}}))
        .map_err(|e| HostError::Step(format!("navigate {url}: {e}")))
}

/// The path of a path with a query or fragment.
pub(super) fn path_part(path: &str) -> &str {
    path.split(['?', '#']).next().unwrap_or(path)
}

/// `scheme://host:port` of an http(s) URL.
pub(super) fn origin_of(url: &str) -> Option<String> {
    crate::script::export::origin_of(url)
}

/// An absolute URL for `url`: itself when it is one, else a path on
/// `origin`.
pub(super) fn resolve_url(url: &str, origin: Option<&str>) -> Result<String, HostError> {
    if url::Url::parse(url).is_ok() {
        return Ok(url.to_string());
    }
    let Some(origin) = origin else {
        return Err(HostError::NoOrigin(format!(
            "this recipe opens {url:?}, a path on the origin it runs on, and the page has no \
             origin yet: run it with --url (e.g. --url http://127.0.0.1:8080/)"
        )));
    };
    url::Url::parse(origin)
        .and_then(|base| base.join(url))
        .map(|joined| joined.to_string())
        .map_err(|e| HostError::Step(format!("{url:?} on {origin}: {e}")))
}
