//! The workbench in a real terminal (tmux): the page pane's picture in
//! half blocks, and the demo end to end with a scripted model.

use serde_json::json;

use crate::support::scratch::scratch_dir;
use crate::support::tmux::{
    capture, require_tmux_and_chromium, settled_screen, settled_screen_where, tmux_keys,
    tmux_start, tmux_text, wait_for_screen, TmuxSession,
};
use crate::support::{llm_server, tmux};

/// The pane of a tmux session, as text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_pane_draws_the_marked_picture_in_half_blocks_in_tmux() {
    require_tmux_and_chromium();
    let dir = scratch_dir("page-pane");
    let session = TmuxSession(format!("webagent-tui-page-{}", std::process::id()));
    let command = format!(
        "cd {root} && {bin} --log-file {log} demo",
        root = env!("CARGO_MANIFEST_DIR"),
        bin = env!("CARGO_BIN_EXE_webagent"),
        log = dir.join("log").display(),
    );
    tmux_start(&session.0, &command);
    let screen = wait_for_screen(&session.0, "<button type=\"submit\">Sign in</button>").await;
    assert!(!screen.contains("Page 1024"), "hidden until asked for");

    // v shows the pane: the sign-in page's picture, its three listed
    // elements marked, the one under the cursor outlined.
    tmux_keys(&session.0, &["v"]);
    let screen = wait_for_screen(&session.0, "Page 1024×640 · 3 marks · [0] outlined").await;
    let picture_rows = screen
        .lines()
        .filter(|line| line.matches('▀').count() >= 30)
        .count();
    assert!(picture_rows >= 8, "half-blocks fill the pane:\n{screen}");
    // In colour: the page's white, the form's blue, the marks.
    let out = tmux::tmux(&session.0)
        .args(["capture-pane", "-e", "-p", "-t", &session.0])
        .output()
        .expect("capturing with colours");
    let coloured = String::from_utf8_lossy(&out.stdout).into_owned();
    let colours: std::collections::HashSet<&str> = coloured
        .split("\u{1b}[")
        .filter(|code| code.starts_with("48;2;") || code.starts_with("38;2;"))
        .filter_map(|code| code.split('m').next())
        .collect();
    assert!(
        colours.len() > 10,
        "a picture, not a flat fill: {colours:?}"
    );

    // The cursor moves on: the outline follows it.
    tmux_keys(&session.0, &["j"]);
    wait_for_screen(&session.0, "· [1] outlined").await;
    // v again gives the sitemap its place back.
    tmux_keys(&session.0, &["v"]);
    let screen = wait_for_screen(&session.0, "Sitemap acme.yaml").await;
    assert!(!screen.contains("Page 1024"), "{screen}");
    tmux_keys(&session.0, &["q"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_command_shows_why_above_the_open_line_and_runs_once_corrected() {
    require_tmux_and_chromium();
    let dir = scratch_dir("refused-command");
    let session = TmuxSession(format!("webagent-tui-refused-{}", std::process::id()));
    let command = format!(
        "cd {root} && {bin} --log-file {log} demo",
        root = env!("CARGO_MANIFEST_DIR"),
        bin = env!("CARGO_BIN_EXE_webagent"),
        log = dir.join("log").display(),
    );
    tmux_start(&session.0, &command);
    wait_for_screen(&session.0, "<button type=\"submit\">Sign in</button>").await;
    tmux_keys(&session.0, &[":"]);
    tmux_text(&session.0, "input_tex 0 \"admin@acme.test\"");
    tmux_keys(&session.0, &["Enter"]);
    // The reason shows while the line is open, the line just below it.
    let screen = wait_for_screen(&session.0, "unknown action `input_tex`").await;
    let rows: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    let [.., reason, line] = rows.as_slice() else {
        panic!("two rows at least:\n{screen}");
    };
    assert!(
        reason.contains("did you mean: input_text?"),
        "the reason, above the line:\n{screen}"
    );
    assert!(
        line.starts_with(":input_tex 0 \"admin@acme.test\""),
        "the line stays as typed:\n{screen}"
    );
    assert!(screen.contains("nothing ran yet"), "{screen}");
    // Corrected in place, it runs and the line closes.
    tmux_keys(&session.0, &["Home"]);
    for _ in 0.."input_tex".len() {
        tmux_keys(&session.0, &["Right"]);
    }
    tmux_text(&session.0, "t");
    tmux_keys(&session.0, &["Enter"]);
    // The row is logged at once and marked ok when the action is done.
    let screen = settled_screen_where(&session.0, |screen| {
        screen
            .lines()
            .any(|l| l.contains("input_text") && l.contains(" ok "))
    })
    .await
    .unwrap_or_else(|screen| panic!("the action never ran:\n{screen}"));
    assert!(screen.contains("Action log 1"), "{screen}");
    assert!(!screen.contains(":input_t"), "the line closed:\n{screen}");
    tmux_keys(&session.0, &["q"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn end_to_end_demo_in_tmux_with_a_scripted_model() {
    use llm_server::{tool_call_completion, LlmServer, Reply};
    use webagent::agent::AGENT_TOOL_NAME;

    require_tmux_and_chromium();
    let step = |goal: &str, action: serde_json::Value| {
        Reply::json(
            200,
            tool_call_completion(
                AGENT_TOOL_NAME,
                &json!({
                    "evaluation_previous_goal": "the sign-in page is open",
                    "memory": "signing in as the demo admin",
                    "next_goal": goal,
                    "action": action,
                }),
            ),
        )
    };
    let server = LlmServer::start(vec![
        // Typing is an interact action: risky mode does not ask.
        step(
            "fill in the email",
            json!({"input_text": {"index": 0, "text": "admin@acme.test"}}),
        ),
        // Submitting the sign-in form is a commit action: risky mode asks.
        step("submit the sign-in form", json!({"click": {"index": 2}})),
        step(
            "report",
            json!({"done": {"text": "signed in", "success": true}}),
        ),
    ])
    .await;
    let dir = scratch_dir("e2e");
    let exit_file = dir.join("exit");
    // The run's trace goes to a directory of this test's own.
    let sessions = dir.join("sessions");
    let config = dir.join("webagent.yaml");
    std::fs::write(
        &config,
        format!("paths:\n  sessions: {}\n", sessions.display()),
    )
    .expect("writing the test's config");
    let session = TmuxSession(format!("webagent-tui-e2e-{}", std::process::id()));
    let command = format!(
        "cd {root} && WEBAGENT_CONFIG={config} OPENAI_BASE_URL={base} OPENAI_API_KEY=test \
         WEBAGENT_MODEL=scripted {bin} --log-file {log} demo; echo $? > {exit}",
        root = env!("CARGO_MANIFEST_DIR"),
        config = config.display(),
        base = server.base_url(),
        bin = env!("CARGO_BIN_EXE_webagent"),
        log = dir.join("log").display(),
        exit = exit_file.display(),
    );
    tmux_start(&session.0, &command);

    // The listing of the sign-in page shows.
    wait_for_screen(&session.0, "<button type=\"submit\">Sign in</button>").await;
    // A command-line action runs and lands in the log.
    tmux_keys(&session.0, &[":"]);
    tmux_text(&session.0, "input_text 0 \"admin@acme.test\"");
    tmux_keys(&session.0, &["Enter"]);
    let screen = wait_for_screen(&session.0, "m input_text").await;
    assert!(screen.contains("Action log 1"), "{screen}");
    tmux_keys(&session.0, &[":"]);
    tmux_text(&session.0, "input_text 1 \"demo\"");
    tmux_keys(&session.0, &["Enter"]);
    wait_for_screen(&session.0, "Action log 2").await;
    // A task with the scripted model: the commit action waits for approval.
    tmux_keys(&session.0, &["t"]);
    tmux_text(&session.0, "sign in");
    tmux_keys(&session.0, &["Enter"]);
    let screen = wait_for_screen(&session.0, "Approve step 2?").await;
    assert!(screen.contains("commit action"), "{screen}");
    assert!(
        screen.contains("Sign in</button>"),
        "target shown:\n{screen}"
    );
    tmux_keys(&session.0, &["y"]);
    let screen = wait_for_screen(&session.0, "done: signed in").await;
    assert!(
        screen.contains("/dashboard"),
        "the click signed in:\n{screen}"
    );
    // The inspector of step 2 shows what the model was sent and answered
    // (the task field keeps the focus after its task: Esc leaves it).
    tmux_keys(&session.0, &["Escape"]);
    wait_for_screen(&session.0, "┌ Task").await;
    for _ in 0..3 {
        tmux_keys(&session.0, &["Tab"]);
    }
    // Two actions by hand, the task's row, then its steps 1 and 2.
    tmux_keys(
        &session.0,
        &["Home", "Down", "Down", "Down", "Down", "Enter"],
    );
    let screen = wait_for_screen(&session.0, "Step 2 · rows 1–").await;
    assert!(
        screen.contains("raw response, as received:"),
        "the raw answer is shown:\n{screen}"
    );
    assert!(
        screen.contains("submit the sign-in form"),
        "the raw answer is the scripted one:\n{screen}"
    );
    wait_for_screen(&session.0, "## system").await;
    // Page on through the system message to the user message.
    let mut pages = 0;
    let mut screen = settled_screen(&session.0).await;
    while !screen.contains("## user") {
        assert!(pages < 20, "no user message:\n{screen}");
        tmux_keys(&session.0, &["PageDown"]);
        pages += 1;
        // The page has turned once the screen changed and settled again.
        let before = screen.clone();
        screen = settled_screen_where(&session.0, |now| now != before)
            .await
            .unwrap_or_else(|screen| panic!("PageDown changed nothing:\n{screen}"));
    }
    tmux_keys(&session.0, &["Escape"]);
    wait_for_screen(&session.0, "Action log").await;
    // A custom action from recipes/acme.rhai runs from the command line
    // (refunding ships the order first when needed).
    tmux_keys(&session.0, &[":"]);
    tmux_text(&session.0, "refund_order 1003");
    tmux_keys(&session.0, &["Enter"]);
    let screen = wait_for_screen(&session.0, "/orders/1003").await;
    let row = screen
        .lines()
        .find(|l| l.contains("m refund_order"))
        .unwrap_or_else(|| panic!("no refund_order row:\n{screen}"));
    assert!(row.contains(" ok "), "{row}\n{screen}");
    // Quitting leaves the terminal clean: the workbench screen is gone.
    tmux_keys(&session.0, &["q"]);
    for _ in 0..300 {
        if exit_file.exists() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let code = std::fs::read_to_string(&exit_file).unwrap_or_default();
    assert_eq!(code.trim(), "0", "exit code");
    let screen = capture(&session.0);
    assert!(
        !screen.contains("Elements"),
        "alternate screen left:\n{screen}"
    );
    assert_eq!(server.request_count(), 3);
    // Only the step the person was asked about carries an approval record:
    // the workbench's mode decided, once, that typing needs no yes.
    let approvals: Vec<serde_json::Value> = std::fs::read_dir(&sessions)
        .expect("the run left a trace")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .flat_map(|e| {
            std::fs::read_to_string(e.path())
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter(|v| v["type"] == "approval")
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(approvals.len(), 1, "{approvals:#?}");
    assert_eq!(approvals[0]["step"], 2, "{approvals:#?}");
    assert_eq!(approvals[0]["decision"], "approved", "{approvals:#?}");
    let _ = std::fs::remove_dir_all(&dir);
}
