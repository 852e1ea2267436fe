//! Configuration through the `webagent` binary: the merge order of its
//! layers, errors that point into the file, masked output, and secrets from
//! config kept out of every place text leaves the program while a real run
//! types one into a served form.
//!
//! Each test gives the binary its own user config dir (`XDG_CONFIG_HOME`),
//! home and working directory, and a scrubbed environment, so the machine's
//! own settings never leak in. The end-to-end test needs Chromium; without
//! it it fails with the reason.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use support::chromium::runtime;
use support::cli::{output_of, webagent};
use support::llm_server::{agent_step, tool_call_completion, LlmServer, Reply};
use support::pages::page;
use support::scratch::scratch_dir;
use webagent::serve::{PageServer, Response};

/// A scratch layout: `home/`, `xdg/webagent/`, `work/` (the working dir).
struct Sandbox {
    root: PathBuf,
}

impl Sandbox {
    fn new(name: &str) -> Sandbox {
        let root = scratch_dir(name);
        for dir in ["home", "xdg/webagent", "work"] {
            std::fs::create_dir_all(root.join(dir)).expect("create the sandbox");
        }
        Sandbox { root }
    }

    fn user_file(&self) -> PathBuf {
        self.root.join("xdg/webagent/config.yaml")
    }

    fn work(&self) -> PathBuf {
        self.root.join("work")
    }

    fn write(&self, path: &Path, text: &str) {
        std::fs::write(path, text).expect("write a sandbox file");
    }

    /// The binary with only PATH kept from this process's environment.
    fn webagent(&self) -> Command {
        let mut command = webagent();
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root.join("home"))
            .env("XDG_CONFIG_HOME", self.root.join("xdg"))
            .current_dir(self.work())
            .arg("--log-file")
            .arg(self.root.join("webagent.log"));
        command
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `webagent config ARGS` and parses its YAML.
fn printed_config(command: &mut Command) -> (serde_yaml::Value, String) {
    let output = command.output().expect("webagent runs");
    let stdout = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&output.stderr)
    );
    let value = serde_yaml::from_str(&stdout).expect("webagent config prints YAML");
    (value, stdout)
}

#[test]
fn later_layers_win_defaults_user_project_environment_flags() {
    let sandbox = Sandbox::new("merge");
    sandbox.write(
        &sandbox.user_file(),
        "llm:\n  model: user-model\n  base_url: http://user.test/v1\n  temperature: 0.3\nagent:\n  max_steps: 11\n  approve: never\n",
    );
    sandbox.write(
        &sandbox.work().join("webagent.yaml"),
        "llm:\n  model: project-model\n  base_url: http://project.test/v1\nagent:\n  max_steps: 12\n",
    );

    // Files only: the project file wins where both speak, the user file
    // keeps what only it sets, the rest is built in.
    let (config, _) = printed_config(sandbox.webagent().arg("config"));
    assert_eq!(config["llm"]["model"], "project-model");
    assert_eq!(config["llm"]["base_url"], "http://project.test/v1");
    assert_eq!(config["llm"]["temperature"], 0.3);
    assert_eq!(config["agent"]["max_steps"], 12);
    assert_eq!(config["agent"]["approve"], "never");
    assert_eq!(config["agent"]["listing"], "viewport");
    assert_eq!(config["llm"]["max_retries"], 3);

    // The environment beats both files.
    let (config, _) = printed_config(
        sandbox
            .webagent()
            .arg("config")
            .env("WEBAGENT_MODEL", "env-model")
            .env("OPENAI_BASE_URL", "http://env.test/v1"),
    );
    assert_eq!(config["llm"]["model"], "env-model");
    assert_eq!(config["llm"]["base_url"], "http://env.test/v1");

    // Flags beat the environment, and the output says where each came
    // from.
    let (config, printed) = printed_config(
        sandbox
            .webagent()
            .args(["config", "--model", "flag-model", "--max-steps", "7"])
            .env("WEBAGENT_MODEL", "env-model")
            .env("OPENAI_BASE_URL", "http://env.test/v1"),
    );
    assert_eq!(config["llm"]["model"], "flag-model");
    assert_eq!(config["llm"]["base_url"], "http://env.test/v1");
    assert_eq!(config["agent"]["max_steps"], 7);
    assert!(
        printed.contains("#   llm.model: flag --model\n"),
        "{printed}"
    );
    assert!(
        printed.contains("#   llm.base_url: environment OPENAI_BASE_URL\n"),
        "{printed}"
    );
    assert!(
        printed.contains(&format!(
            "#   agent.approve: user file {}\n",
            sandbox.user_file().display()
        )),
        "{printed}"
    );

    // `--config FILE` replaces the project file.
    let other = sandbox.root.join("other.yaml");
    sandbox.write(&other, "llm:\n  model: other-model\n");
    let (config, _) = printed_config(sandbox.webagent().arg("config").arg("--config").arg(&other));
    assert_eq!(config["llm"]["model"], "other-model");
    assert_eq!(config["agent"]["max_steps"], 11);
    // So does WEBAGENT_CONFIG, for commands without the flag; a missing
    // named file is an error, not silently skipped.
    let (config, _) = printed_config(
        sandbox
            .webagent()
            .arg("config")
            .env("WEBAGENT_CONFIG", &other),
    );
    assert_eq!(config["llm"]["model"], "other-model");
    let output = sandbox
        .webagent()
        .arg("config")
        .env("WEBAGENT_CONFIG", sandbox.root.join("missing.yaml"))
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("missing.yaml"),
        "{}",
        text(&output.stderr)
    );

    // The documented example is a valid config.
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("webagent.example.yaml");
    let (config, _) = printed_config(
        sandbox
            .webagent()
            .arg("config")
            .arg("--config")
            .arg(&example),
    );
    assert_eq!(config["llm"]["model"], "qwen2.5:14b");
    assert_eq!(config["secrets"]["acme_password"], "env:ACME_PASSWORD");
}

