//! What keys are made of: where a key is pressed ([`KeyContext`]), what it
//! does ([`Command`]), a binding with its help words ([`Binding`]), and the
//! table that looks keys up ([`Keymap`]).
//!
//! These types sit below the panes: each pane declares its own bindings
//! with them (gitui's `commands()`), and the state holds the table.
//! Gathering the panes' bindings into the default table happens above the
//! panes, in `keymap.rs`, so no pane and no state imports that file.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// Where a key is pressed: a pane with the focus, a text field, or a modal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyContext {
    /// Wherever the person is, text fields included.
    Anywhere,
    /// Any pane (not a text field or modal).
    Global,
    /// The element listing.
    Elements,
    /// The reflection of the current step.
    Reflection,
    /// The action log.
    Log,
    /// The sitemap tree.
    Sitemap,
    /// The task input.
    Task,
    /// The `:` command line.
    CommandLine,
    /// The approval modal.
    Approval,
    /// Editing an action's parameters in the approval modal.
    ApprovalEdit,
    /// Writing the note that goes with a refusal.
    ApprovalNote,
    /// Choosing another element for the action awaiting approval.
    Picking,
    /// The answer box of `ask_user`.
    AskUser,
    /// The step inspector.
    Inspector,
    /// One element of the listing in full.
    ElementDetail,
    /// This help.
    Help,
    /// The list of past sessions.
    Sessions,
    /// Typing a search over the past sessions.
    SessionSearch,
    /// A past session shown in the panes (over the panes' own keys).
    Replay,
    /// A recipe under the debugger (over the panes' own keys).
    Debug,
}

impl KeyContext {
    /// The heading in the help popup.
    pub fn title(self) -> &'static str {
        match self {
            KeyContext::Anywhere => "Anywhere",
            KeyContext::Global => "Panes",
            KeyContext::Elements => "Elements",
            KeyContext::Reflection => "Reflection",
            KeyContext::Log => "Action log",
            KeyContext::Sitemap => "Sitemap",
            KeyContext::Task => "Task input",
            KeyContext::CommandLine => "Command line",
            KeyContext::Approval => "Approval",
            KeyContext::ApprovalEdit => "Editing parameters",
            KeyContext::ApprovalNote => "Refusing with a note",
            KeyContext::Picking => "Picking an element",
            KeyContext::AskUser => "Answering the model",
            KeyContext::Inspector => "Step inspector",
            KeyContext::ElementDetail => "Element in full",
            KeyContext::Help => "Help",
            KeyContext::Sessions => "Past sessions",
            KeyContext::SessionSearch => "Searching past sessions",
            KeyContext::Replay => "A past session, in the panes",
            KeyContext::Debug => "Debugging a recipe (:debug)",
        }
    }

    /// Whether typing in this context edits text (so plain letters are
    /// text, not commands, and pane keys do not apply).
    pub fn takes_text(self) -> bool {
        matches!(
            self,
            KeyContext::Task
                | KeyContext::CommandLine
                | KeyContext::ApprovalEdit
                | KeyContext::ApprovalNote
                | KeyContext::AskUser
                | KeyContext::SessionSearch
        )
    }

    /// Whether pane-wide keys (quit, focus, help) apply here.
    pub fn has_pane_keys(self) -> bool {
        matches!(
            self,
            KeyContext::Elements | KeyContext::Reflection | KeyContext::Log | KeyContext::Sitemap
        )
    }
}

