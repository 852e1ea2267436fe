//! The one-line command syntax of the TUI command line:
//!
//! ```text
//! click 12                     positional arguments, in the spec's order
//! click "#save"                a target that is not a number is a selector
//! input_text 5 "hello there"   quotes (single or double) group words
//! input_text 5 hi clear=false  name=value sets any parameter by name
//! scroll down 2                direction, pages, then an optional target
//! think the form needs a date  a final text parameter takes the rest
//! done "Shipped" true
//! click {"index": 12}          a JSON object after the name is the params
//! {"click": {"index": 12}}     the model's own JSON form
//! ```
//!
//! Each action's argument order is [`ActionSpec::positional`]: for built-ins
//! it is listed in `webagent actions`; for custom actions it is the order of
//! the schema's properties. `target` in that order is the element, written
//! as an index (`12`) or a selector (`#save`). When the last argument is a
//! text and more words follow, they all belong to it, verbatim. Arguments
//! are converted by the parameter's schema type (numbers, `true`/`false`,
//! `yes`/`no`), then validated exactly like the model's JSON.

use serde_json::{Map, Number, Value};

use super::action::Action;
use super::catalog::Catalog;
use super::error::ActionError;
use super::spec::ActionSpec;

/// One word of the command line.
struct Token {
    /// Unquoted text.
    text: String,
    /// Character column (0-based) where the token starts.
    start: usize,
    /// Character index just past the token.
    end: usize,
    /// Whether it was written in quotes (so `"12"` is not an index).
    quoted: bool,
}

impl Catalog {
    /// Parses a command line such as `input_text 5 "hello"` into an action,
    /// validated like the model's JSON. See the module documentation for
    /// the syntax.
    pub fn parse_command(&self, line: &str) -> Result<Action, ActionError> {
        let chars: Vec<char> = line.chars().collect();
        let first = chars.iter().position(|c| !c.is_whitespace());
        let Some(first) = first else {
            return Err(ActionError::CommandSyntax {
                column: 1,
                reason: "the command is empty; type an action name such as `click 3`".to_string(),
            });
        };
        if chars[first] == '{' {
            let value: Value =
                serde_json::from_str(line.trim()).map_err(|e| ActionError::CommandSyntax {
                    column: first + e.column().max(1),
                    reason: format!("the JSON does not parse: {e}"),
                })?;
            return self.parse(&value);
        }
        let name_end = chars[first..]
            .iter()
            .position(|c| c.is_whitespace() || *c == '{')
            .map_or(chars.len(), |n| first + n);
        let name: String = chars[first..name_end].iter().collect();
        let spec = self.get(&name).ok_or_else(|| self.unknown(&name))?;
        let rest_start = chars[name_end..]
            .iter()
            .position(|c| !c.is_whitespace())
            .map_or(chars.len(), |n| name_end + n);
        if chars.get(rest_start) == Some(&'{') {
            let text: String = chars[rest_start..].iter().collect();
            let params: Value =
                serde_json::from_str(text.trim_end()).map_err(|e| ActionError::CommandSyntax {
                    column: rest_start + e.column().max(1),
                    reason: format!("the JSON parameters do not parse: {e}"),
                })?;
            return self.parse_call(&name, params);
        }
        let tokens = tokenize(&chars, name_end);
        let params = arguments(spec, &chars, tokens)?;
        self.parse_call(&name, Value::Object(params))
    }
}

/// The words of a command line as the `:` line reads an action's: a word
/// or a `name=` value in quotes keeps its spaces (`customer="Mary Jones"`),
/// with the quotes and escapes taken off.
pub fn command_words(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    tokenize(&chars, 0).into_iter().map(|t| t.text).collect()
}

/// Splits into words; a quote at the start of a word opens a quoted word
/// when it is closed later, otherwise it is an ordinary character (so
/// `think 'tis late` still reads).
fn tokenize(chars: &[char], from: usize) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut pos = from;
    while pos < chars.len() {
        if chars[pos].is_whitespace() {
            pos += 1;
            continue;
        }
        let start = pos;
        // A `name=` prefix may be followed by a quoted value.
        let mut text = String::new();
        let mut quoted = false;
        while pos < chars.len() && !chars[pos].is_whitespace() {
            let c = chars[pos];
            if (c == '"' || c == '\'') && (pos == start || chars[pos - 1] == '=') {
                if let Some((value, after)) = quoted_word(chars, pos) {
                    text.push_str(&value);
                    quoted = true;
                    pos = after;
                    continue;
                }
            }
            text.push(c);
            pos += 1;
        }
        tokens.push(Token {
            text,
            start,
            end: pos,
            quoted,
        });
    }
    tokens
}

