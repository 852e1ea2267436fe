//! The chat-completions client: one call, with streaming, fallback,
//! retries and cancellation.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use reqwest::header::{HeaderMap, ACCEPT, CONTENT_TYPE};

use super::config::LlmConfig;
use super::error::{overflow_figures, says_context_overflow, LlmError, TimeoutPhase};
use super::event::LlmEvent;
use super::request::ChatRequest;
use super::response::{error_text, parse_completion, ChatResponse, UsageTotals};
use super::retry::parse_retry_after;
use super::sse::SseParser;
use super::stop::StopSignal;
use super::stream::{StreamAccumulator, StreamState, EMPTY_STREAM};
use super::tokens::estimate_tokens;
use super::tool::ToolChoice;
use crate::events::TokenUsage;

/// The most of an error body that is read: enough for any server's
/// message, and a misbehaving proxy cannot make us buffer megabytes.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// From this size on (estimated tokens) a stream that ends before its first
/// chunk is taken for a context overflow: local servers close the stream
/// that way when the prompt does not fit, while a short prompt rarely
/// overflows anything.
const LARGE_PROMPT_TOKENS: u64 = 2048;

/// An OpenAI-compatible chat-completions client.
///
/// Cheap to share behind an `Arc`; calls may run concurrently.
#[derive(Debug)]
pub struct LlmClient {
    http: reqwest::Client,
    config: LlmConfig,
    endpoint: String,
    /// Set once the server refused `stream: true`, so later calls go
    /// straight to the plain request.
    stream_refused: AtomicBool,
    /// The weakest [`ToolChoice`] level the server refused to go above,
    /// kept so later calls do not pay for the refusal again.
    tool_choice_level: AtomicU8,
    usage: Mutex<UsageTotals>,
    /// Whether the server is on this machine: such a server usually runs
    /// one request at a time and keeps working on an abandoned one, so a
    /// timeout is retried at most once there.
    loopback: bool,
}

impl LlmClient {
    /// A client for `config`; fails on an unusable base URL or model.
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        if config.model.trim().is_empty() {
            return Err(LlmError::MissingModel);
        }
        let endpoint = config.endpoint();
        let url = reqwest::Url::parse(&endpoint).map_err(|e| LlmError::InvalidBaseUrl {
            url: config.base_url.clone(),
            reason: e.to_string(),
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(LlmError::InvalidBaseUrl {
                url: config.base_url.clone(),
                reason: format!("the scheme must be http or https, not {}", url.scheme()),
            });
        }
        let mut builder = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .tcp_nodelay(true)
            .user_agent(concat!("webagent/", env!("CARGO_PKG_VERSION")));
        // A local model server must never be reached through a proxy set
        // for the internet.
        let host = url.host_str().unwrap_or("").trim_matches(['[', ']']);
        let loopback =
            host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
        if loopback {
            builder = builder.no_proxy();
        }
        let http = builder
            .build()
            .map_err(|e| LlmError::ClientSetup(error_chain(&e)))?;
        Ok(LlmClient {
            http,
            config,
            endpoint,
            stream_refused: AtomicBool::new(false),
            tool_choice_level: AtomicU8::new(ToolChoice::Named.level()),
            usage: Mutex::new(UsageTotals::default()),
            loopback,
        })
    }

    /// The settings this client was built with.
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Tokens used by every successful call of this client so far.
    pub fn usage_totals(&self) -> UsageTotals {
        match self.usage.lock() {
            Ok(totals) => *totals,
            // A panic elsewhere while holding the lock leaves a valid sum.
            Err(poisoned) => *poisoned.into_inner(),
        }
    }

