//! `webagent test`: run suites of checks (see [`crate::suite`]) headless,
//! with workers, retries, shards and reports.
//!
//! Exit codes: 0 when every case passed (a flaky case counts as passed
//! unless `--fail-on-flaky`), 1 when one failed or timed out, 2 when a
//! suite, a flag or the configuration is wrong (nothing ran).

use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::mpsc;

use super::exit::{EXIT_HAND_OVER, EXIT_INTERRUPTED, EXIT_USAGE};
use super::flags::{parse_mode, RunFlags, SessionFlags};
use crate::config::BrowserOpts;
use crate::environment::ApprovalMode;
use crate::session::Prepared;
use crate::suite::{
    case_url, compile_checks, load_all, run, CaseReport, CaseRun, CaseStatus, Picked, RunOptions,
    Selection, Shard, Suite, SuiteEvent, SuitePlan, Totals,
};
use crate::vision::VisionMode;

/// Flags of `webagent test`.
#[derive(Debug, clap::Args)]
pub struct TestArgs {
    /// Suite files (YAML) to run.
    #[arg(required = true, value_name = "SUITE")]
    pub suites: Vec<PathBuf>,
    /// The address of the app under test that case paths (`url: /login`)
    /// are taken against (default: the suite's `base_url`).
    #[arg(long, value_name = "URL")]
    pub app_url: Option<String>,
    /// The old spelling of --app-url, still read with a warning: every
    /// other command's --base-url is the model server's.
    #[arg(long, value_name = "URL", hide = true, conflicts_with = "app_url")]
    pub base_url: Option<String>,
    /// Serve the built-in Acme demo on 127.0.0.1 and take case paths
    /// against it (for the demo's own suite). Approves the demo's actions
    /// as --yes does: it is a local fake and commits nothing real.
    #[arg(long, conflicts_with_all = ["app_url", "base_url"])]
    pub demo: bool,
    /// Cases run at once, each in a browser context of its own (default:
    /// half the CPU cores, at least 1).
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Run only part I of N of the cases (for a CI matrix): every machine
    /// given the same suites and filters takes its own cases.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Run only cases whose name contains one of these `|`-separated
    /// words (case ignored).
    #[arg(long, value_name = "PATTERN")]
    pub grep: Option<String>,
    /// Run only cases with this tag (repeatable: any of them).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Retry every failed case up to N times (a case's own `retries` may
    /// be higher).
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
    /// Count a flaky case (passed on a retry) as failed for the exit code.
    #[arg(long)]
    pub fail_on_flaky: bool,
    /// Write JUnit XML here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write a static HTML report (index.html and its pictures) into DIR.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Where each attempt's trace and pictures go (default:
    /// .webagent/test-results/<time of the run>).
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Run task cases through the task cache: a task done before replays
    /// its stored recipe with no model call, healing a step that no longer
    /// runs. `--cache` alone uses .webagent/cache (default: config
    /// `agent.cache`, off).
    #[arg(long, value_name = "DIR", num_args = 0..=1, require_equals = true,
          default_missing_value = crate::session::cache::DEFAULT_CACHE_DIR)]
    pub cache: Option<PathBuf>,
    /// Print the run's events as JSON lines (NDJSON) on stdout.
    #[arg(long)]
    pub json: bool,
    /// Approve every action that would need approval (headless, asking
    /// means refusing otherwise).
    #[arg(long)]
    pub yes: bool,
    /// When to ask before an action: never, risky or always (default:
    /// config `agent.approve`); headless, asking means refusing unless
    /// --yes.
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub approve: Option<ApprovalMode>,
    /// The step limit of an agent case (default: config `agent.max_steps`).
    #[arg(long, value_name = "N")]
    pub max_steps: Option<usize>,
    /// Read this config file instead of ./webagent.yaml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The model for task cases (default: WEBAGENT_MODEL, then config).
    #[arg(long)]
    pub model: Option<String>,
    /// The model server's API root (default: OPENAI_BASE_URL, then
    /// config `llm.base_url`); --app-url is the app's address.
    #[arg(long, value_name = "URL")]
    pub llm_base_url: Option<String>,
    /// Send the model a screenshot with each step (always, auto, never).
    #[arg(long, value_name = "MODE", num_args = 0..=1, default_missing_value = "always",
          require_equals = true, value_parser = parse_vision)]
    pub vision: Option<VisionMode>,
    /// A secret from the environment variable NAME (repeatable).
    #[arg(long, value_name = "NAME")]
    pub secret: Vec<String>,
    /// More Rhai files or directories whose custom actions the cases use.
    #[arg(long, value_name = "PATH")]
    pub recipes: Vec<PathBuf>,
    /// The browser: --connect a pool, --chrome, --allow-domain, …
    #[command(flatten)]
    pub browser: BrowserOpts,
}

