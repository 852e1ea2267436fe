//! A person watching a session from the workbench (`tui --attach`) in a
//! real terminal (tmux): a command's commit action waits for their
//! decision in the approval modal, a run's question waits for their
//! answer, `session list` shows them, the page pane shows the session's
//! page and takes clicks for it, and leaving with `q` leaves the session
//! going.

use std::process::Output;
use std::sync::mpsc::Receiver;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::chromium::runtime;
use crate::support::cli::said;
use crate::support::listing::index_of;
use crate::support::llm_server::{step_reply, LlmServer};
use crate::support::pages::page;
use crate::support::tmux::{
    require_tmux_and_chromium, tmux_keys, tmux_paste, tmux_start, tmux_text, wait_for_screen,
    TmuxSession,
};
use crate::{finished, server, until, Sessions};

/// Serves a page whose button submits a form (a commit action) and the
/// page it leads to; gives the first one's address.
fn send_page(path: &str) -> String {
    let server = server();
    let sent = format!("{path}-sent");
    server.html(
        path,
        page(
            "Send",
            &format!(
                "<form action=\"{sent}\"><button type=submit>Send</button></form>\
                 <a href=\"{sent}\">Elsewhere</a>"
            ),
        ),
    );
    server.html(&sent, page("Sent", "<p>Sent.</p>"));
    server.url(path)
}

/// Opens the workbench attached to session `name`, with `extra` flags,
/// in tmux session `pane`.
fn open_workbench(s: &Sessions, name: &str, pane: &str, extra: &str) -> TmuxSession {
    let guard = TmuxSession(pane.to_string());
    let command = format!(
        "cd {home} && XDG_RUNTIME_DIR={runtime} {bin} --log-file tui.log tui --attach {name} {extra}",
        home = s.home.display(),
        runtime = s.runtime_dir.display(),
        bin = env!("CARGO_BIN_EXE_webagent"),
    );
    tmux_start(pane, &command);
    guard
}

/// Opens the workbench attached to session `name` in tmux session
/// `pane`, and waits until it says so.
fn attach(s: &Sessions, name: &str, pane: &str) -> TmuxSession {
    let guard = open_workbench(s, name, pane, "");
    runtime().block_on(wait_for_screen(
        pane,
        &format!("attached to session {name}"),
    ));
    guard
}

/// Runs `webagent ARGS` on a thread of its own: the test answers in the
/// workbench meanwhile.
fn in_background(s: &Sessions, args: &[&str]) -> Receiver<Option<Output>> {
    let command = s.command(args);
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(finished(command, Duration::from_secs(60)));
    });
    receiver
}

/// What the command started by [`in_background`] did.
fn ended(receiver: &Receiver<Option<Output>>) -> Output {
    receiver
        .recv()
        .expect("the command's thread answers")
        .expect("the command ended within 60 s")
}

/// Whether `session list` shows session `name` with a person attached.
fn listed_attached(s: &Sessions, name: &str) -> bool {
    s.ok(&["session", "list", "--json"])
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .any(|row| row["name"] == name && row["attached"] == true)
}

