//! The MCP round trip of `webagent bench step`: the same click answered
//! directly on a session, and through the protocol (the SDK's client and
//! webagent's server, JSON-RPC over an in-process pipe), so the difference
//! is what MCP adds to a call.

use std::time::Instant;

use serde_json::json;
use tokio::sync::mpsc;

use crate::browser::LaunchOptions;
use crate::config::Config;
use crate::llm::StopSignal;
use crate::mcp::{answer, serve_session, CallState, McpCall, WebagentMcp};
use crate::serve::PageServer;
use crate::session::Prepared;

use super::median;

/// Medians of a click answered directly and through MCP, in ms.
#[derive(Debug, Clone, Copy)]
pub struct RoundTrip {
    /// Calls timed each way.
    pub runs: usize,
    /// The click answered on the session directly.
    pub direct_ms: f64,
    /// The same click as an MCP `tools/call`.
    pub mcp_ms: f64,
}

/// Times `runs` clicks each way on a small page.
pub async fn measure(launch: LaunchOptions, runs: usize) -> anyhow::Result<RoundTrip> {
    let server = PageServer::start().await?;
    server.html(
        "/mcp",
        "<!doctype html><title>MCP</title><p id=count>0</p>\
         <button id=more onclick=\"count.textContent = +count.textContent + 1\">Add one</button>",
    );
    let mut config = Config::builtin();
    config.browser.executable = launch.chrome.clone();
    config.browser.connect = launch.connect.clone();
    config.paths.sitemaps = Vec::new();
    config.agent.approve = crate::environment::ApprovalMode::Never;
    let prepared =
        Prepared::new(config, &Default::default(), &[], &[]).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (events, mut drained) = mpsc::unbounded_channel();
    tokio::spawn(async move { while drained.recv().await.is_some() {} });
    let mut session = prepared
        .start(Some(&server.url("/mcp")), events)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let click = || McpCall::Act {
        name: "click".into(),
        arguments: json!({"selector": "#more"}),
    };
    let runs = runs.max(1);
    let setup = session.agent_setup();
    let mut state = CallState::default();
    let mut direct = Vec::with_capacity(runs);
    for i in 0..runs + 3 {
        let started = Instant::now();
        let outcome = answer(
            &mut session.environment,
            &setup,
            Box::new(crate::environment::HeadlessApprover { yes: true }),
            &mut state,
            click(),
        )
        .await;
        anyhow::ensure!(outcome.ok, "the direct click failed: {}", outcome.body);
        if i >= 3 {
            direct.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    drop(setup);

    // The same session behind the protocol.
    let (calls, calls_rx) = mpsc::unbounded_channel();
    let mcp = WebagentMcp::new(calls, session.scripts.clone());
    let answering = tokio::spawn(serve_session(
        session,
        calls_rx,
        true,
        false,
        StopSignal::never(),
    ));
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    let served = tokio::spawn(async move {
        use rmcp::ServiceExt;
        let running = mcp.serve(tokio::io::split(server_end)).await?;
        running.waiting().await?;
        anyhow::Ok(())
    });
    let client = {
        use rmcp::ServiceExt;
        ().serve(tokio::io::split(client_end))
            .await
            .map_err(|e| anyhow::anyhow!("the MCP handshake: {e}"))?
    };
    let mut through = Vec::with_capacity(runs);
    for i in 0..runs + 3 {
        let params = rmcp::model::CallToolRequestParams::new("click").with_arguments(
            json!({"selector": "#more"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        let started = Instant::now();
        let result = client
            .call_tool(params)
            .await
            .map_err(|e| anyhow::anyhow!("the MCP click: {e}"))?;
        anyhow::ensure!(result.is_error != Some(true), "the MCP click failed");
        if i >= 3 {
            through.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let _ = client.cancel().await;
    let _ = served.await;
    let _ = answering.await;
    direct.sort_by(f64::total_cmp);
    through.sort_by(f64::total_cmp);
    Ok(RoundTrip {
        runs,
        direct_ms: median(&direct),
        mcp_ms: median(&through),
    })
}

/// Prints the round trip, as a table or one JSON line.
pub fn print(figures: &RoundTrip, json: bool) {
    let added = figures.mcp_ms - figures.direct_ms;
    if json {
        println!(
            "{}",
            json!({
                "mcp_runs": figures.runs,
                "direct_call_ms": super::round2(figures.direct_ms),
                "mcp_call_ms": super::round2(figures.mcp_ms),
                "mcp_added_ms": super::round2(added),
            })
        );
        return;
    }
    println!();
    println!(
        "MCP round trip: a click answered directly vs as an MCP tools/call ({} calls each)",
        figures.runs
    );
    println!("  direct (median):  {:>8.2} ms", figures.direct_ms);
    println!("  via MCP (median): {:>8.2} ms", figures.mcp_ms);
    println!(
        "  added per call:   {:>8.2} ms (goal <= 5 ms: {})",
        added,
        if added <= 5.0 { "met" } else { "MISSED" }
    );
}
