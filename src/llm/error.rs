//! The one error type of the LLM client.
//!
//! Each variant names what went wrong in terms a user can act on (which key,
//! which model, which URL) and carries the HTTP status when there was one,
//! so the TUI and `webagent run` can show it as is and the agent loop can
//! decide whether a step is worth retrying.

use std::time::Duration;

/// Which clock ran out when a request timed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// The TCP/TLS connection was not established in time.
    Connect,
    /// The server accepted the request but its answer did not begin in
    /// time (no headers, or a stream without its first chunk).
    FirstToken,
    /// A streamed answer went silent for longer than the idle timeout.
    Idle,
    /// The whole answer (streamed or not) took longer than allowed.
    Total,
}

impl TimeoutPhase {
    /// The config key that sets this limit.
    pub fn config_key(self) -> &'static str {
        match self {
            TimeoutPhase::Connect => "llm.timeouts.connect",
            TimeoutPhase::FirstToken => "llm.timeouts.request",
            TimeoutPhase::Idle => "llm.timeouts.idle",
            TimeoutPhase::Total => "llm.timeouts.total",
        }
    }
}

impl std::fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TimeoutPhase::Connect => "connecting",
            TimeoutPhase::FirstToken => "waiting for the first token",
            TimeoutPhase::Idle => "the stream went silent",
            TimeoutPhase::Total => "the whole answer took too long",
        })
    }
}

