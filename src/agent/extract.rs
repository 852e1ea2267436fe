//! The model's side of `extract`: the browser reads the page, and this
//! asks the model to answer the instruction from what it read, with the
//! page fenced as untrusted like every page the agent shows a model. The
//! answer is checked against the wanted schema; an invalid one goes back
//! to the model once with what was wrong, and a second invalid one is a
//! failure that quotes it.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::actions::{check_value, ActionResult};
use crate::environment::{BoxFuture, Extractor};
use crate::llm::{ChatMessage, ChatRequest, FunctionTool, LlmClient};
use crate::secrets::Secrets;

use super::prompt::{extraction_prompt, EXTRACTION_SYSTEM_PROMPT};

/// The forced tool the extraction answers with.
pub const EXTRACT_TOOL: &str = "extract_result";

/// How many characters of an invalid answer a failure quotes.
const QUOTE_CHARS: usize = 400;

/// Answers `extract` with a model.
pub struct ModelExtractor {
    llm: Arc<LlmClient>,
    secrets: Secrets,
}

impl ModelExtractor {
    /// Asks `llm`; `secrets` are masked in every request (the page text
    /// arrives masked already; the instruction is the model's own).
    pub fn new(llm: Arc<LlmClient>, secrets: Secrets) -> Self {
        ModelExtractor { llm, secrets }
    }

    async fn answer(
        &self,
        instruction: &str,
        schema: Option<&Value>,
        page: &Value,
    ) -> ActionResult {
        let tool = extract_tool(schema);
        let wanted = tool_schema(schema);
        let mut messages = vec![
            ChatMessage::system(EXTRACTION_SYSTEM_PROMPT),
            ChatMessage::user(extraction_prompt(instruction, page)),
        ];
        let mut last_problem = String::new();
        for attempt in 0..2 {
            let request =
                super::masked::masked_request(ChatRequest::new(messages.clone()), &self.secrets)
                    .with_forced_tool(tool.clone());
            let answer = match self.llm.complete(&request).await {
                Ok(answer) => answer,
                // The server's words may quote the API key.
                Err(error) => {
                    return ActionResult::unknown(
                        self.secrets
                            .mask(&format!("extract: the model call failed: {error}")),
                    )
                }
            };
            let (arguments, problem) = match answer.tool_call(EXTRACT_TOOL) {
                None => (
                    answer.content.trim().to_string(),
                    "the answer did not call the extract_result tool".to_string(),
                ),
                Some(call) => match serde_json::from_str::<Value>(&call.arguments) {
                    Err(error) => (
                        call.arguments.clone(),
                        format!("the arguments are not JSON ({error})"),
                    ),
                    Ok(value) => match check_value(&wanted, &value, "extract_result") {
                        Ok(checked) => {
                            return ActionResult::ok_with(unwrap_result(schema, checked))
                        }
                        Err(error) => (call.arguments.clone(), error.to_string()),
                    },
                },
            };
            last_problem = format!("{problem}; the answer was: {}", quote(&arguments));
            if attempt == 0 {
                // Once more, with what was wrong: a slip is often fixed
                // when named.
                messages.push(ChatMessage::assistant(arguments));
                messages.push(ChatMessage::user(format!(
                    "That answer is not valid: {problem}. Call extract_result again with \
                     arguments that match its parameters."
                )));
            }
        }
        ActionResult::unknown(format!(
            "extract: the model's answer did not match the wanted shape twice: {last_problem}"
        ))
    }
}

impl Extractor for ModelExtractor {
    fn extract<'a>(
        &'a self,
        instruction: &'a str,
        schema: Option<&'a Value>,
        page: &'a Value,
    ) -> BoxFuture<'a, ActionResult> {
        Box::pin(self.answer(instruction, schema, page))
    }
}

/// Tool parameters must be an object; any other wanted schema is wrapped
/// as the object's `result`.
fn is_wrapped(schema: Option<&Value>) -> bool {
    !matches!(schema.and_then(|s| s.get("type")), Some(Value::String(t)) if t == "object")
}

/// The schema the answer's arguments must match: the wanted one when it
/// is an object, else an object whose required `result` is it.
fn tool_schema(schema: Option<&Value>) -> Value {
    match schema {
        Some(s) if !is_wrapped(schema) => s.clone(),
        Some(s) => json!({"type": "object", "properties": {"result": s}, "required": ["result"]}),
        None => json!({
            "type": "object",
            "properties": {"result": {"description": "the extracted data, as JSON"}},
            "required": ["result"],
        }),
    }
}

/// The data as the caller asked for it: the wrapped `result` taken out.
fn unwrap_result(schema: Option<&Value>, checked: Value) -> Value {
    if is_wrapped(schema) {
        checked.get("result").cloned().unwrap_or(Value::Null)
    } else {
        checked
    }
}

/// The forced tool of `extract`: its parameters are the wanted schema (an
/// object, or wrapped as `result`), reduced to what local servers can turn
/// into a grammar.
pub fn extract_tool(schema: Option<&Value>) -> FunctionTool {
    FunctionTool {
        name: EXTRACT_TOOL.into(),
        description: "Return the data the instruction asks for, taken only from the page text."
            .into(),
        parameters: crate::actions::model_schema(&tool_schema(schema), false),
    }
}

fn quote(text: &str) -> String {
    let count = text.chars().count();
    if count <= QUOTE_CHARS {
        return text.to_string();
    }
    let kept: String = text.chars().take(QUOTE_CHARS).collect();
    format!("{kept}… ({count} characters)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::grammar_subset_problems;

    #[test]
    fn extract_tools_stay_inside_the_grammar_subset() {
        let person = json!({
            "type": "object",
            "properties": {
                "plans": {"type": "array", "minItems": 1, "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string", "minLength": 1}, "price": {"type": ["number", "null"]}},
                    "required": ["name"]
                }}
            },
            "oneOf": [{"required": ["plans"]}]
        });
        for schema in [None, Some(&person), Some(&json!({"type": "string"}))] {
            let tool = extract_tool(schema);
            let problems = grammar_subset_problems(&tool.parameters);
            assert!(problems.is_empty(), "{schema:?}: {problems:?}");
        }
        let tool = extract_tool(Some(&person));
        assert_eq!(
            tool.parameters["properties"]["plans"]["items"]["properties"]["price"]["type"],
            "number"
        );
    }

    #[test]
    fn an_answer_without_the_required_field_is_refused_by_the_schema() {
        let wanted = tool_schema(None);
        assert!(check_value(&wanted, &json!({}), "extract_result").is_err());
        let checked = check_value(&wanted, &json!({"result": 3}), "extract_result")
            .expect("a result is enough");
        assert_eq!(unwrap_result(None, checked), json!(3));
        let object = json!({"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]});
        let wrong = check_value(
            &tool_schema(Some(&object)),
            &json!({"total": "lots"}),
            "extract_result",
        );
        assert!(wrong.is_err(), "{wrong:?}");
    }
}
