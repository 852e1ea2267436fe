//! Running the picked cases: workers, a fresh browser context per attempt,
//! time limits, retries, and what each attempt leaves behind.
//!
//! One Chromium is launched for the whole run and every attempt gets a
//! browser context of its own in it (`Target.createBrowserContext`), so
//! cases running side by side share no cookies, storage or cache. With
//! `--connect`, each worker attaches on its own: a pool behind the address
//! (browserless, a grid) then gives each worker a browser of its own, and
//! the contexts keep the cases of one worker apart.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::{mpsc, Mutex};

use super::expect::check_all;
use super::file::{CaseRun, Suite};
use super::outcome::Totals;
pub use super::outcome::{Attempt, CaseReport, CaseStatus, Failure, HAND_OVER_CHECK};
use super::plan::Picked;
use crate::agent::Prior;
use crate::browser::{BrowserError, BrowserSession, LaunchOptions, SessionStatus};
use crate::environment::Environment;
use crate::events::{CacheState, EndReason, Event, TokenUsage, TraceWriter};
use crate::llm::{stop_pair, StopSignal};
use crate::script::{CancelFlag, Scripts};
use crate::session::{Bare, Oversight, Prepared, RecipeChoice, ReplayOptions, Session, TaskCache};
use crate::vision::{ShotRegion, ShotRequest};

/// How long a run stopped at its time limit may take to wind down (its
/// step in flight ends, its trace gets `done`) before it is dropped.
const WIND_DOWN: Duration = Duration::from_secs(10);

/// A suite ready to run: its cases, and the session settings checked for
/// them (model, secrets, sitemaps, scripts with every recipe file loaded).
#[derive(Debug, Clone)]
pub struct SuitePlan {
    /// The suite.
    pub suite: Suite,
    /// Its session settings; each attempt starts a session from a copy.
    pub prepared: Prepared,
    /// The suite's `rhai:` checks, compiled as recipes.
    pub checks: Scripts,
}

/// How the run goes.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The origin case paths are taken against (else the suite's own).
    pub base_url: Option<String>,
    /// Cases running at once.
    pub workers: usize,
    /// Retries for every case, when more than the case's own.
    pub retries: Option<u32>,
    /// Approve whatever would need approval (headless: refused otherwise).
    pub yes: bool,
    /// Where each attempt's trace and pictures go.
    pub output: PathBuf,
    /// Run task cases through the task cache in this folder (`--cache`).
    pub cache: Option<PathBuf>,
    /// How to get the browser.
    pub launch: LaunchOptions,
    /// Fires when the person stops the run (Ctrl-C, SIGTERM): the cases
    /// in flight stop, no new one starts, and every case that did not
    /// finish is reported as not run.
    pub stop: StopSignal,
}

/// What the run reports as it goes, for the progress line, `--json` and
/// the reports.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SuiteEvent {
    /// The run begins.
    SuiteStarted {
        /// Cases picked to run.
        total: usize,
        /// Cases at once.
        workers: usize,
        /// This machine's part, when sharded (`2/4`).
        #[serde(skip_serializing_if = "Option::is_none")]
        shard: Option<String>,
    },
    /// An attempt begins.
    CaseStarted {
        /// The case.
        name: String,
        /// Which attempt, from 1.
        attempt: u32,
    },
    /// An attempt failed and the case will be tried again.
    AttemptFailed {
        /// The case.
        name: String,
        /// Which attempt failed.
        attempt: u32,
        /// Why.
        failure: Failure,
    },
    /// A case is over.
    CaseFinished(CaseReport),
    /// Every picked case is over.
    SuiteFinished {
        /// The counts.
        totals: Totals,
        /// How long the run took.
        duration_ms: u64,
    },
    /// The run could not go on (the browser could not be had).
    Error {
        /// What went wrong.
        message: String,
    },
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// No browser could be had for any case.
    #[error("starting the browser: {0}")]
    Browser(#[from] BrowserError),
}

/// Where a worker's sessions run: the local browser everyone shares, or a
/// connection of the worker's own.
struct Browsers {
    launch: LaunchOptions,
    shared: Option<Mutex<Arc<BrowserSession>>>,
}

