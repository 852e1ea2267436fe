//! The LLM client against a real HTTP server on 127.0.0.1 that answers from
//! a script, through the real reqwest stack.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::llm_server::{
    error_body, rechunk, sse_event, text_completion, text_events, tool_call_completion,
    tool_call_events, LlmServer, Piece, Reply, StreamEnd,
};
use webagent::llm::{
    stop_pair, ChatMessage, ChatRequest, FunctionTool, LlmClient, LlmConfig, LlmError, LlmEvent,
    RetryPolicy, StopSignal, TimeoutPhase, ToolChoice,
};

/// Guards every call so a client bug fails the test instead of hanging it.
const GUARD: Duration = Duration::from_secs(30);

fn config(base_url: String) -> LlmConfig {
    LlmConfig {
        base_url,
        api_key: None,
        model: "test-model".into(),
        temperature: Some(0.0),
        connect_timeout: Duration::from_secs(5),
        request_timeout: Duration::from_secs(20),
        idle_timeout: Duration::from_secs(20),
        total_timeout: Duration::from_secs(25),
        max_output_tokens: Some(1024),
        context_window: None,
        retry: RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(10),
            max_retry_after: Duration::from_millis(50),
        },
        streaming: false,
    }
}

fn step_tool() -> FunctionTool {
    FunctionTool {
        name: "agent_step".into(),
        description: "Reflect on the last step, then pick one action.".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "evaluation_previous_goal": {"type": "string"},
                "memory": {"type": "string"},
                "next_goal": {"type": "string"},
                "action": {"type": "object"},
            },
            "required": ["next_goal", "action"],
        }),
    }
}

fn step_request() -> ChatRequest {
    ChatRequest::new(vec![
        ChatMessage::system("You drive a browser."),
        ChatMessage::user("Sign in as admin."),
    ])
    .with_forced_tool(step_tool())
}

fn step_arguments() -> Value {
    json!({
        "evaluation_previous_goal": "The sign-in page loaded — 登录页已打开.",
        "memory": "Need the admin account; café ☕ menu is not relevant.",
        "next_goal": "Type the user name.",
        "action": {"input_text": {"index": 3, "text": "admin"}},
    })
}

/// Runs one call, collecting the progress events.
async fn call(
    client: &LlmClient,
    request: &ChatRequest,
    stop: &StopSignal,
) -> (Result<webagent::llm::ChatResponse, LlmError>, Vec<LlmEvent>) {
    let mut events = Vec::new();
    let mut on_event = |event: LlmEvent| events.push(event);
    let result = tokio::time::timeout(
        GUARD,
        client.complete_observed(request, &mut on_event, stop),
    )
    .await
    .expect("the call finished before the guard");
    (result, events)
}

fn retries(events: &[LlmEvent]) -> Vec<(u32, Duration, String)> {
    events
        .iter()
        .filter_map(|event| match event {
            LlmEvent::Retrying {
                retry,
                wait,
                reason,
                ..
            } => Some((*retry, *wait, reason.clone())),
            _ => None,
        })
        .collect()
}

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

