//! `webagent bench cli`: what a command on a named session costs on top of
//! the action it carries. A coding agent runs `observe --delta` and
//! `exec 'click N'` as separate processes; each pays for a process start,
//! the socket, and printing. The figure is the command's wall time against
//! the action's own time inside the session (the `ms` its JSON line
//! reports), measured on the benchmark pages in one run, plus the session
//! process's memory while idle and a bare `webagent --version` for the
//! cost of starting the binary at all. In the same run agent-browser does
//! its own loop on the same pages as the baseline (see `agent_browser`).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use serde::Serialize;

use super::agent_browser::{self, Baseline};
use super::{median, ms_since, round2};
use crate::serve::PageServer;

/// Flags of `webagent bench cli`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// `observe --delta` + `exec 'click N'` rounds per page.
    #[arg(long, default_value_t = 20)]
    pub rounds: usize,
    /// Print one JSON object per page instead of a table.
    #[arg(long)]
    pub json: bool,
    /// agent-browser's binary for the baseline (default: `agent-browser`
    /// on PATH; without one the baseline is left out and says why).
    #[arg(long, value_name = "PATH")]
    pub agent_browser: Option<PathBuf>,
}

/// The figures of one page.
#[derive(Debug, Serialize)]
pub struct PageFigures {
    /// The benchmark page.
    pub page: String,
    /// Elements in its listing.
    pub elements: usize,
    /// Median wall time of `exec --session S 'click N' --json`, ms.
    pub exec_wall_ms: f64,
    /// Median time of the click inside the session, ms.
    pub action_ms: f64,
    /// Median of (wall − action) per command: what the command adds, ms.
    pub added_ms: f64,
    /// Median wall time of `observe --session S --delta`, ms.
    pub delta_wall_ms: f64,
    /// agent-browser's `snapshot -i` + `click @eN` on the same page.
    pub agent_browser: Option<agent_browser::Figures>,
    /// webagent's round (delta + exec) over agent-browser's; goal ≤ 0.5.
    pub vs_agent_browser: Option<f64>,
    /// Why agent-browser's loop failed on this page, when it did.
    pub agent_browser_failed: Option<String>,
}

/// The pages the loop runs on: the observation benchmark's pages with
/// something to click.
const PAGES: [&str; 4] = ["items-1000", "items-5000", "form-500", "shadow-200"];

