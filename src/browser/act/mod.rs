//! Action execution: runs one [`Action`] from the catalog on a [`Tab`] and
//! hands back an [`ActionResult`]. Nothing here returns an error to the
//! caller: CDP failures, elements that went away, timeouts and navigations
//! all become results with the matching [`FailureReason`].
//!
//! # How an action lands where it was meant
//!
//! A helper script (the action helper, `scripts/action_helper/`) lives
//! in the same isolated world as the observer, so `index` reaches exactly
//! the listed node and the page cannot tamper with the checks. A selector takes the first visible match, and the
//! result's data says how many matched (`matched`, `used`).
//!
//! Before a click or hover, one evaluation checks that the element is
//! attached, visible and enabled, scrolls it into view (and centres it once
//! more if something such as a sticky header covers it where it is), and
//! hit-tests sample points through shadow roots and same-origin frames. The
//! mouse then moves to the chosen point; that move is acknowledged only
//! after the renderer's next frame, so a second evaluation right after it
//! compares the box with the first reading (stable across a frame) and
//! hit-tests the point again (a hover effect may have opened something over
//! it). Only then are the press and release sent. Fills check attached,
//! visible, enabled, editable and the hit target, then focus the element
//! directly, so they skip the frame wait: a field that moves cannot make
//! the text land elsewhere.
//!
//! When a check fails and waiting could help (hidden, disabled, covered,
//! moving, no match yet), the executor retries with backoff until the
//! action's time limit and then reports the last reason, naming the
//! covering element when there is one. Input is dispatched only right after
//! a passing check and never once the limit has passed, so a timed-out
//! action cannot land later.
//!
//! Clicks are real `Input.dispatchMouseEvent` events in top-level
//! coordinates. Text is typed after focusing and selecting the field:
//! a key press per character (`Input.dispatchKeyEvent`, so the page sees
//! `keydown`, `keypress`, `input` and `keyup` as from a keyboard), with
//! the middle of a long value put in at once by `Input.insertText` (see
//! [`crate::actions::TYPED_WHOLE`] for that trade). React's and Vue's value
//! tracking see both as typing; the native value setter is the fallback
//! when a page swallows it, and one `change` event follows.
//!
//! A tab that closes during an action (a popup calling `window.close()`)
//! ends the action's waits at once: its calls fail as closed rather than
//! waiting out their limits, and settling stops with the page's events.
//!
//! # Settling
//!
//! Page events are subscribed to *before* acting, so a navigation the action
//! starts is never missed. Afterwards the executor waits for the DOM to stay
//! quiet for a short period, for a started navigation to load, and for
//! requests in flight to finish, all bounded ([`SettleOptions`]). The time
//! spent is `settle_ms` in the result's data, and `navigated` says whether
//! the document changed.
//!
//! # Where each part lives
//!
//! This file holds the executor and the dispatch of an action to the code
//! that carries it out. `aim` finds and checks the target point, `helper`
//! talks to the helper script, `input` sends mouse and key events,
//! `element` runs the actions on one element, `drag` drags, `page` runs
//! the actions on the whole page (navigation, waiting, screenshots,
//! scripts), `reading` reads its text in parts (`read_page`, `extract`),
//! and `settle` waits for the page to settle after it. `replies` reads the
//! helper's answers and builds results from them; `error` and `options`
//! are the executor's error and settings.

mod aim;
mod drag;
mod element;
mod error;
mod helper;
mod input;
mod options;
mod page;
mod reading;
mod replies;
mod settle;
#[cfg(test)]
mod tests;

use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub use error::ActError;
pub(crate) use input::key_event_params;
pub use options::ExecOptions;
pub use settle::{SettleOptions, Settled};

use super::tab::Tab;
use crate::actions::{Action, ActionResult, FailureReason, InjectPosition, OptionChoice};
use crate::dom::PageState;
use crate::sitemap::SitemapSet;
use replies::with_dialogs;

/// Runs actions on one tab.
///
/// ```no_run
/// # async fn demo(tab: &webagent::browser::Tab) {
/// use webagent::actions::Catalog;
/// use webagent::browser::act::{Executor, ExecOptions};
/// let state = tab.observe(&Default::default()).await.ok();
/// let action = Catalog::builtin().parse(&serde_json::json!({"click": {"index": 0}}));
/// if let (Ok(action), Some(state)) = (action, state) {
///     let result = Executor::new(tab, ExecOptions::default())
///         .execute(&action, Some(&state))
///         .await;
///     println!("{}", serde_json::to_string(&result).unwrap_or_default());
/// }
/// # }
/// ```
pub struct Executor<'a> {
    tab: &'a Tab,
    options: ExecOptions,
    sitemaps: Option<&'a SitemapSet>,
}

