//! The checks after a case's run.
//!
//! Checks on the page wait, as a person watching would, for a short while
//! (the suite's `expect_timeout`, 5 s unless set) for the page to get there: a recipe's last click may
//! still be rendering its answer when the run ends. A check that never
//! holds fails with what the page showed instead.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::file::{rhai_check_source, Case, Expect};
use super::outcome::Failure;
use crate::actions::{Action, ActionResult, Selector, WaitCondition};
use crate::environment::{Environment, HeadlessApprover, PersonsOwn};
use crate::script::{CancelFlag, RecipeHost, Scripts};
use crate::session::{Errand, Session};

/// How often a waiting check looks again.
const LOOK_AGAIN: Duration = Duration::from_millis(200);

/// The most characters of the page quoted in a failure.
const QUOTE_LIMIT: usize = 300;

/// Runs every check in order and gives every one that fails, so a case
/// shows all that is wrong at once. Without a `done` check, a run that did
/// not succeed fails the case (`run`) with no check looked at, so a recipe
/// error or an agent that gave up is never a pass.
pub async fn check_all(
    case: (&Case, usize),
    (run_text, run_success): (&str, bool),
    session: &mut Session,
    checks: &Scripts,
    cancel: &CancelFlag,
) -> Result<(), Vec<Failure>> {
    let (case, index) = case;
    let (expects, wait) = (case.expect.as_slice(), case.expect_wait);
    let fail = |expect: &Expect, message: String| Failure {
        check: expect.to_string(),
        message,
    };
    if !run_success && !expects.iter().any(|e| matches!(e, Expect::Done(_))) {
        return Err(vec![Failure {
            check: "run".into(),
            message: format!("the run did not succeed: {run_text}"),
        }]);
    }
    // How the run ended is known already: said first, before any check
    // waits on the page.
    let run_first = expects
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Expect::Done(_)))
        .chain(
            expects
                .iter()
                .enumerate()
                .filter(|(_, e)| !matches!(e, Expect::Done(_))),
        );
    let mut failures = Vec::new();
    for (n, expect) in run_first {
        // One check: an early `return` or `?` ends this check, not the
        // others.
        let checked: Result<(), Failure> = async {
            match expect {
                Expect::Done(wanted) => {
                    if *wanted != run_success {
                        let said = if run_success { "success" } else { "failure" };
                        return Err(fail(expect, format!("the run reported {said}: {run_text}")));
                    }
                }
                Expect::Text(text) => {
                    let waited = check_action(
                        session,
                        Action::WaitFor {
                            condition: WaitCondition::Text { text: text.clone() },
                            timeout_ms: wait.as_millis() as u64,
                        },
                    )
                    .await;
                    if !waited.is_ok() {
                        let shown = page_text(session).await;
                        return Err(fail(
                            expect,
                            format!(
                                "the page does not show it after {} s; it reads: {}",
                                wait.as_secs(),
                                quote(&shown)
                            ),
                        ));
                    }
                }
                Expect::Selector(selector) => {
                    let parsed = Selector::parse(selector)
                        .map_err(|e| fail(expect, format!("not a selector: {e}")))?;
                    let waited = check_action(
                        session,
                        Action::WaitFor {
                            condition: WaitCondition::Selector { selector: parsed },
                            timeout_ms: wait.as_millis() as u64,
                        },
                    )
                    .await;
                    if let ActionResult::Failure { message, .. } = waited {
                        return Err(fail(expect, message));
                    }
                }
                Expect::Url(pattern) => {
                    let started = Instant::now();
                    loop {
                        let url = session.environment.current_url().await.unwrap_or_default();
                        if url_glob_matches(&url, pattern) {
                            break;
                        }
                        if started.elapsed() >= wait {
                            return Err(fail(expect, format!("the page is at {url}")));
                        }
                        tokio::time::sleep(LOOK_AGAIN).await;
                    }
                }
                Expect::Rhai(_) => {
                    let started = Instant::now();
                    loop {
                        match rhai_holds(session, checks, &check_name(index, n), cancel).await {
                            Ok(true) => break,
                            Ok(false) if started.elapsed() < wait => {
                                tokio::time::sleep(LOOK_AGAIN).await;
                            }
                            Ok(false) => {
                                return Err(fail(
                                    expect,
                                    format!("it was false for {} s", wait.as_secs()),
                                ))
                            }
                            Err(message) => return Err(fail(expect, message)),
                        }
                    }
                }
            }
            Ok(())
        }
        .await;
        if let Err(failure) = checked {
            failures.push(failure);
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures)
    }
}

