//! The conversation in a real terminal, on a till page with a scripted
//! model: a recipe healed in the workbench, follow-up tasks and messages
//! the model reads, a step asked again, a run killed mid-step resumed,
//! and the sessions view over a thousand traces.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::llm_server;
use crate::support::scratch::scratch_dir;
use crate::support::tmux::{
    require_tmux_and_chromium, settled_screen, settled_screen_where, tmux_keys, tmux_start,
    tmux_text, wait_for_screen, TmuxSession,
};
use crate::support::wait::eventually_within;

/// A till: the Count button tells the test each time it is clicked (the
/// page fetches /count), the Pay button submits a form (a commit action).
pub(crate) fn till(
    pages: &webagent::serve::PageServer,
) -> std::sync::Arc<std::sync::atomic::AtomicUsize> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use webagent::serve::Response;
    let clicks = Arc::new(AtomicUsize::new(0));
    pages.html(
        "/till",
        "<!doctype html><html><head><title>Till</title></head><body>\
         <button id=count type=button onclick=\"fetch('/count')\">Count</button>\
         <form action=/paid><button id=pay type=submit>Pay</button></form></body></html>",
    );
    pages.html(
        "/paid",
        "<html><head><title>Paid</title></head><body>Paid.</body></html>",
    );
    let counted = Arc::clone(&clicks);
    pages.handle("/count", move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
        Response::text("counted")
    });
    clicks
}

/// One scripted answer of the model: its reflection and `action`.
pub(crate) fn model_step(goal: &str, action: serde_json::Value) -> llm_server::Reply {
    llm_server::agent_step("as planned", "on the till", goal, action)
}

pub(crate) fn model_done(text: &str) -> llm_server::Reply {
    model_step("report", json!({"done": {"text": text, "success": true}}))
}

/// The user message of a recorded request: the prompt the model read.
pub(crate) fn user_message(request: &llm_server::RecordedRequest) -> String {
    let body = request.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap_or_default();
    match &user["content"] {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Whether `needle` shows in `prompt` outside every page fence.
fn outside_the_fence(prompt: &str, needle: &str) -> bool {
    let Some(at) = prompt.find(needle) else {
        return false;
    };
    let mut from = 0;
    while let Some(open) = prompt[from..].find("<untrusted_page_content>") {
        let open = from + open;
        let close = prompt[open..]
            .find("</untrusted_page_content>")
            .map_or(prompt.len(), |c| open + c);
        if at > open && at < close {
            return false;
        }
        from = close.min(prompt.len() - 1) + 1;
        if from >= prompt.len() {
            break;
        }
    }
    true
}

/// Starts the workbench in tmux on `url` with the scripted model, its
/// traces in `dir/sessions`; the process id goes to `dir/pid` (the shell
/// execs the workbench, so it is the workbench's).
pub(crate) fn start_workbench(session: &str, dir: &Path, llm: &llm_server::LlmServer, args: &str) {
    let command = format!(
        "cd {dir} && echo $$ > pid && exec env OPENAI_BASE_URL={base} OPENAI_API_KEY=test \
         WEBAGENT_MODEL=scripted {bin} --log-file log {args}",
        dir = dir.display(),
        base = llm.base_url(),
        bin = env!("CARGO_BIN_EXE_webagent"),
    );
    tmux_start(session, &command);
}

/// The traces in `dir`, oldest first.
pub(crate) fn traces_in(dir: &Path) -> Vec<PathBuf> {
    let mut traces: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .collect()
        })
        .unwrap_or_default();
    traces.sort();
    traces
}

