//! `webagent bench suite`: the same 16 recipe cases on the demo run at 1,
//! 2 and 4 workers in one process, each worker count with a Chromium of its
//! own. It prints cases per minute, the speed-up against one worker (the
//! baseline of the same run) and the peak resident memory of the process
//! and its browser together, so the cost of an extra worker shows.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::mpsc;

use crate::browser::LaunchOptions;
use crate::config::Config;
use crate::demo::DemoSite;
use crate::session::Prepared;
use crate::suite::{compile_checks, run, RunOptions, Selection, Suite, SuitePlan, Totals};

/// The demo's recipes, the cases run them.
const ACME_RECIPES: &str = include_str!("../../recipes/acme.rhai");

/// The recipes the cases take turns with: each signs in, then reads or
/// changes the demo's data, as a regression suite would.
const RECIPES: [&str; 5] = [
    "signed_in",
    "orders_overview",
    "shipped_orders",
    "new_order",
    "new_order_refunded",
];

/// One worker count's figures.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Cases at once.
    pub workers: usize,
    /// Cases run.
    pub cases: usize,
    /// Cases that passed.
    pub passed: usize,
    /// Wall time of the whole suite, in seconds.
    pub seconds: f64,
    /// Cases per minute.
    pub per_minute: f64,
    /// Cases per minute against one worker's.
    pub speedup: f64,
    /// The highest memory of this process and its browser together while
    /// the suite ran (proportional set size), in MiB.
    pub peak_mib: f64,
    /// The peak above one worker's, per extra worker, in MiB.
    pub mib_per_extra_worker: f64,
}

