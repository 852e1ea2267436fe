//! A session as a conversation: what a run starts from besides its task
//! ([`Prior`]), and how that is read back from the events a run leaves
//! ([`Conversation`]).
//!
//! The same fold serves the workbench's follow-ups (over the events of the
//! session so far) and a resume (over the events of a trace), so a run
//! that continues from a file is told exactly what a run that continues
//! in memory would be.
//!
//! Deciding where a killed run resumes rests on what the trace records
//! around each action: `tool_call` before it is approved,
//! `action_request` just before it runs, `tool_result` and `step` after,
//! and `step_ended` once every action of the step has run. A step without
//! `step_ended` did not finish and is asked for again; its actions that
//! have a result are in the history as done; an action that was requested
//! but has no result may or may not have happened, and the model is told
//! so rather than having it run again blindly.

use serde_json::Value;

use crate::events::{
    EarlierTask, EndReason, Event, PriorStep, ResumeRecord, RunSettings, TokenUsage,
};

use super::history::{result_text, shown_action};
use super::prompt::HistoryEntry;

/// What a run starts from besides its task: the earlier tasks of its
/// conversation and the memory they left (a follow-up), or the steps a
/// run already took (a resume).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prior {
    /// Finished tasks of the same conversation, oldest first.
    pub earlier: Vec<EarlierTask>,
    /// What the model kept in memory at the end of the last task.
    pub memory: String,
    /// Steps already taken by the run being resumed.
    pub history: Vec<HistoryEntry>,
    /// The person's messages so far, each with the step that carried it.
    pub messages: Vec<(usize, String)>,
    /// The step to start at (1 for a new run).
    pub next_step: usize,
    /// Tokens already used by the run being resumed.
    pub usage: TokenUsage,
    /// The trace of the run being resumed.
    pub resumed_from: Option<String>,
    /// What the person reads about the resume (the model reads the
    /// history).
    pub note: String,
    /// Whether the run follows up on earlier tasks (false: a fresh
    /// conversation, even when it has none).
    pub follow_up: bool,
    /// The model handed the page to a person for this reason, and the
    /// person has handed it back: the first step tells the model what
    /// the page is now.
    pub handed_back: Option<String>,
}

impl Prior {
    /// A run that follows up on nothing.
    pub fn fresh() -> Self {
        Prior {
            next_step: 1,
            ..Prior::default()
        }
    }

    /// The record a resumed run writes first, naming the trace it
    /// continues.
    pub fn resume_record(&self) -> Option<ResumeRecord> {
        let from = self.resumed_from.clone()?;
        Some(ResumeRecord {
            from,
            step: self.next_step.max(1),
            history: self.history.iter().map(prior_step).collect(),
            earlier: self.earlier.clone(),
            messages: self.messages.clone(),
            usage: self.usage,
            note: self.note.clone(),
        })
    }
}

fn prior_step(entry: &HistoryEntry) -> PriorStep {
    PriorStep {
        step: entry.step,
        reflection: entry.reflection.clone(),
        action: entry.action.clone(),
        result: entry.result.clone(),
        url: entry.url.clone(),
    }
}

fn history_entry(step: &PriorStep) -> HistoryEntry {
    HistoryEntry {
        step: step.step,
        reflection: step.reflection.clone(),
        action: step.action.clone(),
        result: step.result.clone(),
        url: step.url.clone(),
    }
}

/// An action whose end the events have not shown yet.
#[derive(Debug, Clone, PartialEq)]
struct Pending {
    name: String,
    parameters: Value,
    /// `action_request` was seen: it went to the page.
    requested: bool,
    /// `tool_result` was seen: its result, as the model reads it.
    result: Option<String>,
}

/// The run of a conversation that has not ended (yet, or ever).
#[derive(Debug, Clone, PartialEq)]
struct OpenRun {
    task: String,
    max_steps: usize,
    history: Vec<HistoryEntry>,
    messages: Vec<(usize, String)>,
    /// The highest step whose every action has run.
    ended: usize,
    /// The page of the step being worked on.
    url: String,
    usage: TokenUsage,
    pending: Option<Pending>,
    /// Why the model handed the page to a person, when the run waits for
    /// them.
    handed_over: Option<String>,
}

