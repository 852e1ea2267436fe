//! `webagent mcp` spoken to as another agent would: the official SDK's
//! client starts the real binary and talks MCP over its stdio, against
//! pages this test serves on 127.0.0.1. Needs Chromium (the server
//! launches its own); without it the first call fails with the reason.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use support::listing::index_of;
use support::scratch::scratch_dir;
use webagent::serve::PageServer;

/// A client that reports `tools/list_changed` notifications.
struct Client {
    changed: mpsc::UnboundedSender<()>,
}

impl ClientHandler for Client {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changed.send(());
    }
}

/// A [`scratch_dir`] with an empty `recipes/` folder for the server.
fn scratch(name: &str) -> PathBuf {
    let dir = scratch_dir(name);
    std::fs::create_dir_all(dir.join("recipes")).expect("a scratch directory");
    dir
}

const SCRIPT: &str = "action(\"greet_twice\", #{ description: \"Presses Greet twice\", risk: \"interact\" });\n\
fn greet_twice() { click(\"#greet\"); click(\"#greet\"); text() }\n\
action(\"wander\", #{ description: \"Opens a page\", params: #{ url: #{ type: \"string\" } }, risk: \"interact\" });\n\
fn wander(p) { navigate(p.url); url() }\n";

const PAGE: &str = "<!doctype html><html><head><title>Desk</title></head><body>\
<p id=out>nobody greeted</p>\
<button id=greet onclick=\"out.textContent = 'greeted ' + (+(this.dataset.n = (+this.dataset.n || 0) + 1)) + ' times'\">Greet</button>\
<form action=/sent><input name=pw id=pw placeholder=Password \
 oninput=\"echo.textContent = 'you typed ' + this.value\"><button type=submit>Send</button></form>\
<p id=echo></p></body></html>";

/// The JSON body of a tool result.
fn body(result: &CallToolResult) -> Value {
    result.structured_content.clone().unwrap_or(Value::Null)
}

async fn call(
    client: &RunningService<RoleClient, Client>,
    name: &str,
    arguments: Value,
) -> (bool, Value) {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object");
    };
    let result = client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(arguments))
        .await
        .unwrap_or_else(|e| panic!("calling {name}: {e}"));
    (result.is_error != Some(true), body(&result))
}

