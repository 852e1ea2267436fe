//! One agent run in a test: its settings, the run on a fresh tab of the
//! shared browser against a scripted model server, and what it left
//! behind (outcome, events, requests, the page's final text).

use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::sync::mpsc;
use webagent::actions::Catalog;
use webagent::agent::{Agent, AgentConfig, ModelExtractor, RunOutcome, VisionSettings};
use webagent::browser::act::ExecOptions;
use webagent::browser::Driver;
use webagent::environment::{ApprovalMode, HeadlessApprover, Masked, Road};
use webagent::events::{Event, EventSink, StepRecord};
use webagent::llm::{LlmClient, LlmConfig, RetryPolicy};
use webagent::secrets::Secrets;
use webagent::sitemap::{Sitemap, SitemapSet};

use crate::support::chromium::shared;
use crate::support::llm_server::{LlmServer, RecordedRequest, Reply};
use crate::support::pages::page;

/// Settings of one agent run in a test.
pub(crate) struct Setup {
    pub(crate) max_steps: usize,
    pub(crate) approval: ApprovalMode,
    pub(crate) yes: bool,
    pub(crate) sitemap: Option<Sitemap>,
    pub(crate) secrets: Secrets,
    pub(crate) vision: VisionSettings,
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
pub(crate) struct Run {
    pub(crate) outcome: RunOutcome,
    pub(crate) events: Vec<Event>,
    pub(crate) requests: Vec<RecordedRequest>,
    /// `document.body.innerText` of the page at the end.
    pub(crate) final_text: String,
}

impl Run {
    pub(crate) fn steps(&self) -> Vec<&StepRecord> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Step(step) => Some(step),
                _ => None,
            })
            .collect()
    }

    /// The user prompt of request `i` (0-based).
    pub(crate) fn prompt(&self, i: usize) -> String {
        let body = self.requests[i].json();
        body["messages"][1]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    pub(crate) fn errors(&self) -> Vec<(String, bool)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Error { error, fatal } => Some((error.clone(), *fatal)),
                _ => None,
            })
            .collect()
    }
}

/// Retries that wait milliseconds, so a test of them stays quick.
pub(crate) fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(40),
        max_retry_after: Duration::from_millis(200),
    }
}

/// Opens `url` in a new tab and runs the agent on `task` against a model
/// server scripted with `replies`.
pub(crate) fn run_agent(url: &str, task: &str, replies: Vec<Reply>, setup: Setup) -> Run {
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
pub(crate) fn run_on_page(
    path: &str,
    body: &str,
    task: &str,
    replies: Vec<Reply>,
    setup: Setup,
) -> Run {
    let s = shared();
    s.server.html(path, page(task, body));
    run_agent(&s.server.url(path), task, replies, setup)
}
