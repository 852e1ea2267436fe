//! Rhai scripts end to end: custom actions the model calls, recipes driving
//! a served page, the sandbox's limits, cancellation, hot reload, and a
//! recorded run exported as a recipe and replayed. One Chromium for the
//! whole binary.

#[path = "../support/mod.rs"]
mod support;

mod bounds;
mod debug;
mod errors;
mod gate;
mod walkthrough;

use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use support::chromium::{self, runtime};
use support::events::drain;
use support::llm_server::{step_reply, LlmServer, Reply};
use support::scratch::scratch_dir;
use support::tab::script_environment;
use webagent::actions::FailureReason;
use webagent::agent::{Agent, AgentConfig};
use webagent::browser::act::ExecOptions;
use webagent::browser::Driver;
use webagent::browser::{ObserveOptions, Tab};
use webagent::environment::{ApprovalMode, HeadlessApprover, Road};
use webagent::events::Event;
use webagent::events::EventSink;
use webagent::script::{
    recipe_from_events, CancelFlag, HostCall, Limits, RecipeHost, ScriptError, ScriptEvent,
    ScriptHost, ScriptWatcher, Scripts,
};
use webagent::serve::{PageServer, Response};
use webagent::sitemap::SitemapSet;

/// The shared browser and server, with this binary's pages registered once.
fn shared() -> &'static chromium::Shared {
    static PAGES: std::sync::Once = std::sync::Once::new();
    let s = chromium::shared();
    PAGES.call_once(|| serve_pages(&s.server));
    s
}

/// A subscribe form; with `?decoy` an extra field and button come first,
/// so every element index shifts.
fn serve_pages(server: &PageServer) {
    server.handle("/subscribe", |request| {
        let decoy = if request.query.contains("decoy") {
            r#"<input name="coupon" placeholder="Coupon"><button type="button">Subscribe later</button>"#
        } else {
            ""
        };
        Response::html(format!(
            r#"<!doctype html><html><head><title>Subscribe</title></head><body>
<h1>Newsletter</h1>{decoy}
<input id="email" name="email" placeholder="Email">
<select name="plan"><option value="free">Free</option><option value="pro">Pro plan</option></select>
<button type="button" data-testid="subscribe"
  onclick="document.getElementById('out').textContent = 'Subscribed ' + document.getElementById('email').value + ' to ' + document.querySelector('select').value">Subscribe</button>
<p id="out"></p>
</body></html>"#
        ))
    });
}

async fn open(path: &str) -> Tab {
    let s = shared();
    s.session
        .new_tab(&s.server.url(path))
        .await
        .expect("opening the test page")
}

async fn out_text(tab: &Tab) -> String {
    let state = tab
        .observe(&ObserveOptions::default())
        .await
        .expect("observing");
    state
        .page_text
        .text
        .lines()
        .find(|l| l.starts_with("Subscribed"))
        .unwrap_or("")
        .to_string()
}

/// The road a test's steps take: `approver` asked when `mode` says so,
/// events to `tx`.
fn road(
    catalog: webagent::actions::Catalog,
    approver: HeadlessApprover,
    mode: ApprovalMode,
    tx: mpsc::UnboundedSender<Event>,
) -> Road {
    Road::new(
        catalog,
        Box::new(approver),
        mode,
        EventSink::new(tx, Default::default()),
    )
}

