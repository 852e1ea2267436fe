//! What a run uses when its caller sets nothing: the one tool's name and
//! the limits from the built-in defaults (`agent.*`). The prompt, the tool
//! and the answer's reading all need these, so they stand below each.

/// The name of the one tool the model must call each step.
pub const AGENT_TOOL_NAME: &str = "agent_step";

/// The step limit when none is given (`agent.max_steps` of the built-in
/// defaults).
pub fn default_max_steps() -> usize {
    crate::defaults::number(&["agent", "max_steps"]) as usize
}

/// Actions the model may send as one step's list, when the caller sets no
/// other limit (`agent.max_actions_per_step`).
pub fn default_max_actions() -> usize {
    crate::defaults::number(&["agent", "max_actions_per_step"]) as usize
}

/// Answers in a row without a usable action after which a run ends, when
/// the caller sets no other limit (`agent.max_invalid_answers`).
pub fn default_max_invalid_answers() -> usize {
    crate::defaults::number(&["agent", "max_invalid_answers"]) as usize
}
