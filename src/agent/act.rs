//! Acting, the step's last phase: the model's action along the road,
//! then the rest of its list while each still makes sense on the page as
//! it is now, and the picture a `screenshot` action holds for the next
//! step.

use std::time::Instant;

use serde_json::Value;

use crate::actions::{Action, ActionResult, Target};
use crate::dom::PageState;
use crate::environment::{Environment, Passage};
use crate::events::{EndReason, Event, Reflection, StepTimings, TokenUsage};
use crate::vision::{ShotError, ShotRegion, ShotRequest};

use super::history::{action_text, shown_action};
use super::prompt;
use super::run::{Agent, RunOutcome, RunState, StepEnd};
use super::step::{ms_since, Answer, StepDraft};

impl<E: Environment> Agent<E> {
    /// Phase 4: the action, then the rest of the model's list while each
    /// still makes sense on the page as it is now.
    pub(super) async fn act_all(
        &mut self,
        step: usize,
        answer: Answer,
        page: PageState,
        mut draft: StepDraft,
        state: &mut RunState,
    ) -> StepEnd {
        let reflection = draft.reflection.clone();
        let started = Instant::now();
        let (ran, result, mut finished) = self.act(step, answer.action, &reflection, &page).await;
        self.time_action(&mut draft.timings, started);
        draft.person = self.road.take_decision();
        draft.action = ran.to_json();
        draft.shown = shown_action(&draft.action, draft.person.as_ref());
        let mut going_on = result.is_ok();
        self.record(state, draft, result);
        if let Some(again) = self.retry_at_approval(step) {
            return again;
        }
        let mut rest = answer.rest;
        if rest.len() >= self.max_actions {
            let dropped = rest.split_off(self.max_actions - 1);
            self.note_stop(
                state,
                &dropped,
                &format!("at most {} actions run per step", self.max_actions),
            );
        }
        let mut seen = page;
        let mut rest = rest.into_iter();
        while finished.is_none() {
            let Some((proposed, next)) = rest.next() else {
                break;
            };
            let mut left: Vec<(Value, Result<Action, String>)> =
                std::iter::once((proposed, next.clone())).collect();
            let (action, now) = match self.next_in_list(going_on, next, &seen).await {
                Ok(ready) => ready,
                Err(reason) => {
                    left.extend(rest.by_ref());
                    self.note_stop(state, &left, &reason);
                    break;
                }
            };
            let mut draft = StepDraft::new(step);
            draft.url = now.url.clone();
            draft.reflection = reflection.clone();
            let started = Instant::now();
            let (ran, result, ended) = self.act(step, action, &reflection, &now).await;
            self.time_action(&mut draft.timings, started);
            draft.person = self.road.take_decision();
            draft.action = ran.to_json();
            draft.shown = shown_action(&draft.action, draft.person.as_ref());
            // A refusal ends the list: the model planned the rest with it.
            going_on = result.is_ok();
            self.record(state, draft, result);
            if let Some(again) = self.retry_at_approval(step) {
                return again;
            }
            finished = ended;
            seen = now;
        }
        match finished {
            Some(finished) => StepEnd::Finished(RunOutcome {
                steps: step,
                usage: state.usage,
                ..finished
            }),
            None => StepEnd::Continue,
        }
    }

    /// The action's own time and, apart, the wait for the person's
    /// approval, since `started`.
    fn time_action(&mut self, timings: &mut StepTimings, started: Instant) {
        let waited = self.road.take_wait().as_millis() as u64;
        timings.wait_ms = waited;
        timings.act_ms = ms_since(started).saturating_sub(waited);
    }

    /// Whether the next action of a list may run, on the page as it is
    /// now: the one before it worked, it is valid, the page did not
    /// navigate, and its target is the element the model saw under that
    /// index. Returns the action and the page, or why the list stops.
    async fn next_in_list(
        &mut self,
        previous_ok: bool,
        next: Result<Action, String>,
        seen: &PageState,
    ) -> Result<(Action, PageState), String> {
        if !previous_ok {
            return Err("the action before it did not succeed".into());
        }
        let action = next.map_err(|message| format!("it is not valid: {message}"))?;
        let now = self
            .environment
            .observe()
            .await
            .map_err(|e| format!("the page could not be observed: {}", e.message))?;
        let page_of = |url: &str| url.split('#').next().unwrap_or(url).to_string();
        if page_of(&now.url) != page_of(&seen.url) {
            return Err(format!("the page changed to {}", now.url));
        }
        if let Some(Target::Index { index }) = action.target() {
            let index = *index;
            let before = seen.elements.iter().find(|e| e.index == index);
            let after = now.elements.iter().find(|e| e.index == index);
            match (before, after) {
                (Some(before), Some(after)) if same_element(before, after) => {}
                (_, None) => return Err(format!("element {index} is gone")),
                (_, Some(after)) => {
                    return Err(format!(
                        "element {index} is now {}",
                        prompt::clip(&crate::dom::element_line(after), 80)
                    ))
                }
            }
        }
        Ok((action, now))
    }

