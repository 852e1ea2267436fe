//! `webagent run` end to end: a killed browser relaunched (or not) with
//! the trace whole, a model endpoint that is dead, silent or answers
//! garbage, a refusal by the allowed domains in the trace (made by the
//! policy, before anyone is asked), SIGTERM ending a run cleanly, and an
//! API key a refusing server quotes kept off every output.

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::sides::{away_hits, away_page, reply, shared};
use crate::support::cli::{output_of, webagent};
use crate::support::llm_server::{LlmServer, Reply};
use crate::support::pages::page;
use crate::support::processes::{alive, browser_process_of, signal};
use crate::support::scratch::scratch_dir;
use crate::support::wait::{eventually, eventually_within};

/// Reads a trace file and checks that every line is one JSON event.
fn trace_events(dir: &std::path::Path) -> Vec<Value> {
    let traces: Vec<_> = std::fs::read_dir(dir)
        .expect("sessions dir")
        .flatten()
        .collect();
    assert_eq!(traces.len(), 1, "one trace file");
    let text = std::fs::read_to_string(traces[0].path()).expect("trace readable");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// Runs `command` (a `webagent run` whose model's first answer is a slow
/// step): once the model was asked and the step has begun, `meanwhile`
/// gets the process id; then waits (at most 60 s) for the end.
async fn while_a_step_runs<T>(
    mut command: Command,
    llm: &LlmServer,
    meanwhile: impl FnOnce(u32) -> T,
) -> (std::process::Output, T) {
    command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = command.spawn().expect("webagent runs");
    let root = child.id();
    llm.wait_for_requests(1).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let done = meanwhile(root);
    let waiting = tokio::task::spawn_blocking(move || child.wait_with_output());
    match tokio::time::timeout(Duration::from_secs(60), waiting).await {
        Ok(joined) => (joined.expect("joined").expect("waited"), done),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-9", &root.to_string()])
                .status();
            panic!("webagent did not end within 60 s");
        }
    }
}