/// What a key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    /// Leave the workbench.
    Quit,
    /// Open or close the help.
    Help,
    /// Focus the next pane.
    FocusNext,
    /// Focus the previous pane.
    FocusPrev,
    /// Focus the task input.
    FocusTask,
    /// Open the `:` command line.
    CommandLine,
    /// Cycle the approval mode never → risky → always.
    CycleApproval,
    /// Stop the run.
    StopRun,
    /// Pause or resume the run.
    PauseResume,
    /// Hand the page back to the agent after a `hand_over`.
    HandBack,
    /// Switch between the shipped themes.
    NextTheme,
    /// Open the command line on `recipe ` with the loaded recipes listed.
    PickRecipe,
    /// Write the session so far as a recipe file.
    ExportSession,
    /// Show or hide the page pane.
    TogglePage,
    /// Move the cursor up one row.
    Up,
    /// Move the cursor down one row.
    Down,
    /// Up one page.
    PageUp,
    /// Down one page.
    PageDown,
    /// To the first row.
    Top,
    /// To the last row.
    Bottom,
    /// Open the step inspector on the selected log entry, or the selected
    /// element in full.
    Inspect,
    /// The selected element in full with its locators as the page has
    /// them now, each checked, and the recipe line that acts on it.
    PickLocators,
    /// Copy the locator picker's recipe line to the terminal's clipboard.
    CopyLine,
    /// Insert the locator picker's recipe line into the recording (close
    /// the view when nothing is recorded).
    InsertLine,
    /// Pick the assertion of this number (see
    /// [`crate::tui::element_detail::ASSERTIONS`]) on the element the view
    /// shows: into the recording, or onto the clipboard.
    PickAssertion(u8),
    /// Confirm: run the command, start the task, send the answer, use the
    /// picked element.
    Submit,
    /// Leave the field or modal without doing anything.
    Cancel,
    /// Approve the action as proposed.
    Approve,
    /// Edit the action's parameters.
    Edit,
    /// Pick another element from the listing.
    Pick,
    /// Skip this action (the model is told it was denied).
    Skip,
    /// Skip this action, with a note the model reads as the person's.
    SkipWithNote,
    /// Approve, and every later action of the same name this run.
    ApproveName,
    /// Approve, and every later action this run.
    ApproveAll,
    /// Approve a custom action, asking about each of its steps.
    ApproveEachStep,
    /// Complete the action name on the command line.
    Complete,
    /// Start a fresh conversation: the next task forgets the earlier ones.
    NewConversation,
    /// Open the list of past sessions.
    OpenSessions,
    /// Ask the model again for the run's failed step (or, at the
    /// approval, for another proposal).
    RetryStep,
    /// Search the list.
    Search,
    /// Continue a run from its trace.
    Resume,
    /// Run a past session's task again, from its first page.
    RunAgain,
    /// Set or clear a breakpoint on the source pane's cursor line.
    ToggleBreakpoint,
    /// Run the debugged recipe to its next statement, into calls.
    StepInto,
    /// Run it to its next statement in this function or its caller.
    StepOver,
    /// Run it until this function has returned.
    StepOut,
    /// Run it to its next breakpoint.
    ContinueRun,
    /// Run the failed step again.
    RetryFailed,
    /// Go on as if the failed step succeeded.
    SkipFailed,
    /// Stop the debugged recipe and run it again from the top, from its
    /// file as saved.
    Restart,
}

/// One key with its modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyBinding {
    /// The key.
    pub code: KeyCode,
    /// Ctrl, Alt, Shift (Shift is ignored for characters, whose case
    /// already says it).
    pub modifiers: KeyModifiers,
}

impl KeyBinding {
    /// A key without modifiers.
    pub const fn plain(code: KeyCode) -> Self {
        KeyBinding {
            code,
            modifiers: KeyModifiers::NONE,
        }
    }

    /// A character key without modifiers.
    pub const fn char(c: char) -> Self {
        KeyBinding::plain(KeyCode::Char(c))
    }

    /// Ctrl plus a character.
    pub const fn ctrl(c: char) -> Self {
        KeyBinding {
            code: KeyCode::Char(c),
            modifiers: KeyModifiers::CONTROL,
        }
    }

    /// Whether a pressed key is this one.
    pub fn matches(&self, key: &KeyEvent) -> bool {
        let mut mods = key.modifiers;
        if matches!(key.code, KeyCode::Char(_) | KeyCode::BackTab) {
            mods.remove(KeyModifiers::SHIFT);
        }
        let code = match key.code {
            // Terminals differ in reporting Ctrl+letter in upper case.
            KeyCode::Char(c) if mods.contains(KeyModifiers::CONTROL) => {
                KeyCode::Char(c.to_ascii_lowercase())
            }
            other => other,
        };
        code == self.code && mods == self.modifiers
    }

    /// The key as shown in help: `Ctrl+c`, `Tab`, `↓`, `?`.
    pub fn label(&self) -> String {
        let key = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "Shift+Tab".into(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::F(n) => format!("F{n}"),
            other => format!("{other:?}"),
        };
        if self.modifiers.contains(KeyModifiers::CONTROL) {
            format!("Ctrl+{key}")
        } else if self.modifiers.contains(KeyModifiers::ALT) {
            format!("Alt+{key}")
        } else {
            key
        }
    }
}

/// One entry of the keymap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding {
    /// Where it applies.
    pub context: KeyContext,
    /// The key.
    pub key: KeyBinding,
    /// What it does.
    pub command: Command,
    /// What it does, for the help (keys with the same command and words
    /// are listed together).
    pub description: &'static str,
    /// Whether the hint line shows it while this context is active.
    pub hint: bool,
}

