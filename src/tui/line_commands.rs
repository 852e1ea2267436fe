//! The workbench's own `:` commands, in one table: the command line finds
//! a command here before it reads the line as an action of the catalog,
//! completion offers these names, and help lists them, so a command and
//! its description cannot drift apart.

/// A command of the workbench on the `:` line (every other first word
/// names an action of the catalog).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineCommand {
    /// Run a loaded recipe.
    Recipe,
    /// Start a fresh conversation.
    New,
    /// Open the past sessions.
    Sessions,
    /// Continue a run from its trace.
    Resume,
    /// Save cookies and storage to a state file.
    State,
    /// Write the session (or the past one on screen) as a named recipe.
    Export,
    /// Record what the person does on the page into a recipe.
    Record,
    /// Step through a loaded recipe under the debugger.
    Debug,
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineCommandSpec {
    /// Which command.
    pub command: LineCommand,
    /// Its words up to the arguments (`state save`).
    pub name: &'static str,
    /// Its arguments as written in help: `NAME [PARAM=VALUE]…`.
    pub args: &'static str,
    /// What it does, for help.
    pub about: &'static str,
}

impl LineCommandSpec {
    /// The command with its arguments: `resume [TRACE]`.
    pub fn usage(&self) -> String {
        if self.args.is_empty() {
            self.name.to_string()
        } else {
            format!("{} {}", self.name, self.args)
        }
    }

    /// The first word, which names it on the line and in completion.
    pub fn word(&self) -> &'static str {
        self.name.split(' ').next().unwrap_or(self.name)
    }
}

/// Every workbench command, in help order.
pub const LINE_COMMANDS: &[LineCommandSpec] = &[
    LineCommandSpec {
        command: LineCommand::Recipe,
        name: "recipe",
        args: "NAME [PARAM=VALUE]…",
        about: "run a loaded recipe with its parameters (R lists them)",
    },
    LineCommandSpec {
        command: LineCommand::New,
        name: "new",
        args: "",
        about: "a fresh conversation: the next task forgets the earlier ones (N)",
    },
    LineCommandSpec {
        command: LineCommand::Sessions,
        name: "sessions",
        args: "",
        about: "past sessions: list, search, replay, resume (S)",
    },
    LineCommandSpec {
        command: LineCommand::Resume,
        name: "resume",
        args: "[TRACE]",
        about: "continue a run from its trace (default: the latest unfinished run)",
    },
    LineCommandSpec {
        command: LineCommand::State,
        name: "state save",
        args: "[FILE]",
        about: "save cookies and storage (default: the --state file)",
    },
    LineCommandSpec {
        command: LineCommand::Export,
        name: "export",
        args: "NAME",
        about:
            "write the session (or the past one shown) as the recipe NAME in recipes/NAME.rhai (E)",
    },
    LineCommandSpec {
        command: LineCommand::Record,
        name: "record",
        args: "[NAME] | stop | undo | goal N TEXT | rename OLD NEW",
        about:
            "record what you do on the page into the recipe NAME, shown as it grows; stop saves it",
    },
    LineCommandSpec {
        command: LineCommand::Debug,
        name: "debug",
        args: "NAME [PARAM=VALUE]…",
        about: "step through a loaded recipe: breakpoints, steps, variables, the page at each stop",
    },
];

/// The workbench command a line starts with, and the words after that
/// first word; `None` when the first word names no workbench command.
pub fn find_line_command(line: &str) -> Option<(&'static LineCommandSpec, &str)> {
    let line = line.trim_start();
    let end = line.find(char::is_whitespace).unwrap_or(line.len());
    let (word, rest) = line.split_at(end);
    LINE_COMMANDS
        .iter()
        .find(|spec| spec.word() == word)
        .map(|spec| (spec, rest.trim()))
}

#[cfg(test)]
mod tests {
    use super::{find_line_command, LineCommand};

    #[test]
    fn a_line_is_a_workbench_command_by_its_first_word_only() {
        let (spec, rest) = find_line_command(" recipe new_order quantity=2").expect("recipe");
        assert_eq!(
            (spec.command, rest),
            (LineCommand::Recipe, "new_order quantity=2")
        );
        let (spec, rest) = find_line_command("state save out.json").expect("state");
        assert_eq!((spec.command, rest), (LineCommand::State, "save out.json"));
        assert_eq!(spec.usage(), "state save [FILE]");
        assert!(find_line_command("recipes").is_none());
        assert!(find_line_command("click 3").is_none());
    }
}
