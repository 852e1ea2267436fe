//! The MCP server: other agents (a coding assistant, a desktop chat app,
//! their own loop) drive webagent through the Model Context Protocol, on
//! the official Rust SDK (`rmcp`).
//!
//! Tools: `observe` (the page as the built-in agent's model reads it),
//! every catalog action as its own tool with its JSON schema (built-ins,
//! custom actions from the scripts, `goto_page` with the sitemaps),
//! `run_recipe` and `sitemap_search`. A call runs in the same session as
//! any command's ([`crate::session`]): the one approval gate, the one road
//! to the page (secrets filled, allowed domains, the relaunch after a
//! crash), the same events and trace. Its result is the action's
//! `{ok, …}` plus the page again when it changed, so a client needs one
//! call per step.
//!
//! Who owns the session answers the calls: [`serve_session`] without a
//! person (`--approve` / `--yes` decide, as in a headless run), or the
//! workbench's browser actor (the person approves in the modal).

mod server;
mod view;

use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

use crate::actions::{Action, ActionResult};
use crate::dom::PageState;
use crate::environment::{Approver, Environment, HeadlessApprover};
use crate::events::{EndReason, Event, TokenUsage};
use crate::llm::StopSignal;
use crate::script::{CancelFlag, HostCall, RecipeHost, ScriptHost};
use crate::session::{run_recipe, AgentSetup, Session};

pub use server::{serve_http, serve_stdio, ServeError, WebagentMcp};
pub use view::{
    apply as apply_delta, ClientView, GoneElement, Line, Numbering, PageDelta, PageUpdate,
    TextSplice,
};

/// What a client asked for, once the server has read the tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum McpCall {
    /// The page as the model reads it.
    Observe,
    /// A catalog action: `{name: arguments}`.
    Act {
        /// The action (a tool) name.
        name: String,
        /// Its parameters.
        arguments: Value,
    },
    /// Pages of the sitemaps matching a query.
    SitemapSearch {
        /// What to look for.
        query: String,
    },
    /// A recipe from the loaded scripts.
    RunRecipe {
        /// Its name.
        name: String,
    },
}

/// A call on its way to whoever owns the session, with where the answer
/// goes.
#[derive(Debug)]
pub struct McpRequest {
    /// The call.
    pub call: McpCall,
    /// The name the client gave in `initialize`, when it gave one.
    pub client: Option<String>,
    /// The answer.
    pub reply: oneshot::Sender<CallOutcome>,
}

/// The answer to one call: `body` is the JSON the client reads (`result`,
/// and `page` when the page changed), `ok` whether it succeeded.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// Whether the call did what it asked.
    pub ok: bool,
    /// What the client reads.
    pub body: Value,
}

/// What a client's session keeps between calls.
#[derive(Debug, Default)]
pub struct CallState {
    /// The page observed last, in the page's own numbering (a recipe step
    /// continues from it).
    last_page: Option<PageState>,
    /// What the client has been shown, in its own numbering.
    view: ClientView,
    /// Steps so far, so every call is numbered in the trace.
    steps: usize,
    /// Who the calls come from, as the approval and the log say it.
    caller: String,
}

impl CallState {
    /// A client's state; `whole_pages` sends the whole page after every
    /// action that changed it, never a delta.
    pub fn new(whole_pages: bool) -> Self {
        CallState {
            view: ClientView::new(whole_pages),
            caller: caller_label(None),
            ..CallState::default()
        }
    }

    /// Names the client the calls come from (the name it gave in
    /// `initialize`), for the approval and the log.
    pub fn set_client(&mut self, client: Option<&str>) {
        self.caller = caller_label(client);
    }

    /// Who the calls come from: `MCP client claude-code`.
    pub fn caller(&self) -> &str {
        &self.caller
    }

    /// Steps so far.
    pub fn steps(&self) -> usize {
        self.steps
    }
}

/// How a client is named where a person reads it.
fn caller_label(client: Option<&str>) -> String {
    match client.map(str::trim).filter(|c| !c.is_empty()) {
        Some(name) => format!("MCP client {name}"),
        None => "the MCP client".to_string(),
    }
}

/// Answers one call on `environment` (whose pages and results arrive
/// masked): actions travel the setup's road (`approver` asked when its
/// live mode says so) and are recorded like recipe steps.
pub async fn answer<E: Environment>(
    mut environment: E,
    setup: &AgentSetup,
    approver: Box<dyn Approver>,
    state: &mut CallState,
    call: McpCall,
) -> CallOutcome {
    match call {
        McpCall::Observe => match environment.observe().await {
            Ok(page) => {
                let body = json!({"page": state.view.whole(&page)});
                state.last_page = Some(page);
                CallOutcome { ok: true, body }
            }
            Err(error) => failed(ActionResult::unknown(format!(
                "observing the page failed: {}",
                error.message
            ))),
        },
        McpCall::Act {
            name,
            mut arguments,
        } => {
            // The client's indices are its own numbering.
            if let Err(message) = state.view.translate(&mut arguments) {
                return failed(ActionResult::not_found(message.to_string()));
            }
            let catalog = setup.catalog();
            let action = match catalog.parse(&json!({ name.as_str(): arguments })) {
                Ok(action) => action,
                Err(error) => return failed(error.to_result()),
            };
            let result = run_step(&mut environment, setup, approver, state, action).await;
            with_page(&mut environment, state, result).await
        }
        McpCall::SitemapSearch { query } => CallOutcome {
            ok: true,
            body: json!({"result": ActionResult::ok_with(json!({
                "matches": sitemap_matches(&setup.sitemaps, &query)
            }))}),
        },
        McpCall::RunRecipe { name } => {
            let known = setup.scripts.recipes().iter().any(|r| r.name == name);
            if !known {
                return failed(ActionResult::invalid_params(format!(
                    "no recipe named `{name}`; the loaded ones are listed in run_recipe's description"
                )));
            }
            let outcome = run_recipe(
                setup,
                &mut environment,
                &name,
                format!("recipe {name} (for an MCP client)"),
                approver,
                None,
                &CancelFlag::new(),
            )
            .await;
            state.steps += outcome.steps;
            let result = if outcome.success {
                ActionResult::ok_with(json!({"text": outcome.text, "steps": outcome.steps}))
            } else {
                ActionResult::unknown(outcome.text)
            };
            state.last_page = None;
            with_page(&mut environment, state, result).await
        }
    }
}