const SUBSCRIBE_ACTIONS: &str = r#"
action("subscribe", #{
    description: "Subscribe an email address to the newsletter",
    params: #{ email: #{ type: "string" }, plan: #{ type: "string", "enum": ["free", "pro"] } },
    risk: "interact",
});
fn subscribe(p) {
    fill("Email", p.email);
    run_action("select_option", #{ selector: "select", value: p.plan });
    click("Subscribe");
    let shown = text();
    assert(shown.contains("Subscribed " + p.email), "the page did not confirm the subscription");
    #{ confirmed: true, email: p.email }
}
"#;

fn done_reply() -> Reply {
    step_reply(
        "finish",
        json!({"done": {"text": "subscribed", "success": true}}),
    )
}

#[test]
fn the_model_sees_and_calls_a_custom_action() {
    let s = shared();
    s.runtime.block_on(async {
        let scripts = Scripts::default();
        scripts
            .load_source("subscribe.rhai", SUBSCRIBE_ACTIONS)
            .expect("the actions load");
        let server = LlmServer::start(vec![
            step_reply(
                "subscribe",
                json!({"subscribe": {"email": "ann@example.test", "plan": "pro"}}),
            ),
            done_reply(),
        ])
        .await;
        let tab = open("/subscribe").await;
        let (tx, rx) = mpsc::unbounded_channel();
        let mut agent = Agent::new(
            server.client(),
            script_environment(tab, &scripts),
            road(
                scripts.catalog().expect("the catalog takes the actions"),
                HeadlessApprover { yes: false },
                ApprovalMode::Never,
                tx,
            )
            .with_scripts(scripts.clone(), CancelFlag::new()),
        )
        .with_config(AgentConfig::default());
        let outcome = agent.run("subscribe ann").await.expect("the run starts");
        assert!(outcome.success, "{outcome:?}");

        let body: Value = serde_json::from_str(&server.requests()[0].body).expect("JSON body");
        // The schema has the action's structure; the tool's description
        // says what it does.
        let tool = body["tools"][0]["function"]["parameters"].to_string();
        let description = body["tools"][0]["function"]["description"]
            .as_str()
            .unwrap_or_default();
        assert!(
            tool.contains("\"subscribe\"") && description.contains("Subscribe an email address"),
            "the custom action is missing from the tool: {description}\n{tool}"
        );
        let events = drain(rx);
        let result = events
            .iter()
            .find_map(|e| match e {
                Event::Step(step) if step.action.get("subscribe").is_some() => {
                    Some(serde_json::to_value(&step.result).unwrap())
                }
                _ => None,
            })
            .expect("a step ran the custom action");
        assert_eq!(
            result,
            json!({"ok": true, "data": {"confirmed": true, "email": "ann@example.test"}})
        );
        let tab = agent.environment_mut().inner().tab();
        assert_eq!(out_text(tab).await, "Subscribed ann@example.test to pro");
    });
}

#[test]
fn a_script_error_in_a_custom_action_is_an_unknown_result_with_its_place() {
    let s = shared();
    s.runtime.block_on(async {
        let scripts = Scripts::default();
        scripts
            .load_source(
                "broken.rhai",
                "action(\"press_missing\", #{ description: \"Clicks a missing button\" });\nfn press_missing() {\n    click(\"#nothing-here\");\n}",
            )
            .unwrap();
        let tab = open("/subscribe").await;
        let mut environment = Driver::new(
            tab,
            ExecOptions {
                action_timeout: Duration::from_millis(300),
                ..ExecOptions::default()
            },
            Arc::new(RwLock::new(SitemapSet::new())),
        );
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut road = road(
            scripts.catalog().expect("the catalog takes the action"),
            HeadlessApprover { yes: false },
            ApprovalMode::Never,
            tx,
        );
        let mut host = webagent::script::GatedHost::new(
            &mut road,
            &mut environment,
            1,
            "press_missing",
            "press the missing button",
        );
        let result = scripts
            .call_action("press_missing", json!({}), &mut host, &CancelFlag::new())
            .await;
        assert_eq!(result.reason(), Some(FailureReason::Unknown));
        let message = serde_json::to_value(&result).unwrap()["message"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            message.starts_with("broken.rhai:3:5: click #nothing-here failed (not_found)"),
            "{message}"
        );
    });
}

const RECIPE: &str = r##"
recipe("signup", "Subscribes bob to the free plan");
fn signup() {
    fill("#email", "bob@example.test");
    select("select", "Free");
    click("Subscribe");
    let p = page();
    assert(p.title == "Subscribe", "wrong page: " + p.title);
    assert(text().contains("Subscribed bob@example.test to free"), "no confirmation shown");
    log("signed up");
    p.elements.len()
}
"##;

#[test]
fn a_recipe_drives_a_served_page_and_reports_steps_like_the_agent() {
    let s = shared();
    s.runtime.block_on(async {
        let scripts = Scripts::default();
        scripts.load_source("signup.rhai", RECIPE).unwrap();
        let tab = open("/subscribe").await;
        let (tx, rx) = mpsc::unbounded_channel();
        let mut host = RecipeHost::new(
            script_environment(tab, &scripts),
            road(
                scripts.catalog().expect("the catalog"),
                HeadlessApprover { yes: false },
                ApprovalMode::Risky,
                tx,
            ),
        );
        let value = scripts
            .run_recipe(Some("signup"), &mut host, &CancelFlag::new())
            .await
            .expect("the recipe succeeds");
        assert!(value.as_i64().is_some_and(|n| n >= 3), "{value}");
        let events = drain(rx);
        let kinds: Vec<&str> = events.iter().map(Event::kind).collect();
        let steps: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                Event::Step(step) => step.action.as_object()?.keys().next().cloned(),
                _ => None,
            })
            .collect();
        assert_eq!(steps, ["input_text", "select_option", "click"]);
        assert_eq!(
            kinds.iter().filter(|k| **k == "tool_call").count(),
            3,
            "{kinds:?}"
        );
        assert!(events
            .iter()
            .any(|e| matches!(e, Event::ScriptLog { line } if line == "signed up")));
        let env = host.into_environment();
        assert_eq!(
            out_text(env.inner().tab()).await,
            "Subscribed bob@example.test to free"
        );
    });
}

