//! What comes back: tool calls, text, finish reason, token usage, and the
//! raw answer for the step inspector.

use std::time::Duration;

use crate::events::TokenUsage;
use serde_json::Value;

use super::error::LlmError;
use super::tool::{ToolCall, ToolChoice};

/// How many characters of a bad body an error message quotes.
const BODY_START_CHARS: usize = 200;

/// Reading and estimating usage: the counts are [`TokenUsage`], the one
/// usage type events, traces and the status line use too.
impl TokenUsage {
    /// Reads a `usage` object; missing counts are 0, and a missing total is
    /// the sum of the others. An object with no count at all (or only
    /// zeros, as some servers send in every chunk) is no usage.
    pub fn from_json(value: &Value) -> Option<TokenUsage> {
        let object = value.as_object()?;
        let count = |key: &str| object.get(key).and_then(Value::as_u64).unwrap_or(0);
        let prompt_tokens = count("prompt_tokens");
        let completion_tokens = count("completion_tokens");
        let total_tokens = match count("total_tokens") {
            0 => prompt_tokens + completion_tokens,
            total => total,
        };
        if total_tokens == 0 {
            return None;
        }
        let cached_tokens = object
            .get("prompt_tokens_details")
            .and_then(|d| d.get("cached_tokens"))
            .and_then(Value::as_u64)
            // DeepSeek's name for the same figure.
            .or_else(|| {
                object
                    .get("prompt_cache_hit_tokens")
                    .and_then(Value::as_u64)
            });
        Some(TokenUsage {
            prompt_tokens,
            completion_tokens,
            total_tokens,
            cached_tokens: cached_tokens.unwrap_or(0),
            estimated: false,
        })
    }

    /// The usage in a response body or stream chunk, wherever the server
    /// put it: `usage` at the top (OpenAI, vLLM, LM Studio), inside the
    /// first choice (some proxies), `x_groq.usage`, llama.cpp's `timings`
    /// (`prompt_n`, `predicted_n`, `cache_n`), or Ollama's native
    /// `prompt_eval_count` / `eval_count`.
    pub fn find_in(value: &Value) -> Option<TokenUsage> {
        let standard = [
            value.get("usage"),
            value
                .get("choices")
                .and_then(|c| c.get(0))
                .and_then(|c| c.get("usage")),
            value.get("x_groq").and_then(|x| x.get("usage")),
        ];
        if let Some(usage) = standard
            .into_iter()
            .flatten()
            .find_map(TokenUsage::from_json)
        {
            return Some(usage);
        }
        let counted = |prompt: &str, answer: &str, source: &Value| {
            let prompt_tokens = source.get(prompt).and_then(Value::as_u64)?;
            let completion_tokens = source.get(answer).and_then(Value::as_u64).unwrap_or(0);
            Some(TokenUsage {
                prompt_tokens,
                completion_tokens,
                total_tokens: prompt_tokens + completion_tokens,
                cached_tokens: 0,
                estimated: false,
            })
        };
        if let Some(timings) = value.get("timings") {
            if let Some(mut usage) = counted("prompt_n", "predicted_n", timings) {
                // llama.cpp counts only the prompt tokens it had to process;
                // the cached ones come on top.
                let cached = timings.get("cache_n").and_then(Value::as_u64);
                if let Some(cached) = cached {
                    usage.prompt_tokens += cached;
                    usage.total_tokens += cached;
                    usage.cached_tokens = cached;
                }
                return Some(usage);
            }
        }
        counted("prompt_eval_count", "eval_count", value)
    }

    /// An estimate from the characters sent and received.
    pub fn estimate(prompt_chars: usize, answer_chars: usize) -> TokenUsage {
        let prompt_tokens = super::tokens::estimate_tokens(prompt_chars);
        let completion_tokens = super::tokens::estimate_tokens(answer_chars);
        TokenUsage {
            prompt_tokens,
            completion_tokens,
            total_tokens: prompt_tokens + completion_tokens,
            cached_tokens: 0,
            estimated: true,
        }
    }
}

/// Token usage summed over all calls of a client (the status line's
/// "tokens" figure).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UsageTotals {
    /// Calls that returned an answer.
    pub calls: u64,
    /// Calls whose answer carried no usage (some local servers omit it),
    /// counted in the sums by estimate.
    pub calls_without_usage: u64,
    /// Sum of prompt tokens.
    pub prompt_tokens: u64,
    /// Sum of completion tokens.
    pub completion_tokens: u64,
    /// Sum of total tokens.
    pub total_tokens: u64,
    /// Sum of prompt tokens served from the server's prefix cache.
    pub cached_tokens: u64,
}

impl UsageTotals {
    /// Adds one call's usage.
    pub fn record(&mut self, usage: Option<TokenUsage>) {
        self.calls += 1;
        match usage {
            Some(usage) => {
                self.prompt_tokens += usage.prompt_tokens;
                self.completion_tokens += usage.completion_tokens;
                self.total_tokens += usage.total_tokens;
                self.cached_tokens += usage.cached_tokens;
                if usage.estimated {
                    self.calls_without_usage += 1;
                }
            }
            None => self.calls_without_usage += 1,
        }
    }
}

