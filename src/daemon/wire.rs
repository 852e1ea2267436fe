//! The control protocol: one JSON line in, one JSON line out, per request.
//! A reply carries what the command prints and its exit code, so the
//! client only forwards.
//!
//! One request keeps its connection: [`Request::Attach`], the workbench
//! watching a session. After its reply the session sends [`News`] lines
//! (the page, the trace's events, approvals and questions for the person)
//! and the workbench sends [`Says`] lines (actions, messages, decisions,
//! answers) until either end hangs up. While its page pane is open the
//! workbench is also sent a picture of the page after each job
//! ([`Picture`], base64 in the line: the socket is its user's alone, and
//! no file is left behind).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::files::SessionFiles;
use crate::actions::{Action, ActionResult};
use crate::browser::record::PaneInput;
use crate::dom::PageState;
use crate::environment::{ApprovalDecision, ApprovalRequest};
use crate::events::Event;
use crate::vision::{Mark, Screenshot};

/// What a command asks of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "request", rename_all = "snake_case")]
pub enum Request {
    /// How the session is doing (answered at once, even while a command
    /// runs).
    Status,
    /// `observe --session`: the page in the session's numbering, or what
    /// changed since its last listing.
    Observe {
        /// One JSON object instead of the listing.
        json: bool,
        /// Only what changed since the session's last listing.
        delta: bool,
        /// Where to write the model's screenshot of the page.
        screenshot: Option<PathBuf>,
    },
    /// `exec --session`: actions on the page the last command left.
    Exec {
        /// The actions, as `exec` takes them.
        actions: Vec<String>,
        /// One JSON line per action.
        json: bool,
        /// Print the page after the actions.
        observe: bool,
        /// Where to write a screenshot after each action.
        screenshot: Option<PathBuf>,
    },
    /// `run --session`: an agent task from the page the last command left;
    /// the page stays where the run ends.
    Run {
        /// The task.
        task: String,
        /// Every event as a JSON line instead of the step log.
        json: bool,
    },
    /// `recipe run --session`: a recipe the session loaded (`session start
    /// --recipes FILE`), from the page the last command left.
    Recipe {
        /// The script file that declares it.
        file: PathBuf,
        /// Which recipe of the file.
        recipe: Option<String>,
        /// `NAME=VALUE` parameters.
        params: Vec<String>,
        /// Every event as a JSON line instead of the step log.
        json: bool,
        /// Do not heal failed steps with the model.
        no_heal: bool,
    },
    /// `state save --session`: the session's sign-ins to a file.
    SaveState {
        /// The state file (else the session's configured one).
        path: Option<PathBuf>,
    },
    /// End the session: close its browser, remove its files.
    Stop,
    /// `tui --attach`: a person watches the session from the workbench
    /// and answers its approvals, on this connection, until it closes.
    /// Refused (exit 3) while another workbench is attached.
    Attach,
}

/// What a session tells the workbench attached to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "news", rename_all = "snake_case")]
pub enum News {
    /// The page as last observed, in the session's numbering (the indices
    /// commands use).
    Page {
        /// The observation.
        page: Box<PageState>,
    },
    /// An event of the session's trace (steps, approvals, a run's
    /// reflections).
    Event {
        /// The event, masked as the trace has it.
        event: Box<Event>,
    },
    /// An action the person typed ran.
    ActionDone {
        /// The id the workbench gave it.
        id: u64,
        /// What it returned.
        result: ActionResult,
        /// How long it took, in milliseconds.
        ms: u64,
    },
    /// A picture of the page as last observed, marked in the session's
    /// numbering, while the workbench shows its page pane.
    Picture {
        /// The picture.
        picture: Box<Picture>,
    },
    /// A run's `ask_user`: the person's answer is awaited.
    Question {
        /// Pairs the question with its [`Says::Answer`].
        id: u64,
        /// What the model asks.
        question: String,
    },
    /// A command's action waits for the person's decision.
    Approval {
        /// Pairs the question with its [`Says::Decide`].
        id: u64,
        /// What is asked.
        request: Box<ApprovalRequest>,
    },
}

/// What the attached workbench tells its session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "says", rename_all = "snake_case")]
pub enum Says {
    /// Run an action the person typed, in order with the commands.
    Act {
        /// Pairs it with its [`News::ActionDone`].
        id: u64,
        /// The action, in the session's numbering.
        action: Action,
    },
    /// A message for the agent run going on in the session.
    Steer {
        /// The person's words.
        text: String,
    },
    /// The person's decision about [`News::Approval`] `id`.
    Decide {
        /// The question's id.
        id: u64,
        /// The decision.
        decision: ApprovalDecision,
    },
    /// The person's answer to [`News::Question`] `id`.
    Answer {
        /// The question's id.
        id: u64,
        /// What they answered; `None` when they declined.
        answer: Option<String>,
    },
    /// The page pane opened or closed: while it is open the session sends
    /// a [`News::Picture`] after each of its jobs.
    ShowPage {
        /// Whether the pane is open.
        shown: bool,
    },
    /// The person's mouse or keys on the page pane's picture, for the
    /// session's page, in order with the commands.
    Pointer {
        /// What they did.
        input: PaneInput,
    },
}

/// A screenshot as the wire carries it: its image in base64, inside the
/// connection only its user can open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Picture {
    /// `image/jpeg` or `image/png`.
    pub mime: String,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Image pixels per CSS pixel.
    pub scale: f64,
    /// The listed elements' boxes, in the session's numbering.
    pub marks: Vec<Mark>,
    /// Text fields blanked because they showed a secret.
    pub masked: usize,
    /// The encoded image, base64.
    pub image: String,
}

