//! Assembling a streamed answer from its chunks.
//!
//! Each SSE event carries one `chat.completion.chunk`. Text arrives as
//! `delta.content` pieces, function arguments as `delta.tool_calls[]`
//! pieces keyed by `index`, and usage in a last chunk whose `choices` is
//! empty. The accumulator joins them, reports every piece to the caller as
//! it comes (so the reflection can be shown while the model writes it), and
//! turns an error object inside the stream into an error.

use serde_json::Value;

use super::error::LlmError;
use super::event::LlmEvent;
use super::response::{arguments_text, body_start, error_in_json, CallStats, ChatResponse};
use super::sse::SseEvent;
use super::tool::ToolCall;
use crate::events::TokenUsage;

/// The detail of a [`LlmError::StreamCut`] for a stream that ended before
/// its first chunk: what a local server does when the prompt does not fit
/// its context.
pub(crate) const EMPTY_STREAM: &str = "the stream ended without a single chunk";

/// Whether the stream said it is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamState {
    /// More chunks may follow.
    Open,
    /// `[DONE]` arrived: stop reading even if the server keeps the body open.
    Done,
}

/// One function call being assembled.
#[derive(Debug, Default)]
struct PartialCall {
    index: u64,
    call: ToolCall,
}

/// The answer so far.
#[derive(Debug, Default)]
pub(crate) struct StreamAccumulator {
    content: String,
    reasoning: String,
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    usage: Option<TokenUsage>,
    model: Option<String>,
    chunks: usize,
    done: bool,
}

