//! Everything that can go wrong with a sitemap, in one error the loader,
//! the set and the watcher share.

use std::path::PathBuf;

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

impl SitemapError {
    /// Why a sitemap file could not be read as text.
    pub fn from_reading(error: crate::yaml::ReadError) -> Self {
        match error {
            crate::yaml::ReadError::Io { file, source } => SitemapError::Read { file, source },
            crate::yaml::ReadError::NotText(problem) => SitemapError::Invalid(problem),
            crate::yaml::ReadError::TooBig { file, bytes } => SitemapError::Read {
                file,
                source: std::io::Error::other(crate::yaml::too_big(bytes)),
            },
        }
    }
}