/// Where a run that did not end picks up: its task and what it had
/// reached, the page it was on and how it was set up.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumePoint {
    /// The task.
    pub task: String,
    /// Everything the run had reached, to start the agent from.
    pub prior: Prior,
    /// The step limit the run had.
    pub max_steps: usize,
    /// The page it was last on (empty when none was seen).
    pub url: String,
    /// The approval mode last in force (`never`, `risky`, `always`).
    pub approval: Option<String>,
    /// How its session was set up (profile, state file).
    pub settings: RunSettings,
}

/// A conversation as its events tell it: finished tasks, the memory they
/// left, the run still open, the page, the approval mode.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversation {
    earlier: Vec<EarlierTask>,
    memory: String,
    open: Option<OpenRun>,
    /// The last run, when the person stopped it: it ended (a follow-up
    /// reads it as an earlier task), yet it can be resumed where it was
    /// stopped, as a run cut off by a crash can.
    stopped: Option<OpenRun>,
    last_url: String,
    approval: Option<String>,
    settings: RunSettings,
}

impl Conversation {
    /// An empty conversation.
    pub fn new() -> Self {
        Conversation::default()
    }

    /// The conversation `events` tell, in order.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event>) -> Self {
        let mut conversation = Conversation::new();
        for event in events {
            conversation.apply(event);
        }
        conversation
    }

    /// Whether nothing has happened in it yet.
    pub fn is_empty(&self) -> bool {
        self.earlier.is_empty() && self.open.is_none()
    }

    /// The finished tasks, oldest first.
    pub fn earlier(&self) -> &[EarlierTask] {
        &self.earlier
    }

    /// The page last seen.
    pub fn last_url(&self) -> &str {
        &self.last_url
    }

    /// Whether a run is open (still going, or cut off).
    pub fn has_open_run(&self) -> bool {
        self.open.is_some()
    }

    /// Takes one event into account.
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::RunStarted {
                task,
                url,
                max_steps,
                ..
            } => {
                if let Some(open) = self.open.take() {
                    // A run that ended without saying so (its process
                    // died, or it could not start) is remembered as such.
                    self.earlier.push(EarlierTask {
                        task: open.task,
                        success: false,
                        reason: EndReason::Fatal,
                        text: "it ended without a result".into(),
                        steps: open.ended,
                    });
                }
                self.stopped = None;
                if !url.is_empty() {
                    self.last_url = url.clone();
                }
                self.open = Some(OpenRun {
                    task: task.clone(),
                    max_steps: *max_steps,
                    history: Vec::new(),
                    messages: Vec::new(),
                    ended: 0,
                    url: url.clone(),
                    usage: TokenUsage::default(),
                    pending: None,
                    handed_over: None,
                });
            }
            Event::RunSettings(settings) => {
                if !settings.follow_up {
                    self.earlier.clear();
                    self.memory.clear();
                }
                self.approval = Some(settings.approval.clone());
                self.settings = settings.clone();
            }
            Event::ApprovalModeChanged { mode } => self.approval = Some(mode.clone()),
            Event::Resumed(record) => {
                self.earlier = record.earlier.clone();
                if let Some(open) = self.open.as_mut() {
                    open.history = record.history.iter().map(history_entry).collect();
                    open.messages = record.messages.clone();
                    open.ended = record.step.saturating_sub(1);
                    open.usage = record.usage;
                }
            }
            Event::Observation(o) => {
                self.last_url = o.url.clone();
                if let Some(open) = self.open.as_mut() {
                    open.url = o.url.clone();
                }
            }
            Event::ToolCall { name, parameters } => {
                if let Some(open) = self.open.as_mut() {
                    open.pending = Some(Pending {
                        name: name.clone(),
                        parameters: parameters.clone(),
                        requested: false,
                        result: None,
                    });
                }
            }
            Event::ActionRequest { .. } => {
                if let Some(pending) = self.open.as_mut().and_then(|o| o.pending.as_mut()) {
                    pending.requested = true;
                }
            }
            Event::ToolResult { result, .. } => {
                if let Some(pending) = self.open.as_mut().and_then(|o| o.pending.as_mut()) {
                    pending.result = Some(result_text(result));
                }
            }
            // The model's history holds its own actions: a custom action's
            // steps are in the action's result.
            Event::Step(record) if record.within.is_some() => {}
            Event::Step(record) => {
                if !record.reflection.memory.trim().is_empty() {
                    self.memory = record.reflection.memory.clone();
                }
                if let Some(open) = self.open.as_mut() {
                    open.pending = None;
                    if let Some(usage) = record.usage {
                        open.usage.add(usage);
                    }
                    open.history.push(HistoryEntry {
                        step: record.index,
                        reflection: record.reflection.clone(),
                        action: if record.action.is_null() {
                            "(no action)".into()
                        } else {
                            shown_action(&record.action, record.person.as_ref())
                        },
                        result: result_text(&record.result),
                        url: open.url.clone(),
                    });
                }
            }
            Event::HandOver { reason, .. } => {
                if let Some(open) = self.open.as_mut() {
                    open.handed_over = Some(reason.clone());
                }
            }
            Event::PersonMessage { step, text } => {
                if let Some(open) = self.open.as_mut() {
                    open.messages.push((*step, text.clone()));
                }
            }
            Event::StepRetried { step, .. } => {
                if let Some(open) = self.open.as_mut() {
                    open.ended = open.ended.min(step.saturating_sub(1));
                    mark_retried(&mut open.history, *step);
                }
            }
            Event::StepEnded { step } => {
                if let Some(open) = self.open.as_mut() {
                    open.ended = open.ended.max(*step);
                    open.pending = None;
                }
            }
            Event::Done {
                reason: EndReason::HandOver,
                steps,
                ..
            } => {
                // A run handed to a person stays open: it goes on when
                // they hand back.
                if let Some(open) = self.open.as_mut() {
                    open.ended = open.ended.max(*steps);
                    open.pending = None;
                }
            }
            Event::Done {
                success,
                text,
                reason,
                steps,
                ..
            } => {
                if let Some(mut open) = self.open.take() {
                    self.earlier.push(EarlierTask {
                        task: open.task.clone(),
                        success: *success,
                        reason: *reason,
                        text: text.clone(),
                        steps: *steps,
                    });
                    if *reason == EndReason::Stopped {
                        // The step the stop cut short ended with no
                        // action; resumed, it is asked again.
                        open.ended = open.ended.min(*steps);
                        self.stopped = Some(open);
                    }
                }
            }
            _ => {}
        }
    }

    /// What a new task that follows up on this conversation starts from.
    pub fn follow_up(&self) -> Prior {
        Prior {
            earlier: self.earlier.clone(),
            memory: self.memory.clone(),
            follow_up: true,
            ..Prior::fresh()
        }
    }

    /// Where the open run picks up, when one is open: at the first step
    /// that did not finish, with every action that ran in its history.
    /// A run the person stopped picks up the same way, as the last thing
    /// of its conversation. `from` names the trace it is read from.
    pub fn resume_point(&self, from: &str) -> Option<ResumePoint> {
        let (open, earlier) = match (&self.open, &self.stopped) {
            (Some(open), _) => (open, self.earlier.as_slice()),
            // The stopped run is the last earlier task; resumed, it is
            // the run itself again.
            (None, Some(stopped)) => (
                stopped,
                &self.earlier[..self.earlier.len().saturating_sub(1)],
            ),
            (None, None) => return None,
        };
        let next_step = open.ended + 1;
        let mut history = open.history.clone();
        let mut note = format!("resumed from {from} at step {next_step}");
        if let Some(pending) = &open.pending {
            let action = format!("{} {}", pending.name, pending.parameters);
            let result = match (&pending.result, pending.requested) {
                (Some(result), _) => result.clone(),
                (None, true) => "interrupted while it ran: it may or may not have happened; look \
                                 at the page before doing it again"
                    .to_string(),
                (None, false) => "not run: the run was interrupted before it ran (it may have \
                                  been waiting for the person's approval)"
                    .to_string(),
            };
            note.push_str(&format!("; {action}: {result}"));
            history.push(HistoryEntry {
                step: next_step,
                reflection: Default::default(),
                action,
                result,
                url: open.url.clone(),
            });
        }
        if let Some(last) = history.last_mut().filter(|e| e.step == next_step) {
            last.result.push_str(
                "; then the run was interrupted and resumed here: this step is asked again",
            );
        }
        if let Some(reason) = &open.handed_over {
            note.push_str(&format!("; it was handed over to a person: {reason}"));
        }
        if self.open.is_none() {
            note.push_str("; it had been stopped");
        }
        Some(ResumePoint {
            task: open.task.clone(),
            prior: Prior {
                earlier: earlier.to_vec(),
                memory: String::new(),
                history,
                messages: open.messages.clone(),
                next_step,
                usage: open.usage,
                resumed_from: Some(from.to_string()),
                note,
                follow_up: self.settings.follow_up,
                handed_back: open.handed_over.clone(),
            },
            max_steps: open.max_steps,
            url: if open.url.is_empty() {
                self.last_url.clone()
            } else {
                open.url.clone()
            },
            approval: self.approval.clone(),
            settings: self.settings.clone(),
        })
    }
}

