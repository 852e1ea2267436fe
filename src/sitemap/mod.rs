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

mod gated;
mod load;
mod model;
mod resolve;
mod search;
mod serialize;
mod set;
mod template;
mod watch;

use std::path::PathBuf;

pub use model::{Sitemap, SitemapNode, SitemapPage};
pub use resolve::Resolved;
pub use search::SearchMatch;
#[doc(hidden)]
pub use search::{match_quality, search_words};
pub use set::{origin_of, SitemapSet};
pub use template::TEMPLATE_YAML;
pub use watch::{SitemapEvent, SitemapWatcher};

/// Everything that can go wrong while loading, validating or watching a
/// sitemap.
#[derive(Debug, thiserror::Error)]
pub enum SitemapError {
    /// The file could not be read (missing, unreadable, not UTF-8).
    #[error("{}: cannot read the sitemap: {source}", file.display())]
    Read {
        /// The file that was being read.
        file: PathBuf,
        /// Why reading failed.
        source: std::io::Error,
    },
    /// The YAML is malformed or describes an invalid tree; the position
    /// points at the offending key or value.
    #[error(transparent)]
    Invalid(crate::yaml::YamlError),
    /// A tree built in code (not from YAML) breaks a rule; `page` is the
    /// pattern of the page where it does.
    #[error("page {page}: {message}")]
    Tree {
        /// The path pattern of the offending page.
        page: String,
        /// What is wrong.
        message: String,
    },
    /// The file watcher could not be started or lost its watch.
    #[error("watching {}: {message}", path.display())]
    Watch {
        /// The file or directory that was being watched.
        path: PathBuf,
        /// What the operating system reported.
        message: String,
    },
}

impl SitemapError {
    /// The 1-based line and column of the problem, when it has a position.
    pub fn position(&self) -> Option<(usize, usize)> {
        match self {
            SitemapError::Invalid(problem) => Some((problem.line, problem.column)),
            _ => None,
        }
    }

    /// The problem without the file and position prefix, for displays that
    /// show those separately.
    pub fn message(&self) -> String {
        match self {
            SitemapError::Read { source, .. } => format!("cannot read the sitemap: {source}"),
            SitemapError::Invalid(problem) => problem.message.clone(),
            SitemapError::Tree { page, message } => format!("page {page}: {message}"),
            SitemapError::Watch { message, .. } => message.clone(),
        }
    }
}

/// The seed's Acme tree, shared by the unit tests of several operations.
#[cfg(test)]
pub(crate) fn serialize_tests_seed() -> &'static str {
    serialize::tests::SEED_ACME
}