fn parse_vision(text: &str) -> Result<VisionMode, String> {
    text.parse()
}

/// Runs `webagent test`.
pub fn run_command(args: TestArgs) -> anyhow::Result<ExitCode> {
    let usage = |message: String| {
        eprintln!("error: {message}");
        Ok(ExitCode::from(EXIT_USAGE))
    };
    if args.workers == Some(0) {
        return usage("--workers must be at least 1".into());
    }
    if args.base_url.is_some() {
        eprintln!(
            "warning: `webagent test --base-url` is now --app-url (the app under test); \
             --llm-base-url names the model server"
        );
    }
    let app_url = args.app_url.clone().or(args.base_url.clone());
    // Everything the files say is checked before any browser starts.
    let suites = match load_all(&args.suites) {
        Ok(suites) => suites,
        Err(error) => return usage(error.to_string()),
    };
    let selection = Selection {
        grep: args.grep.clone(),
        tags: args.tags.clone(),
        shard: args.shard,
    };
    let picked = selection.pick(&suites);
    let unsharded = Selection {
        shard: None,
        ..selection.clone()
    }
    .pick(&suites);
    if unsharded.is_empty() {
        return usage("no case matches --grep / --tag in these suites".into());
    }
    let flags = session_flags(&args);
    let run_flags = RunFlags {
        approve: args.approve,
        max_steps: args.max_steps,
    };
    let loaded = match super::flags::load(args.config.as_deref(), &flags.overrides(run_flags)) {
        Ok(loaded) => loaded,
        Err(code) => return Ok(code),
    };
    let mut plans = Vec::new();
    for suite in &suites {
        match plan(suite, &loaded, &args) {
            Ok(plan) => plans.push(plan),
            Err(message) => return usage(message),
        }
    }
    let runtime = super::runtime()?;
    runtime.block_on(async move {
        // The demo is served for the length of the run.
        let demo = if args.demo {
            match crate::demo::DemoSite::start().await {
                Ok(site) => Some(site),
                Err(error) => return usage(format!("starting the demo site: {error}")),
            }
        } else {
            None
        };
        let base_url = demo.as_ref().map(|d| d.url("/")).or(app_url);
        if let Err(message) = check_urls(&plans, &picked, base_url.as_deref()) {
            return usage(message);
        }
        let launch = loaded.config.launch_options();
        let workers = args.workers.unwrap_or_else(default_workers);
        let output = args.output.clone().unwrap_or_else(|| {
            PathBuf::from(".webagent/test-results").join(crate::clock::utc_stamp(SystemTime::now()))
        });
        // Ctrl-C (or SIGTERM) stops the run gracefully: the cases in
        // flight stop, and what finished is summed up and written with
        // the rest marked not run. A second one quits at once.
        let mut interrupt = match crate::interrupt::Interrupt::listen() {
            Ok(interrupt) => interrupt,
            Err(error) => return usage(format!("listening for Ctrl-C and SIGTERM: {error}")),
        };
        let (stop_handle, stop) = crate::llm::stop_pair();
        let ctrl_c = tokio::spawn(async move {
            interrupt.next().await;
            stop_handle.stop();
            eprintln!(
                "\nstopping: the cases in flight stop and the reports are written; \
                 press Ctrl-C again to quit at once"
            );
            interrupt.next().await;
            std::process::exit(EXIT_INTERRUPTED.into());
        });
        let options = RunOptions {
            base_url,
            workers,
            retries: args.retries,
            // The demo is a local fake: its own suite's sign-ins and
            // orders commit nothing real, so --demo approves them.
            yes: args.yes || args.demo,
            output,
            cache: args
                .cache
                .clone()
                .or_else(|| loaded.config.agent.cache.clone()),
            launch,
            stop: stop.clone(),
        };
        let code = run_suites(&args, Arc::new(plans), picked, options).await;
        ctrl_c.abort();
        drop(demo);
        if stop.is_stopped() {
            return Ok(ExitCode::from(EXIT_INTERRUPTED));
        }
        code
    })
}