#[test]
fn a_failed_assertion_ends_the_recipe_with_its_message_and_place() {
    let s = shared();
    s.runtime.block_on(async {
        let scripts = Scripts::default();
        scripts
            .load_source(
                "check.rhai",
                "recipe(\"check\", \"d\");\nfn check() {\n  assert(title() == \"Checkout\", \"not on the checkout page\");\n  click(\"Subscribe\");\n}",
            )
            .unwrap();
        let tab = open("/subscribe").await;
        let (tx, rx) = mpsc::unbounded_channel();
        let mut host = RecipeHost::new(
            script_environment(tab, &scripts),
            road(scripts.catalog().expect("the catalog"), HeadlessApprover { yes: false }, ApprovalMode::Never, tx),
        );
        let error = scripts
            .run_recipe(None, &mut host, &CancelFlag::new())
            .await
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "check.rhai:3:3: assertion failed: not on the checkout page\n\
             \x20 3 |   assert(title() == \"Checkout\", \"not on the checkout page\");\n\
             \x20   |   ^"
        );
        assert!(
            !drain(rx).iter().any(|e| matches!(e, Event::Step(_))),
            "nothing after the assertion ran"
        );
    });
}

#[test]
fn recipe_steps_pass_the_approval_gate() {
    let s = shared();
    s.runtime.block_on(async {
        let scripts = Scripts::default();
        scripts
            .load_source(
                "nav.rhai",
                "recipe(\"away\", \"d\");\nfn away() { navigate(\"https://example.com/\"); }",
            )
            .unwrap();
        let tab = open("/subscribe").await;
        let (tx, rx) = mpsc::unbounded_channel();
        let mut host = RecipeHost::new(
            script_environment(tab, &scripts),
            road(
                scripts.catalog().expect("the catalog"),
                HeadlessApprover { yes: false },
                ApprovalMode::Always,
                tx,
            ),
        );
        let error = scripts
            .run_recipe(None, &mut host, &CancelFlag::new())
            .await
            .unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("nav.rhai:2:13: navigate failed (denied)"),
            "{error}"
        );
        let events = drain(rx);
        assert!(events.iter().any(
            |e| matches!(e, Event::Approval(a) if a.decision == webagent::events::Verdict::Denied)
        ));
    });
}

/// A host for scripts that never touch the page.
pub(crate) struct NoPage;

impl ScriptHost for NoPage {
    async fn handle(&mut self, call: HostCall) -> Result<Value, webagent::script::HostError> {
        match call {
            HostCall::Log(_) => Ok(Value::Null),
            other => Err(webagent::script::HostError::Refused(format!(
                "unexpected host call {other:?}"
            ))),
        }
    }
}

fn run_alone(scripts: &Scripts, source: &str) -> Result<Value, ScriptError> {
    scripts.load_source("limits.rhai", source)?;
    runtime().block_on(scripts.run_recipe(Some("main"), &mut NoPage, &CancelFlag::new()))
}

fn limit_message(source: &str) -> String {
    limit_message_with(Limits::default(), source)
}

