//! `webagent session start|list|stop`: named sessions that outlive a
//! command, and the hidden `session serve` that is one.
//!
//! `start` launches `webagent session serve` in a process group of its own
//! (the caller's Ctrl-C does not reach it), its output in a log beside its
//! socket, and returns once the session answers. The session process
//! holds the browser, the tab and the trace, and answers requests from one
//! queue, in order, by running the code the one-shot commands run
//! (`exec_actions`, `observe_in_session`) with their output kept for the
//! client ([`crate::daemon`] has the files and the wire).
//!
//! A workbench attached to the session (`tui --attach`) is sent the page
//! after each job (and a picture of it, marked in the session's numbering,
//! while its page pane is open) and the trace's events as they come,
//! answers the approvals of the commands, and sends the person's actions
//! and clicks on the page pane, which queue with the commands.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;

use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, oneshot};

use super::exec::{exec_actions, observe_now, ExecRequest};
use super::exit::{run_exit_code, EXIT_NO_SESSION, EXIT_REFUSED, EXIT_SESSION_GONE, EXIT_USAGE};
use super::flags::{parse_mode, parse_page_url, SessionFlags};
use super::observe::{observe_in_session, SessionObserve};
use super::output::Output;
use super::recipe::{recipe_in_session, SessionRecipe};
use super::session_client::absolute;
use crate::actions::{Action, ActionResult};
use crate::agent::Prior;
use crate::browser::record::PaneInput;
use crate::daemon::{
    call, run_dir, valid_name, Attachment, News, Picture, Reply, Request, Says, SessionFiles,
    SessionMeta, SessionStatus, Unreachable,
};
use crate::dom::PageState;
use crate::environment::{ApprovalMode, Environment, PersonsOwn};
use crate::events::{Event, EventSink, Recording};
use crate::mcp::ClientView;
use crate::session::{log_line, Bare, Oversight, Session};
use crate::vision::ShotRequest;

/// The `session` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum SessionCommand {
    /// Start a named session in the background: a browser on URL that
    /// later commands use with `--session NAME`.
    Start(StartArgs),
    /// List the sessions: name, page, age, idle time, whether a person is
    /// attached (`tui --attach`), trace.
    List(ListArgs),
    /// Stop a session (or every one with --all): close its browser and
    /// remove its profile and files.
    Stop(StopArgs),
    /// Be the session process (what `session start` runs).
    #[command(hide = true)]
    Serve(StartArgs),
}

/// Flags of `webagent session start`.
#[derive(Debug, Clone, clap::Args)]
pub struct StartArgs {
    /// The session's name (letters, digits, `-`, `_`).
    pub name: String,
    /// The first page (default: a blank page).
    #[arg(value_parser = parse_page_url)]
    pub url: Option<String>,
    /// When to ask before an action a command sends: never, risky (commit
    /// and dangerous actions) or always. A person attached with `tui
    /// --attach` is asked; with nobody attached asking means refusing
    /// (exit 3) unless --yes (default: config `agent.approve`, risky).
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub approve: Option<ApprovalMode>,
    /// Approve every action that would need approval while no person is
    /// attached.
    #[arg(long)]
    pub yes: bool,
    /// Accept confirm() and prompt() dialogs instead of dismissing them.
    #[arg(long)]
    pub accept_dialogs: bool,
    /// How long a click or fill keeps waiting for its element to be ready.
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    pub timeout_ms: u64,
    /// Config, scripts, sitemaps, secrets, browser.
    #[command(flatten)]
    pub session: SessionFlags,
}

/// Flags of `webagent session list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// One JSON object per session instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// Flags of `webagent session stop`.
#[derive(Debug, clap::Args)]
pub struct StopArgs {
    /// The session to stop.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub name: Option<String>,
    /// Stop every session.
    #[arg(long)]
    pub all: bool,
}

/// Runs a `session` subcommand.
pub fn run(command: SessionCommand) -> anyhow::Result<ExitCode> {
    match command {
        SessionCommand::Start(args) => start(&args),
        SessionCommand::List(args) => Ok(list(&args)),
        SessionCommand::Stop(args) => Ok(stop(&args)),
        SessionCommand::Serve(args) => serve(args),
    }
}