/// The session flags of a test run (config, model, scripts, browser), as
/// the other commands take them.
fn session_flags(args: &TestArgs) -> SessionFlags {
    SessionFlags {
        config: args.config.clone(),
        model: args.model.clone(),
        base_url: args.llm_base_url.clone(),
        recipes: args.recipes.clone(),
        secret: args.secret.clone(),
        vision: args.vision,
        browser: args.browser.clone(),
        ..SessionFlags::default()
    }
}

/// Half the cores, at least one: a case drives a renderer and, with
/// tasks, waits on a model, so this keeps a machine responsive.
fn default_workers() -> usize {
    std::thread::available_parallelism()
        .map(|n| (n.get() / 2).max(1))
        .unwrap_or(1)
}

/// A suite's session settings: the config with the suite's secrets and
/// sitemaps added, and its scripts (the configured ones, the suite's
/// `recipes:`, every recipe file a case runs), all checked now.
fn plan(
    suite: &Suite,
    loaded: &super::flags::Loaded,
    args: &TestArgs,
) -> Result<SuitePlan, String> {
    let at = |message: String| format!("{}: {message}", suite.path.display());
    let mut config = loaded.config.clone();
    config.secrets.extend(
        suite
            .secrets
            .iter()
            .map(|(name, source)| (name.clone(), source.clone().into())),
    );
    if suite.secrets_file.is_some() {
        config.secrets_file = suite.secrets_file.clone();
    }
    config.paths.sitemaps.extend(suite.sitemaps.iter().cloned());
    let mut scripts = Prepared::script_paths(&config, &args.recipes);
    for path in suite.recipes.iter().chain(suite.recipe_files().iter()) {
        if !covered(&scripts, path) {
            scripts.push(path.clone());
        }
    }
    let needs_model = suite
        .cases
        .iter()
        .find(|c| matches!(c.run, CaseRun::Task(_)));
    let prepared = Prepared::new(config, &loaded.env, &scripts, &args.secret)
        .map_err(|e| at(e.to_string()))?;
    // With the task cache a task done before needs no model (a miss then
    // fails its case saying so); without it every task needs one.
    if let (Some(case), false) = (
        needs_model,
        args.cache.is_some() || loaded.config.agent.cache.is_some(),
    ) {
        if let Err(error) = prepared.model() {
            return Err(at(format!("the case `{}` is a task: {error}", case.name)));
        }
    }
    let checks = compile_checks(suite.cases.iter().map(|c| c.expect.as_slice()))
        .map_err(|e| at(e.to_string()))?;
    Ok(SuitePlan {
        suite: suite.clone(),
        prepared,
        checks,
    })
}

/// Whether `path` is one of `paths` or inside one of them.
fn covered(paths: &[PathBuf], path: &Path) -> bool {
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let file = canonical(path);
    paths.iter().any(|p| {
        let p = canonical(p);
        file == p || file.starts_with(&p)
    })
}