/// The session's trace once the server has written its `done`, after the
/// client left.
async fn finished_trace(sessions: &Path) -> String {
    let trace = newest_trace(sessions);
    let mut recorded = String::new();
    for _ in 0..100 {
        recorded = std::fs::read_to_string(&trace).unwrap_or_default();
        if recorded.contains("\"type\":\"done\"") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    recorded
}

/// Starts `command` as an MCP server and connects a client to it, with
/// the receiver of its `tools/list_changed` notifications.
async fn connect(
    command: tokio::process::Command,
) -> (
    RunningService<RoleClient, Client>,
    mpsc::UnboundedReceiver<()>,
) {
    let (changed_tx, changed) = mpsc::unbounded_channel();
    let transport = TokioChildProcess::new(command).expect("webagent mcp starts");
    let client = Client {
        changed: changed_tx,
    }
    .serve(transport)
    .await
    .expect("the MCP handshake");
    (client, changed)
}

fn newest_trace(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .expect("the sessions directory exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .max()
        .expect("a trace was written")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_observes_acts_and_is_held_to_every_protection() {
    let dir = scratch("session");
    std::fs::write(dir.join("recipes/desk.rhai"), SCRIPT).expect("the script");
    let server = PageServer::start().await.expect("serve pages");
    server.html("/desk", PAGE);
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_webagent"));
    command
        .current_dir(&dir)
        .env("WEBAGENT_TEST_PW", "Pw-7731-hidden")
        .env_remove("OPENAI_API_KEY")
        .env_remove("WEBAGENT_CONFIG")
        .args([
            "mcp",
            "--secret",
            "WEBAGENT_TEST_PW",
            "--allow-domain",
            "127.0.0.1",
        ])
        .args(["--sessions-dir", "sessions", "--url"])
        .arg(server.url("/desk"));
    let (client, mut changed) = connect(command).await;

    // Tools: the session's own, the built-ins and the custom action, with
    // their risk in the description and MCP's annotations.
    let tools = client.list_all_tools().await.expect("tools/list");
    let find = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no tool {name}"))
            .clone()
    };
    for name in [
        "observe",
        "run_recipe",
        "sitemap_search",
        "click",
        "navigate",
    ] {
        find(name);
    }
    let custom = find("greet_twice");
    assert!(custom
        .description
        .as_deref()
        .unwrap_or("")
        .contains("Risk: interact"));
    let submit = find("submit_form");
    let annotations = submit.annotations.clone().expect("annotations");
    assert_eq!(annotations.destructive_hint, Some(true));
    assert_eq!(
        find("read_page").annotations.and_then(|a| a.read_only_hint),
        Some(true)
    );

    // observe, then a click by index: the result carries the changed page.
    let (ok, observed) = call(&client, "observe", json!({})).await;
    assert!(ok, "{observed}");
    let page = observed["page"]
        .as_str()
        .expect("the page text")
        .to_string();
    assert!(page.contains("nobody greeted"), "{page}");
    let (ok, clicked) = call(
        &client,
        "click",
        json!({"index": index_of(&page, ">Greet<")}),
    )
    .await;
    assert!(ok, "{clicked}");
    assert_eq!(clicked["result"]["ok"], true, "{clicked}");
    // What changed comes back: here, a line of the page text.
    assert!(
        clicked["page_delta"]["text"]["insert"]
            .to_string()
            .contains("greeted 1 times"),
        "{clicked}"
    );

    // A custom action runs its handler on the same tab.
    let (ok, greeted) = call(&client, "greet_twice", json!({})).await;
    assert!(ok, "{greeted}");
    assert!(greeted.to_string().contains("greeted 3 times"), "{greeted}");

    // A secret is filled in the page and never comes back.
    let page = call(&client, "observe", json!({})).await.1["page"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let field = index_of(&page, "Password");
    let (ok, typed) = call(
        &client,
        "input_text",
        json!({"index": field, "text": "<secret>WEBAGENT_TEST_PW</secret>"}),
    )
    .await;
    assert!(ok, "{typed}");
    let shown = typed.to_string();
    assert!(!shown.contains("Pw-7731-hidden"), "{shown}");
    assert!(
        shown.contains("you typed <secret>WEBAGENT_TEST_PW</secret>"),
        "{shown}"
    );

    // A risky call without a person and without --yes is refused.
    let (ok, refused) = call(&client, "submit_form", json!({"index": field})).await;
    assert!(!ok, "{refused}");
    assert_eq!(refused["result"]["reason"], "denied", "{refused}");

    // Leaving the allowed domains is refused by the policy before anyone
    // is asked (`blocked`, naming the URL), not put to approval and
    // `denied`; a custom action declared harmless that leaves anyway
    // meets the allowed domains in the browser.
    let away = server.url("/desk").replace("127.0.0.1", "localhost");
    let (ok, refused) = call(&client, "navigate", json!({"url": away})).await;
    assert!(!ok, "{refused}");
    assert_eq!(refused["result"]["reason"], "blocked", "{refused}");
    assert!(
        refused["result"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("localhost") && m.contains("allowed domains")),
        "{refused}"
    );
    let (ok, blocked) = call(&client, "wander", json!({"url": away})).await;
    assert!(!ok, "{blocked}");
    assert!(
        blocked["result"]["message"].to_string().contains("blocked"),
        "{blocked}"
    );
    assert!(
        blocked["page"]
            .as_str()
            .is_none_or(|p| p.contains("URL: http://127.0.0.1")),
        "{blocked}"
    );

    // An edited script changes the tool list, and the client is told.
    std::fs::write(
        dir.join("recipes/desk.rhai"),
        format!("{SCRIPT}action(\"greet_once\", #{{ description: \"Presses Greet\", risk: \"interact\" }});\nfn greet_once() {{ click(\"#greet\"); text() }}\n"),
    )
    .expect("the edit");
    tokio::time::timeout(Duration::from_secs(30), changed.recv())
        .await
        .expect("tools/list_changed within 30 s")
        .expect("the notification");
    let tools = client.list_all_tools().await.expect("tools/list again");
    assert!(tools.iter().any(|t| t.name == "greet_once"));

    client.cancel().await.expect("the client closes");
    // The calls are the session's trace: it exports as a recipe.
    let recorded = finished_trace(&dir.join("sessions")).await;
    let trace = newest_trace(&dir.join("sessions"));
    assert!(!recorded.contains("Pw-7731-hidden"));
    let recipe = webagent::script::export_recipe(&trace).expect("the trace exports");
    assert!(
        recipe.contains("#greet") || recipe.contains("Greet"),
        "{recipe}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A client that starts the server without `--url` begins on a blank tab,
/// which is no site: its first navigation leaves nothing and needs no
/// `--yes`. `execute_javascript`, switched off, is refused by the policy
/// before anyone is asked: no approval is recorded for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_navigates_from_the_blank_tab_and_javascript_is_refused_by_policy_first() {
    let dir = scratch("blank");
    let server = PageServer::start().await.expect("serve pages");
    server.html("/desk", PAGE);
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_webagent"));
    command
        .current_dir(&dir)
        .env_remove("OPENAI_API_KEY")
        .env_remove("WEBAGENT_CONFIG")
        .args(["mcp", "--allow-domain", "127.0.0.1"])
        .args(["--sessions-dir", "sessions"]);
    let (client, _changed) = connect(command).await;

    let (ok, navigated) = call(&client, "navigate", json!({"url": server.url("/desk")})).await;
    assert!(ok, "{navigated}");
    assert!(
        navigated["page"]
            .as_str()
            .is_some_and(|p| p.contains("nobody greeted")),
        "{navigated}"
    );

    let (ok, refused) = call(
        &client,
        "execute_javascript",
        json!({"script": "document.title"}),
    )
    .await;
    assert!(!ok, "{refused}");
    assert_eq!(refused["result"]["reason"], "blocked", "{refused}");
    assert!(
        refused["result"]["message"]
            .to_string()
            .contains("allow-javascript"),
        "the refusal says how to enable it: {refused}"
    );

    client.cancel().await.expect("the client closes");
    let recorded = finished_trace(&dir.join("sessions")).await;
    assert!(recorded.contains("execute_javascript"), "{recorded}");
    assert!(
        !recorded.contains("\"type\":\"approval\""),
        "nobody was asked about either call:\n{recorded}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--http PORT` speaks the streamable-HTTP transport on 127.0.0.1: an
/// `initialize` posted there is answered by webagent's server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_transport_answers_on_loopback() {
    use tokio::io::{AsyncBufReadExt, BufReader};

    let dir = scratch("http");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
        .current_dir(&dir)
        .env_remove("WEBAGENT_CONFIG")
        .args(["mcp", "--http", "0", "--sessions-dir", "sessions"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("webagent mcp --http starts");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let address = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(address) = line.strip_prefix("MCP on ") {
                return address.to_string();
            }
        }
        panic!("the server ended before it listened");
    })
    .await
    .expect("the server listens within a minute");
    assert!(address.starts_with("http://127.0.0.1:"), "{address}");
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}
        }
    });
    let response = reqwest::Client::new()
        .post(&address)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(initialize.to_string())
        .send()
        .await
        .expect("the POST is answered");
    assert!(response.status().is_success(), "{}", response.status());
    let text = response.text().await.expect("a body");
    // A JSON body or an SSE stream whose data line is the JSON.
    let answer: Value = text
        .lines()
        .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
        .unwrap_or_else(|| panic!("no JSON-RPC answer in:\n{text}"));
    assert_eq!(
        answer["result"]["serverInfo"]["name"], "webagent",
        "{answer}"
    );
    assert!(
        answer["result"]["capabilities"]["tools"]["listChanged"] == true,
        "{answer}"
    );
    let _ = child.kill().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// The element lines of a page as `observe` shows it: (index, line).
fn element_lines(page: &str) -> Vec<(u64, String)> {
    page.lines()
        .filter_map(|line| {
            let bare = line.trim_start_matches('\t').trim_start_matches('*');
            let index = bare.strip_prefix('[')?.split(']').next()?.parse().ok()?;
            Some((index, line.to_string()))
        })
        .collect()
}

/// The page text as `observe` shows it.
fn page_text(page: &str) -> String {
    page.split_once("\nPage text:\n")
        .and_then(|(_, rest)| rest.split_once("\n</untrusted_page_content>"))
        .map(|(text, _)| text.to_string())
        .unwrap_or_default()
}

/// What a client does with a `page_delta`'s text: replace the lines named.
fn apply_text(text: &str, splice: &Value) -> String {
    if splice.is_null() {
        return text.to_string();
    }
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    let at = splice["at"].as_u64().unwrap_or(0) as usize;
    let end = (at + splice["remove"].as_u64().unwrap_or(0) as usize).min(lines.len());
    let insert = splice["insert"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| l.as_str().unwrap_or_default().to_string());
    lines.splice(at.min(end)..end, insert);
    lines.join("\n")
}

/// What a client does with a `page_delta`: remove, change, insert.
fn apply(lines: &[(u64, String)], delta: &Value) -> Vec<(u64, String)> {
    let key = |v: &Value| v.as_u64().unwrap_or(u64::MAX);
    let pair = |v: &Value| (key(&v[0]), v[1].as_str().unwrap_or_default().to_string());
    let removed: Vec<u64> = delta["removed"]
        .as_array()
        .map_or(Vec::new(), |r| r.iter().map(key).collect());
    let mut out: Vec<(u64, String)> = lines
        .iter()
        .filter(|(k, _)| !removed.contains(k))
        .cloned()
        .collect();
    for changed in delta["changed"].as_array().into_iter().flatten() {
        let (k, line) = pair(changed);
        if let Some(entry) = out.iter_mut().find(|(at, _)| *at == k) {
            entry.1 = line;
        }
    }
    for run in delta["inserted"].as_array().into_iter().flatten() {
        let at = match run[0].as_u64() {
            None => 0,
            Some(after) => out
                .iter()
                .position(|(k, _)| *k == after)
                .map_or(out.len(), |p| p + 1),
        };
        for (offset, line) in run[1].as_array().into_iter().flatten().enumerate() {
            out.insert(at + offset, pair(line));
        }
    }
    out
}

/// After an action, a client gets what changed in the listing, and
/// applying it gives what `observe` shows; an element keeps the index the
/// client first saw it under while others are added above it, and a call
/// with that index acts on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn action_results_carry_deltas_a_client_applies_to_the_whole_listing() {
    let dir = scratch("delta");
    let server = PageServer::start().await.expect("serve pages");
    let rows: String = (0..40)
        .map(|i| {
            format!(
                "<li><button onclick=\"picked.textContent = 'picked {i}'\">Item {i}</button></li>"
            )
        })
        .collect();
    server.html(
        "/list",
        format!(
            "<!doctype html><html><head><title>List</title></head><body>\
             <p id=picked>none picked</p>\
             <button id=add onclick=\"const li = document.createElement('li'); \
               li.innerHTML = '<button>New ' + (++window.n || (window.n = 1)) + '</button>'; \
               list.prepend(li)\">Add at the top</button>\
             <button id=drop onclick=\"list.lastElementChild.remove()\">Drop the last</button>\
             <button id=rename onclick=\"list.children[3].firstChild.textContent = 'Renamed'\">Rename</button>\
             <ul id=list>{rows}</ul></body></html>"
        ),
    );
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_webagent"));
    command
        .current_dir(&dir)
        .env_remove("OPENAI_API_KEY")
        .env_remove("WEBAGENT_CONFIG")
        .args([
            "mcp",
            "--allow-domain",
            "127.0.0.1",
            "--sessions-dir",
            "sessions",
        ])
        .args(["--url", &server.url("/list")]);
    let (client, _changed) = connect(command).await;

    let (ok, observed) = call(&client, "observe", json!({})).await;
    assert!(ok, "{observed}");
    let first = observed["page"].as_str().expect("the page").to_string();
    let mut lines = element_lines(&first);
    let mut text = page_text(&first);
    let item_five = index_of(&first, ">Item 5<");
    let whole = first.chars().count();

    let mut delta_chars = 0;
    for (selector, what) in [
        ("#add", "one line at the top"),
        ("#add", "another"),
        ("#rename", "a line changed"),
        ("#drop", "a line removed"),
    ] {
        let (ok, acted) = call(&client, "click", json!({"selector": selector})).await;
        assert!(ok, "{what}: {acted}");
        assert!(
            acted.get("page").is_none(),
            "{what}: a delta, not the whole page: {acted}"
        );
        let delta = &acted["page_delta"];
        delta_chars += delta.to_string().chars().count();
        lines = apply(&lines, delta);
        text = apply_text(&text, &delta["text"]);
        let (_, now) = call(&client, "observe", json!({})).await;
        let now = now["page"].as_str().expect("the page");
        assert_eq!(lines, element_lines(now), "{what}: {delta}");
        assert_eq!(text, page_text(now), "{what}: {delta}");
    }
    // Four small changes together cost less than the page once.
    assert!(
        delta_chars < whole,
        "{delta_chars} delta characters against {whole}"
    );

    // The index the client first saw Item 5 under still names it, though
    // two buttons were added above it.
    let (ok, clicked) = call(&client, "click", json!({"index": item_five})).await;
    assert!(ok, "{clicked}");
    lines = apply(&lines, &clicked["page_delta"]);
    text = apply_text(&text, &clicked["page_delta"]["text"]);
    let (_, now) = call(&client, "observe", json!({})).await;
    let now = now["page"].as_str().expect("the page");
    assert!(now.contains("picked 5"), "{now}");
    assert_eq!(lines, element_lines(now));
    assert_eq!(text, page_text(now));

    client.cancel().await.expect("the client closes");
    let _ = std::fs::remove_dir_all(&dir);
}

