//! Stepping through a recipe: breakpoints, step into / over / out,
//! continue, the variables in scope, and a failed step that stops instead
//! of ending the recipe.
//!
//! # Built on Rhai's debugger
//!
//! An engine has one debugger callback, and the sandbox already uses it
//! (see `bounds`): it asks Rhai to report every step, so a limit error can
//! name the statement that was running. The recipe debugger decides its
//! stops on that same stream of [`DebuggerEvent`]s rather than switching
//! Rhai's own stepping mode, which would stop the place keeping. Over and
//! out compare the call level Rhai reports (and how deeply custom actions
//! nest, since each is an evaluation of its own), as Rhai's `Next` and
//! `FunctionExit` do.
//!
//! # Threads
//!
//! The recipe runs on its script thread; at a stop that thread blocks on
//! the controller's next [`DebugCommand`] and answers with
//! [`DebugReport`]s. While it waits, the host keeps answering its calls,
//! so a listing at a stop is an ordinary host call.
//!
//! # Failed steps
//!
//! Rhai's debugger cannot run a call again, so a failed step is caught
//! where it fails: a host function's error asks the controller first
//! ([`retrying`]), which may run the same call again (`retry`) or let it
//! return as if it succeeded with no value (`skip`).
//!
//! With no debugger attached, a step costs one thread-local flag read.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashMap};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rhai::debugger::DebuggerEvent;
use rhai::{Dynamic, EvalAltResult, EvalContext, Position};
use serde_json::{Map, Value};

use super::bounds;
use super::calls;
use super::host::HostCall;

/// Why a recipe stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StopReason {
    /// Its first line, before anything ran.
    Entry,
    /// A line with a breakpoint, or the line after `breakpoint()`.
    Breakpoint,
    /// A step ended.
    Step,
    /// A host function failed there; it waits for `retry` or `skip`.
    Failure,
}

/// Where and why a recipe stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct Stop {
    /// The script file.
    pub file: String,
    /// The line (from 1).
    pub line: usize,
    /// The column (from 1).
    pub column: usize,
    /// Why it stopped.
    pub reason: StopReason,
    /// The source line, as written.
    pub source: String,
    /// The failed step's error (on a [`StopReason::Failure`]).
    pub error: Option<String>,
}

/// What the controller asks of a stopped recipe.
#[derive(Debug, Clone, PartialEq)]
pub enum DebugCommand {
    /// Set a breakpoint on a line of the recipe's file.
    Break(usize),
    /// Remove the breakpoint on a line.
    Clear(usize),
    /// Run to the next statement, into called functions.
    StepInto,
    /// Run to the next statement in this function or its caller.
    StepOver,
    /// Run until this function has returned.
    StepOut,
    /// Run to the next breakpoint.
    Continue,
    /// Report the variables in scope.
    Vars,
    /// Report the element listing of the page as it is now.
    Listing,
    /// Run an action by hand (to put the page right before a retry),
    /// through the same approval and policy as the recipe's own steps.
    Act(crate::actions::Action),
    /// Run the failed step again.
    Retry,
    /// Go on as if the failed step succeeded with no value.
    Skip,
    /// Stop the recipe.
    Quit,
}

/// What a recipe reports to its controller.
#[derive(Debug, Clone, PartialEq)]
pub enum DebugReport {
    /// It stopped and waits for a command.
    Stopped(Stop),
    /// The variables in scope at the stop, innermost last (a shadowed
    /// name shows its innermost value).
    Vars(Map<String, Value>),
    /// The element listing the model would see now.
    Listing(String),
    /// What an action run by hand returned (its `{ok, …}` result).
    Acted(Value),
    /// A command could not be done here, and why; the recipe still waits.
    Refused(String),
    /// The recipe logged a line (`log`, `print`, `debug`), in order with
    /// its stops.
    Log(String),
}

/// The recipe's end of a debugging session, handed to
/// [`Scripts::debugged`](super::Scripts::debugged).
#[derive(Clone)]
pub struct Debuggee {
    link: Arc<Link>,
}