impl StreamAccumulator {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Takes in one event; pieces of text and arguments go to `on_event`.
    pub(crate) fn apply(
        &mut self,
        event: &SseEvent,
        on_event: &mut (dyn FnMut(LlmEvent) + Send),
    ) -> Result<StreamState, LlmError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(StreamState::Done);
        }
        if data.is_empty() {
            return Ok(StreamState::Open);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| LlmError::MalformedBody {
            status: 200,
            detail: format!("stream chunk {} is not JSON: {e}", self.chunks + 1),
            body_start: body_start(data),
        })?;
        self.chunks += 1;
        let named_error = event.event.as_deref() == Some("error");
        if let Some((message, kind)) =
            error_in_json(&chunk).or_else(|| named_error.then(|| (data.to_owned(), None)))
        {
            return Err(LlmError::ErrorInAnswer {
                status: 200,
                message,
                kind,
            });
        }
        if let Some(model) = chunk.get("model").and_then(Value::as_str) {
            self.model.get_or_insert_with(|| model.to_owned());
        }
        if let Some(usage) = TokenUsage::find_in(&chunk) {
            self.usage = Some(usage);
        }
        // Only the first choice is asked for (n is never set).
        let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) else {
            return Ok(StreamState::Open);
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
        }
        let delta = choice
            .get("delta")
            .or_else(|| choice.get("message"))
            .unwrap_or(&Value::Null);
        if let Some(text) = delta
            .get("content")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            self.content.push_str(text);
            on_event(LlmEvent::ContentDelta {
                text: text.to_owned(),
            });
        }
        for key in ["reasoning_content", "reasoning"] {
            if let Some(text) = delta
                .get(key)
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                self.reasoning.push_str(text);
                on_event(LlmEvent::ReasoningDelta {
                    text: text.to_owned(),
                });
            }
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for (position, piece) in calls.iter().enumerate() {
                self.apply_call_piece(position, piece, on_event);
            }
        }
        Ok(StreamState::Open)
    }

    fn apply_call_piece(
        &mut self,
        position: usize,
        piece: &Value,
        on_event: &mut (dyn FnMut(LlmEvent) + Send),
    ) {
        // Servers that omit `index` send one call per chunk in order, so its
        // position in the chunk stands in for it.
        let index = piece
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(position as u64);
        let slot = match self.calls.iter().position(|c| c.index == index) {
            Some(slot) => slot,
            None => {
                self.calls.push(PartialCall {
                    index,
                    call: ToolCall::default(),
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[slot].call;
        if let Some(id) = piece.get("id").and_then(Value::as_str) {
            if call.id.is_empty() {
                call.id = id.to_owned();
            }
        }
        let function = piece.get("function").unwrap_or(&Value::Null);
        let mut new_name = None;
        if let Some(name) = function
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        {
            // Most servers send the name once; some repeat it in every
            // chunk, a few send it in fragments.
            if call.name != name {
                call.name.push_str(name);
                new_name = Some(call.name.clone());
            }
        }
        let fragment = arguments_text(function.get("arguments"));
        call.arguments.push_str(&fragment);
        if new_name.is_some() || !fragment.is_empty() {
            on_event(LlmEvent::ToolCallDelta {
                index: index as usize,
                name: new_name,
                arguments: fragment,
            });
        }
    }

    /// The finished answer. `raw` is the body as received.
    ///
    /// A stream that ends with neither `[DONE]` nor a `finish_reason` was
    /// cut: the model had not said it was finished, and half a tool call is
    /// worse than a clear error.
    pub(crate) fn finish(self, raw: String) -> Result<ChatResponse, LlmError> {
        if !self.done && self.finish_reason.is_none() {
            let detail = if self.chunks == 0 {
                EMPTY_STREAM.to_owned()
            } else {
                format!(
                    "the stream ended after {} chunks without [DONE] or a finish_reason",
                    self.chunks
                )
            };
            return Err(LlmError::StreamCut {
                status: 200,
                detail,
                received_bytes: raw.len(),
            });
        }
        let mut calls = self.calls;
        calls.sort_by_key(|c| c.index);
        Ok(ChatResponse {
            tool_calls: calls.into_iter().map(|c| c.call).collect(),
            content: self.content,
            reasoning: self.reasoning,
            finish_reason: self.finish_reason,
            usage: self.usage,
            model: self.model,
            raw,
            stats: CallStats {
                streamed: true,
                status: 200,
                ..CallStats::default()
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(value: Value) -> SseEvent {
        SseEvent {
            event: None,
            data: value.to_string(),
        }
    }

    fn run(events: &[SseEvent]) -> (Result<ChatResponse, LlmError>, Vec<LlmEvent>) {
        let mut seen = Vec::new();
        let mut acc = StreamAccumulator::new();
        let mut on_event = |e: LlmEvent| seen.push(e);
        for e in events {
            match acc.apply(e, &mut on_event) {
                Ok(StreamState::Done) => break,
                Ok(StreamState::Open) => {}
                Err(error) => return (Err(error), seen),
            }
        }
        (acc.finish("raw".into()), seen)
    }

    fn call_piece(index: u64, name: Option<&str>, args: &str) -> Value {
        let mut function = json!({"arguments": args});
        if let Some(name) = name {
            function["name"] = json!(name);
        }
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "function": function}]}}]})
    }

    #[test]
    fn tool_call_arguments_accumulate_by_index() {
        let (response, seen) = run(&[
            event(json!({"choices": [{"delta": {"role": "assistant", "content": ""}}]})),
            event(call_piece(0, Some("agent_step"), "{\"next_")),
            event(call_piece(1, Some("other"), "{}")),
            event(call_piece(0, None, "goal\":\"sign in\"}")),
            event(json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]})),
            event(
                json!({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}),
            ),
            SseEvent {
                event: None,
                data: "[DONE]".into(),
            },
        ]);
        let response = response.unwrap();
        assert_eq!(response.tool_calls.len(), 2);
        assert_eq!(response.tool_calls[0].name, "agent_step");
        assert_eq!(
            response.tool_calls[0].arguments,
            "{\"next_goal\":\"sign in\"}"
        );
        assert_eq!(response.tool_calls[1].name, "other");
        assert_eq!(response.usage.unwrap().total_tokens, 10);
        assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
        let fragments: String = seen
            .iter()
            .filter_map(|e| match e {
                LlmEvent::ToolCallDelta {
                    index: 0,
                    arguments,
                    ..
                } => Some(arguments.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(fragments, "{\"next_goal\":\"sign in\"}");
    }

    #[test]
    fn repeated_names_are_not_doubled_and_content_streams() {
        let (response, seen) = run(&[
            event(json!({"choices": [{"delta": {"content": "Think"}}]})),
            event(json!({"choices": [{"delta": {"content": "ing."}}]})),
            event(call_piece(0, Some("agent_step"), "{")),
            event(call_piece(0, Some("agent_step"), "}")),
            event(json!({"choices": [{"delta": {}, "finish_reason": "stop"}]})),
        ]);
        let response = response.unwrap();
        assert_eq!(response.content, "Thinking.");
        assert_eq!(response.tool_calls[0].name, "agent_step");
        assert_eq!(response.tool_calls[0].arguments, "{}");
        assert!(seen.contains(&LlmEvent::ContentDelta {
            text: "ing.".into()
        }));
    }

    #[test]
    fn an_error_object_in_the_stream_is_an_error() {
        let (response, _) = run(&[
            event(json!({"choices": [{"delta": {"content": "a"}}]})),
            event(
                json!({"error": {"message": "context too long", "type": "invalid_request_error"}}),
            ),
        ]);
        match response.unwrap_err() {
            LlmError::ErrorInAnswer {
                message,
                kind,
                status,
            } => {
                assert_eq!(message, "context too long");
                assert_eq!(kind.as_deref(), Some("invalid_request_error"));
                assert_eq!(status, 200);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn an_unfinished_stream_is_cut_but_a_finished_one_needs_no_done() {
        let (response, _) = run(&[event(call_piece(0, Some("agent_step"), "{\"next"))]);
        assert!(matches!(response.unwrap_err(), LlmError::StreamCut { .. }));
        let (response, _) = run(&[
            event(call_piece(0, Some("agent_step"), "{}")),
            event(json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]})),
        ]);
        assert_eq!(response.unwrap().tool_calls[0].arguments, "{}");
    }

    #[test]
    fn a_chunk_that_is_not_json_names_its_start() {
        let (response, _) = run(&[SseEvent {
            event: None,
            data: "{\"choices\": [oops".into(),
        }]);
        let error = response.unwrap_err();
        assert!(error.to_string().contains("stream chunk 1"));
        assert!(error.to_string().contains("oops"));
    }
}
