//! A session: everything one command needs to drive a browser for a person
//! or a model, built in exactly one place.
//!
//! Every command that touches a page (the workbench, `run`, `recipe run`,
//! `exec`, `observe`) goes through the same two steps:
//!
//! 1. [`Prepared::new`] checks what can be checked before a browser starts,
//!    from one merged [`Config`]: the model client, the secrets, the
//!    sitemap files, the Rhai scripts. A typo costs no Chromium launch.
//! 2. [`Prepared::start`] launches (or attaches to) the browser, opens the
//!    first page and assembles the environment every action goes through,
//!    from the page up: the browser's [`Driver`] (the allowed-domain guard
//!    with its reports, the relaunch after a crash, the sitemaps for
//!    `goto_page`), the scripts' custom actions and locators
//!    ([`ScriptEnvironment`]), and the secrets' boundary ([`Masked`]), above
//!    which no value exists. It starts the file watchers, whose reloads
//!    become events on the session's one event sink, so every command's
//!    trace records them.
//!
//! Then every action of the session travels the session's road: a run's
//! ([`Session::run_agent`], [`Session::run_recipe`],
//! [`Session::run_task_cached`]) and one chosen
//! outside any run (the workbench's `:` line, `exec`, a suite's check:
//! [`Session::perform`]). Commands differ only in who watches over a run
//! ([`Oversight`]: who approves, how it stops), what they wrap around the
//! environment ([`Layer`]: the workbench's pause and panes), and where the
//! events go, so a protection or a setting can never hold for one command
//! and not another.

mod assemble;
pub mod cache;
mod chosen;
mod layer;
mod log;
mod resume;
mod run;
mod runs;

pub use assemble::{
    load_scripts, located_text, runtime, sign_in_source, NotOpened, Prepared, Session, SessionError,
};
pub use cache::{run_cached, CacheEntry, CacheError, CachedOutcome, CachedRun, TaskCache};
pub use chosen::Errand;
pub use layer::{Bare, Layer, SessionEnvironment};
pub use log::{log_line, print_events};
pub use resume::{resume_plan, ResumeError, ResumePlan};
pub use run::{
    calls_and_actions, recipe_outcome, run_recipe, run_recipe_with, AgentSetup, ApproverFactory,
    LlmHealer, LlmSubAgent, RecipeOutcome, RecipeRun, RewriteTarget,
};
pub use runs::{same_file, Oversight, RecipeChoice, ReplayOptions};