impl std::fmt::Debug for Debuggee {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Debuggee")
    }
}

struct Link {
    commands: Mutex<Receiver<DebugCommand>>,
    reports: tokio::sync::mpsc::UnboundedSender<DebugReport>,
}

/// The controller's end: commands go in, reports come out.
#[derive(Debug)]
pub struct DebugController {
    /// Where commands go.
    pub commands: Sender<DebugCommand>,
    /// What the recipe reports.
    pub reports: tokio::sync::mpsc::UnboundedReceiver<DebugReport>,
}

/// A new debugging session's two ends.
pub fn debug_channel() -> (Debuggee, DebugController) {
    let (commands_tx, commands_rx) = std::sync::mpsc::channel();
    let (reports_tx, reports_rx) = tokio::sync::mpsc::unbounded_channel();
    (
        Debuggee {
            link: Arc::new(Link {
                commands: Mutex::new(commands_rx),
                reports: reports_tx,
            }),
        },
        DebugController {
            commands: commands_tx,
            reports: reports_rx,
        },
    )
}

/// How far the recipe runs before it stops again. Levels are
/// `(custom action nesting, Rhai call level)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Into,
    Over((usize, usize)),
    Out((usize, usize)),
    Continue,
}

/// The debugging session on this (script) thread.
struct Session {
    link: Arc<Link>,
    /// The recipe's file: where line breakpoints are.
    file: String,
    breakpoints: BTreeSet<usize>,
    mode: Mode,
    /// The first line has not been reached yet.
    entry: bool,
    /// `breakpoint()` ran: stop at the next statement.
    pending_break: bool,
    /// The stop just left: the rest of its line (nested parts at later
    /// columns) runs without stopping again.
    leaving: Option<(usize, usize)>,
    /// The line of the last node seen.
    last_line: usize,
    /// The variables at the start of the last statement, for a failure's
    /// stop (a host function cannot see the scope).
    vars: Vec<(String, Dynamic)>,
    /// Source lines of the files stopped in, read when first needed.
    sources: HashMap<String, Vec<String>>,
}

/// What a failed step's stop decided.
enum Choice {
    Retry,
    Skip,
    GiveUp,
}

thread_local! {
    /// Whether a session is attached on this thread (read on every step).
    static ATTACHED: Cell<bool> = const { Cell::new(false) };
    static SESSION: RefCell<Option<Session>> = const { RefCell::new(None) };
}

/// How often a stopped recipe looks at the cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// Attaches `debuggee` to this (script) thread for a recipe in `file`;
/// it stops at the first line.
pub(crate) fn attach(debuggee: &Debuggee, file: &str) {
    SESSION.with(|s| {
        *s.borrow_mut() = Some(Session {
            link: debuggee.link.clone(),
            file: file.to_string(),
            breakpoints: BTreeSet::new(),
            mode: Mode::Continue,
            entry: true,
            pending_break: false,
            leaving: None,
            last_line: 0,
            vars: Vec::new(),
            sources: HashMap::new(),
        });
    });
    ATTACHED.with(|a| a.set(true));
}

/// Detaches the session from this thread.
pub(crate) fn detach() {
    ATTACHED.with(|a| a.set(false));
    SESSION.with(|s| s.borrow_mut().take());
}

fn attached() -> bool {
    ATTACHED.with(Cell::get)
}

/// Passes a script's log line to the controller, so it reads in order
/// with the stops.
pub(crate) fn log(text: &str) {
    if attached() {
        with_session(|s| {
            let _ = s.link.reports.send(DebugReport::Log(text.to_string()));
        });
    }
}

/// `breakpoint()`: stop at the next statement when a debugger is
/// attached; nothing otherwise.
pub(crate) fn pause_here() {
    if attached() {
        with_session(|s| s.pending_break = true);
    }
}

fn with_session<T>(f: impl FnOnce(&mut Session) -> T) -> Option<T> {
    SESSION.with(|s| s.borrow_mut().as_mut().map(f))
}

