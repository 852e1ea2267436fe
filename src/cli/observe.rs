//! `webagent observe` (print what the model would see on a page) and
//! `webagent bench observe` (observation speed against a bare DOM snapshot).
//! [`BrowserOpts`] is the browser flag set other commands flatten in.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::browser::{BrowserSession, LaunchOptions, ObserveOptions, Tab};
use crate::dom::PageState;
use crate::serve::PageServer;
use crate::session::Prepared;

/// Which browser to use: flatten into any command that needs one.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct BrowserOpts {
    /// Chromium executable (default: `WEBAGENT_CHROME`, then chromium,
    /// chromium-browser or google-chrome on PATH, then /usr/bin/chromium).
    #[arg(long, value_name = "PATH")]
    pub chrome: Option<PathBuf>,
    /// Show the browser window instead of running headless.
    #[arg(long)]
    pub headed: bool,
    /// Attach to a running browser (`ws://…` DevTools address, or
    /// `http://host:port`) instead of launching one.
    #[arg(long, value_name = "URL")]
    pub connect: Option<String>,
    /// Allow navigation only to URLs matching PATTERN (repeatable): a host
    /// glob like `*.example.com` (https, plus http for loopback hosts), or
    /// with scheme and port like `http://127.0.0.1:*`; `data:`, `blob:`,
    /// `javascript:`, `file:` must be named to be allowed.
    #[arg(long = "allow-domain", value_name = "PATTERN")]
    pub allow_domains: Vec<String>,
    /// A persistent Chromium profile directory: sign-ins last across runs
    /// (default: config `browser.profile`; created when missing, never
    /// deleted).
    #[arg(long, value_name = "DIR")]
    pub profile: Option<PathBuf>,
    /// A state file of cookies and local storage loaded at start (default:
    /// config `browser.state`); `webagent state save FILE` writes one.
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
}

impl BrowserOpts {
    /// The launch options these flags describe.
    pub fn launch_options(&self) -> LaunchOptions {
        LaunchOptions {
            chrome: self.chrome.clone(),
            headed: self.headed,
            connect: self.connect.clone(),
            allowed_domains: self.allow_domains.clone(),
            profile: self.profile.clone(),
            state: self.state.clone(),
            ..LaunchOptions::default()
        }
    }
}

/// Flags of `webagent observe`.
#[derive(Debug, clap::Args)]
pub struct ObserveArgs {
    /// The page to open.
    pub url: String,
    /// List the whole page, not just the viewport plus a margin.
    #[arg(long)]
    pub full_page: bool,
    /// Print one JSON object instead of the listing.
    #[arg(long)]
    pub json: bool,
    /// Observe N times and print timing figures instead.
    #[arg(long, value_name = "N")]
    pub repeat: Option<usize>,
    /// Margin around the viewport in CSS pixels (default: half a viewport).
    #[arg(long, value_name = "PX")]
    pub margin: Option<f64>,
    /// The browser to use.
    #[command(flatten)]
    pub browser: BrowserOpts,
}

/// Runs `webagent observe`.
pub fn run(mut args: ObserveArgs) -> anyhow::Result<ExitCode> {
    let flags = super::config::browser_overrides(&args.browser);
    let loaded = match super::config::load(None, &flags) {
        Ok(loaded) => loaded,
        Err(code) => return Ok(code),
    };
    args.full_page |= loaded.config.agent.listing == crate::config::ListingMode::FullPage;
    // The page is observed in a session like any command's, so the
    // allowed domains and secrets hold here too.
    let prepared = match Prepared::new(loaded.config, &loaded.env, &[], &[]) {
        Ok(prepared) => prepared,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(super::config::EXIT_BAD_CONFIG));
        }
    };
    let runtime = super::runtime()?;
    runtime.block_on(observe_command(args, prepared))
}

fn observe_options(args: &ObserveArgs) -> ObserveOptions {
    ObserveOptions {
        full_page: args.full_page,
        margin_px: args.margin,
        ..ObserveOptions::default()
    }
}

