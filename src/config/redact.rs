//! Secret values kept out of the log file.
//!
//! The agent masks secrets in what it builds (prompts, events, traces), but
//! the log also receives text from libraries: at `debug`/`trace` level the
//! CDP client logs every message it sends, including the script that types
//! a password. The log writer therefore masks every registered secret in
//! each line before it reaches the file, in the forms it takes on the way:
//! as written, JSON-escaped, and `{:?}`-escaped (and both, when a JSON
//! payload is logged with `{:?}`).

use std::borrow::Cow;
use std::io::Write;
use std::sync::RwLock;

use crate::agent::Secrets;
use crate::secrets::{encoded_forms, placeholder};

/// (form of a value as it may appear in a log line, its placeholder),
/// longest forms first.
static LOG_MASKS: RwLock<Vec<(String, String)>> = RwLock::new(Vec::new());

/// Masks these secrets in every log line written from now on (for the
/// rest of the process).
pub fn mask_in_logs(secrets: &Secrets) {
    let mut forms = Vec::new();
    for name in secrets.names() {
        let shown = placeholder(&name);
        // Filling the placeholder is the one way `Secrets` hands out a
        // value; it stays inside this process.
        let value = secrets.fill(&shown);
        if value == shown || value.is_empty() {
            continue;
        }
        for form in escaped_forms(&value) {
            forms.push((form, shown.clone()));
        }
    }
    let mut masks = LOG_MASKS.write().unwrap_or_else(|e| e.into_inner());
    masks.extend(forms);
    masks.sort_by_key(|(form, _)| std::cmp::Reverse(form.len()));
    masks.dedup();
}

/// The forms the agent masks (see [`encoded_forms`]), each also as `{:?}`
/// and JSON escape it once more: a logged CDP message is JSON printed with
/// `{:?}`.
fn escaped_forms(value: &str) -> Vec<String> {
    let json = |s: &str| {
        let quoted = serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""));
        quoted[1..quoted.len() - 1].to_string()
    };
    let debug = |s: &str| {
        let quoted = format!("{s:?}");
        quoted[1..quoted.len() - 1].to_string()
    };
    let mut forms = Vec::new();
    for form in encoded_forms(value) {
        forms.push(debug(&form));
        forms.push(json(&form));
        forms.push(debug(&json(&form)));
        forms.push(form);
    }
    forms.sort();
    forms.dedup();
    forms
}

/// `text` with every registered secret form replaced by its placeholder.
pub fn redact(text: &str) -> Cow<'_, str> {
    let masks = LOG_MASKS.read().unwrap_or_else(|e| e.into_inner());
    if masks.is_empty() || !masks.iter().any(|(form, _)| text.contains(form.as_str())) {
        return Cow::Borrowed(text);
    }
    let mut out = text.to_string();
    for (form, shown) in masks.iter() {
        if out.contains(form.as_str()) {
            out = out.replace(form.as_str(), shown);
        }
    }
    Cow::Owned(out)
}

/// A writer that masks registered secrets in what passes through. The log
/// formatter writes each event as one buffer, so a value is never split
/// across two writes.
#[derive(Debug)]
pub struct RedactingWriter<W> {
    inner: W,
}

impl<W: Write> RedactingWriter<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        RedactingWriter { inner }
    }
}

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match std::str::from_utf8(buf) {
            Ok(text) => {
                self.inner.write_all(redact(text).as_bytes())?;
                Ok(buf.len())
            }
            // Formatted log lines are always UTF-8; anything else passes.
            Err(_) => self.inner.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_forms_of_a_registered_value_are_masked() {
        let mut secrets = Secrets::new();
        secrets.insert("quoted", "pa\"ss\\wörd-7731");
        mask_in_logs(&secrets);
        let value = "pa\"ss\\wörd-7731";
        let json = serde_json::to_string(value).unwrap();
        let logged = format!("typed {value}; sent {json}; debug {:?}", json);
        let mut out = RedactingWriter::new(Vec::new());
        out.write_all(logged.as_bytes()).unwrap();
        let written = String::from_utf8(out.inner).unwrap();
        assert!(!written.contains("7731"), "{written}");
        assert_eq!(written.matches("<secret>quoted</secret>").count(), 3);
        assert_eq!(redact("nothing here"), "nothing here");
    }
}
