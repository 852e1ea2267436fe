//! The reflection as it streams: the model's tool call arrives as pieces of
//! JSON text, and the person should read the reflection while it is being
//! written rather than a second later. This reads the reflection fields out
//! of the incomplete JSON and reports only the newly readable text.

/// The fields shown while streaming, with the label each gets.
const FIELDS: [(&str, &str); 3] = [
    ("evaluation_previous_goal", "evaluation"),
    ("memory", "memory"),
    ("next_goal", "next goal"),
];

/// Follows one streamed tool call.
#[derive(Debug, Default)]
pub(crate) struct ReflectionPreview {
    arguments: String,
    shown: String,
}

impl ReflectionPreview {
    /// Starts over (a retried request streams a new answer).
    pub(crate) fn reset(&mut self) {
        self.arguments.clear();
        self.shown.clear();
    }

    /// Adds a piece of the arguments' JSON text; returns the readable text
    /// that is new since the last call, if any.
    pub(crate) fn push(&mut self, piece: &str) -> Option<String> {
        self.arguments.push_str(piece);
        let readable = readable(&self.arguments);
        // Text only ever grows; an answer that reorders what was shown
        // (it should not happen with a streamed string) is left as it is.
        let new = readable.strip_prefix(self.shown.as_str())?.to_string();
        if new.is_empty() {
            return None;
        }
        self.shown = readable;
        Some(new)
    }
}

/// `label: value` lines for the reflection fields found so far, in the
/// order the model wrote them.
fn readable(json: &str) -> String {
    let mut found: Vec<(usize, &str, String)> = FIELDS
        .iter()
        .filter_map(|(key, label)| {
            let (at, value) = partial_string_value(json, key)?;
            Some((at, *label, value))
        })
        .collect();
    found.sort_by_key(|(at, _, _)| *at);
    found
        .into_iter()
        .map(|(_, label, value)| format!("{label}: {value}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where `"key": "` starts in `json` and the string value after it, decoded
/// as far as it has arrived.
fn partial_string_value(json: &str, key: &str) -> Option<(usize, String)> {
    let quoted = format!("\"{key}\"");
    let at = json.find(&quoted)?;
    let rest = json[at + quoted.len()..].trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    let mut value = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => {
                let Some(escaped) = chars.next() else { break };
                match escaped {
                    'n' => value.push('\n'),
                    't' => value.push('\t'),
                    'r' => {}
                    'u' => {
                        let hex: String = chars.by_ref().take(4).collect();
                        if hex.len() < 4 {
                            break;
                        }
                        match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                            Some(decoded) => value.push(decoded),
                            // Half of a surrogate pair: shown once the
                            // whole answer is parsed.
                            None => value.push('\u{fffd}'),
                        }
                    }
                    other => value.push(other),
                }
            }
            other => value.push(other),
        }
    }
    Some((at, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reflection_is_readable_while_it_streams() {
        let json = r#"{"evaluation_previous_goal": "Success \"ok\"", "memory": "line1\nline2", "next_goal": "click Save", "action": {"click": {"index": 3}}}"#;
        let mut preview = ReflectionPreview::default();
        let mut seen = String::new();
        // Feed it in awkward 3-byte pieces (on char boundaries: ASCII).
        for piece in json.as_bytes().chunks(3) {
            if let Some(new) = preview.push(std::str::from_utf8(piece).unwrap()) {
                seen.push_str(&new);
            }
        }
        assert_eq!(
            seen,
            "evaluation: Success \"ok\"\nmemory: line1\nline2\nnext goal: click Save"
        );
    }

    #[test]
    fn nothing_is_reported_before_a_field_starts_and_reset_starts_over() {
        let mut preview = ReflectionPreview::default();
        assert_eq!(preview.push(r#"{"action": {"back": {}}"#), None);
        assert_eq!(
            preview.push(r#", "next_goal": "go"#).as_deref(),
            Some("next goal: go")
        );
        preview.reset();
        assert_eq!(
            preview.push(r#"{"memory": "\u00e9"#).as_deref(),
            Some("memory: é")
        );
    }
}
