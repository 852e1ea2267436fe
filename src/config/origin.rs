//! Where a setting's value came from. It stands apart so the settings can
//! keep each value's origin without knowing how the layers are read.

use std::fmt;
use std::path::PathBuf;

/// Where a setting's value came from, for `webagent config`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The built-in defaults.
    Default,
    /// The user's config file.
    UserFile(PathBuf),
    /// The project's config file (or the one given with `--config`).
    ProjectFile(PathBuf),
    /// An environment variable.
    Environment(String),
    /// A command-line flag.
    Flag(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("built-in default"),
            Source::UserFile(path) => write!(f, "user file {}", path.display()),
            Source::ProjectFile(path) => write!(f, "project file {}", path.display()),
            Source::Environment(name) => write!(f, "environment {name}"),
            Source::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}
