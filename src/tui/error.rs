//! What can go wrong in the workbench itself. It sits at the bottom, below
//! the theme that reports it and the loop and terminal that return it.

use std::path::PathBuf;

/// What can go wrong in the workbench itself (browser and model failures
/// are shown in the panes, not raised).
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// A theme file could not be read.
    #[error("{}: could not read the theme: {message}", path.display())]
    ThemeRead {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A theme file is not valid YAML or names unknown roles or colours.
    #[error(transparent)]
    ThemeParse(crate::yaml::YamlError),
    /// `--theme` named neither a file nor a shipped theme.
    #[error("no theme `{0}`: give a file path, or one of dark, light (or a name in themes/)")]
    ThemeNotFound(String),
    /// The theme file cannot be watched for edits.
    #[error("{}: cannot watch the theme for edits: {message}", path.display())]
    ThemeWatch {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The terminal could not be set up, drawn to or restored.
    #[error("terminal: {0}; is this an interactive terminal?")]
    Terminal(#[from] std::io::Error),
}
