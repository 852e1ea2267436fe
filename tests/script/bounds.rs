//! A script cannot hang or crash the process: a custom action ends at its
//! time limit with `timeout`, Ctrl-C stops a script inside `sleep()`, a
//! deep value is refused before it becomes JSON, and a limit error names
//! the limit and the line. The runs that could hang or abort happen in a
//! child `webagent`, so a failure fails the test, not the test binary.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use webagent::actions::FailureReason;
use webagent::script::{CancelFlag, Limits, Scripts};

use super::{shared, NoPage};
use crate::support::cli::{json_lines, said, webagent};
use crate::support::llm_server::{step_reply, LlmServer};
use crate::support::pages::page;
use crate::support::scratch::scratch_dir;
use crate::support::wait::eventually;

const TIMED: &str = "action(\"nap\", #{ description: \"d\" });\nfn nap() {\n  sleep(100000);\n}\n\
    action(\"spin\", #{ description: \"d\" });\nfn spin() {\n  let n = 0;\n  loop { n += 1; }\n}\n\
    action(\"deeper\", #{ description: \"d\" });\nfn down(n) { down(n + 1) }\nfn deeper() {\n  down(0)\n}\n\
    action(\"quick\", #{ description: \"d\" });\nfn quick() { 42 }\n";

/// Calls the custom action `name` of `scripts` with no page.
fn call(scripts: &Scripts, name: &str) -> webagent::actions::ActionResult {
    crate::support::chromium::runtime().block_on(async {
        // The guard only keeps a broken limit from hanging the suite.
        tokio::time::timeout(
            Duration::from_secs(60),
            scripts.call_action(name, json!({}), &mut NoPage, &CancelFlag::new()),
        )
        .await
        .unwrap_or_else(|_| panic!("`{name}` outlived its time limit"))
    })
}

