//! Asking the model, the step's second phase: the request (the prompt,
//! the page fitted into the context window, the pictures) with every
//! secret masked, the call with its progress turned into events, and the
//! answer or why the run ends.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::dom::PageState;
use crate::environment::Environment;
use crate::events::{EndReason, Event, EventSink};
use crate::llm::{
    chars_for_tokens, ChatMessage, ChatRequest, ChatResponse, ImagePart, LlmClient, LlmError,
    LlmEvent, StopSignal,
};
use crate::vision::{Screenshot, ShotError, ShotRequest};

use super::masked::masked_request;
use super::preview;
use super::prompt::{self, user_prompt_in, ConversationPrompt, StepPrompt};
use super::run::{Agent, Fixed, RunState, StepEnd};
use super::step::{ms_since, StepDraft};
use super::wall::{wall_on, SecretsAtHand};

/// Tokens kept free for the answer when a prompt is fitted into the
/// context window: a step's reflection and action need a few hundred.
const ANSWER_RESERVE_TOKENS: u64 = 1024;

impl<E: Environment> Agent<E> {
    /// Phase 2: the model's answer to this step's prompt (with its
    /// pictures; without them, once and for the rest of the run, when the
    /// server refuses pictures). A failed call ends the run.
    pub(super) async fn ask(
        &mut self,
        step: usize,
        fixed: &Fixed<'_>,
        page: &PageState,
        state: &mut RunState,
        draft: &mut StepDraft,
    ) -> Result<ChatResponse, StepEnd> {
        let started = Instant::now();
        let mut pictures = self.pictures(step, page).await;
        draft.timings.observe_ms += ms_since(started);
        self.take_messages(step, state);
        // A retry asked for meanwhile replaces this step, before the model
        // is asked for it.
        if let Some(again) = self.retry_asked(state) {
            return Err(StepEnd::Retry(again));
        }
        let started = Instant::now();
        let (request, answer) = loop {
            let request = self.request(step, fixed, page, state, &pictures);
            let calling = call_model(&self.llm, &request, self.road.events(), &self.stop);
            let answer = match self.steering.clone() {
                None => calling.await,
                Some(steering) => {
                    // The person may ask for the failed step before this
                    // one while the model answers: the answer is dropped,
                    // as nothing has acted on it yet.
                    tokio::pin!(calling);
                    loop {
                        tokio::select! {
                            answer = &mut calling => break answer,
                            asked = steering.next_retry() => {
                                if let Some(again) = self.accept_retry(asked, state) {
                                    return Err(StepEnd::Retry(again));
                                }
                            }
                        }
                    }
                }
            };
            match &answer {
                Err(refusal @ LlmError::ImagesUnsupported { .. }) if !pictures.is_empty() => {
                    // Once is enough: the rest of the run reads text only.
                    self.seeing = false;
                    self.held.clear();
                    pictures.clear();
                    self.emit(Event::Error {
                        error: format!(
                            "{refusal}; going on without screenshots for the rest of this run"
                        ),
                        fatal: false,
                    });
                }
                _ => break (request, answer),
            }
        };
        draft.timings.llm_ms = ms_since(started);
        draft.prompt_chars = request
            .messages
            .iter()
            .map(|m| m.content.chars().count())
            .sum();
        draft.prompt = prompt_text(&request);
        match answer {
            Ok(response) => {
                draft.raw_response = response.raw.clone();
                draft.usage = response.usage;
                if let Some(usage) = draft.usage {
                    state.usage.add(usage);
                }
                Ok(response)
            }
            Err(LlmError::Cancelled) => {
                let text = "stopped by the person".to_string();
                Err(StepEnd::Finished(state.outcome(
                    false,
                    text,
                    EndReason::Stopped,
                    step - 1,
                )))
            }
            Err(error) => {
                let message = format!("the model call failed: {error}");
                self.emit(Event::Error {
                    error: message.clone(),
                    fatal: true,
                });
                Err(StepEnd::Finished(state.outcome(
                    false,
                    message,
                    EndReason::Fatal,
                    step - 1,
                )))
            }
        }
    }

    /// The person's messages waiting in the inbox join the conversation
    /// from this step's request on, each recorded with the step.
    fn take_messages(&self, step: usize, state: &mut RunState) {
        let Some(steering) = &self.steering else {
            return;
        };
        for text in steering.take_messages() {
            self.emit(Event::PersonMessage {
                step,
                text: text.clone(),
            });
            state.messages.push((step, text));
        }
    }

