//! The workbench attached to a named session (`webagent tui --attach
//! NAME`): the same loop, state and panes, with its effects carried to the
//! session process over its control socket instead of to a browser of its
//! own.
//!
//! The session sends the page after each job (and its picture while the
//! page pane is open), its trace's events, the approvals its commands ask
//! for and its runs' questions ([`News`]); the person's `:` actions,
//! clicks and keys on the page pane, messages, decisions and answers go
//! back ([`Says`]) and queue with the commands. The pictures are drawn
//! by the same picture service as the main workbench's.
//! Leaving (`q`) closes the connection: the session goes on, and a
//! decision still pending is refused there for the person's absence.

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::oneshot;

use super::files::WorkbenchFiles;
use super::{picture, record, terminal};
use crate::actions::ActionResult;
use crate::daemon::{call, News, Request, Says, SessionFiles};
use crate::environment::ApprovalDecision;
use crate::events::Event;
use crate::session::Prepared;
use crate::tui::error::TuiError;
use crate::tui::event::{AppEvent, Effect};
use crate::tui::event_loop::{App, EffectHandler};
use crate::tui::state::AppState;

/// What the person owes the session, on screen: the session's id of
/// each question, and where the modal's reply arrives.
type Owed<T> = Mutex<Vec<(u64, oneshot::Receiver<T>)>>;

/// The approvals and the run's questions on screen.
#[derive(Debug, Default)]
struct Questions {
    decisions: Owed<ApprovalDecision>,
    answers: Owed<Option<String>>,
}

/// The replies the modals have given since the last look, by question
/// id; those the modal dropped are forgotten.
fn given<T>(owed: &Owed<T>) -> Vec<(u64, T)> {
    let mut owed = owed.lock().unwrap_or_else(PoisonError::into_inner);
    let mut given = Vec::new();
    owed.retain_mut(|(id, reply)| match reply.try_recv() {
        Ok(reply) => {
            given.push((*id, reply));
            false
        }
        Err(oneshot::error::TryRecvError::Empty) => true,
        Err(oneshot::error::TryRecvError::Closed) => false,
    });
    given
}

/// A workbench's connection to a session that took it.
#[derive(Debug)]
pub struct AttachedSession {
    /// The session's name.
    pub name: String,
    /// The page it is on.
    pub url: String,
    /// The connection, past the session's reply to the attach.
    pub connection: BufReader<UnixStream>,
}

/// Opens the workbench on the session of `attachment` and runs it until
/// the person leaves; the session goes on. `prepared` gives the themes,
/// the traces the sessions view lists and the actions the `:` line knows.
pub fn run_attached(
    attachment: AttachedSession,
    prepared: &Prepared,
    theme: Option<String>,
) -> Result<(), TuiError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let writer = attachment.connection.get_ref().try_clone()?;
    let questions = Arc::new(Questions::default());
    let mut services = AttachedServices {
        tx: tx.clone(),
        files: SessionFiles::named(&attachment.name),
        writer,
        questions: Arc::clone(&questions),
        held_stop: None,
        leaving: false,
        on_disk: WorkbenchFiles::new(
            tx.clone(),
            prepared.config.paths.sessions.clone(),
            super::export_dir(prepared),
        ),
        pictures: None,
    };
    let _ = tx.send(AppEvent::Sitemaps {
        sitemaps: prepared.sitemaps.clone(),
        error: None,
    });
    record::send_scripts(&prepared.scripts, &tx);
    let _ = tx.send(AppEvent::BrowserReady {
        url: attachment.url.clone(),
    });
    let _ = tx.send(AppEvent::Notice {
        error: false,
        text: format!(
            "attached to session {}: its commands show here and ask you before risky actions; q detaches, the session goes on",
            attachment.name
        ),
    });
    if let Some(spec) = theme {
        services.handle(Effect::LoadTheme(spec));
    }
    let news_tx = tx.clone();
    let name = attachment.name.clone();
    std::thread::Builder::new()
        .name("tui-attached".into())
        .spawn(move || read_news(attachment.connection, &name, &news_tx, &questions))?;
    let mut term = terminal::enter()?;
    // Asked before the key reader starts: the terminal's answer comes in
    // on stdin.
    let picker = picture::picker(std::io::stdout().is_terminal());
    services.pictures = Some(picture::PictureService::start(picker, tx.clone())?);
    let size = term.size().map(|s| (s.width, s.height)).unwrap_or((80, 24));
    let state = AppState::new(size);
    let mut app = App::new(state, rx);
    let stop_input = Arc::new(AtomicBool::new(false));
    terminal::spawn_input_reader(tx, Arc::clone(&stop_input));
    let result = app.run(&mut term, &mut services);
    stop_input.store(true, Ordering::Relaxed);
    terminal::restore();
    services.detach();
    result
}

