//! One step: observe the page, ask the model (`ask`), read its answer,
//! act on it (`act`), each phase able to end the step early, recorded. The
//! draft of a step's record goes with it through the phases.

use std::time::Instant;

use serde_json::Value;

use crate::actions::{Action, ActionResult};
use crate::dom::PageState;
use crate::environment::Environment;
use crate::events::{
    EndReason, Event, ListingRecord, ObservationSummary, PersonDecision, Reflection, StepRecord,
    StepTimings, TokenUsage,
};
use crate::llm::ChatResponse;

use super::history::{action_text, result_text, split_action};
use super::normalize::{self, normalize};
use super::prompt::{self, HistoryEntry};
use super::run::{Agent, Fixed, RunState, StepEnd};

/// What is known of a step as it goes; recorded once its result is.
pub(super) struct StepDraft {
    pub(super) index: usize,
    pub(super) url: String,
    pub(super) reflection: Reflection,
    /// `{"name": {params}}`, or `null` when there was no action.
    pub(super) action: Value,
    /// The action as the model reads it in the history.
    pub(super) shown: String,
    pub(super) repairs: Vec<String>,
    pub(super) timings: StepTimings,
    pub(super) usage: Option<TokenUsage>,
    pub(super) prompt_chars: usize,
    /// The messages as sent, each headed by its role.
    pub(super) prompt: String,
    /// The model's answer as received.
    pub(super) raw_response: String,
    /// What the person decided at the action's approval.
    pub(super) person: Option<PersonDecision>,
}

impl StepDraft {
    pub(super) fn new(index: usize) -> Self {
        StepDraft {
            index,
            url: String::new(),
            reflection: Reflection::default(),
            action: Value::Null,
            shown: String::new(),
            repairs: Vec::new(),
            timings: StepTimings::default(),
            usage: None,
            prompt_chars: 0,
            prompt: String::new(),
            raw_response: String::new(),
            person: None,
        }
    }

    /// The step's record, with its result.
    pub(super) fn into_record(self, result: ActionResult) -> StepRecord {
        StepRecord {
            index: self.index,
            reflection: self.reflection,
            action: self.action,
            result,
            repairs: self.repairs,
            timings: self.timings,
            usage: self.usage,
            prompt_chars: self.prompt_chars,
            prompt: self.prompt,
            raw_response: self.raw_response,
            within: None,
            person: self.person,
        }
    }
}

/// The model's usable answer to a step: the first action and the rest of
/// its list.
pub(super) struct Answer {
    pub(super) action: Action,
    pub(super) rest: Vec<(Value, Result<Action, String>)>,
}

impl<E: Environment> Agent<E> {
    /// One step in four phases: observe the page, ask the model, read its
    /// answer, act on it (the whole list). Each phase may end the step
    /// early, recorded.
    pub(super) async fn step(
        &mut self,
        step: usize,
        fixed: &Fixed<'_>,
        state: &mut RunState,
    ) -> StepEnd {
        let end = self.step_phases(step, fixed, state).await;
        if !matches!(end, StepEnd::Retry(_)) {
            // Every action of the step has run: a resume starts after it.
            self.emit(Event::StepEnded { step });
        }
        end
    }

    async fn step_phases(
        &mut self,
        step: usize,
        fixed: &Fixed<'_>,
        state: &mut RunState,
    ) -> StepEnd {
        let mut draft = StepDraft::new(step);
        let page = match self.observe(step, &mut draft, state).await {
            Ok(page) => page,
            Err(end) => return end,
        };
        if let Some(reason) = state.handed_back.take() {
            self.tell_handed_back(step, &reason, &page, state);
        }
        let response = match self.ask(step, fixed, &page, state, &mut draft).await {
            Ok(response) => response,
            Err(end) => return end,
        };
        let answer = match self.read_answer(step, &response, &mut draft, state) {
            Ok(answer) => answer,
            Err(end) => return end,
        };
        self.act_all(step, answer, page, draft, state).await
    }

