//! `webagent recipe run FILE --debug=cli`: the recipe debugger for
//! programs, as JSON lines. Commands come on standard input
//! (`{"cmd":"break","line":12}`), events go to standard output
//! (`{"event":"stopped",…}`), and what the session logs besides a
//! recipe's own `log()` lines goes to standard error, so standard output
//! is the protocol alone.
//!
//! The recipe starts stopped at its first line. Commands are read in
//! order at each stop; one sent while the recipe runs waits for the next
//! stop (`quit` stops it at once). A line that is not a command gets an
//! `error` event and the session goes on. The end of standard input is
//! one more `quit`, after the commands before it.

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::ExitCode;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::headless::start_traced;
use crate::events::Event;
use crate::interrupt::Interrupt;
use crate::script::{DebugCommand, DebugReport, Stop};
use crate::secrets::Secrets;
use crate::session::{log_line, Bare, Prepared, RecipeChoice, ReplayOptions};

/// Who drives `recipe run --debug`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DebugMode {
    /// A program, over JSON lines on standard input and output.
    Cli,
    /// A person, in the workbench.
    Tui,
}

/// What `recipe run --debug=cli` runs.
pub struct DebugRun<'a> {
    /// The recipe's file.
    pub file: &'a Path,
    /// The recipe's name.
    pub recipe: &'a str,
    /// Its parameters.
    pub params: serde_json::Map<String, Value>,
    /// The page to start on.
    pub url: Option<&'a str>,
    /// Heal failed steps with the model.
    pub heal: bool,
    /// Approve every step (`--yes`).
    pub yes: bool,
}