/// How a call went, for the step record and the inspector.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CallStats {
    /// Requests sent, retries and the non-streaming fallback included.
    pub attempts: u32,
    /// From the first request to the complete answer, waits included.
    pub latency: Duration,
    /// Whether the answer that was used arrived as a stream.
    pub streamed: bool,
    /// Why the client fell back to a non-streaming request, if it did.
    pub fallback: Option<String>,
    /// How the forced tool was demanded in the request that was answered
    /// (weaker than `Named` when the server refused the named form).
    pub tool_choice: ToolChoice,
    /// The HTTP status of the answer that was used.
    pub status: u16,
}

/// The model's answer to one request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatResponse {
    /// Function calls, in the order the server indexed them.
    pub tool_calls: Vec<ToolCall>,
    /// The message text (empty when the model only called a tool).
    pub content: String,
    /// Reasoning text some servers send apart (`reasoning_content`).
    pub reasoning: String,
    /// Why the model stopped (`stop`, `tool_calls`, `length`, …).
    pub finish_reason: Option<String>,
    /// Token counts, when the server reported them.
    pub usage: Option<TokenUsage>,
    /// The model that answered, as the server names it.
    pub model: Option<String>,
    /// The body as received (the whole SSE text for a stream).
    pub raw: String,
    /// Attempts, latency and transport details.
    pub stats: CallStats,
}

impl ChatResponse {
    /// The first call of the function `name`, if the model made one.
    pub fn tool_call(&self, name: &str) -> Option<&ToolCall> {
        self.tool_calls.iter().find(|call| call.name == name)
    }

    /// The characters the model wrote: text, reasoning, tool names and
    /// arguments (what an estimate of its tokens is based on).
    pub fn answer_chars(&self) -> usize {
        self.content.chars().count()
            + self.reasoning.chars().count()
            + self
                .tool_calls
                .iter()
                .map(|c| c.name.chars().count() + c.arguments.chars().count())
                .sum::<usize>()
    }

    /// True when the answer holds neither a tool call nor any text, which
    /// is what servers that cannot stream tool calls produce.
    pub fn is_empty(&self) -> bool {
        self.tool_calls
            .iter()
            .all(|call| call.name.is_empty() && call.arguments.is_empty())
            && self.content.trim().is_empty()
    }
}

/// The first characters of a body, for error messages.
pub(crate) fn body_start(body: &str) -> String {
    let mut start: String = body.chars().take(BODY_START_CHARS).collect();
    if start.len() < body.len() {
        start.push('…');
    }
    start
}

/// The message and kind of an error object, in the shapes servers use:
/// `{"error": {"message", "type", "code"}}`, `{"error": "text"}` (Ollama),
/// or `{"message": …}` / `{"detail": …}` at the top level.
pub(crate) fn error_in_json(value: &Value) -> Option<(String, Option<String>)> {
    match value.get("error") {
        Some(Value::Object(error)) => {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| Value::Object(error.clone()).to_string());
            let kind = ["code", "type"]
                .iter()
                .filter_map(|key| error.get(*key))
                .find_map(|v| match v {
                    Value::String(s) if !s.is_empty() => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                });
            Some((message, kind))
        }
        Some(Value::String(message)) => Some((message.clone(), None)),
        Some(Value::Null) | None => {
            let message = ["message", "detail"]
                .iter()
                .find_map(|key| value.get(*key))
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| v.to_string())
                })?;
            // A top-level `message` is only an error when nothing else of an
            // answer is there.
            value.get("choices").is_none().then_some((message, None))
        }
        Some(other) => Some((other.to_string(), None)),
    }
}

/// The text of an error body for a message: the server's own message when
/// the body is JSON, otherwise its start.
pub(crate) fn error_text(body: &str) -> (String, Option<String>) {
    match serde_json::from_str::<Value>(body) {
        Ok(value) => error_in_json(&value).unwrap_or_else(|| (body_start(body), None)),
        Err(_) if body.trim().is_empty() => ("(empty body)".to_owned(), None),
        Err(_) => (body_start(body.trim()), None),
    }
}

