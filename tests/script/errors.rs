//! Errors that point at the line (#33): every script error names the
//! file, line and column, shows the source line with a caret under the
//! column, and says what went wrong in words a person and the model can
//! act on. Each test asserts the whole message.

use std::path::Path;

use webagent::script::{CancelFlag, Limits, ScriptError, Scripts};

use super::{shared, NoPage};
use crate::support::chromium::runtime;
use crate::support::cli::{run_webagent, said};
use crate::support::pages::page;
use crate::support::scratch::scratch_dir;

/// Loads `source` as `name` and runs its recipe `main` with no page.
fn run_main(scripts: &Scripts, name: &str, source: &str) -> ScriptError {
    scripts.load_source(name, source).expect("the file loads");
    runtime()
        .block_on(scripts.run_recipe(Some("main"), &mut NoPage, &CancelFlag::new()))
        .expect_err("the recipe fails")
}

#[test]
fn a_host_function_called_with_too_few_arguments_names_the_signatures_it_takes() {
    let error = run_main(
        &Scripts::default(),
        "first.rhai",
        "recipe(\"main\", \"Signs in\");\nfn main() {\n    fill(\"#email\");\n}\n",
    );
    assert_eq!(
        error.to_string(),
        "first.rhai:3:5: fill takes fill(target, text); it was called with 1 argument (a string)\n\
         \x20 3 |     fill(\"#email\");\n\
         \x20   |     ^"
    );
}

#[test]
fn a_wrong_call_in_a_custom_action_points_at_its_line_in_the_actions_result() {
    let scripts = Scripts::default();
    scripts
        .load_source(
            "wait.rhai",
            "action(\"settle\", #{ description: \"d\" });\nfn settle() {\n\twait_for(1, 2, 3);\n}\n",
        )
        .expect("the action loads");
    let result = runtime().block_on(scripts.call_action(
        "settle",
        serde_json::json!({}),
        &mut NoPage,
        &CancelFlag::new(),
    ));
    let message = serde_json::to_value(&result).expect("JSON")["message"]
        .as_str()
        .unwrap_or("")
        .to_string();
    // The tab before the call stays a tab under it, so the caret lines up.
    assert_eq!(
        message,
        "wait.rhai:3:2: wait_for takes wait_for(text_or_selector) or \
         wait_for(text_or_selector, timeout_ms); it was called with 3 arguments \
         (a number, a number, a number)\n\
         \x20 3 | \twait_for(1, 2, 3);\n\
         \x20   | \t^"
    );
}

#[test]
fn a_stop_by_the_operations_limit_points_at_the_statement_that_was_running() {
    let scripts = Scripts::new(
        Limits {
            operations: 10_000,
            ..Limits::default()
        },
        None,
    );
    let error = run_main(
        &scripts,
        "bad6.rhai",
        "recipe(\"main\", \"Spins\");\nfn main() {\n    let n = 0;\n    loop {\n        n += 1;\n    }\n}\n",
    );
    assert_eq!(
        error.to_string(),
        "bad6.rhai:5:11: script limit: too many operations (more than 10000; an endless loop?)\n\
         \x20 5 |         n += 1;\n\
         \x20   |           ^"
    );
}

#[test]
fn a_parse_error_shows_its_line_and_a_caret() {
    let error = Scripts::default()
        .load_source(
            "parse.rhai",
            "recipe(\"p\", \"Broken\");\nfn p() {\n    let x = ;\n}\n",
        )
        .expect_err("the file does not parse");
    assert_eq!(
        error.to_string(),
        "parse.rhai:3:13: Unexpected ';'\n\
         \x20 3 |     let x = ;\n\
         \x20   |             ^"
    );
}

#[test]
fn a_missing_file_says_it_is_missing_headless_and_in_check() {
    let dir = scratch_dir("errors-missing");
    let missing = dir.join("nope.rhai");
    let shown = missing.display().to_string();
    let error = Scripts::default()
        .load_file(&missing)
        .expect_err("there is no file");
    assert_eq!(
        error.to_string(),
        format!("{shown}: no such file; check the path")
    );
    let run = run_webagent(&["recipe", "run", &shown]);
    assert_eq!(run.status.code(), Some(2), "{}", said(&run));
    assert_eq!(
        String::from_utf8_lossy(&run.stderr).trim_end(),
        format!("error: {shown}: no such file; check the path"),
        "{}",
        said(&run)
    );
    let check = run_webagent(&["recipe", "check", &shown]);
    assert_eq!(check.status.code(), Some(1), "{}", said(&check));
    assert_eq!(
        String::from_utf8_lossy(&check.stdout),
        format!("{shown}: no such file; check the path\n"),
        "{}",
        said(&check)
    );
}