/// Whether process `pid` runs (a zombie does not).
fn process_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let rest = stat.get(stat.rfind(')')? + 2..)?;
            rest.split_whitespace().next().map(|state| state != "Z")
        })
        .unwrap_or(false)
}

/// The command line of the session process: this one's, with `serve`
/// for `start` (every flag `start` took, the session process takes).
fn serve_arguments() -> Vec<OsString> {
    let mut arguments: Vec<OsString> = std::env::args_os().skip(1).collect();
    let after = arguments
        .iter()
        .position(|a| a == "session")
        .map_or(0, |i| i + 1);
    if let Some(word) = arguments.iter_mut().skip(after).find(|a| *a == "start") {
        *word = OsString::from("serve");
    }
    arguments
}

fn start(args: &StartArgs) -> anyhow::Result<ExitCode> {
    if let Err(error) = valid_name(&args.name) {
        eprintln!("error: {error}");
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let files = SessionFiles::named(&args.name);
    match call(&files, &Request::Status) {
        Ok(_) => {
            eprintln!(
                "error: session `{}` is already running; stop it first (`webagent session stop {}`) or pick another name",
                args.name, args.name
            );
            return Ok(ExitCode::from(EXIT_USAGE));
        }
        // What a dead session left is cleared for the new one.
        Err(Unreachable::Gone { .. }) => files.remove(),
        Err(Unreachable::NoSession { .. }) => {}
    }
    if let Err(error) = files.create_dir() {
        eprintln!("error: creating {}: {error}", run_dir().display());
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let log = std::fs::File::create(&files.log)
        .map_err(|e| anyhow::anyhow!("creating {}: {e}", files.log.display()))?;
    let exe =
        std::env::current_exe().map_err(|e| anyhow::anyhow!("finding the webagent binary: {e}"))?;
    let mut child = std::process::Command::new(exe)
        .args(serve_arguments())
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        // Its own process group: a Ctrl-C meant for the caller's shell
        // does not end the session.
        .process_group(0)
        .spawn()
        .map_err(|e| anyhow::anyhow!("starting the session process: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let mut said = String::new();
            let _ = std::fs::File::open(&files.log).and_then(|mut f| f.read_to_string(&mut said));
            eprint!("{said}");
            eprintln!("error: session `{}` did not start", args.name);
            let code = status.code().and_then(|c| u8::try_from(c).ok());
            return Ok(ExitCode::from(code.filter(|c| *c != 0).unwrap_or(1)));
        }
        if let Ok(reply) = call(&files, &Request::Status) {
            let url = reply.status.map(|s| s.url).unwrap_or_default();
            let trace = files.read_meta().map(|m| m.trace).unwrap_or_default();
            println!("session {} started on {url}", args.name);
            println!("trace: {}", trace.display());
            return Ok(ExitCode::SUCCESS);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            eprintln!(
                "error: session `{}` did not answer within 120 s; its log is {}",
                args.name,
                files.log.display()
            );
            return Ok(ExitCode::FAILURE);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn list(args: &ListArgs) -> ExitCode {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut rows = Vec::new();
    for files in SessionFiles::all_in(&run_dir()) {
        let Some(meta) = files.read_meta() else {
            continue;
        };
        let status = call(&files, &Request::Status).ok().and_then(|r| r.status);
        rows.push((meta, status));
    }
    if args.json {
        for (meta, status) in &rows {
            let line = serde_json::json!({
                "name": meta.name,
                "pid": meta.pid,
                "url": status.as_ref().map_or(meta.url.as_str(), |s| s.url.as_str()),
                "age_secs": now.saturating_sub(meta.started),
                "idle_secs": status.as_ref().map(|s| s.idle_secs),
                "busy": status.as_ref().map(|s| s.busy),
                "attached": status.as_ref().map(|s| s.attached),
                "alive": status.is_some(),
                "trace": meta.trace,
            });
            println!("{line}");
        }
        return ExitCode::SUCCESS;
    }
    if rows.is_empty() {
        println!("no sessions (start one with `webagent session start NAME URL`)");
        return ExitCode::SUCCESS;
    }
    println!("NAME  AGE  IDLE  PERSON  URL  TRACE");
    for (meta, status) in &rows {
        let age = human_secs(now.saturating_sub(meta.started));
        match status {
            Some(status) => println!(
                "{}  {age}  {}  {}  {}  {}",
                meta.name,
                if status.busy {
                    "busy".to_string()
                } else {
                    human_secs(status.idle_secs)
                },
                if status.attached { "attached" } else { "-" },
                status.url,
                meta.trace.display()
            ),
            None => println!(
                "{}  {age}  gone  -  {}  {}",
                meta.name,
                meta.url,
                meta.trace.display()
            ),
        }
    }
    ExitCode::SUCCESS
}

/// `95` → `1m35s`.
fn human_secs(secs: u64) -> String {
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60),
    }
}

fn stop(args: &StopArgs) -> ExitCode {
    let sessions = match &args.name {
        Some(name) => {
            if let Err(error) = valid_name(name) {
                eprintln!("error: {error}");
                return ExitCode::from(EXIT_USAGE);
            }
            vec![SessionFiles::named(name)]
        }
        None => SessionFiles::all_in(&run_dir()),
    };
    let mut code = ExitCode::SUCCESS;
    for files in sessions {
        let pid = files.read_meta().map(|m| m.pid);
        match call(&files, &Request::Stop) {
            Ok(_) => {
                // The process closes its browser and removes its profile
                // and files, then ends: wait for that, so a command after
                // `stop` finds it all gone.
                let deadline = Instant::now() + Duration::from_secs(30);
                while pid.is_some_and(process_alive) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(25));
                }
                println!("stopped session {}", files.name);
            }
            Err(error @ Unreachable::NoSession { .. }) => {
                eprintln!("error: {error}");
                code = ExitCode::from(EXIT_NO_SESSION);
            }
            Err(Unreachable::Gone { trace, .. }) => {
                files.remove();
                let trace = trace.map(|t| format!("; its trace is {}", t.display()));
                println!(
                    "session {} was already gone; removed its files{}",
                    files.name,
                    trace.unwrap_or_default()
                );
            }
        }
    }
    code
}

/// What the session process keeps between requests.
struct Held {
    session: Session,
    /// What the commands have been shown, in the session's numbering.
    view: ClientView,
    /// The page last observed, in the page's own numbering.
    last: Option<PageState>,
    /// Approve what would need approval (`start --yes`).
    yes: bool,
    /// Steps recorded in the trace so far, so `exec`'s actions number on.
    steps: usize,
    /// The person watching from the workbench, if any.
    attachment: Attachment,
    /// Straight to the trace, past the attached workbench.
    to_trace: mpsc::UnboundedSender<Event>,
}

/// What `session list` reads while a command runs.
#[derive(Debug)]
struct Shared {
    url: String,
    last_command: Instant,
    busy: bool,
}

/// What the session's one queue runs.
enum Work {
    /// A command's request.
    Command(Request),
    /// A workbench attached: have a page to show it.
    Show,
    /// An action the attached person typed, in the session's numbering.
    Act(Action),
    /// The attached person's mouse or keys on the page pane.
    Pointer(PaneInput),
}

type Job = (Work, oneshot::Sender<Reply>);

fn serve(args: StartArgs) -> anyhow::Result<ExitCode> {
    let files = SessionFiles::named(&args.name);
    let prepared =
        match args
            .session
            .prepare_for_actions(args.approve, args.timeout_ms, args.accept_dialogs)
        {
            Ok(prepared) => prepared,
            Err(code) => return Ok(code),
        };
    let idle = Duration::from_secs(prepared.config.session.idle_timeout);
    let runtime = session_runtime()?;
    runtime.block_on(async move {
        let attachment = Attachment::new();
        let (events, teed) = mpsc::unbounded_channel();
        let (to_trace, events_rx) = mpsc::unbounded_channel();
        tokio::spawn(tee_events(teed, to_trace.clone(), attachment.clone()));
        let (mut session, trace) =
            match super::headless::start_traced(prepared, args.url.as_deref(), events).await {
                Ok(started) => started,
                Err(code) => return Ok(code),
            };
        let trace_path = trace.path().to_path_buf();
        let printer = tokio::spawn(crate::session::print_events(events_rx, trace, false));
        if let Err(error) = &session.opened {
            eprintln!("error: {error}");
            session.close().await;
            return Ok(ExitCode::FAILURE);
        }
        let listener = match bind(&files) {
            Ok(listener) => listener,
            Err(error) => {
                eprintln!("error: {error}");
                session.close().await;
                return Ok(ExitCode::FAILURE);
            }
        };
        let url = session.environment.current_url().await.unwrap_or_default();
        let meta = SessionMeta {
            name: args.name.clone(),
            pid: std::process::id(),
            url: url.clone(),
            started: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            trace: absolute(&trace_path),
            log: absolute(&files.log),
        };
        if let Err(error) = files.write_meta(&meta) {
            eprintln!("error: writing {}: {error}", files.meta.display());
        }
        let shared = Arc::new(Mutex::new(Shared {
            url,
            last_command: Instant::now(),
            busy: false,
        }));
        let (jobs, queue) = mpsc::unbounded_channel::<Job>();
        let accepting = tokio::spawn(accept(
            listener,
            jobs,
            Arc::clone(&shared),
            attachment.clone(),
        ));
        let mut view = ClientView::new(false);
        view.mirror_into(attachment.numbering());
        let held = Held {
            session,
            view,
            last: None,
            yes: args.yes,
            steps: 0,
            attachment,
            to_trace,
        };
        let (held, why) = work(held, queue, &shared, idle).await;
        accepting.abort();
        // The socket goes first, so no command is sent to a session that
        // is closing; then the browser and its profile.
        files.remove();
        // The trace ends once every sender to it is gone: the session's
        // sink (through the tee) and the straight one the person's
        // actions use.
        let Held {
            session, to_trace, ..
        } = held;
        drop(to_trace);
        session.close().await;
        let _ = printer.await;
        eprintln!("session {} ended: {why}", args.name);
        Ok(ExitCode::SUCCESS)
    })
}

/// The session process's runtime: this one thread. The session runs one
/// job at a time and otherwise waits on its socket and its browser, so
/// worker threads would only hold memory (a stack each, and in glibc a
/// malloc arena each) through the idle hours that are most of its life.
fn session_runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| anyhow::anyhow!("starting the async runtime: {e}"))
}

