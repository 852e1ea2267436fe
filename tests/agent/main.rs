//! The agent end to end: the real Chromium on pages this test serves on
//! 127.0.0.1, and the real LLM client talking to a scripted
//! chat-completions server. One browser for the whole binary; each test
//! opens its own tab and its own model server.
//!
//! Without Chromium these tests fail with the install command; they never
//! skip.

#[path = "../support/mod.rs"]
mod support;

mod command;
mod extraction;
mod gate;
mod lists;
mod model;
mod shop;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde_json::{json, Value};
use support::chromium::shared;
use support::llm_server::{
    tool_call_completion, tool_call_events, LlmServer, RecordedRequest, Reply,
};
use support::pages::page;
use tokio::sync::mpsc;
use webagent::actions::{Action, ActionResult, Catalog};
use webagent::agent::AGENT_TOOL_NAME;
use webagent::agent::{Agent, AgentConfig, ModelExtractor, RunOutcome, VisionSettings};
use webagent::browser::act::ExecOptions;
use webagent::browser::Driver;
use webagent::dom::{LeftOut, PageState, PageText, ScrollPosition};
use webagent::environment::{
    ApprovalDecision, ApprovalMode, ApprovalRequest, Approver, BoxFuture, Environment,
    EnvironmentError, HeadlessApprover, Masked, Road,
};
use webagent::events::{Event, EventSink, StepRecord};
use webagent::llm::{LlmClient, LlmConfig, RetryPolicy};
use webagent::secrets::Secrets;
use webagent::sitemap::{Sitemap, SitemapSet};

/// The arguments of a well-formed `agent_step` call.
fn step_args(goal: &str, action: Value) -> Value {
    json!({
        "evaluation_previous_goal": format!("judged before: {goal}"),
        "memory": format!("remembering while: {goal}"),
        "next_goal": goal,
        "action": action,
    })
}

/// A plain (non-streamed) answer calling the tool.
fn reply(goal: &str, action: Value) -> Reply {
    Reply::json(
        200,
        tool_call_completion(AGENT_TOOL_NAME, &step_args(goal, action)),
    )
}

/// A streamed answer calling the tool, the arguments in several pieces.
fn streamed(goal: &str, action: Value) -> Reply {
    Reply::sse(tool_call_events(
        AGENT_TOOL_NAME,
        &step_args(goal, action),
        4,
    ))
}

fn done(text: &str, success: bool) -> Reply {
    reply(
        "finish",
        json!({"done": {"text": text, "success": success}}),
    )
}

/// Settings of one agent run in a test.
struct Setup {
    max_steps: usize,
    approval: ApprovalMode,
    yes: bool,
    sitemap: Option<Sitemap>,
    secrets: Secrets,
    vision: VisionSettings,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            max_steps: 12,
            approval: ApprovalMode::Never,
            yes: false,
            sitemap: None,
            secrets: Secrets::new(),
            vision: VisionSettings::default(),
        }
    }
}

/// What a run left behind.
struct Run {
    outcome: RunOutcome,
    events: Vec<Event>,
    requests: Vec<RecordedRequest>,
    /// `document.body.innerText` of the page at the end.
    final_text: String,
}

impl Run {
    fn steps(&self) -> Vec<&StepRecord> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Step(step) => Some(step),
                _ => None,
            })
            .collect()
    }

    /// The user prompt of request `i` (0-based).
    fn prompt(&self, i: usize) -> String {
        let body = self.requests[i].json();
        body["messages"][1]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    fn errors(&self) -> Vec<(String, bool)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Error { error, fatal } => Some((error.clone(), *fatal)),
                _ => None,
            })
            .collect()
    }
}

fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(40),
        max_retry_after: Duration::from_millis(200),
    }
}

