//! Reading what the server answers: a plain tool call with usage and the
//! raw body, the request as sent, the key's header, streamed tool calls
//! and text however the stream is cut into pieces, an error inside a 200
//! stream, a malformed body, and a usage estimate when none is sent.

use std::time::Duration;

use serde_json::{json, Value};
use webagent::llm::{ChatMessage, ChatRequest, LlmClient, LlmError, LlmEvent, StopSignal};

use crate::calls::{call, config, step_arguments, step_request};
use crate::support::llm_server::{
    error_body, rechunk, sse_event, text_completion, text_events, tool_call_completion,
    tool_call_events, LlmServer, Reply,
};

#[tokio::test]
async fn plain_tool_call_answer_is_read_with_usage_and_raw_body() {
    let body = tool_call_completion("agent_step", &step_arguments());
    let server = LlmServer::start(vec![Reply::json(200, body.clone())]).await;
    let client = LlmClient::new(config(server.base_url())).unwrap();

    let (result, events) = call(&client, &step_request(), &StopSignal::never()).await;
    let response = result.unwrap();

    let tool_call = response
        .tool_call("agent_step")
        .expect("a call of the forced tool");
    let arguments: Value = serde_json::from_str(&tool_call.arguments).unwrap();
    assert_eq!(arguments, step_arguments());
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(response.usage.unwrap().total_tokens, 150);
    assert_eq!(
        response.raw, body,
        "the inspector shows the body as received"
    );
    assert_eq!(response.stats.attempts, 1);
    assert!(!response.stats.streamed);
    assert_eq!(client.usage_totals().total_tokens, 150);
    assert!(events
        .iter()
        .any(|e| matches!(e, LlmEvent::ToolCallDelta { name: Some(n), .. } if n == "agent_step")));
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn request_carries_model_messages_tool_and_forced_choice() {
    let server = LlmServer::start(vec![Reply::json(
        200,
        tool_call_completion("agent_step", &step_arguments()),
    )])
    .await;
    let client = LlmClient::new(config(server.base_url())).unwrap();
    call(&client, &step_request(), &StopSignal::never())
        .await
        .0
        .unwrap();

    let requests = server.requests();
    let request = &requests[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("content-type"), Some("application/json"));
    let body = request.json();
    assert_eq!(body["model"], "test-model");
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "You drive a browser."})
    );
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "Sign in as admin."})
    );
    assert_eq!(body["tools"].as_array().map(Vec::len), Some(1));
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "agent_step");
    assert_eq!(
        body["tools"][0]["function"]["parameters"]["required"],
        json!(["next_goal", "action"])
    );
    assert_eq!(
        body["tool_choice"],
        json!({"type": "function", "function": {"name": "agent_step"}})
    );
    assert_eq!(body["temperature"], json!(0.0));
    assert!(
        body.get("stream").is_none(),
        "streaming is off in this config"
    );
}

#[tokio::test]
async fn no_authorization_header_without_a_key_and_bearer_with_one() {
    let server = LlmServer::start(vec![
        Reply::json(200, text_completion("ok")),
        Reply::json(200, text_completion("ok")),
    ])
    .await;
    let anonymous = LlmClient::new(config(server.base_url())).unwrap();
    anonymous.complete(&step_request()).await.unwrap();
    let keyed = LlmClient::new(config(server.base_url()).with_api_key("sk-test-123")).unwrap();
    keyed.complete(&step_request()).await.unwrap();

    let requests = server.requests();
    assert_eq!(requests[0].header("authorization"), None);
    assert_eq!(
        requests[1].header("authorization"),
        Some("Bearer sk-test-123")
    );
}

#[tokio::test]
async fn streamed_tool_call_survives_crlf_comments_odd_splits_and_no_done() {
    let events: Vec<String> = tool_call_events("agent_step", &step_arguments(), 9)
        .into_iter()
        .filter(|event| !event.contains("[DONE]"))
        .flat_map(|event| [": keep-alive\n\n".to_owned(), event])
        .map(|event| event.replace('\n', "\r\n"))
        .collect();
    // 5-byte pieces split CRLF pairs, `data:` prefixes and the multibyte
    // characters of the arguments.
    let reply = Reply::sse_pieces(rechunk(&events, 5)).paced(Duration::from_millis(1));
    let server = LlmServer::start(vec![reply]).await;
    let client = LlmClient::new(config(server.base_url()).with_streaming(true)).unwrap();

    let (result, progress) = call(&client, &step_request(), &StopSignal::never()).await;
    let response = result.unwrap();

    let tool_call = response.tool_call("agent_step").unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&tool_call.arguments).unwrap(),
        step_arguments()
    );
    assert_eq!(tool_call.id, "call_test_1");
    assert!(response.stats.streamed);
    assert_eq!(
        response.usage.unwrap().total_tokens,
        150,
        "usage from the chunk with empty choices"
    );
    assert!(
        response.raw.contains(": keep-alive"),
        "raw keeps the stream as sent"
    );
    let streamed: String = progress
        .iter()
        .filter_map(|e| match e {
            LlmEvent::ToolCallDelta { arguments, .. } => Some(arguments.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        streamed, tool_call.arguments,
        "the UI saw every piece as it came"
    );
    let deltas = progress
        .iter()
        .filter(|e| matches!(e, LlmEvent::ToolCallDelta { .. }))
        .count();
    assert!(deltas >= 9, "arguments arrived in pieces, got {deltas}");

    let body = server.requests()[0].json();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        server.requests()[0].header("accept"),
        Some("text/event-stream")
    );
}

