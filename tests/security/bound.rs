//! Secrets bound to their sites: filled where the top page and the field's
//! frame are on them, refused `blocked` on another allowed site and in a
//! frame of another site, by every road (the model in a headless run, a
//! recipe, an MCP client), with `domains:` in the config or
//! `--secret NAME@PATTERN`.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use webagent::serve::{PageServer, Response};

use crate::sides::shared;
use crate::support::cli::{json_lines, output_of, said, webagent};
use crate::support::llm_server::{step_reply, LlmServer};
use crate::support::scratch::scratch_dir;

/// The value the tests bind; no page must receive it off its site.
const PASSWORD: &str = "Bound-Secret-7731";

/// A site with a password field that reports each value it holds to its
/// own server (`/got`), and a page framing another site's field.
struct Site {
    server: PageServer,
    /// The host name pages use for it: `127.0.0.1` or `localhost`, which
    /// are different sites to Chromium (a frame of the other runs in a
    /// process of its own, as a frame of another company's site does).
    host: &'static str,
    got: Arc<Mutex<Vec<String>>>,
}

impl Site {
    async fn start(host: &'static str) -> Site {
        let server = PageServer::start().await.expect("serve pages");
        server.html(
            "/field",
            "<!doctype html><html><head><title>Sign in</title></head><body>\
             <input id=pw type=password oninput=\"fetch('/got?v=' + encodeURIComponent(this.value))\">\
             </body></html>",
        );
        let got = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&got);
        server.handle("/got", move |request| {
            let value = url::form_urlencoded::parse(request.query.as_bytes())
                .find(|(k, _)| k == "v")
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default();
            seen.lock().unwrap_or_else(|e| e.into_inner()).push(value);
            Response::text("ok")
        });
        Site { server, host, got }
    }

    fn origin(&self) -> String {
        format!("http://{}:{}", self.host, self.server.addr().port())
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin())
    }

    /// Frames `other`'s field inside a page of this site.
    fn frame(&self, other: &Site) {
        self.server.html(
            "/framed",
            format!(
                "<!doctype html><html><head><title>Framed</title></head><body>\
                 <iframe title=Other src=\"{}\" width=400 height=120></iframe></body></html>",
                other.url("/field")
            ),
        );
    }

    fn received_the_password(&self) -> bool {
        self.got
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|v| v == PASSWORD)
    }

    fn received_anything(&self) -> bool {
        !self
            .got
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }
}

/// A folder whose webagent.yaml allows both sites and binds `pw` to
/// `home` only.
fn config_binding(name: &str, home: &Site, other: &Site) -> std::path::PathBuf {
    let dir = scratch_dir(name);
    std::fs::write(
        dir.join("webagent.yaml"),
        format!(
            "allowed_domains: [\"{}\", \"{}\"]\nsecrets:\n  pw:\n    from: env:BOUND_PW\n    domains: [\"{}\"]\n",
            home.origin(),
            other.origin(),
            home.origin()
        ),
    )
    .expect("the config is written");
    dir
}

fn typed(selector: &str) -> Value {
    json!({"input_text": {"selector": selector, "text": "<secret>pw</secret>"}})
}

/// The results of the run's steps, in order.
fn step_results(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"] == "step")
        .map(|e| e["result"].clone())
        .collect()
}

fn assert_refused(result: &Value, home: &Site, about: &str) {
    assert_eq!(result["reason"], "blocked", "{about}: {result}");
    let message = result["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`pw` may only be typed on")
            && message.contains(&home.origin())
            && !message.contains(PASSWORD),
        "{about}: {message}"
    );
}

