//! What is sent: messages, the function tool, and the JSON body.

use serde_json::{json, Map, Value};

use super::config::LlmConfig;
use super::tool::{FunctionTool, ToolCall, ToolChoice};

/// Who a message in the conversation is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Instructions that frame the whole conversation.
    System,
    /// The person (or the agent loop speaking for them).
    User,
    /// An earlier answer of the model.
    Assistant,
    /// The result of a tool call the model made.
    Tool,
}

impl Role {
    /// The role's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// A picture attached to a message, for models that read images.
#[derive(Clone, PartialEq)]
pub struct ImagePart {
    /// The image as a `data:` URL (or an `https:` one).
    pub url: String,
    /// The prompt tokens it is counted as.
    pub tokens: u64,
}

// A data URL is hundreds of kilobytes of base64.
impl std::fmt::Debug for ImagePart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImagePart")
            .field("url_chars", &self.url.len())
            .field("tokens", &self.tokens)
            .finish()
    }
}

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatMessage {
    /// Who it is from.
    pub role: Role,
    /// The text; may be empty for an assistant message that only calls tools.
    pub content: String,
    /// Pictures sent after the text (user messages only); the message then
    /// goes out as content parts.
    pub images: Vec<ImagePart>,
    /// Tool calls of an earlier assistant answer, replayed as history.
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the id of the call it answers.
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    fn text(role: Role, content: impl Into<String>) -> Self {
        ChatMessage {
            role,
            content: content.into(),
            images: Vec::new(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// The same message with a picture after its text.
    pub fn with_image(mut self, image: ImagePart) -> Self {
        self.images.push(image);
        self
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::text(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::text(Role::User, content)
    }

    /// An assistant message with text only.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::text(Role::Assistant, content)
    }

    /// An earlier assistant answer that called a tool.
    pub fn assistant_tool_call(call: ToolCall) -> Self {
        ChatMessage {
            role: Role::Assistant,
            content: String::new(),
            images: Vec::new(),
            tool_calls: vec![call],
            tool_call_id: None,
        }
    }

    /// The result of the tool call with id `call_id`.
    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::Tool,
            content: content.into(),
            images: Vec::new(),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
        }
    }

    /// The message in chat-completions JSON.
    pub fn to_json(&self) -> Value {
        let mut message = Map::new();
        message.insert("role".into(), Value::from(self.role.as_str()));
        if self.role == Role::Assistant && !self.tool_calls.is_empty() {
            // Several servers reject an empty string next to tool calls but
            // accept null.
            let content = if self.content.is_empty() {
                Value::Null
            } else {
                Value::from(self.content.as_str())
            };
            message.insert("content".into(), content);
            let calls = self
                .tool_calls
                .iter()
                .enumerate()
                .map(|(i, call)| {
                    let id = if call.id.is_empty() {
                        format!("call_{i}")
                    } else {
                        call.id.clone()
                    };
                    json!({
                        "id": id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments},
                    })
                })
                .collect();
            message.insert("tool_calls".into(), Value::Array(calls));
        } else if !self.images.is_empty() {
            // The content-parts form; a message without pictures keeps the
            // plain string every server takes.
            let mut parts = vec![json!({"type": "text", "text": self.content})];
            parts.extend(
                self.images
                    .iter()
                    .map(|image| json!({"type": "image_url", "image_url": {"url": image.url}})),
            );
            message.insert("content".into(), Value::Array(parts));
        } else {
            message.insert("content".into(), Value::from(self.content.as_str()));
        }
        if let Some(id) = &self.tool_call_id {
            message.insert("tool_call_id".into(), Value::from(id.as_str()));
        }
        Value::Object(message)
    }
}

/// One request to the model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatRequest {
    /// The conversation, oldest first.
    pub messages: Vec<ChatMessage>,
    /// The tool offered to the model, if any.
    pub tool: Option<FunctionTool>,
    /// Force the model to call `tool` (by name) rather than answer in text.
    pub force_tool: bool,
    /// Overrides the configured temperature for this request.
    pub temperature: Option<f32>,
    /// Upper bound on the answer's tokens, if the caller wants one.
    pub max_tokens: Option<u32>,
}