/// SIGTERM (a service manager, `kill`) ends `webagent mcp` while its
/// client is still connected: the session's trace gets its end, stopped,
/// and Chromium is closed, as for a run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_the_server_closes_chromium_and_ends_the_trace() {
    use support::processes::{alive, browser_process_of, signal};
    use tokio::io::{AsyncBufReadExt, BufReader};

    let dir = scratch("sigterm");
    let server = PageServer::start().await.expect("serve pages");
    server.html("/desk", PAGE);
    // Stdin stays open and silent: a client that is connected and idle.
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
        .current_dir(&dir)
        .env_remove("WEBAGENT_CONFIG")
        .args([
            "mcp",
            "--sessions-dir",
            "sessions",
            "--url",
            &server.url("/desk"),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("webagent mcp starts");
    let root = child.id().expect("a pid");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.starts_with("trace: ") {
                return;
            }
        }
        panic!("the server ended before it served");
    })
    .await
    .expect("the server is up within a minute");
    let browser = browser_process_of(root).expect("the server's Chromium");

    // `Child::wait` closes the child's stdin first, which is a client
    // hanging up: held here, only the signal ends the server.
    let _stdin = child.stdin.take();
    assert!(signal(root, "-TERM"), "SIGTERM sent");
    let status = tokio::time::timeout(Duration::from_secs(60), child.wait())
        .await
        .expect("the server ends within a minute of SIGTERM")
        .expect("waited");
    assert!(
        status.code().is_some(),
        "webagent mcp ended by itself, not killed by the signal: {status:?}"
    );
    let recorded = finished_trace(&dir.join("sessions")).await;
    let last: Value = recorded
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .expect("events in the trace");
    assert_eq!(
        last["type"], "done",
        "the trace ends with the run's end: {last}"
    );
    assert_eq!(last["reason"], "stopped", "{last}");
    let gone = support::wait::eventually(|| !alive(browser)).await;
    assert!(gone, "Chromium {browser} outlived the server");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A secret bound with `--secret NAME@PATTERN` is filled by an MCP call on
