//! `webagent bench observe`.

use crate::actions::Catalog;
use crate::browser::act::ExecOptions;
use crate::browser::{BrowserSession, Driver, ObserveOptions};
use crate::serve::PageServer;
use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use chromiumoxide::cdp::browser_protocol::page::NavigateParams;
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::Page;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{median, percentile, round2};
use crate::config::BrowserOpts;

/// Flags of `webagent bench observe`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Repetitions per page and method (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Navigations per page for the step and its floor, taking turns. More
    /// than `--runs`: whether Chromium draws the page's first frame before
    /// or after its load event varies from one navigation to the next, and
    /// moves either side by tens of milliseconds.
    #[arg(long, default_value_t = 25)]
    pub step_runs: usize,
    /// Only pages whose name contains this text (e.g. `items-20000`).
    #[arg(long)]
    pub only: Option<String>,
    /// Print one JSON object per page instead of a table.
    #[arg(long)]
    pub json: bool,
    /// The browser to use.
    #[command(flatten)]
    pub browser: BrowserOpts,
}

/// Runs `webagent bench observe`.
pub fn bench(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let runtime = crate::session::runtime()?;
    runtime.block_on(bench_command(args))
}

/// The generated benchmark pages: name and HTML. The iframe page loads
/// its frames from `/frame` on the same server.
pub fn bench_pages() -> Vec<(String, String)> {
    let mut pages = Vec::new();
    for n in [1_000usize, 5_000, 20_000] {
        pages.push((format!("items-{n}"), list_page(n)));
    }
    pages.push(("table-100x20".into(), table_page(100, 20)));
    pages.push(("form-500".into(), form_page(500)));
    pages.push(("shadow-200".into(), shadow_page(200)));
    pages.push(("iframes-20x50".into(), iframes_page(20)));
    pages
}

fn list_page(n: usize) -> String {
    let mut html = String::with_capacity(n * 140);
    html.push_str(
        "<!doctype html><html><head><title>List</title><style>\
         .act{cursor:pointer;display:inline-block;padding:2px 6px}li{padding:2px}\
         </style></head><body><h1>Items</h1><ul>",
    );
    for i in 0..n {
        html.push_str(&format!(
            "<li><div class=\"act\" onclick=\"this.dataset.n=1\">Open item {i}</div> \
             <span>detail {i}</span> <a href=\"#item-{i}\">link {i}</a></li>"
        ));
    }
    html.push_str("</ul></body></html>");
    html
}

fn table_page(rows: usize, cols: usize) -> String {
    let mut html =
        String::from("<!doctype html><html><head><title>Table</title></head><body><table>");
    for r in 0..rows {
        html.push_str("<tr>");
        for c in 0..cols {
            html.push_str(&format!("<td><input name=\"r{r}c{c}\" size=\"4\"></td>"));
        }
        html.push_str("</tr>");
    }
    html.push_str("</table></body></html>");
    html
}

fn form_page(n: usize) -> String {
    let mut html =
        String::from("<!doctype html><html><head><title>Form</title></head><body><form>");
    for i in 0..n {
        let control = match i % 5 {
            0 => format!("<label>Field {i} <input type=\"text\" name=\"f{i}\" placeholder=\"value {i}\"></label>"),
            1 => format!("<label><input type=\"checkbox\" name=\"f{i}\"> Option {i}</label>"),
            2 => format!("<select name=\"f{i}\"><option>a</option><option>b</option><option>c</option></select>"),
            3 => format!("<textarea name=\"f{i}\" rows=\"1\"></textarea>"),
            _ => format!("<button type=\"button\" name=\"f{i}\">Action {i}</button>"),
        };
        html.push_str(&format!("<p>{control}</p>"));
    }
    html.push_str("<button type=\"submit\">Submit</button></form></body></html>");
    html
}

fn shadow_page(n: usize) -> String {
    format!(
        "<!doctype html><html><head><title>Shadow</title></head><body><div id=\"hosts\"></div><script>\
         const hosts = document.getElementById('hosts');\
         for (let i = 0; i < {n}; i++) {{\
           const h = document.createElement('div'); hosts.appendChild(h);\
           const root = h.attachShadow({{mode: 'open'}});\
           root.innerHTML = `<p>Card ${{i}}</p><button>Buy ${{i}}</button><input placeholder=\"qty ${{i}}\">`;\
         }}</script></body></html>"
    )
}

