//! What is asked again and how long it waits first: a stream cut off, a
//! rate limit and its Retry-After, 503s, a server that keeps failing, and
//! a refused connection.

use std::time::Duration;

use serde_json::Value;
use webagent::llm::{LlmClient, LlmError, StopSignal};

use crate::calls::{call, config, retries, step_arguments, step_request};
use crate::support::llm_server::{
    error_body, text_completion, tool_call_completion, tool_call_events, LlmServer, Reply,
    StreamEnd,
};

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
