//! Recipes that survive change, end to end: a run recorded by the agent
//! (a real Chromium on pages this test serves, the real LLM client against
//! a scripted chat-completions server), exported, and replayed on another
//! origin, with other values, after the page changed; a step healed by the
//! model and the repaired recipe replayed without it; the task cache's
//! miss, hit and heal; a one-time code typed and checked by the page.
//!
//! One Chromium for the whole binary: the commands run here attach to it
//! with `--connect`.

#[path = "../support/mod.rs"]
mod support;

mod recorded;
// Recording and replaying inside frames of another origin.
mod far_frames;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::sync::mpsc;

use support::chromium::{runtime, shared};
use support::cli::{json_lines, output_of, said, webagent};
use support::events::drain;
use support::llm_server::{step_reply, LlmServer, Reply};
use support::pages::page;
use support::scratch::scratch_dir;
use support::tab::script_environment;
use webagent::agent::{Agent, AgentConfig};
use webagent::browser::ObserveOptions;
use webagent::environment::{ApprovalMode, HeadlessApprover, Road};
use webagent::events::{Event, EventSink};
use webagent::script::{recipe_from_events, CancelFlag, RecipeHost, ScriptError, Scripts};
use webagent::serve::{PageServer, Request, Response};

/// The one-time code seed the test pages and the command share:
/// "12345678901234567890" in base32 (RFC 6238's test seed).
const OTP_SEED: &str = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";

/// What the served app saw: each `/welcome` query, so a test can tell
/// what reached the server.
#[derive(Default)]
struct Seen {
    welcomes: Vec<String>,
    deleted: usize,
}

/// A small app: a sign-in page in several versions (`?v=`) and the page
/// it leads to.
struct App {
    server: PageServer,
    seen: Arc<Mutex<Seen>>,
}

impl App {
    async fn start() -> App {
        let server = PageServer::start().await.expect("a page server");
        let seen = Arc::new(Mutex::new(Seen::default()));
        server.handle("/login", |request| {
            Response::html(login_page(&query(request, "v")))
        });
        let welcomes = Arc::clone(&seen);
        server.handle("/welcome", move |request| {
            welcomes
                .lock()
                .expect("a lock no test thread poisoned")
                .welcomes
                .push(request.query.clone());
            Response::html(page(
                "Welcome",
                &format!(
                    "<h1>Welcome, {}</h1><p>Signed in for {} days</p>",
                    escape(&query(request, "user")),
                    escape(&query(request, "days"))
                ),
            ))
        });
        let deleted = Arc::clone(&seen);
        server.handle("/deleted", move |_| {
            deleted
                .lock()
                .expect("a lock no test thread poisoned")
                .deleted += 1;
            Response::html(page("Deleted", "<h1>Account deleted</h1>"))
        });
        App { server, seen }
    }

    fn url(&self, path: &str) -> String {
        self.server.url(path)
    }

    fn welcomes(&self) -> Vec<String> {
        self.seen
            .lock()
            .expect("a lock no test thread poisoned")
            .welcomes
            .clone()
    }
}