fn iframe_child(buttons: usize) -> String {
    let mut html = String::from("<!doctype html><html><body>");
    for b in 0..buttons {
        html.push_str(&format!("<button>Button {b}</button> "));
    }
    html.push_str("</body></html>");
    html
}

fn iframes_page(frames: usize) -> String {
    let mut html = String::from("<!doctype html><html><head><title>Frames</title></head><body>");
    for f in 0..frames {
        html.push_str(&format!(
            "<iframe src=\"/frame?{f}\" width=\"600\" height=\"300\" title=\"frame {f}\"></iframe>"
        ));
    }
    html.push_str("</body></html>");
    html
}

/// Medians of one benchmark page, in milliseconds.
#[derive(Debug, Clone)]
struct PageFigures {
    name: String,
    default_ms: f64,
    full_ms: f64,
    snapshot_ms: f64,
    default_elements: usize,
    full_elements: usize,
    snapshot_nodes: usize,
    /// The step after a navigation, against its floor.
    step: StepFigures,
}

/// The step after a navigation and its floor, medians in milliseconds.
#[derive(Debug, Clone, Default)]
struct StepFigures {
    /// A bare CDP client on a tab of its own: `Page.navigate`, the load
    /// event, the first `Runtime.evaluate("1")`.
    floor_ms: f64,
    /// webagent's step: the `navigate` action (load and settling
    /// included) through the session's driver, then the observation.
    step_ms: f64,
    /// The `navigate` action alone.
    navigate_ms: f64,
    /// Its settling (the part of `navigate_ms` after the load).
    settle_ms: f64,
    /// The first observation of the new document, after the action.
    first_ms: f64,
    /// Steps whose observation the document's first look answered, of
    /// `runs`.
    looks: u64,
    runs: usize,
    /// The first and third quartiles of each run's step over the floor
    /// timed beside it: how far single steps stray from the ratio.
    pair_quartiles: (f64, f64),
}

impl StepFigures {
    fn ratio(&self) -> f64 {
        self.step_ms / self.floor_ms.max(0.001)
    }
}

/// What a bare CDP client waits for after a navigation: the load event
/// (chromiumoxide answers `Page.navigate` once the page's `load`
/// lifecycle event came) and its first evaluation.
async fn bare_step(bare: &Page, url: &str, limit: Duration) -> anyhow::Result<Duration> {
    let started = Instant::now();
    tokio::time::timeout(limit, bare.execute(NavigateParams::new(url))).await??;
    tokio::time::timeout(limit, bare.execute(EvaluateParams::new("1"))).await??;
    Ok(started.elapsed())
}

/// The floor and webagent's step on the same page, taking turns (and
/// turning the order around each run) so the machine's load shifts both
/// alike. Every run loads a new document: the URL differs each time and
/// each tab goes to a blank page first, as an agent's navigation does.
async fn measure_step(
    driver: &mut Driver,
    bare: &Page,
    url: &str,
    runs: usize,
) -> anyhow::Result<StepFigures> {
    let limit = Duration::from_secs(120);
    let catalog = Catalog::builtin();
    let navigate = |to: &str| {
        catalog
            .parse(&serde_json::json!({"navigate": {"url": to}}))
            .map_err(|e| anyhow::anyhow!("building the navigation to {to}: {e}"))
    };
    let blank = navigate("about:blank")?;
    let looks_before = driver.tab().first_looks_used();
    let (mut floor, mut step, mut nav, mut settle, mut first) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs.max(1) {
        for turn in 0..2 {
            if (run + turn) % 2 == 0 {
                tokio::time::timeout(limit, bare.execute(NavigateParams::new("about:blank")))
                    .await??;
                let took = bare_step(bare, &format!("{url}?floor={run}"), limit).await?;
                floor.push(took.as_secs_f64() * 1000.0);
                // Leave at once: the page's first frame and its painting
                // would otherwise run on into webagent's turn.
                tokio::time::timeout(limit, bare.execute(NavigateParams::new("about:blank")))
                    .await??;
                continue;
            }
            let cleared = driver.execute(&blank).await;
            if !cleared.is_ok() {
                anyhow::bail!(
                    "leaving for a blank page: {}",
                    serde_json::to_string(&cleared)?
                );
            }
            let to = navigate(&format!("{url}?step={run}"))?;
            let started = Instant::now();
            let result = driver.execute(&to).await;
            let acted = started.elapsed();
            if !result.is_ok() {
                anyhow::bail!("navigating to {url}: {}", serde_json::to_string(&result)?);
            }
            driver
                .observe()
                .await
                .map_err(|e| anyhow::anyhow!("observing {url}: {}", e.message))?;
            let ms = |d: Duration| d.as_secs_f64() * 1000.0;
            step.push(ms(started.elapsed()));
            nav.push(ms(acted));
            first.push(ms(started.elapsed() - acted));
            settle.push(
                result
                    .data()
                    .and_then(|d| d.get("settle_ms"))
                    .and_then(serde_json::Value::as_f64)
                    .unwrap_or(0.0),
            );
            // Likewise out of the floor's turn.
            let _ = driver.execute(&blank).await;
        }
    }
    // Each run's step against the floor timed beside it.
    let mut pairs: Vec<f64> = step
        .iter()
        .zip(&floor)
        .map(|(s, f)| s / f.max(0.001))
        .collect();
    pairs.sort_by(f64::total_cmp);
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        median(&v)
    };
    Ok(StepFigures {
        floor_ms: med(floor),
        step_ms: med(step),
        navigate_ms: med(nav),
        settle_ms: med(settle),
        first_ms: med(first),
        looks: driver.tab().first_looks_used() - looks_before,
        runs: runs.max(1),
        pair_quartiles: (percentile(&pairs, 25.0), percentile(&pairs, 75.0)),
    })
}