fn limit_message_with(limits: Limits, source: &str) -> String {
    let scripts = Scripts::new(limits, None);
    match run_alone(&scripts, source) {
        Err(ScriptError::Limit(located)) => located.to_string(),
        other => panic!("expected a limit error, got {other:?}"),
    }
}

#[test]
fn every_sandbox_limit_ends_a_runaway_script_with_a_clear_error() {
    let body = |code: &str| format!("recipe(\"main\", \"d\");\nfn main() {{\n{code}\n}}");
    let endless = limit_message(&body("  loop { }"));
    assert!(
        endless.starts_with("limits.rhai:") && endless.contains("too many operations"),
        "{endless}"
    );
    let recursion = limit_message(
        "recipe(\"main\", \"d\");\nfn deeper(n) { deeper(n + 1) }\nfn main() { deeper(0) }",
    );
    assert!(recursion.contains("nested too deeply"), "{recursion}");
    let string = limit_message(&body("  let s = \"xx\";\n  loop { s += s; }"));
    assert!(
        string.contains("script limit") && string.contains("string"),
        "{string}"
    );
    let array = limit_message(&body("  let a = [];\n  loop { a.push(1); }"));
    assert!(array.contains("array"), "{array}");
    // A small map limit: each step copies the map, so reaching the default
    // would take long in a debug build.
    let small = Limits {
        map_entries: 50,
        operations: 200_000,
        ..Limits::default()
    };
    let map = limit_message_with(
        small,
        &body("  let m = #{};\n  let i = 0;\n  loop { let one = #{}; one[`k${i}`] = i; m = m + one; i += 1; }"),
    );
    assert!(map.contains("map") || map.contains("Map"), "{map}");

    let scripts = Scripts::default();
    let deep = format!(
        "recipe(\"main\", \"d\");\nfn main() {{ {}1{} }}",
        "(".repeat(200),
        ")".repeat(200)
    );
    let error = scripts.load_source("deep.rhai", &deep).unwrap_err();
    assert!(
        matches!(&error, ScriptError::Compile(l) if l.message.contains("too deeply") || l.message.contains("complex")),
        "{error}"
    );
    // The program goes on: the same engine still runs scripts.
    let fine = run_alone(&scripts, &body("  40 + 2")).unwrap();
    assert_eq!(fine, json!(42));
}

#[test]
fn eval_import_and_file_access_are_not_available() {
    let scripts = Scripts::default();
    let eval = scripts
        .load_source("e.rhai", "let x = eval(\"1 + 1\");")
        .unwrap_err();
    assert!(eval.to_string().starts_with("e.rhai:1:9:"), "{eval}");
    let import = scripts
        .load_source("i.rhai", "import \"secrets\" as s;")
        .unwrap_err();
    assert!(import.to_string().starts_with("i.rhai:1:1:"), "{import}");
    let file = scripts
        .load_source("f.rhai", "let t = open_file(\"/etc/passwd\");")
        .unwrap_err();
    assert!(
        file.to_string().contains("open_file"),
        "no file functions exist: {file}"
    );
    let page = scripts
        .load_source("p.rhai", "click(\"Subscribe\");")
        .unwrap_err();
    assert!(
        page.to_string()
            .contains("only work while an action or recipe runs"),
        "{page}"
    );
}

#[test]
fn cancelling_stops_a_script_inside_an_endless_loop() {
    let scripts = Scripts::new(
        Limits {
            operations: u64::MAX / 2,
            ..Limits::default()
        },
        None,
    );
    scripts
        .load_source(
            "spin.rhai",
            "recipe(\"spin\", \"d\");\nfn spin() { loop { } }",
        )
        .unwrap();
    let cancel = CancelFlag::new();
    let runtime = runtime();
    let outcome = runtime.block_on(async {
        let stopper = cancel.clone();
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            stopper.cancel();
        });
        // The guard only keeps a broken cancel from hanging the suite.
        let outcome = tokio::time::timeout(
            Duration::from_secs(30),
            scripts.run_recipe(Some("spin"), &mut NoPage, &cancel),
        )
        .await;
        let _ = canceller.await;
        outcome
    });
    assert!(
        matches!(outcome, Ok(Err(ScriptError::Cancelled))),
        "{outcome:?}"
    );
}