impl ChatRequest {
    /// A request with these messages and no tool.
    pub fn new(messages: Vec<ChatMessage>) -> Self {
        ChatRequest {
            messages,
            ..ChatRequest::default()
        }
    }

    /// The same request, offering `tool` and forcing the model to call it.
    pub fn with_forced_tool(mut self, tool: FunctionTool) -> Self {
        self.tool = Some(tool);
        self.force_tool = true;
        self
    }

    /// The characters the model reads: every message's text and tool
    /// calls, and the tool's name, description and schema.
    pub fn prompt_chars(&self) -> usize {
        let messages: usize = self
            .messages
            .iter()
            .map(|m| {
                m.content.chars().count()
                    + m.tool_calls
                        .iter()
                        .map(|c| c.name.chars().count() + c.arguments.chars().count())
                        .sum::<usize>()
            })
            .sum();
        let tool = self
            .tool
            .as_ref()
            .map_or(0, |t| t.to_json().to_string().chars().count());
        messages + tool
    }

    /// The prompt's estimated size in tokens (see
    /// [`estimate_tokens`](super::estimate_tokens)), pictures included at
    /// their counted cost.
    pub fn estimated_prompt_tokens(&self) -> u64 {
        super::tokens::estimate_tokens(self.prompt_chars()) + self.image_tokens()
    }

    /// The tokens the pictures of every message are counted as.
    pub fn image_tokens(&self) -> u64 {
        self.messages
            .iter()
            .flat_map(|m| &m.images)
            .map(|image| image.tokens)
            .sum()
    }

    /// Whether any message carries a picture.
    pub fn has_images(&self) -> bool {
        self.messages.iter().any(|m| !m.images.is_empty())
    }

    /// The same request with every picture left out.
    pub fn without_images(&self) -> ChatRequest {
        let mut request = self.clone();
        for message in &mut request.messages {
            message.images.clear();
        }
        request
    }

    /// The JSON body for `config`'s model, streamed or not.
    pub fn to_body(&self, config: &LlmConfig, stream: bool) -> Value {
        self.to_body_with(config, stream, ToolChoice::Named)
    }