impl Binding {
    /// A binding shown in help only.
    pub const fn new(
        context: KeyContext,
        key: KeyBinding,
        command: Command,
        description: &'static str,
    ) -> Self {
        Binding {
            context,
            key,
            command,
            description,
            hint: false,
        }
    }

    /// The same binding, also shown on the hint line.
    pub const fn hinted(mut self) -> Self {
        self.hint = true;
        self
    }
}

/// Cursor keys shared by every scrollable list.
pub const fn list_keys(context: KeyContext) -> [Binding; 10] {
    use KeyCode::{Down, End, Home, PageDown, PageUp, Up};
    [
        Binding::new(context, KeyBinding::char('k'), Command::Up, "up"),
        Binding::new(context, KeyBinding::plain(Up), Command::Up, "up"),
        Binding::new(context, KeyBinding::char('j'), Command::Down, "down"),
        Binding::new(context, KeyBinding::plain(Down), Command::Down, "down"),
        Binding::new(
            context,
            KeyBinding::plain(PageUp),
            Command::PageUp,
            "page up",
        ),
        Binding::new(
            context,
            KeyBinding::plain(PageDown),
            Command::PageDown,
            "page down",
        ),
        Binding::new(context, KeyBinding::char('g'), Command::Top, "first"),
        Binding::new(context, KeyBinding::plain(Home), Command::Top, "first"),
        Binding::new(context, KeyBinding::char('G'), Command::Bottom, "last"),
        Binding::new(context, KeyBinding::plain(End), Command::Bottom, "last"),
    ]
}

/// Keys that work everywhere, and keys shared by all panes.
pub const GLOBAL_KEYS: &[Binding] = &[
    Binding::new(
        KeyContext::Anywhere,
        KeyBinding::ctrl('c'),
        Command::Quit,
        "quit",
    ),
    Binding::new(
        KeyContext::Global,
        KeyBinding::char('q'),
        Command::Quit,
        "quit",
    )
    .hinted(),
    Binding::new(
        KeyContext::Global,
        KeyBinding::char('?'),
        Command::Help,
        "help: every key",
    )
    .hinted(),
    Binding::new(
        KeyContext::Global,
        KeyBinding::plain(KeyCode::Tab),
        Command::FocusNext,
        "next pane",
    )
    .hinted(),
    Binding::new(
        KeyContext::Global,
        KeyBinding::plain(KeyCode::BackTab),
        Command::FocusPrev,
        "previous pane",
    ),
    Binding::new(
        KeyContext::Global,
        KeyBinding::char(':'),
        Command::CommandLine,
        "run an action by hand",
    )
    .hinted(),
    Binding::new(
        KeyContext::Global,
        KeyBinding::char('t'),
        Command::FocusTask,
        "type a task",
    )
    .hinted(),
    Binding::new(
        KeyContext::Global,
        KeyBinding::char('a'),
        Command::CycleApproval,
        "approval mode: never → risky → always",
    )
    .hinted(),
    Binding::new(
        KeyContext::Global,
        KeyBinding::char('p'),
        Command::PauseResume,
        "pause / resume the run",
    ),
    Binding::new(
        KeyContext::Global,
        KeyBinding::char('H'),
        Command::HandBack,
        "hand the page back to the agent after a hand_over",
    ),
    Binding::new(
        KeyContext::Global,
        KeyBinding::char('s'),
        Command::StopRun,
        "stop the run, recipe or script",
    ),
    Binding::new(
        KeyContext::Global,
        KeyBinding::char('R'),
        Command::PickRecipe,
        "run a recipe (:recipe NAME)",
    ),
    Binding::new(
        KeyContext::Global,
        KeyBinding::char('E'),
        Command::ExportSession,
        "export the session as a recipe",
    ),
    Binding::new(
        KeyContext::Global,
        KeyBinding::char('T'),
        Command::NextTheme,
        "switch theme (dark / light)",
    ),
    Binding::new(
        KeyContext::Global,
        KeyBinding::char('v'),
        Command::TogglePage,
        "show / hide the page picture",
    )
    .hinted(),
    Binding::new(
        KeyContext::Global,
        KeyBinding::char('r'),
        Command::RetryStep,
        "ask the model again for the run's failed step",
    ),
    Binding::new(
        KeyContext::Global,
        KeyBinding::char('N'),
        Command::NewConversation,
        "new conversation: the next task forgets the earlier ones (:new)",
    ),
    Binding::new(
        KeyContext::Global,
        KeyBinding::char('S'),
        Command::OpenSessions,
        "past sessions: list, search, replay, resume (:sessions)",
    ),
];