/// Every picked case's start page must be reachable: a path needs a base
/// URL.
fn check_urls(plans: &[SuitePlan], picked: &[Picked], base: Option<&str>) -> Result<(), String> {
    for p in picked {
        let plan = &plans[p.suite];
        let case = &plan.suite.cases[p.case];
        case_url(&case.url, base.or(plan.suite.base_url.as_deref()))
            .map_err(|e| format!("{}: case `{}`: {e}", plan.suite.path.display(), case.name))?;
    }
    Ok(())
}

async fn run_suites(
    args: &TestArgs,
    plans: Arc<Vec<SuitePlan>>,
    picked: Vec<Picked>,
    options: RunOptions,
) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let (events, events_rx) = mpsc::unbounded_channel::<SuiteEvent>();
    let total = picked.len();
    let _ = events.send(SuiteEvent::SuiteStarted {
        total,
        workers: options.workers.min(total.max(1)),
        shard: args.shard.map(|s| s.to_string()),
    });
    let output = options.output.clone();
    let printer = tokio::spawn(show_progress(events_rx, total, args.json, started));
    let reports = if total == 0 {
        Ok(Vec::new())
    } else {
        run(plans, picked, options, events.clone()).await
    };
    let reports = match reports {
        Ok(reports) => reports,
        Err(error) => {
            let _ = events.send(SuiteEvent::Error {
                message: error.to_string(),
            });
            drop(events);
            let _ = printer.await;
            eprintln!("error: {error}");
            return Ok(ExitCode::FAILURE);
        }
    };
    let totals = Totals::of(&reports);
    let _ = events.send(SuiteEvent::SuiteFinished {
        totals,
        duration_ms: started.elapsed().as_millis() as u64,
    });
    drop(events);
    let _ = printer.await;
    if let Some(file) = &args.junit {
        if let Err(error) = crate::suite::write_junit(file, &reports) {
            eprintln!("error: {error}");
        }
    }
    if let Some(dir) = &args.report {
        match crate::suite::write_html(dir, &reports, started.elapsed()) {
            Ok(page) => eprintln!("report: {}", page.display()),
            Err(error) => eprintln!("error: {error}"),
        }
    }
    if total == 0 {
        eprintln!(
            "no case falls to shard {}",
            args.shard.map(|s| s.to_string()).unwrap_or_default()
        );
    } else if !args.json {
        eprintln!("traces and pictures: {}", output.display());
    }
    // A case that needs a person is not a failure: with no failure
    // besides, the suite exits with the hand-over's own code.
    let unpassed: Vec<CaseStatus> = reports
        .iter()
        .map(|r| r.status)
        .filter(|s| !s.passed(args.fail_on_flaky))
        .collect();
    Ok(if unpassed.is_empty() {
        ExitCode::SUCCESS
    } else if unpassed.iter().all(|s| *s == CaseStatus::NeedsPerson) {
        ExitCode::from(EXIT_HAND_OVER)
    } else {
        ExitCode::FAILURE
    })
}

/// Shows the run as it goes: one line per finished case, and on a
/// terminal a live line (done/total, passed, failed, flaky, elapsed, time
/// left) kept under them; with `json`, every event as a JSON line on
/// stdout instead of the case lines.
async fn show_progress(
    mut events: mpsc::UnboundedReceiver<SuiteEvent>,
    total: usize,
    json: bool,
    started: Instant,
) {
    let live = std::io::stderr().is_terminal();
    let mut done: Vec<CaseStatus> = Vec::new();
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = tick.tick() => {
                if live && done.len() < total {
                    draw_live(&done, total, started);
                }
                continue;
            }
        };
        let Some(event) = event else { break };
        if json {
            if let Ok(line) = serde_json::to_string(&event) {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
        }
        if let SuiteEvent::CaseFinished(report) = &event {
            done.push(report.status);
            if !json {
                if live {
                    eprint!("\r\x1b[2K");
                }
                eprintln!("{}", case_line(report, done.len(), total));
            }
        }
        if let (SuiteEvent::Error { message }, false) = (&event, json) {
            if live {
                eprint!("\r\x1b[2K");
            }
            eprintln!("warning: {message}");
        }
        if let SuiteEvent::AttemptFailed {
            name,
            attempt,
            failure,
        } = &event
        {
            if !json {
                if live {
                    eprint!("\r\x1b[2K");
                }
                eprintln!(
                    "       retrying {name:?}: attempt {attempt} failed {}: {}",
                    failure.check, failure.message
                );
            }
        }
        if live && !json {
            draw_live(&done, total, started);
        }
    }
    if live && !json {
        eprint!("\r\x1b[2K");
    }
    if !json {
        eprintln!("{}", progress_text(&done, total, started));
    }
}