    /// The JSON body, demanding a forced tool in the way `choice` says.
    pub fn to_body_with(&self, config: &LlmConfig, stream: bool, choice: ToolChoice) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), Value::from(config.model.as_str()));
        body.insert(
            "messages".into(),
            Value::Array(self.messages.iter().map(ChatMessage::to_json).collect()),
        );
        if let Some(tool) = &self.tool {
            body.insert("tools".into(), Value::Array(vec![tool.to_json()]));
            if self.force_tool {
                match choice {
                    ToolChoice::Named => {
                        body.insert(
                            "tool_choice".into(),
                            json!({"type": "function", "function": {"name": tool.name}}),
                        );
                    }
                    ToolChoice::Required => {
                        body.insert("tool_choice".into(), Value::from("required"));
                    }
                    ToolChoice::Auto => {}
                }
            }
        }
        if let Some(temperature) = self.temperature.or(config.temperature) {
            // f32 → f64 through the decimal text, so 0.2 is sent as 0.2
            // rather than 0.20000000298023224.
            let value = temperature
                .to_string()
                .parse::<f64>()
                .unwrap_or(f64::from(temperature));
            body.insert("temperature".into(), json!(value));
        }
        if let Some(max_tokens) = self.max_tokens.or(config.max_output_tokens) {
            body.insert("max_tokens".into(), json!(max_tokens));
        }
        if stream {
            body.insert("stream".into(), Value::Bool(true));
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        Value::Object(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step_tool() -> FunctionTool {
        FunctionTool {
            name: "agent_step".into(),
            description: "Reflect, then act.".into(),
            parameters: json!({"type": "object", "properties": {"next_goal": {"type": "string"}}}),
        }
    }

    #[test]
    fn body_forces_the_tool_by_name() {
        let config = LlmConfig::default().with_model("test-model");
        let request = ChatRequest::new(vec![
            ChatMessage::system("rules"),
            ChatMessage::user("task"),
        ])
        .with_forced_tool(step_tool());
        let body = request.to_body(&config, false);
        assert_eq!(body["model"], "test-model");
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "rules"})
        );
        assert_eq!(body["messages"][1]["role"], "user");
        assert_eq!(body["tools"][0]["function"]["name"], "agent_step");
        assert_eq!(
            body["tool_choice"],
            json!({"type": "function", "function": {"name": "agent_step"}})
        );
        assert!(body.get("stream").is_none());
    }

    #[test]
    fn relaxed_tool_choices_keep_the_tool_on_offer() {
        let request =
            ChatRequest::new(vec![ChatMessage::user("task")]).with_forced_tool(step_tool());
        let config = LlmConfig::default();
        let required = request.to_body_with(&config, false, ToolChoice::Required);
        assert_eq!(required["tool_choice"], "required");
        let auto = request.to_body_with(&config, false, ToolChoice::Auto);
        assert!(auto.get("tool_choice").is_none());
        assert_eq!(auto["tools"][0]["function"]["name"], "agent_step");
        assert_eq!(ToolChoice::Named.relaxed(), Some(ToolChoice::Required));
        assert_eq!(ToolChoice::Auto.relaxed(), None);
        for choice in [ToolChoice::Named, ToolChoice::Required, ToolChoice::Auto] {
            assert_eq!(ToolChoice::from_level(choice.level()), choice);
        }
    }

    #[test]
    fn streaming_asks_for_usage_and_temperature_stays_decimal() {
        let config = LlmConfig {
            temperature: Some(0.2),
            ..LlmConfig::default()
        };
        let body = ChatRequest::new(vec![ChatMessage::user("hi")]).to_body(&config, true);
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
        assert_eq!(body["temperature"].to_string(), "0.2");
        assert_eq!(
            body["max_tokens"],
            crate::llm::default_max_output_tokens().unwrap_or_default()
        );
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
    }

    #[test]
    fn a_message_with_a_picture_goes_out_as_content_parts() {
        let config = LlmConfig::default();
        let plain = ChatRequest::new(vec![ChatMessage::user("look")]);
        assert_eq!(
            plain.to_body(&config, false)["messages"][0]["content"],
            "look"
        );
        let image = ImagePart {
            url: "data:image/jpeg;base64,/9j/".into(),
            tokens: 765,
        };
        let seeing = ChatRequest::new(vec![
            ChatMessage::system("rules"),
            ChatMessage::user("look").with_image(image),
        ]);
        let body = seeing.to_body(&config, false);
        assert_eq!(body["messages"][0]["content"], "rules");
        assert_eq!(
            body["messages"][1]["content"],
            json!([
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/"}}
            ])
        );
        assert_eq!(
            seeing.estimated_prompt_tokens(),
            crate::llm::estimate_tokens("ruleslook".len()) + 765
        );
        assert!(seeing.has_images() && !seeing.without_images().has_images());
    }

    #[test]
    fn tool_history_round_trips_with_ids() {
        let call = ToolCall {
            id: String::new(),
            name: "agent_step".into(),
            arguments: "{\"next_goal\":\"x\"}".into(),
        };
        let assistant = ChatMessage::assistant_tool_call(call).to_json();
        assert_eq!(assistant["content"], Value::Null);
        assert_eq!(assistant["tool_calls"][0]["id"], "call_0");
        assert_eq!(
            assistant["tool_calls"][0]["function"]["arguments"],
            "{\"next_goal\":\"x\"}"
        );
        let result = ChatMessage::tool_result("call_0", "ok").to_json();
        assert_eq!(
            result,
            json!({"role": "tool", "content": "ok", "tool_call_id": "call_0"})
        );
    }
}
