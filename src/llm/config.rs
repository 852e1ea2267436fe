//! Settings of the LLM client: endpoint, key, model, timeouts, retries.
//!
//! This is the plain struct the client needs. The merged `Config` (files,
//! environment, flags) fills it in; `from_env` covers the environment part
//! on its own so the client is usable before the config layer exists.

use std::fmt;
use std::time::Duration;

use super::retry::RetryPolicy;

use crate::defaults;
use crate::secrets::SecretValue;

/// Base URL used when `OPENAI_BASE_URL` is not set (`llm.base_url` of the
/// built-in defaults).
pub fn default_base_url() -> &'static str {
    defaults::text(&["llm", "base_url"])
}

/// The answer bound when none is configured (`llm.max_output_tokens`): a
/// step's reflection and action take a few hundred tokens; the default
/// leaves room for a long `done` text or an `extract` result while
/// stopping a model that rambles.
pub fn default_max_output_tokens() -> Option<u32> {
    defaults::optional_number(&["llm", "max_output_tokens"]).and_then(|n| u32::try_from(n).ok())
}

/// Everything the LLM client needs to reach a chat-completions endpoint.
#[derive(Clone, PartialEq)]
pub struct LlmConfig {
    /// The API root, e.g. `https://api.openai.com/v1` or
    /// `http://127.0.0.1:11434/v1`; `/chat/completions` is appended.
    pub base_url: String,
    /// Sent as `Authorization: Bearer …`; local servers need none, and then
    /// no header is sent at all.
    pub api_key: Option<SecretValue>,
    /// The model name sent with every request.
    pub model: String,
    /// Sampling temperature; `None` leaves the server's default.
    pub temperature: Option<f32>,
    /// Limit for establishing the TCP/TLS connection.
    pub connect_timeout: Duration,
    /// Limit for a streamed answer to begin: the response headers and its
    /// first chunk (the "first token"). A local server reads the whole
    /// prompt before it writes anything, so this is where a slow CPU model
    /// needs room.
    pub request_timeout: Duration,
    /// Longest silence allowed between two pieces of a streamed answer.
    pub idle_timeout: Duration,
    /// Limit for the whole answer, streamed or not. A non-streamed answer
    /// arrives in one piece at the end, so only this limit governs it.
    pub total_timeout: Duration,
    /// Upper bound on the tokens of one answer, sent as `max_tokens`; an
    /// answer cut by it ends with `finish_reason: length`. `None` sends no
    /// bound (the server's own, often unlimited).
    pub max_output_tokens: Option<u32>,
    /// The server's context size in tokens, when the user told us. The
    /// agent fits its prompts inside it, and a context overflow names it.
    pub context_window: Option<u32>,
    /// When and how long to wait before sending a failed request again.
    pub retry: RetryPolicy,
    /// Ask for a streamed (SSE) answer so text can be shown as it arrives.
    pub streaming: bool,
}

impl Default for LlmConfig {
    /// The built-in defaults (`config/defaults.yaml`), without a key.
    fn default() -> Self {
        let seconds =
            |name: &str| Duration::from_secs(defaults::number(&["llm", "timeouts", name]));
        LlmConfig {
            base_url: default_base_url().to_owned(),
            api_key: None,
            model: defaults::text(&["llm", "model"]).to_owned(),
            temperature: None,
            connect_timeout: seconds("connect"),
            request_timeout: seconds("request"),
            idle_timeout: seconds("idle"),
            total_timeout: seconds("total"),
            max_output_tokens: default_max_output_tokens(),
            context_window: defaults::optional_number(&["llm", "context_window"])
                .and_then(|n| u32::try_from(n).ok()),
            retry: RetryPolicy::default(),
            streaming: defaults::flag(&["llm", "streaming"]),
        }
    }
}

// The key must never reach a log line or the TUI through `{:?}`.
impl fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("model", &self.model)
            .field("temperature", &self.temperature)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("total_timeout", &self.total_timeout)
            .field("max_output_tokens", &self.max_output_tokens)
            .field("context_window", &self.context_window)
            .field("retry", &self.retry)
            .field("streaming", &self.streaming)
            .finish()
    }
}

impl LlmConfig {
    /// The same settings with another base URL.
    pub fn with_base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into();
        self
    }

    /// The same settings with an API key.
    pub fn with_api_key(mut self, key: impl Into<SecretValue>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// The same settings with another model.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// The same settings with streaming on or off.
    pub fn with_streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// The same settings with another retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The full chat-completions URL. A base URL that already ends in
    /// `/chat/completions` (pasted from a provider's docs) is used as is.
    pub fn endpoint(&self) -> String {
        let base = self.base_url.trim().trim_end_matches('/');
        if base.ends_with("/chat/completions") {
            base.to_owned()
        } else {
            format!("{base}/chat/completions")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The environment reaches the model's settings through the one config
    // layer (`crate::config`), which tests/config.rs covers.
    #[test]
    fn the_endpoint_follows_the_base_url() {
        let local = LlmConfig::default().with_base_url("http://127.0.0.1:11434/v1/");
        assert_eq!(
            local.endpoint(),
            "http://127.0.0.1:11434/v1/chat/completions"
        );
        assert_eq!(
            LlmConfig::default().endpoint(),
            "https://api.openai.com/v1/chat/completions"
        );
    }

    #[test]
    fn a_full_endpoint_is_not_extended_twice() {
        let config =
            LlmConfig::default().with_base_url("https://example.test/v1/chat/completions/");
        assert_eq!(
            config.endpoint(),
            "https://example.test/v1/chat/completions"
        );
    }

    #[test]
    fn debug_output_masks_the_key() {
        let config = LlmConfig::default().with_api_key("sk-secret-value");
        let shown = format!("{config:?}");
        assert!(!shown.contains("sk-secret-value"));
        assert!(shown.contains("***"));
    }
}