#[test]
fn recipe_check_reports_undefined_calls_and_a_parameter_never_read() {
    let dir = scratch_dir("errors-check");
    let file = dir.join("lint.rhai");
    std::fs::write(
        &file,
        "recipe(\"main\", \"Signs in\", #{\n    email: #{ type: \"string\" },\n    unused: #{ type: \"string\", \"default\": \"x\" },\n});\n\
         fn main(params) {\n    fill(\"#email\", params.email);\n    clik(\"Sign in\");\n    let twice = |x| x * 2;\n    twice(2);\n    helper();\n}\nfn helper() { log(\"hi\"); }\n",
    )
    .expect("the file is written");
    let shown = file.display().to_string();
    let check = run_webagent(&["recipe", "check", &shown]);
    assert_eq!(check.status.code(), Some(1), "{}", said(&check));
    assert_eq!(
        String::from_utf8_lossy(&check.stdout),
        format!(
            "{shown}: actions: none; recipes: main\n\
             {shown}:1:1: the recipe main declares the parameter unused but never reads it (as params.unused or params[\"unused\"])\n\
             \x20 1 | recipe(\"main\", \"Signs in\", #{{\n\
             \x20   | ^\n\
             {shown}:7:5: clik is not a function of this script or of the host; did you mean click?\n\
             \x20 7 |     clik(\"Sign in\");\n\
             \x20   |     ^\n"
        ),
        "{}",
        said(&check)
    );
}

#[test]
fn the_shipped_recipes_folder_checks_clean_with_the_new_checks() {
    let recipes = Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes");
    let check = run_webagent(&["recipe", "check", &recipes.display().to_string()]);
    assert_eq!(check.status.code(), Some(0), "{}", said(&check));
}

#[test]
fn recipe_run_on_a_page_shows_the_wrong_call_with_its_line() {
    let s = shared();
    s.server
        .html("/errors", page("Errors", "<input id=\"email\">"));
    let dir = scratch_dir("errors-run");
    let file = dir.join("first.rhai");
    std::fs::write(
        &file,
        "recipe(\"first\", \"Fills the email\");\nfn first() {\n    fill(\"#email\");\n}\n",
    )
    .expect("the file is written");
    let shown = file.display().to_string();
    let sessions = dir.join("sessions").display().to_string();
    let run = run_webagent(&[
        "recipe",
        "run",
        &shown,
        "--url",
        &s.server.url("/errors"),
        "--sessions-dir",
        &sessions,
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", said(&run));
    let out = String::from_utf8_lossy(&run.stdout);
    let wanted = format!(
        "not done: {shown}:3:5: fill takes fill(target, text); it was called with 1 argument (a string)\n\
         \x20 3 |     fill(\"#email\");\n\
         \x20   |     ^\n"
    );
    assert!(out.contains(&wanted), "{}", said(&run));
}

#[test]
fn recipe_api_prints_each_host_function_as_text_and_json() {
    let text = run_webagent(&["recipe", "api"]);
    assert_eq!(text.status.code(), Some(0), "{}", said(&text));
    let printed = String::from_utf8_lossy(&text.stdout);
    assert!(
        printed.contains(
            "fill(target, text)\n\
             \x20   Clears a field and types text (or a number) into it; form fields win over labels.\n\
             \x20   returns: the action's result map (`ok`, `data`)\n\
             \x20   errors: no element shows the text; the action failed (its reason and message)\n\
             \x20   example: fill(\"Email\", \"admin@acme.test\");\n"
        ),
        "{printed}"
    );
    let json = run_webagent(&["recipe", "api", "--json"]);
    assert_eq!(json.status.code(), Some(0), "{}", said(&json));
    let entries: serde_json::Value =
        serde_json::from_slice(&json.stdout).expect("recipe api --json prints JSON");
    let waits: Vec<&serde_json::Value> = entries
        .as_array()
        .expect("a list")
        .iter()
        .filter(|e| e["name"] == "wait_for")
        .collect();
    assert_eq!(
        waits
            .iter()
            .map(|e| e["signature"].as_str().unwrap_or(""))
            .collect::<Vec<_>>(),
        [
            "wait_for(text_or_selector)",
            "wait_for(text_or_selector, timeout_ms)"
        ]
    );
    assert_eq!(
        waits[1]["params"],
        serde_json::json!(["text_or_selector", "timeout_ms"])
    );
}