impl Browsers {
    /// A local browser is launched now, so a browser that cannot start
    /// ends the run before any case; attached ones come per worker.
    async fn start(launch: LaunchOptions) -> Result<Browsers, BrowserError> {
        let shared = match launch.connect {
            Some(_) => None,
            None => Some(Mutex::new(Arc::new(
                BrowserSession::start(launch.clone()).await?,
            ))),
        };
        Ok(Browsers { launch, shared })
    }

    /// The browser for the next attempt of a worker whose own connection
    /// is `own`: the shared one (launched again if it died), or the
    /// worker's (attached again if it went away).
    async fn get(
        &self,
        own: &mut Option<Arc<BrowserSession>>,
    ) -> Result<Arc<BrowserSession>, BrowserError> {
        let alive = |b: &Arc<BrowserSession>| b.status() == SessionStatus::Running;
        match &self.shared {
            Some(shared) => {
                let mut browser = shared.lock().await;
                if !alive(&browser) {
                    *browser = Arc::new(BrowserSession::start(self.launch.clone()).await?);
                }
                Ok(Arc::clone(&browser))
            }
            None => {
                if let Some(browser) = own.as_ref().filter(|b| alive(b)) {
                    return Ok(Arc::clone(browser));
                }
                let browser = Arc::new(BrowserSession::start(self.launch.clone()).await?);
                *own = Some(Arc::clone(&browser));
                Ok(browser)
            }
        }
    }
}

/// Runs `picked` cases of `plans`, `options.workers` at a time, and
/// returns every case's report in the order they were picked. Events go
/// to `events` as the run goes.
pub async fn run(
    plans: Arc<Vec<SuitePlan>>,
    picked: Vec<Picked>,
    options: RunOptions,
    events: mpsc::UnboundedSender<SuiteEvent>,
) -> Result<Vec<CaseReport>, RunError> {
    let browsers = Arc::new(Browsers::start(options.launch.clone()).await?);
    let order: Vec<Picked> = picked.clone();
    let queue = Arc::new(std::sync::Mutex::new(
        picked.into_iter().collect::<VecDeque<_>>(),
    ));
    let options = Arc::new(options);
    let mut workers = Vec::new();
    for _ in 0..options.workers.max(1) {
        let queue = Arc::clone(&queue);
        let plans = Arc::clone(&plans);
        let options = Arc::clone(&options);
        let browsers = Arc::clone(&browsers);
        let events = events.clone();
        workers.push(tokio::spawn(async move {
            let mut own = None;
            let mut done = Vec::new();
            let mut refused = None;
            loop {
                if pending(&queue) == 0 || options.stop.is_stopped() {
                    break;
                }
                // A browser first, then a case: a pool that queues this
                // worker keeps it waiting here, not holding a case that
                // another worker could run meanwhile.
                if let Err(error) = browsers.get(&mut own).await {
                    let _ = events.send(SuiteEvent::Error {
                        message: format!(
                            "a worker got no browser and stops; the others go on: {error}"
                        ),
                    });
                    refused = Some(error.to_string());
                    break;
                }
                let next = match queue.lock() {
                    Ok(mut queue) => queue.pop_front(),
                    Err(poisoned) => poisoned.into_inner().pop_front(),
                };
                let Some(picked) = next else { break };
                let plan = &plans[picked.suite];
                let report = run_case(plan, picked, &options, &browsers, &mut own, &events).await;
                let _ = events.send(SuiteEvent::CaseFinished(report.clone()));
                done.push((picked, report));
            }
            (done, refused)
        }));
    }
    let mut reports = Vec::new();
    let mut refused = None;
    for worker in workers {
        match worker.await {
            Ok((done, why)) => {
                reports.extend(done);
                refused = refused.or(why);
            }
            Err(error) => {
                let _ = events.send(SuiteEvent::Error {
                    message: format!("a worker failed: {error}"),
                });
            }
        }
    }
    // Cases no worker could take (every one was refused a browser) fail
    // with the reason, so none is silently missing from the reports.
    let left: Vec<Picked> = match queue.lock() {
        Ok(mut queue) => queue.drain(..).collect(),
        Err(poisoned) => poisoned.into_inner().drain(..).collect(),
    };
    for picked in left {
        let plan = &plans[picked.suite];
        let case = &plan.suite.cases[picked.case];
        if options.stop.is_stopped() {
            let report = not_run(plan, picked, Vec::new());
            let _ = events.send(SuiteEvent::CaseFinished(report.clone()));
            reports.push((picked, report));
            continue;
        }
        let report = CaseReport {
            suite: plan.suite.path.clone(),
            name: case.name.clone(),
            status: CaseStatus::Failed,
            tags: case.tags.clone(),
            attempts: vec![Attempt::unrun(
                1,
                Failure {
                    check: "browser".into(),
                    message: format!(
                        "no browser could be had: {}",
                        refused.as_deref().unwrap_or("every worker stopped")
                    ),
                },
            )],
        };
        let _ = events.send(SuiteEvent::CaseFinished(report.clone()));
        reports.push((picked, report));
    }
    reports.sort_by_key(|(picked, _)| order.iter().position(|p| p == picked));
    Ok(reports.into_iter().map(|(_, report)| report).collect())
}

