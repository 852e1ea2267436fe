//! Approvals: which actions a person must confirm, who answers, and what
//! an approval is bound to. The gate that asks is part of the
//! [`super::Road`].
//!
//! An approval covers one exact action on one element of one page. If the
//! page changed between the question and the execution (the person took
//! a while and the page navigated), the approval no longer holds and the
//! person is asked again.

use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::watch;

use crate::actions::{Action, Risk, Target};

/// A boxed future, so [`Approver`] stays usable as a trait object (the TUI
/// and the headless runner hand in different ones).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// When the person is asked before an action runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalMode {
    /// Never ask.
    Never,
    /// Ask for `commit` and `dangerous` actions (submits, leaving the site,
    /// uploads, scripts).
    #[default]
    Risky,
    /// Ask before every action that touches the page.
    Always,
}

impl ApprovalMode {
    /// Whether an action of this effective risk needs a person's yes.
    /// `done`, `think`, `ask_user` and `hand_over` never do: they do not
    /// touch the page.
    pub fn requires(self, action: &Action, risk: Risk) -> bool {
        if matches!(
            action,
            Action::Done { .. }
                | Action::Think { .. }
                | Action::AskUser { .. }
                | Action::HandOver { .. }
        ) {
            return false;
        }
        match self {
            ApprovalMode::Never => false,
            ApprovalMode::Risky => risk >= Risk::Commit,
            ApprovalMode::Always => true,
        }
    }

    /// The word used on the command line and in config.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::Never => "never",
            ApprovalMode::Risky => "risky",
            ApprovalMode::Always => "always",
        }
    }
}

impl FromStr for ApprovalMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "never" => Ok(ApprovalMode::Never),
            "risky" => Ok(ApprovalMode::Risky),
            "always" => Ok(ApprovalMode::Always),
            other => Err(format!(
                "unknown approval mode `{other}`; use never, risky or always"
            )),
        }
    }
}

/// The approval mode as it is at each moment: fixed for a headless run,
/// changed by the person in the workbench while a run goes on. The gate
/// reads it for every action, so whoever answers never decides twice.
#[derive(Debug, Clone)]
pub struct LiveMode(watch::Receiver<ApprovalMode>);

impl LiveMode {
    /// A mode that never changes.
    pub fn fixed(mode: ApprovalMode) -> Self {
        LiveMode(watch::channel(mode).1)
    }

    /// A mode the holder of the sender changes; the road sees each change
    /// from the next action on.
    pub fn following(receiver: watch::Receiver<ApprovalMode>) -> Self {
        LiveMode(receiver)
    }

    /// The mode now.
    pub fn now(&self) -> ApprovalMode {
        *self.0.borrow()
    }
}

impl From<ApprovalMode> for LiveMode {
    fn from(mode: ApprovalMode) -> Self {
        LiveMode::fixed(mode)
    }
}

/// What the person is asked to decide (sent as JSON to a workbench
/// attached to a named session).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The step, from 1.
    pub step: usize,
    /// The action the model chose.
    pub action: Action,
    /// Its risk on this page.
    pub risk: Risk,
    /// The page it would run on.
    pub url: String,
    /// The targeted element as listed (`[4]<button>Pay</button>`): the
    /// index's listing line, or what a selector matched on the page.
    pub element: Option<String>,
    /// The model's stated goal for the step.
    pub next_goal: String,
}

/// The person's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run the action as proposed.
    Approve {
        /// Who or what approved when it was not a person (`--yes`).
        note: Option<String>,
    },
    /// Run it, and approve every later action of the same name for the
    /// rest of the run (the policy still refuses what it refuses).
    ApproveNameForRun,
    /// Run it, and approve every later action of the run.
    ApproveAllForRun,
    /// Run this custom action, but ask about each step its handler takes
    /// (a plain approval of a custom action covers its steps up to its
    /// own risk).
    ApproveAskingEachStep,
    /// Run this action instead: edited parameters or another element. It
    /// is validated again before it runs.
    Edit(Action),
    /// Do not run it; the model sees a `denied` result with this reason.
    /// Skipping a step is a denial too.
    Deny {
        /// Why, in words the model can act on.
        reason: String,
    },
    /// Stop the whole run.
    Stop,
    /// Do not run it; ask the model again for the same step (an agent run
    /// only; anyone else reads it as a refusal).
    Retry,
}