/// Everything that can go wrong when talking to a chat-completions endpoint.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The configured base URL is not a usable http(s) URL.
    #[error("the LLM base URL {url:?} is not usable: {reason} (set OPENAI_BASE_URL, e.g. http://127.0.0.1:11434/v1)")]
    InvalidBaseUrl {
        /// The URL as configured.
        url: String,
        /// Why it was rejected.
        reason: String,
    },
    /// No model name is configured.
    #[error("no model is configured: set WEBAGENT_MODEL or pass --model")]
    MissingModel,
    /// The HTTP client could not be built (TLS setup failed).
    #[error("could not set up the HTTP client: {0}")]
    ClientSetup(String),
    /// HTTP 401: the key is missing or was rejected.
    #[error("{}", unauthorized_message(*.key_sent, message))]
    Unauthorized {
        /// Always 401.
        status: u16,
        /// Whether an `Authorization` header was sent at all.
        key_sent: bool,
        /// The server's own explanation.
        message: String,
    },
    /// HTTP 403: the key is valid but may not use this model or endpoint.
    #[error("the server refused access (HTTP {status}): {message}; the API key may lack access to this model or organization")]
    Forbidden {
        /// Always 403.
        status: u16,
        /// The server's own explanation.
        message: String,
    },
    /// HTTP 404: the model does not exist there, or the base URL is wrong.
    #[error("HTTP {status} from {url}: either the model {model:?} does not exist on this server or the base URL is wrong (most servers expect it to end in /v1): {message}")]
    NotFound {
        /// Always 404.
        status: u16,
        /// The model the request asked for.
        model: String,
        /// The endpoint that answered.
        url: String,
        /// The server's own explanation.
        message: String,
    },
    /// HTTP 400/422: the server rejected the request itself.
    #[error("the server rejected the request as invalid (HTTP {status}): {message}")]
    BadRequest {
        /// 400 or 422.
        status: u16,
        /// The server's own explanation.
        message: String,
    },
    /// HTTP 429 with `insufficient_quota`: retrying will not help.
    #[error("the account's quota is exhausted (HTTP {status}): {message}; check the plan and billing for this API key")]
    QuotaExhausted {
        /// Always 429.
        status: u16,
        /// The server's own explanation.
        message: String,
    },
    /// HTTP 429: too many requests for now.
    #[error("rate limited by the server (HTTP {status}): {message}")]
    RateLimited {
        /// Always 429.
        status: u16,
        /// The server's own explanation.
        message: String,
        /// How long the server asked us to wait, if it said.
        retry_after: Option<Duration>,
    },
    /// HTTP 408, 409 or 5xx: a transient failure on the server side.
    #[error("the server failed (HTTP {status}): {message}")]
    Server {
        /// The status code.
        status: u16,
        /// The server's own explanation.
        message: String,
        /// How long the server asked us to wait, if it said.
        retry_after: Option<Duration>,
    },
    /// Any other non-success status.
    #[error("unexpected HTTP {status} from the server: {message}")]
    UnexpectedStatus {
        /// The status code.
        status: u16,
        /// The server's own explanation.
        message: String,
    },
    /// The server could not be reached at all.
    #[error(
        "could not connect to {url}: {detail} (is the server running and OPENAI_BASE_URL right?)"
    )]
    Connect {
        /// The endpoint we tried.
        url: String,
        /// What the operating system or TLS layer said.
        detail: String,
    },
    /// A timeout ran out.
    #[error("{}", timeout_message(*.phase, *.after, url))]
    Timeout {
        /// Which timeout.
        phase: TimeoutPhase,
        /// The configured limit that was reached.
        after: Duration,
        /// The endpoint we were talking to.
        url: String,
    },
    /// The connection broke, or the stream ended, before the answer was
    /// complete.
    #[error("the answer was cut off after {received_bytes} bytes: {detail}")]
    StreamCut {
        /// The status of the response that was cut (200 for a stream).
        status: u16,
        /// What was observed.
        detail: String,
        /// How much of the body had arrived.
        received_bytes: usize,
    },
    /// The server sent an error object inside an otherwise successful
    /// response (typically mid-stream).
    #[error("the server reported an error inside its answer (HTTP {status}): {message}")]
    ErrorInAnswer {
        /// The HTTP status of the response carrying the error (usually 200).
        status: u16,
        /// The error's message.
        message: String,
        /// The error's `type` or `code`, when given.
        kind: Option<String>,
    },
    /// The body was not the JSON a chat-completions endpoint returns.
    #[error("the server's answer (HTTP {status}) is not valid chat-completions JSON: {detail}; it starts with: {body_start:?}")]
    MalformedBody {
        /// The status of the response.
        status: u16,
        /// What the parser said.
        detail: String,
        /// The first characters of the offending body.
        body_start: String,
    },
    /// The prompt does not fit the model's context window. Sending it
    /// again unchanged cannot help.
    #[error("{}", context_overflow_message(*.prompt_tokens, *.prompt_estimated, *.limit, message))]
    ContextOverflow {
        /// The prompt's size in tokens (the server's count when it gave
        /// one, otherwise an estimate).
        prompt_tokens: u64,
        /// Whether `prompt_tokens` is an estimate.
        prompt_estimated: bool,
        /// The server's context size, when it said or the user configured
        /// it.
        limit: Option<u64>,
        /// What the server said (or saw: an empty stream).
        message: String,
    },
    /// The request carried a picture and the server said the model (or
    /// the server) takes no images. Sending it again unchanged cannot
    /// help; without the picture it may.
    #[error("the model does not take images (HTTP {status}): {message}; set llm.vision: never (or --vision never) for this model")]
    ImagesUnsupported {
        /// The status of the refusal.
        status: u16,
        /// What the server said.
        message: String,
    },
    /// The user stopped the request.
    #[error("the request was cancelled")]
    Cancelled,
    /// Retries ran out; `last` is the final failure.
    #[error("gave up after {attempts} attempts: {last}")]
    GaveUp {
        /// How many requests were sent.
        attempts: u32,
        /// The failure of the last one.
        last: Box<LlmError>,
    },
}

fn timeout_message(phase: TimeoutPhase, after: Duration, url: &str) -> String {
    let what = match phase {
        TimeoutPhase::Connect => format!("timed out after {after:?} connecting to {url}"),
        TimeoutPhase::FirstToken => {
            format!("the answer from {url} did not begin within {after:?} (first-token limit)")
        }
        TimeoutPhase::Idle => {
            format!("the stream from {url} went silent for {after:?} (idle limit)")
        }
        TimeoutPhase::Total => {
            format!("the answer from {url} took longer than {after:?} (whole-answer limit)")
        }
    };
    format!(
        "{what}; the request was cancelled. A slow (local, CPU) model needs a larger {} in seconds",
        phase.config_key()
    )
}

