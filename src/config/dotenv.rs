//! The secrets file: dotenv lines (`NAME=value`), every entry a secret.

use std::path::Path;

use super::error::ConfigError;
use crate::secrets::SecretValue;

/// Reads `NAME=value` lines. Blank lines and `#` comments are skipped, an
/// `export ` prefix is allowed, and a value in matching single or double
/// quotes loses them (no escapes are interpreted: a password is taken as
/// written).
pub(super) fn read(file: &Path) -> Result<Vec<(String, SecretValue)>, ConfigError> {
    let text = std::fs::read_to_string(file).map_err(|source| ConfigError::Read {
        path: file.to_path_buf(),
        source,
    })?;
    let entries = parse(file, &text)?;
    Ok(entries
        .into_iter()
        .map(|(name, value)| (name, SecretValue::from(value)))
        .collect())
}

fn parse(file: &Path, text: &str) -> Result<Vec<(String, String)>, ConfigError> {
    let mut entries = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let syntax = |message: String| ConfigError::SecretsFileSyntax {
            file: file.to_path_buf(),
            line: number + 1,
            message,
        };
        // The error names the line, never its content: it may be a value.
        let Some((name, value)) = line.split_once('=') else {
            return Err(syntax("expected NAME=value".into()));
        };
        let name = name.trim();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(syntax(
                "the name before `=` may use letters, digits, `_` and `-` only".into(),
            ));
        }
        let value = value.trim();
        let value = ['"', '\'']
            .iter()
            .find_map(|q| {
                value
                    .strip_prefix(*q)
                    .and_then(|v| v.strip_suffix(*q))
                    .filter(|_| value.len() >= 2)
            })
            .unwrap_or(value);
        if value.is_empty() {
            return Err(syntax(format!("{name} has an empty value")));
        }
        entries.push((name.to_string(), value.to_string()));
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_become_named_values() {
        let text = "# creds\nexport PW=\"a b#c\"\n\nTOKEN = 'x=y'\nPLAIN=z\n";
        let entries = parse(Path::new("s.env"), text).unwrap();
        assert_eq!(
            entries,
            [
                ("PW".to_string(), "a b#c".to_string()),
                ("TOKEN".to_string(), "x=y".to_string()),
                ("PLAIN".to_string(), "z".to_string()),
            ]
        );
    }

    #[test]
    fn a_bad_line_is_named_without_its_content() {
        let err = parse(Path::new("s.env"), "A=1\nhunter2\n").unwrap_err();
        let text = err.to_string();
        assert_eq!(text, "s.env:2: expected NAME=value");
    }
}