/// Passes the session's events on to its trace, and a copy to the
/// attached workbench.
async fn tee_events(
    mut events: mpsc::UnboundedReceiver<Event>,
    to_trace: mpsc::UnboundedSender<Event>,
    attachment: Attachment,
) {
    while let Some(event) = events.recv().await {
        if attachment.attached() {
            attachment.push(News::Event {
                event: Box::new(event.clone()),
            });
        }
        if to_trace.send(event).is_err() {
            break;
        }
    }
}

/// Binds the session's socket, owner-only (0600), in its owner-only
/// folder. A socket file no process answers on is left from a session
/// that died, and is replaced.
fn bind(files: &SessionFiles) -> Result<UnixListener, String> {
    files
        .create_dir()
        .map_err(|e| format!("creating {}: {e}", run_dir().display()))?;
    if files.socket.exists() {
        if std::os::unix::net::UnixStream::connect(&files.socket).is_ok() {
            return Err(format!("session `{}` is already running", files.name));
        }
        let _ = std::fs::remove_file(&files.socket);
    }
    let listener = UnixListener::bind(&files.socket)
        .map_err(|e| format!("listening on {}: {e}", files.socket.display()))?;
    std::fs::set_permissions(&files.socket, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("making {} owner-only: {e}", files.socket.display()))?;
    Ok(listener)
}

