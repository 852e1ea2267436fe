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
    /// How busy the machine's processors were while the suite ran, as a
    /// share of all of them (every process counts: the browser does most
    /// of a case's work). Near 1 at one worker means more workers cannot
    /// go faster on this machine.
    pub cpu_busy: f64,
    /// Processor seconds the machine spent per case.
    pub cpu_seconds_per_case: f64,
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
            stop: crate::llm::StopSignal::never(),
        };
        let (events, _ignored) = mpsc::unbounded_channel();
        let sampler = PeakMemory::start();
        let cpu_before = CpuTicks::now();
        let started = Instant::now();
        let reports = run(Arc::clone(&plans), picked, options, events).await?;
        let seconds = started.elapsed().as_secs_f64();
        let cpu = CpuTicks::now().since(cpu_before);
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
            cpu_busy: cpu.busy_share(),
            cpu_seconds_per_case: cpu.busy_seconds() / reports.len().max(1) as f64,
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
        "{:>7}  {:>5}  {:>6}  {:>8}  {:>9}  {:>8}  {:>9}  {:>16}  {:>8}  {:>10}",
        "workers",
        "cases",
        "passed",
        "seconds",
        "cases/min",
        "speed-up",
        "peak MiB",
        "MiB/extra worker",
        "CPU busy",
        "CPU s/case"
    );
    for row in rows {
        println!(
            "{:>7}  {:>5}  {:>6}  {:>8.1}  {:>9.1}  {:>7.2}×  {:>9.0}  {:>16}  {:>7.0}%  {:>10.2}",
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
            },
            row.cpu_busy * 100.0,
            row.cpu_seconds_per_case
        );
    }
    println!("baseline: the 1-worker row of the same run; memory: this process and its Chromium processes, proportional set size (shared pages counted once)");
    println!(
        "CPU: the whole machine's processors ({} here) while the row ran; workers can add speed only while they are not all busy",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
}

/// The machine's processor time so far, from `/proc/stat` (all zero where
/// it cannot be read, and the CPU columns then read 0).
#[derive(Debug, Clone, Copy, Default)]
struct CpuTicks {
    busy: u64,
    total: u64,
}

/// Kernel clock ticks per second (`USER_HZ`, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

impl CpuTicks {
    fn now() -> CpuTicks {
        std::fs::read_to_string("/proc/stat")
            .map(|stat| CpuTicks::from_stat(&stat))
            .unwrap_or_default()
    }

    /// Reads the summary line of a `/proc/stat` text.
    fn from_stat(stat: &str) -> CpuTicks {
        let Some(line) = stat.lines().find(|l| l.starts_with("cpu ")) else {
            return CpuTicks::default();
        };
        // user nice system idle iowait irq softirq steal ...
        let fields: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .take(8)
            .filter_map(|f| f.parse().ok())
            .collect();
        let total: u64 = fields.iter().sum();
        let waiting = fields.get(3).copied().unwrap_or(0) + fields.get(4).copied().unwrap_or(0);
        CpuTicks {
            busy: total.saturating_sub(waiting),
            total,
        }
    }

    fn since(self, earlier: CpuTicks) -> CpuTicks {
        CpuTicks {
            busy: self.busy.saturating_sub(earlier.busy),
            total: self.total.saturating_sub(earlier.total),
        }
    }

    fn busy_share(self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.busy as f64 / self.total as f64
        }
    }

    fn busy_seconds(self) -> f64 {
        self.busy as f64 / TICKS_PER_SECOND
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processor_time_counts_everything_but_idle_and_io_wait_as_busy() {
        let before =
            CpuTicks::from_stat("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\n");
        let after = CpuTicks::from_stat("cpu  250 0 100 850 50 0 0 0 0 0\n");
        let row = after.since(before);
        assert_eq!(row.busy, 200);
        assert_eq!(row.total, 250);
        assert!((row.busy_share() - 0.8).abs() < 1e-9);
        assert!((row.busy_seconds() - 2.0).abs() < 1e-9);
        let unreadable = CpuTicks::from_stat("no such line");
        assert_eq!(unreadable.since(unreadable).busy_share(), 0.0);
    }
}
