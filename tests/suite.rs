//! `webagent test` run as a QA engineer runs it: the real binary on suite
//! files, against pages this test serves on 127.0.0.1. The binary attaches
//! to this binary's one Chromium (`--connect`), which also exercises the
//! per-worker connection a browser pool gets; the demo suite launches its
//! own. Needs Chromium; without it the first test fails with the command
//! that installs it.

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use support::chromium::shared;
use support::cli::{json_lines, said, webagent};
use support::llm_server;
use support::scratch::scratch_dir;
use webagent::serve::Response;

/// The recipes the test suites run.
const RECIPES: &str = r##"
recipe("greet", "Clicks the greeting button");
fn greet() { click("#greet"); text() }

recipe("noop", "Does nothing but say where it is");
fn noop() { url() }

recipe("stall", "Waits for something that never comes");
fn stall() { wait_for("never shows up", 60000); "came" }

recipe("together", "Waits until both isolation cases are on their pages");
fn together() { wait_for("both here", 20000); text() }
"##;

/// Runs `webagent test` in `dir` with `args`, attached to the shared
/// browser.
fn webagent_test(dir: &Path, args: &[&str]) -> Output {
    let ws = shared()
        .session
        .websocket_url()
        .expect("the shared browser's address");
    webagent()
        .current_dir(dir)
        .env_remove("WEBAGENT_CONFIG")
        .arg("test")
        .args(args)
        .args(["--connect", &ws])
        .output()
        .expect("the webagent binary runs")
}

/// Writes the test recipes and `suite.yaml` into `dir`: cases `case 1`
/// to `case N`, each with the flow-map body `case` (`url: …, recipe: …`).
fn numbered_cases(dir: &Path, n: usize, case: &str) {
    std::fs::write(dir.join("steps.rhai"), RECIPES).expect("recipes");
    let mut suite = String::from("cases:\n");
    for k in 1..=n {
        suite.push_str(&format!("  - {{name: case {k}, {case}}}\n"));
    }
    std::fs::write(dir.join("suite.yaml"), suite).expect("a suite");
}

