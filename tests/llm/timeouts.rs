//! Time limits and stops: a silent stream, no answer at all, a stop in
//! flight or during a backoff, a dropped call, a long but lively stream,
//! a slow first token, and the whole-answer limit of a plain request.

use std::time::Duration;

use serde_json::Value;
use webagent::llm::{stop_pair, LlmClient, LlmError, LlmEvent, StopSignal, TimeoutPhase};

use crate::calls::{call, config, retries, step_arguments, step_request, GUARD};
use crate::support::llm_server::{
    rechunk, text_completion, tool_call_events, LlmServer, Piece, Reply, StreamEnd,
};

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
    // What the call announces agrees with where it gives up: the first
    // request may be one of four, the retry after a timeout is the last.
    let announced: Vec<(u32, u32)> = progress
        .iter()
        .filter_map(|event| match event {
            LlmEvent::Attempt {
                attempt,
                max_attempts,
                ..
            } => Some((*attempt, *max_attempts)),
            LlmEvent::Retrying {
                retry, max_retries, ..
            } => Some((retry + 1, max_retries + 1)),
            _ => None,
        })
        .collect();
    assert_eq!(announced, [(1, 4), (2, 2), (2, 2)]);
    assert!(text.starts_with("gave up after 2 attempts"), "{text}");
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
