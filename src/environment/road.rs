//! The one road from a chosen action to the page: the policy (its rules
//! in `policy.rs`), the approval gate, the environment, and the model's
//! side of `extract`.
//! The agent's steps, a recipe's steps, an MCP client's calls and the
//! person's own `:` actions all travel it, so a protection holds for each
//! of them alike.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use std::collections::BTreeSet;

use crate::actions::{Action, ActionResult, Catalog, Risk};
use crate::dom::PageState;
use crate::events::{ApprovalRecord, Event, EventSink, PersonDecision, Verdict};
use crate::script::{CancelFlag, GatedHost, Scripts};

use super::approval::{ApprovalBinding, ApprovalDecision, ApprovalRequest, RecipeRewrite};
use super::policy::Policy;
use super::{ApprovalMode, Approver, BoxFuture, Environment, LiveMode};

/// What the model reads when the person asked it for another answer
/// instead of running its proposal.
pub const RETRY_ASKED: &str =
    "not run: the person asked you for another answer to this step; propose a different action";

/// How often a person is asked again when the page keeps changing under an
/// approval before the action is refused.
const MAX_APPROVAL_ROUNDS: usize = 3;

/// The model's side of `extract`: the browser reads the page, this answers
/// the instruction from what it read. The page arrives as the browser
/// returned it (`{url, title, text, clipped}`, secrets already masked).
pub trait Extractor: Send + Sync {
    /// The extracted data as `extract`'s result.
    fn extract<'a>(
        &'a self,
        instruction: &'a str,
        schema: Option<&'a Value>,
        page: &'a Value,
    ) -> BoxFuture<'a, ActionResult>;
}

/// How an action's trip along the road ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Passage {
    /// It ran: the action that ran (the person may have edited it) and its
    /// result.
    Ran(Action, ActionResult),
    /// It did not run: the policy or the person refused it. The result
    /// says why, for whoever chose it.
    Refused(ActionResult),
    /// The person stopped the whole run at its approval.
    Stopped(ActionResult),
}

impl Passage {
    /// The result whoever chose the action reads.
    pub fn result(&self) -> &ActionResult {
        match self {
            Passage::Ran(_, result) | Passage::Refused(result) | Passage::Stopped(result) => result,
        }
    }
}

/// An action the gate let through, and how far its approval reaches.
#[derive(Debug, Clone, PartialEq)]
pub struct Cleared {
    /// The action to run (the person may have edited it).
    pub action: Action,
    /// For a custom action that was approved, the risk up to which its
    /// approval covers the steps its handler takes: a person who approved
    /// `sign_in` is not asked again about each of its clicks, unless they
    /// chose to be. `None` when nobody approved it or every step is asked.
    pub covers: Option<Risk>,
}

/// Approvals that outlast one action: what the person approved "for the
/// rest of the run". They live as long as the road (one run).
#[derive(Debug, Clone, Default)]
struct Standing {
    /// Every action.
    all: bool,
    /// Every action of these names.
    names: BTreeSet<String>,
}

/// The road: everything an action passes between whoever chose it and the
/// environment that runs it. Each caller owns one (the agent, a recipe, an
/// MCP session), built from the same parts.
pub struct Road {
    catalog: Catalog,
    policy: Policy,
    mode: LiveMode,
    approver: Box<dyn Approver>,
    events: EventSink,
    extractor: Option<Arc<dyn Extractor>>,
    /// The scripts whose custom actions' handlers run here, and what
    /// cancels them.
    scripts: Option<(Scripts, CancelFlag)>,
    /// Time spent waiting for the person since last taken.
    waited: Duration,
    /// The person asked the model again at the last approval.
    retry: bool,
    /// What the person approved for the rest of the run.
    standing: Standing,
    /// The custom actions running now, innermost last, each with what its
    /// approval covers ([`Cleared::covers`]).
    within: Vec<Option<Risk>>,
    /// The person's decision at the last approval asked, until taken.
    decided: Option<PersonDecision>,
}

impl std::fmt::Debug for Road {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Road")
            .field("policy", &self.policy)
            .field("mode", &self.mode.now())
            .field("extractor", &self.extractor.is_some())
            .finish_non_exhaustive()
    }
}

impl Road {
    /// A road asking `approver` when `mode` says so, validating edits with
    /// `catalog`, reporting on `events`. No policy refusals and no model
    /// for `extract` until given.
    pub fn new(
        catalog: Catalog,
        approver: Box<dyn Approver>,
        mode: impl Into<LiveMode>,
        events: EventSink,
    ) -> Self {
        Road {
            catalog,
            policy: Policy::default(),
            mode: mode.into(),
            approver,
            events,
            extractor: None,
            scripts: None,
            waited: Duration::ZERO,
            retry: false,
            standing: Standing::default(),
            within: Vec::new(),
            decided: None,
        }
    }