/// Accepts connections, each answered on a task of its own.
async fn accept(
    listener: UnixListener,
    jobs: mpsc::UnboundedSender<Job>,
    shared: Arc<Mutex<Shared>>,
    attachment: Attachment,
) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(connection(
                    stream,
                    jobs.clone(),
                    Arc::clone(&shared),
                    attachment.clone(),
                ));
            }
            Err(error) => tracing::warn!(%error, "accepting a session connection"),
        }
    }
}

/// Answers the requests of one connection: a status at once, anything
/// else through the session's one queue; an attach keeps the connection
/// for the workbench.
async fn connection(
    stream: UnixStream,
    jobs: mpsc::UnboundedSender<Job>,
    shared: Arc<Mutex<Shared>>,
    attachment: Attachment,
) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let reply = match serde_json::from_str::<Request>(&line) {
            Ok(Request::Attach) => {
                let url = shared
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .url
                    .clone();
                return attached(lines, write, jobs, attachment, url).await;
            }
            Err(error) => Reply {
                stderr: format!("error: the request did not read: {error}\n"),
                code: EXIT_USAGE,
                ..Reply::default()
            },
            Ok(Request::Status) => {
                let shared = shared.lock().unwrap_or_else(PoisonError::into_inner);
                Reply {
                    status: Some(SessionStatus {
                        url: shared.url.clone(),
                        idle_secs: shared.last_command.elapsed().as_secs(),
                        busy: shared.busy,
                        attached: attachment.attached(),
                    }),
                    ..Reply::default()
                }
            }
            Ok(request) => {
                let (answer, answered) = oneshot::channel();
                let sent = jobs.send((Work::Command(request), answer)).is_ok();
                match answered.await {
                    Ok(reply) if sent => reply,
                    _ => Reply {
                        stderr: "error: the session ended before running this command\n"
                            .to_string(),
                        code: EXIT_SESSION_GONE,
                        ..Reply::default()
                    },
                }
            }
        };
        let Ok(mut text) = serde_json::to_string(&reply) else {
            break;
        };
        text.push('\n');
        if write.write_all(text.as_bytes()).await.is_err() {
            break;
        }
    }
}

