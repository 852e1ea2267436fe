//! What answers a script's host calls: [`GatedHost`] hands each action
//! of a custom action's handler to the road that carried the custom
//! action (the policy and the gate, for each), and [`RecipeHost`] runs a recipe's steps like agent steps, along the same
//! road (policy, approval gate, `tool_call` / `tool_result` events), each
//! recorded as a `step`, healing a step that no longer runs as recorded.
//!
//! Parts: `call` (the calls and their answers), `expect` (how an
//! assertion is checked), `origin` (where paths open), `gated` ([`GatedHost`]), `recipe` ([`RecipeHost`]: set-up and
//! each call handed on), `recipe_step` (how a recipe's step runs), `heal` (how
//! a failed step heals) and `healer` (what healing is asked and gives
//! back).

mod call;
mod expect;
mod gated;
mod heal;
mod healer;
mod origin;
mod recipe;
mod recipe_step;

pub(crate) use call::result_json;
pub use call::{page_json, Expectation, HostCall, HostError, ScriptHost};
pub use gated::GatedHost;
pub use healer::{HealOutcome, HealRequest, HealedAction, HealedStep, Healer, Replacement};
pub use recipe::{RecipeHost, SubAgent};
