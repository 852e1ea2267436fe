//! Named sessions as a coding agent uses them: `webagent session start`,
//! then separate `webagent` processes acting on the same page with
//! `--session NAME`, then `session stop`.
//!
//! Every test gets its own [`Sessions`]: a scratch folder to work in and a
//! private `XDG_RUNTIME_DIR` inside it, so no test sees another's sessions,
//! and a guard that stops whatever the test started even when it fails.
//! The pages come from one server on 127.0.0.1 the binary starts; each
//! session launches its own Chromium, as a person's would.

#[path = "../support/mod.rs"]
mod support;

mod attach;
mod commands;
mod lifecycle;
mod runs;
mod skill;

use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;
use webagent::serve::PageServer;

use support::chromium::runtime;
use support::cli::{said, webagent};
use support::scratch::scratch_dir;

/// The binary's page server.
pub fn server() -> &'static PageServer {
    static SERVER: OnceLock<PageServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        runtime()
            .block_on(PageServer::start())
            .expect("starting the page server")
    })
}

/// One test's sessions: its working folder and its private runtime
/// folder. Dropping it stops every session the test started.
pub struct Sessions {
    /// Where the commands run (their traces land in it).
    pub home: PathBuf,
    /// The `XDG_RUNTIME_DIR` the commands see.
    pub runtime_dir: PathBuf,
}

impl Sessions {
    /// Fresh folders for test `name` (keep it short: socket paths are
    /// limited to 107 bytes).
    pub fn new(name: &str) -> Sessions {
        let home = scratch_dir(name);
        let runtime_dir = home.join("rt");
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&runtime_dir)
            .expect("creating the runtime folder");
        Sessions { home, runtime_dir }
    }

    /// `webagent ARGS` as this test runs it.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = webagent();
        command
            .args(args)
            .arg("--log-file")
            .arg(self.home.join("webagent.log"))
            .env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .current_dir(&self.home);
        command
    }

    /// Runs `webagent ARGS` and returns what it said; a command that does
    /// not end within a minute fails the test (a hang is the bug).
    pub fn run(&self, args: &[&str]) -> Output {
        finished(self.command(args), Duration::from_secs(60))
            .unwrap_or_else(|| panic!("`webagent {}` did not end within 60 s", args.join(" ")))
    }

    /// Runs `webagent ARGS` and returns its stdout, failing the test when
    /// it does not exit 0.
    pub fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert!(
            output.status.success(),
            "`webagent {}` failed:\n{}",
            args.join(" "),
            said(&output)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Starts session `name` on `url` with `extra` flags.
    pub fn start(&self, name: &str, url: &str, extra: &[&str]) -> String {
        let mut args = vec!["session", "start", name, url];
        args.extend_from_slice(extra);
        self.ok(&args)
    }

    /// Where the sessions' files are.
    pub fn files(&self) -> PathBuf {
        self.runtime_dir.join("webagent")
    }

    /// The metadata session `name` wrote.
    pub fn meta(&self, name: &str) -> Value {
        let file = self.files().join(format!("{name}.json"));
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        serde_json::from_str(&text).expect("the metadata is JSON")
    }

    /// The session process of `name`.
    pub fn pid(&self, name: &str) -> u32 {
        self.meta(name)["pid"].as_u64().expect("a pid") as u32
    }
}

impl Drop for Sessions {
    fn drop(&mut self) {
        let pids: Vec<u32> = std::fs::read_dir(self.files())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .filter_map(|text| serde_json::from_str::<Value>(&text).ok())
            .filter_map(|meta| meta["pid"].as_u64())
            .map(|pid| pid as u32)
            .collect();
        let _ = finished(
            self.command(&["session", "stop", "--all"]),
            Duration::from_secs(60),
        );
        // A session that did not stop is ended with its browser.
        for pid in pids {
            if support::processes::alive(pid) {
                if let Some(browser) = support::processes::browser_process_of(pid) {
                    support::processes::signal(browser, "-KILL");
                }
                support::processes::signal(pid, "-KILL");
            }
        }
    }
}

/// Runs `command` to its end, or gives up after `bound` (the process is
/// left to the guard).
pub fn finished(mut command: Command, bound: Duration) -> Option<Output> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(command.output());
    });
    receiver
        .recv_timeout(bound)
        .ok()
        .map(|output| output.expect("the webagent binary runs"))
}

/// Waits (up to `bound`) until `check` holds, and says whether it did;
/// the bound only ends a failing test.
pub fn until(bound: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + bound;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    check()
}
