//! Where a command's words go: straight to the terminal for a one-shot
//! command, or kept for a session's client to print, so a session process
//! runs the very code the one-shot command runs.

/// A command's stdout and stderr.
#[derive(Debug)]
pub enum Output {
    /// Printed as they come.
    Console,
    /// Kept to be sent back whole.
    Kept {
        /// What goes to stdout.
        stdout: String,
        /// What goes to stderr.
        stderr: String,
    },
}

impl Output {
    /// An output that keeps what is said.
    pub fn kept() -> Output {
        Output::Kept {
            stdout: String::new(),
            stderr: String::new(),
        }
    }

    /// Says `text` on stdout (the caller ends lines itself).
    pub fn out(&mut self, text: &str) {
        match self {
            Output::Console => print!("{text}"),
            Output::Kept { stdout, .. } => stdout.push_str(text),
        }
    }

    /// Says `text` and a line end on stdout.
    pub fn line(&mut self, text: &str) {
        self.out(text);
        self.out("\n");
    }

    /// Says `text` and a line end on stderr.
    pub fn err(&mut self, text: &str) {
        match self {
            Output::Console => eprintln!("{text}"),
            Output::Kept { stderr, .. } => {
                stderr.push_str(text);
                stderr.push('\n');
            }
        }
    }

    /// What was kept: (stdout, stderr); empty for the console.
    pub fn into_parts(self) -> (String, String) {
        match self {
            Output::Console => (String::new(), String::new()),
            Output::Kept { stdout, stderr } => (stdout, stderr),
        }
    }
}