/// Called by the engine's debugger callback for every node Rhai reports:
/// stops there when the session's mode, a breakpoint or the entry says
/// so, and waits for the controller.
pub(crate) fn on_node(
    context: &EvalContext,
    event: &DebuggerEvent,
    node: &dyn std::fmt::Debug,
    is_stmt: bool,
    source: Option<&str>,
    pos: Position,
) -> Result<(), Box<EvalAltResult>> {
    if !attached() || !matches!(event, DebuggerEvent::Step | DebuggerEvent::Start) {
        return Ok(());
    }
    let Some(line) = pos.line() else {
        return Ok(());
    };
    let column = pos.position().unwrap_or(0);
    let level = (calls::action_depth(), context.call_level());
    let stop = with_session(|session| {
        let new_line = line != session.last_line;
        session.last_line = line;
        // A statement, or an expression that begins a line (a method
        // call written as a statement, which Rhai reports as one).
        if !is_stmt && !new_line {
            return None;
        }
        if let Some((at_line, at_column)) = session.leaving {
            if line == at_line && column > at_column {
                return None;
            }
            session.leaving = None;
        }
        session.vars = context
            .scope()
            .iter()
            .map(|(name, _, value)| (name.to_string(), value))
            .collect();
        let in_recipe = source.is_none_or(|s| s == session.file);
        let reason = if session.entry {
            StopReason::Entry
        } else if session.pending_break || (in_recipe && session.breakpoints.contains(&line)) {
            StopReason::Breakpoint
        } else {
            match session.mode {
                Mode::Into => StopReason::Step,
                Mode::Over(at) if level <= at => StopReason::Step,
                Mode::Out(at) if level < at => StopReason::Step,
                _ => return None,
            }
        };
        // Rhai reports entering a function (an empty statement at its
        // body's `{`) and a block before their first statement, which is
        // the place to stop.
        if opens_a_body(node) {
            return None;
        }
        let file = source.unwrap_or(&session.file).to_string();
        session.entry = false;
        session.pending_break = false;
        Some(session.stop_at(file, line, column, reason, None))
    })
    .flatten();
    let Some(stop) = stop else {
        return Ok(());
    };
    let vars = || render_vars(context.scope().iter().map(|(n, _, v)| (n.to_string(), v)));
    match wait(stop, vars, pos)? {
        Waited::Go(mode) => {
            with_session(|s| {
                s.mode = match mode {
                    DebugCommand::StepOver => Mode::Over(level),
                    DebugCommand::StepOut => Mode::Out(level),
                    DebugCommand::StepInto => Mode::Into,
                    _ => Mode::Continue,
                };
                s.leaving = Some((line, column));
            });
            Ok(())
        }
        Waited::Failed(_) => Ok(()),
    }
}

impl Session {
    fn stop_at(
        &mut self,
        file: String,
        line: usize,
        column: usize,
        reason: StopReason,
        error: Option<String>,
    ) -> Stop {
        let source = self.line_of(&file, line).to_string();
        Stop {
            file,
            line,
            column,
            reason,
            source,
            error,
        }
    }

    /// The lines of `file`, read when first needed (none for code that
    /// has no file).
    fn lines(&mut self, file: &str) -> &[String] {
        self.sources.entry(file.to_string()).or_insert_with(|| {
            std::fs::read_to_string(file)
                .map(|text| text.lines().map(str::to_string).collect())
                .unwrap_or_default()
        })
    }

    /// Line `line` (from 1) of `file`, or nothing.
    fn line_of(&mut self, file: &str, line: usize) -> &str {
        self.lines(file)
            .get(line.wrapping_sub(1))
            .map_or("", String::as_str)
    }

    /// Why `line` cannot hold a breakpoint, if it cannot.
    fn check_line(&mut self, line: usize) -> Option<String> {
        let file = self.file.clone();
        let count = self.lines(&file).len();
        if line == 0 {
            Some("lines are numbered from 1".to_string())
        } else if count > 0 && line > count {
            Some(format!("{file} has {count} lines; there is no line {line}"))
        } else {
            None
        }
    }
}

