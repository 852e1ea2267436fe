//! `webagent test`: natural-language and recipe checks of a web app, run
//! as a suite.
//!
//! A suite is a YAML file of cases (see [`file`]); each case starts on a
//! page, runs a task with the agent or a recipe, then checks the page and
//! the outcome. The runner ([`run`]) gives every attempt a fresh browser
//! context, runs `--workers` cases at once, retries failed ones and tells a
//! flaky case from a passing one; [`plan`] picks the cases (`--grep`,
//! `--tag`, `--shard I/N`), and [`report`] writes JUnit XML and a static
//! HTML report. A suite that does not read is refused before any browser
//! starts, with file, line and column.

pub mod expect;
pub mod file;
pub mod outcome;
pub mod plan;
pub mod report;
pub mod run;

pub use expect::{compile_checks, url_glob_matches};
pub use file::{load_all, Case, CaseRun, Expect, RecipeCall, Suite, SuiteError};
pub use outcome::{Attempt, CaseReport, CaseStatus, Failure, Totals};
pub use plan::{Picked, Selection, Shard};
pub use report::{junit, write_html, write_junit, ReportError};
pub use run::{case_url, run, CaseUrlError, RunError, RunOptions, SuiteEvent, SuitePlan};
