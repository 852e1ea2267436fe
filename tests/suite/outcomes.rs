//! What a suite reports: passing, failing, flaky and timed-out cases, a
//! task case run by the agent with its tokens counted, a suite refused
//! before any browser starts, and the demo suite passing.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::cases::{finished, serve_outcome_pages, webagent_test, RECIPES};
use crate::support::chromium::shared;
use crate::support::cli::{json_lines, said};
use crate::support::llm_server;
use crate::support::scratch::scratch_dir;

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
            "--app-url",
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
            "--app-url",
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
            "--app-url",
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
        "--app-url",
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

/// A task case whose model hands the page to a person is reported as
/// needing one: not failed, not retried, JUnit `skipped`, exit code 6.
#[test]
fn a_case_that_hands_over_needs_a_person_and_is_not_failed() {
    use llm_server::{tool_call_completion, LlmServer, Reply};
    serve_outcome_pages();
    let model = shared().runtime.block_on(LlmServer::start(vec![Reply::json(
        200,
        tool_call_completion(
            "agent_step",
            &serde_json::json!({
                "evaluation_previous_goal": "",
                "memory": "",
                "next_goal": "a person must solve it",
                "action": {"hand_over": {"reason": "solve the CAPTCHA"}},
            }),
        ),
    )]));
    let dir = scratch_dir("hand-over-case");
    std::fs::write(
        dir.join("suite.yaml"),
        "cases:\n\
         \x20 - name: behind a wall\n\
         \x20   url: /hello\n\
         \x20   task: Greet the tester\n\
         \x20   retries: 2\n\
         \x20   expect:\n\
         \x20     - done: success\n",
    )
    .expect("a suite");
    let origin = shared().server.origin();
    let output = webagent_test(
        &dir,
        &[
            "suite.yaml",
            "--app-url",
            &origin,
            "--llm-base-url",
            &model.base_url(),
            "--model",
            "test-model",
            "--json",
            "--junit",
            "out/junit.xml",
        ],
    );
    assert_eq!(output.status.code(), Some(6), "{}", said(&output));
    let seen = json_lines(&output);
    let case = seen
        .iter()
        .find(|e| e["type"] == "case_finished")
        .expect("the case finished");
    assert_eq!(case["status"], "needs_person", "{case}");
    assert_eq!(
        case["attempts"].as_array().map(Vec::len),
        Some(1),
        "not retried: {case}"
    );
    assert_eq!(model.request_count(), 1);
    let totals = &seen
        .iter()
        .find(|e| e["type"] == "suite_finished")
        .expect("the suite finished")["totals"];
    assert_eq!(totals["needs_person"], 1, "{totals}");
    assert_eq!(totals["failed"], 0, "{totals}");
    let junit = std::fs::read_to_string(dir.join("out/junit.xml")).expect("the JUnit file");
    assert!(junit.contains("failures=\"0\""), "{junit}");
    assert!(junit.contains("skipped=\"1\""), "{junit}");
    assert!(
        junit.contains(
            "<skipped message=\"needs a person: a person is needed: solve the CAPTCHA\"/>"
        ),
        "{junit}"
    );
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

/// The command the demo suite's own comment gives, as a new user copies
/// it (from the repository's root, no --yes), passes; only the results
/// go to a scratch folder and the events come as JSON to be read here.
#[test]
fn the_demo_suite_passes_with_the_command_its_comment_gives() {
    let dir = scratch_dir("demo");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let written =
        std::fs::read_to_string(root.join("recipes/acme.suite.yaml")).expect("the demo suite");
    let command = written
        .lines()
        .find_map(|line| {
            line.trim_start_matches('#')
                .trim()
                .strip_prefix("webagent test ")
        })
        .expect("the suite's comment gives its command");
    // The demo suite launches a Chromium of its own, as a new user's run
    // does.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
        .current_dir(root)
        .env_remove("OPENAI_API_KEY")
        .env_remove("WEBAGENT_CONFIG")
        .arg("test")
        .args(command.split_whitespace())
        .arg("--json")
        .arg("--output")
        .arg(dir.join("results"))
        .output()
        .expect("the webagent binary runs");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{command}\n{}",
        said(&output)
    );
    let statuses = finished(&json_lines(&output));
    assert!(statuses.len() >= 5, "{statuses:?}");
    assert!(statuses.values().all(|s| s == "passed"), "{statuses:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failing_case_reports_every_failed_check_and_zero_failures_read_plain() {
    serve_outcome_pages();
    let dir = scratch_dir("every-check");
    std::fs::write(dir.join("steps.rhai"), RECIPES).expect("recipes");
    std::fs::write(
        dir.join("suite.yaml"),
        "defaults: {expect_timeout: 1}\n\
         cases:\n\
         \x20 - name: greets wrongly\n\
         \x20   url: /hello\n\
         \x20   recipe: {file: steps.rhai, name: greet}\n\
         \x20   expect:\n\
         \x20     - text: Goodbye\n\
         \x20     - url: /hello\n\
         \x20     - selector: \"#farewell\"\n",
    )
    .expect("a suite");
    std::fs::write(
        dir.join("passing.yaml"),
        "cases:\n\
         \x20 - {name: greets, url: /hello, recipe: {file: steps.rhai, name: greet}, expect: [{text: Hello}]}\n",
    )
    .expect("a passing suite");
    let origin = shared().server.origin();
    let output = webagent_test(
        &dir,
        &[
            "suite.yaml",
            "--app-url",
            &origin,
            "--junit",
            "out/junit.xml",
            "--report",
            "out/report",
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", said(&output));
    // The summary names both failed checks, not only the first.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("text: \"Goodbye\": "), "{}", said(&output));
    assert!(
        stderr.contains("selector: \"#farewell\": "),
        "{}",
        said(&output)
    );
    assert!(!stderr.contains("url: \"/hello\""), "{}", said(&output));
    let junit = std::fs::read_to_string(dir.join("out/junit.xml")).expect("the JUnit file");
    let parsed =
        junit_parser::from_reader(std::io::Cursor::new(junit.as_bytes())).expect("valid JUnit XML");
    match &parsed.suites[0].cases[0].status {
        junit_parser::TestStatus::Failure(failure) => {
            assert!(failure.message.contains("Goodbye"), "{failure:?}");
            assert!(failure.message.contains("#farewell"), "{failure:?}");
        }
        other => panic!("a failure, not {other:?}"),
    }
    let report = std::fs::read_to_string(dir.join("out/report/index.html")).expect("the report");
    assert_eq!(
        report.matches("<div class=\"failure\">").count(),
        2,
        "{report}"
    );
    assert!(report.contains("class=\"bad\">1 failed"), "{report}");

    // A run with no failure does not show "0 failed" in red; the old
    // spelling of --app-url still works, with a warning.
    let output = webagent_test(
        &dir,
        &[
            "passing.yaml",
            "--base-url",
            &origin,
            "--report",
            "out/passing",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", said(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("warning: `webagent test --base-url` is now --app-url"),
        "{}",
        said(&output)
    );
    let report = std::fs::read_to_string(dir.join("out/passing/index.html")).expect("the report");
    assert!(report.contains("<span>0 failed</span>"), "{report}");
    assert!(!report.contains("class=\"bad\">0"), "{report}");
    assert!(report.contains("class=\"ok\">1 passed"), "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}
