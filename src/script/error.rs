//! [`ScriptError`]: everything that can go wrong loading or running a
//! script, and [`Located`], the place in a script it names. The engine's
//! and the parser's own errors become these here, so every part of the
//! sandbox reports the same way.

use std::path::PathBuf;

use rhai::{EvalAltResult, Position};

use super::bounds;
use super::bounds::Limits;

/// A place in a script: file, 1-based line and column, and what happened
/// there. Displays as `FILE:LINE:COLUMN: message`, then, when the line's
/// text is known, the line and a caret under the column:
///
/// ```text
/// recipes/first.rhai:7:5: fill takes fill(target, text); it was called with 1 argument (a string)
///   7 |     fill("#email");
///     |     ^
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The script file (or `<script>` for code without a file).
    pub file: String,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// 1-based column (0 when unknown).
    pub column: usize,
    /// What went wrong.
    pub message: String,
    /// The text of the line, when the script's source is at hand.
    pub source: Option<String>,
}

impl Located {
    /// `message` at `pos` in `file`, with the line's text when the file is
    /// one the running call loaded.
    pub(crate) fn at(file: &str, pos: Position, message: String) -> Located {
        let mut located = Located {
            file: file.to_string(),
            line: pos.line().unwrap_or(0),
            column: pos.position().unwrap_or(0),
            message,
            source: None,
        };
        if let Some(text) = super::calls::loaded_source(file) {
            located.fill_source(&text);
        }
        located
    }

    /// Takes the line's text from `text`, the whole file.
    pub(crate) fn fill_source(&mut self, text: &str) {
        if self.source.is_none() && self.line > 0 {
            self.source = text.lines().nth(self.line - 1).map(str::to_string);
        }
    }
}

impl std::fmt::Display for Located {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            // No place in the file: the file alone.
            return write!(f, "{}: {}", self.file, self.message);
        }
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )?;
        let Some(source) = &self.source else {
            return Ok(());
        };
        let number = self.line.to_string();
        let gutter = " ".repeat(number.len());
        write!(f, "\n  {number} | {source}")?;
        if self.column > 0 {
            // Tabs stay tabs so the caret lines up however they are shown.
            let pad: String = source
                .chars()
                .take(self.column - 1)
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            write!(f, "\n  {gutter} | {pad}^")?;
        }
        Ok(())
    }
}

/// Everything that can go wrong loading or running a script.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ScriptError {
    /// The file is not there.
    #[error("{}: no such file; check the path", path.display())]
    Missing {
        /// The file as given.
        path: PathBuf,
    },
    /// The file could not be read.
    #[error("could not read {}: {message}; check the path and its permissions", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        message: String,
    },
    /// The file does not parse.
    #[error("{0}")]
    Compile(Located),
    /// The script failed while running (including a failed `assert`).
    #[error("{0}")]
    Runtime(Located),
    /// The script hit a sandbox limit (operations, call depth, sizes).
    #[error("{0}")]
    Limit(Located),
    /// The script was cancelled (by the person or the run's stop).
    #[error("the script was cancelled")]
    Cancelled,
    /// The script ran past its time limit (a custom action's, or a
    /// `sleep` longer than one action may take).
    #[error("{0}")]
    TimedOut(Located),
    /// An `action(...)` or `recipe(...)` declaration is wrong.
    #[error("{0}")]
    Definition(Located),
    /// The parameters given do not fit what the recipe declares (unknown
    /// names, wrong types, a required one missing).
    #[error("{message}")]
    Params {
        /// The recipe.
        recipe: String,
        /// Every problem, and the names and types the recipe takes.
        message: String,
    },
    /// No recipe or action of that name is loaded.
    #[error("no {kind} named `{name}` is loaded; available: {}", if available.is_empty() { "none".to_string() } else { available.join(", ") })]
    UnknownEntry {
        /// `recipe` or `action`.
        kind: &'static str,
        /// The name asked for.
        name: String,
        /// The names that are loaded.
        available: Vec<String>,
    },
    /// The script thread could not start or went away.
    #[error("the script thread failed: {0}")]
    Thread(String),
}

impl ScriptError {
    /// Takes the source line of an error in `file` from `text`, the
    /// file's whole source.
    pub(crate) fn with_source(mut self, file: &str, text: &str) -> ScriptError {
        if let Some(located) = self.located_mut() {
            if located.file == file {
                located.fill_source(text);
            }
        }
        self
    }