/// The ten best pages for `query` over every loaded sitemap.
fn sitemap_matches(
    sitemaps: &std::sync::RwLock<crate::sitemap::SitemapSet>,
    query: &str,
) -> Vec<Value> {
    let set = sitemaps
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    let mut hits: Vec<(f64, Value)> = set
        .iter()
        .flat_map(|sitemap| {
            let origin = sitemap.origin().map(str::to_owned);
            sitemap
                .search(query, 10)
                .into_iter()
                .map(|hit| {
                    (
                        hit.score,
                        json!({"path": hit.path, "title": hit.title, "origin": origin}),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    hits.sort_by(|a, b| b.0.total_cmp(&a.0));
    hits.into_iter().take(10).map(|(_, hit)| hit).collect()
}

fn failed(result: ActionResult) -> CallOutcome {
    CallOutcome {
        ok: false,
        body: json!({ "result": result }),
    }
}

/// One action along the road and onto the page, recorded as a step.
async fn run_step<E: Environment>(
    environment: &mut E,
    setup: &AgentSetup,
    approver: Box<dyn Approver>,
    state: &mut CallState,
    action: Action,
) -> ActionResult {
    let mut host = RecipeHost::new(environment, setup.road(approver))
        .continuing(state.last_page.take(), state.steps)
        .called_by(&state.caller);
    let answer = host.handle(HostCall::Act(action)).await;
    state.steps = host.steps();
    match answer {
        Ok(value) => serde_json::from_value(value)
            .unwrap_or_else(|e| ActionResult::unknown(format!("the result did not read: {e}"))),
        Err(error) => ActionResult::denied(error.to_string()),
    }
}

/// The result, and the page when it is not the one the client saw.
async fn with_page<E: Environment>(
    environment: &mut E,
    state: &mut CallState,
    result: ActionResult,
) -> CallOutcome {
    let ok = result.is_ok();
    let mut body = json!({ "result": result });
    match environment.observe().await {
        Ok(page) => {
            match state.view.update(&page) {
                PageUpdate::Same => {}
                PageUpdate::Delta(delta) => body["page_delta"] = json!(delta),
                PageUpdate::Whole(text) => body["page"] = json!(text),
            }
            state.last_page = Some(page);
        }
        Err(error) => {
            body["page_error"] = json!(error.message);
        }
    }
    CallOutcome { ok, body }
}

/// Answers calls on `session` until every sender is gone or `stop` is
/// given (a signal; the call in flight is answered first), without a
/// person: approvals follow the session's mode (`--approve`), refused
/// unless `yes`. After an action the client gets what changed in the page
/// (whole pages only with `whole_pages`). The whole conversation is one
/// run in the trace.
pub async fn serve_session(
    mut session: Session,
    mut calls: mpsc::UnboundedReceiver<McpRequest>,
    yes: bool,
    whole_pages: bool,
    stop: StopSignal,
) {
    let setup = session.agent_setup();
    let url = session.environment.current_url().await.unwrap_or_default();
    setup.events.send(Event::RunStarted {
        task: "calls from an MCP client".into(),
        url,
        model: "the MCP client".into(),
        max_steps: 0,
    });
    let mut state = CallState::new(whole_pages);
    let mut stopped = false;
    loop {
        // The stop first: a signal also drops the server, so both are
        // ready at once and the end must say it was stopped.
        let request = tokio::select! {
            biased;
            () = stop.stopped() => {
                stopped = true;
                None
            }
            request = calls.recv() => request,
        };
        let Some(request) = request else {
            break;
        };
        state.set_client(request.client.as_deref());
        let outcome = answer(
            &mut session.environment,
            &setup,
            Box::new(HeadlessApprover { yes }),
            &mut state,
            request.call,
        )
        .await;
        let _ = request.reply.send(outcome);
    }
    let (text, reason) = if stopped {
        ("stopped by a signal", EndReason::Stopped)
    } else {
        ("the MCP client disconnected", EndReason::Done)
    };
    setup.events.send(Event::Done {
        success: !stopped,
        text: format!(
            "{text} after {}",
            crate::words::counted(state.steps, "step", "steps")
        ),
        reason,
        steps: state.steps,
        usage: TokenUsage::default(),
    });
}

/// Writes the session's events to its trace until the session is gone,
/// and wakes `tools_changed` when a script reloads (its custom actions are
/// tools).
pub async fn record_events(
    mut events: mpsc::UnboundedReceiver<Event>,
    mut trace: crate::events::TraceWriter,
    tools_changed: std::sync::Arc<tokio::sync::Notify>,
) {
    let mut writing = true;
    while let Some(event) = events.recv().await {
        if matches!(event, Event::ScriptReloaded { .. }) {
            tools_changed.notify_one();
        }
        if writing {
            if let Err(error) = trace.write(&event) {
                tracing::warn!(%error, "the MCP session's trace stops here");
                writing = false;
            }
        }
    }
}
