//! `webagent demo serve`: it prints the address, serves, and stops on
//! Ctrl-C.

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
