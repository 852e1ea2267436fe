//! What the agent reports (steps, reflections, results, usage) turned into
//! the log, the reflection pane and the status line.

use serde_json::Value;

use crate::actions::Target;
use crate::events::{EndReason, Event, Verdict};
use crate::tui::state::{
    healed_row, rows, AppState, ListView, LoadState, LogEntry, ModelWait, Outcome, ReflectionView,
    RunStatus,
};

use super::log::{log_side_effects, push_log, target_text};

/// The log entry of an agent step's action in progress: the step's last
/// row while its record has not come (one action of a list after the
/// other, each gets a row of its own), else a new row.
pub(super) fn step_entry(state: &mut AppState, step: usize) -> &mut LogEntry {
    let start = state.run_log_start.min(state.log.len());
    let open = state.log[start..]
        .iter()
        .rposition(|e| e.step == Some(step) && e.record.is_none() && is_action_row(e));
    let at = match open {
        Some(at) => start + at,
        None => {
            push_log(
                state,
                LogEntry {
                    step: Some(step),
                    ..LogEntry::row("", "", Outcome::Pending)
                },
            );
            state.log.len() - 1
        }
    };
    &mut state.log[at]
}

/// The step of the custom action whose handler is running now, if any:
/// the latest row of a custom action in this run with no result yet.
/// Calls that come while it runs are its steps.
fn running_custom_action(state: &AppState) -> Option<usize> {
    let start = state.run_log_start.min(state.log.len());
    state.log[start..]
        .iter()
        .rev()
        .find(|e| {
            e.record.is_none()
                && e.outcome == Outcome::Pending
                && state
                    .catalog
                    .get(&e.action)
                    .is_some_and(|spec| !spec.is_builtin())
        })
        .and_then(|e| e.step)
}

/// Whether a row is an action's (not a message, a retry or a task line).
fn is_action_row(entry: &LogEntry) -> bool {
    ![
        rows::MESSAGE,
        rows::RETRY,
        rows::RESUMED,
        rows::NEW,
        rows::TASK,
        rows::END,
        rows::HAND_OVER,
        rows::LOG,
    ]
    .contains(&entry.action.as_str())
}