/// The report of a case the stop kept from finishing, with the attempts
/// it made before.
fn not_run(plan: &SuitePlan, picked: Picked, attempts: Vec<Attempt>) -> CaseReport {
    let case = &plan.suite.cases[picked.case];
    CaseReport {
        suite: plan.suite.path.clone(),
        name: case.name.clone(),
        status: CaseStatus::NotRun,
        tags: case.tags.clone(),
        attempts,
    }
}

/// How many cases wait in `queue`.
fn pending(queue: &std::sync::Mutex<VecDeque<Picked>>) -> usize {
    match queue.lock() {
        Ok(queue) => queue.len(),
        Err(poisoned) => poisoned.into_inner().len(),
    }
}

/// Every attempt of one case, until one passes or the retries run out.
async fn run_case(
    plan: &SuitePlan,
    picked: Picked,
    options: &RunOptions,
    browsers: &Browsers,
    own: &mut Option<Arc<BrowserSession>>,
    events: &mpsc::UnboundedSender<SuiteEvent>,
) -> CaseReport {
    let case = &plan.suite.cases[picked.case];
    let retries = case.retries.max(options.retries.unwrap_or(0));
    // The suite's and the case's positions keep two cases whose names
    // read alike apart.
    let folder = options.output.join(format!(
        "{}-{}-{}",
        picked.suite + 1,
        picked.case + 1,
        slug(&case.name)
    ));
    let mut attempts: Vec<Attempt> = Vec::new();
    for number in 1..=retries + 1 {
        let _ = events.send(SuiteEvent::CaseStarted {
            name: case.name.clone(),
            attempt: number,
        });
        let dir = folder.join(format!("attempt-{number}"));
        let attempt = match browsers.get(own).await {
            // Boxed: an attempt holds a whole agent run or recipe, a
            // future too large for a worker thread's stack in a debug
            // build.
            Ok(browser) => {
                Box::pin(attempt(plan, picked.case, options, browser, number, &dir)).await
            }
            Err(error) => Attempt::unrun(
                number,
                Failure {
                    check: "browser".into(),
                    message: format!("no browser for the case: {error}"),
                },
            ),
        };
        if attempt.stopped {
            attempts.push(attempt);
            return not_run(plan, picked, attempts);
        }
        let passed = attempt.failure.is_none();
        if let (false, Some(failure)) = (number > retries, &attempt.failure) {
            let _ = events.send(SuiteEvent::AttemptFailed {
                name: case.name.clone(),
                attempt: number,
                failure: failure.clone(),
            });
        }
        let needs_person = attempt.failure.as_ref().is_some_and(Failure::needs_person);
        attempts.push(attempt);
        if passed || needs_person {
            break;
        }
    }
    let last = attempts.last();
    let status = match last {
        Some(a) if a.failure.is_none() && attempts.len() == 1 => CaseStatus::Passed,
        Some(a) if a.failure.is_none() => CaseStatus::Flaky,
        Some(a) if a.timed_out => CaseStatus::TimedOut,
        Some(a) if a.failure.as_ref().is_some_and(Failure::needs_person) => CaseStatus::NeedsPerson,
        _ => CaseStatus::Failed,
    };
    CaseReport {
        suite: plan.suite.path.clone(),
        name: case.name.clone(),
        status,
        tags: case.tags.clone(),
        attempts,
    }
}