/// Writes one JSON line; `false` when the other end is gone.
async fn send_line<T: serde::Serialize>(
    write: &mut tokio::net::unix::OwnedWriteHalf,
    message: &T,
) -> bool {
    let Ok(mut text) = serde_json::to_string(message) else {
        return false;
    };
    text.push('\n');
    write.write_all(text.as_bytes()).await.is_ok()
}

/// Serves the workbench attached on this connection: the session's news
/// out, the person's actions, messages and decisions in, until it hangs
/// up; then the person is detached (a pending decision is refused, saying
/// so). Only one workbench is attached at a time.
async fn attached(
    mut lines: tokio::io::Lines<BufReader<tokio::net::unix::OwnedReadHalf>>,
    mut write: tokio::net::unix::OwnedWriteHalf,
    jobs: mpsc::UnboundedSender<Job>,
    attachment: Attachment,
    url: String,
) {
    let Some(mut news) = attachment.attach() else {
        let refused = Reply {
            stderr: "error: a workbench is attached to this session already; detach it (q) first\n"
                .to_string(),
            code: EXIT_REFUSED,
            ..Reply::default()
        };
        send_line(&mut write, &refused).await;
        return;
    };
    let welcome = Reply {
        status: Some(SessionStatus {
            url,
            idle_secs: 0,
            busy: false,
            attached: true,
        }),
        ..Reply::default()
    };
    if send_line(&mut write, &welcome).await {
        // The page comes as news once the queue gets to it.
        let (answer, _) = oneshot::channel();
        let _ = jobs.send((Work::Show, answer));
        loop {
            tokio::select! {
                pushed = news.recv() => match pushed {
                    Some(pushed) if send_line(&mut write, &pushed).await => {}
                    _ => break,
                },
                line = lines.next_line() => {
                    let Ok(Some(line)) = line else { break };
                    match serde_json::from_str::<Says>(&line) {
                        Ok(Says::Act { id, action }) => {
                            let (answer, answered) = oneshot::channel();
                            if jobs.send((Work::Act(action), answer)).is_err() {
                                break;
                            }
                            let attachment = attachment.clone();
                            tokio::spawn(async move {
                                if let Ok(reply) = answered.await {
                                    attachment.push(action_done(id, &reply));
                                }
                            });
                        }
                        Ok(Says::Steer { text }) => attachment.steer(text),
                        Ok(Says::Decide { id, decision }) => attachment.decide(id, decision),
                        Ok(Says::Answer { id, answer }) => attachment.answer(id, answer),
                        Ok(Says::ShowPage { shown }) => {
                            attachment.show_page(shown);
                            // The picture of the page now comes once the
                            // queue gets to it.
                            let (answer, _) = oneshot::channel();
                            if shown && jobs.send((Work::Show, answer)).is_err() {
                                break;
                            }
                        }
                        Ok(Says::Pointer { input }) => {
                            let (answer, _) = oneshot::channel();
                            if jobs.send((Work::Pointer(input), answer)).is_err() {
                                break;
                            }
                        }
                        Err(error) => tracing::warn!(%error, "a workbench message did not read"),
                    }
                }
            }
        }
    }
    attachment.detach();
}