fn query(request: &Request, key: &str) -> String {
    url::form_urlencoded::parse(request.query.as_bytes())
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The sign-in page. `v` picks what changed since the recording:
/// - `id`: the button's id (`login` → `login-button`);
/// - `text`: the button's words (`Sign in` → `Log in`);
/// - `moved`: the email field moved into a fieldset further down, and a
///   nickname field took its place (its old CSS path now names that one);
/// - `clash`: the id `login` now belongs to a "Delete account" button and
///   the sign-in button has none;
/// - `renamed`: the button is now `#next`, "Continue": nothing recorded
///   names it.
fn login_page(v: &str) -> String {
    let email = r#"<div class="row"><label>Email <input name="email" placeholder="you@example.test"></label></div>"#;
    let days = r#"<div class="row"><label>Stay signed in (days) <input name="days"></label></div>"#;
    let fields = match v {
        "moved" => format!(
            r#"<div class="row"><label>Nickname <input name="nick"></label></div>{days}<fieldset><legend>Account</legend>{email}</fieldset>"#
        ),
        _ => format!("{email}{days}"),
    };
    let button = match v {
        "id" => r#"<button id="login-button" type="button" onclick="go()">Sign in</button>"#,
        "text" => r#"<button id="login" type="button" onclick="go()">Log in</button>"#,
        "clash" => {
            r#"<button id="login" type="button" onclick="location.href='/deleted'">Delete account</button><button type="button" onclick="go()">Sign in</button>"#
        }
        "renamed" => r#"<button id="next" type="button" onclick="go()">Continue</button>"#,
        _ => r#"<button id="login" type="button" onclick="go()">Sign in</button>"#,
    };
    page(
        "Sign in",
        &format!(
            r#"<h1>Sign in</h1><form id="signin" onsubmit="return false">{fields}{button}</form>
<script>function go() {{
  const v = (n) => encodeURIComponent(document.querySelector('[name=' + n + ']').value);
  location.href = '/welcome?user=' + v('email') + '&days=' + v('days');
}}</script>"#
        ),
    )
}

fn ws() -> String {
    shared()
        .session
        .websocket_url()
        .expect("the launched browser has an address")
}

/// A [`scratch_dir`] named for this run too, so a run never meets what an
/// earlier one left under the same name.
fn scratch(name: &str) -> PathBuf {
    scratch_dir(&format!("{name}-{}", webagent::totp::now()))
}

fn done_reply(text: &str) -> Reply {
    step_reply("finish", json!({"done": {"text": text, "success": true}}))
}

fn road(scripts: &Scripts, tx: mpsc::UnboundedSender<Event>) -> Road {
    Road::new(
        scripts.catalog().expect("the catalog"),
        Box::new(HeadlessApprover { yes: false }),
        ApprovalMode::Never,
        EventSink::new(tx, Default::default()),
    )
}

/// The listing index of the first element of `url` that `pick` accepts.
async fn index_on(url: &str, pick: impl Fn(&webagent::dom::InteractiveElement) -> bool) -> u64 {
    let tab = shared().session.new_tab(url).await.expect("a tab");
    let state = tab
        .observe(&ObserveOptions::default())
        .await
        .expect("observing");
    let index = state
        .elements
        .iter()
        .find(|e| pick(e))
        .map(|e| e.index.0 as u64)
        .unwrap_or_else(|| panic!("no such element on {url}:\n{}", state.listing));
    let _ = tab.close().await;
    index
}

/// The scripted model's answers for signing in on the sign-in page as
/// `email`: the three actions as one list, then done.
async fn sign_in_replies(app: &App, email: &str) -> Vec<Reply> {
    sign_in_replies_at(&app.url("/login"), "Sign in", email).await
}

/// [`sign_in_replies`] on the page at `url`, whose button says `button`.
async fn sign_in_replies_at(url: &str, button: &str, email: &str) -> Vec<Reply> {
    let email_field = index_on(url, |e| e.attribute("name") == Some("email")).await;
    let days_field = index_on(url, |e| e.attribute("name") == Some("days")).await;
    let button = index_on(url, |e| e.text == button).await;
    vec![
        step_reply(
            "Sign in as the test user",
            json!([
                {"input_text": {"index": email_field, "text": email}},
                {"input_text": {"index": days_field, "text": "7"}},
                {"click": {"index": button}},
            ]),
        ),
        done_reply("signed in"),
    ]
}

/// Records a sign-in by the agent on `app` and exports it.
async fn recorded_sign_in(app: &App) -> String {
    let scripts = Scripts::default();
    let server = LlmServer::start(sign_in_replies(app, "ann@example.test").await).await;
    let tab = shared()
        .session
        .new_tab(&app.url("/login"))
        .await
        .expect("a tab");
    let (tx, rx) = mpsc::unbounded_channel();
    let mut agent = Agent::new(
        server.client(),
        script_environment(tab, &scripts),
        road(&scripts, tx),
    )
    .with_config(AgentConfig::default());
    let outcome = agent.run("Sign in as ann").await.expect("the run starts");
    assert!(outcome.success, "{outcome:?}");
    drop(agent);
    recipe_from_events(&drain(rx), "the sign-in trace").expect("steps to replay")
}

/// Runs the `replay` recipe of `source` on a tab at `url`, its paths on
/// `origin`; what it returned and the events.
async fn replay_at(
    source: &str,
    url: &str,
    origin: &str,
) -> (Result<Value, ScriptError>, Vec<Event>) {
    let scripts = Scripts::default();
    scripts
        .load_source("replay.rhai", source)
        .unwrap_or_else(|e| panic!("the export compiles: {e}\n{source}"));
    let tab = shared().session.new_tab(url).await.expect("a tab");
    let (tx, rx) = mpsc::unbounded_channel();
    let mut host = RecipeHost::new(script_environment(tab, &scripts), road(&scripts, tx))
        .with_origin(Some(origin.to_string()));
    let returned = scripts
        .run_recipe(Some("replay"), &mut host, &CancelFlag::new())
        .await;
    let tab = host.into_environment().into_inner().into_tab();
    let _ = tab.close().await;
    (returned, drain(rx))
}

/// The locator each successful step matched by, in order.
fn matched(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Step(step) if step.result.is_ok() => {
                let data = serde_json::to_value(&step.result).ok()?;
                data["data"]["matched"].as_str().map(str::to_string)
            }
            _ => None,
        })
        .collect()
}