    /// The pictures this step's prompt carries: the marked viewport, and
    /// what a `screenshot` action of the step before took. Each is also an
    /// event (the workbench draws it, the trace stores it). Empty when the
    /// run does not send pictures.
    async fn pictures(&mut self, step: usize, page: &PageState) -> Vec<(Screenshot, String)> {
        let held = std::mem::take(&mut self.held);
        if !self.seeing {
            return Vec::new();
        }
        let request = ShotRequest::step(self.vision.width);
        let mut pictures = Vec::new();
        match self.environment.screenshot(&request).await {
            Err(ShotError::NoPictures) => {}
            Ok(shot) => pictures.push((shot, "step".to_string())),
            Err(error) => self.emit(Event::Error {
                error: format!("the screenshot for step {step} failed ({error}); the step goes on with the text alone"),
                fatal: false,
            }),
        }
        pictures.extend(held.into_iter().map(|shot| (shot, "requested".to_string())));
        for (shot, purpose) in &pictures {
            self.emit(Event::Screenshot(crate::events::ScreenshotRecord::new(
                step, &page.url, purpose, true, shot,
            )));
        }
        pictures
    }

    /// The request of one step: the system prompt, the user prompt for the
    /// page, the step's pictures and the forced tool, the page cut to fit
    /// the context window when one is set.
    fn request(
        &self,
        step: usize,
        fixed: &Fixed<'_>,
        page: &PageState,
        state: &RunState,
        pictures: &[(Screenshot, String)],
    ) -> ChatRequest {
        // Read per step: a watcher may have swapped in an edited sitemap.
        let (sitemap, loaded) = {
            let set = self.sitemaps.read().unwrap_or_else(|e| e.into_inner());
            (set.for_url(&page.url).cloned(), !set.is_empty())
        };
        let at_hand = SecretsAtHand {
            any: !self.config.secrets.names().is_empty(),
            totp: self.config.secrets.has_totp(),
        };
        let build = |page: &PageState| {
            let mut user = user_prompt_in(
                &StepPrompt {
                    task: fixed.task,
                    step,
                    max_steps: self.config.max_steps,
                    history: &state.history,
                    page,
                    sitemap: sitemap.as_deref(),
                    sitemaps_elsewhere: sitemap.is_none() && loaded,
                },
                &ConversationPrompt {
                    earlier: &state.earlier,
                    memory: &state.memory,
                    messages: &state.messages,
                },
            );
            if let Some(wall) = wall_on(page, at_hand) {
                user.push('\n');
                user.push_str(&wall.hint());
            }
            for (_, purpose) in pictures {
                user.push_str(if purpose == "step" {
                    "\n\n[Attached: a screenshot of the viewport. Each listed element is outlined, its [index] in a tag at the box's top-left corner.]"
                } else {
                    "\n\n[Also attached: the screenshot your last `screenshot` action took.]"
                });
            }
            let mut message = ChatMessage::user(user);
            for (shot, _) in pictures {
                message = message.with_image(ImagePart {
                    url: shot.data_url(),
                    tokens: shot.tokens(),
                });
            }
            let request = ChatRequest::new(vec![ChatMessage::system(fixed.system), message])
                .with_forced_tool(fixed.tool.clone());
            masked_request(request, &self.config.secrets)
        };
        let request = build(page);
        let config = self.llm.config();
        let Some(window) = config.context_window.map(u64::from) else {
            return request;
        };
        // Room for the answer and for the estimate being off a little.
        let margin = window / 20;
        let budget = window.saturating_sub(ANSWER_RESERVE_TOKENS + margin);
        let estimate = request.estimated_prompt_tokens();
        let mut request = if estimate > budget {
            let over = chars_for_tokens(estimate - budget);
            let page_chars = prompt::shown_page_chars(page);
            // The notes the cut adds take room too.
            let keep = page_chars.saturating_sub(over + 400);
            build(&prompt::fit_page(page, keep))
        } else {
            request
        };
        // The answer may use what the prompt leaves; servers that count
        // prompt and answer together refuse a larger bound.
        let left = window.saturating_sub(request.estimated_prompt_tokens() + margin);
        let bound = config
            .max_output_tokens
            .map_or(left, |max| left.min(u64::from(max)));
        request.max_tokens = Some(bound.max(256) as u32);
        request
    }
}