/// The news of the person's action `id` from its `exec` reply (one JSON
/// line: its result and time).
fn action_done(id: u64, reply: &Reply) -> News {
    let line: serde_json::Value = reply
        .stdout
        .lines()
        .next()
        .and_then(|line| serde_json::from_str(line).ok())
        .unwrap_or_default();
    let result = serde_json::from_value::<ActionResult>(line["result"].clone())
        .unwrap_or_else(|_| ActionResult::unknown(reply.stderr.trim().to_string()));
    News::ActionDone {
        id,
        result,
        ms: line["ms"].as_f64().unwrap_or_default().round() as u64,
    }
}

/// Runs the queued requests one after the other until a `stop`, the idle
/// timeout, a signal or the browser's end; gives the session back with
/// why it ends.
async fn work(
    mut held: Held,
    mut queue: mpsc::UnboundedReceiver<Job>,
    shared: &Mutex<Shared>,
    idle: Duration,
) -> (Held, String) {
    let mut terminate =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    loop {
        let since = shared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .last_command;
        let left = idle.saturating_sub(since.elapsed());
        tokio::select! {
            job = queue.recv() => {
                let Some((request, answer)) = job else {
                    return (held, "its socket closed".to_string());
                };
                shared.lock().unwrap_or_else(PoisonError::into_inner).busy = true;
                let (reply, end) = match request {
                    Work::Command(request) => answer_request(&mut held, request).await,
                    Work::Show => (Reply::default(), None),
                    Work::Act(action) => answer_person(&mut held, &action).await,
                    Work::Pointer(input) => {
                        pointer(&mut held, input).await;
                        (Reply::default(), None)
                    }
                };
                if end.is_none() {
                    show_page(&mut held).await;
                }
                let url = held.session.environment.current_url().await.unwrap_or_default();
                {
                    let mut shared = shared.lock().unwrap_or_else(PoisonError::into_inner);
                    shared.busy = false;
                    shared.last_command = Instant::now();
                    if !url.is_empty() {
                        shared.url = url;
                    }
                }
                let _ = answer.send(reply);
                #[cfg(all(target_os = "linux", target_env = "gnu"))]
                if queue.is_empty() {
                    // The reply goes out first: the connection's task
                    // writes it while this one yields.
                    tokio::task::yield_now().await;
                    give_back_freed_memory();
                }
                if let Some(why) = end {
                    return (held, why);
                }
            }
            () = tokio::time::sleep(left) => {
                if since.elapsed() >= idle {
                    return (held, format!("no command for {} s (session.idle_timeout)", idle.as_secs()));
                }
            }
            Some(()) = async {
                match terminate.as_mut() {
                    Some(signal) => signal.recv().await,
                    None => std::future::pending().await,
                }
            } => return (held, "it was sent SIGTERM".to_string()),
        }
    }
}

/// Hands the heap's free pages back to the system. The session waits
/// idle for most of its life holding little, while glibc's malloc keeps
/// the pages a big page's listing or a run freed until something else
/// needs them.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn give_back_freed_memory() {
    // SAFETY: malloc_trim takes the allocator's own locks and only
    // releases free pages; it touches no memory the program holds.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Sends the attached workbench the page in the session's numbering,
