//! The session's side of an attached workbench: whether a person
//! watches, what they are sent, and the approver that asks them.
//!
//! A command's risky action waits for the attached person's decision;
//! with nobody attached the rules `session start` was given apply. A
//! person who detaches while a decision is pending refuses it, saying so,
//! so the command never hangs. A run's `ask_user` goes to the attached
//! person the same way; with nobody attached, or once they leave, it has
//! no answer.
//!
//! The workbench shows the page in the session's numbering (the indices
//! commands use), while the road asks about an action in the page's own:
//! a question is put in the session's numbering before it is sent, and an
//! edited action comes back into the page's.

use std::collections::HashMap;

use serde_json::{json, Value};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::{mpsc, oneshot};

use super::wire::News;
use crate::actions::Action;
use crate::agent::Steering;
use crate::environment::{
    ApprovalDecision, ApprovalRequest, Approver, BoxFuture, HeadlessApprover,
};
use crate::mcp::Numbering;
use crate::session::ApproverFactory;

/// What a decision pending when the person detached becomes.
pub const DETACHED: &str = "not approved: the person watching the session detached before deciding";

/// The workbench attached now: where its news goes and the decisions it
/// owes.
#[derive(Debug)]
struct Link {
    news: mpsc::UnboundedSender<News>,
    pending: HashMap<u64, oneshot::Sender<ApprovalDecision>>,
    /// The answers it owes to a run's `ask_user`.
    asked: HashMap<u64, oneshot::Sender<Option<String>>>,
    /// Whether its page pane is open (it is sent pictures).
    page_shown: bool,
}

#[derive(Debug, Default)]
struct Inner {
    link: Option<Link>,
    next_question: u64,
}

/// Whether a person watches the session, shared by the session's tasks.
#[derive(Debug, Clone, Default)]
pub struct Attachment {
    inner: Arc<Mutex<Inner>>,
    /// The person's messages for the agent runs of the session.
    steering: Steering,
    /// The session's numbering: the page's index of each of its own.
    numbering: Numbering,
}