fn draw_live(done: &[CaseStatus], total: usize, started: Instant) {
    eprint!("\r\x1b[2K{}", progress_text(done, total, started));
    let _ = std::io::stderr().flush();
}

/// `12/40 done · 10 passed · 1 failed · 1 flaky · 1m02s · ~2m05s left`.
fn progress_text(done: &[CaseStatus], total: usize, started: Instant) -> String {
    let count = |wanted: &[CaseStatus]| done.iter().filter(|s| wanted.contains(s)).count();
    let elapsed = started.elapsed();
    let left = if done.is_empty() || done.len() >= total {
        String::new()
    } else {
        let per_case = elapsed.as_secs_f64() / done.len() as f64;
        format!(
            " · ~{} left",
            clock(Duration::from_secs_f64(
                per_case * (total - done.len()) as f64
            ))
        )
    };
    let not_run = count(&[CaseStatus::NotRun]);
    format!(
        "{}/{total} done · {} passed · {} failed · {} flaky{}{} · {}{left}",
        done.len() - not_run,
        count(&[CaseStatus::Passed]),
        count(&[CaseStatus::Failed, CaseStatus::TimedOut]),
        count(&[CaseStatus::Flaky]),
        match count(&[CaseStatus::NeedsPerson]) {
            0 => String::new(),
            n => format!(" · {n} need a person"),
        },
        match not_run {
            0 => String::new(),
            n => format!(" · {n} not run (stopped)"),
        },
        clock(elapsed)
    )
}

fn clock(duration: Duration) -> String {
    let seconds = duration.as_secs();
    if seconds >= 60 {
        format!("{}m{:02}s", seconds / 60, seconds % 60)
    } else {
        format!("{:.1}s", duration.as_secs_f64())
    }
}

/// One finished case: `[3/16] PASS  signs in (1.2 s)`, with the failing
/// check when it failed.
fn case_line(report: &CaseReport, n: usize, total: usize) -> String {
    let label = match report.status {
        CaseStatus::Passed => "PASS   ",
        CaseStatus::Flaky => "FLAKY  ",
        CaseStatus::Failed => "FAIL   ",
        CaseStatus::TimedOut => "TIMEOUT",
        CaseStatus::NeedsPerson => "PERSON ",
        CaseStatus::NotRun => "NOT RUN",
    };
    let width = total.to_string().len();
    let mut line = format!(
        "[{n:>width$}/{total}] {label} {} ({:.1} s",
        report.name,
        report.duration().as_secs_f64()
    );
    let tokens = report.tokens().total_tokens;
    if tokens > 0 {
        line.push_str(&format!(", {tokens} tokens"));
    }
    if let Some(cache) = report.attempts.last().and_then(|a| a.cache) {
        line.push_str(&format!(", cache {}", cache.as_str()));
    }
    let healed: usize = report.attempts.iter().map(|a| a.healed).sum();
    if healed > 0 {
        line.push_str(&format!(", {healed} step(s) healed"));
    }
    if report.attempts.len() > 1 {
        line.push_str(&format!(", {} attempts", report.attempts.len()));
    }
    line.push(')');
    if let Some(last) = report.attempts.last().filter(|a| a.failure.is_some()) {
        for failure in last.failures() {
            line.push_str(&format!(
                "\n          {}: {}",
                failure.check, failure.message
            ));
        }
        if let Some(trace) = &last.trace {
            line.push_str(&format!("\n          trace: {}", trace.display()));
        }
    }
    line
}
