//! Servers that do not speak the whole protocol: one that refuses
//! streaming, one that refuses a named tool choice, an empty stream, JSON
//! answered to a stream request, and a stream with the wrong content type.

use serde_json::{json, Value};
use webagent::llm::{LlmClient, LlmEvent, StopSignal, ToolChoice};

use crate::calls::{call, config, step_arguments, step_request};
use crate::support::llm_server::{
    error_body, sse_event, tool_call_completion, tool_call_events, LlmServer, Reply,
};

#[tokio::test]
async fn a_server_refusing_stream_gets_a_plain_request_from_then_on() {
    let server = LlmServer::start(vec![
        Reply::json(
            400,
            error_body(
                "stream_options: Extra inputs are not permitted",
                "invalid_request_error",
            )
            .to_string(),
        ),
        Reply::json(200, tool_call_completion("agent_step", &step_arguments())),
        Reply::json(200, tool_call_completion("agent_step", &step_arguments())),
    ])
    .await;
    let client = LlmClient::new(config(server.base_url()).with_streaming(true)).unwrap();
    let (result, progress) = call(&client, &step_request(), &StopSignal::never()).await;
    let response = result.unwrap();
    assert!(response
        .stats
        .fallback
        .as_deref()
        .unwrap_or("")
        .contains("refused streaming"));
    assert!(progress
        .iter()
        .any(|e| matches!(e, LlmEvent::FallbackToNonStreaming { .. })));
    client.complete(&step_request()).await.unwrap();

    let streamed: Vec<bool> = server
        .requests()
        .iter()
        .map(|r| r.json().get("stream").is_some())
        .collect();
    assert_eq!(streamed, vec![true, false, false]);
}

#[tokio::test]
async fn a_refused_named_tool_choice_steps_down_to_required_then_auto() {
    let server = LlmServer::start(vec![
        Reply::json(
            400,
            error_body(
                "tool_choice must be 'auto' or 'none'",
                "invalid_request_error",
            )
            .to_string(),
        ),
        Reply::json(
            400,
            error_body(
                "Invalid value for tool_choice: required",
                "invalid_request_error",
            )
            .to_string(),
        ),
        Reply::json(200, tool_call_completion("agent_step", &step_arguments())),
        Reply::json(200, tool_call_completion("agent_step", &step_arguments())),
    ])
    .await;
    let client = LlmClient::new(config(server.base_url())).unwrap();
    let (result, progress) = call(&client, &step_request(), &StopSignal::never()).await;
    let response = result.unwrap();
    assert_eq!(response.stats.tool_choice, ToolChoice::Auto);
    assert_eq!(response.stats.attempts, 3);
    let steps: Vec<ToolChoice> = progress
        .iter()
        .filter_map(|e| match e {
            LlmEvent::ToolChoiceRelaxed { to, .. } => Some(*to),
            _ => None,
        })
        .collect();
    assert_eq!(steps, vec![ToolChoice::Required, ToolChoice::Auto]);
    // The next call starts where the server's limits are.
    client.complete(&step_request()).await.unwrap();

    let choices: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.json().get("tool_choice").cloned().unwrap_or(Value::Null))
        .collect();
    assert_eq!(
        choices,
        vec![
            json!({"type": "function", "function": {"name": "agent_step"}}),
            json!("required"),
            Value::Null,
            Value::Null,
        ]
    );
    assert!(server
        .requests()
        .iter()
        .all(|r| r.json()["tools"][0]["function"]["name"] == "agent_step"));
}

#[tokio::test]
async fn an_empty_stream_answer_falls_back_to_a_plain_request() {
    // What a server that cannot stream tool calls sends: a finish and no call.
    let empty = vec![
        sse_event(&json!({"choices": [{"index": 0, "delta": {"role": "assistant"}}]})),
        sse_event(&json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})),
        "data: [DONE]\n\n".to_owned(),
    ];
    let server = LlmServer::start(vec![
        Reply::sse(empty),
        Reply::json(200, tool_call_completion("agent_step", &step_arguments())),
    ])
    .await;
    let client = LlmClient::new(config(server.base_url()).with_streaming(true)).unwrap();
    let response = client.complete(&step_request()).await.unwrap();
    assert!(response.tool_call("agent_step").is_some());
    assert!(!response.stats.streamed);
    assert_eq!(response.stats.attempts, 2);
    assert!(response.stats.fallback.is_some());
    assert!(server.requests()[1].json().get("stream").is_none());
}

#[tokio::test]
async fn a_server_ignoring_stream_and_answering_json_is_understood() {
    let server = LlmServer::start(vec![Reply::json(
        200,
        tool_call_completion("agent_step", &step_arguments()),
    )])
    .await;
    let client = LlmClient::new(config(server.base_url()).with_streaming(true)).unwrap();
    let response = client.complete(&step_request()).await.unwrap();
    assert!(response.tool_call("agent_step").is_some());
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn a_stream_with_the_wrong_content_type_is_still_read_as_a_stream() {
    let body = tool_call_events("agent_step", &step_arguments(), 3).concat();
    let server = LlmServer::start(vec![Reply::text(200, "text/plain; charset=utf-8", body)]).await;
    let client = LlmClient::new(config(server.base_url()).with_streaming(true)).unwrap();
    let response = client.complete(&step_request()).await.unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&response.tool_calls[0].arguments).unwrap(),
        step_arguments()
    );
    assert_eq!(response.usage.unwrap().total_tokens, 150);
}
