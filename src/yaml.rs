//! Where a YAML file went wrong, said once: every file webagent reads as
//! YAML (config, sitemaps, suites, themes) reports `FILE:LINE:COLUMN:
//! message`, and is read the same way: refused at once past
//! [`MAX_YAML_BYTES`], and refused where it stops being UTF-8 text.

use std::path::{Path, PathBuf};

/// The largest YAML file webagent reads (a config, a sitemap, a suite):
/// 4 MiB. A sitemap of a large application is a few hundred kilobytes;
/// parsing costs many times a file's size in memory and time, so a larger
/// file is refused before it is read rather than after a long load.
pub const MAX_YAML_BYTES: u64 = 4 * 1024 * 1024;

/// Why a YAML file could not be read as text.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The system could not read it (missing, a folder, no permission).
    #[error("cannot read {}: {source}", file.display())]
    Io {
        /// The file.
        file: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// It is larger than [`MAX_YAML_BYTES`].
    #[error("{}: {}", file.display(), too_big(*bytes))]
    TooBig {
        /// The file.
        file: PathBuf,
        /// Its size.
        bytes: u64,
    },
    /// It is not UTF-8 text, from the place given.
    #[error(transparent)]
    NotText(YamlError),
}

/// What is wrong with a YAML file of `bytes` bytes over the limit.
pub fn too_big(bytes: u64) -> String {
    format!(
        "{bytes} bytes is over the {MAX_YAML_BYTES} bytes (4 MiB) a YAML file may have (config, \
         sitemap, suite); split it or leave out what is not needed"
    )
}

/// The text of the YAML file at `path`: refused at once when it is over
/// [`MAX_YAML_BYTES`], and at the line and column of the first byte that
/// is not UTF-8.
pub fn read_text(path: &Path) -> Result<String, ReadError> {
    let io = |source| ReadError::Io {
        file: path.to_path_buf(),
        source,
    };
    let bytes = std::fs::metadata(path).map_err(io)?.len();
    if bytes > MAX_YAML_BYTES {
        return Err(ReadError::TooBig {
            file: path.to_path_buf(),
            bytes,
        });
    }
    let raw = std::fs::read(path).map_err(io)?;
    String::from_utf8(raw).map_err(|error| {
        let good = &error.as_bytes()[..error.utf8_error().valid_up_to()];
        // ok: the bytes before `valid_up_to` are UTF-8 by definition.
        let good = std::str::from_utf8(good).unwrap_or_default();
        let line = good.matches('\n').count() + 1;
        let column = good.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        let byte = error.as_bytes()[error.utf8_error().valid_up_to()];
        ReadError::NotText(YamlError::at(
            path,
            (line, column),
            format!("not UTF-8 text (byte 0x{byte:02X}); save the file as UTF-8"),
        ))
    })
}

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
        YamlError::at(
            file,
            at,
            plain_words(&strip_position(&error.to_string(), at)),
        )
    }

    /// [`YamlError::parsing`] for the file's `text`: aliases that expand
    /// past the parser's limit (an alias bomb) come without a place, so
    /// the first alias is named as where it starts.
    pub fn parsing_text(
        file: &Path,
        error: &serde_yaml::Error,
        text: &str,
        unknown: (usize, usize),
    ) -> Self {
        let mut problem = YamlError::parsing(file, error, unknown);
        let expanded = ["repetition limit", "recursion limit"]
            .iter()
            .any(|limit| problem.message.contains(limit));
        if error.location().is_none() && expanded {
            if let Some(at) = first_alias(text) {
                problem.line = at.0;
                problem.column = at.1;
                problem.message = format!(
                    "{}: the aliases from here on expand past what a file may hold (an alias \
                     bomb?); write the values out or repeat fewer",
                    problem.message
                );
            }
        }
        problem
    }

    /// Whether the parser knew where the problem is.
    pub fn has_position(&self) -> bool {
        self.line > 0
    }
}

/// Line and column (1-based) of the first alias (`*name`) in `text`
/// outside quotes and comments.
fn first_alias(text: &str) -> Option<(usize, usize)> {
    for (number, line) in text.lines().enumerate() {
        let mut quote = None;
        let mut before = ' ';
        for (column, c) in line.chars().enumerate() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '#') if before.is_whitespace() => break,
                (None, '*') if " \t[{,:-".contains(before) || column == 0 => {
                    return Some((number + 1, column + 1))
                }
                _ => {}
            }
            before = c;
        }
    }
    None
}