/// How a stop ended.
enum Waited {
    /// Run on (step, next, out, continue).
    Go(DebugCommand),
    /// On a failed step: what to do with it.
    Failed(Choice),
}

/// Reports `stop` and answers commands until one runs the recipe on.
fn wait(
    stop: Stop,
    vars: impl Fn() -> Map<String, Value>,
    pos: Position,
) -> Result<Waited, Box<EvalAltResult>> {
    let failure = stop.reason == StopReason::Failure;
    let reason = stop.reason;
    let Some(link) = with_session(|s| s.link.clone()) else {
        return Ok(Waited::Go(DebugCommand::Continue));
    };
    let report = |report: DebugReport| {
        let _ = link.reports.send(report);
    };
    report(DebugReport::Stopped(stop));
    let commands = match link.commands.lock() {
        Ok(commands) => commands,
        Err(poisoned) => poisoned.into_inner(),
    };
    let quit = || -> Box<EvalAltResult> {
        EvalAltResult::ErrorTerminated(Dynamic::from(bounds::CANCELLED), pos).into()
    };
    loop {
        let command = match commands.recv_timeout(CANCEL_POLL) {
            Ok(command) => command,
            Err(RecvTimeoutError::Timeout) if calls::cancelled() => return Err(quit()),
            Err(RecvTimeoutError::Timeout) => continue,
            // Nobody is left to answer: the recipe ends as if stopped.
            Err(RecvTimeoutError::Disconnected) => return Err(quit()),
        };
        match command {
            DebugCommand::Break(line) => {
                let refused = with_session(|s| {
                    let why = s.check_line(line);
                    if why.is_none() {
                        s.breakpoints.insert(line);
                    }
                    why
                })
                .flatten();
                if let Some(why) = refused {
                    report(DebugReport::Refused(why));
                }
            }
            DebugCommand::Clear(line) => {
                with_session(|s| s.breakpoints.remove(&line));
            }
            DebugCommand::Vars => report(DebugReport::Vars(vars())),
            DebugCommand::Listing => match calls::host_call(HostCall::Listing, pos) {
                Ok(Value::String(text)) => report(DebugReport::Listing(text)),
                Ok(other) => report(DebugReport::Listing(other.to_string())),
                Err(error) => report(DebugReport::Refused(format!(
                    "the page could not be listed: {}",
                    message(&error)
                ))),
            },
            DebugCommand::Act(action) => match calls::host_call(HostCall::Act(action), pos) {
                Ok(result) => report(DebugReport::Acted(result)),
                Err(error) => report(DebugReport::Refused(format!(
                    "the action could not run: {}",
                    message(&error)
                ))),
            },
            DebugCommand::Retry | DebugCommand::Skip if !failure => {
                report(DebugReport::Refused(format!(
                    "retry and skip answer a failed step; this stop is a {} stop",
                    serde_json::to_value(reason)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default()
                )));
            }
            DebugCommand::Retry => return Ok(Waited::Failed(Choice::Retry)),
            DebugCommand::Skip => return Ok(Waited::Failed(Choice::Skip)),
            DebugCommand::Quit => return Err(quit()),
            go if failure => {
                // Running on from a failed step lets its error end the
                // recipe, after setting how far a caught error would go.
                with_session(|s| {
                    s.mode = match go {
                        DebugCommand::StepInto => Mode::Into,
                        _ => Mode::Continue,
                    }
                });
                return Ok(Waited::Failed(Choice::GiveUp));
            }
            go => return Ok(Waited::Go(go)),
        }
    }
}