pub(crate) fn trace_kinds(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// A workbench on the till, the scripted model answering `replies`, with
/// `task` typed in and started.
struct TillRun {
    session: TmuxSession,
    llm: llm_server::LlmServer,
    clicks: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    dir: PathBuf,
    _pages: webagent::serve::PageServer,
}

async fn till_run(name: &str, replies: Vec<llm_server::Reply>, task: &str) -> TillRun {
    require_tmux_and_chromium();
    let pages = webagent::serve::PageServer::start()
        .await
        .expect("serve pages");
    let clicks = till(&pages);
    let llm = llm_server::LlmServer::start(replies).await;
    let dir = scratch_dir(name);
    let session = TmuxSession(format!("webagent-{name}-{}", std::process::id()));
    start_workbench(
        &session.0,
        &dir,
        &llm,
        &format!("tui --sessions-dir sessions --url {}", pages.url("/till")),
    );
    wait_for_screen(&session.0, "Count</button>").await;
    tmux_keys(&session.0, &["t"]);
    tmux_text(&session.0, task);
    tmux_keys(&session.0, &["Enter"]);
    TillRun {
        session,
        llm,
        clicks,
        dir,
        _pages: pages,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recipe_run_in_the_workbench_heals_a_changed_step_and_writes_the_repair_beside_it() {
    use std::sync::atomic::Ordering;
    require_tmux_and_chromium();
    let pages = webagent::serve::PageServer::start()
        .await
        .expect("serve pages");
    let clicks = till(&pages);
    // The recipe was recorded when the button was `#tally`; the till's is
    // `#count` now.
    let dir = scratch_dir("heal-in-workbench");
    std::fs::write(
        dir.join("till.rhai"),
        "recipe(\"tally\", \"Counts one visitor\");\n\
         fn tally() {\n    step(1, \"count one visitor\", \"/till\");\n    click([\"id:tally\", \"role:button:Tally\", \"text:Tally\"]);\n    \"counted\"\n}\n",
    )
    .expect("the recipe is written");
    let llm = llm_server::LlmServer::start(vec![
        model_step(
            "count one visitor",
            json!({"click": {"selector": "#count"}}),
        ),
        model_done("counted one visitor"),
    ])
    .await;
    let session = TmuxSession(format!("webagent-heal-{}", std::process::id()));
    start_workbench(
        &session.0,
        &dir,
        &llm,
        &format!(
            "tui --sessions-dir sessions --approve never --recipes till.rhai --url {}",
            pages.url("/till")
        ),
    );
    wait_for_screen(&session.0, "Count</button>").await;
    tmux_keys(&session.0, &[":"]);
    tmux_text(&session.0, "recipe tally");
    tmux_keys(&session.0, &["Enter"]);
    let screen = wait_for_screen(&session.0, "done: counted").await;
    // The log has the heal's own row: what changed and what it cost.
    let row = screen
        .lines()
        .find(|l| l.contains("healed"))
        .unwrap_or_else(|| panic!("a healed row:\n{screen}"));
    assert!(row.contains("id:tally → "), "{row}");
    assert_eq!(llm.requests().len(), 2, "the heal took two model calls");
    assert_eq!(
        clicks.load(Ordering::SeqCst),
        1,
        "counted once, by the heal"
    );
    let repaired = dir.join("till.healed.rhai");
    let text = std::fs::read_to_string(&repaired)
        .unwrap_or_else(|e| panic!("{}: {e}\n{screen}", repaired.display()));
    assert!(text.contains("\"id:count\""), "the new locator: {text}");
    assert!(text.contains("healed step 1"), "{text}");
    // The original is left as it was.
    let original = std::fs::read_to_string(dir.join("till.rhai")).expect("the original");
    assert!(original.contains("\"id:tally\""), "{original}");
    tmux_keys(&session.0, &["q"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follow_up_task_tells_the_model_the_earlier_task_and_how_it_ended() {
    let TillRun {
        session,
        llm,
        clicks: _clicks,
        dir,
        _pages,
    } = till_run(
        "follow-up",
        vec![
            model_step("count once", json!({"click": {"selector": "#count"}})),
            model_done("counted once: the total is 1"),
            model_done("it was the Count button"),
        ],
        "Click the Count button once",
    )
    .await;
    let screen = wait_for_screen(&session.0, "done: counted once").await;
    assert!(screen.contains("follows up on 1 earlier task"), "{screen}");
    // The field that started the task still has the focus.
    tmux_text(&session.0, "Which button did you click?");
    tmux_keys(&session.0, &["Enter"]);
    wait_for_screen(&session.0, "done: it was the Count button").await;
    let requests = llm.requests();
    assert_eq!(requests.len(), 3);
    let first = user_message(&requests[0]);
    assert!(!first.contains("<earlier_tasks>"), "{first}");
    let follow_up = user_message(&requests[2]);
    assert!(follow_up.contains("<earlier_tasks>"), "{follow_up}");
    assert!(
        follow_up.contains("Click the Count button once"),
        "the earlier task:\n{follow_up}"
    );
    assert!(
        follow_up.contains("counted once: the total is 1"),
        "how it ended:\n{follow_up}"
    );
    assert!(follow_up.contains("<task>\nWhich button did you click?\n</task>"));
    // Both runs went into the one trace.
    let traces = traces_in(&dir.join("sessions"));
    assert_eq!(traces.len(), 1, "{traces:?}");
    let starts = trace_kinds(&traces[0])
        .iter()
        .filter(|e| e["type"] == "run_started")
        .count();
    assert_eq!(starts, 2);
    tmux_keys(&session.0, &["q"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_while_the_model_answers_goes_with_the_next_request() {
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    let TillRun {
        session,
        llm,
        clicks: _clicks,
        dir,
        _pages,
    } = till_run(
        "steer",
        vec![
            llm_server::Reply::held(
                &gate,
                model_step("count", json!({"click": {"selector": "#count"}})),
            ),
            model_done("counted"),
        ],
        "Count the visitors",
    )
    .await;
    // The model is answering the first step (the reply is held).
    tokio::time::timeout(std::time::Duration::from_secs(60), llm.wait_for_requests(1))
        .await
        .expect("the first request");
    tmux_text(&session.0, "count only the adults");
    tmux_keys(&session.0, &["Enter"]);
    let screen = wait_for_screen(&session.0, "waiting").await;
    assert!(screen.contains("you say"), "{screen}");
    gate.notify_one();
    let screen = wait_for_screen(&session.0, "done: counted").await;
    let row = screen
        .lines()
        .find(|l| l.contains("you say"))
        .unwrap_or_else(|| panic!("the message row:\n{screen}"));
    assert!(row.contains("sent"), "{row}");
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    assert!(!user_message(&requests[0]).contains("count only the adults"));
    let next = user_message(&requests[1]);
    assert!(
        next.contains("- before step 2: count only the adults"),
        "{next}"
    );
    assert!(
        outside_the_fence(&next, "count only the adults"),
        "the person's words are not page content:\n{next}"
    );
    let trace = traces_in(&dir.join("sessions")).remove(0);
    let said: Vec<serde_json::Value> = trace_kinds(&trace)
        .into_iter()
        .filter(|e| e["type"] == "person_message")
        .collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(said[0]["text"], "count only the adults");
    tmux_keys(&session.0, &["q"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_is_asked_again_at_the_approval_and_after_it_failed() {
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    let TillRun {
        session,
        llm,
        clicks,
        dir,
        _pages,
    } = till_run(
        "retry",
        vec![
            // Step 1: paying needs approval; the person asks for another idea.
            model_step("pay", json!({"click": {"selector": "#pay"}})),
            model_step("count instead", json!({"click": {"selector": "#count"}})),
            // Step 2 fails; step 3's answer is held while the person asks
            // for step 2 again.
            model_step(
                "press a button that is not there",
                json!({"click": {"selector": "#gone"}}),
            ),
            llm_server::Reply::held(&gate, model_done("never used")),
            model_done("counted once"),
        ],
        "Settle the till",
    )
    .await;
    let screen = wait_for_screen(&session.0, "Approve step 1?").await;
    assert!(
        screen.contains("target  [1]<button type=\"submit\">Pay</button>"),
        "a selector's target shows what it matched:\n{screen}"
    );
    tmux_keys(&session.0, &["r"]);
    tokio::time::timeout(std::time::Duration::from_secs(60), llm.wait_for_requests(4))
        .await
        .expect("the run reaches step 3");
    // Step 2 failed and step 3's answer is awaited: ask for step 2 again.
    wait_for_screen(&session.0, "not_found").await;
    tmux_keys(&session.0, &["Escape"]);
    wait_for_screen(&session.0, "Enter sends it (s stops").await;
    tmux_keys(&session.0, &["r"]);
    wait_for_screen(&session.0, "done: counted once").await;
    let requests = llm.requests();
    assert_eq!(requests.len(), 5);
    let again_1 = user_message(&requests[1]);
    assert!(again_1.contains("Step 1 of"), "{again_1}");
    assert!(
        again_1.contains("the person asked you for another answer"),
        "{again_1}"
    );
    let again_2 = user_message(&requests[4]);
    assert!(again_2.contains("Step 2 of"), "{again_2}");
    assert!(
        again_2.contains("the person asked for this step again"),
        "{again_2}"
    );
    assert_eq!(clicks.load(std::sync::atomic::Ordering::SeqCst), 1);
    // The failed attempts stay, in the log and the trace.
    let screen = settled_screen(&session.0).await;
    assert!(screen.contains("denied"), "{screen}");
    assert!(screen.contains("not_found"), "{screen}");
    let trace = traces_in(&dir.join("sessions")).remove(0);
    let events = trace_kinds(&trace);
    let retried: Vec<u64> = events
        .iter()
        .filter(|e| e["type"] == "step_retried")
        .filter_map(|e| e["step"].as_u64())
        .collect();
    assert_eq!(retried, [1, 2]);
    let steps = events.iter().filter(|e| e["type"] == "step").count();
    assert_eq!(
        steps, 4,
        "both failed attempts are recorded, and the answers after"
    );
    tmux_keys(&session.0, &["q"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_mid_step_resumes_without_repeating_an_action() {
    let TillRun {
        session,
        llm,
        clicks,
        dir,
        _pages,
    } = till_run(
        "resume",
        vec![
            model_step("count once", json!({"click": {"selector": "#count"}})),
            // A list: the count runs, the payment waits for approval, and the
            // workbench is killed there.
            model_step(
                "count again, then pay",
                json!([{"click": {"selector": "#count"}}, {"click": {"selector": "#pay"}}]),
            ),
            model_done("counted twice, not paid"),
        ],
        "Count twice and pay",
    )
    .await;
    wait_for_screen(&session.0, "Approve step 2?").await;
    let count_before = clicks.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(count_before, 2);
    let pid = std::fs::read_to_string(dir.join("pid")).expect("the pid");
    let killed = std::process::Command::new("kill")
        .args(["-KILL", pid.trim()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    drop(session);
    let old = traces_in(&dir.join("sessions"));
    assert_eq!(old.len(), 1);
    assert!(
        !trace_kinds(&old[0]).iter().any(|e| e["type"] == "done"),
        "the killed run never ended"
    );

    let session = TmuxSession(format!("webagent-resumed-{}", std::process::id()));
    start_workbench(
        &session.0,
        &dir,
        &llm,
        &format!("resume --sessions-dir sessions {}", old[0].display()),
    );
    let screen = wait_for_screen(&session.0, "done: counted twice, not paid").await;
    assert!(screen.contains("resumed"), "{screen}");
    assert_eq!(
        clicks.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "nothing that ran before the kill ran again"
    );
    let requests = llm.requests();
    assert_eq!(requests.len(), 3);
    let resumed = user_message(&requests[2]);
    assert!(
        resumed.contains("<task>\nCount twice and pay\n</task>"),
        "{resumed}"
    );
    assert!(
        resumed.contains("Step 2 of"),
        "the step that did not finish:\n{resumed}"
    );
    assert!(resumed.contains("Step 1:"), "{resumed}");
    assert!(
        resumed.contains("not run: the run was interrupted"),
        "{resumed}"
    );
    assert!(resumed.contains("/till"), "{resumed}");
    let traces = traces_in(&dir.join("sessions"));
    assert_eq!(traces.len(), 2);
    let new = traces.iter().find(|t| **t != old[0]).expect("a new trace");
    let record = trace_kinds(new)
        .into_iter()
        .find(|e| e["type"] == "resumed")
        .expect("the new trace says what it continues");
    assert_eq!(record["from"], old[0].display().to_string());
    assert_eq!(record["step"], 2);
    tmux_keys(&session.0, &["q"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// SIGTERM (a service manager, `kill`) while the workbench waits on the
/// person ends it the way `q` does: the run stops, its trace ends, and
/// Chromium is closed; nothing is left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_the_workbench_like_quitting_the_run_stopped_and_chromium_closed() {
    use crate::support::processes::{alive, browser_process_of, signal};
    let TillRun {
        session,
        llm: _llm,
        clicks: _clicks,
        dir,
        _pages,
    } = till_run(
        "sigterm",
        vec![model_step("pay", json!({"click": {"selector": "#pay"}}))],
        "Pay",
    )
    .await;
    wait_for_screen(&session.0, "Approve step 1?").await;
    let pid: u32 = std::fs::read_to_string(dir.join("pid"))
        .expect("the pid")
        .trim()
        .parse()
        .expect("a pid");
    let browser = browser_process_of(pid).expect("the workbench's Chromium");
    assert!(signal(pid, "-TERM"), "SIGTERM sent");
    let ended = eventually_within(std::time::Duration::from_secs(60), || !alive(pid)).await;
    assert!(ended, "the workbench ended within a minute of SIGTERM");
    let traces = traces_in(&dir.join("sessions"));
    assert_eq!(traces.len(), 1);
    let events = trace_kinds(&traces[0]);
    let last = events.last().expect("events");
    assert_eq!(
        last["type"], "done",
        "the trace ends with the run's end: {last}"
    );
    assert_eq!(last["reason"], "stopped", "{last}");
    let gone = eventually_within(std::time::Duration::from_secs(30), || !alive(browser)).await;
    assert!(gone, "Chromium {browser} outlived the workbench");
    drop(session);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sessions_view_over_a_thousand_traces_searches_replays_and_exports() {
    use webagent::bench::tui::write_synthetic_traces;
    require_tmux_and_chromium();
    let dir = scratch_dir("sessions-1000");
    let sessions = dir.join("sessions");
    write_synthetic_traces(&sessions, 1000).expect("traces written");
    std::fs::create_dir_all(dir.join("recipes")).expect("a recipes directory");
    let session = TmuxSession(format!("webagent-sessions-{}", std::process::id()));
    let command = format!(
        "cd {dir} && {bin} --log-file log tui --sessions-dir sessions --recipes recipes",
        dir = dir.display(),
        bin = env!("CARGO_BIN_EXE_webagent"),
    );
    tmux_start(&session.0, &command);
    wait_for_screen(&session.0, "READY").await;
    tmux_keys(&session.0, &["S"]);
    let screen = settled_screen_where(&session.0, |s| {
        s.contains("Past sessions 1000") && !s.contains("reading")
    })
    .await
    .unwrap_or_else(|s| panic!("the list never filled:\n{s}"));
    let first = screen
        .lines()
        .find(|l| l.contains("2026-"))
        .unwrap_or_else(|| panic!("no rows:\n{screen}"));
    assert!(first.contains("Ship order 1999"), "newest first: {first}");
    tmux_keys(&session.0, &["/"]);
    tmux_text(&session.0, "blender");
    tmux_keys(&session.0, &["Enter"]);
    let screen = wait_for_screen(&session.0, "· 1 match").await;
    assert!(
        screen.contains("Refund the damaged blender on order 1500"),
        "{screen}"
    );
    tmux_keys(&session.0, &["Enter"]);
    let screen = wait_for_screen(&session.0, "REPLAY").await;
    assert!(screen.contains("goal of step 1 of trace 500"), "{screen}");
    tmux_keys(&session.0, &["j"]);
    let screen = wait_for_screen(&session.0, "goal of step 2 of trace 500").await;
    assert!(
        screen.contains("Elements as recorded at step 2"),
        "{screen}"
    );
    tmux_keys(&session.0, &["E"]);
    tmux_text(&session.0, "step_two_again");
    tmux_keys(&session.0, &["Enter"]);
    // The export is a log row (the notice gives way to the reload of the
    // new file at once).
    let screen = wait_for_screen(&session.0, "export           recipes/step_two_again.rhai").await;
    let recipes: Vec<PathBuf> = std::fs::read_dir(dir.join("recipes"))
        .expect("the recipes directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "rhai"))
        .collect();
    assert_eq!(recipes.len(), 1, "{screen}");
    let recipe = std::fs::read_to_string(&recipes[0]).expect("the recipe");
    assert!(
        recipe.contains("1500"),
        "the typed value is in it:\n{recipe}"
    );
    tmux_keys(&session.0, &["Escape"]);
    wait_for_screen(&session.0, "Past sessions 1000").await;
    tmux_keys(&session.0, &["Escape", "q"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_over_waits_for_the_person_and_the_model_hears_what_they_changed() {
    let TillRun {
        session,
        llm,
        clicks: _clicks,
        dir,
        _pages,
    } = till_run(
        "hand-over",
        vec![
            model_step(
                "a person must pay",
                json!({"hand_over": {"reason": "pay with your own card"}}),
            ),
            model_done("paid by the person"),
        ],
        "Pay for the order",
    )
    .await;
    // The run waits, saying why on the status line.
    let screen = wait_for_screen(&session.0, "YOUR TURN").await;
    assert!(screen.contains("pay with your own card"), "{screen}");
    assert_eq!(llm.requests().len(), 1, "no step while it waits");
    // The person acts: Pay, by hand, from the `:` line (Esc leaves the
    // task field, which kept the focus after its task).
    // The next key waits for the Esc to land, or the terminal reads the
    // two as Alt plus the key.
    tmux_keys(&session.0, &["Escape"]);
    wait_for_screen(&session.0, "┌ Task").await;
    tmux_keys(&session.0, &[":"]);
    tmux_text(&session.0, "click 1");
    tmux_keys(&session.0, &["Enter"]);
    wait_for_screen(&session.0, "/paid").await;
    tmux_keys(&session.0, &["H"]);
    wait_for_screen(&session.0, "done: paid by the person").await;
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    let next = user_message(&requests[1]);
    assert!(
        next.contains("- before step 2: You handed the page over to me (pay with your own card). I acted on it myself and handed it back"),
        "the model is told the person acted:\n{next}"
    );
    assert!(
        next.contains("/paid") && next.contains("— Paid</untrusted_page_content>"),
        "the page now, its title fenced:\n{next}"
    );
    tmux_keys(&session.0, &["q"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_typed_after_a_finished_task_runs_whole_with_every_single_key_command_in_it() {
    use crossterm::event::{KeyCode, KeyModifiers};
    use webagent::tui::keys::KeyContext;
    // Every letter a pane takes as a command, from the keymap itself.
    let mut commands: Vec<char> = Vec::new();
    for binding in webagent::tui::Keymap::default().bindings() {
        let pane = binding.context == KeyContext::Global || binding.context.has_pane_keys();
        if let (true, KeyCode::Char(c), KeyModifiers::NONE) =
            (pane, binding.key.code, binding.key.modifiers)
        {
            if !commands.contains(&c) {
                commands.push(c);
            }
        }
    }
    for key in ['q', 's', 't', 'a', 'r', ':', '?', 'N', 'S'] {
        assert!(commands.contains(&key), "{key} is a command: {commands:?}");
    }
    let words: Vec<String> = commands.iter().map(char::to_string).collect();
    let second = format!("slow task {}", words.join(" "));
    let TillRun {
        session,
        llm,
        clicks: _clicks,
        dir,
        _pages,
    } = till_run(
        "typed-task",
        vec![model_done("counted"), model_done("all read")],
        "Count the visitors",
    )
    .await;
    let before = wait_for_screen(&session.0, "done: counted").await;
    assert!(before.contains("approve risky"), "{before}");
    // Straight on, as a person does: no `t`, no pause.
    tmux_text(&session.0, &second);
    tmux_keys(&session.0, &["Enter"]);
    let screen = wait_for_screen(&session.0, "done: all read").await;
    let requests = llm.requests();
    assert_eq!(requests.len(), 2, "two tasks, nothing asked again");
    let asked = user_message(&requests[1]);
    assert!(
        asked.contains(&format!("<task>\n{second}\n</task>")),
        "the whole text ran as the task:\n{asked}"
    );
    // Nothing else happened: same mode, theme and panes, no complaint, no
    // dialog, still running.
    assert!(screen.contains("approve risky"), "{screen}");
    assert!(screen.contains("theme dark"), "{screen}");
    assert!(
        screen.contains("Sitemap"),
        "the page pane stayed hidden:\n{screen}"
    );
    for other in [
        "no run",
        "approval mode",
        "Keys",
        "Past sessions",
        "new conversation",
        "export",
        "handed",
    ] {
        assert!(!screen.contains(other), "`{other}` showed:\n{screen}");
    }
    assert!(
        screen.contains("follows up on 2 earlier tasks"),
        "the field took both tasks:\n{screen}"
    );
    tmux_keys(&session.0, &["Escape"]);
    wait_for_screen(&session.0, "┌ Task").await;
    tmux_keys(&session.0, &["q"]);
    let _ = std::fs::remove_dir_all(&dir);
}
