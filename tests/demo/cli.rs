//! `webagent demo` as a person starts it: `--serve-only` prints the
//! address, serves and stops on Ctrl-C; the workbench starts from any
//! folder; `--write` puts the demo's files out to edit.

use std::net::{SocketAddr, TcpStream};

use webagent::demo::DEMO_EMAIL;

use crate::client::Client;

/// Kills the child if the test fails before it stops it itself.
struct ChildGuard(std::process::Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn demo_serve_only_prints_the_url_serves_and_stops_on_ctrl_c() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};

    let log = std::env::temp_dir().join(format!("webagent-demo-test-{}.log", std::process::id()));
    let child = Command::new(env!("CARGO_BIN_EXE_webagent"))
        .args(["demo", "--serve-only", "--log-file"])
        .arg(&log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting webagent demo");
    let mut child = ChildGuard(child);
    let stdout = child.0.stdout.take().expect("piped stdout");
    let mut lines = std::io::BufReader::new(stdout).lines();
    let url = lines.next().and_then(Result::ok).unwrap_or_default();
    let addr: SocketAddr = url
        .strip_prefix("http://")
        .and_then(|rest| rest.trim_end_matches('/').parse().ok())
        .unwrap_or_else(|| panic!("the first line is not the site URL: {url:?}"));
    assert!(addr.ip().is_loopback(), "{addr}");
    let hint = lines.next().and_then(Result::ok).unwrap_or_default();
    assert!(hint.contains(DEMO_EMAIL), "{hint}");

    let mut client = Client {
        addr,
        cookie_name: format!("acme_session_{}", addr.port()),
        cookie: None,
    };
    let login = client.get("/login");
    assert_eq!(login.status, 200);
    assert!(login.body.contains("Sign in"));

    let status = Command::new("kill")
        .args(["-INT", &child.0.id().to_string()])
        .status()
        .expect("sending SIGINT");
    assert!(status.success());
    let exit = child.0.wait().expect("waiting for webagent demo");
    assert!(exit.success(), "Ctrl-C should end it cleanly: {exit:?}");
    assert!(
        TcpStream::connect(addr).is_err(),
        "still listening after exit"
    );
    let _ = std::fs::remove_file(&log);
}

/// `webagent demo` started in a folder with none of the repository's files
/// (as after `cargo install`) loads its built-in sitemap and recipes: the
/// sitemap pane shows the app's routes and the recipes' `sign_in` runs. Its
/// copy of the files is gone once the workbench quits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_starts_in_any_folder_with_its_built_in_sitemap_and_recipes() {
    use crate::support::tmux::{
        require_tmux_and_chromium, tmux_keys, tmux_start, tmux_text, wait_for_screen, TmuxSession,
    };
    require_tmux_and_chromium();
    let dir = crate::support::scratch::scratch_dir("demo-anywhere");
    let session = TmuxSession(format!("webagent-demo-anywhere-{}", std::process::id()));
    tmux_start(
        &session.0,
        &format!(
            "cd {} && echo $$ > pid && exec {} --log-file log demo",
            dir.display(),
            env!("CARGO_BIN_EXE_webagent")
        ),
    );
    let screen = wait_for_screen(&session.0, "Order detail").await;
    assert!(screen.contains("Sitemap acme.yaml"), "{screen}");
    tmux_keys(&session.0, &[":"]);
    tmux_text(&session.0, "sign_in");
    tmux_keys(&session.0, &["Enter"]);
    let screen = wait_for_screen(&session.0, "/dashboard").await;
    assert!(
        screen
            .lines()
            .any(|l| l.contains("sign_in") && l.contains(" ok ")),
        "the built-in recipes' sign_in ran:\n{screen}"
    );
    let pid = std::fs::read_to_string(dir.join("pid")).expect("the pid");
    let copy = std::env::temp_dir().join(format!("webagent-demo-{}", pid.trim()));
    assert!(
        copy.join("recipes/acme.rhai").is_file(),
        "{}",
        copy.display()
    );
    tmux_keys(&session.0, &["q"]);
    let removed = crate::support::wait::eventually(|| !copy.exists()).await;
    assert!(removed, "{} outlived the demo", copy.display());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `webagent demo --write DIR` writes the demo's files to edit and never
/// overwrites an edited copy.
#[test]
fn demo_write_puts_the_files_out_once() {
    let dir = crate::support::scratch::scratch_dir("demo-write");
    let write = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
            .current_dir(&dir)
            .args(["demo", "--write", "mine"])
            .output()
            .expect("webagent runs")
    };
    let first = write();
    assert!(first.status.success(), "{first:?}");
    for file in [
        "sitemaps/acme.yaml",
        "recipes/acme.rhai",
        "recipes/acme.suite.yaml",
    ] {
        assert!(dir.join("mine").join(file).is_file(), "{file}");
    }
    std::fs::write(dir.join("mine/recipes/acme.rhai"), "// edited").expect("edited");
    let second = write();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("exists already"), "{stderr}");
    let kept = std::fs::read_to_string(dir.join("mine/recipes/acme.rhai")).expect("kept");
    assert_eq!(kept, "// edited");
    let _ = std::fs::remove_dir_all(&dir);
}