async fn measure_page(
    driver: &mut Driver,
    bare: &Page,
    name: &str,
    url: &str,
    runs: usize,
    step_runs: usize,
) -> anyhow::Result<PageFigures> {
    let step = measure_step(driver, bare, url, step_runs).await?;
    let tab = driver.tab();
    tab.navigate(url, Duration::from_secs(120)).await?;
    let default_opts = ObserveOptions {
        timeout: Duration::from_secs(120),
        ..ObserveOptions::default()
    };
    let full_opts = ObserveOptions {
        full_page: true,
        ..default_opts.clone()
    };
    let limit = Duration::from_secs(120);
    // One warm-up each: the first call creates the isolated world and
    // installs the observer, which a session pays once per document.
    tab.observe(&default_opts).await?;
    tab.capture_snapshot(limit).await?;
    // The three methods take turns within each round, so a change in the
    // machine's load shifts all of them alike and the ratios stay fair.
    let (mut d_times, mut f_times, mut s_times) = (Vec::new(), Vec::new(), Vec::new());
    let (mut default_elements, mut full_elements, mut snapshot_nodes) = (0, 0, 0);
    for _ in 0..runs.max(1) {
        let started = Instant::now();
        default_elements = tab.observe(&default_opts).await?.elements.len();
        d_times.push(started.elapsed().as_secs_f64() * 1000.0);
        let started = Instant::now();
        full_elements = tab.observe(&full_opts).await?.elements.len();
        f_times.push(started.elapsed().as_secs_f64() * 1000.0);
        let started = Instant::now();
        snapshot_nodes = tab.capture_snapshot(limit).await?;
        s_times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    for times in [&mut d_times, &mut f_times, &mut s_times] {
        times.sort_by(f64::total_cmp);
    }
    Ok(PageFigures {
        name: name.to_string(),
        default_ms: median(&d_times),
        full_ms: median(&f_times),
        snapshot_ms: median(&s_times),
        default_elements,
        full_elements,
        snapshot_nodes,
        step,
    })
}

async fn bench_command(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let server = PageServer::start().await?;
    server.html("/frame", iframe_child(50));
    let mut names = Vec::new();
    for (name, html) in bench_pages() {
        if args.only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        server.html(&format!("/{name}"), html);
        names.push(name);
    }
    let launch = args.browser.launch_options();
    let window = launch.window;
    let session = BrowserSession::start(launch).await?;
    let tab = session.new_tab("about:blank").await?;
    let mut driver = Driver::new(tab, ExecOptions::default(), Arc::default());
    // The floor's tab sees the page at the same size as webagent's.
    let bare = session.bare_page().await?;
    bare.execute(SetDeviceMetricsOverrideParams::new(
        i64::from(window.0),
        i64::from(window.1),
        0.0,
        false,
    ))
    .await?;
    if !args.json {
        println!(
            "{:<15} {:>10} {:>10} {:>11} {:>9} {:>9} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6} {:>6}",
            "page",
            "default",
            "full",
            "snapshot",
            "default%",
            "full%",
            "listed",
            "full",
            "nodes",
            "floor",
            "nav+obs",
            "navigate",
            "settle",
            "observe",
            "ratio",
            "looks"
        );
    }
    let mut all = Vec::new();
    for name in names {
        let figures = measure_page(
            &mut driver,
            &bare,
            &name,
            &server.url(&format!("/{name}")),
            args.runs,
            args.step_runs,
        )
        .await?;
        let d_ratio = 100.0 * figures.default_ms / figures.snapshot_ms;
        let f_ratio = 100.0 * figures.full_ms / figures.snapshot_ms;
        let step = &figures.step;
        if args.json {
            println!(
                "{}",
                serde_json::json!({
                    "page": figures.name,
                    "default_ms": round2(figures.default_ms),
                    "full_page_ms": round2(figures.full_ms),
                    "snapshot_ms": round2(figures.snapshot_ms),
                    "default_pct_of_snapshot": round2(d_ratio),
                    "full_page_pct_of_snapshot": round2(f_ratio),
                    "default_elements": figures.default_elements,
                    "full_page_elements": figures.full_elements,
                    "snapshot_nodes": figures.snapshot_nodes,
                    "floor_ms": round2(step.floor_ms),
                    "navigate_and_observe_ms": round2(step.step_ms),
                    "navigate_ms": round2(step.navigate_ms),
                    "settle_ms": round2(step.settle_ms),
                    "first_observe_ms": round2(step.first_ms),
                    "step_over_floor": round2(step.ratio()),
                    "first_looks_used": step.looks,
                    "steps": step.runs,
                    "step_over_floor_p25": round2(step.pair_quartiles.0),
                    "step_over_floor_p75": round2(step.pair_quartiles.1),
                })
            );
        } else {
            println!(
                "{:<15} {:>8.1}ms {:>8.1}ms {:>9.1}ms {:>8.1}% {:>8.1}% {:>8} {:>8} {:>8} {:>7.1}ms {:>7.1}ms {:>7.1}ms {:>7.1}ms {:>7.1}ms {:>5.2}x {:>6}",
                figures.name,
                figures.default_ms,
                figures.full_ms,
                figures.snapshot_ms,
                d_ratio,
                f_ratio,
                figures.default_elements,
                figures.full_elements,
                figures.snapshot_nodes,
                step.floor_ms,
                step.step_ms,
                step.navigate_ms,
                step.settle_ms,
                step.first_ms,
                step.ratio(),
                format!("{}/{}", step.looks, step.runs)
            );
        }
        all.push(figures);
    }
    if let Err(err) = bare.close().await {
        tracing::debug!(%err, "closing the bare tab");
    }
    if !args.json {
        print_targets(&all);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_targets(all: &[PageFigures]) {
    let find = |n: &str| all.iter().find(|f| f.name == n);
    println!();
    println!(
        "floor: a bare CDP client on its own tab, Page.navigate -> load event -> first Runtime.evaluate(\"1\"); \
         nav+obs: the navigate action (settled) then the observation; navigate, settle, observe: its parts; \
         looks: steps whose observation the new document's first look answered"
    );
    for f in all {
        let ratio = f.step.ratio();
        let (p25, p75) = f.step.pair_quartiles;
        println!(
            "target: navigate + observe on {} <= 1.2x the floor: {ratio:.2}x ({}); single steps {p25:.2}-{p75:.2}x (quartiles of {} pairs)",
            f.name,
            if ratio <= 1.2 { "met" } else { "MISSED" },
            f.step.runs
        );
    }
    if let Some(f) = find("items-20000") {
        let pct = 100.0 * f.default_ms / f.snapshot_ms;
        println!(
            "target: default at 20,000 items < 5% of snapshot: {pct:.1}% ({})",
            if pct < 5.0 { "met" } else { "MISSED" }
        );
    }
    for n in ["items-5000", "items-20000"] {
        if let Some(f) = find(n) {
            let pct = 100.0 * f.full_ms / f.snapshot_ms;
            println!(
                "target: full page at {n} <= 30% of snapshot: {pct:.1}% ({})",
                if pct <= 30.0 { "met" } else { "MISSED" }
            );
        }
    }
    if let (Some(a), Some(b)) = (find("items-5000"), find("items-20000")) {
        println!(
            "growth 5,000 -> 20,000 items (4x the page): full page x{:.2}, snapshot x{:.2}",
            b.full_ms / a.full_ms,
            b.snapshot_ms / a.snapshot_ms
        );
    }
}