/// The whole keymap: every context's bindings in help order. The default
/// one, every pane's keys, is gathered in `keymap.rs`.
#[derive(Debug, Clone)]
pub struct Keymap {
    bindings: Vec<Binding>,
}

impl Keymap {
    /// A keymap of these bindings, in help order.
    pub fn new(bindings: Vec<Binding>) -> Self {
        Keymap { bindings }
    }

    /// Every binding, in help order.
    pub fn bindings(&self) -> &[Binding] {
        &self.bindings
    }

    /// What `key` does in `context`: the context's own keys first, then
    /// the list keys when picking, then the pane-wide keys, then the keys
    /// that work anywhere.
    pub fn lookup(&self, context: KeyContext, key: &KeyEvent) -> Option<Command> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        let mut order = vec![context];
        if context == KeyContext::Picking {
            order.push(KeyContext::Elements);
        }
        if context.has_pane_keys() {
            order.push(KeyContext::Global);
        }
        order.push(KeyContext::Anywhere);
        order.into_iter().find_map(|ctx| {
            self.bindings
                .iter()
                .find(|b| b.context == ctx && b.key.matches(key))
                .map(|b| b.command)
        })
    }

    /// What `key` does in the first of `layers` that binds it (the last
    /// layer with its usual fallbacks: pane-wide keys, keys that work
    /// anywhere).
    pub fn lookup_layered(&self, layers: &[KeyContext], key: &KeyEvent) -> Option<Command> {
        let (last, over) = layers.split_last()?;
        if key.kind == KeyEventKind::Release {
            return None;
        }
        over.iter()
            .find_map(|ctx| self.bound(*ctx, key))
            .or_else(|| self.lookup(*last, key))
    }

    /// What `key` does in exactly `context`, without fallbacks.
    pub fn bound(&self, context: KeyContext, key: &KeyEvent) -> Option<Command> {
        self.bindings
            .iter()
            .find(|b| b.context == context && b.key.matches(key))
            .map(|b| b.command)
    }

    /// The hints of several layers, the first layer's first.
    pub fn hints_layered(&self, layers: &[KeyContext]) -> Vec<(String, &'static str)> {
        let mut out: Vec<(String, &'static str)> = Vec::new();
        for context in layers {
            for hint in self.hints(*context) {
                if !out.iter().any(|(_, d)| *d == hint.1) {
                    out.push(hint);
                }
            }
        }
        out
    }

    /// The help for one context: (keys, description) rows, keys with the
    /// same command and words joined (`j/↓`).
    pub fn help_rows(&self, context: KeyContext) -> Vec<(String, &'static str)> {
        let mut rows: Vec<(Command, &'static str, Vec<String>)> = Vec::new();
        for b in self.bindings.iter().filter(|b| b.context == context) {
            match rows
                .iter_mut()
                .find(|(c, d, _)| *c == b.command && *d == b.description)
            {
                Some((_, _, keys)) => keys.push(b.key.label()),
                None => rows.push((b.command, b.description, vec![b.key.label()])),
            }
        }
        rows.into_iter()
            .map(|(_, description, keys)| (keys.join("/"), description))
            .collect()
    }

    /// The contexts that have keys, in help order.
    pub fn contexts(&self) -> Vec<KeyContext> {
        let mut seen = Vec::new();
        for b in &self.bindings {
            if !seen.contains(&b.context) {
                seen.push(b.context);
            }
        }
        seen
    }

    /// The short hints for the hint line: the context's hinted keys, then
    /// the hinted pane-wide keys where they apply.
    pub fn hints(&self, context: KeyContext) -> Vec<(String, &'static str)> {
        let mut contexts = vec![context];
        if context.has_pane_keys() {
            contexts.push(KeyContext::Global);
        }
        let mut out: Vec<(String, &'static str)> = Vec::new();
        for ctx in contexts {
            for b in self.bindings.iter().filter(|b| b.context == ctx && b.hint) {
                match out.iter_mut().find(|(_, d)| *d == b.description) {
                    Some((keys, _)) => {
                        keys.push('/');
                        keys.push_str(&b.key.label());
                    }
                    None => out.push((b.key.label(), b.description)),
                }
            }
        }
        out
    }
}