/// What a run said at its end.
struct RunEnd {
    success: bool,
    text: String,
    /// What the task cache did, for a task run through it.
    cache: Option<CacheState>,
    /// Steps a recipe's replay had healed.
    healed: usize,
}

/// One attempt: a session in a fresh browser context, the run under the
/// case's time limit, the checks, the last picture, and the context
/// closed. Everything the attempt did is in its trace in `dir`.
async fn attempt(
    plan: &SuitePlan,
    case_index: usize,
    options: &RunOptions,
    browser: Arc<BrowserSession>,
    number: u32,
    dir: &Path,
) -> Attempt {
    let case = &plan.suite.cases[case_index];
    let started = Instant::now();
    let mut result = Attempt::new(number);
    let fail = |check: &str, message: String| {
        Some(Failure {
            check: check.into(),
            message,
        })
    };
    let trace = match TraceWriter::create(dir) {
        Ok(trace) => trace,
        Err(error) => {
            result.failure = fail("run", format!("no trace could be written: {error}"));
            return result;
        }
    };
    result.trace = Some(trace.path().to_path_buf());
    let url = match case_url(
        &case.url,
        options
            .base_url
            .as_deref()
            .or(plan.suite.base_url.as_deref()),
    ) {
        Ok(url) => url,
        Err(error) => {
            result.failure = fail("run", error.to_string());
            return result;
        }
    };
    let (events, events_rx) = mpsc::unbounded_channel::<Event>();
    let recorder = tokio::spawn(record(events_rx, trace));
    let session = plan
        .prepared
        .clone()
        .start_isolated(browser, Some(&url), events.clone())
        .await;
    let mut session = match session {
        Ok(session) => session,
        Err(error) => {
            drop(events);
            let _ = recorder.await;
            result.failure = fail("browser", format!("the session did not start: {error}"));
            result.duration = started.elapsed();
            return result;
        }
    };
    if let Err(error) = session.opened.clone() {
        session.events.send(Event::Error {
            error: error.to_string(),
            fatal: true,
        });
        result.failure = fail("run", error.to_string());
    } else {
        let (stop, stop_signal) = stop_pair();
        let cancel = CancelFlag::new();
        let origin = url::Url::parse(&url)
            .ok()
            .map(|u| u.origin().ascii_serialization());
        let mut run = Box::pin(run_and_check(
            plan,
            case_index,
            options,
            origin,
            &mut session,
            stop_signal,
            &cancel,
        ));
        let ended = tokio::select! {
            ended = &mut run => Some(ended),
            () = tokio::time::sleep(case.timeout) => None,
            () = options.stop.stopped() => {
                result.stopped = true;
                None
            }
        };
        let ended = match ended {
            Some(ended) => ended,
            None if result.stopped => {
                // The person stopped the whole run: this attempt ends
                // where it is and counts for nothing.
                stop.stop();
                cancel.cancel();
                let _ = tokio::time::timeout(WIND_DOWN, &mut run).await;
                Err(vec![Failure {
                    check: "not run".into(),
                    message: "the run was stopped before this case finished".into(),
                }])
            }
            None => {
                // Stop the run where it is; give it a moment to end its
                // step and write `done`.
                stop.stop();
                cancel.cancel();
                let _ = tokio::time::timeout(WIND_DOWN, &mut run).await;
                result.timed_out = true;
                Err(vec![Failure {
                    check: "timeout".into(),
                    message: format!(
                        "the case ran out of its {:.0} s",
                        case.timeout.as_secs_f64()
                    ),
                }])
            }
        };
        match ended {
            Ok(end) => {
                result.outcome = end.text;
                result.cache = end.cache;
                result.healed = end.healed;
            }
            Err(failures) => {
                let mut failures = failures.into_iter();
                result.failure = failures.next();
                result.other_failures = failures.collect();
            }
        }
        if result.timed_out {
            // The run's own last words are its cancellation, not news.
            result.outcome = "stopped at the case's time limit".into();
        }
        if result.stopped {
            result.outcome = "stopped with the run".into();
        }
    }
    result.screenshot = last_picture(&mut session, dir).await;
    let events_sink = session.events.clone();
    session.close().await;
    drop(events_sink);
    drop(events);
    if let Ok(recorded) = recorder.await {
        result.tokens = recorded.tokens;
        result.model_calls = recorded.model_calls;
        if result.outcome.is_empty() {
            result.outcome = recorded.done_text;
        }
    }
    result.duration = started.elapsed();
    result
}

