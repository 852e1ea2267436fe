//! Where a YAML file went wrong, said once: every file webagent reads as
//! YAML (config, sitemaps, themes) reports `FILE:LINE:COLUMN: message`.

use std::path::{Path, PathBuf};

/// A problem at a place in a YAML file (config, sitemap, theme), said as
/// `FILE:LINE:COLUMN: message`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}:{column}: {message}", file.display())]
pub struct YamlError {
    /// The file (or `<string>` for text parsed from memory).
    pub file: PathBuf,
    /// 1-based line; 0 when unknown.
    pub line: usize,
    /// 1-based column; 0 when unknown.
    pub column: usize,
    /// What is wrong, without the position.
    pub message: String,
}

impl YamlError {
    /// A problem of `file` at `line`:`column`.
    pub fn at(file: &Path, (line, column): (usize, usize), message: impl Into<String>) -> Self {
        YamlError {
            file: file.to_path_buf(),
            line,
            column,
            message: message.into(),
        }
    }

    /// What the parser said about `file`, placed where it points (at
    /// `unknown` when it points nowhere), the position said once.
    pub fn parsing(file: &Path, error: &serde_yaml::Error, unknown: (usize, usize)) -> Self {
        let at = error.location().map_or(unknown, |l| (l.line(), l.column()));
        YamlError::at(file, at, strip_position(&error.to_string()))
    }

    /// Whether the parser knew where the problem is.
    pub fn has_position(&self) -> bool {
        self.line > 0
    }
}

/// `serde_yaml` puts " at line L column C" into its messages (at the end,
/// or before what it was parsing); the position is reported in front, so
/// the message drops it and keeps the rest.
fn strip_position(message: &str) -> String {
    const MARK: &str = " at line ";
    let mut searched = 0;
    while let Some(found) = message[searched..].find(MARK) {
        let at = searched + found;
        let rest = &message[at + MARK.len()..];
        let line_digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let after_line = &rest[line_digits..];
        if line_digits > 0 {
            if let Some(column) = after_line.strip_prefix(" column ") {
                let column_digits = column.bytes().take_while(u8::is_ascii_digit).count();
                if column_digits > 0 {
                    return format!("{}{}", &message[..at], &column[column_digits..]);
                }
            }
        }
        searched = at + MARK.len();
    }
    message.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_position_is_read_and_said_once() {
        assert_eq!(strip_position("bad at line 3 column 5"), "bad");
        assert_eq!(strip_position("bad at line three"), "bad at line three");
        assert_eq!(
            strip_position("did not find ']' at line 3 column 1, while parsing a flow sequence"),
            "did not find ']', while parsing a flow sequence"
        );
        let error =
            serde_yaml::from_str::<serde_yaml::Value>("a: [1,\nb: 2").expect_err("unclosed");
        let problem = YamlError::parsing(Path::new("a.yaml"), &error, (0, 0));
        assert!(problem.has_position(), "{problem:?}");
        // The error's own position is said once, in front; where the
        // unclosed sequence began stays in the message.
        let said = problem.to_string();
        assert!(
            said.starts_with(&format!("a.yaml:{}:{}: ", problem.line, problem.column)),
            "{said}"
        );
        assert!(
            !problem.message.contains(&format!(
                "at line {} column {}",
                problem.line, problem.column
            )),
            "{problem:?}"
        );
        assert!(problem.message.contains("flow sequence"), "{problem:?}");
    }
}