impl Picture {
    /// The wire form of `shot`.
    pub fn of(shot: &Screenshot) -> Picture {
        Picture {
            mime: shot.mime.to_string(),
            width: shot.width,
            height: shot.height,
            scale: shot.scale,
            marks: shot.marks.clone(),
            masked: shot.masked,
            image: base64::engine::general_purpose::STANDARD.encode(&shot.image),
        }
    }

    /// The screenshot again; `None` when its image is not base64.
    pub fn screenshot(&self) -> Option<Screenshot> {
        let image = base64::engine::general_purpose::STANDARD
            .decode(&self.image)
            .ok()?;
        Some(Screenshot {
            image: image.into(),
            mime: if self.mime == "image/png" {
                "image/png"
            } else {
                "image/jpeg"
            },
            width: self.width,
            height: self.height,
            scale: self.scale,
            marks: self.marks.clone(),
            masked: self.masked,
            capture_ms: 0.0,
        })
    }
}

/// What a command prints, and how it exits.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// What goes to stdout.
    pub stdout: String,
    /// What goes to stderr.
    pub stderr: String,
    /// The exit code.
    pub code: u8,
    /// The session's state, in answer to [`Request::Status`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<SessionStatus>,
}

/// A live session as `session list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionStatus {
    /// The page it is on now.
    pub url: String,
    /// Seconds since its last command.
    pub idle_secs: u64,
    /// Whether a command is running in it now.
    pub busy: bool,
    /// Whether a person watches it from the workbench.
    pub attached: bool,
}

/// Why a session could not be asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Unreachable {
    /// There is no session of that name.
    #[error("no session named `{name}` (see `webagent session list`)")]
    NoSession {
        /// The name asked for.
        name: String,
    },
    /// The session's process is gone (killed, crashed) or stopped
    /// answering.
    #[error("session `{name}` is gone: {reason}{}", trace_note(.trace))]
    Gone {
        /// The name asked for.
        name: String,
        /// What happened, as the socket said it.
        reason: String,
        /// Its trace, when its metadata names one.
        trace: Option<PathBuf>,
    },
}

fn trace_note(trace: &Option<PathBuf>) -> String {
    match trace {
        Some(trace) => format!("; its trace is {}", trace.display()),
        None => String::new(),
    }
}

/// Sends `request` to the session whose files are `files` and waits for
/// its reply. A session with neither socket nor metadata does not exist;
/// one whose socket refuses, or that hangs up before replying, is gone.
pub fn call(files: &SessionFiles, request: &Request) -> Result<Reply, Unreachable> {
    open(files, request).map(|(reply, _)| reply)
}

/// Sends `request` and reads the reply, keeping the connection for what
/// follows it ([`Request::Attach`]'s news).
pub fn open(
    files: &SessionFiles,
    request: &Request,
) -> Result<(Reply, BufReader<UnixStream>), Unreachable> {
    let gone = |reason: String| Unreachable::Gone {
        name: files.name.clone(),
        reason,
        trace: files.read_meta().map(|meta| meta.trace),
    };
    if !files.socket.exists() && !files.meta.exists() {
        return Err(Unreachable::NoSession {
            name: files.name.clone(),
        });
    }
    let mut stream = UnixStream::connect(&files.socket).map_err(|e| {
        gone(format!(
            "its socket {} refused: {e}",
            files.socket.display()
        ))
    })?;
    let mut line = serde_json::to_string(request).map_err(|e| gone(e.to_string()))?;
    line.push('\n');
    stream
        .write_all(line.as_bytes())
        .map_err(|e| gone(format!("sending the command: {e}")))?;
    let mut answer = String::new();
    let mut reader = BufReader::new(stream);
    reader
        .read_line(&mut answer)
        .map_err(|e| gone(format!("reading the answer: {e}")))?;
    if answer.trim().is_empty() {
        return Err(gone(
            "its process hung up before answering (killed, or its browser ended)".into(),
        ));
    }
    let reply =
        serde_json::from_str(&answer).map_err(|e| gone(format!("its answer did not read: {e}")))?;
    Ok((reply, reader))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::KeyChord;

    #[test]
    fn a_picture_and_the_person_s_pointer_cross_the_wire_whole() {
        let shot = Screenshot {
            image: std::sync::Arc::from(&b"\xff\xd8\xff\x00jpeg"[..]),
            mime: "image/jpeg",
            width: 1024,
            height: 640,
            scale: 0.8,
            marks: vec![Mark {
                index: 7,
                x: 1,
                y: 2,
                width: 3,
                height: 4,
                new: true,
            }],
            masked: 1,
            capture_ms: 0.0,
        };
        let news = News::Picture {
            picture: Box::new(Picture::of(&shot)),
        };
        let line = serde_json::to_string(&news).unwrap(); // ok: a unit test, where a failure is the test failing
        let Ok(News::Picture { picture }) = serde_json::from_str(&line) else {
            panic!("not a picture: {line}");
        };
        assert_eq!(picture.screenshot(), Some(shot));

        for input in [
            PaneInput::Click { x: 1.5, y: 2.0 },
            PaneInput::Type("é".into()),
            PaneInput::Press(KeyChord::parse("Shift+Tab").unwrap()), // ok: a unit test, where a failure is the test failing
        ] {
            let says = Says::Pointer { input };
            let line = serde_json::to_string(&says).unwrap(); // ok: a unit test, where a failure is the test failing
            let back: Says = serde_json::from_str(&line).unwrap(); // ok: a unit test, where a failure is the test failing
            assert_eq!(back, says, "{line}");
        }
    }
}
