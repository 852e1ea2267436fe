//! Runs in a session: a recipe it loaded and an agent task start from the
//! page the last command left, and leave the page where they end.

use serde_json::json;

use crate::support::chromium::runtime;
use crate::support::cli::said;
use crate::support::listing::index_of;
use crate::support::llm_server::{step_reply, LlmServer};
use crate::support::pages::page;
use crate::{server, Sessions};

/// A page whose button (`#add`) adds a numbered button each click.
fn adding_page() -> String {
    page(
        "Adding",
        "<button id=add onclick=\"var b=document.createElement('button');\
         b.textContent='Added '+(++window.added);document.body.appendChild(b)\">Add</button>\
         <script>window.added=0</script>",
    )
}

#[test]
fn recipe_run_in_a_session_starts_on_its_page_and_leaves_the_page_there() {
    server().html("/adding-recipe", adding_page());
    let s = Sessions::new("recipe");
    let file = s.home.join("adding.rhai");
    std::fs::write(
        &file,
        "recipe(\"add_two\", \"Adds two buttons\");\n\
         fn add_two() { click(\"#add\"); click(\"#add\"); \"added two\" }\n",
    )
    .expect("writing the recipe");
    let file = file.display().to_string();
    s.start("r", &server().url("/adding-recipe"), &["--recipes", &file]);
    let output = s.run(&[
        "recipe",
        "run",
        &file,
        "--session",
        "r",
        "--recipe",
        "add_two",
    ]);
    assert!(output.status.success(), "{}", said(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("added two"),
        "{}",
        said(&output)
    );
    let after = s.ok(&["observe", "--session", "r"]);
    assert!(after.contains("Added 2"), "{after}");
    // A file the session did not load is named, with how to load it.
    let other = s.home.join("other.rhai").display().to_string();
    let refused = s.run(&["recipe", "run", &other, "--session", "r"]);
    assert_eq!(refused.status.code(), Some(2), "{}", said(&refused));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--recipes"));
}

#[test]
fn run_in_a_session_acts_on_its_page_and_leaves_the_page_where_it_ended() {
    server().html("/adding-run", adding_page());
    let s = Sessions::new("run");
    let listing_url = server().url("/adding-run");
    let llm = runtime().block_on(LlmServer::start(Vec::new()));
    let mut start = s.command(&["session", "start", "a", &listing_url]);
    start
        .env("OPENAI_BASE_URL", llm.base_url())
        .env("OPENAI_API_KEY", "test")
        .env("WEBAGENT_MODEL", "scripted");
    let started = start.output().expect("session start runs");
    assert!(started.status.success(), "{}", said(&started));
    let listing = s.ok(&["observe", "--session", "a"]);
    let add = index_of(&listing, ">Add<");
    llm.push(step_reply("add one", json!({"click": {"index": add}})));
    llm.push(step_reply(
        "report",
        json!({"done": {"text": "added one", "success": true}}),
    ));
    let output = s.run(&["run", "add one button", "--session", "a"]);
    assert!(output.status.success(), "{}", said(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("added one"),
        "{}",
        said(&output)
    );
    let after = s.ok(&["observe", "--session", "a"]);
    assert!(after.contains("Added 1"), "{after}");
}

#[test]
fn export_of_a_session_writes_a_recipe_of_what_its_commands_did() {
    server().html("/adding-export", adding_page());
    let s = Sessions::new("export");
    s.start("x", &server().url("/adding-export"), &[]);
    let listing = s.ok(&["observe", "--session", "x"]);
    let add = format!("click {}", index_of(&listing, ">Add<"));
    s.ok(&["exec", "--session", "x", &add]);
    s.ok(&["exec", "--session", "x", &add]);
    let recipe = s.home.join("again.rhai");
    let recipe_arg = recipe.display().to_string();
    s.ok(&["export", "--session", "x", "--recipe", &recipe_arg]);
    let source = std::fs::read_to_string(&recipe).expect("the recipe is written");
    // Two commands, numbered on in one trace: two steps.
    assert!(
        source.contains("step(1,") && source.contains("step(2,"),
        "{source}"
    );
    assert_eq!(source.matches("\"id:add\"").count(), 2, "{source}");
}
