//! The protocol side: tools listed from the live catalog, calls handed to
//! whoever owns the session, and a `tools/list_changed` notification when
//! the scripts reload. Everything below the JSON-RPC layer is the SDK's.

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot, Notify};

use super::{CallOutcome, McpCall, McpRequest};
use crate::actions::{ActionSpec, Risk};
use crate::script::Scripts;

/// Tools that are not catalog actions.
const OBSERVE: &str = "observe";
const RUN_RECIPE: &str = "run_recipe";
const SITEMAP_SEARCH: &str = "sitemap_search";

/// The MCP server of one session.
#[derive(Clone)]
pub struct WebagentMcp {
    calls: mpsc::UnboundedSender<McpRequest>,
    scripts: Scripts,
    peer: Arc<Mutex<Option<Peer<RoleServer>>>>,
}

impl WebagentMcp {
    /// A server whose calls go to `calls`; tools come from `scripts` as
    /// they are at each request.
    pub fn new(calls: mpsc::UnboundedSender<McpRequest>, scripts: Scripts) -> Self {
        WebagentMcp {
            calls,
            scripts,
            peer: Arc::new(Mutex::new(None)),
        }
    }

    /// Sends `tools/list_changed` to the client each time `changed` is
    /// notified (a script was edited), for as long as the server lives.
    pub fn notify_on(&self, changed: Arc<Notify>) {
        let peer = Arc::clone(&self.peer);
        tokio::spawn(async move {
            loop {
                changed.notified().await;
                let current = peer.lock().unwrap_or_else(PoisonError::into_inner).clone();
                if let Some(peer) = current {
                    if let Err(error) = peer.notify_tool_list_changed().await {
                        tracing::debug!(%error, "sending tools/list_changed");
                    }
                }
            }
        });
    }

    fn remember(&self, peer: &Peer<RoleServer>) {
        let mut slot = self.peer.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(peer.clone());
        }
    }

    /// Every tool: the session's own three, then the catalog's actions.
    pub fn tools(&self) -> Vec<Tool> {
        let catalog = self
            .scripts
            .catalog()
            .unwrap_or_else(|_| crate::actions::Catalog::builtin());
        let recipes: Vec<String> = self
            .scripts
            .recipes()
            .iter()
            .map(|r| format!("{} ({})", r.name, r.description))
            .collect();
        let mut tools = vec![
            tool(
                OBSERVE,
                "The current page as webagent's own model reads it: URL, title, tabs, the \
                 indexed list of interactive elements and the page text. Index targets of \
                 other tools refer to the latest listing. Risk: read.",
                json!({"type": "object", "properties": {}}),
                Risk::Read,
            ),
            tool(
                RUN_RECIPE,
                &format!(
                    "Runs a recipe from the loaded Rhai scripts; each of its steps passes the \
                     approval gate. Loaded: {}. Risk: depends on its steps.",
                    if recipes.is_empty() {
                        "none".to_string()
                    } else {
                        recipes.join("; ")
                    }
                ),
                json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
                Risk::Commit,
            ),
            tool(
                SITEMAP_SEARCH,
                "Searches the site's sitemap (titles, descriptions, keywords in any language, \
                 paths) and returns the best matching pages. Risk: read.",
                json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
                Risk::Read,
            ),
        ];
        for spec in catalog.specs() {
            if [OBSERVE, RUN_RECIPE, SITEMAP_SEARCH].contains(&spec.name.as_str()) {
                tracing::warn!(name = %spec.name, "a custom action shadows a session tool; left out");
                continue;
            }
            tools.push(action_tool(spec));
        }
        tools
    }

    async fn ask(&self, call: McpCall, client: Option<String>) -> CallOutcome {
        let (reply, answer) = oneshot::channel();
        let request = McpRequest {
            call,
            client,
            reply,
        };
        if self.calls.send(request).is_err() {
            return gone();
        }
        answer.await.unwrap_or_else(|_| gone())
    }
}

fn gone() -> CallOutcome {
    CallOutcome {
        ok: false,
        body: json!({"result": {"ok": false, "reason": "unknown", "message": "the browser session has ended"}}),
    }
}

