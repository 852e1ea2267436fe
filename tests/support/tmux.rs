//! Driving the workbench in a real terminal: tmux panes, keys sent with
//! `send-keys`, and screens read once they have settled (the same capture
//! twice), never after a fixed sleep.

/// A tmux command on the session's own server (`-L`, named after the
/// session). Tests run in parallel, and on one shared server a test that
/// killed the last session stopped the server under another test's
/// `tmux new` ("server exited unexpectedly"); its own server stops with
/// its session.
pub fn tmux(session: &str) -> std::process::Command {
    let mut command = std::process::Command::new("tmux");
    command.args(["-L", session]);
    command
}

/// The pane of `session` as text, once, settled or not.
pub fn capture(session: &str) -> String {
    let out = tmux(session)
        .args(["capture-pane", "-p", "-t", session])
        .output()
        .expect("running tmux capture-pane");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Sends `keys` to `session`, tmux key names (`Enter`, `C-c`) read as keys.
pub fn tmux_keys(session: &str, keys: &[&str]) {
    let status = tmux(session)
        .args(["send-keys", "-t", session])
        .args(keys)
        .status()
        .expect("running tmux send-keys");
    assert!(status.success());
}

/// Types `text` into `session` literally, key names not read as keys.
pub fn tmux_text(session: &str, text: &str) {
    let status = tmux(session)
        .args(["send-keys", "-t", session, "-l", text])
        .status()
        .expect("running tmux send-keys");
    assert!(status.success());
}

/// Writes `bytes` to `session`'s program in one write (a paste buffer,
/// without bracketed-paste marks), so an escape sequence such as a mouse
/// report is never split and its ESC never read as a lone Esc.
pub fn tmux_paste(session: &str, bytes: &str) {
    let status = tmux(session)
        .args(["set-buffer", "-b", "webagent-test", "--", bytes])
        .status()
        .expect("running tmux set-buffer");
    assert!(status.success());
    let status = tmux(session)
        .args(["paste-buffer", "-d", "-b", "webagent-test", "-t", session])
        .status()
        .expect("running tmux paste-buffer");
    assert!(status.success());
}

/// Polls the pane until `want` shows on a settled screen: the same
/// capture twice in a row, so a frame half drawn on a busy machine is
/// never what a test reads. Past the bound it fails with what the person
/// would see.
pub async fn wait_for_screen(session: &str, want: &str) -> String {
    settled_screen_where(session, |screen| screen.contains(want))
        .await
        .unwrap_or_else(|screen| {
            panic!("`{want}` never showed on a settled screen; the last capture:\n{screen}")
        })
}

/// The pane once it stops changing.
pub async fn settled_screen(session: &str) -> String {
    settled_screen_where(session, |_| true)
        .await
        .unwrap_or_else(|screen| panic!("the screen never settled; the last capture:\n{screen}"))
}

/// The first settled capture that `good` accepts, within 30 seconds; the
/// last capture otherwise.
pub async fn settled_screen_where(
    session: &str,
    good: impl Fn(&str) -> bool,
) -> Result<String, String> {
    let mut screen = String::new();
    let mut previous = String::new();
    for _ in 0..300 {
        screen = capture(session);
        if screen == previous && good(&screen) {
            return Ok(screen);
        }
        previous = screen.clone();
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    Err(screen)
}

/// Kills the tmux session even when the test fails.
pub struct TmuxSession(pub String);

impl Drop for TmuxSession {
    fn drop(&mut self) {
        let _ = tmux(&self.0).args(["kill-session", "-t", &self.0]).status();
    }
}

/// Browser tests never skip: a missing tool is a failure that says how to
/// install it.
pub fn require_tmux_and_chromium() {
    let have = |cmd: &str| {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {cmd}")])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    let mut missing = Vec::new();
    if !have("tmux") {
        missing.push("tmux".to_string());
    }
    if let Err(error) = webagent::browser::find_chrome(None) {
        missing.push(format!("Chromium ({error})"));
    }
    assert!(
        missing.is_empty(),
        "the end-to-end test needs {}: run `bash .ci/install-deps`, or `apt-get install -y chromium tmux`",
        missing.join(" and ")
    );
}

/// Starts `command` in a detached tmux session of 120×40.
pub fn tmux_start(session: &str, command: &str) {
    let status = tmux(session)
        .args(["new", "-d", "-s", session, "-x", "120", "-y", "40", command])
        .status()
        .expect("starting tmux");
    assert!(status.success());
}
