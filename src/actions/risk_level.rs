//! [`Risk`]: how much an action can change the world. An action carries
//! its level and the catalog gives each action one, so the level stands
//! below both; the rules that raise it for one concrete action are in
//! `risk`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How much an action can change the world, from least to most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// No side effects: reads the page, waits, thinks.
    Read,
    /// Changes page state the user can undo (typing, clicking, scrolling).
    Interact,
    /// Submits, purchases, deletes, leaves the site, uploads or writes files.
    Commit,
    /// Runs arbitrary code in the page.
    Dangerous,
}

impl Risk {
    /// The snake_case word used in JSON and the catalog table.
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Read => "read",
            Risk::Interact => "interact",
            Risk::Commit => "commit",
            Risk::Dangerous => "dangerous",
        }
    }
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that names no risk level.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown risk level `{word}`; use read, interact, commit or dangerous")]
pub struct UnknownRisk {
    /// The word as read (trimmed, lower-case).
    pub word: String,
}

impl FromStr for Risk {
    type Err = UnknownRisk;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "read" => Ok(Risk::Read),
            "interact" => Ok(Risk::Interact),
            "commit" => Ok(Risk::Commit),
            "dangerous" => Ok(Risk::Dangerous),
            other => Err(UnknownRisk {
                word: other.to_string(),
            }),
        }
    }
}
