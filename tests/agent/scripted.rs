//! The approval gate with a scripted environment and approver, for tests
//! about the loop's decisions rather than the browser: a page that never
//! changes, URLs read from a script, and a record of what was executed
//! and asked.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use webagent::actions::{Action, ActionResult, Catalog};
use webagent::agent::{Agent, AgentConfig, RunOutcome};
use webagent::dom::{LeftOut, PageState, PageText, ScrollPosition};
use webagent::environment::{
    ApprovalDecision, ApprovalMode, ApprovalRequest, Approver, BoxFuture, Environment,
    EnvironmentError, Road,
};
use webagent::events::{Event, EventSink};
use webagent::llm::{LlmClient, LlmConfig};
use webagent::secrets::Secrets;

use crate::run::fast_retries;
use crate::support::chromium::shared;
use crate::support::llm_server::{LlmServer, RecordedRequest, Reply};

/// A page that never changes, URLs read from a script, and a record of
/// what was executed.
pub(crate) struct ScriptedEnvironment {
    pub(crate) page: PageState,
    pub(crate) urls: VecDeque<String>,
    pub(crate) last_url: String,
    pub(crate) executed: Arc<Mutex<Vec<Action>>>,
}

impl ScriptedEnvironment {
    pub(crate) fn new(urls: &[&str], executed: Arc<Mutex<Vec<Action>>>) -> Self {
        ScriptedEnvironment {
            page: PageState {
                observation: 1,
                url: urls[0].to_string(),
                title: "Scripted".into(),
                tabs: Vec::new(),
                scroll: ScrollPosition::default(),
                elements: Vec::new(),
                left_out: LeftOut::default(),
                full_page: false,
                listing: "[0]<button>Pay</button>\n".into(),
                page_text: PageText::default(),
                extract_ms: 0.0,
            },
            urls: urls.iter().map(|u| u.to_string()).collect(),
            last_url: urls[0].to_string(),
            executed,
        }
    }
}

impl Environment for ScriptedEnvironment {
    async fn observe(&mut self) -> Result<PageState, EnvironmentError> {
        Ok(self.page.clone())
    }

    async fn execute(&mut self, action: &Action) -> ActionResult {
        self.executed
            .lock()
            .expect("a lock no test thread poisoned")
            .push(action.clone());
        ActionResult::ok()
    }

    async fn current_url(&mut self) -> Option<String> {
        if let Some(url) = self.urls.pop_front() {
            self.last_url = url;
        }
        Some(self.last_url.clone())
    }
}

/// Answers approvals from a script and keeps every request it was shown.
pub(crate) struct ScriptedApprover {
    pub(crate) decisions: VecDeque<ApprovalDecision>,
    pub(crate) asked: Arc<Mutex<Vec<ApprovalRequest>>>,
}

impl Approver for ScriptedApprover {
    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        self.asked
            .lock()
            .expect("a lock no test thread poisoned")
            .push(request.clone());
        let decision = self
            .decisions
            .pop_front()
            .unwrap_or(ApprovalDecision::Deny {
                reason: "the script has no more decisions".into(),
            });
        Box::pin(async move { decision })
    }

    fn ask_user<'a>(&'a mut self, question: &'a str) -> BoxFuture<'a, Option<String>> {
        let answer = format!("answer to: {question}");
        Box::pin(async move { Some(answer) })
    }
}

/// What a shared record holds now.
pub(crate) fn taken<T: Clone>(record: &Mutex<Vec<T>>) -> Vec<T> {
    record
        .lock()
        .expect("a lock no test thread poisoned")
        .clone()
}

/// What a run through the gate left behind.
pub(crate) struct GateRun {
    pub(crate) outcome: RunOutcome,
    pub(crate) events: Vec<Event>,
    pub(crate) executed: Vec<Action>,
    pub(crate) asked: Vec<ApprovalRequest>,
    pub(crate) requests: Vec<RecordedRequest>,
}

/// [`run_gate_steps`] with five steps at most.
pub(crate) fn run_gate(
    urls: &[&str],
    replies: Vec<Reply>,
    decisions: Vec<ApprovalDecision>,
) -> GateRun {
    run_gate_steps(urls, replies, decisions, 5)
}

/// Runs the agent on the scripted environment behind `urls`, the model
/// answering `replies` and the person deciding `decisions` in order.
pub(crate) fn run_gate_steps(
    urls: &[&str],
    replies: Vec<Reply>,
    decisions: Vec<ApprovalDecision>,
    max_steps: usize,
) -> GateRun {
    let s = shared();
    s.runtime.block_on(async {
        let llm_server = LlmServer::start(replies).await;
        let llm = Arc::new(
            LlmClient::new(
                LlmConfig::default()
                    .with_base_url(llm_server.base_url())
                    .with_retry(fast_retries()),
            )
            .expect("client"),
        );
        let executed = Arc::new(Mutex::new(Vec::new()));
        let asked = Arc::new(Mutex::new(Vec::new()));
        let (tx, mut rx) = mpsc::unbounded_channel();
        let road = Road::new(
            Catalog::builtin(),
            Box::new(ScriptedApprover {
                decisions: decisions.into(),
                asked: asked.clone(),
            }),
            ApprovalMode::Always,
            EventSink::new(tx, Secrets::new()),
        );
        let mut agent = Agent::new(llm, ScriptedEnvironment::new(urls, executed.clone()), road)
            .with_config(AgentConfig {
                max_steps,
                secrets: Secrets::new(),
            });
        let outcome = agent.run("Pay the invoice").await.expect("runs");
        drop(agent);
        let mut events = Vec::new();
        while let Some(event) = rx.recv().await {
            events.push(event);
        }
        let executed = taken(&executed);
        let asked = taken(&asked);
        GateRun {
            outcome,
            events,
            executed,
            asked,
            requests: llm_server.requests(),
        }
    })
}