fn wait_for_event(
    rx: &std::sync::mpsc::Receiver<ScriptEvent>,
    want: impl Fn(&ScriptEvent) -> bool,
) -> ScriptEvent {
    loop {
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(event) if want(&event) => return event,
            Ok(_) => continue,
            Err(error) => panic!("no script event came: {error}"),
        }
    }
}

fn version_source(version: &str) -> String {
    format!(
        "action(\"version\", #{{ description: \"Says which version is loaded\", risk: \"read\" }});\nfn version() {{ \"{version}\" }}\n"
    )
}

fn call_version(scripts: &Scripts) -> Value {
    let result = runtime().block_on(scripts.call_action(
        "version",
        json!({}),
        &mut NoPage,
        &CancelFlag::new(),
    ));
    serde_json::to_value(&result).expect("a result is JSON")
}

#[test]
fn hot_reload_good_then_broken_then_good() {
    let dir = scratch_dir("hot-reload");
    let file = dir.join("version.rhai");
    std::fs::write(&file, version_source("one")).unwrap();
    let scripts = Scripts::default();
    let (tx, rx) = std::sync::mpsc::channel();
    let _watcher =
        ScriptWatcher::start(scripts.clone(), std::slice::from_ref(&dir), move |event| {
            let _ = tx.send(event);
        })
        .expect("the watcher starts");
    wait_for_event(&rx, |e| matches!(e, ScriptEvent::Loaded { .. }));
    assert_eq!(call_version(&scripts), json!({"ok": true, "data": "one"}));

    std::fs::write(
        &file,
        "action(\"version\", #{ description: \"x\" });\nfn version() {\n  let = 1;\n}\n",
    )
    .unwrap();
    let error = wait_for_event(&rx, |e| matches!(e, ScriptEvent::Error { .. }));
    let ScriptEvent::Error { error, .. } = &error else {
        unreachable!()
    };
    let located = error.located().expect("the error has a place");
    assert_eq!((located.line, located.column), (3, 7), "{error}");
    let events = ScriptEvent::Error {
        file: file.clone(),
        error: error.clone(),
    }
    .to_events();
    assert!(
        matches!(&events[0], Event::ScriptReloaded { error: Some(e), .. } if e.contains(":3:7:"))
    );
    assert!(matches!(&events[1], Event::Error { fatal: false, .. }));
    assert_eq!(
        call_version(&scripts),
        json!({"ok": true, "data": "one"}),
        "the last good version stays"
    );

    std::fs::write(&file, version_source("two")).unwrap();
    wait_for_event(&rx, |e| {
        matches!(e, ScriptEvent::Loaded { reloaded: true, .. })
    });
    assert_eq!(call_version(&scripts), json!({"ok": true, "data": "two"}));
}

/// The listing index of the first element matching `pick`.
async fn index_of(tab: &Tab, pick: impl Fn(&webagent::dom::InteractiveElement) -> bool) -> u64 {
    let state = tab
        .observe(&ObserveOptions::default())
        .await
        .expect("observing");
    state
        .elements
        .iter()
        .find(|e| pick(e))
        .map(|e| e.index.0 as u64)
        .expect("the element is listed")
}