/// The recipe name of a suite's `n`-th check of a case (each case's
/// checks are compiled under their own names, see [`compile_checks`]).
fn check_name(case: usize, n: usize) -> String {
    format!("suite_check_{case}_{n}")
}

/// Compiles every `rhai:` check of `cases` (a suite's) as recipes, one
/// script for the suite.
pub fn compile_checks<'a>(
    cases: impl Iterator<Item = &'a [Expect]>,
) -> Result<Scripts, crate::script::ScriptError> {
    let scripts = Scripts::default();
    let mut source = String::new();
    for (case, expects) in cases.enumerate() {
        for (n, expect) in expects.iter().enumerate() {
            if let Expect::Rhai(code) = expect {
                source.push_str(&rhai_check_source(&check_name(case, n), code));
            }
        }
    }
    if !source.is_empty() {
        scripts.load_source("<suite checks>", &source)?;
    }
    Ok(scripts)
}

/// Whether the check compiled as recipe `name`, a Rhai expression, is
/// true on the page now. Its host calls go through the session's road like a recipe's.
async fn rhai_holds(
    session: &mut Session,
    checks: &Scripts,
    name: &str,
    cancel: &CancelFlag,
) -> Result<bool, String> {
    let road = session
        .agent_setup()
        .road(Box::new(HeadlessApprover { yes: false }));
    let mut host = RecipeHost::new(&mut session.environment, road);
    match checks.run_recipe(Some(name), &mut host, cancel).await {
        Ok(Value::Bool(holds)) => Ok(holds),
        Ok(other) => Err(format!("the check gave {other}, not true or false")),
        Err(error) => Err(format!("the check failed: {error}")),
    }
}

/// Runs one of the suite's own page actions along the session's road: the
/// suite's author chose it, so it counts as approved by them.
async fn check_action(session: &mut Session, action: Action) -> ActionResult {
    let approver = Box::new(PersonsOwn::new("a check written in the suite"));
    let errand = Errand {
        step: 0,
        page: None,
        goal: "a check written in the suite",
    };
    session
        .perform(action, approver, errand)
        .await
        .result()
        .clone()
}

/// The page's text now, for a failure message.
async fn page_text(session: &mut Session) -> String {
    match check_action(session, Action::ReadPage { offset: 0 }).await {
        ActionResult::Success { data: Some(data) } => data
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        _ => String::new(),
    }
}

fn quote(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > QUOTE_LIMIT {
        let cut: String = flat.chars().take(QUOTE_LIMIT).collect();
        format!("{cut:?}…")
    } else {
        format!("{flat:?}")
    }
}

/// Whether `url` matches `pattern`: a path pattern (`/orders/*`) against
/// the URL's path, a full URL pattern (`http://*/orders`) against the URL
/// without query and fragment. `*` stands for any run of characters other
/// than `/`, `**` for any run at all. A trailing slash of the URL's path
/// is ignored unless the pattern ends with one.
pub fn url_glob_matches(url: &str, pattern: &str) -> bool {
    let subject = if pattern.starts_with('/') {
        match url::Url::parse(url) {
            Ok(parsed) => parsed.path().to_string(),
            Err(_) => return false,
        }
    } else {
        url.split(['?', '#']).next().unwrap_or("").to_string()
    };
    // `/dashboard/` is the page `/dashboard` names, unless the pattern
    // itself asks for the slash.
    let subject = match subject.strip_suffix('/') {
        Some(bare) if !bare.is_empty() && !bare.ends_with('/') && !pattern.ends_with('/') => bare,
        _ => subject.as_str(),
    };
    crate::script::export::glob(subject, pattern)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_globs_match_paths_and_whole_urls() {
        let url = "http://127.0.0.1:8080/orders/1002?tab=2#x";
        assert!(url_glob_matches(url, "/orders/*"));
        assert!(url_glob_matches(url, "/orders/1002"));
        assert!(!url_glob_matches(url, "/orders"));
        assert!(url_glob_matches(url, "/**"));
        assert!(url_glob_matches("http://h/dashboard", "/dashboard*"));
        assert!(url_glob_matches("http://h/dashboard/", "/dashboard*"));
        assert!(!url_glob_matches("http://h/dashboard/x", "/dashboard*"));
        assert!(url_glob_matches(url, "http://127.0.0.1:*/orders/*"));
        assert!(!url_glob_matches(url, "https://127.0.0.1:*/orders/*"));
    }
}