/// Runs a host function's `call`; when it fails with a debugger attached,
/// stops on it with its error and does what the controller says: run it
/// again, return as if it succeeded with no value, or let the error end
/// the recipe.
pub(crate) fn retrying<T: Default>(
    pos: Position,
    mut call: impl FnMut() -> Result<T, Box<EvalAltResult>>,
) -> Result<T, Box<EvalAltResult>> {
    loop {
        let error = match call() {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        if !attached() || matches!(*error, EvalAltResult::ErrorTerminated(..)) {
            return Err(error);
        }
        let file = bounds::last_place()
            .map(|(file, _)| file)
            .filter(|file| !file.is_empty());
        let Some((stop, vars)) = with_session(|s| {
            let file = file.unwrap_or_else(|| s.file.clone());
            let stop = s.stop_at(
                file,
                pos.line().unwrap_or(0),
                pos.position().unwrap_or(0),
                StopReason::Failure,
                Some(message(&error)),
            );
            (stop, render_vars(s.vars.iter().cloned()))
        }) else {
            return Err(error);
        };
        match wait(stop, || vars.clone(), pos)? {
            Waited::Failed(Choice::Retry) => continue,
            Waited::Failed(Choice::Skip) => return Ok(T::default()),
            Waited::Failed(Choice::GiveUp) | Waited::Go(_) => return Err(error),
        }
    }
}

/// Whether `node` is an empty statement or a block: what Rhai reports on
/// entering a function or a `{ … }`. Only the start of its debug text is
/// written (the type is Rhai's internals, not matched from outside).
fn opens_a_body(node: &dyn std::fmt::Debug) -> bool {
    /// Keeps the first bytes written and refuses the rest.
    struct Head(String);
    impl std::fmt::Write for Head {
        fn write_str(&mut self, text: &str) -> std::fmt::Result {
            let room = 16usize.saturating_sub(self.0.len());
            let end = text
                .char_indices()
                .map(|(i, c)| i + c.len_utf8())
                .take_while(|end| *end <= room)
                .last()
                .unwrap_or(0);
            self.0.push_str(&text[..end]);
            if end < text.len() {
                Err(std::fmt::Error)
            } else {
                Ok(())
            }
        }
    }
    let mut head = Head(String::new());
    // The error only says the head is full.
    let _ = std::fmt::write(&mut head, format_args!("{node:?}"));
    head.0.starts_with("Stmt(Noop(") || head.0.starts_with("Stmt(Block(")
}

/// A script error's message, as the script's author reads it.
fn message(error: &EvalAltResult) -> String {
    match error {
        EvalAltResult::ErrorRuntime(value, _) => value.to_string(),
        other => other.to_string(),
    }
}

/// Variables as JSON, the innermost of a shadowed name winning; a value
/// JSON cannot hold (a function pointer) is shown as Rhai prints it.
fn render_vars(vars: impl Iterator<Item = (String, Dynamic)>) -> Map<String, Value> {
    let depth = bounds::limits().value_depth;
    let mut out = Map::new();
    for (name, value) in vars {
        let json = if bounds::deeper_than(&value, depth) {
            Value::String(format!("(nested more than {depth} deep)"))
        } else {
            rhai::serde::from_dynamic::<Value>(&value)
                .unwrap_or_else(|_| Value::String(value.to_string()))
        };
        out.insert(name, json);
    }
    out
}

/// Installs the engine's one debugger hook: each statement's place is
/// kept for limit errors, and the recipe debugger, when one is attached,
/// stops on the same steps.
pub(crate) fn install_hook(engine: &mut rhai::Engine) {
    // The debugger interface is the only hook Rhai gives into every step;
    // it is marked volatile, not deprecated.
    #[allow(deprecated)]
    engine.register_debugger(
        |_, debugger| debugger,
        |context, event, node, source, pos| {
            // A function's end is reported as the error that ends it
            // climbs out: the place where it began is the one to keep.
            // Statements only, so a limit points at the statement that
            // was running rather than at whichever operand came last.
            if matches!(event, DebuggerEvent::Step | DebuggerEvent::Start)
                && matches!(node, rhai::ASTNode::Stmt(_))
            {
                bounds::keep_place(source, pos);
            }
            on_node(&context, &event, &node, node.is_stmt(), source, pos)?;
            Ok(rhai::debugger::DebuggerCommand::StepInto)
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::{CancelFlag, HostError, ScriptHost, Scripts};

    /// Answers every host call with nothing (a log line, a listing).
    struct Quiet;

    impl ScriptHost for Quiet {
        async fn handle(&mut self, call: HostCall) -> Result<Value, HostError> {
            Ok(match call {
                HostCall::Listing => Value::String("[0]<button>Go</button>".into()),
                _ => Value::Null,
            })
        }
    }

    const RECIPE: &str = r#"recipe("main", "steps");
fn helper(x) {
    let y = x + 1;
    y * 2
}
fn main() {
    let a = 1;
    let b = helper(a);
    breakpoint();
    let c = b + 1;
    assert(c == 100, "c is not 100");
    log(`c is ${c}`);
    c
}
"#;

    /// Runs `RECIPE` under the debugger on a thread of its own; the
    /// controller and what the run returned.
    fn debugging(
        name: &str,
    ) -> (
        DebugController,
        std::thread::JoinHandle<Result<Value, String>>,
    ) {
        let path =
            std::env::temp_dir().join(format!("webagent-debug-{name}-{}.rhai", std::process::id()));
        std::fs::write(&path, RECIPE).expect("the recipe is written");
        let scripts = Scripts::default();
        scripts.load_file(&path).expect("the recipe loads");
        let (debuggee, controller) = debug_channel();
        let scripts = scripts.debugged(debuggee);
        let run = std::thread::spawn(move || {
            let runtime = crate::session::runtime().expect("a runtime");
            let out = runtime
                .block_on(scripts.run_recipe(Some("main"), &mut Quiet, &CancelFlag::new()))
                .map_err(|e| e.to_string());
            let _ = std::fs::remove_file(&path);
            out
        });
        (controller, run)
    }

    /// The next report.
    fn next(controller: &mut DebugController) -> DebugReport {
        controller
            .reports
            .blocking_recv()
            .expect("the recipe reports")
    }

    /// Sends `command` and reads the stop it runs to: (line, reason).
    fn go(controller: &mut DebugController, command: DebugCommand) -> (usize, StopReason) {
        controller
            .commands
            .send(command)
            .expect("the recipe listens");
        match next(controller) {
            DebugReport::Stopped(stop) => (stop.line, stop.reason),
            other => panic!("expected a stop, got {other:?}"),
        }
    }

    #[test]
    fn steps_into_out_of_and_over_functions_and_stops_at_breakpoints() {
        let (mut c, run) = debugging("steps");
        let DebugReport::Stopped(entry) = next(&mut c) else {
            panic!("the recipe starts stopped")
        };
        assert_eq!(
            (
                entry.line,
                entry.column,
                entry.reason,
                entry.source.as_str()
            ),
            (7, 5, StopReason::Entry, "    let a = 1;")
        );
        assert_eq!(go(&mut c, DebugCommand::StepInto), (8, StopReason::Step));
        // Into the helper: its first statement, not its `{`.
        assert_eq!(go(&mut c, DebugCommand::StepInto), (3, StopReason::Step));
        assert_eq!(go(&mut c, DebugCommand::StepOut), (9, StopReason::Step));
        // `breakpoint()` stops at the statement after it.
        assert_eq!(
            go(&mut c, DebugCommand::Continue),
            (10, StopReason::Breakpoint)
        );
        c.commands.send(DebugCommand::Vars).expect("sent");
        let DebugReport::Vars(vars) = next(&mut c) else {
            panic!("vars")
        };
        assert_eq!(Value::Object(vars), serde_json::json!({"a": 1, "b": 4}));
        c.commands.send(DebugCommand::Listing).expect("sent");
        assert_eq!(
            next(&mut c),
            DebugReport::Listing("[0]<button>Go</button>".into())
        );
        c.commands.send(DebugCommand::Retry).expect("sent");
        assert_eq!(
            next(&mut c),
            DebugReport::Refused(
                "retry and skip answer a failed step; this stop is a breakpoint stop".into()
            )
        );
        c.commands.send(DebugCommand::Break(99)).expect("sent");
        let DebugReport::Refused(why) = next(&mut c) else {
            panic!("a line past the end is refused")
        };
        assert!(why.ends_with("has 14 lines; there is no line 99"), "{why}");
        c.commands.send(DebugCommand::Break(13)).expect("sent");
        // The assertion fails: the recipe stops on it with its error.
        c.commands.send(DebugCommand::StepOver).expect("sent");
        assert!(
            matches!(next(&mut c), DebugReport::Stopped(s) if s.line == 11 && s.reason == StopReason::Step)
        );
        c.commands.send(DebugCommand::Continue).expect("sent");
        let DebugReport::Stopped(failed) = next(&mut c) else {
            panic!("a failure stop")
        };
        assert_eq!(
            (failed.line, failed.reason, failed.error.as_deref()),
            (
                11,
                StopReason::Failure,
                Some("assertion failed: c is not 100")
            )
        );
        c.commands.send(DebugCommand::Vars).expect("sent");
        let DebugReport::Vars(vars) = next(&mut c) else {
            panic!("vars at the failure")
        };
        assert_eq!(vars.get("c"), Some(&serde_json::json!(5)));
        assert_eq!(go(&mut c, DebugCommand::Retry), (11, StopReason::Failure));
        // Skipped, the assertion returns as if it held; the log line comes
        // before the breakpoint on line 13.
        c.commands.send(DebugCommand::Skip).expect("sent");
        assert_eq!(next(&mut c), DebugReport::Log("c is 5".into()));
        assert!(
            matches!(next(&mut c), DebugReport::Stopped(s) if s.line == 13 && s.reason == StopReason::Breakpoint)
        );
        c.commands.send(DebugCommand::Continue).expect("sent");
        assert_eq!(run.join().expect("joined"), Ok(serde_json::json!(5)));
    }

    #[test]
    fn the_operations_limit_still_ends_a_debugged_loop_at_its_line() {
        let limits = crate::script::Limits {
            operations: 20_000,
            ..Default::default()
        };
        let scripts = Scripts::new(limits, None);
        scripts
            .load_source(
                "spin.rhai",
                "recipe(\"main\", \"spins\");\nfn main() {\n    let n = 0;\n    loop { n += 1; }\n}\n",
            )
            .expect("loads");
        let (debuggee, mut controller) = debug_channel();
        let scripts = scripts.debugged(debuggee);
        let run = std::thread::spawn(move || {
            let runtime = crate::session::runtime().expect("a runtime");
            runtime
                .block_on(scripts.run_recipe(Some("main"), &mut Quiet, &CancelFlag::new()))
                .map_err(|e| e.to_string())
        });
        assert!(matches!(next(&mut controller), DebugReport::Stopped(s) if s.line == 3));
        controller
            .commands
            .send(DebugCommand::Continue)
            .expect("sent");
        let ended = run
            .join()
            .expect("joined")
            .expect_err("the loop is stopped");
        assert!(
            ended.starts_with("spin.rhai:4:")
                && ended.contains("too many operations (more than 20000"),
            "{ended}"
        );
    }

    #[test]
    fn next_steps_over_a_call_and_quit_stops_the_recipe() {
        let (mut c, run) = debugging("over");
        assert!(matches!(next(&mut c), DebugReport::Stopped(s) if s.reason == StopReason::Entry));
        assert_eq!(go(&mut c, DebugCommand::StepOver), (8, StopReason::Step));
        assert_eq!(go(&mut c, DebugCommand::StepOver), (9, StopReason::Step));
        c.commands.send(DebugCommand::Quit).expect("sent");
        assert_eq!(
            run.join().expect("joined"),
            Err(crate::script::ScriptError::Cancelled.to_string())
        );
    }
}