#[test]
fn a_command_s_commit_action_waits_for_the_attached_person_approved_then_refused() {
    require_tmux_and_chromium();
    let url = send_page("/attach-approve");
    let s = Sessions::new("attach");
    s.start("w", &url, &[]);
    let pane = format!("wa-attach-approve-{}", std::process::id());
    let _workbench = attach(&s, "w", &pane);

    let listing = s.ok(&["observe", "--session", "w"]);
    let send = format!("click {}", index_of(&listing, ">Send<"));
    let approved = in_background(&s, &["exec", "--session", "w", &send]);
    runtime().block_on(wait_for_screen(&pane, "Approve step"));
    // The page is the session's: the picker says it cannot read it, and
    // Esc comes back to the approval, still waiting.
    tmux_keys(&pane, &["L"]);
    runtime().block_on(wait_for_screen(
        &pane,
        "an attached workbench has no locator picker",
    ));
    tmux_keys(&pane, &["Escape"]);
    runtime().block_on(wait_for_screen(&pane, "Approve step"));
    tmux_keys(&pane, &["y"]);
    let output = ended(&approved);
    assert_eq!(output.status.code(), Some(0), "{}", said(&output));
    let after = s.ok(&["observe", "--session", "w"]);
    assert!(after.contains("Sent."), "{after}");

    s.ok(&["exec", "--session", "w", &format!("navigate {url}")]);
    let listing = s.ok(&["observe", "--session", "w"]);
    let send = format!("click {}", index_of(&listing, ">Send<"));
    let refused = in_background(&s, &["exec", "--session", "w", &send]);
    runtime().block_on(wait_for_screen(&pane, "Approve step"));
    tmux_keys(&pane, &["n"]);
    let output = ended(&refused);
    assert_eq!(output.status.code(), Some(3), "{}", said(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("the person skipped this action"),
        "{}",
        said(&output)
    );
    let still = s.ok(&["observe", "--session", "w"]);
    assert!(still.contains(">Send<"), "{still}");
}

#[test]
fn session_list_shows_the_person_and_q_detaches_leaving_the_session_going() {
    require_tmux_and_chromium();
    let url = send_page("/attach-detach");
    let s = Sessions::new("detach");
    s.start("d", &url, &[]);
    assert!(!listed_attached(&s, "d"));
    let pane = format!("wa-attach-detach-{}", std::process::id());
    let workbench = attach(&s, "d", &pane);
    assert!(listed_attached(&s, "d"));
    // A second workbench is refused while one watches.
    let second = s.run(&["tui", "--attach", "d"]);
    assert_eq!(second.status.code(), Some(3), "{}", said(&second));

    // The person's own `:` action runs in the session.
    let listing = s.ok(&["observe", "--session", "d"]);
    let elsewhere = index_of(&listing, "Elsewhere");
    tmux_keys(&pane, &[":"]);
    tmux_text(&pane, &format!("click {elsewhere}"));
    tmux_keys(&pane, &["Enter"]);
    runtime().block_on(wait_for_screen(&pane, "no interactive elements"));
    let moved = s.ok(&["observe", "--session", "d"]);
    assert!(moved.contains("Sent."), "{moved}");

    tmux_keys(&pane, &["q"]);
    assert!(
        until(Duration::from_secs(30), || !listed_attached(&s, "d")),
        "the session still lists a person after q"
    );
    drop(workbench);
    s.ok(&["exec", "--session", "d", &format!("navigate {url}")]);
    let back = s.ok(&["observe", "--session", "d"]);
    assert!(back.contains(">Send<"), "{back}");

    // Leaving while a decision is pending refuses it, saying so.
    let pane = format!("wa-attach-leave-{}", std::process::id());
    let _workbench = attach(&s, "d", &pane);
    let send = format!("click {}", index_of(&back, ">Send<"));
    let pending = in_background(&s, &["exec", "--session", "d", &send]);
    runtime().block_on(wait_for_screen(&pane, "Approve step"));
    tmux_keys(&pane, &["C-c"]);
    let output = ended(&pending);
    assert_eq!(output.status.code(), Some(3), "{}", said(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("detached before deciding"),
        "{}",
        said(&output)
    );
}

/// A button as big as the page, so any point of the picture is on it.
const BIG_BUTTON: &str = r#"<!doctype html><title>Big</title>
<style>body{margin:0} button{width:100vw;height:100vh;font-size:40px}</style>
<button type="button" onclick="this.textContent='clicked'">Big</button>"#;

#[test]
fn the_attached_page_pane_follows_the_session_s_commands_and_a_click_on_it_clicks_there() {
    require_tmux_and_chromium();
    let two = send_page("/attach-pane");
    server().html("/attach-big", BIG_BUTTON);
    let big = server().url("/attach-big");
    let s = Sessions::new("pane");
    s.start("p", &two, &[]);
    let pane = format!("wa-attach-pane-{}", std::process::id());
    let _workbench = attach(&s, "p", &pane);

    // v opens the pane: the session's page, its two listed elements
    // marked, the one under the cursor outlined.
    tmux_keys(&pane, &["v"]);
    runtime().block_on(wait_for_screen(&pane, "· 2 marks · [0] outlined"));
    // A command moves the session's page: the pane follows.
    s.ok(&["exec", "--session", "p", &format!("navigate {big}")]);
    let screen = runtime().block_on(wait_for_screen(&pane, "· 1 marks · [0] outlined"));

    // A click on the picture clicks the session's page. The picture
    // starts inside the pane's border; a cell a few rows and columns in
    // is on the button. SGR mouse reports count from 1.
    let (row, line) = screen
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("┌ Page"))
        .expect("the page pane");
    let column = line.chars().position(|c| c == '┌').expect("its corner");
    let (x, y) = (column + 6, row + 3);
    tmux_paste(&pane, &format!("\x1b[<0;{x};{y}M"));
    tmux_paste(&pane, &format!("\x1b[<0;{x};{y}m"));
    runtime().block_on(wait_for_screen(&pane, ">clicked</button>"));
    let listing = s.ok(&["observe", "--session", "p"]);
    assert!(listing.contains(">clicked</button>"), "{listing}");
}

#[test]
fn the_attached_workbench_s_theme_reloads_when_its_file_is_edited() {
    require_tmux_and_chromium();
    let url = send_page("/attach-theme");
    let s = Sessions::new("theme");
    s.start("t", &url, &[]);
    let theme = s.home.join("mine.yaml");
    std::fs::write(&theme, "name: mine\ncolors:\n  error: \"#ff0000\"\n").expect("writing");
    let pane = format!("wa-attach-theme-{}", std::process::id());
    let _workbench = open_workbench(&s, "t", &pane, &format!("--theme {}", theme.display()));
    runtime().block_on(wait_for_screen(&pane, "theme mine loaded"));
    // Edited while the workbench watches: the new one applies.
    std::fs::write(&theme, "name: edited\ncolors:\n  error: \"#00ff00\"\n").expect("writing");
    runtime().block_on(wait_for_screen(&pane, "theme edited loaded"));
}

#[test]
fn a_session_run_s_question_is_answered_by_the_attached_person() {
    require_tmux_and_chromium();
    let url = send_page("/attach-ask");
    let s = Sessions::new("ask");
    let llm = runtime().block_on(LlmServer::start(Vec::new()));
    let mut start = s.command(&["session", "start", "q", &url]);
    start
        .env("OPENAI_BASE_URL", llm.base_url())
        .env("OPENAI_API_KEY", "test")
        .env("WEBAGENT_MODEL", "scripted");
    let started = start.output().expect("session start runs");
    assert!(started.status.success(), "{}", said(&started));
    let pane = format!("wa-attach-ask-{}", std::process::id());
    let _workbench = attach(&s, "q", &pane);

    llm.push(step_reply(
        "ask which colour",
        json!({"ask_user": {"question": "Which colour should the order be?"}}),
    ));
    llm.push(step_reply(
        "report",
        json!({"done": {"text": "asked", "success": true}}),
    ));
    let run = in_background(&s, &["run", "pick a colour", "--session", "q"]);
    runtime().block_on(wait_for_screen(&pane, "The model asks"));
    tmux_text(&pane, "teal");
    tmux_keys(&pane, &["Enter"]);
    let output = ended(&run);
    assert!(output.status.success(), "{}", said(&output));
    let requests = llm.requests();
    let last = requests.last().expect("the model was asked twice");
    assert!(
        last.body.contains("teal"),
        "the answer reaches the model: {}",
        last.body
    );
}