/// observing it first when no listing is current (after a run).
async fn show_page(held: &mut Held) {
    if !held.attachment.attached() {
        return;
    }
    if held.last.is_none() {
        let mut out = Output::kept();
        if let Ok(Some(page)) = observe_now(&mut held.session, &mut out).await {
            held.view.number(&page);
            held.last = Some(page);
        }
    }
    if let Some(page) = &held.last {
        held.attachment.push(News::Page {
            page: Box::new(held.view.numbered(page)),
        });
    }
    if held.attachment.wants_pictures() {
        // Marked with the indices of the listing just sent.
        let mut request = ShotRequest::step(held.session.config.llm.image_width);
        request.labels = held.view.labels();
        match held.session.environment.screenshot(&request).await {
            Ok(shot) => held.attachment.push(News::Picture {
                picture: Box::new(Picture::of(&shot)),
            }),
            Err(error) => tell_person(held, format!("the page picture failed: {error}")),
        }
    }
}

/// Says `text` to the attached person only (a notice in the workbench),
/// not to the trace.
fn tell_person(held: &Held, text: String) {
    held.attachment.push(News::Event {
        event: Box::new(Event::Error {
            error: text,
            fatal: false,
        }),
    });
}

/// The attached person's mouse or keys on the page pane, sent to the
/// session's page as the workbench with its own browser sends them; the
/// page is looked at again after it.
async fn pointer(held: &mut Held, input: PaneInput) {
    let tab = held.session.environment.inner().inner().tab();
    if let Err(error) = input.send(tab).await {
        tell_person(
            held,
            format!("the page did not take the mouse or the keys: {error}"),
        );
    }
    held.last = None;
}

/// Runs an action the attached person typed, as `exec --session` runs
/// one: choosing it was their approval. Its reply is one JSON line; its
/// step goes to the trace only, as the workbench logs it already.
async fn answer_person(held: &mut Held, action: &Action) -> (Reply, Option<String>) {
    let request = Request::Exec {
        actions: vec![action.to_json().to_string()],
        json: true,
        observe: false,
        screenshot: None,
    };
    let quiet = held.session.events.sending_to(held.to_trace.clone());
    let loud = std::mem::replace(&mut held.session.events, quiet);
    let answered = answer_as(
        held,
        request,
        Arc::new(|| {
            Box::new(PersonsOwn::new(
                "typed by the person attached in the workbench",
            )) as Box<dyn crate::environment::Approver>
        }),
    )
    .await;
    held.session.events = loud;
    answered
}

/// Runs one request on the session, its output kept; gives the reply and,
/// when the session must end after it, why.
async fn answer_request(held: &mut Held, request: Request) -> (Reply, Option<String>) {
    let approvers = held.attachment.approvers(held.yes);
    answer_as(held, request, approvers).await
}