#[test]
fn the_model_fills_a_bound_secret_on_its_site_only_not_on_another_allowed_site_or_in_its_frame() {
    let s = shared();
    let (output, home, other, dir) = s.runtime.block_on(async {
        let (home, other) = (
            Site::start("127.0.0.1").await,
            Site::start("localhost").await,
        );
        home.frame(&other);
        let llm = LlmServer::start(vec![
            step_reply("type the password here", typed("#pw")),
            step_reply(
                "go to the other site",
                json!({"navigate": {"url": other.url("/field")}}),
            ),
            step_reply("type it there too", typed("#pw")),
            step_reply(
                "go back to the framing page",
                json!({"navigate": {"url": home.url("/framed")}}),
            ),
            step_reply("type it in the frame", typed("iframe[title=Other] >>> #pw")),
            step_reply("finish", json!({"done": {"text": "done", "success": true}})),
        ])
        .await;
        let dir = config_binding("bound-model", &home, &other);
        let mut command = webagent();
        command
            .current_dir(&dir)
            .env("BOUND_PW", PASSWORD)
            .env_remove("WEBAGENT_CONFIG")
            .args(["run", "Sign in", "--json", "--yes", "--model", "m"])
            .args(["--url", &home.url("/field")])
            .args(["--base-url", &llm.base_url(), "--sessions-dir", "sessions"]);
        let output = output_of(command).await;
        (output, home, other, dir)
    });
    let events = json_lines(&output);
    let results = step_results(&events);
    assert_eq!(results.len(), 6, "{}", said(&output));
    assert_eq!(results[0]["ok"], true, "on its site: {}", results[0]);
    assert!(
        home.received_the_password(),
        "the page of its site got the value"
    );
    assert_refused(&results[2], &home, "on another allowed site");
    assert_refused(&results[4], &home, "in a frame of another site");
    assert!(
        results[4]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("in a frame of"),
        "{}",
        results[4]
    );
    assert!(!other.received_anything(), "the other site never got a key");
    assert!(!String::from_utf8_lossy(&output.stdout).contains(PASSWORD));

    // The run exported as a recipe keeps the binding: replayed on the other
    // site by a session that binds nothing (no config, a bare --secret, no
    // allowed domains), its typing step is still refused.
    let trace = std::fs::read_dir(dir.join("sessions"))
        .expect("the sessions folder")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("a trace");
    let exported = webagent()
        .current_dir(&dir)
        .arg("export")
        .arg(&trace)
        .args(["--recipe", "replay.rhai"])
        .output()
        .expect("export runs");
    assert!(exported.status.success(), "{}", said(&exported));
    let recipe = std::fs::read_to_string(dir.join("replay.rhai")).expect("the recipe");
    let declared = format!("secret_sites(\"pw\", [\"{}\"]);", home.origin());
    assert!(recipe.contains(&declared), "{recipe}");
    std::fs::remove_file(dir.join("webagent.yaml")).expect("the config goes");
    let replayed = s.runtime.block_on(async {
        let mut command = webagent();
        command
            .current_dir(&dir)
            .env("pw", PASSWORD)
            .env_remove("WEBAGENT_CONFIG")
            .args(["recipe", "run", "replay.rhai", "--json", "--secret", "pw"])
            .args(["--url", &other.url("/field"), "--sessions-dir", "sessions"]);
        output_of(command).await
    });
    let results = step_results(&json_lines(&replayed));
    assert!(!results.is_empty(), "{}", said(&replayed));
    assert_refused(&results[0], &home, "the exported recipe on another site");
    assert!(!other.received_anything());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A recipe that types the password into the page's field.
const TYPING_RECIPE: &str = "recipe(\"type_it\", \"Types the password\");\nfn type_it() {\n  fill(\"#pw\", \"<secret>pw</secret>\");\n  \"typed\"\n}\n";

#[test]
fn a_recipe_with_secret_at_pattern_fills_on_its_site_and_is_refused_on_another() {
    let s = shared();
    let dir = scratch_dir("bound-recipe");
    std::fs::write(dir.join("type.rhai"), TYPING_RECIPE).expect("the recipe is written");
    let (home, other, outputs) = s.runtime.block_on(async {
        let (home, other) = (
            Site::start("127.0.0.1").await,
            Site::start("localhost").await,
        );
        let mut outputs = Vec::new();
        for start in [home.url("/field"), other.url("/field")] {
            let mut command = webagent();
            command
                .current_dir(&dir)
                .env("pw", PASSWORD)
                .env_remove("WEBAGENT_CONFIG")
                .args(["recipe", "run", "type.rhai", "--json", "--url", &start])
                .args([
                    "--allow-domain",
                    &home.origin(),
                    "--allow-domain",
                    &other.origin(),
                ])
                .args(["--secret", &format!("pw@{}", home.origin())])
                .args(["--sessions-dir", "sessions"]);
            outputs.push(output_of(command).await);
        }
        (home, other, outputs)
    });
    assert_eq!(outputs[0].status.code(), Some(0), "{}", said(&outputs[0]));
    assert!(home.received_the_password());
    let refused = &outputs[1];
    assert_ne!(refused.status.code(), Some(0), "{}", said(refused));
    let results = step_results(&json_lines(refused));
    assert_eq!(results.len(), 1, "{}", said(refused));
    assert_refused(&results[0], &home, "a recipe on another allowed site");
    assert!(!other.received_anything());
    let _ = std::fs::remove_dir_all(&dir);
}
