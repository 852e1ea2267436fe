//! A suite stopped with Ctrl-C: what finished is summed up and written
//! (the summary, the JUnit file, the HTML report), the case in flight and
//! those that never started are marked not run, and it exits 130.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use crate::cases::{serve_outcome_pages, RECIPES};
use crate::support::chromium::shared;
use crate::support::cli::webagent;
use crate::support::processes::signal;
use crate::support::scratch::scratch_dir;

#[test]
fn ctrl_c_writes_what_finished_and_marks_the_rest_not_run() {
    serve_outcome_pages();
    let dir = scratch_dir("stopping");
    std::fs::write(dir.join("steps.rhai"), RECIPES).expect("recipes");
    std::fs::write(
        dir.join("suite.yaml"),
        "cases:\n\
         \x20 - {name: quick, url: /hello, recipe: {file: steps.rhai, name: noop}}\n\
         \x20 - {name: slow one, url: /hello, recipe: {file: steps.rhai, name: stall}}\n\
         \x20 - {name: slow two, url: /hello, recipe: {file: steps.rhai, name: stall}}\n\
         \x20 - {name: slow three, url: /hello, recipe: {file: steps.rhai, name: stall}}\n",
    )
    .expect("a suite");
    let ws = shared()
        .session
        .websocket_url()
        .expect("the shared browser's address");
    let mut child = webagent()
        .current_dir(&dir)
        .env_remove("WEBAGENT_CONFIG")
        .args(["test", "suite.yaml", "--app-url", &shared().server.origin()])
        .args(["--workers", "1", "--json"])
        .args(["--junit", "out/junit.xml", "--report", "out/report"])
        .args(["--connect", &ws])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("webagent test starts");
    // Every stdout line, as it comes, on a channel: the test waits on the
    // first finished case with a deadline rather than blocking on a read.
    let (lines_tx, lines) = mpsc::channel::<String>();
    let stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let stderr = child.stderr.take().expect("stderr");
    let errors = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let mut seen: Vec<Value> = Vec::new();
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(120))
            .expect("the first case finishes");
        let event: Value = serde_json::from_str(&line).expect("a JSON line");
        let first_done = event["type"] == "case_finished";
        seen.push(event);
        if first_done {
            break;
        }
    }
    assert!(signal(child.id(), "-INT"), "Ctrl-C sent");
    let status = child.wait().expect("webagent test ends");
    reader.join().expect("stdout read");
    seen.extend(
        lines
            .try_iter()
            .filter_map(|l| serde_json::from_str(&l).ok()),
    );
    let stderr = errors.join().expect("stderr read");
    let said = format!("{seen:#?}\nstderr:\n{stderr}");

    assert_eq!(status.code(), Some(130), "{said}");
    let statuses: Vec<(String, String)> = seen
        .iter()
        .filter(|e| e["type"] == "case_finished")
        .map(|e| {
            (
                e["name"].as_str().unwrap_or_default().to_string(),
                e["status"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(statuses.len(), 4, "every case is accounted for: {said}");
    assert!(
        statuses.contains(&("quick".into(), "passed".into())),
        "{said}"
    );
    for slow in ["slow one", "slow two", "slow three"] {
        assert!(
            statuses.contains(&(slow.into(), "not_run".into())),
            "{slow} is not run: {said}"
        );
    }
    let summary = seen
        .iter()
        .find(|e| e["type"] == "suite_finished")
        .expect("the summary is printed");
    assert_eq!(summary["totals"]["passed"], 1, "{said}");
    assert_eq!(summary["totals"]["not_run"], 3, "{said}");
    assert!(stderr.contains("press Ctrl-C again"), "{said}");

    let junit = std::fs::read_to_string(dir.join("out/junit.xml")).expect("the JUnit file");
    let parsed =
        junit_parser::from_reader(std::io::Cursor::new(junit.as_bytes())).expect("valid JUnit XML");
    assert_eq!(
        (parsed.tests, parsed.failures, parsed.skipped),
        (4, 0, 3),
        "{junit}"
    );
    assert!(junit.contains("not run"), "{junit}");
    let report = std::fs::read_to_string(dir.join("out/report/index.html")).expect("the report");
    assert!(report.contains("3 not run"), "{report}");
    assert_eq!(
        report.matches("class=\"case not_run\"").count(),
        3,
        "{report}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