/// Turns the session's news into the loop's events until it hangs up.
fn read_news(
    mut connection: BufReader<UnixStream>,
    name: &str,
    tx: &Sender<AppEvent>,
    questions: &Questions,
) {
    let mut line = String::new();
    // Outside an agent run (a command's actions), the step record alone
    // makes the log row: the call before it carries no step number.
    let mut in_run = false;
    loop {
        line.clear();
        match connection.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let news = match serde_json::from_str::<News>(&line) {
            Ok(news) => news,
            Err(error) => {
                tracing::warn!(%error, "the session's news did not read");
                continue;
            }
        };
        let event = match news {
            News::Page { page } => AppEvent::Page(page),
            News::Event { event } => {
                match *event {
                    Event::RunStarted { .. } => in_run = true,
                    Event::Done { .. } => in_run = false,
                    Event::ToolCall { .. } | Event::ToolResult { .. } if !in_run => continue,
                    _ => {}
                }
                AppEvent::Agent(event)
            }
            News::ActionDone { id, result, ms } => AppEvent::ActionFinished { id, result, ms },
            News::Picture { picture } => match picture.screenshot() {
                Some(shot) => AppEvent::Picture(Box::new(shot)),
                None => AppEvent::Notice {
                    error: true,
                    text: "the session's page picture did not read".into(),
                },
            },
            News::Approval { id, request } => {
                let (reply, decision) = oneshot::channel();
                questions
                    .decisions
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((id, decision));
                AppEvent::ApprovalRequested { request, reply }
            }
            News::Question { id, question } => {
                let (reply, answer) = oneshot::channel();
                questions
                    .answers
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((id, answer));
                AppEvent::AskUser { question, reply }
            }
        };
        if tx.send(event).is_err() {
            return;
        }
    }
    let _ = tx.send(AppEvent::Notice {
        error: true,
        text: format!(
            "session {name} ended or closed the connection (`webagent session list` says how it is); q leaves"
        ),
    });
}

/// The services of an attached workbench: the session does the work.
struct AttachedServices {
    tx: Sender<AppEvent>,
    files: SessionFiles,
    /// The connection's sending side.
    writer: UnixStream,
    /// Approvals and questions on screen, by the session's question id.
    questions: Arc<Questions>,
    /// A stop decided this turn: sent unless the person is leaving, when
    /// the session refuses it for their absence instead.
    held_stop: Option<u64>,
    leaving: bool,
    /// The sessions view's work, a trace opened or exported, the theme.
    on_disk: WorkbenchFiles,
    /// Fits the session's pictures into the page pane.
    pictures: Option<picture::PictureService>,
}

impl AttachedServices {
    /// Sends `says` to the session; `false` when the connection is gone.
    fn say(&mut self, says: &Says) -> bool {
        let Ok(mut line) = serde_json::to_string(says) else {
            return false;
        };
        line.push('\n');
        self.writer.write_all(line.as_bytes()).is_ok()
    }

    /// Says `text` on the status line.
    fn notice(&self, error: bool, text: impl Into<String>) {
        let _ = self.tx.send(AppEvent::Notice {
            error,
            text: text.into(),
        });
    }

    /// Closes the connection: the session detaches the person.
    fn detach(&mut self) {
        let _ = self.writer.shutdown(std::net::Shutdown::Both);
    }

    /// Runs file work off the loop's thread.
    fn off_the_loop(&self, work: impl FnOnce() + Send + 'static) {
        if let Err(error) = std::thread::Builder::new()
            .name("tui-files".into())
            .spawn(work)
        {
            self.notice(true, format!("starting a worker: {error}"));
        }
    }
}

