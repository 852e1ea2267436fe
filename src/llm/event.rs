//! [`LlmEvent`]: the progress a call reports while it runs. The client
//! sends these and the stream assembler sends the pieces it joins; the
//! agent loop turns them into the program's events.

use std::time::Duration;

use super::tool::ToolChoice;

/// Progress of a call, reported while it runs so the UI can show the
/// reflection as it streams and say why it is waiting.
#[derive(Debug, Clone, PartialEq)]
pub enum LlmEvent {
    /// A request is being sent.
    Attempt {
        /// 1 for the first request of the call.
        attempt: u32,
        /// The most requests the call makes, as far as is known now (the
        /// policy's retries plus one; fewer once a server on this machine
        /// timed out).
        max_attempts: u32,
        /// Whether it asks for a stream.
        streaming: bool,
    },
    /// A piece of the message text.
    ContentDelta {
        /// The new text.
        text: String,
    },
    /// A piece of separately streamed reasoning (`reasoning_content`).
    ReasoningDelta {
        /// The new text.
        text: String,
    },
    /// A piece of a function call.
    ToolCallDelta {
        /// Which call of the answer (0 for the first).
        index: usize,
        /// The function name, when this piece completed or first named it.
        name: Option<String>,
        /// The new piece of the arguments' JSON text.
        arguments: String,
    },
    /// The last request failed and another follows after `wait`. Text
    /// streamed so far belongs to the failed request and should be cleared.
    Retrying {
        /// Which retry this is (1 for the first): the request that
        /// follows is attempt `retry + 1`.
        retry: u32,
        /// How many retries the call makes at most, as far as is known now:
        /// the policy's, or fewer once a server on this machine timed
        /// out. A call that fails them all gives up after `max_retries +
        /// 1` attempts.
        max_retries: u32,
        /// The wait before it.
        wait: Duration,
        /// Why the last one failed ("HTTP 503", "timeout (…)", …).
        reason: String,
    },
    /// The streamed request is replaced by a non-streaming one.
    FallbackToNonStreaming {
        /// What made the stream unusable.
        reason: String,
    },
    /// The server refused how the forced tool was demanded; the request is
    /// sent again asking in a weaker way.
    ToolChoiceRelaxed {
        /// The way used from now on.
        to: ToolChoice,
        /// What the server said.
        reason: String,
    },
}