/// A quoted word starting at `open`: its unescaped text and the index just
/// past the closing quote, or `None` if the quote is never closed.
fn quoted_word(chars: &[char], open: usize) -> Option<(String, usize)> {
    let quote = chars[open];
    let mut text = String::new();
    let mut pos = open + 1;
    while pos < chars.len() {
        match chars[pos] {
            '\\' if pos + 1 < chars.len() => {
                let escaped = chars[pos + 1];
                text.push(match escaped {
                    'n' => '\n',
                    't' => '\t',
                    other => other,
                });
                pos += 2;
            }
            c if c == quote => return Some((text, pos + 1)),
            c => {
                text.push(c);
                pos += 1;
            }
        }
    }
    None
}

/// Assigns tokens to parameters: `name=value` by name, the rest in the
/// spec's positional order.
fn arguments(
    spec: &ActionSpec,
    chars: &[char],
    tokens: Vec<Token>,
) -> Result<Map<String, Value>, ActionError> {
    let properties = spec
        .schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut params = Map::new();
    let mut positional = Vec::new();
    for token in tokens {
        let named = (!token.quoted || token.text.contains('='))
            .then(|| split_named(chars, &token))
            .flatten()
            .filter(|(key, _)| properties.contains_key(key));
        match named {
            Some((key, value_token)) => {
                let schema = &properties[&key];
                let value = convert(&key, schema, &value_token)?;
                params.insert(key, value);
            }
            None => positional.push(token),
        }
    }
    let order = &spec.positional;
    if positional.len() > order.len() {
        let last_is_text = order
            .last()
            .and_then(|p| properties.get(p))
            .and_then(|s| s.get("type"))
            .and_then(Value::as_str)
            == Some("string");
        if !last_is_text || order.is_empty() {
            let extra = &positional[order.len()];
            return Err(ActionError::CommandSyntax {
                column: extra.start + 1,
                reason: format!(
                    "`{}` takes {} ({}); unexpected `{}` (quote text that has spaces)",
                    spec.name,
                    plural(order.len()),
                    if order.is_empty() {
                        "none".to_string()
                    } else {
                        order.join(", ")
                    },
                    extra.text
                ),
            });
        }
        // The final text parameter takes everything from its first word to
        // the end, exactly as typed.
        let first = &positional[order.len() - 1];
        let last = &positional[positional.len() - 1];
        let merged = Token {
            text: chars[first.start..last.end].iter().collect(),
            start: first.start,
            end: last.end,
            quoted: true,
        };
        positional.truncate(order.len() - 1);
        positional.push(merged);
    }
    for (name, token) in order.iter().zip(positional) {
        if name == "target" && !properties.contains_key("target") {
            let (key, value) = target_value(&token);
            params.insert(key.to_string(), value);
            continue;
        }
        let Some(schema) = properties.get(name) else {
            continue;
        };
        let value = convert(name, schema, &token)?;
        params.insert(name.clone(), value);
    }
    Ok(params)
}

fn plural(count: usize) -> String {
    match count {
        0 => "no arguments".to_string(),
        1 => "1 argument".to_string(),
        n => format!("{n} arguments"),
    }
}

/// `key=value` (value possibly quoted) into the key and a token for the
/// value.
fn split_named(chars: &[char], token: &Token) -> Option<(String, Token)> {
    let raw: String = chars[token.start..token.end].iter().collect();
    let (key, _) = raw.split_once('=')?;
    let key_ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !key_ok {
        return None;
    }
    let value_start = token.start + key.chars().count() + 1;
    let quoted = matches!(chars.get(value_start), Some('"' | '\''));
    let text = match quoted.then(|| quoted_word(chars, value_start)).flatten() {
        Some((text, _)) => text,
        None => chars[value_start..token.end].iter().collect(),
    };
    Some((
        key.to_string(),
        Token {
            text,
            start: value_start,
            end: token.end,
            quoted,
        },
    ))
}

/// A bare number is an element index, anything else a selector.
fn target_value(token: &Token) -> (&'static str, Value) {
    if !token.quoted {
        if let Ok(index) = token.text.parse::<u64>() {
            return ("index", Value::from(index));
        }
    }
    ("selector", Value::String(token.text.clone()))
}