#[test]
fn configured_allowed_domains_reach_the_browser_and_the_flag_replaces_them() {
    let sandbox = Sandbox::new("domains");
    sandbox.write(
        &sandbox.work().join("webagent.yaml"),
        "allowed_domains: [\"*.example.test\"]\n",
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let (blocked, allowed) = runtime.block_on(async {
        let server = PageServer::start().await.expect("serve pages");
        server.html("/hello", page("Hello page", "<p>hello</p>"));
        let url = server.url("/hello");
        let mut blocked = sandbox.webagent();
        blocked.args(["observe", &url]);
        let mut allowed = sandbox.webagent();
        allowed.args(["observe", &url, "--allow-domain", "127.0.0.1"]);
        let run = |mut command: Command| async move {
            tokio::task::spawn_blocking(move || command.output())
                .await
                .expect("joined")
                .expect("webagent runs")
        };
        (run(blocked).await, run(allowed).await)
    });
    let stderr = text(&blocked.stderr);
    assert_ne!(blocked.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("not in the allowed domains (*.example.test)"),
        "{stderr}"
    );
    let stdout = text(&allowed.stdout);
    assert_eq!(
        allowed.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&allowed.stderr)
    );
    assert!(stdout.contains("Hello page"), "{stdout}");
}

#[test]
fn unknown_keys_and_wrong_types_name_the_file_line_and_column() {
    let sandbox = Sandbox::new("errors");
    let user = sandbox.user_file();
    sandbox.write(&user, "llm:\n  model: m\n  modle: typo\n");
    let output = sandbox.webagent().arg("config").output().expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(&format!("{}:3:3: ", user.display())),
        "{stderr}"
    );
    assert!(stderr.contains("unknown field `modle`"), "{stderr}");
    assert!(stderr.contains("expected one of"), "{stderr}");
    assert!(stderr.contains("(did you mean `model`?)"), "{stderr}");

    std::fs::remove_file(&user).expect("remove the user file");
    sandbox.write(
        &sandbox.work().join("webagent.yaml"),
        "# project\nagent:\n  max_steps: lots\n",
    );
    // `run` refuses to start with the same reason, before any browser.
    let output = sandbox
        .webagent()
        .args(["run", "do it", "--url", "http://127.0.0.1:9/"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("webagent.yaml:3:14: "), "{stderr}");
    assert!(
        stderr.contains(
            "agent.max_steps: invalid type: string \"lots\", expected a whole number ≥ 0"
        ),
        "{stderr}"
    );

    // A secret written as its value is refused where it is written.
    sandbox.write(
        &sandbox.work().join("webagent.yaml"),
        "secrets:\n  pw: hunter2\n",
    );
    let output = sandbox.webagent().arg("config").output().expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("webagent.yaml:2:"), "{stderr}");
    assert!(stderr.contains("env:VARIABLE or file:PATH"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

#[test]
fn vision_settings_are_checked_where_they_are_written_and_the_flag_wins() {
    let sandbox = Sandbox::new("vision");
    let project = sandbox.work().join("webagent.yaml");
    sandbox.write(&project, "llm:\n  vision: sometimes\n");
    let output = sandbox.webagent().arg("config").output().expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("webagent.yaml:2:11: "), "{stderr}");
    assert!(
        stderr.contains("unknown variant `sometimes`") && stderr.contains("`never`"),
        "{stderr}"
    );

    sandbox.write(&project, "llm:\n  vision: always\n  image_width: 100000\n");
    let output = sandbox.webagent().arg("config").output().expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("webagent.yaml:3:16: "), "{stderr}");
    assert!(stderr.contains("between 256 and 4096"), "{stderr}");

    sandbox.write(&project, "llm:\n  vision: never\n  image_width: 800\n");
    let (config, _) = printed_config(sandbox.webagent().arg("config"));
    assert_eq!(config["llm"]["vision"], "never");
    assert_eq!(config["llm"]["image_width"], 800);
    // `run` takes --vision=MODE (alone it means always); a bad mode is
    // refused before anything starts.
    let output = sandbox
        .webagent()
        .args(["run", "x", "--url", "http://127.0.0.1:9/", "--vision=maybe"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("auto, always or never"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn the_printed_config_shows_no_secret_or_key() {
    let sandbox = Sandbox::new("masked");
    sandbox.write(&sandbox.work().join("token.txt"), "tok-9f8e7d6c\n");
    sandbox.write(
        &sandbox.work().join("creds.env"),
        "# dotenv\nexport PIN=\"pin-4417-2290\"\n",
    );
    sandbox.write(
        &sandbox.work().join("webagent.yaml"),
        "secrets:\n  password: env:SITE_PASSWORD\n  token: file:token.txt\nsecrets_file: creds.env\n",
    );
    let values = [
        "pw-Kq93-zz81",
        "tok-9f8e7d6c",
        "pin-4417-2290",
        "sk-live-abc123xyz",
    ];
    let output = sandbox
        .webagent()
        .args(["config", "--check-secrets"])
        .env("SITE_PASSWORD", values[0])
        .env("OPENAI_API_KEY", values[3])
        .output()
        .expect("runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    for value in values {
        assert!(!stdout.contains(value), "{value} printed:\n{stdout}");
        assert!(!stderr.contains(value), "{value} printed:\n{stderr}");
    }
    assert!(stdout.contains("password: env:SITE_PASSWORD"), "{stdout}");
    assert!(
        stdout.contains("# API key: OPENAI_API_KEY is set (value hidden)"),
        "{stdout}"
    );
    // Every secret could be read, named without its value.
    assert!(
        stderr.contains("secrets readable: PIN, password, token"),
        "{stderr}"
    );

    // A secret whose variable is missing is named, exit 2.
    let output = sandbox
        .webagent()
        .args(["config", "--check-secrets"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr)
            .contains("secret password: the environment variable SITE_PASSWORD is not set"),
        "{}",
        text(&output.stderr)
    );
}

/// A step of the scripted model, which judges nothing before it.
fn step(goal: &str, action: Value) -> Reply {
    agent_step("Unknown", "", goal, action)
}

#[test]
fn a_config_secret_typed_and_shown_back_by_the_page_never_leaves_masked() {
    // Two secrets: one from the environment, one from a dotenv file. The
    // form is sent with GET, so the values are also in the next page's
    // URL (encoded); the page shows both back as text and as an input's
    // value. The password has characters that every encoding changes.
    const PASSWORD: &str = "Vx7 p@ss&Q=m/29\"41";
    const CODE: &str = "otp-558120-kk";
    // The API key is no secret the model uses, but it must not leak either.
    const API_KEY: &str = "sk-test-Lw93kd02nq";
    let sandbox = Sandbox::new("e2e");
    sandbox.write(&sandbox.work().join("more.env"), &format!("CODE={CODE}\n"));
    sandbox.write(
        &sandbox.work().join("webagent.yaml"),
        "secrets:\n  password: env:SITE_PASSWORD\nsecrets_file: more.env\nagent:\n  approve: never\n",
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let received = Arc::new(Mutex::new(Vec::<(String, String)>::new()));
    let (output, requests, url) = runtime.block_on(async {
        let server = PageServer::start().await.expect("serve pages");
        server.html(
            "/login",
            page(
                "Sign in",
                "<form method=get action=/welcome><input id=pw name=pw><input id=code name=code><button id=go>Sign in</button></form>",
            ),
        );
        let seen = received.clone();
        server.handle("/welcome", move |req| {
            let mut pw = String::new();
            let mut code = String::new();
            for (name, value) in url::form_urlencoded::parse(req.query.as_bytes()) {
                match name.as_ref() {
                    "pw" => pw = value.into_owned(),
                    "code" => code = value.into_owned(),
                    _ => {}
                }
            }
            seen.lock().expect("a lock no test thread poisoned").push((pw.clone(), code.clone()));
            let (pw, code) = (html_escape(&pw), html_escape(&code));
            Response::html(page(
                "Welcome",
                &format!("<h1>Welcome</h1><p>Your password is {pw} and your code {code}.</p><input id=echo value=\"{pw}\">"),
            ))
        });
        let llm = LlmServer::start(vec![
            step(
                "type the password",
                json!({"input_text": {"selector": "#pw", "text": "<secret>password</secret>"}}),
            ),
            step(
                "type the code",
                json!({"input_text": {"selector": "#code", "text": "<secret>CODE</secret>"}}),
            ),
            step("sign in", json!({"click": {"selector": "#go"}})),
            step(
                "finish",
                json!({"done": {"text": "Signed in; the page shows <secret>password</secret>", "success": true}}),
            ),
        ])
        .await;
        let url = server.url("/login");
        let mut command = sandbox.webagent();
        command
            .args(["run", "Sign in with the password", "--json", "--model", "m"])
            .args(["--url", &url])
            .args(["--base-url", &llm.base_url()])
            .env("SITE_PASSWORD", PASSWORD)
            .env("OPENAI_API_KEY", API_KEY)
            .env("WEBAGENT_LOG", "trace");
        let output = tokio::task::spawn_blocking(move || command.output())
            .await
            .expect("joined")
            .expect("webagent runs");
        (output, llm.requests(), url)
    });
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");

    // The values really reached the site...
    assert_eq!(
        received
            .lock()
            .expect("a lock no test thread poisoned")
            .as_slice(),
        [(PASSWORD.to_string(), CODE.to_string())],
        "the form was not sent with the secret values"
    );
    // ...and the model read the page that shows them, as placeholders.
    assert_eq!(requests.len(), 4);
    let last_prompt = requests[3].body.as_str();
    assert!(
        last_prompt.contains(
            "Your password is <secret>password</secret> and your code <secret>CODE</secret>"
        ),
        "{last_prompt}"
    );
    // The typed field's value as the second step saw it.
    assert!(
        requests[1].body.contains("<secret>password</secret>"),
        "{}",
        requests[1].body
    );
    assert!(
        requests[0].body.contains("password") && requests[0].body.contains("CODE"),
        "the model is told the secret names"
    );
    assert!(url.starts_with("http://127.0.0.1:"));

    // Nowhere a value: model requests, printed events, the trace, the log.
    let sessions = sandbox.work().join(".webagent/sessions");
    let traces: Vec<PathBuf> = std::fs::read_dir(&sessions)
        .expect("the run wrote a trace under paths.sessions")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(traces.len(), 1, "{traces:?}");
    let trace = std::fs::read_to_string(&traces[0]).expect("read the trace");
    let log = std::fs::read_to_string(sandbox.root.join("webagent.log")).expect("read the log");
    assert!(!log.is_empty(), "the trace-level log is empty");
    // The page's URL after the GET form names the values: it is in the
    // prompt and the events, masked.
    assert!(
        last_prompt.contains("/welcome?pw=<secret>password</secret>&code=<secret>CODE</secret>"),
        "{last_prompt}"
    );
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {API_KEY}").as_str()),
        "the key from the environment is used"
    );
    for secret in [PASSWORD, CODE, API_KEY] {
        // As written, and the forms JSON, URLs and forms give it.
        let json = serde_json::to_string(secret).expect("a string");
        let forms = [
            secret.to_string(),
            json[1..json.len() - 1].to_string(),
            url::form_urlencoded::byte_serialize(secret.as_bytes()).collect::<String>(),
        ];
        for value in &forms {
            for (i, request) in requests.iter().enumerate() {
                assert!(!request.body.contains(value), "request {i} carries {value}");
            }
            assert!(!stdout.contains(value), "an event carries {value}");
            assert!(!stderr.contains(value), "stderr carries {value}");
            assert!(!trace.contains(value), "the trace carries {value}");
            if let Some(line) = log.lines().find(|l| l.contains(value)) {
                panic!("the log carries {value}: {line}");
            }
        }
    }
    assert!(trace.contains("<secret>password</secret>"));
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[test]
fn exec_fills_config_secrets_and_prints_them_masked() {
    const PIN: &str = "pin 77&31/xq";
    let sandbox = Sandbox::new("exec");
    sandbox.write(
        &sandbox.work().join("webagent.yaml"),
        "secrets:\n  pin: env:SITE_PIN\n",
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let received = Arc::new(Mutex::new(Vec::<String>::new()));
    let output = runtime.block_on(async {
        let server = PageServer::start().await.expect("serve pages");
        server.html(
            "/pin",
            page(
                "PIN",
                "<form method=get action=/got><input id=pin name=pin><button id=go>Go</button></form>",
            ),
        );
        let seen = received.clone();
        server.handle("/got", move |req| {
            let pin = url::form_urlencoded::parse(req.query.as_bytes())
                .find(|(name, _)| name == "pin")
                .map(|(_, value)| value.into_owned())
                .unwrap_or_default();
            seen.lock().expect("a lock no test thread poisoned").push(pin.clone());
            Response::html(page(
                "Got",
                &format!(
                    "<p>You sent {}</p><input id=again value=\"{}\">",
                    html_escape(&pin),
                    html_escape(&pin)
                ),
            ))
        });
        let mut command = sandbox.webagent();
        command
            // The click submits the form, a commit: exec runs it with --yes.
            .args(["exec", &server.url("/pin"), "--json", "--observe", "--yes"])
            .arg(r##"{"input_text":{"selector":"#pin","text":"<secret>pin</secret>"}}"##)
            .arg(r##"{"click":{"selector":"#go"}}"##)
            .env("SITE_PIN", PIN);
        tokio::task::spawn_blocking(move || command.output())
            .await
            .expect("joined")
            .expect("webagent runs")
    });
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(
        received
            .lock()
            .expect("a lock no test thread poisoned")
            .as_slice(),
        [PIN.to_string()]
    );
    let encoded: String = url::form_urlencoded::byte_serialize(PIN.as_bytes()).collect();
    for value in [PIN, encoded.as_str()] {
        assert!(!stdout.contains(value), "printed {value}:\n{stdout}");
    }
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert_eq!(lines[0]["params"]["text"], "<secret>pin</secret>");
    let observed = lines[2].to_string();
    assert!(
        observed.contains("You sent <secret>pin</secret>"),
        "{observed}"
    );
    assert!(
        observed.contains("/got?pin=<secret>pin</secret>"),
        "{observed}"
    );
}

/// Every command that opens a page honours the config file: a recipe run
/// used to build its session from flags alone, so the allowed domains of
/// `./webagent.yaml` did not hold for it.
#[test]
fn recipe_run_keeps_to_the_configured_allowed_domains() {
    let sandbox = Sandbox::new("recipe-domains");
    sandbox.write(
        &sandbox.work().join("webagent.yaml"),
        "allowed_domains: [\"127.0.0.1\"]\npaths:\n  sessions: traces\n",
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let output = runtime.block_on(async {
        let server = PageServer::start().await.expect("serve pages");
        server.html("/start", page("Start", "<p>start</p>"));
        server.html("/elsewhere", page("Elsewhere", "<p>reached</p>"));
        // The same server under another host name: not an allowed domain.
        let elsewhere = server.url("/elsewhere").replace("127.0.0.1", "localhost");
        sandbox.write(
            &sandbox.work().join("away.rhai"),
            &format!(
                "recipe(\"away\", \"Leaves the allowed domains\");\n\
                 fn away() {{ navigate(\"{elsewhere}\"); title() }}\n"
            ),
        );
        let mut command = sandbox.webagent();
        command.args([
            "recipe",
            "run",
            "away.rhai",
            "--yes",
            "--json",
            "--url",
            &server.url("/start"),
        ]);
        tokio::task::spawn_blocking(move || command.output())
            .await
            .expect("joined")
            .expect("webagent runs")
    });
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    let results: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool_result" && e["name"] == "navigate")
        .collect();
    assert_eq!(results.len(), 1, "{stdout}");
    assert_eq!(results[0]["result"]["reason"], "blocked", "{stdout}");
    assert!(!stdout.contains("reached"), "{stdout}");
    // The trace went where the config file said.
    assert!(
        std::fs::read_dir(sandbox.work().join("traces"))
            .map(|d| d.count())
            .unwrap_or(0)
            > 0,
        "no trace in the configured sessions directory"
    );
}

/// `webagent actions` shows the schema the model will see, custom actions
/// included: from `--recipes`, or from the configured recipes directory.
#[test]
fn actions_lists_custom_actions_from_recipes_and_the_configured_directory() {
    let sandbox = Sandbox::new("actions");
    let script = "action(\"archive_order\", #{ description: \"Archives an order\", \
                  params: #{ id: #{ type: \"integer\" } }, risk: \"commit\" });\n\
                  fn archive_order(p) { p.id }\n";
    std::fs::create_dir_all(sandbox.work().join("recipes")).expect("a recipes directory");
    sandbox.write(&sandbox.work().join("recipes/orders.rhai"), script);
    sandbox.write(
        &sandbox.work().join("other.rhai"),
        &script.replace("archive_order", "pin_order"),
    );

    let listed = |args: &[&str]| {
        let mut command = sandbox.webagent();
        command.arg("actions").args(args);
        let output = command.output().expect("webagent runs");
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        text(&output.stdout)
    };
    let json: Value =
        serde_json::from_str(&listed(&["--json"])).expect("actions --json prints JSON");
    let custom = json
        .as_array()
        .and_then(|specs| specs.iter().find(|s| s["name"] == "archive_order"))
        .unwrap_or_else(|| panic!("the configured directory's action is missing: {json}"));
    assert_eq!(custom["risk"], "commit");
    assert_eq!(
        custom["schema"]["properties"]["id"]["type"], "integer",
        "{custom}"
    );
    assert!(json
        .as_array()
        .is_some_and(|s| s.iter().any(|s| s["name"] == "click")));

    let table = listed(&["--recipes", "other.rhai"]);
    assert!(table.contains("pin_order"), "{table}");
    assert!(
        !table.contains("archive_order"),
        "--recipes replaces the directory:\n{table}"
    );
    let builtin = listed(&["--builtin"]);
    assert!(!builtin.contains("archive_order"), "{builtin}");
}

// ---------------------------------------------------------------------
// Every command builds the same session: what one gets (a model for
// `extract`, the sitemaps, the allowed-domain guard) the others get too.

#[test]
fn extract_asks_the_configured_model_in_a_recipe_run() {
    let sandbox = Sandbox::new("recipe-extract");
    let output = runtime().block_on(async {
        let server = PageServer::start().await.expect("serve pages");
        server.html("/invoice", page("Invoice", "<p>Invoice total: 42 EUR</p>"));
        let llm = LlmServer::start(vec![Reply::json(
            200,
            tool_call_completion("extract_result", &json!({"result": "42 EUR"})),
        )])
        .await;
        sandbox.write(
            &sandbox.work().join("total.rhai"),
            "recipe(\"total\", \"Reads the invoice total\");\n\
             fn total() { let r = run_action(\"extract\", #{ instruction: \"the invoice total\" }); \
             `${r.data}` }\n",
        );
        let mut command = sandbox.webagent();
        command
            .env("OPENAI_BASE_URL", llm.base_url())
            .env("OPENAI_API_KEY", "test-key")
            .args(["recipe", "run", "total.rhai", "--json", "--url"])
            .arg(server.url("/invoice"));
        let output = output_of(command).await;
        let asked = llm.requests();
        (output, asked)
    });
    let (output, asked) = output;
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(asked.len(), 1, "the extraction asked the model once");
    assert!(
        asked[0].body.contains("Invoice total: 42 EUR"),
        "{}",
        asked[0].body
    );
    let done = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "done")
        .unwrap_or_else(|| panic!("no done event:\n{stdout}"));
    assert!(
        done["text"].as_str().is_some_and(|t| t.contains("42 EUR")),
        "{done}"
    );
}

#[test]
fn custom_actions_use_the_sitemaps_and_the_allowed_domains_like_built_ins() {
    let sandbox = Sandbox::new("custom-session");
    let (to_billing, leaving) = runtime().block_on(async {
        let server = PageServer::start().await.expect("serve pages");
        server.html("/start", page("Start", "<p>start</p>"));
        server.html("/billing", page("Billing", "<p>invoices</p>"));
        let away = server.url("/start").replace("127.0.0.1", "localhost");
        server.html(
            "/links",
            page("Links", &format!("<a id=\"away\" href=\"{away}\">Away</a>")),
        );
        sandbox.write(
            &sandbox.work().join("shop.yaml"),
            "title: Shop\nchildren:\n  billing:\n    title: Billing\n    keywords: [invoices]\n",
        );
        sandbox.write(
            &sandbox.work().join("moves.rhai"),
            "action(\"to_billing\", #{ description: \"Opens billing\", risk: \"read\" });\n\
             fn to_billing() { run_action(\"goto_page\", #{ name: \"billing\" }); url() }\n\
             action(\"leave\", #{ description: \"Follows the away link\", risk: \"read\" });\n\
             fn leave() { click(\"#away\"); \"left\" }\n",
        );
        let mut to_billing = sandbox.webagent();
        to_billing
            // Leaving the site is a commit: approved with --yes, so the
            // guard is what stops it.
            .args([
                "exec",
                "--json",
                "--yes",
                "--recipes",
                "moves.rhai",
                "--sitemap",
                "shop.yaml",
            ])
            .arg(server.url("/start"))
            .arg("to_billing");
        let mut leaving = sandbox.webagent();
        leaving
            // Leaving the site is a commit: approved with --yes, so the
            // guard is what stops it.
            .args([
                "exec",
                "--json",
                "--yes",
                "--recipes",
                "moves.rhai",
                "--allow-domain",
                "127.0.0.1",
            ])
            .arg(server.url("/links"))
            .arg("leave")
            .arg(r##"{"click": {"selector": "#away"}}"##);
        (output_of(to_billing).await, output_of(leaving).await)
    });
    let lines = |output: &std::process::Output| -> Vec<Value> {
        text(&output.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    };
    // goto_page inside a custom action finds the sitemap's page.
    let billing = lines(&to_billing);
    assert_eq!(billing.len(), 1, "{}", text(&to_billing.stderr));
    assert_eq!(billing[0]["result"]["ok"], true, "{}", billing[0]);
    assert!(
        billing[0]["url"]
            .as_str()
            .is_some_and(|u| u.ends_with("/billing")),
        "{}",
        billing[0]
    );
    // A custom action's click and a typed one are both stopped at the
    // guard, and say so.
    let left = lines(&leaving);
    assert_eq!(left.len(), 2, "{}", text(&leaving.stderr));
    for line in &left {
        assert_eq!(line["result"]["ok"], false, "{line}");
        assert!(
            line["result"]["message"].to_string().contains("blocked")
                || line["result"]["reason"] == "blocked",
            "{line}"
        );
        assert!(
            line["url"]
                .as_str()
                .is_some_and(|u| u.contains("127.0.0.1")),
            "{line}"
        );
    }
}

/// Files that are not text, expand past any sense or are too big are
/// refused at once, saying where: a config or a suite that is not UTF-8
/// at the line and column of the first bad byte, an alias bomb at its
/// first alias, a sitemap over the size limit before it is read.
#[test]
fn files_that_are_not_text_or_too_big_are_refused_saying_where() {
    let sandbox = Sandbox::new("not-text");
    let work = sandbox.work();
    let refused = |args: &[&str]| {
        let started = std::time::Instant::now();
        let output = sandbox.webagent().args(args).output().expect("runs");
        assert_ne!(output.status.code(), Some(0), "{args:?} was accepted");
        (text(&output.stderr), started.elapsed())
    };

    std::fs::write(
        work.join("latin1.yaml"),
        b"agent:\n  language: fran\xe7ais\n",
    )
    .expect("written");
    let (said, _) = refused(&["config", "--config", "latin1.yaml"]);
    assert!(said.contains("latin1.yaml:2:17: not UTF-8"), "{said}");

    let levels: Vec<String> = (1..8)
        .map(|i| {
            format!(
                "l{i}: &l{i} [{}]",
                vec![format!("*l{}", i - 1); 9].join(", ")
            )
        })
        .collect();
    let bomb = format!(
        "l0: &l0 [x, x, x, x, x, x, x, x, x]\n{}\n",
        levels.join("\n")
    );
    sandbox.write(&work.join("bomb.yaml"), &bomb);
    let (said, _) = refused(&["config", "--config", "bomb.yaml"]);
    assert!(said.contains("bomb.yaml:2:10: "), "{said}");

    std::fs::write(work.join("suite.yaml"), b"cases:\n  - name: caf\xe9\n").expect("written");
    let (said, _) = refused(&["test", "suite.yaml", "--chrome", "/nowhere/chromium"]);
    assert!(said.contains("suite.yaml:2:14: not UTF-8"), "{said}");

    let big = std::fs::File::create(work.join("big.yaml")).expect("created");
    big.set_len(20 * 1024 * 1024).expect("sized");
    let (said, took) = refused(&["sitemap", "print", "big.yaml"]);
    assert!(said.contains("over the 4194304 bytes"), "{said}");
    assert!(took.as_secs() < 10, "refused at once, not after {took:?}");
}

// ---------------------------------------------------------------------
// `webagent init`: a starter project that every command accepts.

#[test]
fn init_writes_a_starter_project_every_command_accepts_and_never_overwrites() {
    let sandbox = Sandbox::new("init");
    let init = |sandbox: &Sandbox| sandbox.webagent().arg("init").output().expect("runs");
    let first = init(&sandbox);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let work = sandbox.work();
    for file in [
        "webagent.yaml",
        "sitemaps/site.yaml",
        "recipes/starter.rhai",
    ] {
        let written = std::fs::read_to_string(work.join(file)).expect(file);
        assert!(
            written.starts_with('#') || written.starts_with("//"),
            "{file} opens with a comment"
        );
    }
    let config = sandbox.webagent().arg("config").output().expect("runs");
    assert_eq!(config.status.code(), Some(0), "{}", text(&config.stderr));
    assert!(text(&config.stdout).contains("approve: risky"));
    let sitemap = sandbox
        .webagent()
        .args(["sitemap", "check", "sitemaps/site.yaml"])
        .output()
        .expect("runs");
    assert_eq!(sitemap.status.code(), Some(0), "{}", text(&sitemap.stderr));
    // The starter recipe runs on a page as its comment says.
    let output = runtime().block_on(async {
        let server = PageServer::start().await.expect("serve pages");
        server.html("/home", page("Starter home", "<p>hello</p>"));
        let mut command = sandbox.webagent();
        command
            .args([
                "recipe",
                "run",
                "recipes/starter.rhai",
                "--recipe",
                "look_around",
            ])
            .args(["--json", "--url"])
            .arg(server.url("/home"));
        output_of(command).await
    });
    let stdout = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&output.stderr)
    );
    assert!(
        stdout.contains("Starter home at http://127.0.0.1:"),
        "{stdout}"
    );

    std::fs::write(work.join("recipes/starter.rhai"), "// mine\n").expect("edited");
    let again = init(&sandbox);
    let stderr = text(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("webagent.yaml exists already"), "{stderr}");
    let kept = std::fs::read_to_string(work.join("recipes/starter.rhai")).expect("kept");
    assert_eq!(kept, "// mine\n");
}