/// Sends `signal` (`-9`, `-TERM`) to `pid`; whether it went.
#[test]
fn a_killed_browser_is_relaunched_and_the_trace_stays_whole() {
    let s = shared();
    s.home.html(
        "/kill",
        page("Kill", "<p>before the crash</p><button>Go</button>"),
    );
    let url = s.home.url("/kill");
    let sessions = scratch_dir("kill");
    let (output, killed) = s.runtime.block_on(async {
        let llm = LlmServer::start(vec![
            reply(
                "wait while the browser dies",
                json!({"wait": {"seconds": 4}}),
            ),
            reply(
                "finish",
                json!({"done": {"text": "survived", "success": true}}),
            ),
        ])
        .await;
        let mut command = webagent();
        command
            .args(["run", "Survive a crash", "--json", "--model", "m"])
            .args(["--url", &url])
            .args(["--base-url", &llm.base_url()])
            .arg("--sessions-dir")
            .arg(&sessions);
        // The first answer (a 4 s wait) is being acted on: kill the browser.
        while_a_step_runs(command, &llm, |root| {
            browser_process_of(root).is_some_and(|pid| signal(pid, "-9"))
        })
        .await
    });
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(killed, "found and killed the run's Chromium");
    let events = trace_events(&sessions);
    let errors: Vec<&Value> = events.iter().filter(|e| e["type"] == "error").collect();
    assert!(
        errors.iter().any(|e| e["fatal"] == false
            && e["error"]
                .as_str()
                .unwrap_or("")
                .contains("started a new one")),
        "a non-fatal error says the browser was relaunched: {errors:?}\n{stderr}"
    );
    let last = events.last().expect("events");
    assert_eq!(last["type"], "done", "{stdout}");
    assert_eq!(last["success"], true, "{stdout}\n{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(events.iter().filter(|e| e["type"] == "step").count() >= 2);
    let _ = std::fs::remove_dir_all(&sessions);
}

#[test]
fn a_killed_browser_that_cannot_be_relaunched_ends_the_run_with_a_clear_error() {
    let s = shared();
    s.home
        .html("/kill-once", page("Kill", "<p>only one browser</p>"));
    let url = s.home.url("/kill-once");
    let dir = scratch_dir("kill-once");
    let sessions = dir.join("sessions");
    // A Chromium that starts once: the relaunch finds it broken.
    let wrapper = dir.join("chromium-once");
    let marker = dir.join("started");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nif [ -e '{m}' ]; then echo 'this Chromium starts only once' >&2; exit 1; fi\ntouch '{m}'\nexec /usr/bin/chromium \"$@\"\n",
            m = marker.display()
        ),
    )
    .expect("wrapper written");
    let made_executable = Command::new("chmod")
        .arg("+x")
        .arg(&wrapper)
        .status()
        .map(|s| s.success());
    assert_eq!(made_executable.ok(), Some(true));
    let (output, killed) = s.runtime.block_on(async {
        let llm = LlmServer::start(vec![
            reply(
                "wait while the browser dies",
                json!({"wait": {"seconds": 4}}),
            ),
            reply("never reached", json!({"read_page": {}})),
        ])
        .await;
        let mut command = webagent();
        command
            .args(["run", "Lose the browser", "--json", "--model", "m"])
            .args(["--url", &url])
            .args(["--base-url", &llm.base_url()])
            .arg("--chrome")
            .arg(&wrapper)
            .arg("--sessions-dir")
            .arg(&sessions);
        while_a_step_runs(command, &llm, |root| {
            browser_process_of(root).is_some_and(|pid| signal(pid, "-9"))
        })
        .await
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(killed, "found and killed the run's Chromium");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let events = trace_events(&sessions);
    let fatal: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "error" && e["fatal"] == true)
        .collect();
    assert_eq!(fatal.len(), 1, "{fatal:?}");
    let text = fatal[0]["error"].as_str().unwrap_or("");
    assert!(text.contains("could not be relaunched"), "{text}");
    let last = events.last().expect("events");
    assert_eq!(last["type"], "done");
    assert_eq!(last["success"], false);
    assert_eq!(events.iter().filter(|e| e["type"] == "step").count(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_dead_model_endpoint_ends_the_run_with_a_fatal_error_and_keeps_the_steps() {
    let s = shared();
    s.home.html("/llm-down", page("Down", "<p>some text</p>"));
    let url = s.home.url("/llm-down");
    let sessions = scratch_dir("llm-down");
    let output = s.runtime.block_on(async {
        // One good answer; every later request gets a 500 (the script ran
        // out), which the client retries and then gives up on.
        let llm = LlmServer::start(vec![reply("read", json!({"read_page": {}}))]).await;
        let mut command = webagent();
        command
            .args(["run", "Read then fail", "--json", "--model", "m"])
            .args(["--url", &url])
            .args(["--base-url", &llm.base_url()])
            .arg("--sessions-dir")
            .arg(&sessions);
        let output = tokio::task::spawn_blocking(move || command.output())
            .await
            .expect("joined")
            .expect("runs");
        assert!(llm.request_count() > 2, "the failed call was retried");
        output
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let events = trace_events(&sessions);
    let fatal: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "error" && e["fatal"] == true)
        .collect();
    assert_eq!(fatal.len(), 1, "{fatal:?}");
    assert!(
        fatal[0]["error"]
            .as_str()
            .unwrap_or("")
            .contains("model call failed"),
        "{fatal:?}"
    );
    let steps: Vec<&Value> = events.iter().filter(|e| e["type"] == "step").collect();
    assert_eq!(steps.len(), 1, "the step done before the failure is kept");
    assert_eq!(events.last().expect("events")["type"], "done");
    let _ = std::fs::remove_dir_all(&sessions);
}

/// Runs `webagent run` with `replies` from the model server and a config
/// file (`config_yaml`); returns the exit code, stderr and trace events.
fn run_with_model(
    name: &str,
    replies: Vec<Reply>,
    config_yaml: &str,
) -> (Option<i32>, String, Vec<Value>) {
    let s = shared();
    let path = format!("/{name}");
    s.home.html(&path, page(name, "<p>some text</p>"));
    let url = s.home.url(&path);
    let dir = scratch_dir(name);
    let sessions = dir.join("sessions");
    let config = dir.join("webagent.yaml");
    std::fs::write(&config, config_yaml).expect("config written");
    let output = s.runtime.block_on(async {
        let llm = LlmServer::start(replies).await;
        let mut command = webagent();
        command
            .args(["run", "Read then fail", "--json", "--model", "m"])
            .args(["--url", &url])
            .args(["--base-url", &llm.base_url()])
            .arg("--config")
            .arg(&config)
            .arg("--sessions-dir")
            .arg(&sessions);
        tokio::task::spawn_blocking(move || command.output())
            .await
            .expect("joined")
            .expect("runs")
    });
    let events = trace_events(&sessions);
    let _ = std::fs::remove_dir_all(&dir);
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        events,
    )
}

/// The run ended with one fatal `model call failed` error containing
/// `says`, after retrying when `retried`, and kept the step done before.
fn assert_ended_on_the_model(
    code: Option<i32>,
    stderr: &str,
    events: &[Value],
    says: &str,
    retried: bool,
) {
    assert_eq!(code, Some(1), "{stderr}");
    let fatal: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "error" && e["fatal"] == true)
        .collect();
    assert_eq!(fatal.len(), 1, "{fatal:?}");
    assert!(
        fatal[0]["error"]
            .as_str()
            .unwrap_or("")
            .contains("model call failed"),
        "{fatal:?}"
    );
    assert!(
        fatal[0]["error"].as_str().unwrap_or("").contains(says),
        "{fatal:?}"
    );
    let retries = events.iter().any(|e| {
        e["type"] == "error"
            && e["fatal"] == false
            && e["error"].as_str().unwrap_or("").contains("; attempt ")
    });
    assert_eq!(retries, retried, "retried or not as specified: {events:?}");
    assert_eq!(events.iter().filter(|e| e["type"] == "step").count(), 1);
    assert_eq!(events.last().expect("events")["type"], "done");
}

#[test]
fn a_model_that_never_answers_is_retried_then_ends_the_run() {
    let replies = vec![
        reply("read", json!({"read_page": {}})),
        Reply::Hang,
        Reply::Hang,
        Reply::Hang,
    ];
    // Not streamed, so the whole-answer limit is the one that fires.
    let config = "llm:\n  max_retries: 1\n  streaming: false\n  timeouts:\n    total: 2\n";
    let (code, stderr, events) = run_with_model("llm-slow", replies, config);
    assert_ended_on_the_model(code, &stderr, &events, "", true);
}

#[test]
fn a_model_answering_garbage_ends_the_run_with_a_clear_error() {
    let garbage = || Reply::text(200, "application/json", "{\"choices\": [oops");
    let replies = vec![
        reply("read", json!({"read_page": {}})),
        garbage(),
        garbage(),
        garbage(),
    ];
    let config = "llm:\n  max_retries: 1\n  streaming: false\n";
    let (code, stderr, events) = run_with_model("llm-garbage", replies, config);
    // A 200 that is not JSON is not one of the retried failures (those are
    // connection errors, timeouts, 408/409/429 and 5xx): it ends at once.
    assert_ended_on_the_model(
        code,
        &stderr,
        &events,
        "not valid chat-completions JSON",
        false,
    );
}

/// `webagent run --allow-domain HOME` whose model navigates to the away
/// server's `path` (then gives up), approving commits with `yes`: the
/// trace's events and the URL it tried.
fn leave_the_allowed_domains(name: &str, yes: bool) -> (Vec<Value>, String) {
    let s = shared();
    let start = format!("/{name}");
    s.home.html(&start, page("Guarded", "<p>home page</p>"));
    let url = s.home.url(&start);
    let target = away_page(&format!("/{name}-away"));
    let sessions = scratch_dir(name);
    let output = s.runtime.block_on(async {
        let llm = LlmServer::start(vec![
            reply("leave", json!({"navigate": {"url": target}})),
            reply(
                "finish",
                json!({"done": {"text": "could not leave", "success": false}}),
            ),
        ])
        .await;
        let mut command = webagent();
        command
            .args(["run", "Go elsewhere", "--json", "--model", "m"])
            .args(["--url", &url])
            .args(["--base-url", &llm.base_url()])
            .args(["--allow-domain", &s.home.origin()])
            .arg("--sessions-dir")
            .arg(&sessions);
        if yes {
            command.arg("--yes");
        }
        output_of(command).await
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    let events = trace_events(&sessions);
    let step = events
        .iter()
        .find(|e| e["type"] == "step" && e["index"] == 1)
        .unwrap_or_else(|| panic!("step 1 in the trace: {stderr}"));
    assert_eq!(step["result"]["reason"], "blocked", "{step}");
    let message = step["result"]["message"].as_str().unwrap_or("");
    assert!(message.contains(&target), "{message}");
    assert_eq!(away_hits(&format!("/{name}-away")), 0);
    let _ = std::fs::remove_dir_all(&sessions);
    (events, target)
}

#[test]
fn webagent_run_with_allow_domain_reports_the_refusal_in_the_trace() {
    // Leaving the site needs approval; grant it so the allowed domains are
    // what stops the navigation.
    leave_the_allowed_domains("cli-guard", true);
}

#[test]
fn a_headless_navigate_off_the_allowed_domains_is_blocked_before_anyone_is_asked() {
    // No --yes: leaving the site would be asked about, and a headless run
    // says no; the allowed domains must refuse it first, and say so.
    let (events, _) = leave_the_allowed_domains("cli-policy", false);
    let step = events
        .iter()
        .find(|e| e["type"] == "step" && e["index"] == 1)
        .expect("step 1");
    let message = step["result"]["message"].as_str().unwrap_or("");
    assert!(message.contains("allowed domains"), "{message}");
    assert!(
        !events.iter().any(|e| e["type"] == "approval"),
        "nobody was asked: {events:?}"
    );
}

#[test]
fn sigterm_mid_run_stops_it_closes_chromium_and_ends_the_trace() {
    let s = shared();
    s.home.html("/term", page("Term", "<p>a slow step</p>"));
    let url = s.home.url("/term");
    let sessions = scratch_dir("term");
    let (output, browser) = s.runtime.block_on(async {
        let llm = LlmServer::start(vec![
            reply("wait a while", json!({"wait": {"seconds": 5}})),
            reply("never reached", json!({"read_page": {}})),
        ])
        .await;
        let mut command = webagent();
        command
            .args(["run", "Be stopped", "--json", "--model", "m"])
            .args(["--url", &url])
            .args(["--base-url", &llm.base_url()])
            .arg("--sessions-dir")
            .arg(&sessions);
        // The slow step is running: SIGTERM, as a service manager sends.
        while_a_step_runs(command, &llm, |root| {
            let browser = browser_process_of(root);
            assert!(signal(root, "-TERM"), "SIGTERM sent");
            browser
        })
        .await
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    let browser = browser.unwrap_or_else(|| panic!("the run's Chromium was found: {stderr}"));
    assert!(
        output.status.code().is_some(),
        "webagent ended by itself, not killed by the signal: {:?}\n{stderr}",
        output.status
    );
    let events = trace_events(&sessions);
    let last = events.last().expect("events");
    assert_eq!(
        last["type"], "done",
        "the trace ends with the run's end: {last}"
    );
    assert_eq!(last["reason"], "stopped", "{last}");
    let gone = s.runtime.block_on(eventually(|| !alive(browser)));
    assert!(gone, "Chromium {browser} outlived the run");
    let _ = std::fs::remove_dir_all(&sessions);
}

/// Ctrl-C typed in a terminal signals the whole process group: webagent,
/// the guardian of its Chromium and Chromium. The guardian died with the
/// others and the run's temporary profile stayed in the temp folder.
#[test]
fn ctrl_c_in_a_terminal_leaves_no_profile_behind() {
    use crate::support::tmux::{require_tmux_and_chromium, tmux_keys, tmux_start, TmuxSession};
    require_tmux_and_chromium();
    let s = shared();
    s.home.html("/ctrl-c", page("Ctrl-C", "<p>a slow step</p>"));
    let url = s.home.url("/ctrl-c");
    let dir = scratch_dir("ctrl-c-profile");
    let profiles_of = |pid: &str| -> Vec<std::path::PathBuf> {
        std::fs::read_dir(std::env::temp_dir())
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| {
                        p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with(&format!("webagent-profile-{pid}-")))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    s.runtime.block_on(async {
        let llm = LlmServer::start(vec![
            reply("wait a while", json!({"wait": {"seconds": 5}})),
            reply("never reached", json!({"read_page": {}})),
        ])
        .await;
        let session = TmuxSession(format!("webagent-ctrl-c-{}", std::process::id()));
        tmux_start(
            &session.0,
            &format!(
                "cd {dir} && echo $$ > pid && exec env -u OPENAI_API_KEY {bin} --log-file log \
                 run 'Be interrupted' --model m --url {url} --base-url {base} --sessions-dir sessions",
                dir = dir.display(),
                bin = env!("CARGO_BIN_EXE_webagent"),
                base = llm.base_url(),
            ),
        );
        llm.wait_for_requests(1).await;
        let pid = std::fs::read_to_string(dir.join("pid")).expect("the pid");
        let pid = pid.trim().to_string();
        assert_eq!(profiles_of(&pid).len(), 1, "the run's profile is there");
        tmux_keys(&session.0, &["C-c"]);
        let root: u32 = pid.parse().expect("a pid");
        let ended = eventually_within(Duration::from_secs(60), || !alive(root)).await;
        assert!(ended, "the run ended within a minute of Ctrl-C");
        let cleaned = eventually(|| profiles_of(&pid).is_empty()).await;
        assert!(cleaned, "left behind: {:?}", profiles_of(&pid));
        drop(session);
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_api_key_a_refusing_server_quotes_is_masked_on_stderr_in_the_log_and_the_trace() {
    let s = shared();
    s.home.html("/key", page("Key", "<p>a page</p>"));
    let url = s.home.url("/key");
    let dir = scratch_dir("api-key");
    let sessions = dir.join("sessions");
    let log = dir.join("webagent.log");
    let key = "sk-proj-T3stKey9f8e7d6c5b4a3210";
    let body = json!({"error": {
        "message": format!("Incorrect API key provided: {key}. You can find your API key at https://platform.example/account/api-keys."),
        "type": "invalid_request_error",
        "code": "invalid_api_key",
    }});
    let output = s.runtime.block_on(async {
        let llm = LlmServer::start(vec![Reply::json(401, body.to_string())]).await;
        let mut command = webagent();
        command
            .env("OPENAI_API_KEY", key)
            .env("WEBAGENT_LOG", "debug")
            .args(["run", "Use a bad key", "--model", "m"])
            .args(["--url", &url])
            .args(["--base-url", &llm.base_url()])
            .arg("--sessions-dir")
            .arg(&sessions)
            .arg("--log-file")
            .arg(&log);
        output_of(command).await
    });
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let trace = trace_events(&sessions)
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    // The refusal itself is reported (the step log, the trace), with the
    // key masked.
    let printed = format!("{stdout}{stderr}");
    assert!(
        printed.contains("Incorrect API key provided") && trace.contains("Incorrect API key"),
        "{printed}\n{trace}"
    );
    for (channel, text) in [
        ("stdout", stdout.as_ref()),
        ("stderr", stderr.as_ref()),
        ("the trace", trace.as_str()),
        ("the log", logged.as_str()),
    ] {
        assert!(!text.contains(key), "the key shows in {channel}:\n{text}");
        assert!(
            !text.contains("T3stKey9f8e7d6c5b4a3210"),
            "part of the key shows in {channel}:\n{text}"
        );
    }
    assert!(
        printed.contains("<secret>OPENAI_API_KEY</secret>")
            && trace.contains("<secret>OPENAI_API_KEY</secret>"),
        "{printed}\n{trace}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