impl EffectHandler for AttachedServices {
    fn handle(&mut self, effect: Effect) {
        let effect = match self.on_disk.work(effect) {
            Ok(work) => return self.off_the_loop(work),
            Err(effect) => effect,
        };
        match effect {
            Effect::RunAction { id, action } => {
                if !self.say(&Says::Act { id, action }) {
                    let _ = self.tx.send(AppEvent::ActionFinished {
                        id,
                        result: ActionResult::unknown("the session closed the connection"),
                        ms: 0,
                    });
                }
            }
            Effect::Decide { reply, decision } => {
                let _ = reply.send(decision);
                for (id, decision) in given(&self.questions.decisions) {
                    if decision == ApprovalDecision::Stop {
                        self.held_stop = Some(id);
                    } else {
                        self.say(&Says::Decide { id, decision });
                    }
                }
            }
            Effect::Answer { reply, answer } => {
                let _ = reply.send(answer);
                for (id, answer) in given(&self.questions.answers) {
                    self.say(&Says::Answer { id, answer });
                }
            }
            Effect::Steer(text) => {
                self.say(&Says::Steer { text });
            }
            Effect::StartRun { task, .. } => {
                // The run goes on the session's queue like `run
                // --session`; its events come back as news.
                let (tx, files) = (self.tx.clone(), self.files.clone());
                self.off_the_loop(move || {
                    let error = match call(&files, &Request::Run { task, json: false }) {
                        Ok(reply) if reply.code == 0 => None,
                        Ok(reply) => Some(format!(
                            "the run ended with exit code {}: {}",
                            reply.code,
                            reply.stderr.trim()
                        )),
                        Err(error) => Some(error.to_string()),
                    };
                    let _ = tx.send(AppEvent::RunEnded { error });
                });
            }
            Effect::Copy(text) => {
                if let Err(error) = terminal::copy_to_clipboard(&text) {
                    tracing::warn!(%error, "copying to the terminal's clipboard");
                }
            }
            Effect::Quit => {
                self.leaving = true;
                self.detach();
            }
            // The picker's view waits for an answer: it says why there
            // is none.
            Effect::PickLocators { pick, .. } => {
                let _ = self.tx.send(AppEvent::Locators {
                    pick,
                    report: Err(
                        "the session's page is read by its own process; an attached workbench has no locator picker"
                            .into(),
                    ),
                });
            }
            Effect::ShowPage(shown) => {
                self.say(&Says::ShowPage { shown });
                if let Err(error) = terminal::capture_mouse(shown) {
                    tracing::warn!(%error, "switching the mouse report");
                }
            }
            Effect::PaneInput(input) => {
                if !self.say(&Says::Pointer { input }) {
                    self.notice(true, "the session closed the connection");
                }
            }
            Effect::RenderPicture(job) => {
                if let Some(pictures) = &self.pictures {
                    pictures.render(job);
                }
            }
            // The listing cursor's outline in the page and the approval
            // mode belong to a workbench with its own browser.
            Effect::Highlight(_) | Effect::SetApprovalMode(_) | Effect::SetPaused(_) => {}
            other => self.notice(
                true,
                format!(
                    "not in a workbench attached to a session ({}): use `webagent … --session {}`",
                    effect_name(&other),
                    self.files.name
                ),
            ),
        }
    }

    fn settled(&mut self) {
        if let Some(id) = self.held_stop.take() {
            if !self.leaving {
                self.say(&Says::Decide {
                    id,
                    decision: ApprovalDecision::Stop,
                });
            }
        }
    }
}

/// What an effect the attached workbench cannot carry out would do, in
/// the person's words.
fn effect_name(effect: &Effect) -> &'static str {
    match effect {
        Effect::StopRun => "stopping the session's run",
        Effect::RunRecipe { .. } => "running a recipe here",
        Effect::Resume { .. } | Effect::ReadResume(_) => "resuming a run",
        Effect::HandBack { .. } => "handing a run back",
        Effect::RetryStep(_) => "asking a step again",
        Effect::NewConversation => "a new conversation",
        Effect::SaveState(_) => "saving the sign-ins",
        Effect::ExportSession { .. } => "exporting the session",
        Effect::Record(_) | Effect::SaveRecording { .. } => "recording",
        Effect::CancelScript => "cancelling a script",
        _ => "this",
    }
}