async fn observe_command(args: ObserveArgs, prepared: Prepared) -> anyhow::Result<ExitCode> {
    let (events, _reports) = tokio::sync::mpsc::unbounded_channel();
    let session = prepared.start(Some(&args.url), events).await?;
    if let Err(error) = &session.opened {
        anyhow::bail!("{error}");
    }
    let secrets = session.secrets.clone();
    let tab = session.environment.inner().tab();
    let opts = observe_options(&args);
    if let Some(n) = args.repeat {
        let n = n.max(1);
        let mut times = Vec::with_capacity(n);
        let mut last = None;
        for _ in 0..n {
            let state = tab.observe(&opts).await?;
            times.push(state.extract_ms);
            last = Some(state);
        }
        session.close().await;
        times.sort_by(f64::total_cmp);
        let (elements, chars) = last
            .map(|s| (s.elements.len(), s.listing.chars().count()))
            .unwrap_or_default();
        let summary = serde_json::json!({
            "extract_ms": {
                "min": round2(times[0]),
                "median": round2(median(&times)),
                "max": round2(times[times.len() - 1]),
            },
            "elements": elements,
            "chars": chars,
        });
        println!("{summary}");
        return Ok(ExitCode::SUCCESS);
    }
    let state = secrets.masked(tab.observe(&opts).await?);
    session.close().await;
    if args.json {
        println!("{}", observation_json(&state));
    } else {
        println!("{}", state.url);
        println!("{}", state.title);
        print!("{}", state.listing);
        if !state.page_text.text.is_empty() {
            println!("\n--- page text ---\n{}", state.page_text.for_model());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// The median of sorted values.
fn median(sorted: &[f64]) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// The `observe --json` object: the shape other commands (`exec --observe`)
/// print too.
pub fn observation_json(state: &PageState) -> serde_json::Value {
    let elements: Vec<serde_json::Value> = state
        .elements
        .iter()
        .map(|e| {
            let attributes: serde_json::Map<String, serde_json::Value> = e
                .attributes
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                .collect();
            serde_json::json!({
                "index": e.index.0,
                "tag": e.tag,
                "text": e.text,
                "attributes": attributes,
                "is_new": e.is_new,
                "depth": e.depth,
                "parent": e.parent.map(|p| p.0),
                "in_shadow_root": e.in_shadow_root,
                "frame": e.frame.map(|f| f.0),
                "cross_origin_frame": e.cross_origin_frame,
            })
        })
        .collect();
    serde_json::json!({
        "url": state.url,
        "title": state.title,
        "observation": state.observation,
        "full_page": state.full_page,
        "tabs": state.tabs,
        "elements": elements,
        "listing": state.listing,
        "page_text": state.page_text.text,
        "page_text_clipped": state.page_text.clipped,
        "scroll": {
            "x": state.scroll.x,
            "y": state.scroll.y,
            "viewport_width": state.scroll.viewport_width,
            "viewport_height": state.scroll.viewport_height,
            "page_width": state.scroll.page_width,
            "page_height": state.scroll.page_height,
            "pages_above": round2(state.scroll.pages_above()),
            "pages_below": round2(state.scroll.pages_below()),
        },
        "left_out": {"above": state.left_out.above, "below": state.left_out.below},
        "extract_ms": round2(state.extract_ms),
    })
}

/// Flags of `webagent bench observe`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Repetitions per page and method (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
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
    let runtime = super::runtime()?;
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
}

async fn measure_page(
    tab: &Tab,
    name: &str,
    url: &str,
    runs: usize,
) -> anyhow::Result<PageFigures> {
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
    let session = BrowserSession::start(args.browser.launch_options()).await?;
    let tab = session.new_tab("about:blank").await?;
    if !args.json {
        println!(
            "{:<15} {:>10} {:>10} {:>11} {:>9} {:>9} {:>8} {:>8} {:>8}",
            "page", "default", "full", "snapshot", "default%", "full%", "listed", "full", "nodes"
        );
    }
    let mut all = Vec::new();
    for name in names {
        let figures =
            measure_page(&tab, &name, &server.url(&format!("/{name}")), args.runs).await?;
        let d_ratio = 100.0 * figures.default_ms / figures.snapshot_ms;
        let f_ratio = 100.0 * figures.full_ms / figures.snapshot_ms;
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
                })
            );
        } else {
            println!(
                "{:<15} {:>8.1}ms {:>8.1}ms {:>9.1}ms {:>8.1}% {:>8.1}% {:>8} {:>8} {:>8}",
                figures.name,
                figures.default_ms,
                figures.full_ms,
                figures.snapshot_ms,
                d_ratio,
                f_ratio,
                figures.default_elements,
                figures.full_elements,
                figures.snapshot_nodes
            );
        }
        all.push(figures);
    }
    if !args.json {
        print_targets(&all);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_targets(all: &[PageFigures]) {
    let find = |n: &str| all.iter().find(|f| f.name == n);
    println!();
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