#[test]
fn an_exported_agent_run_replays_without_the_model_even_when_indices_shift() {
    let s = shared();
    s.runtime.block_on(async {
        let scripts = Scripts::default();
        // Work out the indices the scripted model will use.
        let probe = open("/subscribe").await;
        let email = index_of(&probe, |e| e.attribute("name") == Some("email")).await;
        let plan = index_of(&probe, |e| e.tag == "select").await;
        let button = index_of(&probe, |e| e.text == "Subscribe").await;
        drop(probe);
        let server = LlmServer::start(vec![
            step_reply(
                "type the email",
                json!({"input_text": {"index": email, "text": "cy@example.test"}}),
            ),
            step_reply(
                "pick the plan",
                json!({"select_option": {"index": plan, "text": "Pro plan"}}),
            ),
            step_reply("subscribe", json!({"click": {"index": button}})),
            done_reply(),
        ])
        .await;
        let tab = open("/subscribe").await;
        let (tx, rx) = mpsc::unbounded_channel();
        let mut agent = Agent::new(
            server.client(),
            script_environment(tab, &scripts),
            road(
                scripts.catalog().expect("the catalog"),
                HeadlessApprover { yes: false },
                ApprovalMode::Never,
                tx,
            ),
        )
        .with_config(AgentConfig::default());
        let outcome = agent.run("subscribe cy to pro").await.unwrap();
        assert!(outcome.success, "{outcome:?}");
        drop(agent);
        let recorded = drain(rx);

        let source = recipe_from_events(&recorded, "test trace").expect("steps to replay");
        assert!(
            !source.contains("index") && !source.contains("run_action"),
            "indices leaked into:\n{source}"
        );
        // Every recorded locator, strongest first; the typed and chosen
        // values are parameters with the recorded ones as defaults.
        assert!(
            source.contains("fill([\"id:email\", \"role:textbox:Email\", \"placeholder:Email\", \"name:email\", \"css:#email\"], params.email);"),
            "{source}"
        );
        assert!(
            source.contains("click([\"testid:subscribe\", \"role:button:Subscribe\", \"text:Subscribe\""),
            "{source}"
        );
        assert!(source.contains("\"default\": \"cy@example.test\""), "{source}");
        assert!(source.contains("\"default\": \"Pro plan\""), "{source}");
        assert!(source.contains("start_at(\"/subscribe\");"), "{source}");
        assert!(source.contains(", \"/subscribe\");"), "{source}");
        scripts
            .load_source("replay.rhai", &source)
            .unwrap_or_else(|e| panic!("the export compiles: {e}\n{source}"));

        // The decoy fields shift every index; the replay still lands.
        let replay_tab = open("/subscribe?decoy").await;
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut host = RecipeHost::new(
            script_environment(replay_tab, &scripts),
            road(
                scripts.catalog().expect("the catalog"),
                HeadlessApprover { yes: false },
                ApprovalMode::Never,
                tx,
            ),
        );
        scripts
            .run_recipe(Some("replay"), &mut host, &CancelFlag::new())
            .await
            .unwrap_or_else(|e| panic!("the replay succeeds: {e}\n{source}"));
        let env = host.into_environment();
        assert_eq!(
            out_text(env.inner().tab()).await,
            "Subscribed cy@example.test to pro"
        );

        // Started elsewhere, the recipe opens its start page first.
        let elsewhere = s
            .session
            .new_tab(&s.server.url("/elsewhere"))
            .await
            .unwrap();
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut host = RecipeHost::new(
            script_environment(elsewhere, &scripts),
            road(
                scripts.catalog().expect("the catalog"),
                HeadlessApprover { yes: false },
                ApprovalMode::Never,
                tx,
            ),
        );
        scripts
            .run_recipe(Some("replay"), &mut host, &CancelFlag::new())
            .await
            .unwrap_or_else(|e| panic!("the replay opens its start page: {e}\n{source}"));

        // Without a start page, the location check stops the replay on the
        // wrong page before it acts.
        let without_start: String = source
            .lines()
            .filter(|l| !l.contains("start_at("))
            .map(|l| format!("{l}\n"))
            .collect();
        let scripts = Scripts::default();
        scripts
            .load_source("no-start.rhai", &without_start)
            .expect("compiles");
        let elsewhere = s
            .session
            .new_tab(&s.server.url("/elsewhere"))
            .await
            .unwrap();
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut host = RecipeHost::new(
            script_environment(elsewhere, &scripts),
            road(
                scripts.catalog().expect("the catalog"),
                HeadlessApprover { yes: false },
                ApprovalMode::Never,
                tx,
            ),
        );
        let error = scripts
            .run_recipe(Some("replay"), &mut host, &CancelFlag::new())
            .await
            .unwrap_err();
        assert!(
            error.to_string().contains("step 1")
                && error.to_string().contains("expected to be on /subscribe")
                && error.to_string().contains("/elsewhere"),
            "{error}"
        );
        assert_eq!(host.steps(), 0, "nothing ran on the wrong page");
    });
}

#[test]
fn the_shipped_acme_recipes_check_clean() {
    let scripts = Scripts::default();
    let summary = scripts
        .check_file(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("recipes/acme.rhai")
                .as_path(),
        )
        .expect("recipes/acme.rhai compiles");
    assert_eq!(summary.actions, ["sign_in", "refund_order", "create_order"]);
    assert!(summary.recipes.contains(&"new_order_refunded".to_string()));
}

