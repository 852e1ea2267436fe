//! `webagent test` run as a QA engineer runs it: the real binary on suite
//! files, against pages this test serves on 127.0.0.1. The binary attaches
//! to this binary's one Chromium (`--connect`), which also exercises the
//! per-worker connection a browser pool gets; the demo suite launches its
//! own. Needs Chromium; without it the first test fails with the command
//! that installs it.

#[path = "support/chromium.rs"]
mod chromium;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use webagent::serve::Response;

use chromium::shared;

/// A scratch folder of its own for each test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("webagent-suite-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

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
    std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
        .current_dir(dir)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("WEBAGENT_CONFIG")
        .arg("test")
        .args(args)
        .args(["--connect", &ws])
        .output()
        .expect("the webagent binary runs")
}

/// The JSON events of a `--json` run.
fn events(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
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

fn said(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Serves the pages of the outcome test: a greeting, and a page that
/// fails on every other visit (odd ones), so a case's first attempt fails
/// and its retry passes.
fn serve_outcome_pages() {
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
    let dir = scratch("outcomes");
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
    let seen = events(&output);
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
    assert_eq!(attempt["failure"]["check"], "text: \"Goodbye\"", "{goodbye}");
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
    let parsed = junit_parser::from_reader(std::io::BufReader::new(junit)).expect("valid JUnit XML");
    assert_eq!((parsed.tests, parsed.failures), (4, 2));
    let cases: BTreeMap<String, &junit_parser::TestCase> = parsed.suites[0]
        .cases
        .iter()
        .map(|c| (c.original_name.clone(), c))
        .collect();
    assert_eq!(cases["greets"].name, "suite::greets", "class and name, as CI shows them");
    assert!(cases["greets"].status.is_success());
    assert!(cases["warms up"].status.is_success());
    assert_eq!(cases["warms up"].reruns.len(), 1, "the flaky attempt is kept");
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
    let url = format!("file://{}", page.canonicalize().expect("the report").display());
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
    assert!(read["text"].as_str().is_some_and(|t| t.contains("ran out of its 2 s")), "{read}");

    // A flaky case fails the run only when asked to.
    for (flag, code) in [(None, 0), (Some("--fail-on-flaky"), 1)] {
        let mut args = vec!["suite.yaml", "--base-url", &origin, "--grep", "warms up", "--json"];
        args.extend(flag);
        let output = webagent_test(&dir, &args);
        assert_eq!(finished(&events(&output))["warms up"], "flaky", "{}", said(&output));
        assert_eq!(output.status.code(), Some(code), "{flag:?}: {}", said(&output));
    }
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
    let dir = scratch("isolation");
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
        &["suite.yaml", "--base-url", &origin, "--workers", "2", "--json"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", said(&output));
    let statuses = finished(&events(&output));
    assert_eq!(statuses["case a"], "passed", "{}", said(&output));
    assert_eq!(statuses["case b"], "passed", "{}", said(&output));
    assert_eq!(arrived.lock().map(|a| a.len()).unwrap_or(0), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shards_run_every_case_exactly_once() {
    serve_outcome_pages();
    let dir = scratch("shards");
    std::fs::write(dir.join("steps.rhai"), RECIPES).expect("recipes");
    let mut suite = String::from("cases:\n");
    for n in 1..=7 {
        suite.push_str(&format!(
            "  - {{name: case {n}, url: /hello, recipe: {{file: steps.rhai, name: noop}}}}\n"
        ));
    }
    std::fs::write(dir.join("suite.yaml"), suite).expect("a suite");
    let origin = shared().server.origin();
    for count in 1..=4 {
        let mut ran: Vec<String> = Vec::new();
        for index in 1..=count {
            let shard = format!("{index}/{count}");
            let output = webagent_test(
                &dir,
                &["suite.yaml", "--base-url", &origin, "--shard", &shard, "--json"],
            );
            assert_eq!(output.status.code(), Some(0), "{shard}: {}", said(&output));
            ran.extend(finished(&events(&output)).into_keys());
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
    let dir = scratch("refused");
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
    let dir = scratch("demo");
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes/acme.suite.yaml");
    // The demo suite launches a Chromium of its own, as a new user's run
    // does.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
        .current_dir(&dir)
        .env_remove("OPENAI_API_KEY")
        .env_remove("WEBAGENT_CONFIG")
        .args(["test", suite.to_str().expect("a path"), "--demo", "--yes", "--json"])
        .output()
        .expect("the webagent binary runs");
    assert_eq!(output.status.code(), Some(0), "{}", said(&output));
    let statuses = finished(&events(&output));
    assert!(statuses.len() >= 5, "{statuses:?}");
    assert!(statuses.values().all(|s| s == "passed"), "{statuses:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