impl Attachment {
    /// Nobody attached.
    pub fn new() -> Self {
        Attachment::default()
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a person is attached now.
    pub fn attached(&self) -> bool {
        self.inner().link.is_some()
    }

    /// Attaches a workbench; its news comes out of the receiver. `None`
    /// when another one is attached already.
    pub fn attach(&self) -> Option<mpsc::UnboundedReceiver<News>> {
        let mut inner = self.inner();
        if inner.link.is_some() {
            return None;
        }
        let (news, receiver) = mpsc::unbounded_channel();
        inner.link = Some(Link {
            news,
            pending: HashMap::new(),
            asked: HashMap::new(),
            page_shown: false,
        });
        Some(receiver)
    }

    /// The person left: every pending decision is a refusal that says
    /// so, and later approvals follow the session's own rules.
    pub fn detach(&self) {
        // Dropping the senders wakes each waiting approver.
        self.inner().link = None;
    }

    /// Sends `news` to the attached workbench; nothing when none is.
    pub fn push(&self, news: News) {
        if let Some(link) = &self.inner().link {
            let _ = link.news.send(news);
        }
    }

    /// The person's decision about question `id` (one no longer pending
    /// is dropped).
    pub fn decide(&self, id: u64, decision: ApprovalDecision) {
        let waiting = self
            .inner()
            .link
            .as_mut()
            .and_then(|link| link.pending.remove(&id));
        if let Some(reply) = waiting {
            let _ = reply.send(decision);
        }
    }

    /// The person's answer to question `id` of a run (`None`: they
    /// declined); one no longer asked is dropped.
    pub fn answer(&self, id: u64, answer: Option<String>) {
        let waiting = self
            .inner()
            .link
            .as_mut()
            .and_then(|link| link.asked.remove(&id));
        if let Some(reply) = waiting {
            let _ = reply.send(answer);
        }
    }

    /// The attached workbench opened (`true`) or closed its page pane.
    pub fn show_page(&self, shown: bool) {
        if let Some(link) = self.inner().link.as_mut() {
            link.page_shown = shown;
        }
    }

    /// Whether a workbench is attached with its page pane open, so a
    /// picture of the page is worth taking.
    pub fn wants_pictures(&self) -> bool {
        self.inner()
            .link
            .as_ref()
            .is_some_and(|link| link.page_shown)
    }

    /// Leaves the person's message for the agent run in the session.
    pub fn steer(&self, text: String) {
        self.steering.say(text);
    }

    /// The numbering the session's view keeps up to date
    /// ([`crate::mcp::ClientView::mirror_into`]).
    pub fn numbering(&self) -> Numbering {
        self.numbering.clone()
    }

    /// Maps between the session's numbering and the page's now: (page to
    /// session, session to page).
    fn maps(&self) -> (HashMap<usize, usize>, HashMap<usize, usize>) {
        let numbering = self
            .numbering
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let to_session = numbering.iter().map(|(own, page)| (page.0, *own)).collect();
        let to_page = numbering.iter().map(|(own, page)| (*own, page.0)).collect();
        (to_session, to_page)
    }

    /// The inbox of the person's messages, for an agent run.
    pub fn steering(&self) -> Steering {
        self.steering.clone()
    }

    /// Approvers that ask the attached person, or apply the headless
    /// rules (`yes`: `session start --yes`) while nobody is attached.
    pub fn approvers(&self, yes: bool) -> ApproverFactory {
        let attachment = self.clone();
        Arc::new(move || {
            Box::new(AttachedApprover {
                attachment: attachment.clone(),
                yes,
            }) as Box<dyn Approver>
        })
    }

    /// Asks the attached person about `request`: the receiver of their
    /// decision, or `None` when nobody is attached.
    fn ask(&self, request: &ApprovalRequest) -> Option<oneshot::Receiver<ApprovalDecision>> {
        let mut inner = self.inner();
        let id = inner.next_question;
        inner.next_question += 1;
        let link = inner.link.as_mut()?;
        let (reply, decision) = oneshot::channel();
        link.pending.insert(id, reply);
        let question = News::Approval {
            id,
            request: Box::new(request.clone()),
        };
        link.news.send(question).ok()?;
        Some(decision)
    }

    /// Puts a run's question to the attached person: the receiver of
    /// their answer, or `None` when nobody is attached.
    fn ask_person(&self, question: &str) -> Option<oneshot::Receiver<Option<String>>> {
        let mut inner = self.inner();
        let id = inner.next_question;
        inner.next_question += 1;
        let link = inner.link.as_mut()?;
        let (reply, answer) = oneshot::channel();
        link.asked.insert(id, reply);
        let question = News::Question {
            id,
            question: question.to_string(),
        };
        link.news.send(question).ok()?;
        Some(answer)
    }
}

/// Asks the attached person, else applies the headless rules.
struct AttachedApprover {
    attachment: Attachment,
    yes: bool,
}

impl Approver for AttachedApprover {
    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        let (to_session, to_page) = self.attachment.maps();
        let shown = ApprovalRequest {
            action: renumbered(&request.action, &to_session),
            element: request
                .element
                .as_deref()
                .map(|line| renumbered_line(line, &to_session)),
            ..request.clone()
        };
        match self.attachment.ask(&shown) {
            Some(decision) => Box::pin(async move {
                match decision.await {
                    Ok(ApprovalDecision::Edit(action)) => {
                        ApprovalDecision::Edit(renumbered(&action, &to_page))
                    }
                    Ok(decision) => decision,
                    Err(_) => ApprovalDecision::Deny {
                        reason: DETACHED.to_string(),
                    },
                }
            }),
            None => {
                Box::pin(async move { HeadlessApprover { yes: self.yes }.approve(request).await })
            }
        }
    }

    fn ask_user<'a>(&'a mut self, question: &'a str) -> BoxFuture<'a, Option<String>> {
        let asked = self.attachment.ask_person(question);
        // Nobody attached, or they left before answering: no answer.
        Box::pin(async move { asked?.await.ok().flatten() })
    }

    fn is_person(&self) -> bool {
        self.attachment.attached()
    }
}

/// `action` with each element index (`index`, also inside `from` and
/// `to`) mapped by `map`; an index the map lacks stays as it is.
fn renumbered(action: &Action, map: &HashMap<usize, usize>) -> Action {
    let Ok(mut value) = serde_json::to_value(action) else {
        return action.clone();
    };
    // An action is `{"name": {params}}`.
    if let Value::Object(named) = &mut value {
        for params in named.values_mut() {
            renumber_params(params, map);
        }
    }
    serde_json::from_value(value).unwrap_or_else(|_| action.clone())
}

