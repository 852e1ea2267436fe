//! What a case leaves behind: each attempt with its failure, how the case
//! ended over its attempts, and the counts of a run. It stands apart from
//! the runner so the checks that fail an attempt and the reports that show
//! one read these without depending on how cases are run.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::events::{CacheState, TokenUsage};

/// How a case ended, over its attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseStatus {
    /// Its first attempt passed.
    Passed,
    /// It failed, then passed on a retry.
    Flaky,
    /// Its last attempt failed a check, or its run failed.
    Failed,
    /// Its last attempt ran out of time.
    TimedOut,
    /// The model handed the page to a person (`hand_over`): a wall only a
    /// person can pass, neither a pass nor a failure of the case.
    NeedsPerson,
    /// The run was stopped (Ctrl-C, SIGTERM) before the case finished:
    /// it says nothing of the app.
    NotRun,
}

impl CaseStatus {
    /// Whether the case counts as passed (`flaky` does, unless the run
    /// says otherwise).
    pub fn passed(self, fail_on_flaky: bool) -> bool {
        match self {
            CaseStatus::Passed => true,
            CaseStatus::Flaky => !fail_on_flaky,
            CaseStatus::Failed
            | CaseStatus::TimedOut
            | CaseStatus::NeedsPerson
            | CaseStatus::NotRun => false,
        }
    }
}

/// The `check` of a [`Failure`] that is a hand-over to a person.
pub const HAND_OVER_CHECK: &str = "hand_over";

/// Why an attempt did not pass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// What failed: the check as written (`text: "Welcome"`), `run` for
    /// the run itself, `timeout`, or `browser`.
    pub check: String,
    /// What happened instead.
    pub message: String,
}

impl Failure {
    /// Whether the attempt ended in a hand-over to a person rather than
    /// failing (a retry cannot pass it either).
    pub fn needs_person(&self) -> bool {
        self.check == HAND_OVER_CHECK
    }
}

/// One attempt at a case.
#[derive(Debug, Clone, Serialize)]
pub struct Attempt {
    /// 1 for the first.
    pub number: u32,
    /// `None` when it passed; else the first thing that failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// The checks that failed after the first, in the case's order: a
    /// failing case shows everything that is wrong, not only its first
    /// check.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other_failures: Vec<Failure>,
    /// Whether it ran out of time.
    pub timed_out: bool,
    /// Whether the run was stopped (Ctrl-C, SIGTERM) while it went: it
    /// did not finish, so it says nothing of the app.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stopped: bool,
    /// How long it took.
    #[serde(serialize_with = "millis")]
    pub duration: Duration,
    /// Model tokens it spent.
    pub tokens: TokenUsage,
    /// Model calls it made (agent steps asked).
    pub model_calls: usize,
    /// What the run said at its end (the agent's `done` text, a recipe's
    /// return value or error).
    pub outcome: String,
    /// What the task cache did, for a task case run with `--cache`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheState>,
    /// Recipe steps the model healed in this attempt.
    #[serde(skip_serializing_if = "is_zero")]
    pub healed: usize,
    /// Its trace file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<PathBuf>,
    /// The page as it was at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<PathBuf>,
}

/// A case's result, over its attempts.
#[derive(Debug, Clone, Serialize)]
pub struct CaseReport {
    /// The suite file.
    pub suite: PathBuf,
    /// The case's name.
    pub name: String,
    /// How it ended.
    pub status: CaseStatus,
    /// Its tags.
    pub tags: Vec<String>,
    /// Every attempt, in order.
    pub attempts: Vec<Attempt>,
}

impl CaseReport {
    /// The time of every attempt together.
    pub fn duration(&self) -> Duration {
        self.attempts.iter().map(|a| a.duration).sum()
    }

    /// The tokens of every attempt together.
    pub fn tokens(&self) -> TokenUsage {
        let mut sum = TokenUsage::default();
        for attempt in &self.attempts {
            sum.prompt_tokens += attempt.tokens.prompt_tokens;
            sum.completion_tokens += attempt.tokens.completion_tokens;
            sum.total_tokens += attempt.tokens.total_tokens;
            sum.cached_tokens += attempt.tokens.cached_tokens;
            sum.estimated |= attempt.tokens.estimated;
        }
        sum
    }

    /// The failure of the last attempt, when it failed.
    pub fn failure(&self) -> Option<&Failure> {
        self.attempts.last().and_then(|a| a.failure.as_ref())
    }
}

impl Attempt {
    /// Everything that failed, the first first.
    pub fn failures(&self) -> impl Iterator<Item = &Failure> {
        self.failure.iter().chain(&self.other_failures)
    }

    /// An attempt that could not run at all.
    pub(super) fn unrun(number: u32, failure: Failure) -> Attempt {
        Attempt {
            failure: Some(failure),
            ..Attempt::new(number)
        }
    }

    /// Attempt `number` before it has run: passed until something fails.
    pub fn new(number: u32) -> Attempt {
        Attempt {
            number,
            failure: None,
            other_failures: Vec::new(),
            timed_out: false,
            stopped: false,
            duration: Duration::ZERO,
            tokens: TokenUsage::default(),
            model_calls: 0,
            outcome: String::new(),
            cache: None,
            healed: 0,
            trace: None,
            screenshot: None,
        }
    }
}

/// The counts of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Totals {
    /// Cases picked (those not run included).
    pub total: usize,
    /// Passed on the first attempt.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Passed on a retry.
    pub flaky: usize,
    /// Ran out of time on the last attempt.
    pub timed_out: usize,
    /// Handed over to a person.
    pub needs_person: usize,
    /// Not run: the run was stopped first.
    pub not_run: usize,
}

impl Totals {
    /// The counts of `reports`.
    pub fn of(reports: &[CaseReport]) -> Totals {
        let mut totals = Totals {
            total: reports.len(),
            ..Totals::default()
        };
        for report in reports {
            match report.status {
                CaseStatus::Passed => totals.passed += 1,
                CaseStatus::Flaky => totals.flaky += 1,
                CaseStatus::Failed => totals.failed += 1,
                CaseStatus::TimedOut => totals.timed_out += 1,
                CaseStatus::NeedsPerson => totals.needs_person += 1,
                CaseStatus::NotRun => totals.not_run += 1,
            }
        }
        totals
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn millis<S: serde::Serializer>(duration: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(duration.as_millis() as u64)
}
