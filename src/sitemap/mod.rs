//! Sitemaps: a YAML tree describing a site's pages for the agent.
//!
//! A sitemap tells the model which pages exist, which need a signed-in (or
//! admin) user, what can be done on each page and which words people use for
//! it, so the agent can plan a route instead of exploring the DOM. This module
//! owns the tree, loading and validating YAML (every error carries file, line
//! and column), the outline shown to the model, resolving a concrete URL to a
//! page, ranked search, the list of auth-gated pages, the built-in SaaS
//! template, picking one sitemap among several by origin, and a watcher that
//! reloads edited files while keeping the last good version.
//!
//! It knows nothing of the browser, the LLM or the terminal.

mod error;
mod gated;
mod load;
mod model;
mod node;
mod origin;
mod resolve;
mod rules;
mod search;
mod serialize;
mod set;
mod template;
mod watch;

pub use error::SitemapError;
pub use model::Sitemap;
pub use node::{SitemapNode, SitemapPage};
pub use origin::{origin_of, OriginError, OriginProblem};
pub use resolve::Resolved;
pub use rules::SegmentError;
pub use search::SearchMatch;
#[doc(hidden)]
pub use search::{match_quality, search_words};
pub use set::SitemapSet;
pub use template::TEMPLATE_YAML;
pub use watch::{SitemapEvent, SitemapWatcher};

/// The seed's Acme tree, shared by the unit tests of several operations.
#[cfg(test)]
pub(crate) fn serialize_tests_seed() -> &'static str {
    serialize::tests::SEED_ACME
}