/// Notes in the history that the person asked for `step` again, on its
/// last attempt.
pub(super) fn mark_retried(history: &mut [HistoryEntry], step: usize) {
    if let Some(entry) = history.iter_mut().rev().find(|e| e.step == step) {
        if !entry.result.contains(RETRIED_NOTE) {
            entry.result.push_str(RETRIED_NOTE);
        }
    }
}

/// What the history says of an attempt the person asked to be replaced.
const RETRIED_NOTE: &str = "; the person asked for this step again";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::ActionResult;
    use crate::events::{ObservationSummary, StepRecord};
    use serde_json::json;

    fn started(task: &str) -> Event {
        Event::RunStarted {
            task: task.into(),
            url: "http://a.test/".into(),
            model: "m".into(),
            max_steps: 10,
        }
    }

    fn observed(step: usize, url: &str) -> Event {
        Event::Observation(ObservationSummary {
            step,
            url: url.into(),
            title: String::new(),
            elements: 1,
            new_elements: 0,
            listing_chars: 1,
        })
    }

    fn step(index: usize, action: Value, memory: &str) -> Event {
        let mut record =
            StepRecord::taken(index, action, ActionResult::ok(), String::new(), (0, 0));
        record.reflection.memory = memory.into();
        Event::Step(record)
    }

    fn call(action: Value) -> Vec<Event> {
        let (name, parameters) = action
            .as_object()
            .and_then(|o| o.iter().next())
            .map(|(k, v)| (k.clone(), v.clone()))
            .unwrap();
        vec![
            Event::ToolCall {
                name: name.clone(),
                parameters: parameters.clone(),
            },
            Event::ActionRequest {
                correlation_id: "x".into(),
                action: name.clone(),
                parameters,
            },
        ]
    }

    #[test]
    fn a_follow_up_knows_the_earlier_tasks_and_the_last_memory() {
        let events = vec![
            started("ship order 1003"),
            observed(1, "http://a.test/orders/1003"),
            step(1, json!({"click": {"index": 4}}), "order 1003 is the one"),
            Event::StepEnded { step: 1 },
            Event::Done {
                success: true,
                text: "shipped 1003".into(),
                reason: EndReason::Done,
                steps: 1,
                usage: TokenUsage::default(),
            },
        ];
        let conversation = Conversation::from_events(&events);
        assert!(conversation.resume_point("t").is_none(), "nothing is open");
        let prior = conversation.follow_up();
        assert_eq!(prior.earlier.len(), 1);
        assert_eq!(prior.earlier[0].task, "ship order 1003");
        assert_eq!(prior.earlier[0].text, "shipped 1003");
        assert_eq!(prior.memory, "order 1003 is the one");
        assert_eq!(conversation.last_url(), "http://a.test/orders/1003");
        // A fresh run in the same trace forgets them.
        let mut fresh = conversation.clone();
        fresh.apply(&started("something else"));
        fresh.apply(&Event::RunSettings(RunSettings {
            approval: "risky".into(),
            follow_up: false,
            ..RunSettings::default()
        }));
        assert!(fresh.earlier().is_empty());
    }

    #[test]
    fn a_run_handed_to_a_person_stays_open_and_resumes_after_its_step() {
        let mut events = vec![started("sign in"), observed(1, "http://a.test/login")];
        events.extend(call(json!({"hand_over": {"reason": "solve the CAPTCHA"}})));
        events.push(step(
            1,
            json!({"hand_over": {"reason": "solve the CAPTCHA"}}),
            "",
        ));
        events.push(Event::HandOver {
            step: 1,
            reason: "solve the CAPTCHA".into(),
            url: "http://a.test/login".into(),
            title: "Sign in".into(),
        });
        events.push(Event::StepEnded { step: 1 });
        events.push(Event::Done {
            success: false,
            text: "a person is needed: solve the CAPTCHA".into(),
            reason: EndReason::HandOver,
            steps: 1,
            usage: TokenUsage::default(),
        });
        let conversation = Conversation::from_events(&events);
        assert!(conversation.has_open_run(), "it waits for the person");
        assert!(conversation.earlier().is_empty());
        let point = conversation.resume_point("t").expect("it resumes");
        assert_eq!(
            point.prior.next_step, 2,
            "the hand-over step is not asked again"
        );
        assert_eq!(
            point.prior.handed_back.as_deref(),
            Some("solve the CAPTCHA")
        );
        assert_eq!(point.prior.history.len(), 1);
        assert_eq!(point.url, "http://a.test/login");
    }

    #[test]
    fn a_run_killed_mid_list_resumes_at_its_step_without_repeating_what_ran() {
        let mut events = vec![
            started("pay"),
            Event::RunSettings(RunSettings {
                approval: "risky".into(),
                state: Some("state.json".into()),
                ..RunSettings::default()
            }),
            observed(1, "http://a.test/cart"),
        ];
        events.extend(call(json!({"click": {"index": 1}})));
        events.push(step(1, json!({"click": {"index": 1}}), ""));
        events.push(Event::StepEnded { step: 1 });
        events.push(observed(2, "http://a.test/cart"));
        events.extend(call(json!({"click": {"index": 2}})));
        events.push(step(2, json!({"click": {"index": 2}}), ""));
        // The second action of the list was waiting for approval.
        events.push(Event::ToolCall {
            name: "click".into(),
            parameters: json!({"index": 3}),
        });
        events.push(Event::ApprovalModeChanged {
            mode: "always".into(),
        });
        let point = Conversation::from_events(&events)
            .resume_point("old.jsonl")
            .expect("the run is open");
        assert_eq!(point.prior.next_step, 2);
        assert_eq!(point.task, "pay");
        assert_eq!(point.url, "http://a.test/cart");
        assert_eq!(point.approval.as_deref(), Some("always"));
        assert_eq!(point.settings.state.as_deref(), Some("state.json"));
        let history = &point.prior.history;
        assert_eq!(history.len(), 3, "{history:#?}");
        assert_eq!(history[1].step, 2);
        assert_eq!(history[1].result, "ok");
        assert!(history[2].result.starts_with("not run"), "{history:#?}");
        assert!(history[2].result.contains("asked again"), "{history:#?}");

        // Killed while the action ran: the model is told it may have
        // happened.
        let mut running = events.clone();
        running.push(Event::ActionRequest {
            correlation_id: "step-2".into(),
            action: "click".into(),
            parameters: json!({"index": 3}),
        });
        let point = Conversation::from_events(&running)
            .resume_point("old.jsonl")
            .unwrap();
        let last = point.prior.history.last().unwrap();
        assert!(last.result.contains("may or may not"), "{last:?}");
    }

    #[test]
    fn a_retried_step_is_open_again_and_marked_in_the_history() {
        let events = vec![
            started("t"),
            observed(1, "http://a.test/"),
            step(1, json!({"click": {"index": 9}}), ""),
            Event::StepEnded { step: 1 },
            Event::StepRetried {
                step: 1,
                reason: "failed".into(),
            },
        ];
        let point = Conversation::from_events(&events)
            .resume_point("x")
            .unwrap();
        assert_eq!(point.prior.next_step, 1);
        assert!(point.prior.history[0].result.contains(RETRIED_NOTE));
    }
}
