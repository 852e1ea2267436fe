//! The agent: a reflection-before-action loop over any OpenAI-compatible
//! model.
//!
//! Each step observes the page, builds the prompt, calls the model with one
//! forced tool (`agent_step`: `{evaluation_previous_goal, memory,
//! next_goal, action: {name: params}}`), normalizes and validates the
//! answer, passes the approval gate, executes, and records the step. The
//! run ends on `done`, at the step limit, on the person's stop, or on an
//! error it cannot go on after. Everything that happens is sent as
//! [`Event`](crate::events::Event)s through the channel the caller
//! supplies; the library prints nothing.
//!
//! The loop does not know how actions run: each travels the
//! [`Road`](crate::environment::Road) it was given to an
//! [`Environment`](crate::environment::Environment) (a session's browser, a
//! script of pages in tests). The model is only called from this module:
//! each step's request and `extract`'s ([`ModelExtractor`]), both through
//! `masked::masked_request`.
//!
//! Parts: `run` (the [`Agent`], its settings and the loop), `step` (one
//! step's phases and its record), `ask` (the request and the model call),
//! `act` (the action and the rest of the model's list), `retry` (a step
//! asked again), `history` (how a step reads in the model's history),
//! `masked` (secrets masked in every request),
//! `defaults`, and the prompt, the tool, the answer's normalizing, the
//! conversation carried across runs, steering and `extract`.

pub mod conversation;
pub mod normalize;
pub mod prompt;

mod act;
mod ask;
mod defaults;
mod extract;
mod history;
mod masked;
mod preview;
mod retry;
mod run;
mod steering;
mod step;
mod tool;
mod wall;

pub use conversation::{Conversation, Prior, ResumePoint};
pub use defaults::{
    default_max_actions, default_max_invalid_answers, default_max_steps, AGENT_TOOL_NAME,
};
pub use extract::{extract_tool, ModelExtractor, EXTRACT_TOOL};
pub use normalize::{normalize, NormalizeError, NormalizedTurn};
pub use prompt::{
    system_prompt, user_prompt, user_prompt_in, ConversationPrompt, HistoryEntry, StepPrompt,
};
pub use run::{Agent, AgentConfig, AgentError, RunOutcome, VisionSettings};
pub use steering::Steering;
pub use tool::{agent_tool, agent_tool_with, FIXED_PART_LIMIT};
