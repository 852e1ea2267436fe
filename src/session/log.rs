//! What a headless command (`run`, `recipe run`) shows: every event
//! written to the trace as it happens, and printed as a readable step log
//! or as JSON lines.

use std::io::Write as _;

use tokio::sync::mpsc;

use crate::actions::ActionResult;
use crate::events::{EndReason, Event, TraceWriter};

/// Writes every event to the trace and prints it, until the agent and the
/// watcher have dropped their senders.
///
/// The model's streamed words are left out (the step line shows their
/// result); a script's `log(…)` lines are shown.
pub async fn print_events(
    mut events: mpsc::UnboundedReceiver<Event>,
    mut trace: TraceWriter,
    json: bool,
) -> Result<(), crate::events::EventError> {
    let mut trace_failed = false;
    // Approval lines wait for their step's line, so each step reads in
    // order: reflection, action, approval, result.
    let mut pending_approvals: Vec<String> = Vec::new();
    while let Some(event) = events.recv().await {
        if !trace_failed {
            if let Err(error) = trace.write(&event) {
                // Keep running: the printed log still shows everything.
                eprintln!("warning: {error}; the trace stops here");
                trace_failed = true;
            }
        }
        if !event.is_kept() {
            continue;
        }
        let mut stdout = std::io::stdout().lock();
        let written = if json {
            writeln!(stdout, "{}", json_line(&event, &trace)?)
        } else {
            let line = log_line(&event);
            match (&event, line) {
                (Event::Approval(_), Some(text)) => {
                    pending_approvals.push(text);
                    Ok(())
                }
                (Event::Step(_), Some(text)) => {
                    let text = match text.find("\n  result: ") {
                        Some(at) if !pending_approvals.is_empty() => format!(
                            "{}\n{}{}",
                            &text[..at],
                            pending_approvals.join("\n"),
                            &text[at..]
                        ),
                        _ => text,
                    };
                    pending_approvals.clear();
                    writeln!(stdout, "{text}")
                }
                (_, Some(text)) => writeln!(stdout, "{text}"),
                (_, None) => Ok(()),
            }
        };
        // A closed pipe (`| head`) ends printing, not the run.
        if written.and_then(|()| stdout.flush()).is_err() {
            break;
        }
    }
    Ok(())
}

/// The event as a JSON line; `run_started` also says where the trace is,
/// so a program reading the events can find it from the first line.
fn json_line(event: &Event, trace: &TraceWriter) -> Result<String, crate::events::EventError> {
    if !matches!(event, Event::RunStarted { .. }) {
        return event.to_json_line();
    }
    let mut value = serde_json::to_value(event)?;
    value["trace"] = serde_json::Value::String(trace.path().display().to_string());
    Ok(value.to_string())
}