    fn located_mut(&mut self) -> Option<&mut Located> {
        match self {
            ScriptError::Compile(l)
            | ScriptError::Runtime(l)
            | ScriptError::Limit(l)
            | ScriptError::TimedOut(l)
            | ScriptError::Definition(l) => Some(l),
            _ => None,
        }
    }

    /// The location of the error, when it has one.
    pub fn located(&self) -> Option<&Located> {
        match self {
            ScriptError::Compile(l)
            | ScriptError::Runtime(l)
            | ScriptError::Limit(l)
            | ScriptError::TimedOut(l)
            | ScriptError::Definition(l) => Some(l),
            _ => None,
        }
    }
}

/// Turns an engine error into a located [`ScriptError`], following nested
/// function calls to where it happened.
pub(crate) fn script_error(error: &EvalAltResult, file: &str) -> ScriptError {
    let mut source = file.to_string();
    let mut current = error;
    // Where the nearest enclosing call was made: some errors (an operation
    // limit hit between statements) carry no position of their own.
    let mut outer = (source.clone(), Position::NONE);
    while let EvalAltResult::ErrorInFunctionCall(_, src, inner, pos) = current {
        if !pos.is_none() {
            outer = (source.clone(), *pos);
        }
        if !src.is_empty() {
            source = src.clone();
        }
        current = inner;
    }
    let mut pos = current.position();
    if pos.is_none() && !outer.1.is_none() {
        (source, pos) = outer;
    }
    // Rhai reports its own limits (and a stop) at the outermost call,
    // which has no place when the host called the function: the last
    // place the script ran at is where it happened.
    if pos.is_none() {
        if let Some((file, place)) = bounds::last_place() {
            if !file.is_empty() {
                source = file;
            }
            pos = place;
        }
    }
    let located = |message: String| Located::at(&source, pos, message);
    let limits = bounds::limits();
    match current {
        EvalAltResult::ErrorTerminated(token, _) => match bounds::time_limit_message(token) {
            Some(message) => ScriptError::TimedOut(located(message)),
            None => ScriptError::Cancelled,
        },
        EvalAltResult::ErrorTooManyOperations(_) => ScriptError::Limit(located(format!(
            "script limit: too many operations (more than {}; an endless loop?)",
            limits.operations
        ))),
        EvalAltResult::ErrorStackOverflow(_) => ScriptError::Limit(located(format!(
            "script limit: functions nested too deeply (more than {} calls; endless recursion?)",
            limits.call_depth
        ))),
        EvalAltResult::ErrorDataTooLarge(what, _) => {
            ScriptError::Limit(located(too_large(what, &limits)))
        }
        EvalAltResult::ErrorTooManyVariables(_) => ScriptError::Limit(located(format!(
            "script limit: too many variables (more than {})",
            limits.variables
        ))),
        EvalAltResult::ErrorRuntime(value, _) => ScriptError::Runtime(located(value.to_string())),
        EvalAltResult::ErrorFunctionNotFound(call, _) => {
            ScriptError::Runtime(located(super::api::not_found_message(call)))
        }
        other => {
            let mut text = other.to_string();
            if let Some(at) = text.rfind(" (line ") {
                text.truncate(at);
            }
            ScriptError::Runtime(located(text))
        }
    }
}

/// A size limit Rhai hit, with the limit. Nested items count: a map
/// inside a map is one entry more, which is what bounds how deeply a
/// script can nest values.
fn too_large(what: &str, limits: &Limits) -> String {
    match what {
        "Length of string" => format!(
            "script limit: a string is longer than {} bytes",
            limits.string_bytes
        ),
        "Size of array/BLOB" => format!(
            "script limit: an array holds more than {} items, nested ones counted",
            limits.array_items
        ),
        "Size of object map" => format!(
            "script limit: a map holds more than {} entries, nested ones counted",
            limits.map_entries
        ),
        other => format!("script limit: {other} is too large"),
    }
}

/// Turns a parse error into a located [`ScriptError`].
pub(crate) fn parse_error(error: &rhai::ParseError, file: &str) -> ScriptError {
    ScriptError::Compile(Located::at(
        file,
        error.position(),
        error.err_type().to_string(),
    ))
}