/// One event of the agent run, into the panes.
pub(super) fn on_agent_event(state: &mut AppState, event: Event) {
    // A wait for the model lasts until something other than its streamed
    // words or a retry notice happens.
    if !matches!(
        event,
        Event::ModelWaiting { .. } | Event::Text { .. } | Event::Error { fatal: false, .. }
    ) {
        state.status.waiting = None;
    }
    match event {
        Event::ModelWaiting {
            attempt,
            max_attempts,
            seconds,
            ..
        } => {
            state.status.waiting = Some(ModelWait {
                attempt,
                max_attempts,
                seconds,
            });
        }
        // The picture arrives for the page pane on its own (the
        // workbench's environment sends every one it takes).
        Event::Screenshot(_) => {}
        Event::RunStarted {
            task,
            url,
            max_steps,
            ..
        } if state.recipe.is_some() && state.recipe_began => {
            // `agent("…")` in the recipe: the model's steps get rows of
            // their own, numbered from 1, and the recipe's count resumes
            // after it.
            state.recipe_subgoals.push(state.status.step);
            state.run_log_start = state.log.len();
            state.status.step = 0;
            state.status.url = url;
            state.status.max_steps = max_steps;
            state.notice(false, format!("the recipe asks the model: {task}"));
        }
        Event::RunStarted {
            task,
            url,
            model,
            max_steps,
        } => {
            // A run after others (a follow-up, the next task) opens with
            // its task, so its steps, numbered from 1 again, read as its
            // own. (A replay shows the row for the first run too.)
            if !state.log.is_empty() {
                push_log(state, LogEntry::row(rows::TASK, task, Outcome::Ok));
            }
            if state.recipe.is_none() && max_steps > 0 {
                state.conversation_tasks += 1;
            }
            state.recipe_began = state.recipe.is_some();
            state.status.run = RunStatus::Running;
            state.status.url = url;
            if state.recipe.is_none() {
                // A recipe's "model" is a label; the configured model
                // stays, as it decides whether a task can start.
                state.status.model = model;
            }
            state.status.max_steps = max_steps;
            state.status.step = 0;
            state.status.cache = None;
            state.run_log_start = state.log.len();
        }
        Event::Observation(o) => {
            state.status.step = o.step;
            state.status.url = o.url;
            let previous = std::mem::take(&mut state.reflection);
            let has_fields = !previous.evaluation.is_empty()
                || !previous.memory.is_empty()
                || !previous.next_goal.is_empty();
            state.reflection = if has_fields {
                ReflectionView {
                    step: o.step,
                    streaming: true,
                    shown_step: Some(previous.shown_step.unwrap_or(previous.step)),
                    ..previous
                }
            } else {
                ReflectionView {
                    step: o.step,
                    streaming: true,
                    ..ReflectionView::default()
                }
            };
            state.reflection.raw.clear();
            state.reflection_view = ListView::default();
        }
        // The status line is where the person looks while a recipe runs;
        // the log keeps every line, in order with the steps.
        Event::ScriptLog { line } => {
            state.notice(false, format!("log: {line}"));
            push_log(state, LogEntry::row(rows::LOG, line, Outcome::Ok));
        }
        Event::Text { content } => {
            if state.reflection.shown_step.take().is_some() {
                let step = state.reflection.step;
                state.reflection = ReflectionView {
                    step,
                    ..ReflectionView::default()
                };
            }
            state.reflection.push_stream(&content);
        }
        Event::ToolCall { name, parameters } => {
            if state.reflection.shown_step.take().is_some() {
                // The fields on screen are the previous step's; the new
                // action must not be read as following from them.
                let step = state.reflection.step;
                state.reflection = ReflectionView {
                    step,
                    ..ReflectionView::default()
                };
            }
            let by_calls = (state.recipe.is_some() && state.recipe_subgoals.is_empty())
                || (state.mcp && !state.run_active());
            if by_calls {
                // A recipe proposes its steps in order without observing
                // first, and an MCP client's calls are its steps, so each
                // call opens the next step.
                state.status.step += 1;
            }
            state.reflection.streaming = false;
            state.reflection.action = Some(format!("{name} {parameters}"));
            let target = match parameters.get("index").and_then(Value::as_u64) {
                Some(index) => target_text(
                    state,
                    Some(&Target::Index {
                        index: crate::dom::ElementIndex(
                            usize::try_from(index).unwrap_or(usize::MAX),
                        ),
                    }),
                ),
                None => parameters
                    .get("selector")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            };
            let step = state.status.step;
            if !step_entry(state, step).action.is_empty() {
                // The step's open row belongs to a call still going: this
                // one gets a row of its own.
                push_log(
                    state,
                    LogEntry {
                        step: Some(step),
                        ..LogEntry::row("", "", Outcome::Pending)
                    },
                );
            }
            let within = running_custom_action(state);
            let entry = step_entry(state, step);
            entry.action = name;
            entry.params = parameters.to_string();
            entry.target = target;
            entry.within = within;
        }
        Event::ToolResult { name, result } => {
            // The result belongs to the latest call of that name still
            // running: a custom action's comes after its own steps'.
            let start = state.run_log_start.min(state.log.len());
            let open = state.log[start..].iter().rposition(|e| {
                e.action == name && e.record.is_none() && e.outcome == Outcome::Pending
            });
            if let Some(at) = open {
                state.log[start + at].outcome = Outcome::from(&result);
            }
        }
        Event::Step(record) => {
            if let Some(usage) = record.usage {
                state.status.tokens.add(usage);
            }
            let raw = std::mem::take(&mut state.reflection.raw);
            state.reflection.streaming = false;
            state.reflection.shown_step = None;
            state.reflection.evaluation = record.reflection.evaluation_previous_goal.clone();
            state.reflection.memory = record.reflection.memory.clone();
            state.reflection.next_goal = record.reflection.next_goal.clone();
            let (name, params) = match record.action.as_object().and_then(|o| o.iter().next()) {
                Some((name, params)) => (name.clone(), params.to_string()),
                None => ("(none)".to_string(), String::new()),
            };
            state.reflection.action = Some(format!("{name} {params}"));
            let entry = step_entry(state, record.index);
            entry.within = record.within;
            entry.action = name;
            entry.params = params;
            entry.outcome = Outcome::from(&record.result);
            entry.ms = Some(record.timings.act_ms);
            entry.wait_ms = (record.timings.wait_ms > 0).then_some(record.timings.wait_ms);
            entry.raw_response = raw;
            let result = record.result.clone();
            entry.record = Some(record);
            log_side_effects(state, &result);
        }
        Event::Done { success, text, .. } if !state.recipe_subgoals.is_empty() => {
            if let Some(step) = state.recipe_subgoals.pop() {
                state.status.step = step;
            }
            state.run_log_start = state.log.len();
            state.reflection.streaming = false;
            let outcome = if success { "done" } else { "not done" };
            state.notice(
                !success,
                format!("sub-goal {outcome}: {text}; the recipe goes on"),
            );
        }
        Event::HandOver { step, reason, .. } => {
            push_log(
                state,
                LogEntry {
                    step: Some(step),
                    ..LogEntry::row(rows::HAND_OVER, reason.clone(), Outcome::Ok)
                },
            );
            state.notice(
                false,
                "the agent needs you: act on the page (`:` line or the browser window), then press H to hand it back"
                    .into(),
            );
            state.status.run = RunStatus::HandedOver { reason };
            state.reflection.streaming = false;
        }
        // The run waits for the person; `RunEnded` leaves it so.
        Event::Done {
            reason: EndReason::HandOver,
            ..
        } => {}
        Event::Done { success, text, .. } => {
            state.status.run = RunStatus::Finished { success };
            state.recipe = None;
            state.recipe_began = false;
            state.reflection.streaming = false;
            state.notice(
                !success,
                if success {
                    format!("done: {text}")
                } else {
                    format!("not done: {text}")
                },
            );
        }
        Event::Error { error, .. } => state.notice(true, error),
        Event::Approval(record) => {
            if record.decision != Verdict::Approved || record.note.is_none() {
                state.notice(false, format!("step {}: {}", record.step, record.decision));
            }
        }
        Event::SitemapReloaded { file, error } => match error {
            Some(error) => state.status.sitemaps = LoadState::Failed(error),
            None => state.notice(false, format!("reloaded {file}")),
        },
        Event::ScriptReloaded {
            file,
            removed: true,
            ..
        } => state.notice(
            false,
            format!("{file} was removed: its actions and recipes are gone"),
        ),
        Event::ScriptReloaded { file, error, .. } => match error {
            Some(error) => state.status.scripts = LoadState::Failed(error),
            // The count comes with the catalog the reload sent before.
            None => state.notice(false, format!("reloaded {file}")),
        },
        Event::PersonMessage { step, text } => {
            let waiting = state.log.iter().position(|e| {
                e.action == rows::MESSAGE && e.outcome == Outcome::Pending && e.target == text
            });
            match waiting {
                Some(at) => {
                    state.log[at].step = Some(step);
                    state.log[at].outcome = Outcome::Ok;
                }
                None => push_log(
                    state,
                    LogEntry {
                        step: Some(step),
                        ..LogEntry::row(rows::MESSAGE, text, Outcome::Ok)
                    },
                ),
            }
        }
        Event::StepRetried { step, reason } => {
            push_log(
                state,
                LogEntry {
                    step: Some(step),
                    ..LogEntry::row(rows::RETRY, reason, Outcome::Ok)
                },
            );
            state.notice(false, format!("step {step} is asked again"));
        }
        Event::Resumed(record) => {
            let text = format!("continues {} at step {}", record.from, record.step);
            push_log(state, LogEntry::row(rows::RESUMED, text, Outcome::Ok));
            state.status.step = record.step.saturating_sub(1);
        }
        Event::ApprovalModeChanged { .. }
        | Event::RunSettings(_)
        | Event::Listing(_)
        | Event::StepEnded { .. }
        | Event::ActionRequest { .. } => {}
        Event::Healed(heal) => {
            push_log(state, healed_row(&heal));
            state.notice(
                !heal.success,
                format!(
                    "step {} healed: {} → {} ({} model calls)",
                    heal.step,
                    heal.old,
                    if heal.success {
                        heal.new.as_str()
                    } else {
                        "not healed"
                    },
                    heal.model_calls
                ),
            )
        }
        Event::Cache(cache) => {
            state.status.cache = Some(cache.state);
            push_log(
                state,
                LogEntry {
                    step: None,
                    manual_id: None,
                    action: "cache".into(),
                    params: format!(
                        "{}: {} model calls, {} tokens",
                        cache.state.as_str(),
                        cache.model_calls,
                        cache.usage.total_tokens
                    ),
                    target: String::new(),
                    outcome: if cache.success {
                        Outcome::Ok
                    } else {
                        Outcome::Failed {
                            reason: "not done".into(),
                            message: cache.note.clone().unwrap_or_default(),
                        }
                    },
                    ms: None,
                    wait_ms: None,
                    record: None,
                    raw_response: String::new(),
                    within: None,
                },
            );
            state.notice(
                false,
                format!(
                    "cache: {} ({} model calls, {} tokens)",
                    cache.state.as_str(),
                    cache.model_calls,
                    cache.usage.total_tokens
                ),
            );
        }
        Event::RecipeRewritten { file, written, .. } => state.notice(
            !written,
            if written {
                format!("repaired recipe written to {file}")
            } else {
                format!("repaired recipe not written to {file}")
            },
        ),
    }
}