    /// Phase 1: the page as it is now. A browser that could not be had
    /// ends the run; any other failure is the step's result.
    async fn observe(
        &mut self,
        step: usize,
        draft: &mut StepDraft,
        state: &mut RunState,
    ) -> Result<PageState, StepEnd> {
        let started = Instant::now();
        let observed = self.environment.observe().await;
        draft.timings.observe_ms = ms_since(started);
        let page = match observed {
            Ok(page) => page,
            Err(error) => {
                self.emit(Event::Error {
                    error: format!("observing the page failed: {}", error.message),
                    fatal: error.fatal,
                });
                if error.fatal {
                    let text = format!("the browser failed: {}", error.message);
                    return Err(StepEnd::Finished(state.outcome(
                        false,
                        text,
                        EndReason::Fatal,
                        step - 1,
                    )));
                }
                let mut failed = StepDraft::new(step);
                failed.timings = draft.timings;
                failed.shown = "(no action: the page could not be observed)".into();
                let result = ActionResult::unknown(format!(
                    "the page could not be observed: {}",
                    error.message
                ));
                self.record(state, failed, result);
                return Err(StepEnd::Continue);
            }
        };
        draft.url = page.url.clone();
        self.emit(Event::Observation(ObservationSummary {
            step,
            url: page.url.clone(),
            title: page.title.clone(),
            elements: page.elements.len(),
            new_elements: page.elements.iter().filter(|e| e.is_new).count(),
            listing_chars: page.listing.chars().count(),
        }));
        self.emit(Event::Listing(ListingRecord {
            step,
            url: page.url.clone(),
            title: page.title.clone(),
            listing: page.listing.clone(),
        }));
        Ok(page)
    }

    /// Tells the model, in the person's words, that the person took the
    /// page for `reason`, acted, and handed it back, and what the page is
    /// now. The URL and title are the page's own words, so they go inside
    /// the fence.
    fn tell_handed_back(&self, step: usize, reason: &str, page: &PageState, state: &mut RunState) {
        let text = format!(
            "You handed the page over to me ({}). I acted on it myself and handed it back; \
             the page is now {}. Look at it before going on, and hand over again only if the \
             wall is still there.",
            crate::fence::defuse(reason),
            crate::fence::fence(&format!("{} — {}", page.url, page.title)),
        );
        self.emit(Event::PersonMessage {
            step,
            text: text.clone(),
        });
        state.messages.push((step, text));
    }

    /// Phase 3: the reflection and a valid action from the answer. An
    /// answer without one runs nothing; the model reads why at the next
    /// step, and too many in a row end the run.
    fn read_answer(
        &mut self,
        step: usize,
        response: &ChatResponse,
        draft: &mut StepDraft,
        state: &mut RunState,
    ) -> Result<Answer, StepEnd> {
        let cut_off = response.finish_reason.as_deref() == Some("length");
        let turn = match normalize(response, self.road.catalog()) {
            Ok(turn) => turn,
            Err(error) => {
                self.emit(Event::Error {
                    error: format!("step {step}: the model's answer was unusable: {error}"),
                    fatal: false,
                });
                let mut unusable = std::mem::replace(draft, StepDraft::new(step));
                unusable.shown = "(no usable answer)".into();
                self.record(
                    state,
                    unusable,
                    ActionResult::invalid_params(error.to_string()),
                );
                return Err(self.after_invalid_answer(step, state, response));
            }
        };
        draft.reflection = turn.reflection;
        draft.repairs = turn.repairs;
        draft.action = turn.proposed.clone();
        draft.shown = if turn.proposed.is_null() {
            "(no action)".into()
        } else {
            action_text(&turn.proposed)
        };
        state.last_reflection = draft.reflection.clone();
        let checked = match turn.action {
            // An answer cut at the token bound is unfinished, whatever
            // part of it happens to parse.
            Ok(_) if cut_off => Err(cut_off_message(self.llm.config().max_output_tokens)),
            other => other,
        };
        match checked {
            Ok(action) => {
                state.invalid_in_row = 0;
                Ok(Answer {
                    action,
                    rest: turn.rest,
                })
            }
            Err(message) => {
                // Nothing runs on the page. The model sees this as the
                // step's result and can correct itself at the next step.
                let result = ActionResult::invalid_params(message);
                if !turn.proposed.is_null() {
                    let (name, parameters) = split_action(&turn.proposed);
                    self.emit(Event::ToolCall {
                        name: name.clone(),
                        parameters,
                    });
                    self.emit(Event::ToolResult {
                        name,
                        result: result.clone(),
                    });
                }
                let invalid = std::mem::replace(draft, StepDraft::new(step));
                self.record(state, invalid, result);
                Err(self.after_invalid_answer(step, state, response))
            }
        }
    }

