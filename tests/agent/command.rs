//! `webagent run` as a process: bad flags and configuration problems exit
//! with 2, JSON events on success, a killed run's trace and its resume, a
//! sitemap edited during a run, and Ctrl-C.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::answers::{done, reply};
use crate::support::chromium::shared;
use crate::support::cli::{json_lines, said, webagent};
use crate::support::llm_server::{LlmServer, Reply};
use crate::support::pages::page;
use crate::support::scratch::scratch_dir;

#[test]
fn bad_flags_exit_with_2_and_the_reason() {
    let output = webagent()
        .args([
            "run",
            "do it",
            "--url",
            "http://127.0.0.1:9/",
            "--approve",
            "sometimes",
        ])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("never, risky or always"));
    let output = webagent()
        .args([
            "run",
            "do it",
            "--url",
            "not a url",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not a page address"));
    let output = webagent()
        .args([
            "run",
            "do it",
            "--url",
            "http://127.0.0.1:9/",
            "--max-steps",
            "0",
        ])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--max-steps must be at least 1"));
}

/// A page address without a scheme was handed to the browser and failed
/// after its 30 s load timeout: a bare host with a port opens over http
/// and says so; what is no address is refused before Chromium starts.
#[test]
fn a_url_without_a_scheme_opens_over_http_or_is_refused_at_once() {
    let s = shared();
    s.server
        .html("/bare", page("Bare host", "<button>Found</button>"));
    let full = s.server.url("/bare");
    let bare = full.strip_prefix("http://").expect("an http URL");
    let output = s.runtime.block_on(async {
        let mut command = webagent();
        command.args(["observe", bare]);
        tokio::task::spawn_blocking(move || command.output())
            .await
            .expect("joined")
            .expect("runs")
    });
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("Found"), "the page was observed: {stdout}");
    assert!(
        stderr.contains(&format!("`{bare}` has no scheme; opening {full}")),
        "{stderr}"
    );
    for (args, given) in [
        (vec!["observe", "not-a-url"], "not-a-url"),
        (vec!["run", "a task", "--url", "nowhere"], "nowhere"),
        (vec!["tui", "--url", "just words"], "just words"),
    ] {
        let output = webagent().args(&args).output().expect("runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("`{given}` is not a page address"))
                && stderr.contains("http://127.0.0.1:8080/"),
            "{args:?}: {stderr}"
        );
    }
}

/// With no model configured, `run` launched Chromium and tried the public
/// endpoint three times before failing; it is refused before anything
/// starts, as the workbench says at once.
#[test]
fn a_run_with_no_model_is_refused_before_the_browser_starts() {
    let sessions = scratch_dir("no-model");
    let output = webagent()
        .args(["run", "do it", "--url", "http://127.0.0.1:9/"])
        .arg("--sessions-dir")
        .arg(&sessions)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no model is configured: set OPENAI_API_KEY"),
        "{stderr}"
    );
    let traces = std::fs::read_dir(&sessions).map_or(0, |entries| entries.count());
    assert_eq!(traces, 0, "no run started, so no trace was written");
    let _ = std::fs::remove_dir_all(&sessions);
}

#[test]
fn the_command_prints_json_events_and_exits_0_on_success() {
    let s = shared();
    s.server.html("/cli-ok", page("CLI", "<button>Hi</button>"));
    let sessions = scratch_dir("cli-ok");
    let output = s.runtime.block_on(async {
        let llm = LlmServer::start(vec![
            reply("look", json!({"read_page": {}})),
            done("read it", true),
        ])
        .await;
        let mut command = webagent();
        command
            .args(["run", "Read the page", "--json", "--model", "m"])
            .args(["--url", &s.server.url("/cli-ok")])
            .args(["--base-url", &llm.base_url()])
            .arg("--sessions-dir")
            .arg(&sessions);
        tokio::task::spawn_blocking(move || command.output())
            .await
            .expect("joined")
            .expect("runs")
    });
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("every stdout line is JSON"))
        .collect();
    assert_eq!(events.first().unwrap()["type"], "run_started");
    assert_eq!(events.last().unwrap()["type"], "done");
    assert_eq!(events.last().unwrap()["success"], true);
    assert_eq!(events.iter().filter(|e| e["type"] == "step").count(), 2);
    // The same events went to the trace file.
    let traces: Vec<_> = std::fs::read_dir(&sessions).unwrap().flatten().collect();
    assert_eq!(traces.len(), 1);
    let trace = std::fs::read_to_string(traces[0].path()).unwrap();
    assert_eq!(trace.lines().count(), events.len());
    // The first line says where that file is.
    assert_eq!(
        events[0]["trace"],
        traces[0].path().display().to_string(),
        "{}",
        events[0]
    );
    let _ = std::fs::remove_dir_all(&sessions);
}