/// Runs the recipe under the JSON-lines debugger; exit 0 when it ends
/// well, 1 otherwise.
pub async fn run_cli(prepared: Prepared, run: DebugRun<'_>) -> anyhow::Result<ExitCode> {
    let interrupt = Interrupt::listen()?;
    let (events_tx, mut events) = mpsc::unbounded_channel::<Event>();
    let (mut session, mut trace) = match start_traced(prepared, run.url, events_tx).await {
        Ok(started) => started,
        Err(code) => return Ok(code),
    };
    let secrets = session.secrets.clone();
    let out = Protocol { secrets };
    if let Err(error) = session.opened.clone() {
        out.event(json!({"event": "ended", "ok": false, "error": error.to_string()}));
        session.close().await;
        return Ok(ExitCode::from(1));
    }
    let mut options = ReplayOptions::headless(run.yes);
    options.origin = run.url.and_then(crate::script::export::origin_of);
    options.heal = run.heal;
    options.rewrite = None;
    let (options, mut controller) = options.debugged();
    let cancel = options.oversight.cancel.clone();
    let ctrl_c = {
        let cancel = cancel.clone();
        interrupt.spawn_then(move || cancel.cancel())
    };
    let mut lines = read_stdin();
    let commands = controller.commands.clone();
    let choice = RecipeChoice::InFile {
        file: run.file,
        name: Some(run.recipe),
    };
    let mut stdin_open = true;
    let mut recipe = Box::pin(session.run_recipe(choice, run.params, options, &Bare));
    let outcome = loop {
        tokio::select! {
            outcome = &mut recipe => break outcome,
            Some(report) = controller.reports.recv() => out.report(report),
            Some(event) = events.recv() => forward(&mut trace, &event),
            line = lines.recv(), if stdin_open => match line {
                Some(line) if line.trim().is_empty() => {}
                Some(line) => match parse_command(&line) {
                    Ok(command) => {
                        if command == DebugCommand::Quit {
                            cancel.cancel();
                        }
                        let _ = commands.send(command);
                    }
                    Err(why) => out.event(json!({"event": "error", "error": why})),
                },
                None => {
                    // The end of the input: nothing more will be asked.
                    stdin_open = false;
                    let _ = commands.send(DebugCommand::Quit);
                }
            },
        }
    };
    drop(recipe);
    ctrl_c.abort();
    while let Ok(report) = controller.reports.try_recv() {
        out.report(report);
    }
    while let Ok(event) = events.try_recv() {
        forward(&mut trace, &event);
    }
    let ok = match &outcome {
        Ok(outcome) => {
            let error = (!outcome.success).then(|| outcome.text.clone());
            out.event(json!({"event": "ended", "ok": outcome.success, "error": error}));
            outcome.success
        }
        Err(error) => {
            out.event(json!({"event": "ended", "ok": false, "error": error.to_string()}));
            false
        }
    };
    session.close().await;
    while let Ok(event) = events.try_recv() {
        let _ = trace.write(&event);
    }
    eprintln!("trace: {}", trace.path().display());
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Standard output as the protocol: one masked JSON object a line.
struct Protocol {
    secrets: Secrets,
}

impl Protocol {
    fn event(&self, mut value: Value) {
        self.secrets.mask_json(&mut value);
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{value}");
        let _ = stdout.flush();
    }

    fn report(&self, report: DebugReport) {
        self.event(match report {
            DebugReport::Stopped(stop) => stopped(&stop),
            DebugReport::Vars(vars) => {
                // A variable may hold what a page wrote.
                let mut vars = Value::Object(vars);
                crate::fence::defuse_json(&mut vars);
                json!({"event": "vars", "vars": vars})
            }
            DebugReport::Listing(text) => {
                json!({"event": "listing", "text": crate::fence::fence_block(&text)})
            }
            DebugReport::Refused(why) => json!({"event": "error", "error": why}),
            DebugReport::Log(text) => json!({"event": "log", "text": text}),
            DebugReport::Acted(result) => json!({"event": "acted", "result": result}),
        });
    }
}

/// The `stopped` event of `stop`.
fn stopped(stop: &Stop) -> Value {
    json!({
        "event": "stopped",
        "file": stop.file,
        "line": stop.line,
        "column": stop.column,
        "reason": stop.reason,
        "source": stop.source,
        "error": stop.error,
    })
}

/// Writes a session event to the trace, and anything but a recipe's log
/// line to standard error.
fn forward(trace: &mut crate::events::TraceWriter, event: &Event) {
    if let Err(error) = trace.write(event) {
        eprintln!("warning: {error}");
    }
    match event {
        // The debugger reports a recipe's log lines itself, in order
        // with its stops.
        Event::ScriptLog { .. } => {}
        other if other.is_kept() => {
            if let Some(line) = log_line(other) {
                eprintln!("{}", line.trim_start());
            }
        }
        _ => {}
    }
}

/// Standard input's lines, read on a thread of their own (a blocking read
/// cannot be cancelled); the channel closes at the end of the input.
fn read_stdin() -> mpsc::UnboundedReceiver<String> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The commands, as their `cmd` words.
const COMMANDS: &str =
    "break, clear, step, next, out, continue, vars, listing, act, retry, skip, quit";

/// One protocol line as a command, or why it is none.
pub(crate) fn parse_command(line: &str) -> Result<DebugCommand, String> {
    let value: Value = serde_json::from_str(line)
        .map_err(|e| format!("not a JSON object ({e}): {}", line.trim()))?;
    let Some(cmd) = value.get("cmd").and_then(Value::as_str) else {
        return Err(format!(
            "a command is an object with \"cmd\" ({COMMANDS}): {}",
            line.trim()
        ));
    };
    let line_number = || {
        value
            .get("line")
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("{cmd} needs \"line\": a line number from 1"))
    };
    Ok(match cmd {
        "break" => DebugCommand::Break(line_number()?),
        "clear" => DebugCommand::Clear(line_number()?),
        "step" => DebugCommand::StepInto,
        "next" => DebugCommand::StepOver,
        "out" => DebugCommand::StepOut,
        "continue" => DebugCommand::Continue,
        "vars" => DebugCommand::Vars,
        "listing" => DebugCommand::Listing,
        "act" => {
            let action = value.get("action").ok_or_else(|| {
                "act needs \"action\": one action as the model writes it, e.g. {\"click\":{\"index\":3}}"
                    .to_string()
            })?;
            let action = crate::actions::Catalog::builtin()
                .parse(action)
                .map_err(|e| format!("act: {e}"))?;
            DebugCommand::Act(action)
        }
        "retry" => DebugCommand::Retry,
        "skip" => DebugCommand::Skip,
        "quit" => DebugCommand::Quit,
        other => {
            return Err(format!(
                "unknown command {other:?}; the commands are {COMMANDS}"
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_read_and_mistakes_are_named() {
        assert_eq!(
            parse_command(r#"{"cmd":"break","line":7}"#),
            Ok(DebugCommand::Break(7))
        );
        assert_eq!(
            parse_command(r#"{"cmd":"next"}"#),
            Ok(DebugCommand::StepOver)
        );
        assert_eq!(
            parse_command(r#"{"cmd":"break"}"#),
            Err("break needs \"line\": a line number from 1".to_string())
        );
        assert_eq!(
            parse_command(r#"{"cmd":"jump"}"#),
            Err(format!(
                "unknown command \"jump\"; the commands are {COMMANDS}"
            ))
        );
        assert!(parse_command("step")
            .unwrap_err()
            .starts_with("not a JSON object"));
    }
}
