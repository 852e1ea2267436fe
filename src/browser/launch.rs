//! Finding and starting the system Chromium.
//!
//! Chromium is started by a tiny `sh` guardian rather than directly: the
//! guardian reads its stdin, which is a pipe held by this process, and when
//! that pipe closes (the session is dropped, or webagent exits or crashes) it
//! stops Chromium and removes the temporary profile. A browser therefore
//! never outlives the program that started it, even when the handle lives in
//! a `static` that is never dropped (the shared browser of a test binary).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::error::BrowserError;

/// Executable names looked up on `PATH`, in order.
const PATH_NAMES: [&str; 4] = [
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
];

/// Flags every launch gets: no background traffic, no first-run UI, no sync,
/// no component downloads (the machine may have no internet). The agent's
/// tab is often not the front one (the TUI, popups, parallel runs), and a
/// backgrounded tab has its timers and frames throttled, which would make
/// settling and page scripts crawl; so backgrounding is off.
const BASE_FLAGS: [&str; 15] = [
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-breakpad",
    "--disable-dev-shm-usage",
    "--disable-features=Translate,MediaRouter,OptimizationHints",
    "--metrics-recording-only",
    "--password-store=basic",
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
];

/// How to get a browser: which executable, headed or not, window size.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// The Chromium executable; `None` searches `PATH`
    /// and `/usr/bin/chromium`.
    pub chrome: Option<PathBuf>,
    /// Show a window instead of running headless.
    pub headed: bool,
    /// Attach to this running browser (`ws://…` or `http://host:port`)
    /// instead of launching one.
    pub connect: Option<String>,
    /// How long attaching to `connect` may take: a pool that queues
    /// sessions answers only when a browser frees.
    pub connect_timeout: Duration,
    /// How long a `connect` browser that went away is attached again, with
    /// backoff, before the session gives up.
    pub reconnect_window: Duration,
    /// Window size in CSS pixels (the viewport the page sees when headless).
    pub window: (u32, u32),
    /// More command-line flags for Chromium.
    pub extra_args: Vec<String>,
    /// How long Chromium may take to print its DevTools address.
    pub launch_timeout: Duration,
    /// Allowed-domain patterns (see [`super::guard`]); empty allows every
    /// URL. Every tab of the session enforces them.
    pub allowed_domains: Vec<String>,
    /// A persistent user-data directory instead of a fresh temporary one:
    /// created when missing, never removed.
    pub profile: Option<PathBuf>,
    /// A state file (cookies and local storage, see [`super::state`])
    /// loaded into the browser at every start, relaunches included. A
    /// missing file is an empty start.
    pub state: Option<PathBuf>,
    /// Where downloads go and how large one may be; `None` leaves
    /// Chromium's own behaviour (headless: refused).
    pub downloads: Option<super::download::DownloadOptions>,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions {
            chrome: None,
            headed: false,
            connect: None,
            connect_timeout: Duration::from_secs(15),
            reconnect_window: Duration::from_secs(30),
            window: (1280, 800),
            extra_args: Vec::new(),
            launch_timeout: Duration::from_secs(30),
            allowed_domains: Vec::new(),
            profile: None,
            state: None,
            downloads: None,
        }
    }
}

/// Finds the Chromium executable: the explicit path (the configuration's
/// `browser.executable`, which `WEBAGENT_CHROME` and `--chrome` set), then
/// the usual names on `PATH`, then `/usr/bin/chromium`.
pub fn find_chrome(explicit: Option<&Path>) -> Result<PathBuf, BrowserError> {
    if let Some(path) = explicit {
        return if path.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(BrowserError::ChromeMissingAt(path.to_path_buf()))
        };
    }
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    for name in PATH_NAMES {
        for dir in std::env::split_paths(&path_var) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    let fallback = PathBuf::from("/usr/bin/chromium");
    if fallback.is_file() {
        return Ok(fallback);
    }
    Err(BrowserError::ChromeNotFound {
        tried: format!("{} on PATH, /usr/bin/chromium", PATH_NAMES.join(", ")),
    })
}

/// The flags any Chromium started on this machine needs, whoever starts
/// it: the base flags, and `--no-sandbox` as root. A benchmark gives them
/// to another tool's browser so both run the same Chromium the same way.
pub(crate) fn shared_flags() -> Vec<String> {
    let mut flags: Vec<String> = BASE_FLAGS.iter().map(|s| s.to_string()).collect();
    if running_as_root() {
        flags.push("--no-sandbox".into());
    }
    flags
}

/// Whether this process runs as root, where Chromium's sandbox refuses to
/// start without `--no-sandbox`.
fn running_as_root() -> bool {
    // /proc/self/status has "Uid: real effective saved fs"; no libc needed.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// The start of every temporary profile's name; the process id follows.
const PROFILE_PREFIX: &str = "webagent-profile-";

/// A fresh, empty profile directory under the system temp dir. The
/// profiles of webagent processes that are gone (killed before their
/// guardian could clean up: SIGKILL, a power cut) are removed first.
fn fresh_profile_dir() -> Result<PathBuf, BrowserError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| remove_stale_profiles(&std::env::temp_dir()));
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "{PROFILE_PREFIX}{}-{}-{}",
        std::process::id(),
        nanos,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| BrowserError::Profile(dir.clone(), e))?;
    Ok(dir)
}

