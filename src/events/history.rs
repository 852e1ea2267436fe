//! Reading traces back: the sessions directory listed newest first, each
//! trace summed up in one row (task, steps, outcome, model, tokens), and a
//! whole trace read as events for a replay, a resume or an export.
//!
//! A trace that does not read is never an error of the listing: its row
//! says why (the line and what is wrong with it). A last line cut short
//! (the writer never leaves one, but a full disk might) is left out rather
//! than spoiling the rest.

use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::clock::utc_stamp;

use super::{EndReason, Event, TokenUsage};

/// A trace file found in a sessions directory, before it is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its file name.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// When it began, `20261122T001652Z` (from its name, or from the
    /// time it was last written when the name does not say).
    pub started: String,
}

/// Why a trace could not be read as events.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceReadError {
    /// The file could not be read.
    #[error("could not read the trace {}: {message}", path.display())]
    Read {
        /// The trace.
        path: PathBuf,
        /// What the system said.
        message: String,
    },
    /// A line is not an event.
    #[error("{}:{line}: not a webagent event: {message}", path.display())]
    Parse {
        /// The trace.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
}

/// How the last run of a trace ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceOutcome {
    /// It has no run at all.
    Empty,
    /// The run was cut off (killed, or still going): it can be resumed.
    Unfinished,
    /// It ended.
    Ended {
        /// Whether the task was accomplished.
        success: bool,
        /// Why it ended.
        reason: EndReason,
    },
}

impl TraceOutcome {
    /// A word for a list: `done`, `failed`, `stopped`, `step limit`,
    /// `error`, `unfinished`, `empty`.
    pub fn word(&self) -> &'static str {
        match self {
            TraceOutcome::Empty => "empty",
            TraceOutcome::Unfinished => "unfinished",
            TraceOutcome::Ended { success: true, .. } => "done",
            TraceOutcome::Ended { reason, .. } => match reason {
                EndReason::Done => "failed",
                EndReason::MaxSteps => "step limit",
                EndReason::Stopped => "stopped",
                EndReason::Fatal => "error",
                EndReason::HandOver => "needs a person",
            },
        }
    }
}

/// One trace summed up for the sessions list.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSummary {
    /// The file.
    pub file: TraceFile,
    /// The first task (a follow-up's is counted in `tasks`).
    pub task: String,
    /// Runs in the trace: the first task and its follow-ups.
    pub tasks: usize,
    /// Steps of every run together.
    pub steps: usize,
    /// How the last run ended.
    pub outcome: TraceOutcome,
    /// The model of the first run.
    pub model: String,
    /// Tokens of every run together.
    pub tokens: TokenUsage,
    /// The trace whose run this one continues, when it was resumed.
    pub continues: Option<String>,
    /// Why the trace does not read, when it does not (what was read
    /// before the bad line is still summed up).
    pub problem: Option<String>,
}

impl TraceSummary {
    /// The row of a trace nothing was read from yet.
    pub fn unread(file: TraceFile) -> Self {
        TraceSummary {
            file,
            task: String::new(),
            tasks: 0,
            steps: 0,
            outcome: TraceOutcome::Empty,
            model: String::new(),
            tokens: TokenUsage::default(),
            continues: None,
            problem: None,
        }
    }
}

/// The `.jsonl` files of `dir`, newest first. A directory that does not
/// exist has none.
pub fn list_traces(dir: &Path) -> io::Result<Vec<TraceFile>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let started = stamp_of(&name)
            .unwrap_or_else(|| utc_stamp(meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)));
        files.push(TraceFile {
            path,
            name,
            size: meta.len(),
            started,
        });
    }
    files.sort_by(|a, b| b.started.cmp(&a.started).then_with(|| b.name.cmp(&a.name)));
    Ok(files)
}

/// The UTC stamp a trace's name begins with (`20261122T001652Z-…`).
fn stamp_of(name: &str) -> Option<String> {
    let stamp = name.get(..16)?;
    let bytes = stamp.as_bytes();
    let shaped = bytes[..8].iter().all(u8::is_ascii_digit)
        && bytes[8] == b'T'
        && bytes[9..15].iter().all(u8::is_ascii_digit)
        && bytes[15] == b'Z';
    shaped.then(|| stamp.to_string())
}

/// Every event of the trace at `path`, in order. A last line cut short is
/// left out; any other line that is not an event is an error naming it.
pub fn read_trace(path: &Path) -> Result<Vec<Event>, TraceReadError> {
    let text = std::fs::read_to_string(path).map_err(|e| TraceReadError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut events = Vec::new();
    for_each_event(&text, |line, parsed| match parsed {
        Ok(event) => {
            events.push(event);
            Ok(())
        }
        Err(message) => Err(TraceReadError::Parse {
            path: path.to_path_buf(),
            line,
            message,
        }),
    })?;
    Ok(events)
}

/// Calls `each` with every line's number and event (or why it is not
/// one), skipping blank lines and a last line cut short; stops at the
/// first `Err` it returns.
fn for_each_event<E>(
    text: &str,
    mut each: impl FnMut(usize, Result<Event, String>) -> Result<(), E>,
) -> Result<(), E> {
    let complete = text.ends_with('\n');
    let count = text.lines().count();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Event>(line) {
            Ok(event) => each(i + 1, Ok(event))?,
            // The writer puts each line down whole; only a disk that filled
            // up mid-write leaves a last line like this.
            Err(_) if !complete && i + 1 == count => {}
            Err(error) => each(i + 1, Err(parse_error(&error)))?,
        }
    }
    Ok(())
}

/// What is wrong with a line, placed by column (the line is already
/// named; serde's own text would call every line `line 1`).
fn parse_error(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let what = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(what, _)| what);
    format!("{what} (column {})", error.column())
}