/// Whoever answers approvals and `ask_user` questions: the TUI's modal, or
/// the headless rules. It is only asked about actions the live mode says
/// need a yes.
pub trait Approver: Send {
    /// Decides about one action.
    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision>;

    /// Answers the model's question, or `None` when nobody can.
    fn ask_user<'a>(&'a mut self, question: &'a str) -> BoxFuture<'a, Option<String>>;

    /// Whether a person decides here (not rules such as `--yes`): only a
    /// person's decisions are marked as theirs in the log.
    fn is_person(&self) -> bool {
        true
    }

    /// Decides whether a healed recipe's repaired version may be written:
    /// `rewrite` names the file and shows each change. By default the
    /// person is asked as a question, and only a yes writes it.
    fn approve_rewrite<'a>(&'a mut self, rewrite: &'a RecipeRewrite) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            let question = format!(
                "The replay healed {} step(s). Write the repaired recipe to {}?\n{}\nAnswer yes to write it.",
                rewrite.healed, rewrite.file, rewrite.changes
            );
            let answer = self.ask_user(&question).await.unwrap_or_default();
            matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
        })
    }
}

/// A repaired recipe waiting to be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipeRewrite {
    /// The file it would be written to.
    pub file: String,
    /// How many steps were healed.
    pub healed: usize,
    /// Each change, one per line (`step 3: id:login → role:button:Sign in`).
    pub changes: String,
}

/// The rules of a run without a person at a terminal: every approval is
/// refused unless `--yes` was given, and questions go unanswered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadlessApprover {
    /// Approve everything (`--yes`).
    pub yes: bool,
}

impl Approver for HeadlessApprover {
    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        let decision = if self.yes {
            ApprovalDecision::Approve {
                note: Some("approved by --yes".into()),
            }
        } else {
            ApprovalDecision::Deny {
                // Read by a person (a suite's report, a run's log) as
                // much as by the model, whose prompt already says a
                // denied action is not to be worked around.
                reason: format!(
                    "not approved: a {} action needs approval, and a headless run approves only \
                     with --yes",
                    request.risk
                ),
            }
        };
        Box::pin(async move { decision })
    }

    fn ask_user<'a>(&'a mut self, _question: &'a str) -> BoxFuture<'a, Option<String>> {
        Box::pin(async { None })
    }

    fn is_person(&self) -> bool {
        false
    }

    /// Headless, a rewrite is written with `--yes` and refused without.
    fn approve_rewrite<'a>(&'a mut self, _rewrite: &'a RecipeRewrite) -> BoxFuture<'a, bool> {
        let yes = self.yes;
        Box::pin(async move { yes })
    }
}

/// The approver of an action a person chose themselves: one typed at the
/// workbench's `:` line, or a check written into a suite. Choosing it was
/// the approval, so whenever the live mode asks, the road records it as
/// approved by that person (with `note`) and runs it. Questions and
/// recipe rewrites go to `asks`, the person's usual approver, when there
/// is one.
pub struct PersonsOwn {
    note: String,
    asks: Option<Box<dyn Approver>>,
}

impl PersonsOwn {
    /// Approves every action as the person's own, saying `note` (who
    /// chose it, and where) in the approval record.
    pub fn new(note: impl Into<String>) -> Self {
        PersonsOwn {
            note: note.into(),
            asks: None,
        }
    }

    /// Passes questions and rewrites on to `asks`.
    pub fn asking(mut self, asks: Box<dyn Approver>) -> Self {
        self.asks = Some(asks);
        self
    }
}

impl std::fmt::Debug for PersonsOwn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PersonsOwn")
            .field("note", &self.note)
            .field("asks", &self.asks.is_some())
            .finish()
    }
}

impl Approver for PersonsOwn {
    fn approve<'a>(&'a mut self, _request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        let note = Some(self.note.clone());
        Box::pin(async move { ApprovalDecision::Approve { note } })
    }

    fn ask_user<'a>(&'a mut self, question: &'a str) -> BoxFuture<'a, Option<String>> {
        match self.asks.as_mut() {
            Some(asks) => asks.ask_user(question),
            None => Box::pin(async { None }),
        }
    }

    fn approve_rewrite<'a>(&'a mut self, rewrite: &'a RecipeRewrite) -> BoxFuture<'a, bool> {
        match self.asks.as_mut() {
            Some(asks) => asks.approve_rewrite(rewrite),
            None => Box::pin(async { false }),
        }
    }
}

