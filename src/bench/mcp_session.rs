//! `webagent bench mcp`: what an MCP client is sent over a scripted
//! 20-call session on the demo, with whole pages after each action
//! (`--whole-pages`) against deltas, both in the same run.

use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::browser::LaunchOptions;
use crate::config::Config;
use crate::demo::{DemoSite, DEMO_EMAIL, DEMO_PASSWORD};
use crate::environment::{ApprovalMode, HeadlessApprover};
use crate::mcp::{answer, CallState, McpCall};
use crate::session::Prepared;

/// Characters sent over one session.
#[derive(Debug, Clone, PartialEq)]
pub struct Sent {
    /// Calls made.
    pub calls: usize,
    /// Characters of every answer's JSON body, whole pages after actions.
    pub whole: usize,
    /// The same with deltas.
    pub delta: usize,
    /// Each call: its name, then the characters whole and with deltas.
    pub per_call: Vec<(String, usize, usize)>,
}

/// The session: sign in, browse the orders, filter them, open one, fill
/// the new-order form, scroll and read, each call as a client sends it.
fn script() -> Vec<McpCall> {
    let act = |name: &str, arguments: Value| McpCall::Act {
        name: name.into(),
        arguments,
    };
    vec![
        McpCall::Observe,
        act(
            "input_text",
            json!({"selector": "#email", "text": DEMO_EMAIL}),
        ),
        act(
            "input_text",
            json!({"selector": "#password", "text": DEMO_PASSWORD}),
        ),
        act("click", json!({"selector": "#sign-in"})),
        act("click", json!({"selector": "[data-testid=nav-orders]"})),
        act(
            "input_text",
            json!({"selector": "#order-search", "text": "key"}),
        ),
        act(
            "select_option",
            json!({"selector": "#status-filter", "value": "shipped"}),
        ),
        act("clear_input", json!({"selector": "#order-search"})),
        act(
            "select_option",
            json!({"selector": "#status-filter", "value": ""}),
        ),
        act("scroll", json!({"direction": "down"})),
        act("scroll", json!({"direction": "up"})),
        act("navigate", json!({"url": "/orders/1002"})),
        McpCall::Observe,
        act("navigate", json!({"url": "/orders/new"})),
        act(
            "input_text",
            json!({"selector": "#customer", "text": "Ada Lovelace"}),
        ),
        act(
            "select_option",
            json!({"selector": "#product", "value": "KB-01"}),
        ),
        act("input_text", json!({"selector": "#quantity", "text": "3"})),
        act("hover", json!({"selector": "[data-testid=nav-orders]"})),
        act("read_page", json!({})),
        act("navigate", json!({"url": "/dashboard"})),
    ]
}

/// Runs the script twice on the demo, whole pages then deltas.
pub async fn measure(launch: LaunchOptions) -> anyhow::Result<Sent> {
    let site = DemoSite::start().await?;
    let whole = session_sizes(&launch, &site, true).await?;
    let delta = session_sizes(&launch, &site, false).await?;
    let per_call: Vec<(String, usize, usize)> = whole
        .iter()
        .zip(&delta)
        .map(|((name, w), (_, d))| (name.clone(), *w, *d))
        .collect();
    Ok(Sent {
        calls: per_call.len(),
        whole: per_call.iter().map(|(_, w, _)| w).sum(),
        delta: per_call.iter().map(|(_, _, d)| d).sum(),
        per_call,
    })
}

/// Each call's name and the characters of its answer, in a fresh session.
async fn session_sizes(
    launch: &LaunchOptions,
    site: &DemoSite,
    whole_pages: bool,
) -> anyhow::Result<Vec<(String, usize)>> {
    let mut config = Config::builtin();
    config.browser.executable = launch.chrome.clone();
    config.browser.connect = launch.connect.clone();
    config.paths.sitemaps = Vec::new();
    config.agent.approve = ApprovalMode::Never;
    let prepared =
        Prepared::new(config, &Default::default(), &[], &[]).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (events, mut drained) = mpsc::unbounded_channel();
    tokio::spawn(async move { while drained.recv().await.is_some() {} });
    let mut session = prepared
        .start(Some(&site.url("/login")), events)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let setup = session.agent_setup();
    let mut state = CallState::new(whole_pages);
    let mut sizes = Vec::new();
    for call in script() {
        let name = match &call {
            McpCall::Act { name, .. } => name.clone(),
            _ => "observe".to_string(),
        };
        let outcome = answer(
            &mut session.environment,
            &setup,
            Box::new(HeadlessApprover { yes: true }),
            &mut state,
            call,
        )
        .await;
        anyhow::ensure!(outcome.ok, "{name} failed: {}", outcome.body);
        sizes.push((name, outcome.body.to_string().chars().count()));
    }
    drop(setup);
    session.close().await;
    Ok(sizes)
}

/// Prints the figures, as a table or one JSON line.
pub fn print(sent: &Sent, json: bool) {
    let ratio = sent.delta as f64 / sent.whole.max(1) as f64;
    if json {
        println!(
            "{}",
            json!({
                "calls": sent.calls,
                "whole_chars": sent.whole,
                "delta_chars": sent.delta,
                "delta_to_whole": super::round2(ratio),
            })
        );
        return;
    }
    println!(
        "MCP session on the demo: {} calls, characters sent to the client",
        sent.calls
    );
    println!("  {:<16} {:>8} {:>8}", "call", "whole", "delta");
    for (name, whole, delta) in &sent.per_call {
        println!("  {name:<16} {whole:>8} {delta:>8}");
    }
    println!("  {:<16} {:>8} {:>8}", "total", sent.whole, sent.delta);
    println!(
        "  deltas send {:.0}% of the whole pages' characters",
        ratio * 100.0
    );
}