/// Reads `file` and sums it up; a trace that does not read says why in
/// [`TraceSummary::problem`].
pub fn summarize_trace(file: TraceFile) -> TraceSummary {
    let text = match std::fs::read_to_string(&file.path) {
        Ok(text) => text,
        Err(error) => {
            let mut summary = TraceSummary::unread(file);
            summary.problem = Some(format!("could not read it: {error}"));
            return summary;
        }
    };
    let mut summary = TraceSummary::unread(file);
    // Per run: the highest step index and the tokens of its steps, used
    // when the run has no `done` to say them.
    let mut run_steps = 0usize;
    let mut run_tokens = TokenUsage::default();
    let mut open = false;
    let stopped = for_each_event(&text, |line, parsed| {
        let event = parsed.map_err(|message| format!("line {line}: {message}"))?;
        match event {
            Event::RunStarted { task, model, .. } => {
                if summary.tasks == 0 {
                    summary.task = task;
                    summary.model = model;
                }
                summary.tasks += 1;
                run_steps = 0;
                run_tokens = TokenUsage::default();
                open = true;
                summary.outcome = TraceOutcome::Unfinished;
            }
            Event::Resumed(record) => {
                summary.continues = Some(record.from);
                run_steps = record.step.saturating_sub(1);
                run_tokens = record.usage;
            }
            Event::Step(step) => {
                run_steps = run_steps.max(step.index);
                if let Some(usage) = step.usage {
                    run_tokens.add(usage);
                }
            }
            Event::Done {
                success,
                reason,
                steps,
                usage,
                ..
            } => {
                summary.steps += steps.max(run_steps);
                let mut used = usage;
                if used.total_tokens == 0 {
                    used = run_tokens;
                }
                summary.tokens.add(used);
                summary.outcome = TraceOutcome::Ended { success, reason };
                open = false;
            }
            _ => {}
        }
        Ok::<(), String>(())
    });
    if open {
        summary.steps += run_steps;
        summary.tokens.add(run_tokens);
    }
    if let Err(problem) = stopped {
        summary.problem = Some(problem);
    }
    summary
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::ActionResult;
    use crate::events::{Reflection, StepRecord, StepTimings};

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("webagent-history-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn line(event: &Event) -> String {
        format!("{}\n", event.to_json_line().unwrap())
    }

    fn step(index: usize, tokens: u64) -> Event {
        Event::Step(StepRecord {
            index,
            reflection: Reflection::default(),
            action: serde_json::json!({"click": {"index": 1}}),
            result: ActionResult::ok(),
            repairs: Vec::new(),
            timings: StepTimings::default(),
            usage: Some(TokenUsage {
                total_tokens: tokens,
                ..TokenUsage::default()
            }),
            prompt_chars: 0,
            prompt: String::new(),
            raw_response: String::new(),
            within: None,
            person: None,
        })
    }

    fn started(task: &str) -> Event {
        Event::RunStarted {
            task: task.into(),
            url: "http://a.test/".into(),
            model: "m1".into(),
            max_steps: 9,
        }
    }

    #[test]
    fn traces_list_newest_first_and_sum_up_their_runs() {
        let dir = scratch("list");
        let done = Event::Done {
            success: true,
            text: "shipped".into(),
            reason: EndReason::Done,
            steps: 2,
            usage: TokenUsage {
                total_tokens: 30,
                ..TokenUsage::default()
            },
        };
        let finished = [started("ship 1003"), step(1, 10), step(2, 20), done].map(|e| line(&e));
        std::fs::write(dir.join("20260101T000000Z-1.jsonl"), finished.concat()).unwrap();
        let killed = [started("refund it"), step(1, 5)].map(|e| line(&e));
        std::fs::write(dir.join("20260102T000000Z-1.jsonl"), killed.concat()).unwrap();
        std::fs::write(dir.join("notes.txt"), "not a trace").unwrap();
        let files = list_traces(&dir).unwrap();
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["20260102T000000Z-1.jsonl", "20260101T000000Z-1.jsonl"]
        );
        let newest = summarize_trace(files[0].clone());
        assert_eq!(newest.task, "refund it");
        assert_eq!(newest.outcome, TraceOutcome::Unfinished);
        assert_eq!((newest.steps, newest.tokens.total_tokens), (1, 5));
        let oldest = summarize_trace(files[1].clone());
        assert_eq!(oldest.outcome.word(), "done");
        assert_eq!((oldest.steps, oldest.tokens.total_tokens), (2, 30));
        assert_eq!(oldest.model, "m1");
        assert!(oldest.problem.is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_bad_line_is_named_and_a_cut_last_line_is_left_out() {
        let dir = scratch("bad");
        let bad = dir.join("20260101T000000Z-2.jsonl");
        std::fs::write(
            &bad,
            format!("{}{{\"type\":\"nonsense\"}}\n", line(&started("x"))),
        )
        .unwrap();
        let file = list_traces(&dir).unwrap().remove(0);
        let summary = summarize_trace(file);
        let problem = summary.problem.expect("a reason");
        assert!(problem.starts_with("line 2:"), "{problem}");
        assert_eq!(summary.task, "x", "what read before the bad line is kept");
        let error = read_trace(&bad).unwrap_err();
        assert!(
            error.to_string().contains(":2: not a webagent event"),
            "{error}"
        );

        let cut = dir.join("20260101T000000Z-3.jsonl");
        std::fs::write(&cut, format!("{}{{\"type\":\"st", line(&started("y")))).unwrap();
        let events = read_trace(&cut).unwrap();
        assert_eq!(events.len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