impl std::fmt::Debug for Executor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("tab", self.tab)
            .field("options", &self.options)
            .field("sitemaps", &self.sitemaps.is_some())
            .finish()
    }
}

impl<'a> Executor<'a> {
    /// An executor for `tab` with the given limits.
    pub fn new(tab: &'a Tab, options: ExecOptions) -> Self {
        Executor {
            tab,
            options,
            sitemaps: None,
        }
    }

    /// Lets `goto_page` search these sitemaps.
    pub fn with_sitemaps(mut self, sitemaps: &'a SitemapSet) -> Self {
        self.sitemaps = Some(sitemaps);
        self
    }

    /// The options in use.
    pub fn options(&self) -> &ExecOptions {
        &self.options
    }

    /// Runs `action`. `state` is the latest observation, which `index`
    /// targets refer to (without one, index targets are `not_found`).
    pub async fn execute(&self, action: &Action, state: Option<&PageState>) -> ActionResult {
        // The last-resort guard: every step has its own limit, so this only
        // fires if something unforeseen hangs.
        let guard = self.options.action_timeout
            + self.options.navigation_timeout
            + self.options.settle.max
            + Duration::from_secs(5);
        let started = Instant::now();
        let guard_mark = self.tab.guard().map(|g| g.mark());
        // The tab answers dialogs as they open (they would block the page
        // the action waits on); the result lists the ones it caused.
        self.tab.set_dialog_answer(
            self.options.accept_dialogs,
            self.options.prompt_text.clone(),
        );
        let dialog_mark = self.tab.dialog_mark();
        let outcome = tokio::time::timeout(guard, self.dispatch(action, state)).await;
        let result = match outcome {
            Ok(Ok(result)) => result,
            Ok(Err(err)) => err.into(),
            Err(_) => ActionResult::timeout(format!(
                "{} did not finish within {:.0} s",
                action.name(),
                guard.as_secs_f64()
            )),
        };
        tracing::debug!(action = %action, ms = started.elapsed().as_millis() as u64, ok = result.is_ok(), "executed");
        let dialogs = self.tab.dialogs_since(dialog_mark);
        let result = with_dialogs(result, dialogs.iter().map(|d| d.to_json()).collect());
        // Navigations the allowed-domain list refused while the action ran
        // in this tab or a popup it opened (a clicked link, a form post, a
        // redirect) fail the action: the model must learn it did not get
        // where the action leads. This is the one place that says so.
        let me = self.tab.target_id();
        let refused: Vec<_> = match (self.tab.guard(), guard_mark) {
            (Some(guard), Some(mark)) => guard
                .blocked_since(mark)
                .into_iter()
                .filter(|b| b.concerns(me))
                .collect(),
            _ => Vec::new(),
        };
        match refused.first() {
            Some(first) if result.reason() != Some(FailureReason::Blocked) => {
                ActionResult::blocked(format!(
                    "{} ran, but the navigation it started to {} was blocked: {}",
                    action.name(),
                    first.url,
                    first.reason
                ))
            }
            _ => result,
        }
    }