/// The case's run, then its checks: `Ok` with how the run ended when every
/// check passed.
async fn run_and_check(
    plan: &SuitePlan,
    case_index: usize,
    options: &RunOptions,
    origin: Option<String>,
    session: &mut Session,
    stop: crate::llm::StopSignal,
    cancel: &CancelFlag,
) -> Result<RunEnd, Vec<Failure>> {
    let case = &plan.suite.cases[case_index];
    let mut oversight = Oversight::headless(options.yes);
    oversight.stop = stop;
    oversight.cancel = cancel.clone();
    let end = match &case.run {
        CaseRun::Task(task) => match &options.cache {
            // Through the task cache: a task done before replays its
            // stored recipe with no model call.
            Some(dir) => {
                let outcome = session
                    .run_task_cached(task, &TaskCache::new(dir.clone()), oversight, &Bare)
                    .await;
                handed_over(outcome.reason, &outcome.text).map_err(|f| vec![f])?;
                RunEnd {
                    success: outcome.success && outcome.reason == EndReason::Done,
                    text: outcome.text,
                    cache: Some(outcome.state),
                    healed: 0,
                }
            }
            None => {
                let outcome = session
                    .run_agent(task, Prior::fresh(), oversight, &Bare)
                    .await;
                match outcome {
                    Ok(outcome) => {
                        handed_over(outcome.reason, &outcome.text).map_err(|f| vec![f])?;
                        RunEnd {
                            success: outcome.success && outcome.reason == EndReason::Done,
                            text: outcome.text,
                            cache: None,
                            healed: 0,
                        }
                    }
                    Err(error) => {
                        return Err(vec![Failure {
                            check: "run".into(),
                            message: error.to_string(),
                        }])
                    }
                }
            }
        },
        CaseRun::Recipe(call) => {
            // Healed like `recipe run` when a model is configured; the
            // repaired recipe is not written over the suite's files (the
            // trace and the report carry each healed step).
            let mut replay = ReplayOptions::overseen(oversight);
            replay.rewrite = None;
            replay.origin = origin;
            let choice = RecipeChoice::InFile {
                file: &call.file,
                name: Some(&call.name),
            };
            let outcome = session
                .run_recipe(choice, call.params.clone(), replay, &Bare)
                .await;
            match outcome {
                Ok(outcome) => RunEnd {
                    success: outcome.success,
                    text: outcome.text,
                    cache: None,
                    healed: outcome.healed.len(),
                },
                Err(error) => {
                    return Err(vec![Failure {
                        check: "run".into(),
                        message: error.to_string(),
                    }])
                }
            }
        }
    };
    check_all(
        (case, case_index),
        (&end.text, end.success),
        session,
        &plan.checks,
        cancel,
    )
    .await?;
    Ok(end)
}

/// A run that ended in a hand-over, as the attempt's outcome: the case
/// needs a person, and its checks are not looked at.
fn handed_over(reason: EndReason, text: &str) -> Result<(), Failure> {
    if reason == EndReason::HandOver {
        return Err(Failure {
            check: HAND_OVER_CHECK.into(),
            message: text.to_string(),
        });
    }
    Ok(())
}