fn tool(name: &str, description: &str, schema: Value, risk: Risk) -> Tool {
    let schema: JsonObject = match schema {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    Tool::new(name.to_string(), description.to_string(), Arc::new(schema)).with_annotations(
        ToolAnnotations::new()
            .read_only(risk == Risk::Read)
            .destructive(risk >= Risk::Commit)
            .open_world(true),
    )
}

/// A catalog action as a tool: its schema, its description with the risk
/// level, and the annotations MCP defines for read-only and destructive
/// tools.
fn action_tool(spec: &ActionSpec) -> Tool {
    let mut schema = spec.schema.clone();
    if let Value::Object(map) = &mut schema {
        map.entry("type").or_insert(json!("object"));
    }
    let description = format!(
        "{} Risk: {}{}.",
        spec.description.trim_end_matches('.'),
        spec.risk.as_str(),
        match spec.risk {
            Risk::Commit | Risk::Dangerous =>
                " (asks for approval unless the approval mode says never)",
            _ => "",
        }
    );
    tool(&spec.name, &description, schema, spec.risk)
}

fn to_result(outcome: CallOutcome) -> CallToolResult {
    let text = serde_json::to_string_pretty(&outcome.body).unwrap_or_default();
    let mut result = if outcome.ok {
        CallToolResult::success(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::error(vec![ContentBlock::text(text)])
    };
    result.structured_content = Some(outcome.body);
    result
}

impl ServerHandler for WebagentMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("webagent", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "webagent drives a real Chromium. Call observe first; target elements by the \
             index in the latest listing (or a CSS selector). Each action's result carries the \
             page again when it changed. Risky actions may need a person's approval; a refusal \
             comes back as reason `denied` with their note. Secrets are written as \
             <secret>NAME</secret> and never shown.",
        )
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.remember(&context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.remember(&context.peer);
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.remember(&context.peer);
        let client = context
            .peer
            .peer_info()
            .map(|info| info.client_info.name.clone());
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let text_argument = |key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| {
                    McpError::invalid_params(format!("`{key}` (a string) is required"), None)
                })
        };
        let outcome = match request.name.as_ref() {
            OBSERVE => self.ask(McpCall::Observe, client).await,
            SITEMAP_SEARCH => {
                let query = text_argument("query")?;
                self.ask(McpCall::SitemapSearch { query }, client).await
            }
            RUN_RECIPE => {
                let name = text_argument("name")?;
                self.ask(McpCall::RunRecipe { name }, client).await
            }
            name => {
                let known = self
                    .scripts
                    .catalog()
                    .unwrap_or_else(|_| crate::actions::Catalog::builtin())
                    .get(name)
                    .is_some();
                if !known {
                    return Err(McpError::invalid_params(
                        format!("no tool named `{name}`; tools/list has them all"),
                        None,
                    ));
                }
                let call = McpCall::Act {
                    name: name.to_string(),
                    arguments,
                };
                self.ask(call, client).await
            }
        };
        Ok(to_result(outcome).into())
    }
}

/// Why the MCP server could not serve.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The HTTP port could not be opened or stopped accepting.
    #[error("listening on 127.0.0.1:{port}: {source}")]
    Listen {
        /// The port asked for.
        port: u16,
        /// What the system said.
        source: std::io::Error,
    },
    /// The MCP handshake on stdio failed.
    #[error("starting the MCP server on stdio: {0}")]
    Start(String),
    /// The session ended with an error.
    #[error("the MCP session ended with an error: {0}")]
    Ended(String),
}

/// Serves MCP over streamable HTTP at `http://127.0.0.1:PORT/` until the
/// process ends; every client shares the one session. `bound` hears the
/// address once it listens (port 0 picks a free one).
pub async fn serve_http(
    server: WebagentMcp,
    port: u16,
    bound: impl FnOnce(std::net::SocketAddr),
) -> Result<(), ServeError> {
    let listen = |source| ServeError::Listen { port, source };
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::StreamableHttpService;

    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(listen)?;
    bound(listener.local_addr().map_err(listen)?);
    let service = TowerToHyperService::new(StreamableHttpService::new(
        move || Ok(server.clone()),
        LocalSessionManager::default().into(),
        Default::default(),
    ));
    loop {
        let (stream, _) = listener.accept().await.map_err(listen)?;
        let service = service.clone();
        tokio::spawn(async move {
            let served = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
            if let Err(error) = served {
                tracing::debug!(%error, "an MCP HTTP connection ended");
            }
        });
    }
}

/// Serves MCP on this process's stdin and stdout until the client leaves.
pub async fn serve_stdio(server: WebagentMcp) -> Result<(), ServeError> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::Start(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| ServeError::Ended(e.to_string()))?;
    Ok(())
}