fn context_overflow_message(
    prompt_tokens: u64,
    estimated: bool,
    limit: Option<u64>,
    message: &str,
) -> String {
    let size = if estimated {
        format!("about {prompt_tokens} tokens (estimated)")
    } else {
        format!("{prompt_tokens} tokens")
    };
    let limit = match limit {
        Some(limit) => format!("the model's context window of {limit} tokens"),
        None => "the model's context window".to_owned(),
    };
    format!(
        "the prompt of {size} does not fit {limit} ({message}); set llm.context_window to the server's context size so webagent shrinks the page part to fit, or give the server a larger context (llama.cpp: --ctx-size, Ollama: num_ctx, vLLM: --max-model-len)"
    )
}

fn unauthorized_message(key_sent: bool, message: &str) -> String {
    if key_sent {
        format!("the API key was rejected (HTTP 401): {message}; check OPENAI_API_KEY")
    } else {
        format!("the server needs an API key (HTTP 401) and none is set: set OPENAI_API_KEY ({message})")
    }
}

impl LlmError {
    /// The HTTP status behind this error, when a response was received.
    pub fn status(&self) -> Option<u16> {
        match self {
            LlmError::Unauthorized { status, .. }
            | LlmError::Forbidden { status, .. }
            | LlmError::NotFound { status, .. }
            | LlmError::BadRequest { status, .. }
            | LlmError::QuotaExhausted { status, .. }
            | LlmError::RateLimited { status, .. }
            | LlmError::Server { status, .. }
            | LlmError::UnexpectedStatus { status, .. }
            | LlmError::StreamCut { status, .. }
            | LlmError::ErrorInAnswer { status, .. }
            | LlmError::ImagesUnsupported { status, .. }
            | LlmError::MalformedBody { status, .. } => Some(*status),
            LlmError::GaveUp { last, .. } => last.status(),
            LlmError::InvalidBaseUrl { .. }
            | LlmError::MissingModel
            | LlmError::ClientSetup(_)
            | LlmError::Connect { .. }
            | LlmError::Timeout { .. }
            | LlmError::ContextOverflow { .. }
            | LlmError::Cancelled => None,
        }
    }

    /// Whether sending the same request again may succeed.
    ///
    /// A cut stream counts as retryable: the request has no side effects on
    /// our side, and a stuck agent step costs the user more than the tokens
    /// of a repeated answer.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::RateLimited { .. }
            | LlmError::Server { .. }
            | LlmError::Connect { .. }
            | LlmError::Timeout { .. }
            | LlmError::StreamCut { .. } => true,
            LlmError::ErrorInAnswer { kind, .. } => kind.as_deref().is_some_and(is_transient_kind),
            _ => false,
        }
    }

    /// The wait the server asked for with `Retry-After`, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::RateLimited { retry_after, .. } | LlmError::Server { retry_after, .. } => {
                *retry_after
            }
            _ => None,
        }
    }

    /// The error as it was before retries were given up on.
    pub fn root(&self) -> &LlmError {
        match self {
            LlmError::GaveUp { last, .. } => last.root(),
            other => other,
        }
    }

    /// A short label for the retry notice ("HTTP 503", "timeout", …).
    pub(crate) fn retry_reason(&self) -> String {
        match self {
            LlmError::Connect { .. } => "connection failed".to_owned(),
            LlmError::Timeout { phase, .. } => format!("timeout ({phase})"),
            LlmError::StreamCut { .. } => "stream cut off".to_owned(),
            LlmError::ContextOverflow { .. } => "context overflow".to_owned(),
            LlmError::ErrorInAnswer { kind, .. } => {
                format!("error in answer ({})", kind.as_deref().unwrap_or("unknown"))
            }
            other => match other.status() {
                Some(status) => format!("HTTP {status}"),
                None => other.to_string(),
            },
        }
    }
}

/// Whether a server's error text says the prompt exceeds the context
/// window, in the wordings of OpenAI, vLLM, llama.cpp, Ollama and LM
/// Studio.
pub(crate) fn says_context_overflow(message: &str, kind: Option<&str>) -> bool {
    const WORDINGS: [&str; 8] = [
        "maximum context length",
        "context window",
        "context length exceeded",
        "context_length_exceeded",
        "exceed_context_size",
        "exceeds the available context size",
        "context size has been exceeded",
        "prompt is too long",
    ];
    let message = message.to_ascii_lowercase();
    let kind = kind.unwrap_or("").to_ascii_lowercase();
    WORDINGS
        .iter()
        .any(|w| message.contains(w) || kind.contains(w))
        && !message.contains("rate limit")
}

