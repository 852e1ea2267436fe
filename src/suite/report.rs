//! What a run leaves for CI and for people: JUnit XML and a static HTML
//! report.
//!
//! The JUnit file follows the shape the CI systems' parsers read (GitHub
//! Actions' test reporters, GitLab, Jenkins): one `<testsuite>` per suite
//! file, a `<testcase>` per case, `<failure>` for a failed or timed-out
//! case. A flaky case passes and carries a `<flakyFailure>` per failed
//! attempt, as Maven Surefire writes them (Jenkins shows it as flaky; the
//! others skip what they do not know).
//!
//! The HTML report is one `index.html` with the pictures beside it in
//! `images/`: it opens from disk with no server and no script. Failures
//! come first; each case shows its failing check, time and tokens, and for
//! each attempt its steps as the trace recorded them (the agent's
//! reflection, the action, the result, the picture the model saw) and the
//! page as it was at the end.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use super::outcome::Totals;
use super::outcome::{Attempt, CaseReport, CaseStatus};
use crate::events::{place_before_its_steps, Event, StepRecord};
use crate::markup::escape;

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
#[error("could not write {}: {message}", path.display())]
pub struct ReportError {
    /// The file or folder.
    pub path: PathBuf,
    /// What the operating system said.
    pub message: String,
}

fn write_error(path: &Path, error: std::io::Error) -> ReportError {
    ReportError {
        path: path.to_path_buf(),
        message: error.to_string(),
    }
}

fn seconds(duration: Duration) -> String {
    format!("{:.3}", duration.as_secs_f64())
}

/// Writes the JUnit XML of `reports` to `path`.
pub fn write_junit(path: &Path, reports: &[CaseReport]) -> Result<(), ReportError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| write_error(dir, e))?;
    }
    std::fs::write(path, junit(reports)).map_err(|e| write_error(path, e))
}