/// serde's words for what a key takes (`expected u32`, `expected struct
/// Timeouts`), said the way a person writing the file reads them, and a
/// "did you mean" for an unknown key close to one the file may use.
fn plain_words(message: &str) -> String {
    const PLAIN: &[(&[&str], &str)] = &[
        (
            &["u8", "u16", "u32", "u64", "u128", "usize"],
            "a whole number ≥ 0",
        ),
        (
            &["i8", "i16", "i32", "i64", "i128", "isize"],
            "a whole number",
        ),
        (&["f32", "f64"], "a number"),
        (&["a boolean"], "true or false"),
        (&["path string"], "a path"),
        (&["a sequence"], "a list (`[a, b]` or `- ` lines)"),
        (&["a map"], "a mapping (`key: value` lines)"),
    ];
    let mut text = message.to_string();
    if let Some(at) = text.find(", expected ") {
        let start = at + ", expected ".len();
        let said = &text[start..];
        let plain = PLAIN.iter().find_map(|(words, plain)| {
            words
                .iter()
                .find(|w| {
                    said.strip_prefix(**w)
                        .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric()))
                })
                .map(|w| (w.len(), *plain))
        });
        let plain = plain.or_else(|| {
            // `struct Timeouts` is a section of keys.
            said.strip_prefix("struct ").map(|rest| {
                let name = rest
                    .split(|c: char| !c.is_alphanumeric())
                    .next()
                    .unwrap_or("");
                (
                    "struct ".len() + name.len(),
                    "a mapping (`key: value` lines)",
                )
            })
        });
        if let Some((len, plain)) = plain {
            text.replace_range(start..start + len, plain);
        }
    }
    if let Some((_, rest)) = text.split_once("unknown field `") {
        let key = rest.split('`').next().unwrap_or("");
        let allowed: Vec<&str> = rest
            .split_once("expected")
            .map(|(_, list)| list.split('`').skip(1).step_by(2).collect())
            .unwrap_or_default();
        if let Some(near) = crate::spelling::closest(key, &allowed) {
            text = format!("{text} (did you mean `{near}`?)");
        }
    }
    text
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
    fn serde_types_are_said_in_plain_words() {
        assert_eq!(
            plain_words("agent.max_steps: invalid type: string \"lots\", expected usize"),
            "agent.max_steps: invalid type: string \"lots\", expected a whole number ≥ 0"
        );
        assert_eq!(
            plain_words("llm.timeouts: invalid type: integer `3`, expected struct Timeouts"),
            "llm.timeouts: invalid type: integer `3`, expected a mapping (`key: value` lines)"
        );
        assert_eq!(
            plain_words("x: invalid type: string \"y\", expected a string"),
            "x: invalid type: string \"y\", expected a string"
        );
    }

    #[test]
    fn an_unknown_key_close_to_a_known_one_gets_a_hint() {
        let said = plain_words(
            "agent: unknown field `max_step`, expected one of `max_steps`, `approve`, `language`",
        );
        assert!(said.ends_with("(did you mean `max_steps`?)"), "{said}");
        let far = plain_words("unknown field `zzz`, expected one of `max_steps`, `approve`");
        assert!(!far.contains("did you mean"), "{far}");
    }

    #[test]
    fn an_alias_bomb_is_placed_at_its_first_alias() {
        let bomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n\
                    c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n\
                    e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n\
                    g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n";
        let error = serde_yaml::from_str::<serde_yaml::Value>(bomb).expect_err("a bomb");
        let problem = YamlError::parsing_text(Path::new("bomb.yaml"), &error, bomb, (0, 0));
        assert_eq!((problem.line, problem.column), (2, 8), "{problem}");
        assert!(
            problem.to_string().starts_with("bomb.yaml:2:8: "),
            "{problem}"
        );
    }

    #[test]
    fn a_file_over_the_limit_is_refused_before_it_is_read() {
        let file = std::env::temp_dir().join(format!("webagent-big-{}.yaml", std::process::id()));
        let handle = std::fs::File::create(&file).expect("created");
        handle.set_len(MAX_YAML_BYTES + 1).expect("sized");
        let said = read_text(&file).expect_err("too big").to_string();
        assert!(said.contains("over the 4194304 bytes"), "{said}");
        let _ = std::fs::remove_file(&file);
    }

    #[test]
    fn a_file_that_is_not_utf8_is_refused_where_it_stops_being_text() {
        let file =
            std::env::temp_dir().join(format!("webagent-latin1-{}.yaml", std::process::id()));
        std::fs::write(&file, b"title: Shop\nnotes: caf\xe9\n").expect("written");
        let error = read_text(&file).expect_err("not UTF-8");
        let said = error.to_string();
        assert!(
            said.starts_with(&format!("{}:2:11: not UTF-8", file.display())),
            "{said}"
        );
        let _ = std::fs::remove_file(&file);
    }

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