    /// Tells the model (in its history) and the person (an event) which
    /// actions of a list were not run, and why.
    fn note_stop(
        &mut self,
        state: &mut RunState,
        left: &[(Value, Result<Action, String>)],
        reason: &str,
    ) {
        if left.is_empty() {
            return;
        }
        let names: Vec<String> = left
            .iter()
            .map(|(proposed, _)| prompt::clip(&action_text(proposed), 60))
            .collect();
        let note = format!(
            "not run: {} ({reason}); look at the page and send them again if still needed",
            names.join("; ")
        );
        if let Some(last) = state.history.last_mut() {
            last.result = format!("{}; then {note}", last.result);
        }
        self.emit(Event::Error {
            error: format!("the list of actions stopped early: {note}"),
            fatal: false,
        });
    }

    /// One action along the road. Returns the action that ran (after any
    /// edit), its result, and the outcome when the run ends here.
    async fn act(
        &mut self,
        step: usize,
        action: Action,
        reflection: &Reflection,
        page: &PageState,
    ) -> (Action, ActionResult, Option<RunOutcome>) {
        let passage = self
            .road
            .travel(
                &mut self.environment,
                step,
                action.clone(),
                page,
                &reflection.next_goal,
            )
            .await;
        match passage {
            Passage::Ran(Action::Done { text, success }, result) => {
                let outcome = RunOutcome {
                    success,
                    text: text.clone(),
                    reason: EndReason::Done,
                    steps: step,
                    usage: TokenUsage::default(),
                };
                (Action::Done { text, success }, result, Some(outcome))
            }
            Passage::Ran(Action::HandOver { reason }, result) => {
                // Whoever watches hands back by continuing the run: the
                // workbench's key, or `webagent resume`.
                self.emit(Event::HandOver {
                    step,
                    reason: reason.clone(),
                    url: page.url.clone(),
                    title: page.title.clone(),
                });
                let outcome = RunOutcome {
                    success: false,
                    text: format!("a person is needed: {reason}"),
                    reason: EndReason::HandOver,
                    steps: step,
                    usage: TokenUsage::default(),
                };
                (Action::HandOver { reason }, result, Some(outcome))
            }
            Passage::Ran(ran, result) => {
                if let (
                    Action::Screenshot {
                        full_page, target, ..
                    },
                    true,
                ) = (&ran, result.is_ok())
                {
                    self.hold_screenshot(*full_page, target.clone()).await;
                }
                (ran, result, None)
            }
            Passage::Refused(result) => (action, result, None),
            Passage::Stopped(result) => {
                let outcome = RunOutcome {
                    success: false,
                    text: "stopped by the person at the approval of this step".into(),
                    reason: EndReason::Stopped,
                    steps: step,
                    usage: TokenUsage::default(),
                };
                (action, result, Some(outcome))
            }
        }
    }

    /// Takes the picture a `screenshot` action asked for, now, while its
    /// index still names the element, and holds it for the next step's
    /// prompt. The viewport needs none: every step carries it already.
    async fn hold_screenshot(&mut self, full_page: bool, target: Option<Target>) {
        let region = match (target, full_page) {
            (Some(target), _) => ShotRegion::Element(target),
            (None, true) => ShotRegion::FullPage,
            (None, false) => return,
        };
        if !self.seeing {
            return;
        }
        let request = ShotRequest {
            region,
            width: self.vision.width,
            marks: false,
            secrets: Vec::new(),
            png: false,
            labels: std::collections::HashMap::new(),
        };
        match self.environment.screenshot(&request).await {
            Ok(shot) => self.held.push(shot),
            Err(ShotError::NoPictures) => {}
            Err(error) => self.emit(Event::Error {
                error: format!(
                    "the picture for the model could not be taken ({error}); the file was written"
                ),
                fatal: false,
            }),
        }
    }
}

/// Whether two listings show the same element: tag, text and the
/// attributes that name it (its value or checked state may have changed
/// by the action before; that does not make it another element).
fn same_element(a: &crate::dom::InteractiveElement, b: &crate::dom::InteractiveElement) -> bool {
    const NAMING: [&str; 8] = [
        "id",
        "name",
        "type",
        "href",
        "placeholder",
        "aria-label",
        "role",
        "label",
    ];
    a.tag == b.tag
        && a.text == b.text
        && NAMING
            .iter()
            .all(|key| a.attribute(key) == b.attribute(key))
}