/// [`webagent`] run in `dir`, with no configuration from the environment
/// or the user's folders.
fn webagent_in(dir: &Path) -> Command {
    let mut command = webagent();
    command
        .env_remove("WEBAGENT_CONFIG")
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .args(["--log-file", "/dev/null"]);
    command
}

/// Runs `command` off the runtime's threads (the test's servers answer on
/// them meanwhile).
fn output(command: Command) -> Output {
    runtime().block_on(output_of(command))
}

#[test]
fn an_export_replays_on_a_second_origin_with_a_parameter_override() {
    let s = shared();
    let (first, second) = s
        .runtime
        .block_on(async { (App::start().await, App::start().await) });
    let source = s.runtime.block_on(recorded_sign_in(&first));
    // Portable: paths, not the recording's origin; typed values are
    // parameters with the recorded values as defaults.
    assert!(
        source
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .all(|l| !l.contains(&first.server.origin())),
        "{source}"
    );
    assert!(source.contains("start_at(\"/login\");"), "{source}");
    assert!(
        source.contains("step(1, \"Sign in as the test user\", \"/login\");"),
        "{source}"
    );
    assert!(
        source.contains("email: #{ type: \"string\", \"default\": \"ann@example.test\" }"),
        "{source}"
    );
    assert!(
        source.contains("days: #{ type: \"integer\", \"default\": 7 }"),
        "{source}"
    );
    assert!(
        source.contains(
            "fill([\"role:textbox:Email\", \"label:Email\", \"placeholder:you@example.test\", \"name:email\""
        ),
        "{source}"
    );
    assert!(
        source.contains(
            "click([\"id:login\", \"role:button:Sign in\", \"text:Sign in\", \"css:#login\"]);"
        ),
        "{source}"
    );
    let dir = scratch("origin");
    std::fs::write(dir.join("login.rhai"), &source).expect("the recipe is written");

    // On another origin, with another user.
    let mut command = webagent_in(&dir);
    command
        .args(["recipe", "run", "login.rhai", "--json", "--connect", &ws()])
        .args(["--url", &second.url("/login")])
        .args(["--param", "email=bob@example.test"])
        .args(["--sessions-dir", "sessions"]);
    let out = output(command);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    assert_eq!(
        second.welcomes(),
        ["user=bob%40example.test&days=7"],
        "the second origin's app got bob and the recorded days"
    );
    assert_eq!(
        first.welcomes().len(),
        1,
        "only the recording reached the first origin"
    );

    // An unknown name or a value of the wrong type is refused before
    // anything runs, with what the recipe takes.
    for (param, problem) in [
        ("emial=x@example.test", "unknown parameter `emial`"),
        ("days=soon", "`days`: expected an integer, got \"soon\""),
    ] {
        let mut command = webagent_in(&dir);
        command
            .args(["recipe", "run", "login.rhai", "--connect", &ws()])
            .args(["--url", &second.url("/login")])
            .args(["--param", param]);
        let out = output(command);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}", said(&out));
        assert!(stderr.contains(problem), "{stderr}");
        assert!(
            stderr.contains(
                "it takes days (integer, default 7), email (string, default \"ann@example.test\")"
            ),
            "{stderr}"
        );
    }
    assert_eq!(second.welcomes().len(), 1, "a refused run touched nothing");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn replays_survive_an_id_change_a_text_change_and_a_moved_field_but_never_guess() {
    let s = shared();
    s.runtime.block_on(async {
        let app = App::start().await;
        let source = recorded_sign_in(&app).await;
        let origin = app.server.origin();
        for (variant, click_by) in [
            ("", "id:login"),
            ("id", "role:button:Sign in"),
            ("text", "id:login"),
            ("moved", "id:login"),
        ] {
            let before = app.welcomes().len();
            let (returned, events) =
                replay_at(&source, &app.url(&format!("/login?v={variant}")), &origin).await;
            assert!(returned.is_ok(), "variant {variant:?}: {returned:?}");
            assert_eq!(
                app.welcomes()[before..],
                ["user=ann%40example.test&days=7".to_string()],
                "variant {variant:?}: the right fields got the recorded values"
            );
            let matched = matched(&events);
            assert_eq!(
                matched,
                [
                    "role:textbox:Email",
                    "role:textbox:Stay signed in (days)",
                    click_by
                ],
                "variant {variant:?}: which locator found each element"
            );
        }
        // The id now names another button than the recorded role and
        // name: the step stops as ambiguous and clicks nothing.
        let before = app.welcomes().len();
        let (returned, events) = replay_at(&source, &app.url("/login?v=clash"), &origin).await;
        let error = returned.expect_err("an ambiguous step fails").to_string();
        assert!(error.contains("step 3"), "{error}");
        assert!(
            error.contains(
                "id:login names <button id=login type=\"button\">Delete account</button>"
            ) && error
                .contains("role:button:Sign in names <button type=\"button\">Sign in</button>"),
            "{error}"
        );
        assert_eq!(
            app.seen
                .lock()
                .expect("a lock no test thread poisoned")
                .deleted,
            0,
            "nothing was guessed"
        );
        assert_eq!(app.welcomes().len(), before);
        assert_eq!(
            matched(&events).len(),
            2,
            "the two fields were filled, no click"
        );
    });
}

