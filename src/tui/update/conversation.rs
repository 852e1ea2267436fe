//! The session as a conversation: the person's messages to a running
//! agent, asking again for a failed step, starting fresh, and resuming a
//! run from its trace.

use tui_textarea::TextArea;

use crate::session::ResumePlan;
use crate::tui::error::ResumeReadError;
use crate::tui::event::Effect;
use crate::tui::state::{rows, AppState, ListView, LogEntry, Outcome, ReflectionView, RunStatus};
use crate::tui::task::set_field_focus;
use crate::tui::text::clip;

use super::log::push_log;

/// Sends the task field's text to the running agent as the person's
/// words. It shows in the log at once, waiting, and is marked when the
/// model's request carries it.
pub(super) fn send_message(state: &mut AppState, text: String, effects: &mut Vec<Effect>) {
    state.task = TextArea::default();
    set_field_focus(&mut state.task, true, &state.theme);
    push_log(
        state,
        LogEntry::row(rows::MESSAGE, text.clone(), Outcome::Pending),
    );
    state.notice(
        false,
        "sent: the model reads it with its next request".into(),
    );
    effects.push(Effect::Steer(text));
}

/// Whether a run is in progress, saying so: what starts another waits
/// for it to end.
pub(super) fn busy(state: &mut AppState) -> bool {
    let running = state.run_active();
    if running {
        state.notice(true, "a run is in progress; stop it (s) first".into());
    }
    running
}

/// The run's last step, when it failed: the one the model may be asked
/// for again.
fn failed_step(state: &AppState) -> Option<usize> {
    let start = state.run_log_start.min(state.log.len());
    let last = state.log[start..]
        .iter()
        .rev()
        .find(|e| e.step.is_some() && e.record.is_some())?;
    matches!(last.outcome, Outcome::Failed { .. })
        .then_some(last.step)
        .flatten()
}

/// `r`: asks the model again for the run's failed step.
pub(super) fn retry_failed_step(state: &mut AppState, effects: &mut Vec<Effect>) {
    if !state.run_active() || state.recipe.is_some() {
        state.notice(
            true,
            "no agent run is going: type a follow-up task, or :resume a past run".into(),
        );
        return;
    }
    match failed_step(state) {
        Some(step) => {
            state.notice(false, format!("asking the model again for step {step}"));
            effects.push(Effect::RetryStep(step));
        }
        None => state.notice(
            true,
            "the run's last step did not fail: nothing to ask again".into(),
        ),
    }
}

/// `N` or `:new`: the next task starts a fresh conversation.
pub(super) fn new_conversation(state: &mut AppState, effects: &mut Vec<Effect>) {
    if busy(state) {
        return;
    }
    state.command_line = None;
    state.conversation_tasks = 0;
    push_log(
        state,
        LogEntry::row(rows::NEW, "a fresh conversation begins", Outcome::Ok),
    );
    state.notice(
        false,
        "new conversation: the next task starts with no memory of the earlier ones".into(),
    );
    effects.push(Effect::NewConversation);
}

/// `:resume [TRACE]`: reads the trace off the loop; the run starts when
/// its plan is back.
pub(super) fn ask_resume(
    state: &mut AppState,
    path: Option<std::path::PathBuf>,
    effects: &mut Vec<Effect>,
) {
    if busy(state) {
        return;
    }
    if state.status.model.is_empty() {
        state.notice(
            true,
            "no model is configured: a resumed run needs one (set OPENAI_API_KEY or --base-url)"
                .into(),
        );
        return;
    }
    state.command_line = None;
    state.notice(false, "reading the trace…".into());
    effects.push(Effect::ReadResume(path));
}

/// The trace is read: the run continues where it stopped.
pub(super) fn resume_ready(
    state: &mut AppState,
    plan: Result<Box<ResumePlan>, ResumeReadError>,
    effects: &mut Vec<Effect>,
) {
    let plan = match plan {
        Ok(plan) => plan,
        Err(why) => {
            state.notice(true, why.to_string());
            return;
        }
    };
    if busy(state) {
        return;
    }
    state.close_replay();
    state.sessions = None;
    if let Some(mode) = plan.approval() {
        state.status.approval = mode;
    }
    state.conversation_tasks = plan.conversation.earlier().len();
    if let Some(reason) = plan.point.prior.handed_back.clone() {
        // The person acts first; the run goes on when they hand back.
        state.notice(
            false,
            "the run was handed over to you: act on the page, then press H to hand it back".into(),
        );
        state.status.run = RunStatus::HandedOver { reason };
        state.handed_over_plan = Some(plan);
        return;
    }
    state.status.run = RunStatus::Running;
    state.status.step = plan.point.prior.next_step.saturating_sub(1);
    state.reflection = ReflectionView::default();
    state.reflection_view = ListView::default();
    state.notice(
        false,
        format!(
            "resuming `{}` at step {} ({})",
            clip(&plan.point.task, 60),
            plan.point.prior.next_step,
            plan.trace.display()
        ),
    );
    effects.push(Effect::Resume {
        approval: state.status.approval,
        plan,
    });
}

/// Starts an agent run on `task` (`fresh`: a new conversation), from
/// `start_url` when given. The focus stays where it is: a task started
/// from the task field leaves the field ready for the next words.
pub(super) fn begin_run(
    state: &mut AppState,
    task: String,
    fresh: bool,
    start_url: Option<String>,
    effects: &mut Vec<Effect>,
) {
    state.status.run = RunStatus::Running;
    state.status.step = 0;
    state.reflection = ReflectionView::default();
    state.reflection_view = ListView::default();
    effects.push(Effect::StartRun {
        task,
        approval: state.status.approval,
        fresh,
        start_url,
    });
}