/// What an approval holds for: the exact action (with its parameters), its
/// target and the page URL.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalBinding {
    action: Value,
    target: Option<Target>,
    url: String,
}

impl ApprovalBinding {
    /// Binds an approval given for `action` on `url`.
    pub fn new(action: &Action, url: &str) -> Self {
        ApprovalBinding {
            action: action.to_json(),
            target: action.target().cloned(),
            url: url.to_string(),
        }
    }

    /// Whether the approval still covers `action` on `url`.
    pub fn covers(&self, action: &Action, url: &str) -> bool {
        self.action == action.to_json()
            && self.target.as_ref() == action.target()
            && same_page(&self.url, url)
    }
}

/// Two URLs name the same page: a change of fragment alone does not count.
fn same_page(a: &str, b: &str) -> bool {
    let strip = |u: &str| u.split('#').next().unwrap_or(u).to_string();
    strip(a) == strip(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::Catalog;
    use serde_json::json;

    fn action(value: Value) -> Action {
        Catalog::builtin().parse(&value).unwrap()
    }

    #[test]
    fn modes_ask_for_what_they_say() {
        let click = action(json!({"click": {"index": 1}}));
        let done = action(json!({"done": {"text": "x", "success": true}}));
        assert!(!ApprovalMode::Never.requires(&click, Risk::Dangerous));
        assert!(!ApprovalMode::Risky.requires(&click, Risk::Interact));
        assert!(ApprovalMode::Risky.requires(&click, Risk::Commit));
        assert!(ApprovalMode::Risky.requires(&click, Risk::Dangerous));
        assert!(ApprovalMode::Always.requires(&click, Risk::Read));
        assert!(!ApprovalMode::Always.requires(&done, Risk::Read));
        assert_eq!("RISKY".parse::<ApprovalMode>(), Ok(ApprovalMode::Risky));
        assert!("sometimes"
            .parse::<ApprovalMode>()
            .unwrap_err()
            .contains("never, risky or always"));
        assert_eq!(ApprovalMode::default(), ApprovalMode::Risky);
    }

    #[test]
    fn an_approval_binds_to_action_target_and_page() {
        let submit = action(json!({"submit_form": {"index": 4}}));
        let binding = ApprovalBinding::new(&submit, "http://a.test/orders/new");
        assert!(binding.covers(&submit, "http://a.test/orders/new"));
        assert!(binding.covers(&submit, "http://a.test/orders/new#top"));
        assert!(
            !binding.covers(&submit, "http://a.test/orders/7"),
            "page changed"
        );
        let other_element = action(json!({"submit_form": {"index": 5}}));
        assert!(!binding.covers(&other_element, "http://a.test/orders/new"));
        let typed = action(json!({"input_text": {"index": 4, "text": "a"}}));
        let binding = ApprovalBinding::new(&typed, "http://a.test/");
        let retyped = action(json!({"input_text": {"index": 4, "text": "b"}}));
        assert!(
            !binding.covers(&retyped, "http://a.test/"),
            "parameters changed"
        );
    }

    #[test]
    fn headless_denies_unless_yes_and_cannot_answer() {
        let request = ApprovalRequest {
            step: 1,
            action: action(json!({"submit_form": {"index": 1}})),
            risk: Risk::Commit,
            url: "http://a.test/".into(),
            element: None,
            next_goal: "submit".into(),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let decision = HeadlessApprover { yes: false }.approve(&request).await;
            match decision {
                ApprovalDecision::Deny { reason } => assert!(reason.contains("--yes"), "{reason}"),
                other => panic!("expected a denial, got {other:?}"),
            }
            assert!(matches!(
                HeadlessApprover { yes: true }.approve(&request).await,
                ApprovalDecision::Approve { .. }
            ));
            assert_eq!(HeadlessApprover { yes: true }.ask_user("why?").await, None);
        });
    }
}