    async fn dispatch(
        &self,
        action: &Action,
        state: Option<&PageState>,
    ) -> Result<ActionResult, ActError> {
        let seq = state.map(|s| s.observation);
        match action {
            Action::Navigate { url } => self.navigate(url).await,
            Action::Back {} => self.history(-1).await,
            Action::Forward {} => self.history(1).await,
            Action::Reload {} => self.reload().await,
            Action::GotoPage { name } => self.goto_page(name).await,
            Action::Wait { seconds } => {
                let wait = Duration::from_secs_f64(seconds.clamp(0.0, 10.0));
                tokio::time::sleep(wait).await;
                Ok(ActionResult::ok_with(
                    json!({"waited_ms": wait.as_millis() as u64}),
                ))
            }
            Action::WaitFor {
                condition,
                timeout_ms,
            } => self.wait_for(condition, *timeout_ms).await,
            Action::Click { target } => self.click(&self.aim(target, seq).await?).await,
            Action::Hover { target } => self.hover(&self.aim(target, seq).await?).await,
            Action::InputText {
                target,
                text,
                clear,
            } => {
                self.fill(&self.aim(target, seq).await?, text, *clear, false)
                    .await
            }
            Action::SetText { target, text } => {
                self.fill(&self.aim(target, seq).await?, text, true, true)
                    .await
            }
            Action::ClearInput { target } => {
                self.element_op(&self.aim(target, seq).await?, "clear", json!({}), true)
                    .await
            }
            Action::SelectOption { target, choice } => {
                let args = match choice {
                    OptionChoice::Value { value } => json!({"value": value}),
                    OptionChoice::Text { text } => json!({"text": text}),
                };
                self.element_op(&self.aim(target, seq).await?, "select", args, true)
                    .await
            }
            Action::SelectText { target, text } => {
                let target = match target {
                    Some(t) => self.aim(t, seq).await?,
                    None => Value::Null,
                };
                self.select_text(&target, text.as_deref()).await
            }
            Action::SubmitForm { target } => {
                self.element_op(&self.aim(target, seq).await?, "submit", json!({}), false)
                    .await
            }
            Action::ScrollTo { target } => {
                self.element_op(&self.aim(target, seq).await?, "scrollTo", json!({}), false)
                    .await
            }
            Action::PressKeys { keys, repeat } => self.press_keys(keys, *repeat).await,
            Action::Scroll {
                direction,
                pages,
                target,
            } => {
                let target = match target {
                    Some(t) => Some(self.aim(t, seq).await?),
                    None => None,
                };
                self.scroll(*direction, *pages, target.as_ref()).await
            }
            Action::DragAndDrop { from, to } => {
                self.drag(&self.aim(from, seq).await?, &self.aim(to, seq).await?)
                    .await
            }
            Action::UploadFile { target, path } => {
                self.upload(&self.aim(target, seq).await?, path).await
            }
            Action::Highlight {
                target,
                color,
                label,
            } => {
                let args = json!({"kind": "highlight", "color": color, "label": label});
                self.overlay(Some(&self.aim(target, seq).await?), args)
                    .await
            }
            Action::Border {
                target,
                color,
                label,
            } => {
                let args = json!({"kind": "border", "color": color, "label": label});
                self.overlay(Some(&self.aim(target, seq).await?), args)
                    .await
            }
            Action::Spotlight { target } => {
                self.overlay(
                    Some(&self.aim(target, seq).await?),
                    json!({"kind": "spotlight"}),
                )
                .await
            }
            Action::Inject {
                target,
                text,
                position,
            } => {
                let position = match position {
                    InjectPosition::Before => "before",
                    InjectPosition::After => "after",
                };
                let args = json!({"kind": "inject", "text": text, "position": position});
                self.overlay(Some(&self.aim(target, seq).await?), args)
                    .await
            }
            Action::ClearOverlays {} => self.overlay(None, json!({"kind": "clear"})).await,
            Action::ShowSubtitle { text } => {
                self.overlay(None, json!({"kind": "subtitle", "text": text}))
                    .await
            }
            // `extract` reads what `read_page` reads, at once; the model's
            // side of the house answers the instruction from it (the
            // browser never asks a model).
            Action::Extract { .. } => self.read_for_extract().await,
            Action::ReadPage { offset } => self.read_page(*offset).await,
            Action::Screenshot {
                path, full_page, ..
            } => self.screenshot(path.as_deref(), *full_page).await,
            Action::AskUser { .. }
            | Action::HandOver { .. }
            | Action::Think { .. }
            | Action::Done { .. } => {
                // The agent loop acts on these; the browser has nothing to do.
                Ok(ActionResult::ok_with(action.params()))
            }
            Action::ExecuteJavascript { script } => self.execute_javascript(script).await,
            // They concern the session's files and tabs, not one page.
            Action::ReadFile { .. }
            | Action::SwitchTab { .. }
            | Action::CloseTab { .. }
            | Action::AnswerDialogs { .. } => Ok(ActionResult::unknown(format!(
                "`{}` runs in the session's environment, not in one tab's executor",
                action.name()
            ))),
            Action::Custom(custom) => Ok(ActionResult::unknown(format!(
                "custom action `{}` runs in the script host, not in the browser executor",
                custom.name
            ))),
        }
    }
}

/// A number unlikely to repeat within a run (time in nanoseconds), for
/// marker tokens and file names.
fn unique() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default()
}