    /// Sends `request` and waits for the whole answer, with no progress
    /// reports and no stop.
    pub async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        self.complete_observed(request, &mut |_| {}, &StopSignal::never())
            .await
    }

    /// Sends `request`, reporting progress to `on_event`, until the answer
    /// is complete, retries are exhausted, or `stop` fires.
    ///
    /// Dropping the returned future also cancels the request in flight.
    pub async fn complete_observed(
        &self,
        request: &ChatRequest,
        on_event: &mut (dyn FnMut(LlmEvent) + Send),
        stop: &StopSignal,
    ) -> Result<ChatResponse, LlmError> {
        if stop.is_stopped() {
            return Err(LlmError::Cancelled);
        }
        let started = Instant::now();
        let result = tokio::select! {
            biased;
            _ = stop.stopped() => Err(LlmError::Cancelled),
            result = self.run(request, on_event) => result,
        };
        match result {
            Ok(mut response) => {
                response.stats.latency = started.elapsed();
                match self.usage.lock() {
                    Ok(mut totals) => totals.record(response.usage),
                    Err(poisoned) => poisoned.into_inner().record(response.usage),
                }
                tracing::info!(
                    endpoint = %self.endpoint,
                    attempts = response.stats.attempts,
                    latency_ms = response.stats.latency.as_millis() as u64,
                    streamed = response.stats.streamed,
                    total_tokens = response.usage.map(|u| u.total_tokens),
                    "llm call finished"
                );
                Ok(response)
            }
            Err(error) => {
                tracing::warn!(endpoint = %self.endpoint, %error, "llm call failed");
                Err(error)
            }
        }
    }

    async fn run(
        &self,
        request: &ChatRequest,
        on_event: &mut (dyn FnMut(LlmEvent) + Send),
    ) -> Result<ChatResponse, LlmError> {
        let policy = &self.config.retry;
        let mut streaming = self.config.streaming && !self.stream_refused.load(Ordering::Relaxed);
        let mut choice = ToolChoice::from_level(self.tool_choice_level.load(Ordering::Relaxed));
        let forcing = request.force_tool && request.tool.is_some();
        let mut fallback: Option<String> = None;
        let mut attempts = 0u32;
        let mut retries = 0u32;
        // The retries this call may make: the policy's, fewer once a
        // server on this machine has timed out (see `retry_budget`).
        let mut budget = policy.max_retries;
        let prompt_chars = request.prompt_chars();
        loop {
            attempts += 1;
            on_event(LlmEvent::Attempt {
                attempt: attempts,
                max_attempts: budget + 1,
                streaming,
            });
            let outcome = self
                .attempt(request, streaming, choice, on_event)
                .await
                .map_err(|error| self.overflow_or(error, prompt_chars));
            match outcome {
                Err(error) if request.has_images() && refuses_images(&error) => {
                    let (status, message) = match &error {
                        LlmError::BadRequest { status, message }
                        | LlmError::Server {
                            status, message, ..
                        }
                        | LlmError::UnexpectedStatus { status, message }
                        | LlmError::ErrorInAnswer {
                            status, message, ..
                        } => (*status, message.clone()),
                        other => (other.status().unwrap_or(0), other.to_string()),
                    };
                    tracing::info!(status, %message, "the server refused the picture");
                    return Err(LlmError::ImagesUnsupported { status, message });
                }
                Ok(response) if streaming && fallback.is_none() && response.is_empty() => {
                    let reason = "the streamed answer had neither a tool call nor text".to_owned();
                    tracing::info!(%reason, "retrying without streaming");
                    on_event(LlmEvent::FallbackToNonStreaming {
                        reason: reason.clone(),
                    });
                    fallback = Some(reason);
                    streaming = false;
                }
                Ok(mut response) => {
                    if response.usage.is_none() {
                        response.usage =
                            Some(TokenUsage::estimate(prompt_chars, response.answer_chars()));
                    }
                    response.stats.attempts = attempts;
                    response.stats.fallback = fallback;
                    response.stats.tool_choice = choice;
                    return Ok(response);
                }
                Err(error)
                    if forcing && refuses_tool_choice(&error) && choice.relaxed().is_some() =>
                {
                    let weaker = choice.relaxed().unwrap_or(ToolChoice::Auto); // ok: checked by the guard
                    let reason = error.to_string();
                    tracing::info!(%reason, to = weaker.as_str(), "relaxing tool_choice");
                    self.tool_choice_level
                        .fetch_max(weaker.level(), Ordering::Relaxed);
                    on_event(LlmEvent::ToolChoiceRelaxed { to: weaker, reason });
                    choice = weaker;
                }
                Err(error) if streaming && fallback.is_none() && refuses_streaming(&error) => {
                    let reason = format!("the server refused streaming: {error}");
                    tracing::info!(%reason, "retrying without streaming");
                    self.stream_refused.store(true, Ordering::Relaxed);
                    on_event(LlmEvent::FallbackToNonStreaming {
                        reason: reason.clone(),
                    });
                    fallback = Some(reason);
                    streaming = false;
                }
                Err(error)
                    if error.is_retryable()
                        && retries < self.retry_budget(&error, budget, retries) =>
                {
                    budget = self.retry_budget(&error, budget, retries);
                    retries += 1;
                    let wait = policy.delay(retries, error.retry_after());
                    tracing::info!(%error, ?wait, attempt = attempts, "llm request failed, retrying");
                    on_event(LlmEvent::Retrying {
                        retry: retries,
                        max_retries: budget,
                        wait,
                        reason: error.retry_reason(),
                    });
                    tokio::time::sleep(wait).await;
                }
                Err(error) if retries > 0 => {
                    return Err(LlmError::GaveUp {
                        attempts,
                        last: Box::new(error),
                    })
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// The retries a call may make in all after `error`, when `budget`
    /// were allowed and `retries` made. A server on this machine that
    /// timed out is working on one request at a time and gets one more
    /// try at most, whatever failed next: a retry it cannot take only
    /// doubles the wait. The attempts a call announces ("attempt 2 of 2")
    /// count with this budget, so they agree with where it gives up.
    fn retry_budget(&self, error: &LlmError, budget: u32, retries: u32) -> u32 {
        if self.loopback && matches!(error, LlmError::Timeout { .. }) {
            budget.min(retries + 1)
        } else {
            budget
        }
    }

    /// One HTTP request and its answer.
    async fn attempt(
        &self,
        request: &ChatRequest,
        streaming: bool,
        choice: ToolChoice,
        on_event: &mut (dyn FnMut(LlmEvent) + Send),
    ) -> Result<ChatResponse, LlmError> {
        let body = request.to_body_with(&self.config, streaming, choice);
        let mut builder = self
            .http
            .post(&self.endpoint)
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_string());
        if let Some(key) = &self.config.api_key {
            builder = builder.bearer_auth(key.expose());
        }
        if streaming {
            builder = builder.header(ACCEPT, "text/event-stream");
        }
        let started = Instant::now();
        let total = Clock::new(started, TimeoutPhase::Total, self.config.total_timeout);
        // A non-streamed answer arrives whole at its end, so only the
        // whole-answer limit can govern it; a stream must begin within the
        // first-token limit.
        let head = if streaming {
            Clock::new(
                started,
                TimeoutPhase::FirstToken,
                self.config.request_timeout,
            )
            .or_sooner(total)
        } else {
            total
        };
        // On a timeout the response future is dropped, which closes the
        // connection: the server sees the client leave and can stop
        // generating, instead of working on for nobody.
        let response = match tokio::time::timeout_at(head.deadline.into(), builder.send()).await {
            Err(_) => return Err(self.timeout(head)),
            Ok(Err(error)) => return Err(self.transport_error(&error, head)),
            Ok(Ok(response)) => response,
        };
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        if !response.status().is_success() {
            let body = self.read_body(response, total, ERROR_BODY_LIMIT).await?;
            return Err(self.status_error(status, &headers, &body));
        }
        let is_sse = headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().contains("text/event-stream"));
        if streaming && is_sse {
            self.read_stream(response, on_event, head, total).await
        } else {
            // A server that ignores `stream` answers with plain JSON; that
            // is a complete answer too.
            let body = self.read_body(response, total, usize::MAX).await?;
            if streaming && looks_like_sse(&body) {
                // A stream sent with the wrong content type (some proxies
                // rewrite it to text/plain): parse it as the stream it is.
                return parse_sse_body(body, on_event);
            }
            let mut parsed = parse_completion(&body, status)?;
            for (index, call) in parsed.tool_calls.iter().enumerate() {
                on_event(LlmEvent::ToolCallDelta {
                    index,
                    name: Some(call.name.clone()),
                    arguments: call.arguments.clone(),
                });
            }
            if !parsed.content.is_empty() {
                on_event(LlmEvent::ContentDelta {
                    text: parsed.content.clone(),
                });
            }
            parsed.stats.status = status;
            Ok(parsed)
        }
    }

    /// Reads a stream: the first chunk before `first`, each next one within
    /// the idle limit, all of it before `total`.
    async fn read_stream(
        &self,
        mut response: reqwest::Response,
        on_event: &mut (dyn FnMut(LlmEvent) + Send),
        first: Clock,
        total: Clock,
    ) -> Result<ChatResponse, LlmError> {
        let mut parser = SseParser::new();
        let mut accumulator = StreamAccumulator::new();
        let mut raw: Vec<u8> = Vec::new();
        let mut clock = first;
        'read: loop {
            let piece = match tokio::time::timeout_at(clock.deadline.into(), response.chunk()).await
            {
                Err(_) => return Err(self.timeout(clock)),
                Ok(Err(error)) => {
                    return Err(LlmError::StreamCut {
                        status: 200,
                        detail: format!("the connection broke mid-stream: {}", root_cause(&error)),
                        received_bytes: raw.len(),
                    })
                }
                Ok(Ok(None)) => break,
                Ok(Ok(Some(piece))) => piece,
            };
            raw.extend_from_slice(&piece);
            for event in parser.push(&piece) {
                if accumulator.apply(&event, on_event)? == StreamState::Done {
                    // Some servers keep the body open after [DONE]; waiting
                    // for its end would only run into the idle timeout.
                    break 'read;
                }
            }
            clock = Clock::new(Instant::now(), TimeoutPhase::Idle, self.config.idle_timeout)
                .or_sooner(total);
        }
        if let Some(event) = parser.finish() {
            accumulator.apply(&event, on_event)?;
        }
        accumulator.finish(String::from_utf8_lossy(&raw).into_owned())
    }

    /// Reads a whole body (up to `limit` bytes) before the clock runs out.
    async fn read_body(
        &self,
        mut response: reqwest::Response,
        clock: Clock,
        limit: usize,
    ) -> Result<String, LlmError> {
        let status = response.status().as_u16();
        let mut body: Vec<u8> = Vec::new();
        loop {
            match tokio::time::timeout_at(clock.deadline.into(), response.chunk()).await {
                Err(_) => return Err(self.timeout(clock)),
                Ok(Err(error)) => {
                    return Err(LlmError::StreamCut {
                        status,
                        detail: format!(
                            "the connection broke while reading the answer: {}",
                            root_cause(&error)
                        ),
                        received_bytes: body.len(),
                    })
                }
                Ok(Ok(None)) => break,
                Ok(Ok(Some(piece))) => {
                    body.extend_from_slice(&piece);
                    if body.len() >= limit {
                        body.truncate(limit);
                        break;
                    }
                }
            }
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    fn timeout(&self, clock: Clock) -> LlmError {
        LlmError::Timeout {
            phase: clock.phase,
            after: clock.limit,
            url: self.endpoint.clone(),
        }
    }

    /// A server's refusal or an empty stream seen as what it is when the
    /// prompt does not fit the context; any other error unchanged.
    fn overflow_or(&self, error: LlmError, prompt_chars: usize) -> LlmError {
        let estimate = estimate_tokens(prompt_chars);
        let configured = self.config.context_window.map(u64::from);
        let (message, kind) = match &error {
            LlmError::BadRequest { message, .. }
            | LlmError::Server { message, .. }
            | LlmError::UnexpectedStatus { message, .. } => (message.clone(), None),
            LlmError::ErrorInAnswer { message, kind, .. } => (message.clone(), kind.clone()),
            LlmError::StreamCut { detail, .. } if detail == EMPTY_STREAM => {
                let near_limit = configured.is_some_and(|limit| estimate * 10 >= limit * 9);
                if estimate < LARGE_PROMPT_TOKENS && !near_limit {
                    return error;
                }
                return LlmError::ContextOverflow {
                    prompt_tokens: estimate,
                    prompt_estimated: true,
                    limit: configured,
                    message: "the server closed the stream without sending anything, which is how local servers answer a prompt longer than their context".to_owned(),
                };
            }
            _ => return error,
        };
        if !says_context_overflow(&message, kind.as_deref()) {
            return error;
        }
        let (said_prompt, said_limit) = overflow_figures(&message);
        LlmError::ContextOverflow {
            prompt_tokens: said_prompt.unwrap_or(estimate),
            prompt_estimated: said_prompt.is_none(),
            limit: said_limit.or(configured),
            message,
        }
    }

    fn transport_error(&self, error: &reqwest::Error, clock: Clock) -> LlmError {
        if error.is_timeout() {
            if error.is_connect() {
                return self.timeout(Clock {
                    deadline: clock.deadline,
                    phase: TimeoutPhase::Connect,
                    limit: self.config.connect_timeout,
                });
            }
            return self.timeout(clock);
        }
        if error.is_connect() {
            return LlmError::Connect {
                url: self.endpoint.clone(),
                detail: root_cause(error),
            };
        }
        // The request went out but the connection closed before an answer:
        // as transient as a refused connection.
        LlmError::Connect {
            url: self.endpoint.clone(),
            detail: format!(
                "the connection closed without an answer: {}",
                root_cause(error)
            ),
        }
    }

    fn status_error(&self, status: u16, headers: &HeaderMap, body: &str) -> LlmError {
        let (message, kind) = error_text(body);
        let retry_after = retry_after_header(headers, SystemTime::now());
        let quota = kind.as_deref() == Some("insufficient_quota")
            || body.contains("\"insufficient_quota\"");
        match status {
            401 => LlmError::Unauthorized {
                status,
                key_sent: self.config.api_key.is_some(),
                message,
            },
            403 => LlmError::Forbidden { status, message },
            404 => LlmError::NotFound {
                status,
                model: self.config.model.clone(),
                url: self.endpoint.clone(),
                message,
            },
            400 | 422 => LlmError::BadRequest { status, message },
            429 if quota => LlmError::QuotaExhausted { status, message },
            429 => LlmError::RateLimited {
                status,
                message,
                retry_after,
            },
            408 | 409 | 500..=599 => LlmError::Server {
                status,
                message,
                retry_after,
            },
            _ => LlmError::UnexpectedStatus { status, message },
        }
    }
}

/// One running time limit: when it fires, which phase it is and the limit
/// as configured (for the message).
#[derive(Debug, Clone, Copy)]
struct Clock {
    deadline: Instant,
    phase: TimeoutPhase,
    limit: Duration,
}

impl Clock {
    fn new(from: Instant, phase: TimeoutPhase, limit: Duration) -> Self {
        Clock {
            deadline: from + limit,
            phase,
            limit,
        }
    }

    /// Whichever of the two fires first.
    fn or_sooner(self, other: Clock) -> Clock {
        if other.deadline < self.deadline {
            other
        } else {
            self
        }
    }
}

/// Whether a body is SSE text rather than JSON.
fn looks_like_sse(body: &str) -> bool {
    let start = body.trim_start();
    start.starts_with("data:") || start.starts_with("event:") || start.starts_with(':')
}

/// Parses a complete SSE body that arrived in one piece.
fn parse_sse_body(
    body: String,
    on_event: &mut (dyn FnMut(LlmEvent) + Send),
) -> Result<ChatResponse, LlmError> {
    let mut parser = SseParser::new();
    let mut accumulator = StreamAccumulator::new();
    let mut events = parser.push(body.as_bytes());
    events.extend(parser.finish());
    for event in &events {
        if accumulator.apply(event, on_event)? == StreamState::Done {
            break;
        }
    }
    accumulator.finish(body)
}

/// Whether a failed request that carried a picture looks like the server
/// refusing pictures: a 400/422, a 5xx or an error in the answer whose
/// text says so (servers answer text-only models with any of these).
fn refuses_images(error: &LlmError) -> bool {
    match error {
        LlmError::BadRequest { message, .. }
        | LlmError::Server { message, .. }
        | LlmError::UnexpectedStatus { message, .. }
        | LlmError::ErrorInAnswer { message, .. } => {
            crate::vision::says_images_unsupported(message)
        }
        _ => false,
    }
}

/// Whether a failed request looks like the server refusing the way the
/// forced tool was demanded.
fn refuses_tool_choice(error: &LlmError) -> bool {
    match error {
        LlmError::BadRequest { message, .. } | LlmError::UnexpectedStatus { message, .. } => {
            let message = message.to_ascii_lowercase();
            message.contains("tool_choice") || message.contains("tool choice")
        }
        _ => false,
    }
}

/// Whether a failed streamed request looks like the server not supporting
/// `stream` (or `stream_options`) rather than a bad request in general.
fn refuses_streaming(error: &LlmError) -> bool {
    match error {
        LlmError::BadRequest { message, .. } | LlmError::UnexpectedStatus { message, .. } => {
            message
                .to_ascii_lowercase()
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                // "stream", "streaming", "stream_options", but not "upstream".
                .any(|word| word.starts_with("stream"))
        }
        _ => false,
    }
}

/// `retry-after-ms` (OpenAI, precise) or `Retry-After` (standard).
fn retry_after_header(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    parse_retry_after(header("retry-after")?, now)
}

/// The innermost cause of an error ("Connection refused (os error 111)"):
/// the outer layers of reqwest and hyper repeat the URL and add nothing a
/// user can act on.
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

/// An error and its causes on one line ("error sending request: …:
/// Connection refused (os error 111)").
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::stop::stop_pair;
    use reqwest::header::HeaderValue;

    #[test]
    fn retry_after_ms_wins_over_seconds() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("5"));
        assert_eq!(
            retry_after_header(&headers, SystemTime::now()),
            Some(Duration::from_secs(5))
        );
        headers.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(
            retry_after_header(&headers, SystemTime::now()),
            Some(Duration::from_millis(250))
        );
    }

    #[test]
    fn only_stream_complaints_trigger_the_fallback() {
        let stream = LlmError::BadRequest {
            status: 400,
            message: "stream_options is not supported".into(),
        };
        let other = LlmError::BadRequest {
            status: 400,
            message: "messages must not be empty".into(),
        };
        let upstream = LlmError::BadRequest {
            status: 400,
            message: "upstream provider rejected the schema".into(),
        };
        assert!(refuses_streaming(&stream));
        assert!(!refuses_streaming(&other));
        assert!(!refuses_streaming(&upstream));
    }

    #[test]
    fn bad_urls_and_empty_models_are_refused_up_front() {
        let error = LlmClient::new(LlmConfig::default().with_base_url("ftp://x/v1")).unwrap_err();
        assert!(matches!(error, LlmError::InvalidBaseUrl { .. }));
        let error = LlmClient::new(LlmConfig::default().with_base_url("not a url")).unwrap_err();
        assert!(matches!(error, LlmError::InvalidBaseUrl { .. }));
        let error = LlmClient::new(LlmConfig::default().with_model(" ")).unwrap_err();
        assert!(matches!(error, LlmError::MissingModel));
    }

    #[test]
    fn a_call_can_run_on_a_spawned_task() {
        fn assert_send<T: Send>(_: &T) {}
        let client = LlmClient::new(LlmConfig::default()).unwrap();
        let request = ChatRequest::default();
        let stop = StopSignal::never();
        let mut on_event = |_event: LlmEvent| {};
        // Never polled: this only proves at compile time that the agent
        // can move a call onto its own task.
        let call = client.complete_observed(&request, &mut on_event, &stop);
        assert_send(&call);
    }

    #[tokio::test]
    async fn a_stop_given_before_the_call_cancels_it_without_a_request() {
        let (handle, signal) = stop_pair();
        handle.stop();
        // Port 9 (discard) on loopback: a request would fail to connect, so
        // only an early cancel gives `Cancelled`.
        let client =
            LlmClient::new(LlmConfig::default().with_base_url("http://127.0.0.1:9/v1")).unwrap();
        let error = client
            .complete_observed(&ChatRequest::default(), &mut |_| {}, &signal)
            .await
            .unwrap_err();
        assert!(matches!(error, LlmError::Cancelled));
        assert!(signal.is_stopped());
        assert!(!StopSignal::never().is_stopped());
    }
}
