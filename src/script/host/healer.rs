//! What healing a recipe step asks and gives back: the [`Healer`] that
//! does a step the recipe can no longer do as recorded, what it is asked
//! ([`HealRequest`]) and how its run ended ([`HealOutcome`]), and the
//! [`HealedStep`] a repaired recipe is written from. Whoever heals (the
//! session's agent) needs only these.

use serde_json::Value;

use crate::dom::Locator;
use crate::environment::BoxFuture;
use crate::events::TokenUsage;

/// What a recipe asks of whoever heals a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealRequest {
    /// The step's number in the recipe.
    pub step: usize,
    /// The sub-goal for the agent: the recorded goal, the action, the
    /// target's role, name and text, and the kind of failure (no live
    /// page text: the agent reads the page itself, inside its fence).
    pub sub_goal: String,
}

/// One action a healing run took, as its step recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct HealedAction {
    /// `{"name": {params}}` as recorded (secrets as placeholders).
    pub action: Value,
    /// The target's recorded locator facts, when it had a target.
    pub locator: Option<Value>,
}

/// How a healing run ended.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HealOutcome {
    /// Whether the agent said it did the step.
    pub success: bool,
    /// Its final words.
    pub text: String,
    /// Model calls made.
    pub model_calls: usize,
    /// Tokens used.
    pub usage: TokenUsage,
    /// The page actions it took, in order.
    pub actions: Vec<HealedAction>,
}

/// Heals a recipe step that no longer runs as recorded: the agent does it
/// on the recipe's environment, through the same road, under a budget.
pub trait Healer<E>: Send {
    /// Does the step `request` describes.
    fn heal<'a>(
        &'a mut self,
        request: &'a HealRequest,
        environment: &'a mut E,
    ) -> BoxFuture<'a, HealOutcome>;
}

/// What takes a healed step's place in the repaired recipe.
#[derive(Debug, Clone, PartialEq)]
pub enum Replacement {
    /// The same action on an element found by these locators: only the
    /// step's list of locators changes (its values stay parameters).
    Locators(Vec<Locator>),
    /// Other actions: these lines replace the step's line.
    Lines(Vec<String>),
}

/// A healed step, for writing the repaired recipe.
#[derive(Debug, Clone, PartialEq)]
pub struct HealedStep {
    /// The step's number.
    pub step: usize,
    /// The line of the action that failed.
    pub line: usize,
    /// What replaces it.
    pub replacement: Replacement,
    /// `old → new`, for the comment above it.
    pub change: String,
    /// The line of the step's `step(…)` call, its goal and the page it
    /// should now check, when the location check failed and the page is
    /// another.
    pub page: Option<(usize, String, String)>,
}