/// Runs `task` on `url` with `webagent run`, its first step scrolling and
/// its second model call never answered, and kills it there (SIGKILL).
async fn kill_at_second_model_call(task: &str, url: &str, sessions: &std::path::Path) {
    signal_at_second_model_call(task, url, sessions, "-KILL").await;
}

/// Runs `task` on `url` with `webagent run`, its first step scrolling and
/// its second model call never answered, sends it `signal` there (as
/// `kill` spells it) and waits for it to end.
async fn signal_at_second_model_call(
    task: &str,
    url: &str,
    sessions: &std::path::Path,
    signal: &str,
) {
    let llm = LlmServer::start(vec![
        reply("scroll first", json!({"scroll": {"direction": "down"}})),
        Reply::Hang,
    ])
    .await;
    let mut child = tokio::process::Command::from(webagent())
        .args(["run", task, "--model", "m"])
        .args(["--url", url])
        .args(["--base-url", &llm.base_url()])
        .arg("--sessions-dir")
        .arg(sessions)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawns");
    tokio::time::timeout(Duration::from_secs(60), llm.wait_for_requests(2))
        .await
        .expect("the run reaches its second model call");
    let pid = child.id().expect("running");
    assert!(
        crate::support::processes::signal(pid, signal),
        "{signal} sent"
    );
    tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("the run ends on the signal")
        .expect("status");
}