/// The `arguments` of a function call as text; a few servers send an
/// object instead of the JSON string the protocol specifies.
pub(crate) fn arguments_text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// Parses a non-streamed chat-completions body.
pub(crate) fn parse_completion(body: &str, status: u16) -> Result<ChatResponse, LlmError> {
    let value: Value = serde_json::from_str(body).map_err(|e| LlmError::MalformedBody {
        status,
        detail: e.to_string(),
        body_start: body_start(body),
    })?;
    if let Some((message, kind)) = error_in_json(&value) {
        return Err(LlmError::ErrorInAnswer {
            status,
            message,
            kind,
        });
    }
    let Some(choice) = value.get("choices").and_then(|c| c.get(0)) else {
        return Err(LlmError::MalformedBody {
            status,
            detail: "no choices in the answer".to_owned(),
            body_start: body_start(body),
        });
    };
    let message = choice.get("message").cloned().unwrap_or(Value::Null);
    let text = |key: &str| {
        message
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let mut tool_calls: Vec<ToolCall> = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|call| {
                    let function = call.get("function").unwrap_or(&Value::Null);
                    ToolCall {
                        id: call
                            .get("id")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        name: function
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        arguments: arguments_text(function.get("arguments")),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    // The pre-tools `function_call` field, still sent by some proxies.
    if tool_calls.is_empty() {
        if let Some(function) = message.get("function_call").filter(|f| f.is_object()) {
            tool_calls.push(ToolCall {
                id: String::new(),
                name: function
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                arguments: arguments_text(function.get("arguments")),
            });
        }
    }
    Ok(ChatResponse {
        tool_calls,
        content: text("content"),
        reasoning: text("reasoning_content"),
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
        usage: TokenUsage::find_in(&value),
        model: value
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_owned),
        raw: body.to_owned(),
        stats: CallStats {
            status,
            ..CallStats::default()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_a_forced_tool_call() {
        let body = json!({
            "model": "m",
            "choices": [{
                "message": {"role": "assistant", "content": null, "tool_calls": [{
                    "id": "call_1", "type": "function",
                    "function": {"name": "agent_step", "arguments": "{\"a\":1}"}
                }]},
                "finish_reason": "tool_calls"
            }],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        })
        .to_string();
        let response = parse_completion(&body, 200).unwrap();
        let call = response.tool_call("agent_step").unwrap();
        assert_eq!(call.arguments, "{\"a\":1}");
        assert_eq!(call.id, "call_1");
        assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(response.usage.unwrap().total_tokens, 15);
        assert_eq!(response.raw, body);
        assert!(!response.is_empty());
    }

    #[test]
    fn object_arguments_and_legacy_function_call_are_accepted() {
        let body = json!({"choices": [{"message": {"function_call": {
            "name": "agent_step", "arguments": {"a": 1}
        }}}]})
        .to_string();
        let response = parse_completion(&body, 200).unwrap();
        assert_eq!(response.tool_calls[0].arguments, "{\"a\":1}");
    }

    #[test]
    fn malformed_bodies_quote_their_start() {
        let error = parse_completion("<html>Bad gateway</html>", 200).unwrap_err();
        assert!(matches!(error, LlmError::MalformedBody { status: 200, .. }));
        assert!(error.to_string().contains("<html>Bad gateway"));
        let error = parse_completion("{\"id\":1}", 200).unwrap_err();
        assert!(error.to_string().contains("no choices"));
    }

    #[test]
    fn error_shapes_of_several_servers_are_read() {
        let openai =
            json!({"error": {"message": "quota", "type": "insufficient_quota", "code": null}});
        assert_eq!(
            error_in_json(&openai),
            Some(("quota".to_owned(), Some("insufficient_quota".to_owned())))
        );
        let ollama = json!({"error": "model \"x\" not found"});
        assert_eq!(error_in_json(&ollama).unwrap().0, "model \"x\" not found");
        let fastapi = json!({"detail": "Not Found"});
        assert_eq!(error_in_json(&fastapi).unwrap().0, "Not Found");
        assert_eq!(error_text("").0, "(empty body)");
        assert!(error_in_json(&json!({"choices": [], "message": "x"})).is_none());
    }

    #[test]
    fn usage_is_found_where_each_server_puts_it() {
        let openai = json!({"usage": {"prompt_tokens": 9, "completion_tokens": 1,
            "prompt_tokens_details": {"cached_tokens": 8}}});
        let usage = TokenUsage::find_in(&openai).unwrap();
        assert_eq!((usage.total_tokens, usage.cached_tokens), (10, 8));
        let llama = json!({"timings": {"prompt_n": 5, "predicted_n": 3, "cache_n": 100}});
        let usage = TokenUsage::find_in(&llama).unwrap();
        assert_eq!((usage.prompt_tokens, usage.cached_tokens), (105, 100));
        let ollama = json!({"prompt_eval_count": 7, "eval_count": 2});
        assert_eq!(TokenUsage::find_in(&ollama).unwrap().total_tokens, 9);
        let in_choice = json!({"choices": [{"usage": {"prompt_tokens": 4}}]});
        assert_eq!(TokenUsage::find_in(&in_choice).unwrap().prompt_tokens, 4);
        let zeros = json!({"usage": {"prompt_tokens": 0, "completion_tokens": 0}});
        assert_eq!(TokenUsage::find_in(&zeros), None);
        assert!(TokenUsage::estimate(35, 7).estimated);
    }

    #[test]
    fn usage_totals_add_up() {
        let mut totals = UsageTotals::default();
        totals.record(TokenUsage::from_json(
            &json!({"prompt_tokens": 3, "completion_tokens": 2}),
        ));
        totals.record(None);
        assert_eq!(totals.calls, 2);
        assert_eq!(totals.calls_without_usage, 1);
        assert_eq!(totals.total_tokens, 5);
    }
}
