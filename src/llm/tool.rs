//! The function tool of a call, on both sides of it: the function a request
//! offers ([`FunctionTool`]), how the request demands it ([`ToolChoice`]),
//! and the call the model made ([`ToolCall`]). Requests, answers and the
//! client's progress events all speak of these, so they stand below each.

use serde_json::{json, Value};

/// A function the model may (or must) call.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionTool {
    /// The function's name, e.g. `agent_step`.
    pub name: String,
    /// What it is for, shown to the model.
    pub description: String,
    /// JSON schema of its arguments.
    pub parameters: Value,
}

impl FunctionTool {
    /// The tool in chat-completions JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            }
        })
    }
}

/// How a forced tool is demanded on the wire.
///
/// The protocol's way is to name the function. Some servers reject a named
/// `tool_choice` but accept `"required"`, and a few accept neither; the
/// client steps down this list when a server says so, rather than failing
/// every step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum ToolChoice {
    /// `{"type": "function", "function": {"name": …}}`.
    #[default]
    Named,
    /// `"required"`: some tool must be called (there is only one).
    Required,
    /// No `tool_choice` at all: the server's default, the prompt must do
    /// the forcing.
    Auto,
}

impl ToolChoice {
    /// The next, weaker way to ask, if there is one.
    pub fn relaxed(self) -> Option<ToolChoice> {
        match self {
            ToolChoice::Named => Some(ToolChoice::Required),
            ToolChoice::Required => Some(ToolChoice::Auto),
            ToolChoice::Auto => None,
        }
    }

    /// A short name for notices ("named", "required", "auto").
    pub fn as_str(self) -> &'static str {
        match self {
            ToolChoice::Named => "named",
            ToolChoice::Required => "required",
            ToolChoice::Auto => "auto",
        }
    }

    pub(crate) fn from_level(level: u8) -> ToolChoice {
        match level {
            0 => ToolChoice::Named,
            1 => ToolChoice::Required,
            _ => ToolChoice::Auto,
        }
    }

    pub(crate) fn level(self) -> u8 {
        self as u8
    }
}

/// A function call the model made.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolCall {
    /// The server's id for the call (may be empty with some local servers).
    pub id: String,
    /// The function name the model used.
    pub name: String,
    /// The arguments exactly as sent: a JSON text, not yet parsed, because
    /// repairing broken arguments is the agent's job.
    pub arguments: String,
}