/// Removes the temporary profiles in `dir` whose webagent process no
/// longer runs. A profile whose process id is alive is kept, whoever owns
/// that id now: better a stale folder than another run's profile gone.
fn remove_stale_profiles(dir: &Path) {
    // Without /proc (not Linux) no process can be told gone.
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PROFILE_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        match std::fs::remove_dir_all(entry.path()) {
            Ok(()) => tracing::info!(profile = %entry.path().display(), "removed a stale profile"),
            Err(error) => {
                tracing::debug!(%error, profile = %entry.path().display(), "stale profile kept")
            }
        }
    }
}

/// How long a Chromium holding a persistent profile may take to let go.
const PROFILE_RELEASE_WAIT: Duration = Duration::from_secs(3);

/// A persistent profile directory, created when missing. A Chromium that
/// still runs on it is refused here: a second one would hand its command
/// line to the first and exit, which looks like a launch that never
/// answers.
fn persistent_profile_dir(dir: &Path) -> Result<PathBuf, BrowserError> {
    std::fs::create_dir_all(dir).map_err(|e| BrowserError::Profile(dir.to_path_buf(), e))?;
    let dir = dir
        .canonicalize()
        .map_err(|e| BrowserError::Profile(dir.to_path_buf(), e))?;
    // A Chromium that is closing, or was just killed and is still being
    // torn down (a relaunch right after a crash), lets go within moments:
    // give it that long before calling the profile taken.
    let deadline = std::time::Instant::now() + PROFILE_RELEASE_WAIT;
    while let Some(pid) = profile_holder(&dir) {
        if std::time::Instant::now() >= deadline {
            return Err(BrowserError::ProfileInUse { dir, pid });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(dir)
}

/// The live process holding Chromium's lock on a profile, if any. The lock
/// is a symlink `SingletonLock` → `HOST-PID`; a lock left by a Chromium
/// that was killed names a dead process (or another host) and is taken
/// over by the next Chromium.
fn profile_holder(dir: &Path) -> Option<u32> {
    let target = std::fs::read_link(dir.join("SingletonLock")).ok()?;
    let target = target.to_string_lossy();
    let (host, pid) = target.rsplit_once('-')?;
    let pid: u32 = pid.parse().ok()?;
    let here = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    if host != here.trim() {
        return None;
    }
    // A zombie or a reused pid is no holder: only a live Chromium is.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (name, rest) = stat.rsplit_once(')')?;
    let state = rest.split_whitespace().next()?;
    let chromium = name.contains("chrom");
    (chromium && state != "Z" && state != "X").then_some(pid)
}

/// A Chromium started by this process, with its guardian.
#[derive(Debug)]
pub(crate) struct LaunchedChrome {
    /// The DevTools websocket address.
    pub ws_url: String,
    /// The executable that runs.
    pub executable: PathBuf,
    guardian: Option<Child>,
    /// Closing this pipe tells the guardian to stop Chromium.
    lifeline: Option<ChildStdin>,
    profile: PathBuf,
    /// The profile is webagent's own temporary one (removed at the end),
    /// not a person's persistent one.
    temporary: bool,
}

impl LaunchedChrome {
    /// Starts Chromium and waits for its DevTools address.
    pub(crate) fn start(options: &LaunchOptions) -> Result<LaunchedChrome, BrowserError> {
        let executable = find_chrome(options.chrome.as_deref())?;
        let (profile, temporary) = match &options.profile {
            Some(dir) => (persistent_profile_dir(dir)?, false),
            None => (fresh_profile_dir()?, true),
        };
        let mut args = shared_flags();
        args.push(format!("--user-data-dir={}", profile.display()));
        args.push("--remote-debugging-port=0".into());
        args.push("--remote-debugging-address=127.0.0.1".into());
        args.push(format!(
            "--window-size={},{}",
            options.window.0, options.window.1
        ));
        if !options.headed {
            args.push("--headless".into());
            args.push("--hide-scrollbars".into());
            args.push("--mute-audio".into());
        }
        args.extend(options.extra_args.iter().cloned());
        args.push("about:blank".into());

        // $1 is the profile to remove at the end (empty for a persistent
        // one), the rest is the Chromium command line. A reader
        // in the background stops Chromium when the guardian's stdin closes
        // (fd 3: a background list's own stdin is /dev/null); the guardian
        // waits for Chromium, so it also ends, closing stderr, when Chromium
        // exits or is killed on its own (a failed start is reported at once
        // rather than after the launch timeout), and removes the profile.
        // Once Chromium runs, the guardian ignores SIGINT and SIGHUP: Ctrl-C
        // in a terminal and a terminal that closes signal the whole process
        // group, and a guardian killed with the others would leave the
        // profile behind; it ends when Chromium does.
        let script = r#"p="$1"; shift; exec 3<&0; "$@" </dev/null >/dev/null 3<&- & c=$!; trap '' INT HUP; (read _ignored <&3; kill $c 2>/dev/null) & r=$!; exec 3<&-; wait $c; kill $r 2>/dev/null; if [ -n "$p" ]; then rm -rf "$p"; if [ -d "$p" ]; then sleep 1; rm -rf "$p"; fi; fi"#;
        let mut guardian = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg("webagent-chromium")
            .arg(if temporary {
                profile.as_os_str()
            } else {
                std::ffi::OsStr::new("")
            })
            .arg(&executable)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                BrowserError::Launch(format!("could not start {}: {e}", executable.display()))
            })?;
        let lifeline = guardian.stdin.take();
        let stderr = guardian.stderr.take();
        tracing::info!(chrome = %executable.display(), profile = %profile.display(), "launching Chromium");

        let (tx, rx) = std::sync::mpsc::channel::<Result<String, String>>();
        if let Some(stderr) = stderr {
            std::thread::Builder::new()
                .name("chromium-stderr".into())
                .spawn(move || {
                    // Chromium keeps writing to stderr for its whole life; the
                    // pipe must be drained or it blocks once the buffer fills.
                    let mut sent = false;
                    let mut seen = String::new();
                    for line in BufReader::new(stderr).lines() {
                        let Ok(line) = line else { break };
                        if !sent {
                            if let Some(pos) = line.find("ws://") {
                                let _ = tx.send(Ok(line[pos..].trim().to_string()));
                                sent = true;
                                continue;
                            }
                            if seen.len() < 4000 {
                                seen.push_str(&line);
                                seen.push('\n');
                            }
                        }
                        tracing::debug!(target: "chromium", "{line}");
                    }
                    if !sent {
                        let _ = tx.send(Err(seen));
                    }
                })
                .map_err(|e| {
                    BrowserError::Launch(format!("could not read Chromium's output: {e}"))
                })?;
        }
        let mut launched = LaunchedChrome {
            ws_url: String::new(),
            executable,
            guardian: Some(guardian),
            lifeline,
            profile,
            temporary,
        };
        match rx.recv_timeout(options.launch_timeout) {
            Ok(Ok(url)) => {
                launched.ws_url = url;
                Ok(launched)
            }
            Ok(Err(output)) => Err(BrowserError::Launch(format!(
                "{} exited before it was ready:\n{}",
                launched.executable.display(),
                output.trim()
            ))),
            Err(_) => Err(BrowserError::Launch(format!(
                "{} printed no DevTools address within {:?}",
                launched.executable.display(),
                options.launch_timeout
            ))),
        }
    }

    /// The profile directory (a temporary one is removed when Chromium
    /// stops).
    pub(crate) fn profile(&self) -> &Path {
        &self.profile
    }

    /// Stops Chromium: closing the lifeline makes the guardian stop it and
    /// remove the profile. The guardian is reaped on a helper thread so that
    /// dropping a session inside async code never blocks a runtime worker;
    /// if it has not finished after five seconds it is killed and the
    /// profile removed here.
    pub(crate) fn stop(&mut self) {
        if self.lifeline.take().is_none() {
            return;
        }
        let Some(mut guardian) = self.guardian.take() else {
            return;
        };
        let profile = self.temporary.then(|| self.profile.clone());
        let reaper = move || {
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            loop {
                match guardian.try_wait() {
                    Ok(Some(_)) => return,
                    Ok(None) if std::time::Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    _ => {
                        let _ = guardian.kill();
                        let _ = guardian.wait();
                        if let Some(profile) = &profile {
                            let _ = std::fs::remove_dir_all(profile);
                        }
                        return;
                    }
                }
            }
        };
        if let Err(err) = std::thread::Builder::new()
            .name("chromium-reaper".into())
            .spawn(reaper)
        {
            tracing::warn!(%err, "could not start the reaper; Chromium stops on its own");
        }
    }
}

impl Drop for LaunchedChrome {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::browser::error::INSTALL_HINT;

    #[test]
    fn profiles_of_gone_processes_are_removed_and_live_ones_kept() {
        let dir = std::env::temp_dir().join(format!("webagent-sweep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // No process has an id above the kernel's largest pid_max (2^22).
        let gone = dir.join(format!("{PROFILE_PREFIX}99999999-1-0"));
        let live = dir.join(format!("{PROFILE_PREFIX}{}-1-0", std::process::id()));
        let other = dir.join("someone-elses-folder-99999999");
        for folder in [&gone, &live, &other] {
            std::fs::create_dir_all(folder.join("Default")).expect("a folder");
        }
        remove_stale_profiles(&dir);
        assert!(!gone.exists(), "the gone process's profile is removed");
        assert!(live.exists(), "a live process's profile is kept");
        assert!(other.exists(), "what is not a profile is kept");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_missing_explicit_path_is_named_in_the_error() {
        let err = find_chrome(Some(Path::new("/nonexistent/chrome"))).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("/nonexistent/chrome"), "{text}");
        assert!(text.contains(INSTALL_HINT), "{text}");
    }
}