#[test]
fn the_acme_recipes_sign_in_create_and_refund_on_the_demo() {
    let s = shared();
    s.runtime.block_on(async {
        let site = webagent::demo::DemoSite::start()
            .await
            .expect("the demo starts");
        let scripts = Scripts::default();
        scripts
            .load_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes/acme.rhai"))
            .expect("recipes/acme.rhai loads");
        let tab = s
            .session
            .new_tab(&site.url("/"))
            .await
            .expect("opening the demo");
        let (tx, rx) = mpsc::unbounded_channel();
        let mut host = RecipeHost::new(
            script_environment(tab, &scripts),
            road(
                scripts.catalog().expect("the catalog"),
                HeadlessApprover { yes: true },
                ApprovalMode::Risky,
                tx,
            ),
        );
        let outcome = scripts
            .run_recipe(Some("new_order_refunded"), &mut host, &CancelFlag::new())
            .await
            .unwrap_or_else(|e| panic!("the recipe succeeds: {e}"));
        let text = outcome.as_str().unwrap_or_default().to_string();
        assert!(text.ends_with("created and refunded"), "{text}");
        let events = drain(rx);
        // Each custom action is recorded as one step after the steps it ran,
        // and commit steps were approved (here by --yes).
        let custom: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                Event::Step(step) => step
                    .action
                    .as_object()?
                    .keys()
                    .find(|k| ["sign_in", "create_order", "refund_order"].contains(&k.as_str()))
                    .cloned(),
                _ => None,
            })
            .collect();
        assert_eq!(custom, ["sign_in", "create_order", "refund_order"]);
        assert!(events.iter().any(
            |e| matches!(e, Event::Approval(a) if a.decision == webagent::events::Verdict::Approved)
        ));
        let env = host.into_environment();
        let page = env
            .inner()
            .tab()
            .observe(&ObserveOptions::default())
            .await
            .unwrap();
        assert!(page.url.contains("/orders/"), "{}", page.url);
        assert!(
            page.page_text.text.contains("Refunded"),
            "{}",
            page.page_text.text
        );
        // Already signed in: sign_in signs out and in again rather than
        // failing on a sign-in page the site no longer shows.
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut host = RecipeHost::new(
            env,
            road(
                scripts.catalog().expect("the catalog"),
                HeadlessApprover { yes: true },
                ApprovalMode::Risky,
                tx,
            ),
        );
        let overview = scripts
            .run_recipe(Some("orders_overview"), &mut host, &CancelFlag::new())
            .await
            .unwrap_or_else(|e| panic!("orders_overview while signed in: {e}"));
        assert!(
            overview
                .as_str()
                .unwrap_or_default()
                .ends_with("orders listed"),
            "{overview}"
        );
    });
}

/// `recipe check` takes folders as a session loads them, and says where
/// each problem is: a missing file by name alone (no `:0:0`), a broken
/// one at its line and column.
#[test]
fn recipe_check_reads_a_folder_and_names_each_problem_where_it_is() {
    let dir = scratch_dir("recipe-check");
    std::fs::write(
        dir.join("good.rhai"),
        "recipe(\"hello\", \"Says hello\");\nfn hello() { \"hello\" }\n",
    )
    .expect("write good.rhai");
    std::fs::write(dir.join("broken.rhai"), "fn broken( {\n").expect("write broken.rhai");
    std::fs::write(dir.join("old.healed.rhai"), "not rhai at all (").expect("write a healed copy");
    let check = |args: &[&Path]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
            .arg("recipe")
            .arg("check")
            .args(args)
            .output()
            .expect("run recipe check")
    };
    let out = check(&[&dir]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("good.rhai: actions: none; recipes: hello"),
        "{stdout}"
    );
    assert!(stdout.contains("broken.rhai:1:"), "{stdout}");
    assert!(
        !stdout.contains("healed"),
        "a healed copy is not loaded: {stdout}"
    );
    let missing = dir.join("nope.rhai");
    let out = check(&[&missing]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("nope.rhai: no such file; check the path"),
        "{stdout}"
    );
    assert!(!stdout.contains(":0:0"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}