/// Each finished case's name and status.
fn finished(events: &[Value]) -> BTreeMap<String, String> {
    events
        .iter()
        .filter(|e| e["type"] == "case_finished")
        .map(|e| {
            (
                e["name"].as_str().unwrap_or_default().to_string(),
                e["status"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Serves the pages of the outcome test: a greeting, and a page that
/// fails on every other visit (odd ones), so a case's first attempt fails
/// and its retry passes. Once per binary: tests run side by side, and
/// registering again would restart the count under a running case.
fn serve_outcome_pages() {
    static SERVED: std::sync::Once = std::sync::Once::new();
    SERVED.call_once(serve_outcome_pages_now);
}

fn serve_outcome_pages_now() {
    let server = &shared().server;
    server.html(
        "/hello",
        "<!doctype html><title>Hello</title><button id=greet onclick=\"out.textContent = 'Hello, tester'\">Greet</button><p id=out></p>",
    );
    let visits = Arc::new(AtomicUsize::new(0));
    server.handle("/flaky", move |_| {
        let n = visits.fetch_add(1, Ordering::SeqCst) + 1;
        let word = if n % 2 == 1 { "warming up" } else { "ready" };
        Response::html(format!("<!doctype html><title>Flaky</title><p>{word}</p>"))
    });
}

#[test]
fn a_suite_reports_passing_failing_flaky_and_timed_out_cases() {
    serve_outcome_pages();
    let dir = scratch_dir("outcomes");
    std::fs::write(dir.join("steps.rhai"), RECIPES).expect("recipes");
    std::fs::write(
        dir.join("suite.yaml"),
        "defaults: {expect_timeout: 1, timeout: 30}\n\
         cases:\n\
         \x20 - name: greets\n\
         \x20   url: /hello\n\
         \x20   recipe: {file: steps.rhai, name: greet}\n\
         \x20   expect:\n\
         \x20     - text: Hello, tester\n\
         \x20     - selector: \"#greet\"\n\
         \x20     - url: /hello\n\
         \x20     - rhai: 'text().contains(\"Hello\")'\n\
         \x20 - name: says goodbye\n\
         \x20   url: /hello\n\
         \x20   recipe: {file: steps.rhai, name: greet}\n\
         \x20   expect:\n\
         \x20     - text: Goodbye\n\
         \x20 - name: warms up\n\
         \x20   url: /flaky\n\
         \x20   recipe: {file: steps.rhai, name: noop}\n\
         \x20   retries: 1\n\
         \x20   expect:\n\
         \x20     - text: ready\n\
         \x20 - name: stalls\n\
         \x20   url: /hello\n\
         \x20   recipe: {file: steps.rhai, name: stall}\n\
         \x20   timeout: 2\n",
    )
    .expect("a suite");
    let origin = shared().server.origin();
    let output = webagent_test(
        &dir,
        &[
            "suite.yaml",
            "--base-url",
            &origin,
            "--workers",
            "2",
            "--json",
            "--junit",
            "out/junit.xml",
            "--report",
            "out/report",
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", said(&output));
    let seen = json_lines(&output);
    let statuses = finished(&seen);
    let expected: BTreeMap<String, String> = [
        ("greets", "passed"),
        ("says goodbye", "failed"),
        ("warms up", "flaky"),
        ("stalls", "timed_out"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(statuses, expected, "{}", said(&output));
    let goodbye = seen
        .iter()
        .find(|e| e["type"] == "case_finished" && e["name"] == "says goodbye")
        .expect("the failed case");
    let attempt = &goodbye["attempts"][0];
    assert_eq!(
        attempt["failure"]["check"], "text: \"Goodbye\"",
        "{goodbye}"
    );
    assert!(
        attempt["failure"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Hello, tester")),
        "the failure says what the page read instead: {goodbye}"
    );
    for kept in ["trace", "screenshot"] {
        let file = dir.join(attempt[kept].as_str().expect(kept));
        assert!(file.is_file(), "the failed case keeps its {kept}: {file:?}");
    }
    assert!(seen
        .iter()
        .any(|e| e["type"] == "suite_finished" && e["totals"]["flaky"] == 1));

    // A CI system's parser reads the JUnit file.
    let junit = std::fs::File::open(dir.join("out/junit.xml")).expect("the JUnit file");
    let parsed =
        junit_parser::from_reader(std::io::BufReader::new(junit)).expect("valid JUnit XML");
    assert_eq!((parsed.tests, parsed.failures), (4, 2));
    let cases: BTreeMap<String, &junit_parser::TestCase> = parsed.suites[0]
        .cases
        .iter()
        .map(|c| (c.original_name.clone(), c))
        .collect();
    assert_eq!(
        cases["greets"].name, "suite::greets",
        "class and name, as CI shows them"
    );
    assert!(cases["greets"].status.is_success());
    assert!(cases["warms up"].status.is_success());
    assert_eq!(
        cases["warms up"].reruns.len(),
        1,
        "the flaky attempt is kept"
    );
    match &cases["says goodbye"].status {
        junit_parser::TestStatus::Failure(failure) => {
            assert!(failure.message.contains("Goodbye"), "{failure:?}")
        }
        other => panic!("a failure, not {other:?}"),
    }
    match &cases["stalls"].status {
        junit_parser::TestStatus::Failure(failure) => assert_eq!(failure.failure_type, "timeout"),
        other => panic!("a timeout failure, not {other:?}"),
    }

    // The HTML report opens from disk: failures first, pictures shown.
    let page = dir.join("out/report/index.html");
    let url = format!(
        "file://{}",
        page.canonicalize().expect("the report").display()
    );
    let runtime = &shared().runtime;
    let read = runtime.block_on(async {
        let tab = shared()
            .session
            .new_tab(&url)
            .await
            .expect("the report opens");
        let read = tab
            .eval(
                "({ order: [...document.querySelectorAll('section.case .name')].map(e => e.textContent), \
                   images: document.images.length, \
                   broken: [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).length, \
                   text: document.body.innerText })",
            )
            .await
            .expect("the report reads");
        let _ = tab.close().await;
        read
    });
    let order: Vec<&str> = read["order"]
        .as_array()
        .expect("case titles")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(order.len(), 4, "{read}");
    assert!(
        order[..2].contains(&"says goodbye") && order[..2].contains(&"stalls"),
        "failures come first: {order:?}"
    );
    assert_eq!(order[2], "warms up", "then the flaky case: {order:?}");
    assert!(read["images"].as_u64().unwrap_or(0) >= 4, "{read}");
    assert_eq!(read["broken"], 0, "every picture loads from disk: {read}");
    assert!(
        read["text"]
            .as_str()
            .is_some_and(|t| t.contains("ran out of its 2 s")),
        "{read}"
    );

    // A flaky case fails the run only when asked to.
    for (flag, code) in [(None, 0), (Some("--fail-on-flaky"), 1)] {
        let mut args = vec![
            "suite.yaml",
            "--base-url",
            &origin,
            "--grep",
            "warms up",
            "--json",
        ];
        args.extend(flag);
        let output = webagent_test(&dir, &args);
        assert_eq!(
            finished(&json_lines(&output))["warms up"],
            "flaky",
            "{}",
            said(&output)
        );
        assert_eq!(
            output.status.code(),
            Some(code),
            "{flag:?}: {}",
            said(&output)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A task case runs the agent against a scripted model (the real client
/// over HTTP), is checked, and counts the tokens the model reported.
#[test]
fn a_task_case_runs_the_agent_and_counts_its_tokens() {
    use llm_server::{tool_call_completion, LlmServer, Reply};
    serve_outcome_pages();
    let step = |goal: &str, action: Value| {
        Reply::json(
            200,
            tool_call_completion(
                "agent_step",
                &serde_json::json!({
                    "evaluation_previous_goal": "",
                    "memory": "",
                    "next_goal": goal,
                    "action": action,
                }),
            ),
        )
    };
    let model = shared().runtime.block_on(LlmServer::start(vec![
        step(
            "greet",
            serde_json::json!({"click": {"selector": "#greet"}}),
        ),
        step(
            "report",
            serde_json::json!({"done": {"text": "greeted the tester", "success": true}}),
        ),
    ]));
    let dir = scratch_dir("task");
    std::fs::write(
        dir.join("suite.yaml"),
        "cases:\n\
         \x20 - name: greets by task\n\
         \x20   url: /hello\n\
         \x20   task: Greet the tester\n\
         \x20   expect:\n\
         \x20     - done: success\n\
         \x20     - text: Hello, tester\n",
    )
    .expect("a suite");
    let origin = shared().server.origin();
    let output = webagent_test(
        &dir,
        &[
            "suite.yaml",
            "--base-url",
            &origin,
            "--llm-base-url",
            &model.base_url(),
            "--model",
            "test-model",
            "--json",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", said(&output));
    let seen = json_lines(&output);
    let case = seen
        .iter()
        .find(|e| e["type"] == "case_finished")
        .expect("the case finished");
    assert_eq!(case["status"], "passed", "{case}");
    let attempt = &case["attempts"][0];
    assert_eq!(
        attempt["tokens"]["total_tokens"], 300,
        "two answers of 150: {case}"
    );
    assert_eq!(attempt["model_calls"], 2, "{case}");
    assert_eq!(model.request_count(), 2);

    // With the task cache, the first run stores what the agent did and a
    // second run of the unchanged suite asks the model nothing.
    model.push(step(
        "greet",
        serde_json::json!({"click": {"selector": "#greet"}}),
    ));
    model.push(step(
        "report",
        serde_json::json!({"done": {"text": "greeted the tester", "success": true}}),
    ));
    let llm = model.base_url();
    let base = [
        "suite.yaml",
        "--base-url",
        &origin,
        "--llm-base-url",
        &llm,
        "--model",
        "test-model",
        "--json",
        "--cache=cache",
    ];
    let mut states = Vec::new();
    for run in ["miss", "hit"] {
        let output = webagent_test(&dir, &base);
        assert_eq!(output.status.code(), Some(0), "{run}: {}", said(&output));
        let seen = json_lines(&output);
        let attempt = seen
            .iter()
            .find(|e| e["type"] == "case_finished")
            .map(|e| e["attempts"][0].clone())
            .expect("the case finished");
        states.push((attempt["cache"].clone(), attempt["model_calls"].clone()));
    }
    assert_eq!(
        states,
        vec![
            (Value::from("miss"), Value::from(2)),
            (Value::from("hit"), Value::from(0))
        ]
    );
    assert_eq!(model.request_count(), 4, "the hit asked the model nothing");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cases_running_at_once_share_no_cookies_or_storage() {
    let server = &shared().server;
    let arrived: Arc<Mutex<Vec<String>>> = Arc::default();
    let noted = Arc::clone(&arrived);
    server.handle("/arrive", move |request| {
        if let Ok(mut arrived) = noted.lock() {
            arrived.push(request.query.clone());
        }
        Response::text("noted")
    });
    let counted = Arc::clone(&arrived);
    server.handle("/both", move |_| {
        let both = counted.lock().map(|a| a.len() >= 2).unwrap_or(false);
        Response::text(if both { "yes" } else { "no" })
    });
    // Each case writes a cookie and local storage, waits until the other
    // case has written its own, then shows what its page can read.
    server.html(
        "/iso",
        "<!doctype html><title>Iso</title><p id=out>waiting</p><script>\
         const who = new URLSearchParams(location.search).get('who');\
         document.cookie = 'who=' + who + '; path=/';\
         localStorage.setItem('who', who);\
         fetch('/arrive?' + who).then(async () => {\
           while ((await (await fetch('/both')).text()) !== 'yes') await new Promise(r => setTimeout(r, 50));\
           out.textContent = 'both here; cookie [' + document.cookie + '] storage [' + localStorage.getItem('who') + ']';\
         });</script>",
    );
    let dir = scratch_dir("isolation");
    std::fs::write(dir.join("steps.rhai"), RECIPES).expect("recipes");
    std::fs::write(
        dir.join("suite.yaml"),
        "cases:\n\
         \x20 - name: case a\n\
         \x20   url: /iso?who=a\n\
         \x20   recipe: {file: steps.rhai, name: together}\n\
         \x20   expect:\n\
         \x20     - text: \"cookie [who=a] storage [a]\"\n\
         \x20 - name: case b\n\
         \x20   url: /iso?who=b\n\
         \x20   recipe: {file: steps.rhai, name: together}\n\
         \x20   expect:\n\
         \x20     - text: \"cookie [who=b] storage [b]\"\n",
    )
    .expect("a suite");
    let origin = server.origin();
    let output = webagent_test(
        &dir,
        &[
            "suite.yaml",
            "--base-url",
            &origin,
            "--workers",
            "2",
            "--json",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", said(&output));
    let statuses = finished(&json_lines(&output));
    assert_eq!(statuses["case a"], "passed", "{}", said(&output));
    assert_eq!(statuses["case b"], "passed", "{}", said(&output));
    assert_eq!(arrived.lock().map(|a| a.len()).unwrap_or(0), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_case_in_its_own_context_downloads_into_the_download_folder() {
    let server = &shared().server;
    server.page("/export.csv", "text/csv", "id,total\n1002,59.00\n");
    server.html(
        "/export",
        "<!doctype html><title>Export</title><a id=get href=/export.csv download>Export CSV</a>",
    );
    let dir = scratch_dir("download");
    std::fs::write(
        dir.join("get.rhai"),
        "recipe(\"get\", \"downloads the export\");\n\
         fn get() { let r = run_action(\"click\", #{ selector: \"#get\" }); r.data.downloads[0].state }\n",
    )
    .expect("a recipe");
    std::fs::write(
        dir.join("suite.yaml"),
        "cases:\n  - {name: exports, url: /export, recipe: {file: get.rhai, name: get}}\n",
    )
    .expect("a suite");
    let origin = server.origin();
    let output = webagent_test(
        &dir,
        &["suite.yaml", "--base-url", &origin, "--json", "--yes"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", said(&output));
    let seen = json_lines(&output);
    let case = seen
        .iter()
        .find(|e| e["type"] == "case_finished")
        .expect("the case finished");
    assert_eq!(case["attempts"][0]["outcome"], "completed", "{case}");
    let file = dir.join(".webagent/downloads/export.csv");
    assert_eq!(
        std::fs::read_to_string(&file).expect("the download"),
        "id,total\n1002,59.00\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shards_run_every_case_exactly_once() {
    serve_outcome_pages();
    let dir = scratch_dir("shards");
    numbered_cases(
        &dir,
        7,
        "url: /hello, recipe: {file: steps.rhai, name: noop}",
    );
    let origin = shared().server.origin();
    for count in 1..=4 {
        let mut ran: Vec<String> = Vec::new();
        for index in 1..=count {
            let shard = format!("{index}/{count}");
            let output = webagent_test(
                &dir,
                &[
                    "suite.yaml",
                    "--base-url",
                    &origin,
                    "--shard",
                    &shard,
                    "--json",
                ],
            );
            assert_eq!(output.status.code(), Some(0), "{shard}: {}", said(&output));
            ran.extend(finished(&json_lines(&output)).into_keys());
        }
        ran.sort();
        let every: Vec<String> = {
            let mut all: Vec<String> = (1..=7).map(|n| format!("case {n}")).collect();
            all.sort();
            all
        };
        assert_eq!(ran, every, "N = {count}: each case exactly once");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_suite_that_does_not_read_is_refused_before_any_browser_starts() {
    let dir = scratch_dir("refused");
    std::fs::write(
        dir.join("suite.yaml"),
        "cases:\n  - name: a\n    url: /\n    task: do it\n    retry: 2\n",
    )
    .expect("a suite");
    // A Chromium that does not exist: had anything tried to start one,
    // the error would say so.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
        .current_dir(&dir)
        .args(["test", "suite.yaml", "--chrome", "/nowhere/chromium"])
        .output()
        .expect("the webagent binary runs");
    assert_eq!(output.status.code(), Some(2), "{}", said(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("suite.yaml:5:5:"), "{stderr}");
    assert!(stderr.contains("retry"), "{stderr}");
    assert!(!stderr.contains("chromium"), "{stderr}");
    assert!(!dir.join(".webagent/test-results").exists(), "nothing ran");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_demo_suite_passes() {
    let dir = scratch_dir("demo");
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes/acme.suite.yaml");
    // The demo suite launches a Chromium of its own, as a new user's run
    // does.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
        .current_dir(&dir)
        .env_remove("OPENAI_API_KEY")
        .env_remove("WEBAGENT_CONFIG")
        .args([
            "test",
            suite.to_str().expect("a path"),
            "--demo",
            "--yes",
            "--json",
        ])
        .output()
        .expect("the webagent binary runs");
    assert_eq!(output.status.code(), Some(0), "{}", said(&output));
    let statuses = finished(&json_lines(&output));
    assert!(statuses.len() >= 5, "{statuses:?}");
    assert!(statuses.values().all(|s| s == "passed"), "{statuses:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A stand-in for a browser pool such as browserless, speaking its
/// protocol as a client meets it: a DevTools websocket at `/?token=…`
/// (the token checked: 401 without it, 400 for a request line that is not
/// a path), at most `limit` sessions at once with the rest queued (a
/// queued client waits with no answer), and a Chromium of its own per
/// connection, stopped when the client goes. `restart` stops every
/// browser and refuses connections for a while, as a pool that restarts.
mod pool {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
    use tokio::net::{TcpListener, TcpStream};
    use tokio::process::{Child, Command};
    use tokio::sync::Semaphore;

    /// The running stand-in.
    #[derive(Clone)]
    pub struct Pool {
        /// Its port on 127.0.0.1.
        pub port: u16,
        /// Sessions it gave a browser, over its life.
        pub served: Arc<AtomicUsize>,
        /// The most sessions it held at once.
        pub most_at_once: Arc<AtomicUsize>,
        at_once: Arc<AtomicUsize>,
        waiting: Arc<AtomicUsize>,
        down_until: Arc<Mutex<Option<Instant>>>,
        browsers: Arc<Mutex<Vec<(usize, Child)>>>,
        generation: Arc<AtomicUsize>,
    }

    const TOKEN: &str = "s3cret";

    impl Pool {
        /// Starts listening; serves until the runtime ends.
        pub async fn start(limit: usize) -> Pool {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
            let port = listener.local_addr().expect("an address").port();
            let pool = Pool {
                port,
                served: Arc::default(),
                most_at_once: Arc::default(),
                at_once: Arc::default(),
                waiting: Arc::default(),
                down_until: Arc::default(),
                browsers: Arc::default(),
                generation: Arc::default(),
            };
            let slots = Arc::new(Semaphore::new(limit));
            let serving = pool.clone();
            tokio::spawn(async move {
                while let Ok((client, _)) = listener.accept().await {
                    let pool = serving.clone();
                    let slots = Arc::clone(&slots);
                    tokio::spawn(async move { pool.session(client, slots).await });
                }
            });
            pool
        }

        /// The address a client is told to use, as pools document it (no
        /// path before the query).
        pub fn address(&self) -> String {
            format!("ws://127.0.0.1:{}?token={TOKEN}", self.port)
        }

        /// Stops every browser now and refuses connections for `down`.
        pub fn restart(&self, down: Duration) {
            if let Ok(mut until) = self.down_until.lock() {
                *until = Some(Instant::now() + down);
            }
            self.generation.fetch_add(1, Ordering::SeqCst);
            // Each session then waits for its browser to exit and removes
            // its profile.
            if let Ok(mut browsers) = self.browsers.lock() {
                for (_, browser) in browsers.iter_mut() {
                    let _ = browser.start_kill();
                }
            }
        }

        /// Waits until every session has ended and its browser is
        /// stopped, then stops whatever is left, so no Chromium outlives
        /// the test.
        pub fn close(&self) {
            let deadline = Instant::now() + Duration::from_secs(30);
            while self.at_once.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if let Ok(mut browsers) = self.browsers.lock() {
                for (_, browser) in browsers.iter_mut() {
                    let _ = browser.start_kill();
                }
                browsers.clear();
            }
        }

        /// Clients waiting in the queue now.
        pub fn waiting(&self) -> usize {
            self.waiting.load(Ordering::SeqCst)
        }

        fn down(&self) -> bool {
            self.down_until
                .lock()
                .map(|u| u.is_some_and(|until| Instant::now() < until))
                .unwrap_or(false)
        }

        async fn session(&self, mut client: TcpStream, slots: Arc<Semaphore>) {
            if self.down() {
                return; // the connection closes unanswered
            }
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                match client.read(&mut byte).await {
                    Ok(1) => head.push(byte[0]),
                    _ => return,
                }
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let target = head.split(' ').nth(1).unwrap_or_default().to_string();
            let refuse = |status: &str| {
                format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            };
            if !target.starts_with('/') {
                let _ = client.write_all(refuse("400 Bad Request").as_bytes()).await;
                return;
            }
            if !target.contains(&format!("token={TOKEN}")) {
                let _ = client
                    .write_all(refuse("401 Unauthorized").as_bytes())
                    .await;
                return;
            }
            // The queue: wait, unanswered, for a free slot.
            self.waiting.fetch_add(1, Ordering::SeqCst);
            let slot = slots.acquire_owned().await;
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            let Ok(_slot) = slot else { return };
            let now = self.at_once.fetch_add(1, Ordering::SeqCst) + 1;
            self.most_at_once.fetch_max(now, Ordering::SeqCst);
            let generation = self.generation.load(Ordering::SeqCst);
            if let Some((id, child, ws, profile)) = self.launch().await {
                self.served.fetch_add(1, Ordering::SeqCst);
                let path = ws
                    .splitn(4, '/')
                    .nth(3)
                    .map(|p| format!("/{p}"))
                    .unwrap_or_default();
                let port = ws
                    .split(':')
                    .nth(2)
                    .and_then(|p| p.split('/').next())
                    .unwrap_or_default()
                    .to_string();
                let rest = head.split_once("\r\n").map(|(_, r)| r).unwrap_or_default();
                let rest: String = rest
                    .lines()
                    .filter(|l| !l.to_ascii_lowercase().starts_with("host:"))
                    .map(|l| format!("{l}\r\n"))
                    .collect();
                let forwarded = format!(
                    "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{}",
                    rest.trim_end_matches("\r\n").to_string() + "\r\n\r\n"
                );
                if let Ok(mut browsers) = self.browsers.lock() {
                    browsers.push((id, child));
                }
                if let Ok(mut upstream) = TcpStream::connect(format!("127.0.0.1:{port}")).await {
                    if generation == self.generation.load(Ordering::SeqCst)
                        && upstream.write_all(forwarded.as_bytes()).await.is_ok()
                    {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                    }
                }
                // The client left: its browser goes, as in a pool.
                let finished =
                    self.browsers.lock().ok().and_then(|mut b| {
                        b.iter().position(|(i, _)| *i == id).map(|at| b.remove(at))
                    });
                if let Some((_, mut child)) = finished {
                    let _ = child.kill().await;
                }
                let _ = std::fs::remove_dir_all(profile);
            }
            self.at_once.fetch_sub(1, Ordering::SeqCst);
        }

        /// A Chromium of the session's own: its number, the process, its
        /// DevTools address and its profile.
        async fn launch(&self) -> Option<(usize, Child, String, std::path::PathBuf)> {
            let chrome = webagent::browser::find_chrome(None).ok()?;
            // Every browser of every pool in this process gets a profile
            // of its own.
            static LAUNCHED: AtomicUsize = AtomicUsize::new(0);
            let id = LAUNCHED.fetch_add(1, Ordering::SeqCst);
            let profile =
                std::env::temp_dir().join(format!("webagent-pool-{}-{id}", std::process::id(),));
            let mut command = Command::new(chrome);
            command
                .args([
                    "--headless",
                    "--disable-gpu",
                    "--no-sandbox",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--no-first-run",
                    "--remote-debugging-port=0",
                ])
                .arg(format!("--user-data-dir={}", profile.display()))
                .arg("about:blank")
                .stderr(std::process::Stdio::piped())
                .stdout(std::process::Stdio::null())
                .kill_on_drop(true);
            let mut child = command.spawn().ok()?;
            let mut lines = BufReader::new(child.stderr.take()?).lines();
            let ws = tokio::time::timeout(Duration::from_secs(30), async {
                while let Ok(Some(line)) = lines.next_line().await {
                    if let Some(at) = line.find("ws://") {
                        return Some(line[at..].trim().to_string());
                    }
                }
                None
            })
            .await
            .ok()??;
            // Chromium keeps writing to stderr; keep reading so it never
            // blocks on a full pipe.
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            Some((id, child, ws, profile))
        }
    }
}

#[test]
fn a_pool_that_queues_sessions_serves_a_suite_at_its_documented_address() {
    serve_outcome_pages();
    let pool = shared().runtime.block_on(pool::Pool::start(2));
    let dir = scratch_dir("pool");
    numbered_cases(
        &dir,
        6,
        "url: /hello, recipe: {file: steps.rhai, name: greet}, expect: [{text: \"Hello, tester\"}]",
    );
    let origin = shared().server.origin();
    // Four workers against a pool of two: two wait in its queue, unanswered,
    // until the first two leave.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
        .current_dir(&dir)
        .args([
            "test",
            "suite.yaml",
            "--base-url",
            &origin,
            "--workers",
            "4",
            "--json",
        ])
        .args(["--connect", &pool.address(), "--connect-timeout", "120"])
        .output()
        .expect("the webagent binary runs");
    assert_eq!(output.status.code(), Some(0), "{}", said(&output));
    let statuses = finished(&json_lines(&output));
    assert_eq!(statuses.len(), 6, "{statuses:?}");
    assert!(statuses.values().all(|s| s == "passed"), "{statuses:?}");
    let served = pool.served.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        (2..=4).contains(&served),
        "a browser per worker connection: {served}"
    );
    assert_eq!(
        pool.most_at_once.load(std::sync::atomic::Ordering::SeqCst),
        2
    );

    // A pool whose one slot is taken keeps the next session waiting: a
    // client gives up after --connect-timeout, and one patient enough gets
    // the browser once the slot frees.
    let busy = shared().runtime.block_on(pool::Pool::start(1));
    let holder = shared().runtime.block_on(async {
        let launch = webagent::browser::LaunchOptions {
            connect: Some(busy.address()),
            ..Default::default()
        };
        webagent::browser::BrowserSession::start(launch)
            .await
            .expect("the first session gets the slot")
    });
    let (page, address, here) = (format!("{origin}/hello"), busy.address(), dir.clone());
    let observe = move |timeout: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
            .current_dir(&here)
            .args(["observe", &page, "--connect", &address])
            .args(["--connect-timeout", timeout])
            .output()
            .expect("the webagent binary runs")
    };
    let impatient = observe("1");
    let stderr = String::from_utf8_lossy(&impatient.stderr);
    assert_eq!(impatient.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no answer within 1s"), "{stderr}");
    assert!(stderr.contains("--connect-timeout"), "{stderr}");
    let patient = std::thread::spawn({
        let observe = observe.clone();
        move || observe("60")
    });
    // The slot frees once the patient one is surely queued behind it.
    let queued = std::time::Instant::now();
    while busy.waiting() == 0 && queued.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(holder);
    let patient = patient.join().expect("the patient observe ends");
    assert_eq!(patient.status.code(), Some(0), "{}", said(&patient));
    assert!(
        String::from_utf8_lossy(&patient.stdout).contains("Greet"),
        "{}",
        said(&patient)
    );

    // A wrong token is the server's answer, said as such.
    let wrong = pool.address().replace("s3cret", "wrong");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
        .current_dir(&dir)
        .args(["observe", &format!("{origin}/hello"), "--connect", &wrong])
        .output()
        .expect("the webagent binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("401"), "{stderr}");
    assert!(stderr.contains("token"), "{stderr}");
    assert!(!stderr.contains("--remote-debugging-port"), "{stderr}");
    assert_eq!(stderr.matches("401").count(), 1, "said once: {stderr}");
    assert!(
        !stderr.contains("token=wrong"),
        "a token is a credential: {stderr}"
    );
    pool.close();
    busy.close();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_pool_that_restarts_is_joined_again_and_one_that_stays_down_ends_the_run() {
    let pool = shared().runtime.block_on(pool::Pool::start(4));
    let server = &shared().server;
    let b_visits = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&b_visits);
    server.html(
        "/before",
        "<!doctype html><title>Before</title><p>before</p>",
    );
    server.handle("/after", move |_| {
        seen.fetch_add(1, Ordering::SeqCst);
        Response::html("<!doctype html><title>After</title><p>after</p>")
    });
    for (down, window, rejoins) in [
        (Duration::from_millis(1500), 20, true),
        (Duration::from_secs(30), 2, false),
    ] {
        let restarting = pool.clone();
        // Once: the page is opened again after the browser is back, which
        // must not restart the pool a second time.
        let once = Arc::new(std::sync::atomic::AtomicBool::new(false));
        server.handle("/restart", move |_| {
            // A moment after this page is served, as a pool restarting
            // between two calls.
            let pool = restarting.clone();
            if !once.swap(true, Ordering::SeqCst) {
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(300));
                    pool.restart(down);
                });
            }
            Response::html("<!doctype html><title>Restart</title><p>restarting</p>")
        });
        let dir = scratch_dir(if rejoins { "rejoin" } else { "give-up" });
        std::fs::write(
            dir.join("webagent.yaml"),
            format!("browser:\n  reconnect_window: {window}\n"),
        )
        .expect("a config");
        let before = b_visits.load(Ordering::SeqCst);
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
            .current_dir(&dir)
            .args(["exec", &server.url("/before")])
            .args([
                &format!(
                    "{{\"navigate\":{{\"url\":\"{}\"}}}}",
                    server.url("/restart")
                ),
                "{\"wait\":{\"seconds\":1}}",
                &format!("{{\"navigate\":{{\"url\":\"{}\"}}}}", server.url("/after")),
            ])
            .args(["--connect", &pool.address()])
            .output()
            .expect("the webagent binary runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        if rejoins {
            assert_eq!(output.status.code(), Some(0), "{}", said(&output));
            assert!(stderr.contains("attached to it again"), "{}", said(&output));
            assert_eq!(
                b_visits.load(Ordering::SeqCst),
                before + 1,
                "{}",
                said(&output)
            );
        } else {
            assert_eq!(output.status.code(), Some(1), "{}", said(&output));
            assert_eq!(
                b_visits.load(Ordering::SeqCst),
                before,
                "no action runs after giving up: {}",
                said(&output)
            );
            let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
            assert_eq!(errors.len(), 1, "one fatal error: {stderr}");
            assert!(errors[0].contains("reconnect_window"), "{stderr}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    pool.close();
}