#[test]
fn a_step_heals_with_the_model_and_the_repaired_recipe_replays_without_it() {
    let s = shared();
    let app = s.runtime.block_on(App::start());
    let source = s.runtime.block_on(recorded_sign_in(&app));
    let dir = scratch("heal");
    std::fs::write(dir.join("login.rhai"), &source).expect("the recipe is written");
    let renamed = app.url("/login?v=renamed");
    let button = s
        .runtime
        .block_on(index_on(&renamed, |e| e.text == "Continue"));
    let run = |file: &str, extra: &[&str]| {
        let mut command = webagent_in(&dir);
        command
            .args(["recipe", "run", file, "--json", "--connect", &ws()])
            .args(["--url", &renamed])
            .args(["--sessions-dir", "sessions"])
            .args(extra);
        output(command)
    };

    // Without a model the step fails, naming itself, every locator tried
    // and what the page showed instead.
    let out = run("login.rhai", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    let events = json_lines(&out);
    let error = events
        .iter()
        .find(|e| e["type"] == "error")
        .and_then(|e| e["error"].as_str())
        .unwrap_or_default()
        .to_string();
    for part in [
        "step 3",
        "id:login → 0 elements",
        "role:button:Sign in → 0 elements",
        "text:Sign in → 0 elements",
        "css:#login → 0 elements",
        "the page showed: ",
        "Continue",
    ] {
        assert!(error.contains(part), "{part:?} missing from: {error}");
    }

    // With a model, the step is handed to the agent; in risky mode the
    // rewrite waits for approval, which a headless run without --yes
    // does not give.
    let heal = |llm: &LlmServer| {
        llm.push(step_reply(
            "press the button that signs in",
            json!({"click": {"index": button}}),
        ));
        llm.push(done_reply("signed in"));
    };
    let llm = s.runtime.block_on(LlmServer::start(Vec::new()));
    heal(&llm);
    let out = run(
        "login.rhai",
        &["--base-url", &llm.base_url(), "--approve", "risky"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let events = json_lines(&out);
    let healed = events
        .iter()
        .find(|e| e["type"] == "healed")
        .unwrap_or_else(|| panic!("a healed event: {}", said(&out)));
    assert_eq!(healed["step"], 3);
    assert_eq!(healed["success"], true);
    assert_eq!(healed["model_calls"], 2);
    assert_eq!(healed["old"], "id:login");
    assert_eq!(healed["new"], "id:next");
    let sub_goal = healed["sub_goal"].as_str().unwrap_or_default();
    assert!(
        sub_goal.contains("Step 3: click the button named \"Sign in\", showing \"Sign in\"")
            && sub_goal.contains("Sign in as the test user")
            && !sub_goal.contains("Continue"),
        "written from the recording, with nothing the page shows now: {sub_goal}"
    );
    let rewritten = events
        .iter()
        .find(|e| e["type"] == "recipe_rewritten")
        .unwrap_or_else(|| panic!("a rewrite report: {}", said(&out)));
    assert_eq!(rewritten["written"], false, "{rewritten}");
    assert!(!dir.join("login.healed.rhai").exists());
    assert_eq!(llm.request_count(), 2);

    // With approval (never asks), the repaired recipe is written next to
    // the original with a comment per healed step.
    heal(&llm);
    let out = run(
        "login.rhai",
        &["--base-url", &llm.base_url(), "--approve", "never"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    assert_eq!(llm.request_count(), 4);
    let repaired =
        std::fs::read_to_string(dir.join("login.healed.rhai")).expect("the repaired recipe");
    assert!(
        repaired.contains("    // healed step 3: id:login → id:next\n    click([\"id:next\", \"role:button:Continue\", \"text:Continue\", \"css:#next\"]);"),
        "{repaired}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("login.rhai")).unwrap(),
        source,
        "the original stays as it was"
    );

    // The repaired recipe replays with no model at all.
    let before = app.welcomes().len();
    let out = run("login.healed.rhai", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    assert!(json_lines(&out).iter().all(|e| e["type"] != "healed"));
    assert_eq!(llm.request_count(), 4, "no model request");
    assert_eq!(app.welcomes().len(), before + 1);

    // With --update the repair is written over the file itself.
    std::fs::write(dir.join("mine.rhai"), &source).expect("a second copy");
    heal(&llm);
    let out = run(
        "mine.rhai",
        &[
            "--base-url",
            &llm.base_url(),
            "--approve",
            "never",
            "--update",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let updated = std::fs::read_to_string(dir.join("mine.rhai")).expect("the file");
    assert!(
        updated.contains("// healed step 3: id:login → id:next"),
        "{updated}"
    );
    assert!(!dir.join("mine.healed.rhai").exists());

    // The step log of a healing run shows the healing steps, and none of
    // the model's streamed words as if the script had logged them.
    heal(&llm);
    let mut command = webagent_in(&dir);
    command
        .args(["recipe", "run", "login.rhai", "--connect", &ws()])
        .args(["--url", &renamed, "--sessions-dir", "sessions"])
        .args(["--base-url", &llm.base_url(), "--approve", "risky"]);
    let out = output(command);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    assert!(
        stdout.contains("goal: press the button that signs in"),
        "{stdout}"
    );
    assert!(
        !stdout.lines().any(|l| l.starts_with("log: ")),
        "no model text printed as a script's log:\n{stdout}"
    );
    assert!(!stdout.contains("at most 0 steps"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_cache_misses_then_hits_with_no_model_request_then_heals_a_changed_page() {
    let s = shared();
    let app = s.runtime.block_on(App::start());
    let dir = scratch("cache");
    let run = |llm: &LlmServer, url: &str| {
        let mut command = webagent_in(&dir);
        command
            .args(["run", "Sign in as ann", "--json", "--connect", &ws()])
            .args(["--url", url])
            .args(["--base-url", &llm.base_url(), "--approve", "never"])
            .args(["--cache=cache", "--sessions-dir", "sessions"]);
        output(command)
    };
    let cache_event = |out: &Output| -> Value {
        json_lines(out)
            .into_iter()
            .find(|e| e["type"] == "cache")
            .unwrap_or_else(|| panic!("a cache event: {}", said(out)))
    };

    // Miss: the agent signs in, and its run is stored.
    let replies = s
        .runtime
        .block_on(sign_in_replies(&app, "ann@example.test"));
    let first = s.runtime.block_on(LlmServer::start(replies));
    let out = run(&first, &app.url("/login"));
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let miss = cache_event(&out);
    assert_eq!(miss["state"], "miss", "{miss}");
    assert_eq!(miss["model_calls"], 2);
    assert_eq!(miss["route"], "/login");
    assert_eq!(first.request_count(), 2);

    // Hit: the same task on the same route (another query) replays with no
    // request to the model.
    let second = s.runtime.block_on(LlmServer::start(Vec::new()));
    let out = run(&second, &app.url("/login?from=hit"));
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let hit = cache_event(&out);
    assert_eq!(hit["state"], "hit", "{hit}");
    assert_eq!(hit["model_calls"], 0);
    assert_eq!(hit["usage"]["total_tokens"], 0);
    assert_eq!(second.request_count(), 0, "a hit asks the model nothing");
    assert_eq!(app.welcomes().len(), 2);

    // The page changed: the step that no longer runs is healed, and the
    // stored recipe repaired, so the next run is a hit again.
    let renamed = app.url("/login?v=renamed");
    let button = s
        .runtime
        .block_on(index_on(&renamed, |e| e.text == "Continue"));
    let third = s.runtime.block_on(LlmServer::start(vec![
        step_reply(
            "press the button that signs in",
            json!({"click": {"index": button}}),
        ),
        done_reply("signed in"),
    ]));
    let out = run(&third, &renamed);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let healed = cache_event(&out);
    assert_eq!(healed["state"], "healed", "{healed}");
    assert_eq!(healed["model_calls"], 2);
    assert_eq!(third.request_count(), 2);
    let fourth = s.runtime.block_on(LlmServer::start(Vec::new()));
    let out = run(&fourth, &renamed);
    assert_eq!(cache_event(&out)["state"], "hit", "{}", said(&out));
    assert_eq!(fourth.request_count(), 0);
    assert_eq!(app.welcomes().len(), 4);

    // A change healing cannot mend (the model gives up on the step): the
    // agent does the task anew from the start page, and its run replaces
    // the stored one.
    let mut replies = vec![step_reply(
        "look for the button",
        json!({"done": {"text": "no such button", "success": false}}),
    )];
    replies.extend(s.runtime.block_on(sign_in_replies_at(
        &renamed,
        "Continue",
        "ann@example.test",
    )));
    let fifth = s.runtime.block_on(LlmServer::start(replies));
    let stored = dir
        .join("cache")
        .join(format!("{}.rhai", hit["key"].as_str().unwrap_or_default()));
    let stale = std::fs::read_to_string(&stored)
        .expect("the stored recipe")
        .replace(
            "[\"id:next\", \"role:button:Continue\", \"text:Continue\", \"css:#next\"]",
            "[\"id:gone\", \"text:Gone\"]",
        );
    std::fs::write(&stored, stale).expect("the stored recipe, made stale");
    let out = run(&fifth, &renamed);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let refreshed = cache_event(&out);
    assert_eq!(refreshed["state"], "refreshed", "{refreshed}");
    assert_eq!(
        refreshed["model_calls"], 3,
        "one for the failed heal, two for the task"
    );
    assert_eq!(fifth.request_count(), 3);
    let sixth = s.runtime.block_on(LlmServer::start(Vec::new()));
    let out = run(&sixth, &renamed);
    assert_eq!(cache_event(&out)["state"], "hit", "{}", said(&out));
    assert_eq!(sixth.request_count(), 0);

    // The step log says the same, and the cache lists, shows and clears.
    let mut command = webagent_in(&dir);
    command
        .args(["run", "Sign in as ann", "--connect", &ws()])
        .args(["--url", &renamed, "--base-url", &fourth.base_url()])
        .args(["--cache=cache", "--sessions-dir", "sessions"]);
    let out = output(command);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("cache: hit (0 model calls, 0 tokens)"),
        "{}",
        said(&out)
    );
    let mut command = webagent_in(&dir);
    command.args(["cache", "list", "--dir", "cache"]);
    let listed = String::from_utf8_lossy(&output(command).stdout).to_string();
    assert!(
        listed.contains("1 cached task(s)") && listed.contains("Sign in as ann  on /login"),
        "{listed}"
    );
    let mut command = webagent_in(&dir);
    command.args(["cache", "show", "sign in as ann", "--dir", "cache"]);
    let shown = String::from_utf8_lossy(&output(command).stdout).to_string();
    assert!(
        shown.contains("click([\"id:next\", \"role:button:Continue\""),
        "the refreshed recording: {shown}"
    );
    let mut command = webagent_in(&dir);
    command.args(["cache", "clear", "--dir", "cache"]);
    assert!(String::from_utf8_lossy(&output(command).stdout).contains("removed 1"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_one_time_code_is_typed_fresh_checked_by_the_page_and_never_shown() {
    let s = shared();
    // A second-factor page on the binary's shared server, which checks the
    // code it is sent as a site would.
    let codes = Arc::new(Mutex::new(Vec::<String>::new()));
    s.server.html(
        "/otp",
        page(
            "Second factor",
            "<h1>Enter your code</h1><label>Code <input name=code autocomplete=off></label>\
             <button type=button onclick=\"location.href='/otp-check?code='+encodeURIComponent(document.querySelector('[name=code]').value)\">Verify</button>",
        ),
    );
    let received = Arc::clone(&codes);
    s.server.handle("/otp-check", move |request| {
        let code = query(request, "code");
        received
            .lock()
            .expect("a lock no test thread poisoned")
            .push(code.clone());
        // This step's code or the one before (typed as the step turned).
        let now = webagent::totp::now();
        let valid = [now, now.saturating_sub(30)]
            .iter()
            .any(|t| webagent::totp::code_at(b"12345678901234567890", *t, 6) == code);
        Response::html(page(
            "Second factor",
            if valid {
                "<h1>Verified</h1>"
            } else {
                "<h1>Wrong code</h1>"
            },
        ))
    });
    let dir = scratch("totp");
    std::fs::write(
        dir.join("webagent.yaml"),
        "secrets:\n  otp: totp:env:OTP_SEED\n",
    )
    .expect("a config");
    std::fs::write(
        dir.join("otp.rhai"),
        "recipe(\"second_factor\", \"Types the one-time code\");\n\
         fn second_factor() {\n\
             fill([\"label:Code\"], \"<secret>otp</secret>\");\n\
             click([\"text:Verify\"]);\n\
             wait_for(\"Verified\", 5000);\n\
         }\n",
    )
    .expect("a recipe");
    let mut command = webagent_in(&dir);
    command
        .env("OTP_SEED", OTP_SEED)
        .args(["recipe", "run", "otp.rhai", "--json", "--connect", &ws()])
        .args(["--url", &s.server.url("/otp"), "--sessions-dir", "sessions"]);
    let out = output(command);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let codes = codes
        .lock()
        .expect("a lock no test thread poisoned")
        .clone();
    assert_eq!(codes.len(), 1, "{codes:?}");
    assert_eq!(codes[0].len(), 6);
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        !printed.contains(&codes[0]),
        "the code is masked: {printed}"
    );
    assert!(!printed.contains(OTP_SEED));
    assert!(printed.contains("<secret>otp</secret>"), "{printed}");
    let _ = std::fs::remove_dir_all(&dir);
}