fn renumber_params(params: &mut Value, map: &HashMap<usize, usize>) {
    let Value::Object(fields) = params else {
        return;
    };
    if let Some(index) = fields.get_mut("index") {
        let mapped = index
            .as_u64()
            .and_then(|i| map.get(&usize::try_from(i).ok()?));
        if let Some(mapped) = mapped {
            *index = json!(mapped);
        }
    }
    for nested in ["from", "to"] {
        if let Some(target) = fields.get_mut(nested) {
            renumber_params(target, map);
        }
    }
}

/// A listing line (`[4]<button>Pay</button>`) with its index mapped.
fn renumbered_line(line: &str, map: &HashMap<usize, usize>) -> String {
    let mapped = line.strip_prefix('[').and_then(|rest| {
        let (index, tail) = rest.split_once(']')?;
        let index = map.get(&index.parse().ok()?)?;
        Some(format!("[{index}]{tail}"))
    });
    mapped.unwrap_or_else(|| line.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::{Action, Risk};

    fn request() -> ApprovalRequest {
        ApprovalRequest {
            step: 1,
            action: Action::Click {
                target: crate::actions::Target::Index {
                    index: crate::dom::ElementIndex(3),
                },
            },
            risk: Risk::Commit,
            url: "http://127.0.0.1:1/".into(),
            element: None,
            next_goal: String::new(),
        }
    }

    #[test]
    fn a_question_is_asked_in_the_session_s_numbering() {
        let map = HashMap::from([(5, 2)]);
        let asked = renumbered(&request().action, &HashMap::from([(3, 7)]));
        assert_eq!(asked.to_json(), json!({"click": {"index": 7}}));
        assert_eq!(renumbered(&asked, &map), asked, "an index not mapped stays");
        assert_eq!(
            renumbered_line("[3]<button>Pay</button>", &HashMap::from([(3, 7)])),
            "[7]<button>Pay</button>"
        );
    }

    #[tokio::test]
    async fn the_attached_person_decides_and_a_detach_refuses_saying_so() {
        let attachment = Attachment::new();
        let mut news = attachment.attach().unwrap(); // ok: a unit test, where a failure is the test failing
        assert!(attachment.attach().is_none(), "one workbench at a time");
        let approvers = attachment.approvers(false);
        let asked = request();
        let mut approver = approvers();
        let waiting = approver.approve(&asked);
        let answering = async {
            let Some(News::Approval { id, .. }) = news.recv().await else {
                panic!("no question");
            };
            attachment.decide(id, ApprovalDecision::Approve { note: None });
        };
        let (decision, ()) = tokio::join!(waiting, answering);
        assert_eq!(decision, ApprovalDecision::Approve { note: None });

        let mut approver = approvers();
        let waiting = approver.approve(&asked);
        let leaving = async {
            news.recv().await.unwrap(); // ok: a unit test, where a failure is the test failing
            attachment.detach();
        };
        let (decision, ()) = tokio::join!(waiting, leaving);
        assert_eq!(
            decision,
            ApprovalDecision::Deny {
                reason: DETACHED.into()
            }
        );
        // A run's question: answered by the person, none once they left.
        let mut news = attachment.attach().unwrap(); // ok: a unit test, where a failure is the test failing
        let mut approver = approvers();
        let asking = approver.ask_user("Which colour?");
        let answering = async {
            let Some(News::Question { id, question }) = news.recv().await else {
                panic!("no question");
            };
            assert_eq!(question, "Which colour?");
            attachment.answer(id, Some("teal".into()));
        };
        let (answer, ()) = tokio::join!(asking, answering);
        assert_eq!(answer.as_deref(), Some("teal"));
        let mut approver = approvers();
        let asking = approver.ask_user("Which size?");
        let leaving = async {
            news.recv().await.unwrap(); // ok: a unit test, where a failure is the test failing
            attachment.detach();
        };
        let (answer, ()) = tokio::join!(asking, leaving);
        assert_eq!(answer, None);
        assert_eq!(approvers().ask_user("Anyone?").await, None);

        // Nobody attached: the session's own rules (no --yes) refuse.
        let decision = approvers().approve(&asked).await;
        assert!(
            matches!(&decision, ApprovalDecision::Deny { reason } if reason.contains("--yes")),
            "{decision:?}"
        );
    }
}