/// Runs `webagent bench cli`.
pub fn bench(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let rounds = args.rounds.max(1);
    let runtime = crate::session::runtime()?;
    let server = runtime.block_on(PageServer::start())?;
    for (name, html) in super::observe::bench_pages() {
        if PAGES.contains(&name.as_str()) {
            server.html(&format!("/{name}"), html);
        }
    }
    let exe = std::env::current_exe()?;
    let session = BenchSession::start(&exe, &server.url("/items-1000"))?;
    let version = {
        let mut times = Vec::new();
        for _ in 0..rounds {
            let started = Instant::now();
            let status = Command::new(&exe).arg("--version").output()?.status;
            anyhow::ensure!(status.success(), "`webagent --version` failed");
            times.push(ms_since(started));
        }
        times.sort_by(f64::total_cmp);
        median(&times)
    };
    let mut figures = Vec::new();
    for page in PAGES {
        session.ok(&[
            "exec",
            "--session",
            SESSION,
            &format!("navigate {}", server.url(&format!("/{page}"))),
        ])?;
        let listing = session.ok(&["observe", "--session", SESSION])?;
        let elements = listing
            .lines()
            .filter(|l| l.trim_start().starts_with('['))
            .count();
        let index = listing
            .lines()
            .find_map(|l| {
                l.trim_start()
                    .strip_prefix('[')?
                    .split(']')
                    .next()?
                    .parse::<u64>()
                    .ok()
            })
            .ok_or_else(|| anyhow::anyhow!("{page} lists no element to click"))?;
        let click = format!("click {index}");
        let (mut walls, mut actions, mut added, mut deltas) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let started = Instant::now();
            session.ok(&["observe", "--session", SESSION, "--delta"])?;
            deltas.push(ms_since(started));
            let started = Instant::now();
            let line = session.ok(&["exec", "--session", SESSION, &click, "--json"])?;
            let wall = ms_since(started);
            let reported: serde_json::Value = serde_json::from_str(line.trim())?;
            let action = reported["ms"].as_f64().unwrap_or_default();
            walls.push(wall);
            actions.push(action);
            added.push(wall - action);
        }
        for values in [&mut walls, &mut actions, &mut added, &mut deltas] {
            values.sort_by(f64::total_cmp);
        }
        figures.push(PageFigures {
            page: page.to_string(),
            elements,
            exec_wall_ms: round2(median(&walls)),
            action_ms: round2(median(&actions)),
            added_ms: round2(median(&added)),
            delta_wall_ms: round2(median(&deltas)),
            agent_browser: None,
            vs_agent_browser: None,
            agent_browser_failed: None,
        });
    }
    let idle_mb = session.resident_mb();
    drop(session);
    // The baseline runs once webagent's session is gone, so the two never
    // share the cores.
    let baseline = agent_browser::find(args.agent_browser.as_deref()).and_then(|exe| {
        let chrome = crate::browser::find_chrome(None).map_err(|e| e.to_string())?;
        Ok(Baseline::new(exe, chrome))
    });
    let baseline_heading = match &baseline {
        Ok(baseline) => {
            for f in &mut figures {
                let url = server.url(&format!("/{}", f.page));
                // A page it cannot do is a figure too, not the end of the
                // benchmark.
                match baseline.run_page(&url, rounds) {
                    Ok(theirs) => {
                        f.vs_agent_browser = Some(round2(
                            (f.delta_wall_ms + f.exec_wall_ms) / theirs.round_ms(),
                        ));
                        f.agent_browser = Some(theirs);
                    }
                    Err(error) => f.agent_browser_failed = Some(error.to_string()),
                }
            }
            baseline.version()?
        }
        Err(why) => format!(
            "agent-browser baseline left out: {why} (install: {})",
            agent_browser::INSTALL
        ),
    };
    let baseline_ran = baseline.is_ok();
    drop(baseline);
    if args.json {
        for f in &figures {
            println!("{}", serde_json::to_string(f)?);
        }
        println!(
            "{}",
            serde_json::json!({
                "version_ms": round2(version),
                "idle_session_mb": idle_mb.map(|(all, _)| round2(all)),
                "idle_session_anon_mb": idle_mb.map(|(_, anon)| round2(anon)),
                "baseline": baseline_heading,
            })
        );
    } else {
        println!("{rounds} rounds of `observe --session S --delta` + `exec --session S 'click N' --json` per page (medians, ms)");
        println!(
            "{:<12} {:>8} {:>10} {:>9} {:>9} {:>12}",
            "page", "elements", "exec wall", "action", "added", "delta wall"
        );
        for f in &figures {
            println!(
                "{:<12} {:>8} {:>10.1} {:>9.1} {:>9.1} {:>12.1}",
                f.page, f.elements, f.exec_wall_ms, f.action_ms, f.added_ms, f.delta_wall_ms
            );
        }
        println!("`webagent --version` alone: {version:.1} ms (the cost of starting the binary)");
        match idle_mb {
            Some((mb, anon)) => println!(
                "idle session process: {mb:.1} MB resident (besides its Chromium; {anon:.1} MB of it its own heap and stacks, the rest mapped file pages); goal ≤ 30 MB"
            ),
            None => println!("idle session process: its memory could not be read"),
        }
        let worst = figures.iter().map(|f| f.added_ms).fold(0.0, f64::max);
        println!("a command adds at most {worst:.1} ms (median per page); goal ≤ 15 ms");
        println!();
        println!("{baseline_heading}: `snapshot -i` + `click @eN` on the same pages (medians, ms)");
        if baseline_ran {
            println!(
                "{:<12} {:>9} {:>9} {:>10} {:>10} {:>7}",
                "page", "snapshot", "click", "its round", "our round", "ratio"
            );
            for f in &figures {
                if let (Some(theirs), Some(ratio)) = (&f.agent_browser, f.vs_agent_browser) {
                    println!(
                        "{:<12} {:>9.1} {:>9.1} {:>10.1} {:>10.1} {:>6.2}×",
                        f.page,
                        theirs.snapshot_wall_ms,
                        theirs.click_wall_ms,
                        theirs.round_ms(),
                        f.delta_wall_ms + f.exec_wall_ms,
                        ratio
                    );
                }
                if let Some(why) = &f.agent_browser_failed {
                    println!("{:<12} failed: {why}", f.page);
                }
            }
            println!("our round is `observe --delta` + `exec 'click N'`; goal ≤ 0.5× theirs on every page");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The session's name, in a runtime folder of the benchmark's own.
const SESSION: &str = "bench-cli";

/// A session the benchmark started, stopped when dropped.
struct BenchSession {
    exe: PathBuf,
    runtime_dir: PathBuf,
}

impl BenchSession {
    fn start(exe: &Path, url: &str) -> anyhow::Result<BenchSession> {
        let runtime_dir =
            std::env::temp_dir().join(format!("webagent-bench-cli-{}", std::process::id()));
        std::fs::create_dir_all(&runtime_dir)?;
        let session = BenchSession {
            exe: exe.to_path_buf(),
            runtime_dir,
        };
        session.ok(&["session", "start", SESSION, url])?;
        Ok(session)
    }

    /// Runs `webagent ARGS` against the benchmark's session and gives its
    /// stdout; a failure is the benchmark's error.
    fn ok(&self, args: &[&str]) -> anyhow::Result<String> {
        let output = Command::new(&self.exe)
            .args(args)
            .env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .output()?;
        anyhow::ensure!(
            output.status.success(),
            "`webagent {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// The session process's resident memory, in MB: all of it, and its
    /// anonymous part (heap, stacks, relocated data), the rest being pages
    /// of files it maps (the binary's code, the libraries), which the
    /// system can drop and read again.
    fn resident_mb(&self) -> Option<(f64, f64)> {
        let meta = std::fs::read_to_string(
            self.runtime_dir
                .join("webagent")
                .join(format!("{SESSION}.json")),
        )
        .ok()?;
        let pid = serde_json::from_str::<serde_json::Value>(&meta).ok()?["pid"].as_u64()?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let mb = |field: &str| -> Option<f64> {
            let kb: f64 = status
                .lines()
                .find_map(|l| l.strip_prefix(field))?
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .ok()?;
            Some(kb / 1024.0)
        };
        Some((mb("VmRSS:")?, mb("RssAnon:")?))
    }
}

impl Drop for BenchSession {
    fn drop(&mut self) {
        if let Err(error) = self.ok(&["session", "stop", SESSION]) {
            eprintln!("warning: {error}");
        }
        let _ = std::fs::remove_dir_all(&self.runtime_dir);
    }
}