/// its site and refused, `blocked`, on another allowed site: the page
/// there never receives a key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bound_secret_is_filled_on_its_site_and_refused_on_another() {
    use std::sync::{Arc, Mutex};
    use webagent::serve::Response;

    const VALUE: &str = "Mcp-Bound-5521";
    let dir = scratch("bound");
    let mut sites = Vec::new();
    for _ in 0..2 {
        let server = PageServer::start().await.expect("serve pages");
        server.html(
            "/field",
            "<!doctype html><title>Field</title>\
             <input id=pw type=password oninput=\"fetch('/got?v=' + encodeURIComponent(this.value))\">",
        );
        let got = Arc::new(Mutex::new(Vec::<String>::new()));
        let seen = Arc::clone(&got);
        server.handle("/got", move |request| {
            seen.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(request.query.clone());
            Response::text("ok")
        });
        sites.push((server, got));
    }
    // 127.0.0.1 and localhost: two sites on this machine.
    let home = format!("http://127.0.0.1:{}", sites[0].0.addr().port());
    let other = format!("http://localhost:{}", sites[1].0.addr().port());
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_webagent"));
    command
        .current_dir(&dir)
        .env("pw", VALUE)
        .env_remove("OPENAI_API_KEY")
        .env_remove("WEBAGENT_CONFIG")
        .args(["mcp", "--yes", "--secret", &format!("pw@{home}")])
        .args(["--allow-domain", &home, "--allow-domain", &other])
        .args(["--sessions-dir", "sessions"]);
    let (client, _changed) = connect(command).await;
    let typed = json!({"selector": "#pw", "text": "<secret>pw</secret>"});

    let (ok, went) = call(&client, "navigate", json!({"url": format!("{home}/field")})).await;
    assert!(ok, "{went}");
    let (ok, filled) = call(&client, "input_text", typed.clone()).await;
    assert!(ok, "on its site: {filled}");
    let home_got = sites[0].1.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert!(home_got.iter().any(|q| q.contains(VALUE)), "{home_got:?}");

    let (ok, went) = call(
        &client,
        "navigate",
        json!({"url": format!("{other}/field")}),
    )
    .await;
    assert!(ok, "{went}");
    let (ok, refused) = call(&client, "input_text", typed).await;
    assert!(!ok, "{refused}");
    assert_eq!(refused["result"]["reason"], "blocked", "{refused}");
    let message = refused["result"]["message"].to_string();
    assert!(
        message.contains("`pw` may only be typed on") && message.contains(&home),
        "{message}"
    );
    assert!(!message.contains(VALUE));
    assert!(sites[1]
        .1
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .is_empty());
    client.cancel().await.expect("the client closes");
    let _ = std::fs::remove_dir_all(&dir);
}
