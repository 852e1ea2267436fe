//! A session's life: its private socket, a name taken twice, a name that
//! does not exist, the idle timeout, and a process killed under it.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

use crate::support::cli::said;
use crate::support::pages::page;
use crate::support::processes::{alive, browser_process_of, signal};
use crate::{server, until, Sessions};

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn the_socket_is_owner_only_and_names_are_checked() {
    server().html("/plain", page("Plain", "<button>Go</button>"));
    let s = Sessions::new("socket");
    let started = s.start("p", &server().url("/plain"), &[]);
    assert!(started.contains("session p started"), "{started}");
    assert!(started.contains("trace: "), "{started}");
    assert_eq!(mode(&s.files().join("p.sock")), 0o600);
    assert_eq!(mode(&s.files()), 0o700);
    assert_eq!(mode(&s.files().join("p.json")), 0o600);

    let twice = s.run(&["session", "start", "p", &server().url("/plain")]);
    assert_eq!(twice.status.code(), Some(2), "{}", said(&twice));
    assert!(String::from_utf8_lossy(&twice.stderr).contains("already running"));

    let missing = s.run(&["observe", "--session", "nobody"]);
    assert_eq!(missing.status.code(), Some(4), "{}", said(&missing));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no session named `nobody`"));

    let listed = s.ok(&["session", "list"]);
    assert!(
        listed.contains("p  ") && listed.contains("/plain"),
        "{listed}"
    );
    s.ok(&["session", "stop", "p"]);
    assert!(!s.files().join("p.sock").exists());
    assert!(s.ok(&["session", "list"]).contains("no sessions"));
}

/// The profile folder the browser of session process `pid` runs with.
fn profile_of(pid: u32) -> PathBuf {
    let mut browser = None;
    assert!(
        until(Duration::from_secs(10), || {
            browser = browser_process_of(pid);
            browser.is_some()
        }),
        "no browser under the session process"
    );
    let browser = browser.unwrap_or_default();
    let cmdline = std::fs::read(format!("/proc/{browser}/cmdline")).expect("its command line");
    cmdline
        .split(|b| *b == 0)
        .filter_map(|arg| std::str::from_utf8(arg).ok())
        .find_map(|arg| arg.strip_prefix("--user-data-dir="))
        .map(PathBuf::from)
        .expect("a --user-data-dir")
}

#[test]
fn the_idle_timeout_ends_the_session_and_removes_its_profile() {
    server().html("/idle", page("Idle", "<button>Go</button>"));
    let s = Sessions::new("idle");
    let config = s.home.join("idle.yaml");
    std::fs::write(&config, "session:\n  idle_timeout: 2\n").expect("writing the config");
    let config = config.display().to_string();
    s.start("i", &server().url("/idle"), &["--config", &config]);
    let pid = s.pid("i");
    let profile = profile_of(pid);
    assert!(profile.exists(), "{}", profile.display());
    // Nothing is sent; the session ends by itself.
    assert!(
        until(Duration::from_secs(60), || !alive(pid)),
        "the session outlived its idle timeout"
    );
    // The browser's guardian removes the profile as the browser stops.
    assert!(
        until(Duration::from_secs(30), || !profile.exists()),
        "{} is left",
        profile.display()
    );
    assert!(!s.files().join("i.sock").exists());
    let log = std::fs::read_to_string(s.files().join("i.log")).unwrap_or_default();
    assert!(log.contains("session.idle_timeout"), "{log}");
    let after = s.run(&["observe", "--session", "i"]);
    assert_eq!(after.status.code(), Some(4), "{}", said(&after));
}

#[test]
fn a_killed_session_process_is_reported_by_the_next_command_with_exit_5() {
    server().html("/killed", page("Killed", "<button>Go</button>"));
    let s = Sessions::new("killed");
    s.start("k", &server().url("/killed"), &[]);
    let pid = s.pid("k");
    let trace = s.meta("k")["trace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let browser = browser_process_of(pid);
    assert!(signal(pid, "-KILL"));
    assert!(until(Duration::from_secs(10), || !alive(pid)));
    if let Some(browser) = browser {
        signal(browser, "-KILL");
    }
    // `run` fails the test when the command hangs.
    let output = s.run(&["exec", "--session", "k", "click 0"]);
    assert_eq!(output.status.code(), Some(5), "{}", said(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("session `k` is gone"), "{stderr}");
    assert!(stderr.contains(&trace), "{stderr}");
    let stopped = s.ok(&["session", "stop", "k"]);
    assert!(stopped.contains("already gone"), "{stopped}");
    assert!(!s.files().join("k.json").exists());
}
