//! The scripted model's answers: a well-formed `agent_step` call, plain or
//! streamed in pieces, and `done`.

use serde_json::{json, Value};
use webagent::agent::AGENT_TOOL_NAME;

use crate::support::llm_server::{tool_call_completion, tool_call_events, Reply};

/// The arguments of a well-formed `agent_step` call.
pub(crate) fn step_args(goal: &str, action: Value) -> Value {
    json!({
        "evaluation_previous_goal": format!("judged before: {goal}"),
        "memory": format!("remembering while: {goal}"),
        "next_goal": goal,
        "action": action,
    })
}

/// A plain (non-streamed) answer calling the tool.
pub(crate) fn reply(goal: &str, action: Value) -> Reply {
    Reply::json(
        200,
        tool_call_completion(AGENT_TOOL_NAME, &step_args(goal, action)),
    )
}

/// A streamed answer calling the tool, the arguments in several pieces.
pub(crate) fn streamed(goal: &str, action: Value) -> Reply {
    Reply::sse(tool_call_events(
        AGENT_TOOL_NAME,
        &step_args(goal, action),
        4,
    ))
}

/// The model saying it is done, with `text` and whether it succeeded.
pub(crate) fn done(text: &str, success: bool) -> Reply {
    reply(
        "finish",
        json!({"done": {"text": text, "success": success}}),
    )
}
