//! The baseline of `webagent bench cli`: agent-browser's command line doing
//! the loop a coding agent runs with it (`snapshot -i`, then `click @eN`)
//! on the same pages, against its own background daemon, with the same
//! Chromium and launch flags as webagent's session.
//!
//! agent-browser is not a dependency: the benchmark runs the binary it is
//! given (`--agent-browser PATH`, else `agent-browser` on `PATH`), and
//! without one it says how to get it and reports webagent's figures alone.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde::Serialize;

use super::{median, ms_since, round2};

/// How to install the version the figures were taken against.
pub const INSTALL: &str = "npm install --ignore-scripts agent-browser@0.41.2, then \
     `node node_modules/agent-browser/scripts/postinstall.js`, and pass \
     --agent-browser node_modules/agent-browser/bin/agent-browser-linux-x64";

/// agent-browser's figures on one page, medians in ms.
#[derive(Debug, Serialize)]
pub struct Figures {
    /// Wall time of `snapshot -i`.
    pub snapshot_wall_ms: f64,
    /// Wall time of `click @eN`.
    pub click_wall_ms: f64,
}

impl Figures {
    /// One round of the loop: a look and a click.
    pub fn round_ms(&self) -> f64 {
        self.snapshot_wall_ms + self.click_wall_ms
    }
}

/// The binary to run: the one named, else `agent-browser` on `PATH`.
pub fn find(named: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(path) = named {
        return if path.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(format!("{} is not a file", path.display()))
        };
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("agent-browser"))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| "no agent-browser on PATH".to_string())
}

/// An agent-browser session of the benchmark's own, closed when dropped.
pub struct Baseline {
    exe: PathBuf,
    chrome: PathBuf,
    session: String,
}

impl Baseline {
    /// A session that will launch `chrome` with webagent's launch flags on
    /// its first command.
    pub fn new(exe: PathBuf, chrome: PathBuf) -> Baseline {
        Baseline {
            exe,
            chrome,
            session: format!("webagent-bench-{}", std::process::id()),
        }
    }

    /// The version it reports, for the table's heading.
    pub fn version(&self) -> anyhow::Result<String> {
        Ok(self.ok(&["--version"])?.trim().to_string())
    }

    /// Opens `url`, then `rounds` times looks (`snapshot -i`) and clicks
    /// the first element the look gave a ref.
    pub fn run_page(&self, url: &str, rounds: usize) -> anyhow::Result<Figures> {
        self.ok(&["open", url])?;
        let (mut snapshots, mut clicks) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let started = Instant::now();
            let snapshot = self.ok(&["snapshot", "-i"])?;
            snapshots.push(ms_since(started));
            let reference = first_ref(&snapshot)
                .ok_or_else(|| anyhow::anyhow!("agent-browser's snapshot of {url} has no ref"))?;
            let started = Instant::now();
            self.ok(&["click", &format!("@{reference}")])?;
            clicks.push(ms_since(started));
        }
        snapshots.sort_by(f64::total_cmp);
        clicks.sort_by(f64::total_cmp);
        Ok(Figures {
            snapshot_wall_ms: round2(median(&snapshots)),
            click_wall_ms: round2(median(&clicks)),
        })
    }

    /// Runs `agent-browser --session S ARGS` and gives its stdout.
    fn ok(&self, args: &[&str]) -> anyhow::Result<String> {
        let output = Command::new(&self.exe)
            .arg("--session")
            .arg(&self.session)
            .args(args)
            .env("AGENT_BROWSER_EXECUTABLE_PATH", &self.chrome)
            // Newlines, since one of the flags holds commas.
            .env(
                "AGENT_BROWSER_ARGS",
                crate::browser::shared_flags().join("\n"),
            )
            .output()?;
        anyhow::ensure!(
            output.status.success(),
            "`agent-browser {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

impl Drop for Baseline {
    fn drop(&mut self) {
        if let Err(error) = self.ok(&["close"]) {
            eprintln!("warning: {error}");
        }
    }
}

/// The first `[ref=eN]` of a snapshot.
fn first_ref(snapshot: &str) -> Option<&str> {
    let start = snapshot.find("[ref=")? + "[ref=".len();
    let rest = &snapshot[start..];
    Some(&rest[..rest.find(']')?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_ref_of_a_snapshot_is_read_and_none_without_one() {
        let snapshot = "- heading \"Items\"\n- button \"Buy\" [ref=e7]\n- link \"x\" [ref=e8]\n";
        assert_eq!(first_ref(snapshot), Some("e7"));
        assert_eq!(first_ref("- heading \"Items\"\n"), None);
    }
}
