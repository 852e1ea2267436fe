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
        YamlError::at(file, at, strip_position(&error.to_string(), at))
    }

    /// Whether the parser knew where the problem is.
    pub fn has_position(&self) -> bool {
        self.line > 0
    }
}

/// `serde_yaml` puts " at line L column C" into its messages (at the end,
/// or before what it was parsing), and sometimes a second position (where
/// an unclosed sequence began). The error's own position, `at`, is
/// reported in front, so the message drops that one and keeps the rest.
fn strip_position(message: &str, (line, column): (usize, usize)) -> String {
    let own = format!(" at line {line} column {column}");
    let mut searched = 0;
    while let Some(found) = message[searched..].find(&own) {
        let at = searched + found;
        let after = &message[at + own.len()..];
        // "at line 3 column 1" is not "at line 3 column 12".
        if !after.starts_with(|c: char| c.is_ascii_digit()) {
            return format!("{}{after}", &message[..at]);
        }
        searched = at + own.len();
    }
    message.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_position_is_read_and_said_once() {
        assert_eq!(strip_position("bad at line 3 column 5", (3, 5)), "bad");
        assert_eq!(
            strip_position("bad at line three", (3, 1)),
            "bad at line three"
        );
        assert_eq!(
            strip_position(
                "did not find ']' at line 3 column 1, while parsing a flow sequence",
                (3, 1)
            ),
            "did not find ']', while parsing a flow sequence"
        );
        // Two positions: the one the error stands at goes; the other one
        // (where what was parsed began) stays, even when it comes first.
        assert_eq!(
            strip_position(
                "did not find ',' at line 1 column 4, while parsing a flow sequence at line 2 column 12",
                (2, 12)
            ),
            "did not find ',' at line 1 column 4, while parsing a flow sequence"
        );
        // Column 1 is not the start of column 12.
        assert_eq!(
            strip_position("bad at line 2 column 12", (2, 1)),
            "bad at line 2 column 12"
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
