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
//! - cancellation by a [`StopSignal`] or by dropping the future.
//!
//! It knows nothing of the browser or the terminal: the agent loop turns
//! its events into the program's events.

mod client;
mod config;
mod error;
mod request;
mod response;
mod retry;
mod sse;
mod stream;

pub use client::{stop_pair, LlmClient, LlmEvent, StopHandle, StopSignal};
pub use config::{LlmConfig, DEFAULT_BASE_URL, DEFAULT_MODEL};
pub use error::{LlmError, TimeoutPhase};
pub use request::{ChatMessage, ChatRequest, FunctionTool, Role, ToolChoice};
pub use response::{CallStats, ChatResponse, ToolCall, Usage, UsageTotals};
pub use retry::{parse_http_date, parse_retry_after, RetryPolicy};
pub use sse::{SseEvent, SseParser};