/// Runs one request on the session with `approvers` deciding what needs
/// approval.
async fn answer_as(
    held: &mut Held,
    request: Request,
    approvers: crate::session::ApproverFactory,
) -> (Reply, Option<String>) {
    let mut out = Output::kept();
    let mut end = None;
    let code = match request {
        // Neither reaches the queue: the connection answers them.
        Request::Status | Request::Attach => 0,
        Request::Stop => {
            out.line("stopping");
            end = Some("`webagent session stop`".to_string());
            0
        }
        Request::Observe {
            json,
            delta,
            screenshot,
        } => {
            let asked = SessionObserve {
                json,
                delta,
                screenshot: screenshot.as_deref(),
            };
            let observed = observe_in_session(
                &asked,
                &mut held.session,
                &mut held.view,
                &mut held.last,
                &mut out,
            )
            .await;
            match observed {
                Ok(code) => code,
                Err(error) => {
                    out.err(&format!(
                        "error: the session's browser is gone: {}",
                        error.message
                    ));
                    end = Some(format!("its browser is gone: {}", error.message));
                    EXIT_SESSION_GONE
                }
            }
        }
        Request::Exec {
            actions,
            json,
            observe,
            screenshot,
        } => {
            if held.last.is_none() {
                // No listing yet, or the last command's action left the
                // page unknown: the indices are read against the page as
                // it is now.
                match observe_now(&mut held.session, &mut out).await {
                    Ok(page) => {
                        if let Some(page) = &page {
                            held.view.number(page);
                        }
                        held.last = page;
                    }
                    Err(error) => {
                        out.err(&format!(
                            "error: the session's browser is gone: {}",
                            error.message
                        ));
                        let why = format!("its browser is gone: {}", error.message);
                        return (reply_of(out, EXIT_SESSION_GONE), Some(why));
                    }
                }
            }
            let request = ExecRequest {
                actions: &actions,
                json,
                observe,
                screenshot: screenshot.as_deref(),
                approvers,
                steps_after: Some(held.steps),
            };
            let done = exec_actions(
                &request,
                &mut held.session,
                &mut held.last,
                Some(&mut held.view),
                &mut out,
            )
            .await;
            held.steps += done.steps;
            if let Some(error) = &done.gone {
                end = Some(format!("its browser is gone: {}", error.message));
                EXIT_SESSION_GONE
            } else if done.refused {
                EXIT_REFUSED
            } else if done.all_ok {
                0
            } else {
                1
            }
        }
        Request::Run { task, json } => {
            if let Err(error) = held.session.model() {
                out.err(&format!("error: {error}"));
                return (reply_of(out, EXIT_USAGE), None);
            }
            let recording = Recorded::start(&mut held.session);
            let oversight = Oversight {
                approvers,
                steering: Some(held.attachment.steering()),
                ..Oversight::headless(held.yes)
            };
            let outcome = held
                .session
                .run_agent(&task, Prior::fresh(), oversight, &Bare)
                .await;
            recording.finish(&mut held.session, json, &mut out);
            // The run observed on its own: the next command looks again.
            held.last = None;
            match outcome {
                Ok(outcome) => run_exit_code(outcome.reason, outcome.success),
                Err(error) => {
                    out.err(&format!("error: {error}"));
                    1
                }
            }
        }
        Request::Recipe {
            file,
            recipe,
            params,
            json,
            no_heal,
        } => {
            let asked = SessionRecipe {
                file: &file,
                recipe: recipe.as_deref(),
                params: &params,
                no_heal,
                approvers,
            };
            let recording = Recorded::start(&mut held.session);
            let ran = recipe_in_session(&mut held.session, &asked).await;
            recording.finish(&mut held.session, json, &mut out);
            held.last = None;
            match ran {
                Ok(true) => 0,
                Ok(false) => 1,
                Err(why) => {
                    out.err(&format!("error: {why}"));
                    EXIT_USAGE
                }
            }
        }
        Request::SaveState { path } => match held.session.save_state(path.as_deref()).await {
            Ok(said) => {
                out.line(&said);
                0
            }
            Err(error) => {
                out.err(&format!("error: {error}"));
                1
            }
        },
    };
    (reply_of(out, code), end)
}

/// The events of one command's run, kept besides the session's trace so
/// the client prints them as the one-shot command would.
struct Recorded {
    /// The session's own sink, put back when the run ends.
    sink: EventSink,
    recording: Recording,
}

impl Recorded {
    fn start(session: &mut Session) -> Recorded {
        let (copying, recording) = session.events.recording();
        let sink = std::mem::replace(&mut session.events, copying);
        Recorded { sink, recording }
    }

    /// Puts the session's sink back and says what the run did: one JSON
    /// line per event with `json`, the step log otherwise.
    fn finish(self, session: &mut Session, json: bool, out: &mut Output) {
        session.events = self.sink;
        for event in self.recording.take() {
            if !event.is_kept() {
                continue;
            }
            if json {
                match event.to_json_line() {
                    Ok(line) => out.line(&line),
                    Err(error) => out.err(&format!("warning: {error}")),
                }
            } else if let Some(line) = log_line(&event) {
                out.line(&line);
            }
        }
    }
}

fn reply_of(out: Output, code: u8) -> Reply {
    let (stdout, stderr) = out.into_parts();
    Reply {
        stdout,
        stderr,
        code,
        status: None,
    }
}