#[test]
fn a_killed_run_leaves_a_readable_trace() {
    let s = shared();
    s.server
        .html("/killed", page("Kill", "<button>Hi</button>"));
    let sessions = scratch_dir("killed");
    s.runtime.block_on(kill_at_second_model_call(
        "Never finishes",
        &s.server.url("/killed"),
        &sessions,
    ));
    let traces: Vec<_> = std::fs::read_dir(&sessions).unwrap().flatten().collect();
    assert_eq!(traces.len(), 1);
    let trace = std::fs::read_to_string(traces[0].path()).unwrap();
    assert!(trace.ends_with('\n'), "the last line is complete");
    let kinds: Vec<String> = trace
        .lines()
        .map(|line| {
            let event: Value = serde_json::from_str(line).expect("each line is JSON");
            event["type"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    assert_eq!(kinds[0], "run_started");
    assert!(kinds.iter().any(|k| k == "step"), "{kinds:?}");
    // The second step began (its observation is there) but never ended.
    assert_eq!(
        kinds.iter().filter(|k| *k == "observation").count(),
        2,
        "{kinds:?}"
    );
    assert!(!kinds.iter().any(|k| k == "done"));
    let _ = std::fs::remove_dir_all(&sessions);
}

#[test]
fn a_killed_run_resumes_headless_at_the_step_that_did_not_finish() {
    let s = shared();
    s.server
        .html("/resumed", page("Resume", "<button>Hi</button>"));
    let sessions = scratch_dir("resume-headless");
    let (trace, output, prompt) = s.runtime.block_on(async {
        // Killed while the model answers step 2.
        kill_at_second_model_call("Scroll, then report", &s.server.url("/resumed"), &sessions)
            .await;
        let trace = std::fs::read_dir(&sessions)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .expect("the killed run's trace");
        let (output, prompt) = resume_headless(&trace, &sessions).await;
        (trace, output, prompt)
    });
    assert!(output.status.success(), "{output:?}");
    assert!(prompt.contains("Step 2 of"), "{prompt}");
    assert!(
        prompt.contains("Step 1:"),
        "the step before is history:\n{prompt}"
    );
    assert!(prompt.contains("scroll first"), "{prompt}");
    let events: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let resumed = events
        .iter()
        .find(|e| e["type"] == "resumed")
        .expect("the run says what it resumes");
    assert_eq!(resumed["from"], trace.display().to_string());
    assert_eq!(resumed["step"], 2);
    assert_eq!(events.last().unwrap()["type"], "done");
    // A finished run has nothing to resume: a clear refusal, exit 2.
    let again_trace = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl") && *p != trace)
        .expect("the resumed run's trace");
    let refused = webagent()
        .arg("resume")
        .arg(&again_trace)
        .arg("--headless")
        .output()
        .expect("runs");
    assert_eq!(refused.status.code(), Some(2));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("nothing to resume"), "{said}");
    let _ = std::fs::remove_dir_all(&sessions);
}

#[test]
fn configuration_problems_exit_with_2_before_anything_runs() {
    let sessions = scratch_dir("config");
    let output = webagent()
        .args(["run", "do it", "--url", "http://127.0.0.1:9/"])
        .args(["--sitemap", "/nonexistent/site.yaml"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot read the sitemap"));
    let output = webagent()
        .args(["run", "do it", "--url", "http://127.0.0.1:9/"])
        .args([
            "--chrome",
            "/nonexistent/chromium",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ])
        .arg("--sessions-dir")
        .arg(&sessions)
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no Chromium executable at"));
    assert_eq!(
        std::fs::read_dir(&sessions).unwrap().count(),
        0,
        "no trace for a run that never started"
    );
    let output = webagent()
        .args([
            "run",
            "do it",
            "--url",
            "http://127.0.0.1:9/",
            "--secret",
            "WEBAGENT_TEST_UNSET_SECRET",
        ])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("WEBAGENT_TEST_UNSET_SECRET is not set")
    );
    let _ = std::fs::remove_dir_all(&sessions);
}

#[test]
fn a_sitemap_edited_during_a_run_is_used_from_the_next_step() {
    let s = shared();
    s.server
        .html("/edited", page("Edited", "<button>Hi</button>"));
    let dir = scratch_dir("sitemap-edit");
    let file = dir.join("site.yaml");
    let origin = s.server.origin();
    std::fs::write(
        &file,
        format!("title: Before the edit\norigin: {origin}\nchildren:\n  edited:\n    title: First title\n"),
    )
    .unwrap();
    let (output, requests) = s.runtime.block_on(async {
        // Step 1 waits three seconds, which is when the file is edited.
        let llm = LlmServer::start(vec![
            reply("wait for the edit", json!({"wait": {"seconds": 3}})),
            done("saw it", true),
        ])
        .await;
        let child = tokio::process::Command::from(webagent())
            .args(["run", "Look at the site map", "--json", "--model", "m"])
            .args(["--url", &s.server.url("/edited")])
            .args(["--base-url", &llm.base_url()])
            .arg("--sitemap")
            .arg(&file)
            .arg("--sessions-dir")
            .arg(dir.join("sessions"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawns");
        tokio::time::timeout(Duration::from_secs(60), llm.wait_for_requests(1))
            .await
            .expect("the first model call arrives");
        std::fs::write(
            &file,
            format!("title: After the edit\norigin: {origin}\nchildren:\n  edited:\n    title: Renamed page\n    notes: Edited while running.\n"),
        )
        .unwrap();
        let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
            .await
            .expect("the run ends")
            .expect("output");
        (output, llm.requests())
    });
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let first = requests[0].json()["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    let second = requests[1].json()["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        first.contains("You are on: /edited (First title)"),
        "{first}"
    );
    assert!(
        second.contains("You are on: /edited (Renamed page)"),
        "{second}"
    );
    assert!(second.contains("Notes for this page: Edited while running."));
    assert!(stdout
        .lines()
        .any(|l| l.contains("\"type\":\"sitemap_reloaded\"") && !l.contains("\"error\"")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_run_stopped_with_ctrl_c_resumes_where_it_stopped() {
    let s = shared();
    s.server
        .html("/stopped", page("Stopped", "<button>Hi</button>"));
    let sessions = scratch_dir("resume-stopped");
    let (trace, output, prompt) = s.runtime.block_on(async {
        // Ctrl-C while the model answers step 2: the run ends as stopped.
        signal_at_second_model_call(
            "Scroll, then report",
            &s.server.url("/stopped"),
            &sessions,
            "-INT",
        )
        .await;
        let trace = traces_in(&sessions).pop().expect("the stopped run's trace");
        let (output, prompt) = resume_headless(&trace, &sessions).await;
        (trace, output, prompt)
    });
    let stopped = std::fs::read_to_string(&trace).expect("the trace");
    assert!(
        stopped
            .lines()
            .last()
            .is_some_and(|l| l.contains("\"reason\":\"stopped\"")),
        "the first run ended as stopped:\n{stopped}"
    );
    assert_eq!(output.status.code(), Some(0), "{}", said(&output));
    // The same run goes on at the step it was stopped in, its first step
    // in the history.
    assert!(prompt.contains("Step 2 of"), "{prompt}");
    assert!(prompt.contains("scroll first"), "{prompt}");
    let events = json_lines(&output);
    let resumed = events
        .iter()
        .find(|e| e["type"] == "resumed")
        .expect("the run says what it resumes");
    assert_eq!(resumed["from"], trace.display().to_string());
    assert_eq!(resumed["step"], 2);
    let last = events.last().expect("events");
    assert_eq!(
        (&last["type"], &last["success"]),
        (&json!("done"), &json!(true))
    );
    let _ = std::fs::remove_dir_all(&sessions);
}

#[test]
fn a_model_that_never_answers_shows_the_wait_and_attempts_that_agree() {
    let s = shared();
    s.server
        .html("/silent", page("Silent", "<button>Hi</button>"));
    let sessions = scratch_dir("silent-model");
    let config = sessions.join("webagent.yaml");
    std::fs::write(
        &config,
        "llm:\n  max_retries: 3\n  timeouts:\n    request: 4\n",
    )
    .expect("a config");
    let output = s.runtime.block_on(async {
        // A server on this machine that takes the request and never
        // answers: one retry after its timeout, not three.
        let llm = LlmServer::start(vec![Reply::Hang, Reply::Hang, Reply::Hang]).await;
        let mut command = webagent();
        command
            .args(["run", "Wait for the model", "--model", "m"])
            .args(["--url", &s.server.url("/silent")])
            .args(["--base-url", &llm.base_url()])
            .arg("--config")
            .arg(&config)
            .arg("--sessions-dir")
            .arg(&sessions);
        crate::support::cli::output_of(command).await
    });
    let said = said(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // While the model says nothing, the log says how long and which try.
    assert!(
        stdout.lines().any(|l| l.contains("waiting for the model: ")
            && l.ends_with("of at most 4 s, attempt 1 of 4")),
        "{said}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("waiting for the model: ") && l.ends_with("attempt 2 of 2")),
        "{said}"
    );
    // The retry and the end count the same attempts.
    assert!(stdout.contains("); attempt 2 of 2 in "), "{said}");
    assert!(stdout.contains("gave up after 2 attempts"), "{said}");
    assert!(!stdout.contains("of 3"), "{said}");
    let _ = std::fs::remove_dir_all(&sessions);
}

#[test]
fn a_sitemap_without_origin_reaches_the_model_only_on_its_own_pages() {
    let s = shared();
    s.server
        .html("/unmapped-page", page("Elsewhere", "<button>Hi</button>"));
    s.server
        .html("/first-hour-mapped", page("Mapped", "<button>Hi</button>"));
    let sessions = scratch_dir("sitemap-applies");
    let sitemap = sessions.join("app.yaml");
    std::fs::write(
        &sitemap,
        "title: The app\nchildren:\n  first-hour-mapped:\n    title: The mapped page\n",
    )
    .expect("a sitemap");
    let (output, prompts) = s.runtime.block_on(async {
        let llm = LlmServer::start(vec![
            reply(
                "go to the mapped page",
                json!({"navigate": {"url": "/first-hour-mapped"}}),
            ),
            done("seen both", true),
        ])
        .await;
        let mut command = webagent();
        command
            .args(["run", "Look at both pages", "--model", "m"])
            .args(["--url", &s.server.url("/unmapped-page")])
            .args(["--base-url", &llm.base_url()])
            .arg("--sitemap")
            .arg(&sitemap)
            .arg("--sessions-dir")
            .arg(&sessions);
        let output = crate::support::cli::output_of(command).await;
        let prompts: Vec<String> = llm
            .requests()
            .iter()
            .map(|r| {
                r.json()["messages"][1]["content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        (output, prompts)
    });
    assert_eq!(output.status.code(), Some(0), "{}", said(&output));
    assert_eq!(prompts.len(), 2, "{}", said(&output));
    // Off its pages, no sitemap (neither this one nor the working
    // directory's demo sitemap), and the model is told none covers it.
    assert!(!prompts[0].contains("<sitemap>"), "{}", prompts[0]);
    assert!(
        prompts[0].contains("No site map covers this page"),
        "{}",
        prompts[0]
    );
    // On its page, the sitemap and where the page is in it.
    assert!(prompts[1].contains("<sitemap>"), "{}", prompts[1]);
    assert!(prompts[1].contains("The mapped page"), "{}", prompts[1]);
    assert!(!prompts[1].contains("No site map covers"), "{}", prompts[1]);
    let _ = std::fs::remove_dir_all(&sessions);
}

#[test]
fn ctrl_c_stops_the_run_cleanly_with_done_in_the_trace() {
    let s = shared();
    s.server
        .html("/interrupt", page("Interrupt", "<button>Hi</button>"));
    let sessions = scratch_dir("interrupt");
    let status = s.runtime.block_on(async {
        let llm = LlmServer::start(vec![Reply::Hang]).await;
        let mut child = tokio::process::Command::from(webagent())
            .args(["run", "Wait for the model", "--model", "m"])
            .args(["--url", &s.server.url("/interrupt")])
            .args(["--base-url", &llm.base_url()])
            .arg("--sessions-dir")
            .arg(&sessions)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawns");
        tokio::time::timeout(Duration::from_secs(60), llm.wait_for_requests(1))
            .await
            .expect("the model call is in flight");
        let pid = child.id().expect("running").to_string();
        let sent = Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .expect("kill runs");
        assert!(sent.success());
        tokio::time::timeout(Duration::from_secs(30), child.wait())
            .await
            .expect("the run ends after Ctrl-C")
            .expect("status")
    });
    assert_eq!(status.code(), Some(1), "a stopped run is not a success");
    let traces: Vec<_> = std::fs::read_dir(&sessions).unwrap().flatten().collect();
    let trace = std::fs::read_to_string(traces[0].path()).unwrap();
    let last: Value = serde_json::from_str(trace.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "done");
    assert_eq!(last["reason"], "stopped");
    assert_eq!(last["success"], false);
    let _ = std::fs::remove_dir_all(&sessions);
}

/// The trace files in `dir`.
fn traces_in(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .expect("the sessions directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect()
}

#[test]
fn a_hand_over_exits_6_and_resumes_headed_once_the_person_hands_back() {
    let s = shared();
    s.server.html(
        "/wall",
        page(
            "Security check",
            "<p>Prove you are human</p><button>Verify</button>",
        ),
    );
    let sessions = scratch_dir("hand-over");
    // Chromium cannot show a window on a test machine: the headed path
    // runs with Chromium's own headless flag added through the config.
    let config = sessions.join("headed.yaml");
    std::fs::write(&config, "browser:\n  extra_args: [\"--headless=new\"]\n").unwrap();
    let url = s.server.url("/wall");
    let (handed, refused, resumed, prompt) = s.runtime.block_on(async {
        let llm = LlmServer::start(vec![reply(
            "a CAPTCHA only a person can pass",
            json!({"hand_over": {"reason": "solve the CAPTCHA on the sign-in page"}}),
        )])
        .await;
        let handed = tokio::process::Command::from(webagent())
            .args(["run", "Sign in", "--json", "--model", "m"])
            .args(["--url", &url, "--base-url", &llm.base_url()])
            .arg("--sessions-dir")
            .arg(&sessions)
            .output()
            .await
            .expect("run runs");
        let trace = traces_in(&sessions).pop().expect("the run's trace");
        // Headless, nobody can act on the page: refused, saying how.
        let refused = tokio::process::Command::from(webagent())
            .arg("resume")
            .arg(&trace)
            .args(["--headless", "--model", "m", "--base-url", &llm.base_url()])
            .arg("--sessions-dir")
            .arg(&sessions)
            .output()
            .await
            .expect("resume runs");
        let next = LlmServer::start(vec![done("signed in", true)]).await;
        let mut resume = tokio::process::Command::from(webagent());
        resume
            .arg("resume")
            .arg(&trace)
            .args(["--headless", "--headed", "--json", "--model", "m"])
            .args(["--base-url", &next.base_url(), "--config"])
            .arg(&config)
            .arg("--sessions-dir")
            .arg(&sessions)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = resume.spawn().expect("resume starts");
        // Enter hands the page back.
        let mut stdin = child.stdin.take().expect("stdin");
        tokio::io::AsyncWriteExt::write_all(&mut stdin, b"\n")
            .await
            .expect("Enter");
        drop(stdin);
        let resumed = child.wait_with_output().await.expect("resume ends");
        let requests = next.requests();
        let prompt = requests
            .first()
            .map(|r| {
                r.json()["messages"][1]["content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .unwrap_or_default();
        (handed, refused, resumed, prompt)
    });
    assert_eq!(handed.status.code(), Some(6), "{}", said(&handed));
    let events = json_lines(&handed);
    let over = events
        .iter()
        .find(|e| e["type"] == "hand_over")
        .expect("a hand_over event");
    assert_eq!(over["reason"], "solve the CAPTCHA on the sign-in page");
    assert_eq!(over["url"], url.as_str());
    assert_eq!(over["title"], "Security check");
    assert_eq!(events.last().unwrap()["reason"], "hand_over");
    assert_eq!(refused.status.code(), Some(2), "{}", said(&refused));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--headed"),
        "{}",
        said(&refused)
    );
    assert_eq!(resumed.status.code(), Some(0), "{}", said(&resumed));
    assert!(
        String::from_utf8_lossy(&resumed.stderr).contains("press Enter here to hand it back"),
        "{}",
        said(&resumed)
    );
    assert!(prompt.contains("Step 2 of"), "{prompt}");
    assert!(prompt.contains("<person_messages>"), "{prompt}");
    assert!(
        prompt.contains("I acted on it myself and handed it back"),
        "the model is told the person acted:\n{prompt}"
    );
    assert!(
        prompt.contains(&format!(
            "<untrusted_page_content>{url} — Security check</untrusted_page_content>"
        )),
        "the page now, fenced:\n{prompt}"
    );
    let _ = std::fs::remove_dir_all(&sessions);
}

/// `webagent resume TRACE --headless --json` against a model that
/// answers `done` at once: its output and the one prompt it read.
async fn resume_headless(
    trace: &std::path::Path,
    sessions: &std::path::Path,
) -> (std::process::Output, String) {
    let resumed = LlmServer::start(vec![done("scrolled and reported", true)]).await;
    let output = tokio::process::Command::from(webagent())
        .arg("resume")
        .arg(trace)
        .args(["--headless", "--json", "--model", "m"])
        .args(["--base-url", &resumed.base_url()])
        .arg("--sessions-dir")
        .arg(sessions)
        .output()
        .await
        .expect("resume runs");
    let requests = resumed.requests();
    assert!(
        requests.len() <= 1,
        "one step to finish: {}",
        requests.len()
    );
    let prompt = requests
        .first()
        .map(|r| {
            r.json()["messages"][1]["content"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .unwrap_or_default();
    (output, prompt)
}
