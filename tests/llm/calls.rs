//! One call of the client as the tests make it: a config for the scripted
//! server with quick retries, the agent's step tool and a request forcing
//! it, the arguments the server answers with, the call itself under a
//! guard, and the retries it reported.

use std::time::Duration;

use serde_json::{json, Value};
use webagent::llm::{
    ChatMessage, ChatRequest, FunctionTool, LlmClient, LlmConfig, LlmError, LlmEvent, RetryPolicy,
    StopSignal,
};

/// Guards every call so a client bug fails the test instead of hanging it.
pub(crate) const GUARD: Duration = Duration::from_secs(30);

/// A client config for the server at `base_url`, with quick retries.
pub(crate) fn config(base_url: String) -> LlmConfig {
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

/// The agent's step tool as the client offers it.
pub(crate) fn step_tool() -> FunctionTool {
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

/// A request that forces the step tool.
pub(crate) fn step_request() -> ChatRequest {
    ChatRequest::new(vec![
        ChatMessage::system("You drive a browser."),
        ChatMessage::user("Sign in as admin."),
    ])
    .with_forced_tool(step_tool())
}

/// The arguments the scripted server calls the step tool with.
pub(crate) fn step_arguments() -> Value {
    json!({
        "evaluation_previous_goal": "The sign-in page loaded — 登录页已打开.",
        "memory": "Need the admin account; café ☕ menu is not relevant.",
        "next_goal": "Type the user name.",
        "action": {"input_text": {"index": 3, "text": "admin"}},
    })
}

/// Runs one call, collecting the progress events.
pub(crate) async fn call(
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

/// The retries a call reported: which one, how long it waited, and why.
pub(crate) fn retries(events: &[LlmEvent]) -> Vec<(u32, Duration, String)> {
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