/// Converts a word by the parameter's schema type. Conversion failures are
/// syntax errors pointing at the word; range and format checks are left to
/// the schema validator so they read the same as for JSON.
fn convert(name: &str, schema: &Value, token: &Token) -> Result<Value, ActionError> {
    let fail = |expected: &str| ActionError::CommandSyntax {
        column: token.start + 1,
        reason: format!("`{}` is not {expected} (for `{name}`)", token.text),
    };
    let is_target_object = schema
        .get("properties")
        .is_some_and(|p| p.get("index").is_some() && p.get("selector").is_some());
    if is_target_object {
        let (key, value) = target_value(token);
        let mut object = Map::new();
        object.insert(key.to_string(), value);
        return Ok(Value::Object(object));
    }
    let text = token.text.as_str();
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => Ok(Value::String(token.text.clone())),
        Some("integer") => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| fail("a whole number")),
        Some("number") => text
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(|n| {
                // Keep whole numbers as integers so `pages=2` prints as 2.
                if n.as_f64()
                    .is_some_and(|f| f.fract() == 0.0 && f.abs() < 1e15)
                {
                    Value::from(n.as_f64().unwrap_or_default() as i64)
                } else {
                    Value::Number(n)
                }
            })
            .ok_or_else(|| fail("a number")),
        Some("boolean") => match text.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Ok(Value::Bool(true)),
            "false" | "no" | "off" | "0" => Ok(Value::Bool(false)),
            _ => Err(fail("true or false")),
        },
        Some("object") | Some("array") => serde_json::from_str(text).map_err(|_| fail("JSON")),
        _ => Ok(serde_json::from_str(text).unwrap_or_else(|_| Value::String(token.text.clone()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::{OptionChoice, Risk, ScrollDirection, WaitCondition};
    use serde_json::json;

    fn command(line: &str) -> Action {
        Catalog::builtin()
            .parse_command(line)
            .unwrap_or_else(|e| panic!("`{line}` should parse: {e}"))
    }

    fn command_error(line: &str) -> String {
        match Catalog::builtin().parse_command(line) {
            Ok(action) => panic!("`{line}` should fail, got {action:?}"),
            Err(err) => err.to_string(),
        }
    }

    fn same_as_json(line: &str, json: Value) {
        let from_json = Catalog::builtin().parse(&json).unwrap();
        assert_eq!(command(line), from_json, "{line}");
    }

    #[test]
    fn click_by_index_and_selector() {
        same_as_json("click 12", json!({"click": {"index": 12}}));
        same_as_json("click #save", json!({"click": {"selector": "#save"}}));
        same_as_json(
            "click \"form > button.primary\"",
            json!({"click": {"selector": "form > button.primary"}}),
        );
        same_as_json("  click   3  ", json!({"click": {"index": 3}}));
    }

    #[test]
    fn quoted_number_is_a_selector_not_an_index() {
        let err = command_error("click \"12\"");
        assert!(err.contains("click.selector"), "{err}");
    }

    #[test]
    fn input_text_with_quotes_and_rest_of_line() {
        same_as_json(
            "input_text 5 \"hello\"",
            json!({"input_text": {"index": 5, "text": "hello"}}),
        );
        same_as_json(
            "input_text 5 'hello there'",
            json!({"input_text": {"index": 5, "text": "hello there"}}),
        );
        same_as_json(
            "input_text 5 hello   big world",
            json!({"input_text": {"index": 5, "text": "hello   big world"}}),
        );
        same_as_json(
            "input_text 5 hello clear=false",
            json!({"input_text": {"index": 5, "text": "hello", "clear": false}}),
        );
        same_as_json(
            "input_text selector='#name' text=\"Ann Lee\"",
            json!({"input_text": {"selector": "#name", "text": "Ann Lee"}}),
        );
        same_as_json(
            "input_text 5 \"say \\\"hi\\\"\"",
            json!({"input_text": {"index": 5, "text": "say \"hi\""}}),
        );
    }

    #[test]
    fn goto_page_navigate_and_free_text() {
        same_as_json(
            "goto_page billing",
            json!({"goto_page": {"name": "billing"}}),
        );
        same_as_json(
            "goto_page new order",
            json!({"goto_page": {"name": "new order"}}),
        );
        same_as_json("navigate /orders", json!({"navigate": {"url": "/orders"}}));
        same_as_json(
            "think I'll open the 'orders' page",
            json!({"think": {"reasoning": "I'll open the 'orders' page"}}),
        );
    }

    #[test]
    fn scroll_direction_pages_and_target() {
        match command("scroll down 2") {
            Action::Scroll {
                direction,
                pages,
                target,
            } => {
                assert_eq!(direction, ScrollDirection::Down);
                assert_eq!(pages, 2.0);
                assert_eq!(target, None);
            }
            other => panic!("{other:?}"),
        }
        same_as_json("scroll up", json!({"scroll": {"direction": "up"}}));
        same_as_json(
            "scroll down 0.5 7",
            json!({"scroll": {"direction": "down", "pages": 0.5, "index": 7}}),
        );
        assert!(command_error("scroll sideways").contains("scroll.direction"));
    }

    #[test]
    fn press_keys_and_repeat() {
        same_as_json(
            "press_keys Control+A",
            json!({"press_keys": {"keys": "Control+A"}}),
        );
        same_as_json(
            "press_keys Tab 3",
            json!({"press_keys": {"keys": "Tab", "repeat": 3}}),
        );
        let err = command_error("press_keys Tab x");
        assert!(
            err.contains("`x` is not a whole number (for `repeat`)"),
            "{err}"
        );
        assert!(command_error("press_keys Hyper+Q").contains("unknown key `Hyper`"));
    }

    #[test]
    fn other_actions_map_their_positionals() {
        same_as_json("wait 1.5", json!({"wait": {"seconds": 1.5}}));
        same_as_json(
            "wait_for .toast 2000",
            json!({"wait_for": {"selector": ".toast", "timeout_ms": 2000}}),
        );
        match command("wait_for text=\"Order saved\"") {
            Action::WaitFor {
                condition: WaitCondition::Text { text },
                timeout_ms,
            } => {
                assert_eq!(text, "Order saved");
                assert_eq!(timeout_ms, 5000);
            }
            other => panic!("{other:?}"),
        }
        match command("select_option 4 express") {
            Action::SelectOption {
                choice: OptionChoice::Value { value },
                ..
            } => assert_eq!(value, "express"),
            other => panic!("{other:?}"),
        }
        same_as_json(
            "drag_and_drop 3 #bin",
            json!({"drag_and_drop": {"from": {"index": 3}, "to": {"selector": "#bin"}}}),
        );
        same_as_json(
            "highlight 3 orange Total price",
            json!({"highlight": {"index": 3, "color": "orange", "label": "Total price"}}),
        );
        same_as_json(
            "done \"All shipped\" yes",
            json!({"done": {"text": "All shipped", "success": true}}),
        );
        same_as_json("screenshot", json!({"screenshot": {}}));
        same_as_json("back", json!({"back": {}}));
    }

    #[test]
    fn json_forms() {
        same_as_json("click {\"index\": 12}", json!({"click": {"index": 12}}));
        same_as_json(
            "{\"click\": {\"index\": 12}}",
            json!({"click": {"index": 12}}),
        );
        assert!(command_error("click {\"index\": }").contains("do not parse"));
    }

    #[test]
    fn errors_name_the_problem() {
        assert!(command_error("").contains("empty"));
        let unknown = command_error("clik 3");
        assert!(unknown.contains("did you mean: click"), "{unknown}");
        let extra = command_error("click 3 4");
        assert!(
            extra.contains("`click` takes 1 argument (target); unexpected `4`"),
            "{extra}"
        );
        assert!(extra.contains("column 9"), "{extra}");
        assert!(command_error("back now").contains("takes no arguments"));
        assert!(command_error("input_text 5").contains("input_text.text: missing required field"));
        assert!(command_error("click \"div:has(a)\"").contains(":has()"));
        assert!(command_error("done finished maybe").contains("`maybe` is not true or false"));
    }

    #[test]
    fn custom_actions_use_property_order() {
        let mut catalog = Catalog::builtin();
        catalog
            .register(ActionSpec::custom(
                "open_chat",
                "Open the chat panel.",
                json!({
                    "type": "object",
                    "properties": {
                        "channel": {"type": "string"},
                        "urgent": {"type": "boolean", "default": false}
                    },
                    "required": ["channel"],
                    "additionalProperties": false
                }),
                Risk::Interact,
                None,
            ))
            .unwrap();
        let action = catalog.parse_command("open_chat support yes").unwrap();
        assert_eq!(
            action.params(),
            json!({"channel": "support", "urgent": true})
        );
        assert_eq!(
            catalog
                .parse_command("open_chat urgent=no channel=sales")
                .unwrap()
                .params(),
            json!({"channel": "sales", "urgent": false})
        );
    }

    #[test]
    fn display_round_trips_through_the_command_line() {
        for line in [
            "click 12",
            "input_text #name \"Ann\"",
            "scroll down 2 7",
            "press_keys Control+A",
            "wait_for text=Saved",
        ] {
            let action = command(line);
            assert_eq!(command(&action.to_string()), action, "{line}");
        }
    }
}
