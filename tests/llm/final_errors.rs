//! Errors that are final at once and say what to do: a missing or refused
//! key, a bad request, an unknown model, no quota left, and a prompt too
//! large for the context window in each server's wording.

use serde_json::json;
use webagent::llm::{ChatMessage, ChatRequest, LlmClient, LlmError, StopSignal};

use crate::calls::{call, config, retries, step_arguments, step_request, step_tool};
use crate::support::llm_server::{
    error_body, sse_event, text_completion, tool_call_events, LlmServer, Reply,
};

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