/// Calls the model, turning its progress into events: streamed text, the
/// reflection as it is written, retries. A free function rather than a
/// method so the agent is not borrowed across the call, which would make
/// a spawned run require every part of the agent to be `Sync`.
async fn call_model(
    llm: &LlmClient,
    request: &ChatRequest,
    events: &EventSink,
    stop: &StopSignal,
) -> Result<ChatResponse, LlmError> {
    let waiting = Arc::new(Mutex::new(Waiting::default()));
    let ticks = (events.clone(), Arc::clone(&waiting));
    let events = events.clone();
    let config = llm.config();
    // The limit a request's first word is held to (see the client).
    let limits = (
        config.request_timeout.min(config.total_timeout).as_secs(),
        config.total_timeout.as_secs(),
    );
    let mut preview = preview::ReflectionPreview::default();
    let mut on_event = move |event: LlmEvent| {
        let event = match event {
            LlmEvent::Attempt {
                attempt,
                max_attempts,
                streaming,
            } => {
                // Said from the first second on: a prompt answer is not
                // worth a line.
                let limit = if streaming { limits.0 } else { limits.1 };
                *waiting.lock().unwrap_or_else(|e| e.into_inner()) = Waiting {
                    attempt,
                    max_attempts,
                    seconds: 0,
                    limit,
                };
                return;
            }
            LlmEvent::ContentDelta { text } => Event::Text { content: text },
            LlmEvent::ToolCallDelta {
                index: 0,
                arguments,
                ..
            } => match preview.push(&arguments) {
                Some(content) => Event::Text { content },
                None => return,
            },
            LlmEvent::Retrying {
                retry,
                max_retries,
                wait,
                reason,
            } => {
                // The retried answer streams from the start again.
                preview.reset();
                Event::Error {
                    error: format!(
                        "the model call failed ({reason}); attempt {} of {} in {:.1} s",
                        retry + 1,
                        max_retries + 1,
                        wait.as_secs_f64()
                    ),
                    fatal: false,
                }
            }
            LlmEvent::FallbackToNonStreaming { reason } => {
                preview.reset();
                Event::Error {
                    error: format!("streaming did not work ({reason}); asking again without it"),
                    fatal: false,
                }
            }
            _ => return,
        };
        events.send(event);
    };
    let call = llm.complete_observed(request, &mut on_event, stop);
    tokio::pin!(call);
    // Each second without an answer says so, with the attempt: a model
    // that never answers is a visible wait, not silence.
    let (events, waiting) = ticks;
    let mut second = tokio::time::interval_at(
        tokio::time::Instant::now() + Duration::from_secs(1),
        Duration::from_secs(1),
    );
    second.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            result = &mut call => return result,
            _ = second.tick() => {
                let tick = {
                    let mut waiting = waiting.lock().unwrap_or_else(|e| e.into_inner());
                    waiting.seconds += 1;
                    waiting.event()
                };
                events.send(tick);
            }
        }
    }
}

/// The request a call waits on, and for how long so far.
#[derive(Debug, Default)]
struct Waiting {
    attempt: u32,
    max_attempts: u32,
    seconds: u64,
    limit: u64,
}

impl Waiting {
    fn event(&self) -> Event {
        Event::ModelWaiting {
            attempt: self.attempt,
            max_attempts: self.max_attempts,
            seconds: self.seconds,
            limit: self.limit,
        }
    }
}

/// The request's messages as a person reads them: each headed by its
/// role, in the order sent. Tool calls replayed as history are shown as
/// JSON so nothing the model saw is left out.
fn prompt_text(request: &ChatRequest) -> String {
    let mut text = String::new();
    for message in &request.messages {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str("## ");
        text.push_str(message.role.as_str());
        if let Some(id) = &message.tool_call_id {
            text.push_str(&format!(" (answers {id})"));
        }
        text.push('\n');
        text.push_str(&message.content);
        for image in &message.images {
            text.push_str(&format!(
                "\n[picture attached, counted as {} tokens]",
                image.tokens
            ));
        }
        for call in &message.tool_calls {
            text.push_str(&format!("\n[tool call {}: {}]", call.name, call.arguments));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_prompt_heads_each_message_with_its_role() {
        let request = ChatRequest::new(vec![
            ChatMessage::system("You drive a browser."),
            ChatMessage::user("Task: sign in\n[1]<button>Go</button>"),
        ]);
        assert_eq!(
            prompt_text(&request),
            "## system\nYou drive a browser.\n\n## user\nTask: sign in\n[1]<button>Go</button>"
        );
    }
}