/// Opens `url` in a new tab and runs the agent on `task` against a model
/// server scripted with `replies`.
fn run_agent(url: &str, task: &str, replies: Vec<Reply>, setup: Setup) -> Run {
    let s = shared();
    s.runtime.block_on(async {
        let llm_server = LlmServer::start(replies).await;
        let config = LlmConfig::default()
            .with_base_url(llm_server.base_url())
            .with_model("test-model")
            .with_retry(fast_retries());
        let llm = Arc::new(LlmClient::new(config).expect("client"));
        let tab = s
            .session
            .new_tab(url)
            .await
            .expect("opening the start page");
        let mut set = SitemapSet::new();
        if let Some(sitemap) = setup.sitemap {
            set.insert(sitemap);
        }
        let sitemaps = Arc::new(RwLock::new(set));
        // A session's stack: the browser's driver under the secrets'
        // boundary, the road with its policy and `extract`'s model.
        let driver = Driver::new(tab, ExecOptions::default(), sitemaps.clone())
            .with_secrets(setup.secrets.clone());
        let environment = Masked::new(driver, setup.secrets.clone(), Arc::new(Catalog::builtin));
        let (tx, mut rx) = mpsc::unbounded_channel();
        let road = Road::new(
            Catalog::builtin(),
            Box::new(HeadlessApprover { yes: setup.yes }),
            setup.approval,
            EventSink::new(tx, setup.secrets.clone()),
        )
        .with_extractor(Some(Arc::new(ModelExtractor::new(
            Arc::clone(&llm),
            setup.secrets.clone(),
        ))));
        let mut agent = Agent::new(llm, environment, road)
            .with_sitemaps(sitemaps)
            .with_vision(setup.vision)
            .with_config(AgentConfig {
                max_steps: setup.max_steps,
                secrets: setup.secrets,
            });
        let outcome = agent.run(task).await.expect("the run starts");
        let final_text = agent
            .environment_mut()
            .inner()
            .tab()
            .eval("document.body.innerText")
            .await
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        drop(agent);
        let mut events = Vec::new();
        while let Some(event) = rx.recv().await {
            events.push(event);
        }
        Run {
            outcome,
            events,
            requests: llm_server.requests(),
            final_text,
        }
    })
}

/// Serves `body` at `path` and runs the agent there on `task`.
fn run_on_page(path: &str, body: &str, task: &str, replies: Vec<Reply>, setup: Setup) -> Run {
    let s = shared();
    s.server.html(path, page(task, body));
    run_agent(&s.server.url(path), task, replies, setup)
}

// The approval gate with a scripted environment, for tests about the
// loop's decisions rather than the browser (`gate`, `lists`).

/// A page that never changes, URLs read from a script, and a record of
/// what was executed.
struct ScriptedEnvironment {
    page: PageState,
    urls: VecDeque<String>,
    last_url: String,
    executed: Arc<Mutex<Vec<Action>>>,
}

impl ScriptedEnvironment {
    fn new(urls: &[&str], executed: Arc<Mutex<Vec<Action>>>) -> Self {
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
        self.executed.lock().unwrap().push(action.clone());
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
struct ScriptedApprover {
    decisions: VecDeque<ApprovalDecision>,
    asked: Arc<Mutex<Vec<ApprovalRequest>>>,
}

impl Approver for ScriptedApprover {
    fn approve<'a>(&'a mut self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        self.asked.lock().unwrap().push(request.clone());
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

struct GateRun {
    outcome: RunOutcome,
    events: Vec<Event>,
    executed: Vec<Action>,
    asked: Vec<ApprovalRequest>,
    requests: Vec<RecordedRequest>,
}

fn run_gate(urls: &[&str], replies: Vec<Reply>, decisions: Vec<ApprovalDecision>) -> GateRun {
    run_gate_steps(urls, replies, decisions, 5)
}

fn run_gate_steps(
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
        let executed = executed.lock().unwrap().clone();
        let asked = asked.lock().unwrap().clone();
        GateRun {
            outcome,
            events,
            executed,
            asked,
            requests: llm_server.requests(),
        }
    })
}