/// The JUnit XML of `reports`.
pub fn junit(reports: &[CaseReport]) -> String {
    let mut suites: Vec<(&Path, Vec<&CaseReport>)> = Vec::new();
    for report in reports {
        match suites
            .iter_mut()
            .find(|(s, _)| *s == report.suite.as_path())
        {
            Some((_, cases)) => cases.push(report),
            None => suites.push((report.suite.as_path(), vec![report])),
        }
    }
    let failing = |r: &CaseReport| matches!(r.status, CaseStatus::Failed | CaseStatus::TimedOut);
    let skipped = |r: &CaseReport| matches!(r.status, CaseStatus::NeedsPerson | CaseStatus::NotRun);
    let total_time: Duration = reports.iter().map(CaseReport::duration).sum();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"webagent\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{}\">",
        reports.len(),
        reports.iter().filter(|r| failing(r)).count(),
        reports.iter().filter(|r| skipped(r)).count(),
        seconds(total_time)
    );
    for (suite, cases) in suites {
        let name = suite.display().to_string();
        let class = suite
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| name.clone());
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{}\">",
            escape(&name),
            cases.len(),
            cases.iter().filter(|r| failing(r)).count(),
            cases.iter().filter(|r| skipped(r)).count(),
            seconds(cases.iter().map(|r| r.duration()).sum())
        );
        for case in cases {
            let _ = writeln!(
                xml,
                "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\" time=\"{}\">",
                escape(&case.name),
                escape(&class),
                escape(&name),
                seconds(case.duration())
            );
            let failed_attempts = case.attempts.iter().filter(|a| a.failure.is_some());
            match case.status {
                CaseStatus::Failed | CaseStatus::TimedOut => {
                    if let Some(last) = case.attempts.last().filter(|a| a.failure.is_some()) {
                        let kind = if case.status == CaseStatus::TimedOut {
                            "timeout"
                        } else {
                            "check"
                        };
                        // Every failed check in the message: CI shows the
                        // message, and one fix should not hide the next.
                        let message: Vec<String> = last
                            .failures()
                            .map(|f| format!("{}: {}", f.check, f.message))
                            .collect();
                        let _ = writeln!(
                            xml,
                            "      <failure message=\"{}\" type=\"{kind}\">{}</failure>",
                            escape(&message.join("; ")),
                            escape(&attempt_details(case)),
                        );
                    }
                }
                CaseStatus::Flaky => {
                    for attempt in failed_attempts {
                        if let Some(failure) = &attempt.failure {
                            let _ = writeln!(
                                xml,
                                "      <flakyFailure message=\"{}\" type=\"check\"/>",
                                escape(&format!(
                                    "attempt {}: {}: {}",
                                    attempt.number, failure.check, failure.message
                                )),
                            );
                        }
                    }
                }
                CaseStatus::NeedsPerson => {
                    if let Some(failure) = case.failure() {
                        let _ = writeln!(
                            xml,
                            "      <skipped message=\"{}\"/>",
                            escape(&format!("needs a person: {}", failure.message)),
                        );
                    }
                }
                CaseStatus::NotRun => {
                    let _ = writeln!(
                        xml,
                        "      <skipped message=\"not run: the run was stopped before this case finished\"/>"
                    );
                }
                CaseStatus::Passed => {}
            }
            let _ = writeln!(
                xml,
                "      <system-out>{}</system-out>",
                escape(&attempt_details(case))
            );
            xml.push_str("    </testcase>\n");
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// Each attempt in a line: its outcome, time, tokens, trace and picture.
fn attempt_details(case: &CaseReport) -> String {
    let mut text = format!("status: {:?}\n", case.status).to_lowercase();
    for attempt in &case.attempts {
        let outcome = match &attempt.failure {
            None => "passed".to_string(),
            Some(_) => {
                let failed: Vec<String> = attempt
                    .failures()
                    .map(|f| format!("failed {}: {}", f.check, f.message))
                    .collect();
                failed.join("; ")
            }
        };
        let cache = attempt
            .cache
            .map(|c| format!(", cache {}", c.as_str()))
            .unwrap_or_default();
        let _ = writeln!(
            text,
            "attempt {}: {outcome} ({} s, {} tokens, {} model calls{cache})",
            attempt.number,
            seconds(attempt.duration),
            attempt.tokens.total_tokens,
            attempt.model_calls
        );
        if let Some(trace) = &attempt.trace {
            let _ = writeln!(text, "  trace: {}", trace.display());
        }
        if let Some(shot) = &attempt.screenshot {
            let _ = writeln!(text, "  screenshot: {}", shot.display());
        }
    }
    text
}

/// A step as the report shows it, with the picture the model saw.
struct ShownStep {
    record: StepRecord,
    picture: Option<PathBuf>,
}

/// The steps an attempt's trace recorded, with each step's picture.
fn steps_of(trace: &Path) -> Vec<ShownStep> {
    let Ok(text) = std::fs::read_to_string(trace) else {
        return Vec::new();
    };
    let folder = trace.parent().unwrap_or(Path::new("."));
    let mut pictures: Vec<(usize, PathBuf)> = Vec::new();
    let mut steps = Vec::new();
    for line in text.lines() {
        match serde_json::from_str::<Event>(line) {
            Ok(Event::Screenshot(shot)) => {
                if let Some(file) = shot.file {
                    pictures.push((shot.step, folder.join(file)));
                }
            }
            Ok(Event::Step(record)) => {
                let place = place_before_its_steps(
                    record.index,
                    steps.iter().map(|s: &StepRecord| s.within),
                );
                match place {
                    Some(at) => steps.insert(at, record),
                    None => steps.push(record),
                }
            }
            _ => {}
        }
    }
    steps
        .into_iter()
        .map(|record| {
            let picture = pictures
                .iter()
                .find(|(step, _)| *step == record.index)
                .map(|(_, file)| file.clone());
            ShownStep { record, picture }
        })
        .collect()
}

/// Writes the HTML report of `reports` into `dir` (`index.html` and
/// `images/`) and returns the page's path.
pub fn write_html(
    dir: &Path,
    reports: &[CaseReport],
    elapsed: Duration,
) -> Result<PathBuf, ReportError> {
    let images = dir.join("images");
    std::fs::create_dir_all(&images).map_err(|e| write_error(&images, e))?;
    let mut copied = 0usize;
    // Copies a picture next to the page and gives its relative address.
    let mut keep = |source: &Path| -> Option<String> {
        copied += 1;
        let extension = source
            .extension()
            .map(|e| e.to_string_lossy().into_owned())
            .unwrap_or_else(|| "jpg".into());
        let name = format!("{copied:04}.{extension}");
        std::fs::copy(source, images.join(&name)).ok()?;
        Some(format!("images/{name}"))
    };
    let totals = Totals::of(reports);
    let mut ordered: Vec<&CaseReport> = reports.iter().collect();
    // Failures first, then flaky cases, then the rest; file order within.
    ordered.sort_by_key(|r| match r.status {
        CaseStatus::Failed | CaseStatus::TimedOut => 0,
        CaseStatus::NeedsPerson => 1,
        CaseStatus::Flaky => 2,
        CaseStatus::NotRun => 3,
        CaseStatus::Passed => 4,
    });
    let mut html = String::new();
    html.push_str(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <title>webagent test report</title>\n<style>\n\
         body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1b1f24;background:#f6f7f9}\n\
         h1{font-size:20px;margin:0 0 8px}\n\
         .totals span{display:inline-block;margin-right:14px;font-weight:600}\n\
         .case{background:#fff;border:1px solid #d8dde3;border-left:6px solid #8a939c;border-radius:6px;margin:14px 0;padding:10px 14px}\n\
         .case.failed,.case.timed_out{border-left-color:#c62828}.case.flaky{border-left-color:#e0a100}.case.passed{border-left-color:#2e7d32}\n\
         .status{font-weight:700;text-transform:uppercase;font-size:12px;margin-right:8px}\n\
         .failed .status,.timed_out .status{color:#c62828}.flaky .status{color:#9a6b00}.passed .status{color:#2e7d32}\n\
         .meta{color:#59636e;font-size:12px}\n\
         .failure{background:#fdecea;border-radius:4px;padding:6px 10px;margin:8px 0;white-space:pre-wrap}\n\
         .step{border-top:1px solid #eceff2;padding:6px 0}\n\
         .step .action{font-family:ui-monospace,monospace;font-size:12px}\n\
         .ok{color:#2e7d32}.bad{color:#c62828}\n\
         img{max-width:100%;border:1px solid #d8dde3;border-radius:4px;margin-top:4px}\n\
         .pictures img{max-width:48%;margin-right:1%}\n\
         </style></head><body>\n",
    );
    // A count is in colour only when it is news: red for failures that
    // happened, green for passes; "0 failed" reads plain.
    let counted = |n: usize, words: &str, class: &str| match (n, class) {
        (0, _) | (_, "") => format!("<span>{n} {words}</span>"),
        _ => format!("<span class=\"{class}\">{n} {words}</span>"),
    };
    let mut line = vec![
        format!("<span>{} cases</span>", totals.total),
        counted(totals.failed, "failed", "bad"),
        counted(totals.timed_out, "timed out", "bad"),
        counted(totals.flaky, "flaky", ""),
        counted(totals.needs_person, "need a person", ""),
    ];
    if totals.not_run > 0 {
        line.push(counted(totals.not_run, "not run", ""));
    }
    line.push(counted(totals.passed, "passed", "ok"));
    let _ = writeln!(
        html,
        "<h1>webagent test report</h1>\n<p class=\"totals\">{}<span class=\"meta\">{:.1} s</span></p>",
        line.concat(),
        elapsed.as_secs_f64()
    );
    for case in ordered {
        let status = format!("{:?}", case.status).to_lowercase();
        let status = match case.status {
            CaseStatus::TimedOut => "timed_out".to_string(),
            CaseStatus::NeedsPerson => "needs_a_person".to_string(),
            CaseStatus::NotRun => "not_run".to_string(),
            _ => status,
        };
        let tokens = case.tokens();
        let _ = writeln!(
            html,
            "<section class=\"case {status}\"><div><span class=\"status\">{}</span><strong class=\"name\">{}</strong></div>\n<div class=\"meta\">{} · {} attempt(s) · {:.2} s · {} tokens{}</div>",
            status.replace('_', " "),
            escape(&case.name),
            escape(&case.suite.display().to_string()),
            case.attempts.len(),
            case.duration().as_secs_f64(),
            tokens.total_tokens,
            if case.tags.is_empty() {
                String::new()
            } else {
                format!(" · tags: {}", escape(&case.tags.join(", ")))
            }
        );
        for failure in case.attempts.last().into_iter().flat_map(Attempt::failures) {
            let _ = writeln!(
                html,
                "<div class=\"failure\"><strong>{}</strong>: {}</div>",
                escape(&failure.check),
                escape(&failure.message)
            );
        }
        for attempt in &case.attempts {
            html_attempt(&mut html, attempt, case.attempts.len() > 1, &mut keep);
        }
        html.push_str("</section>\n");
    }
    html.push_str("</body></html>\n");
    let page = dir.join("index.html");
    std::fs::write(&page, html).map_err(|e| write_error(&page, e))?;
    Ok(page)
}

fn html_attempt(
    html: &mut String,
    attempt: &Attempt,
    several: bool,
    keep: &mut impl FnMut(&Path) -> Option<String>,
) {
    let open = if attempt.failure.is_some() {
        " open"
    } else {
        ""
    };
    let verdict = match &attempt.failure {
        None => "<span class=\"ok\">passed</span>".to_string(),
        Some(_) => {
            let checks: Vec<String> = attempt.failures().map(|f| escape(&f.check)).collect();
            format!("<span class=\"bad\">failed</span> {}", checks.join(", "))
        }
    };
    let title = if several {
        format!("Attempt {}: ", attempt.number)
    } else {
        String::new()
    };
    let mut extra = String::new();
    if let Some(cache) = attempt.cache {
        extra.push_str(&format!(" · cache {}", cache.as_str()));
    }
    if attempt.healed > 0 {
        extra.push_str(&format!(" · {} step(s) healed", attempt.healed));
    }
    let _ = writeln!(
        html,
        "<details{open}><summary>{title}{verdict} · {:.2} s · {} tokens · {} model call(s){extra}</summary>",
        attempt.duration.as_secs_f64(),
        attempt.tokens.total_tokens,
        attempt.model_calls
    );
    if !attempt.outcome.is_empty() {
        let _ = writeln!(
            html,
            "<div class=\"meta\">run said: {}</div>",
            escape(&attempt.outcome)
        );
    }
    if let Some(trace) = &attempt.trace {
        for step in steps_of(trace) {
            let record = &step.record;
            let result = if record.result.is_ok() {
                "<span class=\"ok\">ok</span>".to_string()
            } else {
                format!(
                    "<span class=\"bad\">{}</span>",
                    escape(&serde_json::to_string(&record.result).unwrap_or_default())
                )
            };
            let _ = writeln!(
                html,
                "<div class=\"step\"><div><strong>Step {}</strong> <span class=\"action\">{}</span> → {result}</div>",
                record.index,
                escape(&record.action.to_string())
            );
            let reflection = &record.reflection;
            for (label, text) in [
                ("evaluation", &reflection.evaluation_previous_goal),
                ("memory", &reflection.memory),
                ("next goal", &reflection.next_goal),
            ] {
                if !text.is_empty() {
                    let _ = writeln!(html, "<div class=\"meta\">{label}: {}</div>", escape(text));
                }
            }
            if let Some(src) = step.picture.as_deref().and_then(&mut *keep) {
                let _ = writeln!(
                    html,
                    "<img src=\"{src}\" alt=\"what the model saw at step {}\" loading=\"lazy\">",
                    record.index
                );
            }
            html.push_str("</div>\n");
        }
        let _ = writeln!(
            html,
            "<div class=\"meta\">trace: {}</div>",
            escape(&trace.display().to_string())
        );
    }
    if let Some(src) = attempt.screenshot.as_deref().and_then(&mut *keep) {
        let _ = writeln!(
            html,
            "<div class=\"pictures\"><div class=\"meta\">the page at the end</div><img src=\"{src}\" alt=\"the page at the end of attempt {}\"></div>",
            attempt.number
        );
    }
    html.push_str("</details>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::outcome::Failure;

    fn report(name: &str, status: CaseStatus, failures: &[&str]) -> CaseReport {
        let mut attempts: Vec<Attempt> = failures
            .iter()
            .enumerate()
            .map(|(n, check)| Attempt {
                failure: Some(Failure {
                    check: (*check).into(),
                    message: "it <was> & \"was not\"".into(),
                }),
                duration: Duration::from_millis(1500),
                ..Attempt::new(n as u32 + 1)
            })
            .collect();
        if status == CaseStatus::Passed || status == CaseStatus::Flaky {
            attempts.push(Attempt {
                duration: Duration::from_millis(250),
                ..Attempt::new(attempts.len() as u32 + 1)
            });
        }
        CaseReport {
            suite: PathBuf::from("suites/a.yaml"),
            name: name.into(),
            status,
            tags: Vec::new(),
            attempts,
        }
    }

    #[test]
    fn junit_counts_failures_and_marks_flaky_attempts() {
        let xml = junit(&[
            report("ok", CaseStatus::Passed, &[]),
            report("bad", CaseStatus::Failed, &["text: \"x\""]),
            report("shaky", CaseStatus::Flaky, &["url: \"/a\""]),
        ]);
        assert!(
            xml.contains("<testsuites name=\"webagent\" tests=\"3\" failures=\"1\""),
            "{xml}"
        );
        assert!(xml.contains("<failure message=\"text: &quot;x&quot;: it &lt;was&gt; &amp; &quot;was not&quot;\" type=\"check\">"), "{xml}");
        assert!(
            xml.contains("<flakyFailure message=\"attempt 1: url: &quot;/a&quot;"),
            "{xml}"
        );
        assert_eq!(xml.matches("<testcase ").count(), 3);
    }

    #[test]
    fn a_custom_action_is_shown_before_the_steps_it_took() {
        let dir =
            std::env::temp_dir().join(format!("webagent-report-order-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        let trace = dir.join("trace.jsonl");
        // As a recipe writes it: the custom action's own record comes after
        // its steps', once its result is known.
        let step = |index: usize, action: &str, within: Option<usize>| {
            let record = serde_json::json!({
                "type": "step",
                "index": index,
                "reflection": {"evaluation_previous_goal": "", "memory": "", "next_goal": ""},
                "action": {action: {}},
                "result": {"ok": true},
                "repairs": [],
                "timings": {"observe_ms": 0, "llm_ms": 0, "act_ms": 0, "wait_ms": 0},
                "prompt_chars": 0,
                "within": within,
            });
            record.to_string()
        };
        let lines = [
            step(2, "click", Some(1)),
            step(3, "click", Some(1)),
            step(1, "count_twice", None),
            step(4, "click", None),
        ];
        std::fs::write(&trace, lines.join("\n")).expect("write the trace");
        let order: Vec<usize> = steps_of(&trace).iter().map(|s| s.record.index).collect();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(order, [1, 2, 3, 4]);
    }
}