    /// The approval mode now.
    pub fn mode(&self) -> ApprovalMode {
        self.mode.now()
    }

    /// How long the person was waited for since it was last taken, left
    /// for whoever takes it.
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// How long the person was waited for since the last call, so a step's
    /// own time and the wait for approval are reported apart.
    pub fn take_wait(&mut self) -> Duration {
        std::mem::take(&mut self.waited)
    }

    /// Whether the person, at the last approval, asked the model for
    /// another answer rather than deciding (cleared by asking).
    pub fn take_retry(&mut self) -> bool {
        std::mem::take(&mut self.retry)
    }

    /// What the person decided about the last action they were asked
    /// about (cleared by asking), for the step's record: whether they
    /// edited or refused what was proposed.
    pub fn take_decision(&mut self) -> Option<PersonDecision> {
        self.decided.take()
    }

    /// A custom action's handler begins: until [`Self::close_custom`],
    /// its steps pass the gate without asking up to the risk `covers`
    /// (what [`Cleared::covers`] said), and are asked about otherwise.
    pub fn open_custom(&mut self, covers: Option<Risk>) {
        self.within.push(covers);
    }

    /// The innermost custom action's handler ended.
    pub fn close_custom(&mut self) {
        self.within.pop();
    }

    /// Why `action` of `risk` needs no question although the mode asks:
    /// an approval the person gave for the rest of the run, or the
    /// approval of the custom action whose step it is.
    fn standing_approval(&self, action: &Action, risk: Risk) -> Option<String> {
        if self.standing.all {
            return Some("every action approved for the rest of the run".into());
        }
        if self.standing.names.contains(action.name()) {
            return Some(format!(
                "`{}` approved for the rest of the run",
                action.name()
            ));
        }
        match self.within.last() {
            Some(Some(covered)) if risk <= *covered => {
                Some("covered by the approval of the custom action it is a step of".into())
            }
            _ => None,
        }
    }

    /// Refuses what `policy` switches off.
    pub fn with_policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// Answers `extract` with this model side (without one, `extract` fails
    /// saying a model is needed).
    pub fn with_extractor(mut self, extractor: Option<Arc<dyn Extractor>>) -> Self {
        self.extractor = extractor;
        self
    }

    /// Runs custom actions' handlers from `scripts`, cancelled by `cancel`:
    /// each action a handler starts travels this road too. Without
    /// scripts a custom action goes to the environment as it is.
    pub fn with_scripts(mut self, scripts: Scripts, cancel: CancelFlag) -> Self {
        self.scripts = Some((scripts, cancel));
        self
    }

    /// The catalog actions are checked against.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Where the road reports.
    pub fn events(&self) -> &EventSink {
        &self.events
    }

    /// Asks whoever answers approvals; `None` when nobody can.
    pub async fn ask_user(&mut self, question: &str) -> Option<String> {
        self.approver.ask_user(question).await
    }

    /// Whether a healed recipe's repaired version may be written to
    /// `file`. Rewriting a recipe changes what later runs do, so it is
    /// asked about like a commit: in `risky` and `always` modes the
    /// approver decides (headless: `--yes`), in `never` it is written.
    /// `Err` says why not.
    pub async fn approve_rewrite(
        &mut self,
        file: &str,
        changes: &str,
    ) -> Result<(), RewriteRefused> {
        if self.mode.now() == super::ApprovalMode::Never {
            return Ok(());
        }
        let rewrite = RecipeRewrite {
            file: file.to_string(),
            healed: changes.lines().count(),
            changes: changes.to_string(),
        };
        if self.approver.approve_rewrite(&rewrite).await {
            Ok(())
        } else {
            Err(RewriteRefused {
                mode: self.mode.now(),
            })
        }
    }

    /// The whole way for `action`, chosen at `step` on `page` for `goal`:
    /// `tool_call`, the policy, the gate, `action_request`, the
    /// environment (and the model for `extract`), `tool_result`. `done`,
    /// `think`, `ask_user` and `hand_over` touch no page: they pass without the
    /// environment. A custom action's handler runs here, and each action
    /// it starts passes the policy and the gate on its own.
    pub async fn travel<E: Environment>(
        &mut self,
        environment: &mut E,
        step: usize,
        action: Action,
        page: &PageState,
        goal: &str,
    ) -> Passage {
        self.events.send(Event::ToolCall {
            name: action.name().to_string(),
            parameters: action.params(),
        });
        let name = action.name().to_string();
        let passage = match self.clear(environment, step, action, page, goal).await {
            Err(passage) => passage,
            Ok(Cleared {
                action: Action::Custom(custom),
                covers,
            }) if self.scripts.is_some() => {
                // The handler's own approvals must not pass for this
                // action's decision.
                let decided = self.decided.take();
                self.open_custom(covers);
                let passage = self.run_custom(environment, step, custom, goal).await;
                self.close_custom();
                self.decided = decided;
                passage
            }
            Ok(cleared) => {
                let result = self.run(environment, step, &cleared.action).await;
                Passage::Ran(cleared.action, result)
            }
        };
        self.events.send(Event::ToolResult {
            name,
            result: passage.result().clone(),
        });
        passage
    }