#[tokio::test]
async fn streamed_text_arrives_as_content_deltas() {
    let server = LlmServer::start(vec![Reply::sse(text_events("The form is submitted.", 4))]).await;
    let client = LlmClient::new(config(server.base_url()).with_streaming(true)).unwrap();
    let (result, progress) = call(
        &client,
        &ChatRequest::new(vec![ChatMessage::user("hi")]),
        &StopSignal::never(),
    )
    .await;
    let response = result.unwrap();
    assert_eq!(response.content, "The form is submitted.");
    let pieces: Vec<&str> = progress
        .iter()
        .filter_map(|e| match e {
            LlmEvent::ContentDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(pieces.len(), 4);
    assert_eq!(pieces.concat(), "The form is submitted.");
}

#[tokio::test]
async fn an_error_object_inside_a_200_stream_fails_the_call() {
    let events = vec![
        sse_event(&json!({"choices": [{"index": 0, "delta": {"content": "Let me"}}]})),
        sse_event(&error_body(
            "Invalid schema for function 'agent_step'",
            "invalid_request_error",
        )),
        "data: [DONE]\n\n".to_owned(),
    ];
    let server = LlmServer::start(vec![Reply::sse(events)]).await;
    let client = LlmClient::new(config(server.base_url()).with_streaming(true)).unwrap();
    let (result, _) = call(&client, &step_request(), &StopSignal::never()).await;
    let error = result.unwrap_err();
    assert!(
        matches!(error, LlmError::ErrorInAnswer { status: 200, .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("Invalid schema for function"));
    assert_eq!(server.request_count(), 1, "a request error is not retried");
}

#[tokio::test]
async fn a_malformed_body_shows_its_start() {
    let server = LlmServer::start(vec![Reply::text(
        200,
        "application/json",
        "<html><body>502 Bad Gateway from the corporate proxy</body></html>",
    )])
    .await;
    let client = LlmClient::new(config(server.base_url())).unwrap();
    let error = client.complete(&step_request()).await.unwrap_err();
    assert!(
        matches!(error, LlmError::MalformedBody { status: 200, .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("<html><body>502 Bad Gateway"));
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn a_stream_without_usage_gets_an_estimate_marked_as_such() {
    let mut events = tool_call_events("agent_step", &step_arguments(), 4);
    // Drop the usage chunk, as llama.cpp's server does.
    events.retain(|e| !e.contains("\"usage\""));
    let server = LlmServer::start(vec![Reply::sse(events)]).await;
    let client = LlmClient::new(config(server.base_url()).with_streaming(true)).unwrap();
    let request = step_request();
    let (result, _) = call(&client, &request, &StopSignal::never()).await;
    let usage = result.unwrap().usage.expect("an estimate");
    assert!(usage.estimated);
    assert_eq!(usage.prompt_tokens, request.estimated_prompt_tokens());
    assert!(usage.completion_tokens > 10, "{usage:?}");
    assert_eq!(client.usage_totals().calls_without_usage, 1);
    // Usage was asked for, and the answer was bounded.
    let body = server.requests()[0].json();
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_tokens"], 1024);

    // A server's own count is used as is, with its cached tokens.
    let mut events = tool_call_events("agent_step", &step_arguments(), 4);
    for event in events.iter_mut() {
        if event.contains("\"usage\"") {
            *event = sse_event(
                &json!({"choices": [], "usage": {"prompt_tokens": 900, "completion_tokens": 40, "prompt_tokens_details": {"cached_tokens": 850}}}),
            );
        }
    }
    let server = LlmServer::start(vec![Reply::sse(events)]).await;
    let client = LlmClient::new(config(server.base_url()).with_streaming(true)).unwrap();
    let (result, _) = call(&client, &request, &StopSignal::never()).await;
    let usage = result.unwrap().usage.unwrap();
    assert!(!usage.estimated);
    assert_eq!((usage.total_tokens, usage.cached_tokens), (940, 850));
}