/// Runs `cases` recipe cases on the demo at each of `workers`.
pub async fn measure(
    launch: LaunchOptions,
    cases: usize,
    workers: &[usize],
) -> anyhow::Result<Vec<Row>> {
    let site = DemoSite::start().await?;
    let scratch = std::env::temp_dir().join(format!("webagent-bench-suite-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    std::fs::write(scratch.join("acme.rhai"), ACME_RECIPES)?;
    let mut text = String::from("defaults: {timeout: 120}\ncases:\n");
    for n in 0..cases {
        let recipe = RECIPES[n % RECIPES.len()];
        text.push_str(&format!(
            "  - {{name: case {n} {recipe}, url: /login, recipe: {{file: acme.rhai, name: {recipe}}}}}\n"
        ));
    }
    let suite = Suite::parse(&scratch.join("bench.suite.yaml"), &text)?;
    let mut config = Config::builtin();
    config.paths.sitemaps.clear();
    let prepared = Prepared::new(
        config,
        &Default::default(),
        &[scratch.join("acme.rhai")],
        &[],
    )?;
    let checks = compile_checks(suite.cases.iter().map(|c| c.expect.as_slice()))?;
    let plans = Arc::new(vec![SuitePlan {
        suite: suite.clone(),
        prepared,
        checks,
    }]);
    let mut rows: Vec<Row> = Vec::new();
    for &count in workers {
        let picked = Selection::default().pick(std::slice::from_ref(&suite));
        let options = RunOptions {
            base_url: Some(site.url("/")),
            workers: count,
            retries: None,
            yes: true,
            output: scratch.join(format!("results-{count}")),
            cache: None,
            launch: launch.clone(),
        };
        let (events, _ignored) = mpsc::unbounded_channel();
        let sampler = PeakMemory::start();
        let started = Instant::now();
        let reports = run(Arc::clone(&plans), picked, options, events).await?;
        let seconds = started.elapsed().as_secs_f64();
        let peak_mib = sampler.stop();
        let totals = Totals::of(&reports);
        let per_minute = reports.len() as f64 / seconds * 60.0;
        let (base_rate, base_peak, base_workers) =
            rows.first().map_or((per_minute, peak_mib, count), |r| {
                (r.per_minute, r.peak_mib, r.workers)
            });
        let extra = count.saturating_sub(base_workers);
        rows.push(Row {
            workers: count,
            cases: reports.len(),
            passed: totals.passed + totals.flaky,
            seconds,
            per_minute,
            speedup: per_minute / base_rate,
            peak_mib,
            mib_per_extra_worker: if extra == 0 {
                0.0
            } else {
                (peak_mib - base_peak) / extra as f64
            },
        });
    }
    let _ = std::fs::remove_dir_all(&scratch);
    drop(site);
    Ok(rows)
}

/// Prints the rows as a table, or as JSON lines.
pub fn print(rows: &[Row], json: bool) {
    if json {
        for row in rows {
            if let Ok(line) = serde_json::to_string(row) {
                println!("{line}");
            }
        }
        return;
    }
    println!(
        "{:>7}  {:>5}  {:>6}  {:>8}  {:>9}  {:>8}  {:>9}  {:>15}",
        "workers",
        "cases",
        "passed",
        "seconds",
        "cases/min",
        "speed-up",
        "peak MiB",
        "MiB/extra worker"
    );
    for row in rows {
        println!(
            "{:>7}  {:>5}  {:>6}  {:>8.1}  {:>9.1}  {:>7.2}×  {:>9.0}  {:>15}",
            row.workers,
            row.cases,
            row.passed,
            row.seconds,
            row.per_minute,
            row.speedup,
            row.peak_mib,
            if row.mib_per_extra_worker == 0.0 {
                "—".to_string()
            } else {
                format!("{:.0}", row.mib_per_extra_worker)
            }
        );
    }
    println!("baseline: the 1-worker row of the same run; memory: this process and its Chromium processes, proportional set size (shared pages counted once)");
}

/// Samples the resident memory of this process and everything it started,
/// keeping the highest sum.
struct PeakMemory {
    running: Arc<AtomicBool>,
    sampler: std::thread::JoinHandle<u64>,
}

impl PeakMemory {
    fn start() -> PeakMemory {
        let running = Arc::new(AtomicBool::new(true));
        let flag = Arc::clone(&running);
        let sampler = std::thread::spawn(move || {
            let mut peak = 0;
            while flag.load(Ordering::Relaxed) {
                peak = peak.max(tree_rss_kib(std::process::id()));
                std::thread::sleep(Duration::from_millis(50));
            }
            peak
        });
        PeakMemory { running, sampler }
    }

    /// The peak in MiB.
    fn stop(self) -> f64 {
        self.running.store(false, Ordering::Relaxed);
        self.sampler.join().unwrap_or(0) as f64 / 1024.0
    }
}

/// The memory of `root` and its descendants, in KiB: their proportional
/// set sizes (resident sizes where the kernel gives none; 0 where `/proc`
/// cannot be read).
fn tree_rss_kib(root: u32) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut parents: Vec<(u32, u32, u64)> = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let dir: PathBuf = entry.path();
        let Ok(stat) = std::fs::read_to_string(dir.join("stat")) else {
            continue;
        };
        // The parent is the second field after the command's closing
        // parenthesis (the command itself may hold spaces).
        let Some(ppid) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let field = |file: &str, name: &str| {
            std::fs::read_to_string(dir.join(file))
                .ok()
                .and_then(|text| {
                    text.lines()
                        .find(|l| l.starts_with(name))
                        .and_then(|l| l.split_whitespace().nth(1))
                        .and_then(|kib| kib.parse::<u64>().ok())
                })
        };
        // Chromium's processes share most of their pages; the
        // proportional share counts each shared page once over all of
        // them, where a sum of resident sizes would count it per process.
        let rss = field("smaps_rollup", "Pss:")
            .or_else(|| field("status", "VmRSS:"))
            .unwrap_or(0);
        parents.push((pid, ppid, rss));
    }
    let mut inside = vec![root];
    let mut total = 0;
    let mut grew = true;
    while grew {
        grew = false;
        for (pid, ppid, _) in &parents {
            if inside.contains(ppid) && !inside.contains(pid) {
                inside.push(*pid);
                grew = true;
            }
        }
    }
    for (pid, _, rss) in &parents {
        if inside.contains(pid) {
            total += rss;
        }
    }
    total
}