    /// The policy and the gate alone, for an action whose caller runs it
    /// itself (a custom action a script calls from its own thread): the
    /// action to run, or how it was refused.
    pub async fn approve<E: Environment>(
        &mut self,
        environment: &mut E,
        step: usize,
        action: Action,
        page: &PageState,
        goal: &str,
    ) -> Result<Action, Passage> {
        self.clear(environment, step, action, page, goal)
            .await
            .map(|cleared| cleared.action)
    }

    /// [`Self::approve`], saying also how far a custom action's approval
    /// reaches into its steps.
    pub async fn clear<E: Environment>(
        &mut self,
        environment: &mut E,
        step: usize,
        mut action: Action,
        page: &PageState,
        goal: &str,
    ) -> Result<Cleared, Passage> {
        let mut rounds = 0;
        loop {
            // The policy first, on every round: what it refuses is never
            // put to a person (nor to `--yes`), nor passed by a standing
            // approval.
            let facts = environment.risk_facts(&action, page).await;
            if let Some(refusal) = self.policy.refusal(&action, &facts) {
                return Err(Passage::Refused(refusal));
            }
            let risk = action.effective_risk(&facts);
            let mode = self.mode.now();
            if !mode.requires(&action, risk) {
                return Ok(Cleared {
                    action,
                    covers: None,
                });
            }
            let custom = matches!(action, Action::Custom(_));
            if let Some(note) = self.standing_approval(&action, risk) {
                self.events.send(Event::Approval(ApprovalRecord {
                    step,
                    action: action.to_json(),
                    risk,
                    url: page.url.clone(),
                    decision: Verdict::Approved,
                    note: Some(note),
                }));
                return Ok(Cleared {
                    action,
                    covers: custom.then_some(risk),
                });
            }
            rounds += 1;
            let url = environment
                .current_url()
                .await
                .unwrap_or_else(|| page.url.clone());
            if rounds > MAX_APPROVAL_ROUNDS {
                return Err(Passage::Refused(ActionResult::denied(
                    "the page kept changing while approval was asked; the action was not run",
                )));
            }
            let element = match action.target() {
                Some(target) => environment.describe_target(target, page).await,
                None => None,
            };
            let request = ApprovalRequest {
                step,
                element,
                action: action.clone(),
                risk,
                url: url.clone(),
                next_goal: goal.to_string(),
            };
            let asked = Instant::now();
            let decision = environment
                .while_approving(self.approver.approve(&request))
                .await;
            self.waited += asked.elapsed();
            let (verdict, note) = match &decision {
                ApprovalDecision::Approve { note } => (Verdict::Approved, note.clone()),
                ApprovalDecision::ApproveNameForRun => (
                    Verdict::Approved,
                    Some(format!(
                        "and every `{}` for the rest of the run",
                        action.name()
                    )),
                ),
                ApprovalDecision::ApproveAllForRun => (
                    Verdict::Approved,
                    Some("and every action for the rest of the run".into()),
                ),
                ApprovalDecision::ApproveAskingEachStep => (
                    Verdict::Approved,
                    Some("each of its steps is asked about".into()),
                ),
                ApprovalDecision::Edit(_) => (Verdict::Edited, None),
                ApprovalDecision::Deny { reason } => (Verdict::Denied, Some(reason.clone())),
                ApprovalDecision::Stop => (Verdict::Stopped, None),
                ApprovalDecision::Retry => (Verdict::Retried, None),
            };
            self.events.send(Event::Approval(ApprovalRecord {
                step,
                action: action.to_json(),
                risk,
                url: url.clone(),
                decision: verdict,
                note,
            }));
            self.decided = self.approver.is_person().then(|| PersonDecision {
                verdict,
                proposed: matches!(decision, ApprovalDecision::Edit(_)).then(|| action.to_json()),
            });
            // How far a custom action's approval reaches into its steps.
            let mut covers = custom.then_some(risk);
            let approved = match decision {
                ApprovalDecision::Approve { .. } => action.clone(),
                ApprovalDecision::ApproveNameForRun => {
                    self.standing.names.insert(action.name().to_string());
                    action.clone()
                }
                ApprovalDecision::ApproveAllForRun => {
                    self.standing.all = true;
                    action.clone()
                }
                ApprovalDecision::ApproveAskingEachStep => {
                    covers = None;
                    action.clone()
                }
                ApprovalDecision::Edit(edited) => match self.catalog.parse(&edited.to_json()) {
                    Ok(edited) => edited,
                    Err(error) => {
                        return Err(Passage::Refused(ActionResult::invalid_params(format!(
                            "the person's edit is not valid: {error}"
                        ))))
                    }
                },
                ApprovalDecision::Deny { reason } => {
                    return Err(Passage::Refused(ActionResult::denied(reason)))
                }
                ApprovalDecision::Stop => {
                    return Err(Passage::Stopped(ActionResult::denied(
                        "the person stopped the run",
                    )))
                }
                ApprovalDecision::Retry => {
                    self.retry = true;
                    return Err(Passage::Refused(ActionResult::denied(RETRY_ASKED)));
                }
            };
            // An edit may be refused by the policy too.
            let facts = environment.risk_facts(&approved, page).await;
            if let Some(refusal) = self.policy.refusal(&approved, &facts) {
                return Err(Passage::Refused(refusal));
            }
            let binding = ApprovalBinding::new(&approved, &url);
            let now = environment
                .current_url()
                .await
                .unwrap_or_else(|| url.clone());
            action = approved;
            if binding.covers(&action, &now) {
                return Ok(Cleared { action, covers });
            }
            tracing::info!(step, from = %url, to = %now, "page changed during approval; asking again");
        }
    }

