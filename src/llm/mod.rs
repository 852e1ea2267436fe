//! The OpenAI-compatible chat-completions client.
//!
//! One call sends a conversation and (usually) one forced function tool,
//! and returns the model's tool call, text, finish reason and token usage,
//! with the raw answer kept for the step inspector. It works against any
//! server speaking the protocol (OpenAI, Ollama, vLLM, LM Studio,
//! OpenRouter, DeepSeek, Qwen):
//!
//! - streaming over SSE with a parser that survives any split of the body,
//!   reporting text and argument pieces as they arrive ([`LlmEvent`]);
//! - a plain request as fallback when a stream is refused or comes back
//!   empty (servers that cannot stream tool calls);
//! - retries with jittered backoff for transient failures, honouring
//!   `Retry-After`, and immediate, specific errors for the rest
//!   ([`LlmError`]);
//! - a prompt longer than the server's context, in any server's wording
//!   or as an empty stream after a large prompt, is
//!   [`LlmError::ContextOverflow`] and never sent again unchanged;
//! - time limits per phase (connect, first token, between chunks, whole
//!   answer); a request past one is dropped, which closes its connection
//!   so the server stops, and a server on this machine gets one retry at
//!   most;
//! - `max_tokens` on every request, and token usage read wherever servers
//!   put it or estimated ([`estimate_tokens`]) and marked so;
//! - cancellation by a [`StopSignal`] or by dropping the future.
//!
//! It knows nothing of the browser or the terminal: the agent loop turns
//! its events into the program's events.
//!
//! ```no_run
//! use serde_json::json;
//! use webagent::llm::{stop_pair, ChatMessage, ChatRequest, FunctionTool, LlmClient, LlmConfig, LlmEvent};
//!
//! # async fn step() -> Result<(), webagent::llm::LlmError> {
//! let client = LlmClient::new(LlmConfig::default().with_base_url("http://127.0.0.1:11434/v1"))?;
//! let tool = FunctionTool {
//!     name: "agent_step".into(),
//!     description: "Reflect on the last step, then choose one action.".into(),
//!     parameters: json!({"type": "object"}),
//! };
//! let request = ChatRequest::new(vec![ChatMessage::system("…"), ChatMessage::user("…")])
//!     .with_forced_tool(tool);
//! // The stop handle goes to whoever takes the user's stop key.
//! let (_stop, signal) = stop_pair();
//! let (tx, _rx) = tokio::sync::mpsc::unbounded_channel::<LlmEvent>();
//! let answer = client
//!     .complete_observed(&request, &mut |event| { let _ = tx.send(event); }, &signal)
//!     .await?;
//! let arguments = answer.tool_call("agent_step").map(|call| call.arguments.as_str());
//! # let _ = arguments;
//! # Ok(())
//! # }
//! ```

mod client;
mod config;
mod error;
mod event;
mod request;
mod response;
mod retry;
mod sse;
mod stop;
mod stream;
mod tokens;
mod tool;

pub use client::LlmClient;
pub use config::{default_base_url, default_max_output_tokens, LlmConfig};
pub use error::{LlmError, TimeoutPhase};
pub use event::LlmEvent;
pub use request::{ChatMessage, ChatRequest, ImagePart, Role};
pub use response::{CallStats, ChatResponse, UsageTotals};
pub use retry::{parse_http_date, parse_retry_after, RetryPolicy};
pub use sse::{SseEvent, SseParser};
pub use stop::{stop_pair, StopHandle, StopSignal};
pub use tokens::{chars_for_tokens, estimate_tokens};
pub use tool::{FunctionTool, ToolCall, ToolChoice};
