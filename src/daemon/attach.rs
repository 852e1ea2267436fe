//! The session's side of an attached workbench: whether a person
//! watches, what they are sent, and the approver that asks them.
//!
//! A command's risky action waits for the attached person's decision;
//! with nobody attached the rules `session start` was given apply. A
//! person who detaches while a decision is pending refuses it, saying so,
//! so the command never hangs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::{mpsc, oneshot};

use super::wire::News;
use crate::agent::Steering;
use crate::environment::{
    ApprovalDecision, ApprovalRequest, Approver, BoxFuture, HeadlessApprover,
};
use crate::session::ApproverFactory;

/// What a decision pending when the person detached becomes.
pub const DETACHED: &str = "not approved: the person watching the session detached before deciding";

/// The workbench attached now: where its news goes and the decisions it
/// owes.
#[derive(Debug)]
struct Link {
    news: mpsc::UnboundedSender<News>,
    pending: HashMap<u64, oneshot::Sender<ApprovalDecision>>,
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

    /// Leaves the person's message for the agent run in the session.
    pub fn steer(&self, text: String) {
        self.steering.say(text);
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
}

/// Asks the attached person, else applies the headless rules.
struct AttachedApprover {
    attachment: Attachment,
    yes: bool,
}

impl Approver for AttachedApprover {
    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        match self.attachment.ask(request) {
            Some(decision) => Box::pin(async move {
                decision.await.unwrap_or(ApprovalDecision::Deny {
                    reason: DETACHED.to_string(),
                })
            }),
            None => {
                Box::pin(async move { HeadlessApprover { yes: self.yes }.approve(request).await })
            }
        }
    }

    fn ask_user<'a>(&'a mut self, _question: &'a str) -> BoxFuture<'a, Option<String>> {
        Box::pin(async { None })
    }

    fn is_person(&self) -> bool {
        self.attachment.attached()
    }
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

    #[tokio::test]
    async fn the_attached_person_decides_and_a_detach_refuses_saying_so() {
        let attachment = Attachment::new();
        let mut news = attachment.attach().unwrap();
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
            news.recv().await.unwrap();
            attachment.detach();
        };
        let (decision, ()) = tokio::join!(waiting, leaving);
        assert_eq!(
            decision,
            ApprovalDecision::Deny {
                reason: DETACHED.into()
            }
        );
        // Nobody attached: the session's own rules (no --yes) refuse.
        let decision = approvers().approve(&asked).await;
        assert!(
            matches!(&decision, ApprovalDecision::Deny { reason } if reason.contains("--yes")),
            "{decision:?}"
        );
    }
}