    /// Runs an approved custom action's handler; each action it starts
    /// comes back here through a [`GatedHost`].
    async fn run_custom<E: Environment>(
        &mut self,
        environment: &mut E,
        step: usize,
        custom: crate::actions::CustomAction,
        goal: &str,
    ) -> Passage {
        let Some((scripts, cancel)) = self.scripts.clone() else {
            return Passage::Refused(ActionResult::unknown("no scripts run custom actions here"));
        };
        self.events.send(Event::ActionRequest {
            correlation_id: format!("step-{step}"),
            action: custom.name.clone(),
            parameters: custom.params.clone(),
        });
        let mut host = GatedHost::new(self, environment, step, &custom.name, goal);
        let result = scripts
            .call_action(&custom.name, custom.params.clone(), &mut host, &cancel)
            .await;
        if host.stopped() {
            return Passage::Stopped(result);
        }
        Passage::Ran(Action::Custom(custom), result)
    }

    /// Runs an approved action: in the environment, or, for the ones that
    /// touch no page, here. A custom action reaching this goes to the
    /// environment as a whole.
    pub(crate) async fn run<E: Environment>(
        &mut self,
        environment: &mut E,
        step: usize,
        action: &Action,
    ) -> ActionResult {
        match action {
            // The agent ends its run at a hand-over; it waits for nobody here.
            Action::Done { .. } | Action::Think { .. } | Action::HandOver { .. } => {
                return ActionResult::ok()
            }
            Action::AskUser { question } => {
                let answer = self.approver.ask_user(question).await;
                return ActionResult::ok_with(json!({
                    "answer": answer.unwrap_or_else(|| "no answer available".to_string())
                }));
            }
            _ => {}
        }
        self.events.send(Event::ActionRequest {
            correlation_id: format!("step-{step}"),
            action: action.name().to_string(),
            parameters: action.params(),
        });
        let result = environment.execute(action).await;
        match (action, result) {
            (
                Action::Extract {
                    instruction,
                    schema,
                },
                ActionResult::Success { data: Some(page) },
            ) => match &self.extractor {
                Some(extractor) => extractor.extract(instruction, schema.as_ref(), &page).await,
                None => ActionResult::unknown(
                    "extract needs a model, and none is configured; read_page returns the page text instead",
                ),
            },
            (_, result) => result,
        }
    }
}

/// A healed recipe's repaired version that was not approved for
/// writing: the approval mode asked and nobody said yes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the rewrite needs approval ({} mode) and was not approved; headless, pass --yes", .mode.as_str())]
pub struct RewriteRefused {
    /// The approval mode that asked.
    pub mode: ApprovalMode,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::{ApprovalMode, HeadlessApprover};

    #[test]
    fn a_road_reads_its_mode_at_each_action() {
        let (tx, rx) = tokio::sync::watch::channel(ApprovalMode::Never);
        let (events, _rx) = EventSink::detached();
        let road = Road::new(
            Catalog::builtin(),
            Box::new(HeadlessApprover { yes: false }),
            LiveMode::following(rx),
            events,
        );
        assert_eq!(road.mode.now(), ApprovalMode::Never);
        tx.send(ApprovalMode::Always).expect("the road listens");
        assert_eq!(road.mode.now(), ApprovalMode::Always);
    }
}
