//! The dialogs over the panes as the state holds them: the approval
//! waiting on the person (with its reply channel), the model's question,
//! the step inspector and the help.

use tokio::sync::oneshot;
use tui_textarea::TextArea;

use crate::environment::{ApprovalDecision, ApprovalRequest};

/// The approval modal.
#[derive(Debug)]
pub struct ApprovalModal {
    /// What the agent asks.
    pub request: ApprovalRequest,
    /// Where the decision goes; taken when it is sent.
    pub reply: Option<oneshot::Sender<ApprovalDecision>>,
    /// The parameters being edited, as JSON `{"name": {params}}`.
    pub editor: Option<TextArea<'static>>,
    /// Why the edited parameters were refused.
    pub error: Option<String>,
    /// The person is choosing another element in the listing.
    pub picking: bool,
    /// The action as proposed, once the person picked another element
    /// for it: approving then runs the changed action as an edit.
    pub proposed: Option<crate::actions::Action>,
    /// The note being written for a refusal.
    pub note: Option<TextArea<'static>>,
}

/// The answer box for `ask_user`.
#[derive(Debug)]
pub struct AskModal {
    /// The model's question.
    pub question: String,
    /// The answer being typed.
    pub answer: TextArea<'static>,
    /// Where the answer goes; taken when it is sent.
    pub reply: Option<oneshot::Sender<Option<String>>>,
    /// The page asks, not the model (a dialog while recording): Enter
    /// accepts even with nothing typed, and only Esc dismisses.
    pub from_page: bool,
}

/// A dialog over the panes.
#[derive(Debug)]
pub enum Modal {
    /// An action waits for the person's decision.
    Approval(Box<ApprovalModal>),
    /// The model asked a question.
    AskUser(Box<AskModal>),
    /// One logged step in full.
    Inspector {
        /// Which log entry.
        entry: usize,
        /// The first line shown.
        scroll: usize,
    },
    /// One element of the listing in full.
    Element {
        /// Its row in the listing.
        position: usize,
        /// The first line shown.
        scroll: usize,
    },
    /// The locator picker on an element that is not a row of the
    /// listing (an approval's target, a past step's element, one picked
    /// on the page), over the dialog it was opened from, which comes
    /// back when it closes.
    Locators {
        /// The first line shown.
        scroll: usize,
        /// The dialog under it (an approval still waiting).
        under: Option<Box<Modal>>,
    },
    /// Every key.
    Help {
        /// The first line shown.
        scroll: usize,
    },
}
