//! Rhai scripts: custom actions the model, the command line and other
//! scripts can call, recipes that replay steps without the model, the
//! sandbox they run in, hot reload, and turning a recorded session into a
//! recipe.
//!
//! # The sandbox
//!
//! The engine is built from `Engine::new_raw()` with the standard packages
//! only (no file or network access), `eval` and `import` disabled, every
//! limit set ([`Limits`]) and `print`/`debug` sent to the log. Scripts reach
//! the page only through the host functions listed in [`engine`].
//!
//! # Threads
//!
//! Each call (an action's handler or a recipe) runs on its own thread. A
//! host function sends a [`HostCall`] over a channel and blocks on the
//! reply, so only the script thread waits while the async side drives the
//! browser through a [`ScriptHost`]. Cancelling sets an atomic flag the
//! engine checks between operations, so even `loop {}` ends within
//! milliseconds.
//!
//! # Files
//!
//! A `.rhai` file declares what it offers when it loads:
//!
//! ```rhai
//! action("sign_in", #{
//!     description: "Sign in to the Acme admin",
//!     params: #{ email: #{ type: "string" }, password: #{ type: "string" } },
//!     risk: "commit",
//! });
//! fn sign_in(p) { fill("Email", p.email); fill("Password", p.password); click("Sign in"); }
//!
//! recipe("smoke", "Signs in and opens the orders");
//! fn smoke() { sign_in(#{ email: "admin@acme.test", password: "demo" }); }
//! ```
//!
//! Parts: `engine` (the sandbox and host functions), `library` (loading,
//! the shared [`Scripts`] handle, running), `host` (what answers host
//! calls), `watch` (hot reload), `export` (trace → recipe).

pub mod engine;
pub mod env;
pub mod export;
pub mod host;
pub mod library;
pub mod params;
pub mod rewrite;
pub mod watch;

use std::path::PathBuf;

pub use engine::Limits;
pub use env::ScriptEnvironment;
pub use export::{
    export_recipe, export_recipe_with, page_matches, recipe_from_events, recipe_from_events_with,
    url_matches, url_pattern, ExportError, ExportOptions,
};
pub use host::{
    HealOutcome, HealRequest, HealedAction, HealedStep, Healer, HostCall, HostError, RecipeHost,
    Replacement, ScriptHost, SubAgent, TabHost,
};
pub use library::{pick_recipe, ActionDef, CancelFlag, FileSummary, RecipeDef, Scripts};
pub use params::{ParamKind, RecipeParam};
pub use rewrite::rewrite_source;
pub use watch::{ScriptEvent, ScriptWatcher};

/// A place in a script: file, 1-based line and column, and what happened
/// there. Displays as `FILE:LINE:COLUMN: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The script file (or `<script>` for code without a file).
    pub file: String,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// 1-based column (0 when unknown).
    pub column: usize,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for Located {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

/// Everything that can go wrong loading or running a script.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be read.
    #[error("could not read {}: {message}; check the path and its permissions", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        message: String,
    },
    /// The file does not parse.
    #[error("{0}")]
    Compile(Located),
    /// The script failed while running (including a failed `assert`).
    #[error("{0}")]
    Runtime(Located),
    /// The script hit a sandbox limit (operations, call depth, sizes).
    #[error("{0}")]
    Limit(Located),
    /// The script was cancelled (by the person or the run's stop).
    #[error("the script was cancelled")]
    Cancelled,
    /// An `action(...)` or `recipe(...)` declaration is wrong.
    #[error("{0}")]
    Definition(Located),
    /// The parameters given do not fit what the recipe declares (unknown
    /// names, wrong types, a required one missing).
    #[error("{message}")]
    Params {
        /// The recipe.
        recipe: String,
        /// Every problem, and the names and types the recipe takes.
        message: String,
    },
    /// No recipe or action of that name is loaded.
    #[error("no {kind} named `{name}` is loaded; available: {}", if available.is_empty() { "none".to_string() } else { available.join(", ") })]
    UnknownEntry {
        /// `recipe` or `action`.
        kind: &'static str,
        /// The name asked for.
        name: String,
        /// The names that are loaded.
        available: Vec<String>,
    },
    /// The script thread could not start or went away.
    #[error("the script thread failed: {0}")]
    Thread(String),
}

impl ScriptError {
    /// The location of the error, when it has one.
    pub fn located(&self) -> Option<&Located> {
        match self {
            ScriptError::Compile(l)
            | ScriptError::Runtime(l)
            | ScriptError::Limit(l)
            | ScriptError::Definition(l) => Some(l),
            _ => None,
        }
    }
}