/// The prompt size and the context size a server's overflow message
/// states, when it does: "maximum context length is 8192 tokens. However,
/// your messages resulted in 8263 tokens", "Requested tokens (8263) exceed
/// context window of 8192", llama.cpp's `n_prompt_tokens` / `n_ctx`.
pub(crate) fn overflow_figures(body: &str) -> (Option<u64>, Option<u64>) {
    let lower = body.to_ascii_lowercase();
    let after = |phrase: &str| -> Option<u64> {
        let at = lower.find(phrase)? + phrase.len();
        let digits: String = lower[at..]
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(|c| c.is_ascii_digit())
            .collect();
        let gap = lower[at..].find(|c: char| c.is_ascii_digit())?;
        // The number must follow the phrase closely, not be any later one.
        (gap <= 12).then(|| digits.parse().ok()).flatten()
    };
    let limit = [
        "maximum context length is",
        "context window of",
        "\"n_ctx\"",
        "n_ctx",
    ]
    .iter()
    .find_map(|p| after(p));
    let prompt = [
        "resulted in",
        "you requested",
        "requested tokens",
        "\"n_prompt_tokens\"",
        "n_prompt_tokens",
    ]
    .iter()
    .find_map(|p| after(p));
    (prompt, limit)
}

/// Error kinds inside a 200 answer that signal a passing server problem
/// rather than a problem with the request.
fn is_transient_kind(kind: &str) -> bool {
    matches!(
        kind,
        "server_error" | "overloaded_error" | "overloaded" | "rate_limit_exceeded" | "timeout"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_overflow_wordings_and_figures_are_read() {
        let cases = [
            ("This model's maximum context length is 8192 tokens. However, your messages resulted in 8263 tokens.", None, Some(8263), Some(8192)),
            ("Requested tokens (8263) exceed context window of 8192", None, Some(8263), Some(8192)),
            ("the request exceeds the available context size, try increasing it", Some("exceed_context_size_error"), None, None),
            ("context length exceeded", None, None, None),
            ("too long", Some("context_length_exceeded"), None, None),
        ];
        for (message, kind, prompt, limit) in cases {
            assert!(says_context_overflow(message, kind), "{message}");
            assert_eq!(overflow_figures(message), (prompt, limit), "{message}");
        }
        assert!(!says_context_overflow("messages must not be empty", None));
        let llama = r#"{"error":{"n_prompt_tokens":9000,"n_ctx":8192}}"#;
        assert_eq!(overflow_figures(llama), (Some(9000), Some(8192)));
    }

    #[test]
    fn missing_key_and_rejected_key_read_differently() {
        let missing = LlmError::Unauthorized {
            status: 401,
            key_sent: false,
            message: "no auth".into(),
        };
        let rejected = LlmError::Unauthorized {
            status: 401,
            key_sent: true,
            message: "invalid key".into(),
        };
        assert!(missing.to_string().contains("none is set"));
        assert!(rejected.to_string().contains("was rejected"));
        assert_eq!(missing.status(), Some(401));
    }

    #[test]
    fn gave_up_exposes_the_last_status_and_root() {
        let error = LlmError::GaveUp {
            attempts: 4,
            last: Box::new(LlmError::Server {
                status: 503,
                message: "busy".into(),
                retry_after: None,
            }),
        };
        assert_eq!(error.status(), Some(503));
        assert!(matches!(error.root(), LlmError::Server { .. }));
        assert!(error.to_string().starts_with("gave up after 4 attempts"));
        assert!(!error.is_retryable());
    }

    #[test]
    fn client_errors_are_final_and_server_errors_are_not() {
        let quota = LlmError::QuotaExhausted {
            status: 429,
            message: "quota".into(),
        };
        let limited = LlmError::RateLimited {
            status: 429,
            message: "slow down".into(),
            retry_after: None,
        };
        assert!(!quota.is_retryable());
        assert!(limited.is_retryable());
        let transient = LlmError::ErrorInAnswer {
            status: 200,
            message: "overloaded".into(),
            kind: Some("server_error".into()),
        };
        let invalid = LlmError::ErrorInAnswer {
            status: 200,
            message: "bad".into(),
            kind: Some("invalid_request_error".into()),
        };
        assert!(transient.is_retryable());
        assert!(!invalid.is_retryable());
    }
}
