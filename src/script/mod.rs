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
//! the shared [`Scripts`] handle, running), `loaded` (what a loaded file
//! declares), `declare` (gathering declarations while a file loads),
//! `params` (a recipe's parameters), `error` ([`ScriptError`]), `debug`
//! (stepping through a recipe), `host`
//! (what answers host calls), `env` (the browser's driver with scripts
//! plugged in), `locate` (finding an element again), `watch` (hot
//! reload), `export` (trace → recipe), `recording` (a person's recorded
//! inputs → recipe, through the export), `rewrite` (a healed recipe's
//! repaired lines).

pub mod api;
mod bounds;
mod calls;
pub mod debug;
mod declare;
pub mod engine;
pub mod env;
mod error;
mod expect;
pub mod export;
pub mod host;
pub mod library;
mod lint;
mod loaded;
mod locate;
pub mod params;
pub mod recording;
pub mod rewrite;
mod targets;
pub mod watch;

pub use bounds::Limits;
pub use debug::{
    debug_channel, DebugCommand, DebugController, DebugReport, Debuggee, Stop, StopReason,
};
pub use env::ScriptEnvironment;
pub use error::{Located, ScriptError};
pub use export::{
    export_recipe, export_recipe_with, page_matches, recipe_from_events, recipe_from_events_with,
    url_matches, url_pattern, ExportError, ExportOptions,
};
pub use host::{
    Expectation, GatedHost, HealOutcome, HealRequest, HealedAction, HealedStep, Healer, HostCall,
    HostError, RecipeHost, Replacement, ScriptHost, SubAgent,
};
pub use library::{script_files, CancelFlag, Scripts};
pub use loaded::{pick_recipe, ActionDef, FileSummary, RecipeChoiceError, RecipeDef};
pub use locate::{locator_report, LocatorReport, PickedElement};
pub use params::{ParamError, ParamKind, RecipeParam};
pub use recording::{assertion_step, RecordedStep, Recording};
pub use rewrite::rewrite_source;
pub use watch::{ScriptEvent, ScriptWatcher};