fn message(result: &webagent::actions::ActionResult) -> String {
    serde_json::to_value(result).expect("a result is JSON")["message"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn a_custom_action_ends_at_its_time_limit_with_a_timeout_and_the_next_call_runs() {
    let scripts = Scripts::new(
        Limits {
            action_time: Duration::from_secs(1),
            operations: u64::MAX / 2,
            ..Limits::default()
        },
        None,
    );
    scripts
        .load_source("time.rhai", TIMED)
        .expect("the actions load");
    let nap = call(&scripts, "nap");
    assert_eq!(nap.reason(), Some(FailureReason::Timeout), "{nap:?}");
    let text = message(&nap);
    assert!(
        text.starts_with("time.rhai:3:") && text.contains("(1 s)"),
        "names the line and the limit: {text}"
    );
    let spin = call(&scripts, "spin");
    assert_eq!(spin.reason(), Some(FailureReason::Timeout), "{spin:?}");
    let text = message(&spin);
    assert!(
        text.starts_with("time.rhai:8:") && text.contains("(1 s)"),
        "{text}"
    );
    let quick = call(&scripts, "quick");
    assert_eq!(
        serde_json::to_value(&quick).expect("JSON"),
        json!({"ok": true, "data": 42})
    );
}

#[test]
fn a_limit_error_names_the_limit_and_the_line() {
    let scripts = Scripts::default();
    scripts
        .load_source("time.rhai", TIMED)
        .expect("the actions load");
    let deeper = call(&scripts, "deeper");
    let text = message(&deeper);
    assert!(
        text.starts_with("time.rhai:11:") && text.contains("more than 48 calls"),
        "{text}"
    );
}

/// Custom actions for a real run: `nap` asks for a sleep past any limit,
/// `doze` sleeps 50 s (within the limit), `deep` returns a 1,000-deep
/// array.
const HOSTILE: &str = "action(\"nap\", #{ description: \"Naps\", risk: \"read\" });\nfn nap() {\n  sleep(100000);\n}\n\
    action(\"doze\", #{ description: \"Dozes\", risk: \"read\" });\nfn doze() {\n  sleep(50);\n  \"rested\"\n}\n\
    action(\"deep\", #{ description: \"Nests\", risk: \"read\" });\nfn deep() {\n  let a = [];\n  for i in 0..1000 { a = [a]; }\n  a\n}\n";

/// `webagent run` on a served page with [`HOSTILE`] loaded, the model
/// answering `actions` in turn; the command and its sessions folder.
fn hostile_run(name: &str, llm: &LlmServer) -> (Command, std::path::PathBuf) {
    let s = shared();
    s.server
        .html("/bounds", page("Bounds", "<p>nothing to see</p>"));
    let dir = scratch_dir(name);
    let recipes = dir.join("recipes");
    std::fs::create_dir_all(&recipes).expect("a recipes folder");
    std::fs::write(recipes.join("hostile.rhai"), HOSTILE).expect("the script is written");
    let mut command = webagent();
    command
        .args(["run", "Be hostile", "--json", "--model", "m"])
        .args(["--url", &s.server.url("/bounds")])
        .args(["--base-url", &llm.base_url()])
        .arg("--recipes")
        .arg(&recipes)
        .arg("--sessions-dir")
        .arg(dir.join("sessions"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    (command, dir)
}

/// Waits (at most 120 s, then kills it) for `child` to end.
async fn ended(child: std::process::Child) -> Output {
    ended_within(child, Duration::from_secs(120)).await
}

/// Waits (at most `limit`, then kills it and fails) for `child` to end.
async fn ended_within(child: std::process::Child, limit: Duration) -> Output {
    let pid = child.id();
    let waiting = tokio::task::spawn_blocking(move || child.wait_with_output());
    match tokio::time::timeout(limit, waiting).await {
        Ok(joined) => joined.expect("joined").expect("waited"),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("webagent did not end within {} s", limit.as_secs());
        }
    }
}

/// The one trace under `dir`'s sessions folder, as events.
fn trace(dir: &Path) -> Vec<Value> {
    let Ok(entries) = std::fs::read_dir(dir.join("sessions")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .flat_map(|text| {
            text.lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect::<Vec<Value>>()
        })
        .collect()
}

fn step_result<'a>(events: &'a [Value], name: &str) -> Option<&'a Value> {
    events
        .iter()
        .find(|e| e["type"] == "step" && e["action"].get(name).is_some())
        .map(|e| &e["result"])
}

#[test]
fn a_sleeping_or_deep_custom_action_ends_with_a_reason_and_the_run_goes_on() {
    let s = shared();
    let (output, dir) = s.runtime.block_on(async {
        let llm = LlmServer::start(vec![
            step_reply("nap", json!({"nap": {}})),
            step_reply("nest", json!({"deep": {}})),
            step_reply("finish", json!({"done": {"text": "done", "success": true}})),
        ])
        .await;
        let (mut command, dir) = hostile_run("bounded", &llm);
        let child = command.spawn().expect("webagent runs");
        (ended(child).await, dir)
    });
    let events = json_lines(&output);
    let nap = step_result(&events, "nap").unwrap_or_else(|| panic!("{}", said(&output)));
    assert_eq!(nap["reason"], "timeout", "{nap}");
    let text = nap["message"].as_str().unwrap_or("");
    assert!(
        text.contains("hostile.rhai:3:") && text.contains("(60 s)"),
        "{text}"
    );
    let deep = step_result(&events, "deep").unwrap_or_else(|| panic!("{}", said(&output)));
    assert_eq!(deep["ok"], false, "{deep}");
    let text = deep["message"].as_str().unwrap_or("");
    assert!(
        text.contains("hostile.rhai:") && text.contains("more than 64 deep"),
        "{text}"
    );
    assert_eq!(output.status.code(), Some(0), "{}", said(&output));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A recipe that reads the page, then sleeps for 50 s.
const DOZING_RECIPE: &str = "recipe(\"doze\", \"Dozes\");\nfn doze() {\n  run_action(\"read_page\", #{});\n  sleep(50);\n  \"rested\"\n}\n";

#[test]
fn ctrl_c_stops_a_recipe_inside_sleep() {
    // In a recipe run nothing but the script itself was running when
    // Ctrl-C came, and it slept on to the end of its `sleep`.
    let s = shared();
    s.server.html("/dozing", page("Dozing", "<p>quiet</p>"));
    let dir = scratch_dir("interrupted");
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    std::fs::write(dir.join("doze.rhai"), DOZING_RECIPE).expect("the recipe is written");
    let output = s.runtime.block_on(async {
        let mut command = webagent();
        command
            .current_dir(&dir)
            .args(["recipe", "run", "doze.rhai", "--json", "--url"])
            .arg(s.server.url("/dozing"))
            .arg("--sessions-dir")
            .arg(dir.join("sessions"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = command.spawn().expect("webagent runs");
        let pid = child.id();
        // The recipe sleeps once its read_page step is in the trace.
        let dozing = eventually(|| {
            trace(&dir)
                .iter()
                .any(|e| e["type"] == "step" && e["action"].get("read_page").is_some())
        })
        .await;
        assert!(dozing, "the recipe started");
        let sent = Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(sent, "SIGINT sent");
        // Well short of the 50 s the sleep would take.
        ended_within(child, Duration::from_secs(30)).await
    });
    let events = json_lines(&output);
    let last = events.last().unwrap_or_else(|| panic!("{}", said(&output)));
    assert_eq!(last["type"], "done", "{}", said(&output));
    assert_eq!(last["reason"], "stopped", "{last}");
    let _ = std::fs::remove_dir_all(&dir);
}