/// Why a case's start page cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CaseUrlError {
    /// The case names a path and there is no base URL to take it against.
    #[error(
        "the url {url:?} is a path and no base URL is set: pass --app-url or write base_url: in the suite"
    )]
    NoBase {
        /// The case's url as written.
        url: String,
    },
    /// The base URL does not parse.
    #[error("the base URL {base:?} is not a URL: {source}")]
    BadBase {
        /// The base URL as given.
        base: String,
        /// What the URL parser said.
        source: url::ParseError,
    },
    /// The path cannot be joined to the base URL.
    #[error("the url {url:?} cannot be taken against {base}: {source}")]
    CannotJoin {
        /// The case's url as written.
        url: String,
        /// The base URL, parsed.
        base: String,
        /// What the URL parser said.
        source: url::ParseError,
    },
}

/// The case's start page: a full URL as written, a path taken against the
/// base URL.
pub fn case_url(url: &str, base: Option<&str>) -> Result<String, CaseUrlError> {
    if let Ok(full) = url::Url::parse(url) {
        if !full.cannot_be_a_base() || full.scheme() == "about" || full.scheme() == "data" {
            return Ok(url.to_string());
        }
    }
    let Some(base) = base else {
        return Err(CaseUrlError::NoBase {
            url: url.to_string(),
        });
    };
    let base = url::Url::parse(base).map_err(|source| CaseUrlError::BadBase {
        base: base.to_string(),
        source,
    })?;
    base.join(url)
        .map(|u| u.to_string())
        .map_err(|source| CaseUrlError::CannotJoin {
            url: url.to_string(),
            base: base.to_string(),
            source,
        })
}

/// The page at the end, as a person would see it (no marks), written to
/// `dir/last.jpg`.
async fn last_picture(session: &mut Session, dir: &Path) -> Option<PathBuf> {
    // The picture is of the page as last observed.
    session.environment.observe().await.ok()?;
    let request = ShotRequest {
        region: ShotRegion::Viewport,
        width: session.config.browser.window.width,
        marks: false,
        secrets: Vec::new(),
        png: false,
        labels: std::collections::HashMap::new(),
    };
    let shot = session.environment.screenshot(&request).await.ok()?;
    let file = dir.join("last.jpg");
    std::fs::write(&file, &shot.image).ok()?;
    Some(file)
}

/// What the recorder learned from the attempt's events.
#[derive(Debug, Default)]
struct Recorded {
    tokens: TokenUsage,
    model_calls: usize,
    done_text: String,
}

/// Writes every event of the attempt to its trace and keeps the tokens,
/// the model calls and the run's final words.
async fn record(mut events: mpsc::UnboundedReceiver<Event>, mut trace: TraceWriter) -> Recorded {
    let mut recorded = Recorded::default();
    let mut writing = true;
    while let Some(event) = events.recv().await {
        if writing {
            if let Err(error) = trace.write(&event) {
                tracing::warn!(%error, "the case's trace stops here");
                writing = false;
            }
        }
        match &event {
            Event::Step(step) if step.usage.is_some() => recorded.model_calls += 1,
            Event::Done { usage, text, .. } => {
                recorded.tokens = *usage;
                recorded.done_text = text.clone();
            }
            _ => {}
        }
    }
    recorded
}

/// A folder name for a case: letters, digits and dashes.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed = out.trim_matches('-');
    if trimmed.is_empty() {
        "case".to_string()
    } else {
        trimmed.chars().take(60).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_urls_are_taken_against_the_base() {
        assert_eq!(
            case_url("/login", Some("http://127.0.0.1:8080")).as_deref(),
            Ok("http://127.0.0.1:8080/login")
        );
        assert_eq!(
            case_url("orders/1", Some("http://h/app/")).as_deref(),
            Ok("http://h/app/orders/1")
        );
        assert_eq!(
            case_url("https://example.test/x", Some("http://h/")).as_deref(),
            Ok("https://example.test/x")
        );
        assert!(case_url("/login", None).is_err());
    }

    #[test]
    fn slugs_are_folder_names() {
        assert_eq!(slug("Signs in, as Admin!"), "signs-in-as-admin");
        assert_eq!(slug("///"), "case");
    }
}