/// The readable form of an event, or `None` for those the log leaves out
/// (streamed text, protocol echoes of what the step line shows).
pub fn log_line(event: &Event) -> Option<String> {
    match event {
        Event::RunStarted {
            task,
            url,
            model,
            max_steps,
        } => Some(match max_steps {
            // A recipe has no step limit: its steps are the script's.
            0 => format!("task: {task}\nstart: {url}  (model {model})"),
            _ => format!("task: {task}\nstart: {url}  (model {model}, at most {max_steps} steps)"),
        }),
        Event::ScriptLog { line } => Some(format!("log: {line}")),
        Event::Observation(o) => Some(format!(
            "\nstep {}  {}  ({} elements, {} new)",
            o.step, o.url, o.elements, o.new_elements
        )),
        Event::Step(step) => {
            let mut text = String::new();
            let r = &step.reflection;
            for (label, value) in [
                ("eval", &r.evaluation_previous_goal),
                ("memory", &r.memory),
                ("goal", &r.next_goal),
            ] {
                if !value.trim().is_empty() {
                    text.push_str(&format!("  {label}: {}\n", value.trim()));
                }
            }
            for repair in &step.repairs {
                text.push_str(&format!("  repaired: {repair}\n"));
            }
            let action = match step.action.as_object().and_then(|o| o.iter().next()) {
                Some((name, params)) => format!("{name} {params}"),
                None => "(none)".to_string(),
            };
            text.push_str(&format!("  action: {action}\n"));
            let outcome = match &step.result {
                ActionResult::Success { data: None } => "ok".to_string(),
                ActionResult::Success { data: Some(data) } => {
                    format!("ok {}", crate::agent::prompt::clip(&data.to_string(), 200))
                }
                ActionResult::Failure { reason, message } => format!("FAILED {reason}: {message}"),
            };
            text.push_str(&format!(
                "  result: {outcome}  (observe {} ms, model {} ms, act {} ms{})",
                step.timings.observe_ms,
                step.timings.llm_ms,
                step.timings.act_ms,
                if step.timings.wait_ms > 0 {
                    format!(", waited {} ms for approval", step.timings.wait_ms)
                } else {
                    String::new()
                }
            ));
            Some(text)
        }
        Event::Approval(a) => Some(format!(
            "  approval: {} ({} action on {}){}",
            a.decision,
            a.risk,
            a.url,
            a.note
                .as_deref()
                .map(|n| format!(": {n}"))
                .unwrap_or_default()
        )),
        Event::Error { error, fatal } => Some(format!(
            "  {}: {error}",
            if *fatal { "error" } else { "warning" }
        )),
        Event::ScriptReloaded {
            file,
            removed: true,
            ..
        } => Some(format!(
            "  {file} was removed: its actions and recipes are gone"
        )),
        Event::SitemapReloaded { file, error } | Event::ScriptReloaded { file, error, .. } => {
            Some(match error {
                None => format!("  reloaded {file}"),
                Some(error) => format!("  reload failed, keeping the last good version: {error}"),
            })
        }
        Event::Done {
            success,
            text,
            reason,
            steps,
            usage,
        } => Some(format!(
            "\n{}: {text}\n({}, {}{} tokens, ended by {})",
            if *success { "done" } else { "not done" },
            crate::words::counted(*steps, "step", "steps"),
            // `~`: the server sent no count; this is webagent's estimate.
            if usage.estimated { "~" } else { "" },
            usage.total_tokens,
            match reason {
                EndReason::Done => "done",
                EndReason::MaxSteps => "the step limit",
                EndReason::Stopped => "a stop",
                EndReason::Fatal => "an error",
                EndReason::HandOver => "a hand-over to a person",
            }
        )),
        Event::Screenshot(shot) => Some(format!(
            "  picture: {}×{} JPEG, {} marks, ~{} tokens, {:.0} ms{}",
            shot.width,
            shot.height,
            shot.marks.len(),
            shot.tokens,
            shot.capture_ms,
            if shot.purpose == "step" {
                String::new()
            } else {
                format!(" ({})", shot.purpose)
            }
        )),
        Event::HandOver {
            step,
            reason,
            url,
            ..
        } => Some(format!(
            "  step {step}: handed over to a person at {url}: {reason}\n  \
             (resume with `webagent resume TRACE`, or `--headless --headed` to hand back with Enter)"
        )),
        Event::PersonMessage { step, text } => {
            Some(format!("  the person said (read at step {step}): {text}"))
        }
        Event::StepRetried { step, reason } => Some(format!("  step {step} asked again: {reason}")),
        Event::ApprovalModeChanged { mode } => Some(format!("  approval mode now {mode}")),
        Event::Resumed(record) => Some(format!(
            "resumes {} at step {} ({} steps already taken)",
            record.from,
            record.step,
            record.history.len()
        )),
        Event::Healed(heal) => Some(format!(
            "  healed step {} (line {}): {} → {}  ({} model calls, {} tokens){}\n  because: {}",
            heal.step,
            heal.line,
            heal.old,
            if heal.success {
                heal.new.as_str()
            } else {
                "(not healed)"
            },
            heal.model_calls,
            heal.usage.total_tokens,
            if heal.success { "" } else { " FAILED" },
            heal.failure
        )),
        Event::Cache(cache) => Some(format!(
            "cache: {} ({} model calls, {} tokens) {}{}",
            cache.state.as_str(),
            cache.model_calls,
            cache.usage.total_tokens,
            cache.recipe,
            cache
                .note
                .as_deref()
                .map(|n| format!("; {n}"))
                .unwrap_or_default()
        )),
        Event::RecipeRewritten {
            file,
            healed,
            written,
            note,
        } => Some(match (written, note) {
            (true, _) => format!("repaired recipe ({healed} healed step(s)) written to {file}"),
            (false, note) => format!(
                "repaired recipe ({healed} healed step(s)) NOT written to {file}{}",
                note.as_deref()
                    .map(|n| format!(": {n}"))
                    .unwrap_or_default()
            ),
        }),
        Event::ModelWaiting {
            attempt,
            max_attempts,
            seconds,
            limit,
        } => event.is_kept().then(|| {
            format!(
                "  waiting for the model: {seconds} s of at most {limit} s, attempt {attempt} of {max_attempts}"
            )
        }),
        Event::Text { .. }
        | Event::ToolCall { .. }
        | Event::ToolResult { .. }
        | Event::ActionRequest { .. }
        | Event::RunSettings(_)
        | Event::Listing(_)
        | Event::StepEnded { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{Reflection, StepRecord, StepTimings, TokenUsage};
    use serde_json::json;

    #[test]
    fn a_step_reads_as_reflection_action_and_result() {
        let step = Event::Step(StepRecord {
            index: 2,
            reflection: Reflection {
                evaluation_previous_goal: "Success: the form opened".into(),
                memory: String::new(),
                next_goal: "send it".into(),
            },
            action: json!({"click": {"index": 4}}),
            result: ActionResult::denied("not approved"),
            repairs: vec!["the action name `Click` was read as `click`".into()],
            timings: StepTimings {
                observe_ms: 5,
                llm_ms: 700,
                act_ms: 1,
                wait_ms: 0,
            },
            usage: None,
            prompt_chars: 3000,
            prompt: String::new(),
            raw_response: String::new(),
            within: None,
            person: None,
        });
        let text = log_line(&step).unwrap();
        assert_eq!(
            text,
            "  eval: Success: the form opened\n  goal: send it\n  repaired: the action name `Click` was read as `click`\n  action: click {\"index\":4}\n  result: FAILED denied: not approved  (observe 5 ms, model 700 ms, act 1 ms)"
        );
        let done = Event::Done {
            success: false,
            text: "gave up".into(),
            reason: EndReason::MaxSteps,
            steps: 40,
            usage: TokenUsage {
                total_tokens: 1234,
                ..TokenUsage::default()
            },
        };
        assert_eq!(
            log_line(&done).unwrap(),
            "\nnot done: gave up\n(40 steps, 1234 tokens, ended by the step limit)"
        );
        assert!(log_line(&Event::Text {
            content: "x".into()
        })
        .is_none());
        assert_eq!(
            log_line(&Event::ScriptLog {
                line: "checkpoint".into()
            })
            .unwrap(),
            "log: checkpoint"
        );
        let recipe = Event::RunStarted {
            task: "recipe sign_in".into(),
            url: "http://a/".into(),
            model: "none (recipe)".into(),
            max_steps: 0,
        };
        assert_eq!(
            log_line(&recipe).unwrap(),
            "task: recipe sign_in\nstart: http://a/  (model none (recipe))"
        );
    }
}