/// Decision: a stream cut off mid-way is retried like a connection error,
/// since nothing was done with the half answer; the UI is told to clear
/// what it showed by the `Retrying` event.
#[tokio::test]
async fn a_stream_cut_mid_way_is_retried_then_reported_clearly() {
    let events = tool_call_events("agent_step", &step_arguments(), 6);
    let cut = || Reply::sse(events[..3].to_vec()).ending(StreamEnd::Cut);

    let server = LlmServer::start(vec![cut(), Reply::sse(events.clone())]).await;
    let client = LlmClient::new(config(server.base_url()).with_streaming(true)).unwrap();
    let (result, progress) = call(&client, &step_request(), &StopSignal::never()).await;
    let response = result.unwrap();
    assert_eq!(response.stats.attempts, 2);
    assert_eq!(
        serde_json::from_str::<Value>(&response.tool_calls[0].arguments).unwrap(),
        step_arguments()
    );
    assert_eq!(retries(&progress)[0].2, "stream cut off");

    let server = LlmServer::start(vec![cut(), cut()]).await;
    let mut settings = config(server.base_url()).with_streaming(true);
    settings.retry.max_retries = 1;
    let client = LlmClient::new(settings).unwrap();
    let (result, _) = call(&client, &step_request(), &StopSignal::never()).await;
    let error = result.unwrap_err();
    match &error {
        LlmError::GaveUp { attempts, last } => {
            assert_eq!(*attempts, 2);
            assert!(
                matches!(**last, LlmError::StreamCut { status: 200, .. }),
                "{last:?}"
            );
        }
        other => panic!("expected GaveUp, got {other:?}"),
    }
    assert!(error.to_string().contains("cut off"));
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn a_clean_end_without_finish_reason_or_done_counts_as_cut() {
    let events = tool_call_events("agent_step", &step_arguments(), 6);
    let server = LlmServer::start(vec![Reply::sse(events[..3].to_vec())]).await;
    let mut settings = config(server.base_url()).with_streaming(true);
    settings.retry.max_retries = 0;
    let client = LlmClient::new(settings).unwrap();
    let (result, _) = call(&client, &step_request(), &StopSignal::never()).await;
    assert!(matches!(result.unwrap_err(), LlmError::StreamCut { .. }));
}

#[tokio::test]
async fn rate_limit_with_retry_after_waits_then_succeeds() {
    let server = LlmServer::start(vec![
        Reply::json(
            429,
            error_body("Rate limit reached", "rate_limit_exceeded").to_string(),
        )
        .header("Retry-After", "1"),
        Reply::json(200, tool_call_completion("agent_step", &step_arguments())),
    ])
    .await;
    let client = LlmClient::new(config(server.base_url())).unwrap();
    let (result, progress) = call(&client, &step_request(), &StopSignal::never()).await;
    let response = result.unwrap();
    assert_eq!(server.request_count(), 2, "one retry after the 429");
    assert_eq!(response.stats.attempts, 2);
    // Retry-After (1 s) replaced the 1 ms backoff and was capped at 50 ms.
    assert_eq!(
        retries(&progress),
        vec![(1, Duration::from_millis(50), "HTTP 429".to_owned())]
    );
}

#[tokio::test]
async fn retry_after_as_a_past_http_date_means_retry_now() {
    let server = LlmServer::start(vec![
        Reply::json(503, "{}").header("Retry-After", "Thu, 01 Jan 1970 00:00:00 GMT"),
        Reply::json(200, text_completion("ok")),
    ])
    .await;
    let client = LlmClient::new(config(server.base_url())).unwrap();
    let (result, progress) = call(&client, &step_request(), &StopSignal::never()).await;
    result.unwrap();
    assert_eq!(
        retries(&progress),
        vec![(1, Duration::ZERO, "HTTP 503".to_owned())]
    );
}

#[tokio::test]
async fn two_503s_then_success_takes_three_attempts() {
    let unavailable = || {
        Reply::json(
            503,
            error_body("The server is overloaded", "server_error").to_string(),
        )
    };
    let server = LlmServer::start(vec![
        unavailable(),
        unavailable(),
        Reply::json(200, tool_call_completion("agent_step", &step_arguments())),
    ])
    .await;
    let client = LlmClient::new(config(server.base_url())).unwrap();
    let (result, progress) = call(&client, &step_request(), &StopSignal::never()).await;
    let response = result.unwrap();
    assert_eq!(response.stats.attempts, 3);
    assert_eq!(server.request_count(), 3);
    let notices = retries(&progress);
    assert_eq!(notices.iter().map(|r| r.0).collect::<Vec<_>>(), vec![1, 2]);
    assert!(notices
        .iter()
        .all(|r| r.1 <= Duration::from_millis(10) && r.2 == "HTTP 503"));
}

#[tokio::test]
async fn persistent_5xx_gives_up_after_max_retries_with_the_status() {
    let server = LlmServer::start(vec![
        Reply::json(502, "bad gateway"),
        Reply::json(502, "bad gateway"),
        Reply::json(502, "bad gateway"),
    ])
    .await;
    let mut settings = config(server.base_url());
    settings.retry.max_retries = 2;
    let client = LlmClient::new(settings).unwrap();
    let error = client.complete(&step_request()).await.unwrap_err();
    assert_eq!(error.status(), Some(502));
    assert!(
        error.to_string().starts_with("gave up after 3 attempts"),
        "{error}"
    );
    assert_eq!(server.request_count(), 3);
}

#[tokio::test]
async fn unauthorized_fails_at_once_and_says_the_key_is_missing() {
    let server = LlmServer::start(vec![
        Reply::json(
            401,
            error_body("You didn't provide an API key.", "invalid_request_error").to_string(),
        ),
        Reply::json(200, text_completion("never reached")),
    ])
    .await;
    let client = LlmClient::new(config(server.base_url())).unwrap();
    let error = client.complete(&step_request()).await.unwrap_err();
    assert!(
        matches!(
            error,
            LlmError::Unauthorized {
                status: 401,
                key_sent: false,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("OPENAI_API_KEY"));
    assert_eq!(server.request_count(), 1);

    let server = LlmServer::start(vec![Reply::json(
        401,
        error_body("Incorrect API key provided: sk-bad.", "invalid_api_key").to_string(),
    )])
    .await;
    let client = LlmClient::new(config(server.base_url()).with_api_key("sk-bad")).unwrap();
    let error = client.complete(&step_request()).await.unwrap_err();
    assert!(
        error.to_string().contains("rejected") && error.to_string().contains("Incorrect API key")
    );
}

#[tokio::test]
async fn forbidden_and_bad_request_are_final_and_quote_the_server() {
    let server = LlmServer::start(vec![
        Reply::json(
            403,
            error_body("Project does not have access to model", "model_not_found").to_string(),
        ),
        Reply::json(
            400,
            error_body(
                "Invalid schema for function 'agent_step'",
                "invalid_request_error",
            )
            .to_string(),
        ),
    ])
    .await;
    let client = LlmClient::new(config(server.base_url())).unwrap();
    let forbidden = client.complete(&step_request()).await.unwrap_err();
    assert!(matches!(forbidden, LlmError::Forbidden { status: 403, .. }));
    assert!(forbidden.to_string().contains("does not have access"));
    let bad = client.complete(&step_request()).await.unwrap_err();
    assert!(matches!(bad, LlmError::BadRequest { status: 400, .. }));
    assert!(bad
        .to_string()
        .contains("Invalid schema for function 'agent_step'"));
    assert_eq!(server.request_count(), 2, "one request each, no retries");
}

#[tokio::test]
async fn not_found_names_the_model_and_the_url() {
    let server = LlmServer::start(vec![Reply::json(
        404,
        json!({"error": "model \"test-model\" not found, try pulling it first"}).to_string(),
    )])
    .await;
    let client = LlmClient::new(config(server.base_url())).unwrap();
    let error = client.complete(&step_request()).await.unwrap_err();
    assert_eq!(error.status(), Some(404));
    let text = error.to_string();
    assert!(text.contains("\"test-model\""), "{text}");
    assert!(
        text.contains(&format!("{}/chat/completions", server.base_url())),
        "{text}"
    );
    assert!(text.contains("try pulling it first"), "{text}");
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn insufficient_quota_is_not_retried() {
    let server = LlmServer::start(vec![
        Reply::json(
            429,
            error_body(
                "You exceeded your current quota, please check your plan.",
                "insufficient_quota",
            )
            .to_string(),
        )
        .header("Retry-After", "1"),
        Reply::json(200, text_completion("never reached")),
    ])
    .await;
    let client = LlmClient::new(config(server.base_url())).unwrap();
    let error = client.complete(&step_request()).await.unwrap_err();
    assert!(
        matches!(error, LlmError::QuotaExhausted { status: 429, .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("quota"));
    assert_eq!(server.request_count(), 1);
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
async fn a_silent_stream_ends_with_an_idle_timeout() {
    let events = tool_call_events("agent_step", &step_arguments(), 6);
    let server = LlmServer::start(vec![
        Reply::sse(events[..2].to_vec()).ending(StreamEnd::Hang)
    ])
    .await;
    let mut settings = config(server.base_url()).with_streaming(true);
    settings.idle_timeout = Duration::from_millis(300);
    settings.retry.max_retries = 0;
    let client = LlmClient::new(settings).unwrap();
    let (result, _) = call(&client, &step_request(), &StopSignal::never()).await;
    let error = result.unwrap_err();
    assert!(
        matches!(error, LlmError::Timeout { phase: TimeoutPhase::Idle, after, .. } if after == Duration::from_millis(300)),
        "{error:?}"
    );
    assert!(error.to_string().contains("went silent"));
}

#[tokio::test]
async fn no_answer_at_all_ends_with_a_request_timeout_and_is_retried() {
    let server = LlmServer::start(vec![
        Reply::Hang,
        Reply::json(200, text_completion("late but fine")),
    ])
    .await;
    let mut settings = config(server.base_url());
    // Not streamed: the whole-answer limit governs.
    settings.total_timeout = Duration::from_millis(300);
    let client = LlmClient::new(settings).unwrap();
    let (result, progress) = call(&client, &step_request(), &StopSignal::never()).await;
    assert_eq!(result.unwrap().content, "late but fine");
    assert!(retries(&progress)[0].2.starts_with("timeout"));
}

#[tokio::test]
async fn a_stop_cancels_a_request_in_flight_and_a_backoff_wait() {
    let server = LlmServer::start(vec![Reply::Hang]).await;
    let client = LlmClient::new(config(server.base_url())).unwrap();
    let (handle, signal) = stop_pair();
    let request = step_request();
    let ((result, _), ()) = tokio::join!(call(&client, &request, &signal), async {
        server.wait_for_requests(1).await;
        handle.stop();
    });
    assert!(matches!(result.unwrap_err(), LlmError::Cancelled));
    // The connection was closed, not left running in the background.
    tokio::time::timeout(GUARD, server.wait_for_abandoned(1))
        .await
        .expect("the cancelled request's connection was closed");

    // The second case waits out a long Retry-After when the stop comes.
    let server = LlmServer::start(vec![
        Reply::json(503, "{}").header("Retry-After", "600"),
        Reply::json(200, text_completion("never reached")),
    ])
    .await;
    let mut settings = config(server.base_url());
    settings.retry.max_retry_after = Duration::from_secs(600);
    let client = LlmClient::new(settings).unwrap();
    let (handle, signal) = stop_pair();
    let ((result, _), ()) = tokio::join!(call(&client, &request, &signal), async {
        server.wait_for_requests(1).await;
        handle.stop();
    });
    assert!(matches!(result.unwrap_err(), LlmError::Cancelled));
    assert_eq!(server.request_count(), 1, "no request after the stop");
}

#[tokio::test]
async fn dropping_the_call_closes_its_connection() {
    let events = tool_call_events("agent_step", &step_arguments(), 6);
    let server = LlmServer::start(vec![
        Reply::Hang,
        Reply::sse(events[..2].to_vec()).ending(StreamEnd::Hang),
    ])
    .await;
    let client = LlmClient::new(config(server.base_url()).with_streaming(true)).unwrap();
    let request = step_request();
    for n in 1..=2 {
        // The UI drops the future (e.g. a newer step replaced it) once the
        // server has the request.
        tokio::select! {
            _ = client.complete(&request) => panic!("the hanging server never answers"),
            _ = server.wait_for_requests(n) => {}
        }
        tokio::time::timeout(GUARD, server.wait_for_abandoned(n))
            .await
            .expect("the dropped request's connection was closed");
    }
}

#[tokio::test]
async fn a_refused_connection_names_the_url_and_is_retried() {
    // A port that was just free: nothing listens there now.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let mut settings = config(base_url.clone());
    settings.retry.max_retries = 1;
    let client = LlmClient::new(settings).unwrap();
    let (result, progress) = call(&client, &step_request(), &StopSignal::never()).await;
    let error = result.unwrap_err();
    assert!(
        matches!(error.root(), LlmError::Connect { .. }),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains(&format!("{base_url}/chat/completions")),
        "{error}"
    );
    assert_eq!(error.status(), None);
    assert_eq!(retries(&progress).len(), 1);
}

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

#[tokio::test]
async fn a_long_but_lively_stream_is_not_cut_by_the_idle_timeout() {
    // Pieces 50 ms apart with a 2 s idle limit: the idle clock restarts on
    // every piece, so a long but lively answer is not cut.
    let events = tool_call_events("agent_step", &step_arguments(), 4);
    let pieces: Vec<Piece> = rechunk(&events, 40);
    let server = LlmServer::start(vec![
        Reply::sse_pieces(pieces).paced(Duration::from_millis(50))
    ])
    .await;
    let mut settings = config(server.base_url()).with_streaming(true);
    settings.idle_timeout = Duration::from_secs(2);
    let client = LlmClient::new(settings).unwrap();
    let response = client.complete(&step_request()).await.unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&response.tool_calls[0].arguments).unwrap(),
        step_arguments()
    );
}

/// A request whose prompt is as large as a real step's on a small page.
fn large_request() -> ChatRequest {
    ChatRequest::new(vec![
        ChatMessage::system("You drive a browser."),
        ChatMessage::user(format!(
            "Sign in.\n{}",
            "[7]<a href=/orders>Orders</a>\n".repeat(1200)
        )),
    ])
    .with_forced_tool(step_tool())
}

#[tokio::test]
async fn context_overflows_in_each_servers_wording_fail_at_once_and_say_what_to_set() {
    // (status, body, the context size the message must name)
    let bodies = [
        // OpenAI
        (
            400,
            json!({"error": {"message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 8263 tokens. Please reduce the length of the messages.", "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
            Some("8192"),
        ),
        // vLLM
        (
            400,
            json!({"object": "error", "message": "This model's maximum context length is 8192 tokens. However, you requested 8263 tokens (7263 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.", "type": "BadRequestError", "param": null, "code": 400}),
            Some("8192"),
        ),
        // llama.cpp server, older and newer
        (
            500,
            json!({"error": {"code": 500, "message": "Requested tokens (8263) exceed context window of 8192", "type": "server_error"}}),
            Some("8192"),
        ),
        (
            400,
            json!({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 8263, "n_ctx": 8192}}),
            None,
        ),
        // Ollama
        (400, json!({"error": "context length exceeded"}), None),
    ];
    for (status, body, limit) in bodies {
        let server = LlmServer::start(vec![
            Reply::json(status, body.to_string()),
            Reply::json(200, text_completion("a retry must not happen")),
        ])
        .await;
        let client = LlmClient::new(config(server.base_url())).unwrap();
        let (result, progress) = call(&client, &step_request(), &StopSignal::never()).await;
        let error = result.unwrap_err();
        assert!(
            matches!(error, LlmError::ContextOverflow { .. }),
            "{body}: {error:?}"
        );
        let text = error.to_string();
        assert!(text.contains("llm.context_window"), "{text}");
        assert!(text.contains("tokens"), "{text}");
        if let Some(limit) = limit {
            assert!(
                text.contains(&format!("context window of {limit} tokens")),
                "{text}"
            );
            assert!(text.contains("8263 tokens"), "{text}");
        }
        assert!(retries(&progress).is_empty(), "{body}: retried");
        assert_eq!(server.request_count(), 1, "{body}");
    }
    // The same report inside a 200 stream.
    let events = vec![sse_event(&error_body(
        "Requested tokens (8263) exceed context window of 8192",
        "server_error",
    ))];
    let server = LlmServer::start(vec![Reply::sse(events)]).await;
    let client = LlmClient::new(config(server.base_url()).with_streaming(true)).unwrap();
    let (result, _) = call(&client, &step_request(), &StopSignal::never()).await;
    let error = result.unwrap_err();
    assert!(
        matches!(
            error,
            LlmError::ContextOverflow {
                prompt_tokens: 8263,
                limit: Some(8192),
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn an_empty_stream_after_a_large_prompt_is_a_context_overflow() {
    let server = LlmServer::start(vec![Reply::sse(Vec::new()), Reply::sse(Vec::new())]).await;
    let mut settings = config(server.base_url()).with_streaming(true);
    settings.context_window = Some(8192);
    let client = LlmClient::new(settings).unwrap();
    let request = large_request();
    let (result, progress) = call(&client, &request, &StopSignal::never()).await;
    let error = result.unwrap_err();
    let LlmError::ContextOverflow {
        prompt_tokens,
        prompt_estimated,
        limit,
        ..
    } = &error
    else {
        panic!("not an overflow: {error:?}");
    };
    assert_eq!(*prompt_tokens, request.estimated_prompt_tokens());
    assert!(*prompt_estimated);
    assert_eq!(*limit, Some(8192));
    let text = error.to_string();
    assert!(
        text.contains("(estimated)") && text.contains("8192"),
        "{text}"
    );
    assert!(retries(&progress).is_empty());
    assert_eq!(server.request_count(), 1, "sent again unchanged");

    // The same empty stream after a short prompt is an ordinary cut stream.
    let server = LlmServer::start(vec![
        Reply::sse(Vec::new()),
        Reply::sse(tool_call_events("agent_step", &step_arguments(), 3)),
    ])
    .await;
    let client = LlmClient::new(config(server.base_url()).with_streaming(true)).unwrap();
    let (result, _) = call(&client, &step_request(), &StopSignal::never()).await;
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(server.request_count(), 2);
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

#[tokio::test]
async fn a_first_token_slower_than_the_limit_cancels_the_request_and_retries_a_local_server_once() {
    let server = LlmServer::start(vec![Reply::Hang, Reply::Hang, Reply::Hang]).await;
    let mut settings = config(server.base_url()).with_streaming(true);
    settings.request_timeout = Duration::from_millis(300);
    let client = LlmClient::new(settings).unwrap();
    let (result, progress) = call(&client, &step_request(), &StopSignal::never()).await;
    let error = result.unwrap_err();
    assert!(
        matches!(error.root(), LlmError::Timeout { phase: TimeoutPhase::FirstToken, after, .. } if *after == Duration::from_millis(300)),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(text.contains("first-token limit"), "{text}");
    assert!(text.contains("llm.timeouts.request"), "{text}");
    // One retry on a loopback server, though the policy allows three: the
    // server works one request at a time.
    assert_eq!(retries(&progress).len(), 1);
    assert_eq!(server.request_count(), 2);
    // Each timed-out request's connection was closed, so the server stops.
    tokio::time::timeout(GUARD, server.wait_for_abandoned(2))
        .await
        .expect("the timed-out requests' connections were closed");
}

#[tokio::test]
async fn a_non_streamed_answer_is_bound_by_the_whole_answer_limit_not_the_idle_one() {
    // The body comes in slow pieces; neither the first-token nor the idle
    // limit may cut a plain answer.
    let body = text_completion("slow but complete");
    let pieces: Vec<Piece> = body
        .as_bytes()
        .chunks(body.len().div_ceil(3))
        .map(|bytes| Piece {
            delay: Duration::ZERO,
            bytes: bytes.to_vec(),
        })
        .collect();
    let server = LlmServer::start(vec![
        Reply::sse_pieces(pieces).paced(Duration::from_millis(200))
    ])
    .await;
    let mut settings = config(server.base_url());
    settings.request_timeout = Duration::from_millis(50);
    settings.idle_timeout = Duration::from_millis(50);
    let client = LlmClient::new(settings).unwrap();
    let (result, _) = call(&client, &step_request(), &StopSignal::never()).await;
    assert_eq!(result.unwrap().content, "slow but complete");

    // Past the whole-answer limit the request is cancelled and the error
    // names the setting.
    let server = LlmServer::start(vec![Reply::Hang, Reply::Hang]).await;
    let mut settings = config(server.base_url());
    settings.total_timeout = Duration::from_millis(300);
    settings.retry.max_retries = 0;
    let client = LlmClient::new(settings).unwrap();
    let (result, _) = call(&client, &step_request(), &StopSignal::never()).await;
    let error = result.unwrap_err();
    assert!(
        matches!(
            error,
            LlmError::Timeout {
                phase: TimeoutPhase::Total,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("llm.timeouts.total"), "{error}");
    tokio::time::timeout(GUARD, server.wait_for_abandoned(1))
        .await
        .expect("the timed-out request's connection was closed");
}