    /// Counts an answer without a usable action; after
    /// `max_invalid_answers` in a row the run ends, quoting the last one.
    pub(super) fn after_invalid_answer(
        &self,
        step: usize,
        state: &mut RunState,
        response: &ChatResponse,
    ) -> StepEnd {
        state.invalid_in_row += 1;
        if state.invalid_in_row < self.max_invalid_answers {
            return StepEnd::Continue;
        }
        let message = format!(
            "the model gave {} answers in a row without a usable action (agent.max_invalid_answers); the last one was: {}",
            state.invalid_in_row,
            prompt::clip(&answer_quote(response), 300)
        );
        self.emit(Event::Error {
            error: message.clone(),
            fatal: true,
        });
        StepEnd::Finished(state.outcome(false, message, EndReason::Fatal, step))
    }

    /// Adds the step to the history the model reads and emits its record.
    pub(super) fn record(&mut self, state: &mut RunState, draft: StepDraft, result: ActionResult) {
        state.last_failed = (!result.is_ok()).then_some(draft.index);
        state.history.push(HistoryEntry {
            step: draft.index,
            reflection: draft.reflection.clone(),
            action: draft.shown.clone(),
            result: result_text(&result),
            url: draft.url.clone(),
        });
        self.emit(Event::Step(draft.into_record(result)));
    }
}

/// What the model answered, as quoted in the error that ends a run.
fn answer_quote(response: &ChatResponse) -> String {
    let mut quote = String::new();
    for call in &response.tool_calls {
        quote.push_str(&format!("{} {}", call.name, call.arguments));
    }
    if !response.content.trim().is_empty() {
        if !quote.is_empty() {
            quote.push_str(" | text: ");
        }
        quote.push_str(response.content.trim());
    }
    if quote.is_empty() {
        quote.push_str("(an empty answer)");
    }
    if let Some(reason) = &response.finish_reason {
        quote.push_str(&format!(" [finish_reason: {reason}]"));
    }
    quote
}

/// The message for an answer cut at the token bound.
fn cut_off_message(bound: Option<u32>) -> String {
    let bound = bound.map_or("the server's".to_string(), |b| format!("the {b}-token"));
    format!(
        "your answer was cut off at {bound} limit (llm.max_output_tokens), so nothing was done; keep memory and goals short and send arguments shaped like {}",
        normalize::EXPECTED_SHAPE
    )
}

pub(super) fn ms_since(started: Instant) -> u64 {
    started.elapsed().as_millis() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::Secrets;

    #[test]
    fn a_step_records_prompt_and_answer_with_secrets_masked() {
        let mut secrets = Secrets::new();
        secrets.insert("password", "hunter2");
        let mut draft = StepDraft::new(1);
        draft.prompt = "## user\nthe field shows hunter2".into();
        draft.raw_response = r#"{"arguments":"{\"text\":\"hunter2\"}"}"#.into();
        let event = secrets.masked(Event::Step(draft.into_record(ActionResult::ok())));
        let Event::Step(record) = event else {
            panic!("not a step: {event:?}");
        };
        assert_eq!(
            record.prompt,
            "## user\nthe field shows <secret>password</secret>"
        );
        assert!(
            !record.raw_response.contains("hunter2"),
            "{}",
            record.raw_response
        );
        assert!(record.raw_response.contains("<secret>password</secret>"));
    }
}
