//! `webagent tui` (and plain `webagent`): the terminal workbench.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use super::observe::BrowserOpts;
use crate::agent::ApprovalMode;
use crate::config::Overrides;
use crate::llm::DEFAULT_BASE_URL;
use crate::tui::event_loop::{bench_draw_with, ListingDraw};
use crate::tui::services::{self, WorkbenchOptions};

/// Flags of `webagent tui`.
#[derive(Debug, Default, clap::Args)]
pub struct TuiArgs {
    /// The page to open (default: about:blank; `:navigate URL` goes
    /// elsewhere later).
    #[arg(long)]
    pub url: Option<String>,
    /// A sitemap file or directory to load and watch (repeatable; default:
    /// ./sitemaps when it exists).
    #[arg(long, value_name = "PATH")]
    pub sitemap: Vec<PathBuf>,
    /// The recipes directory (default: ./recipes when it exists): its
    /// custom actions join the `:` line and the model's tools, `:recipe
    /// NAME` (or R) runs a recipe, E exports the session there; edits
    /// reload live.
    #[arg(long, value_name = "DIR")]
    pub recipes: Option<PathBuf>,
    /// A theme: dark, light, a name in ./themes, or a YAML file (reloaded
    /// when it changes).
    #[arg(long, value_name = "NAME|FILE")]
    pub theme: Option<String>,
    /// When to ask before an action: never, risky (commit and dangerous
    /// actions) or always. `a` cycles it while running (default: config
    /// `agent.approve`, risky).
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub approve: Option<ApprovalMode>,
    /// The model (default: WEBAGENT_MODEL, then gpt-4o-mini).
    #[arg(long)]
    pub model: Option<String>,
    /// The API root of an OpenAI-compatible server (default:
    /// OPENAI_BASE_URL, then the OpenAI API).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The step limit of a run (default: config `agent.max_steps`, 40).
    #[arg(long, value_name = "N")]
    pub max_steps: Option<usize>,
    /// A task to start as soon as the page is open.
    #[arg(long)]
    pub task: Option<String>,
    /// The browser to use.
    #[command(flatten)]
    pub browser: BrowserOpts,
}

fn parse_mode(text: &str) -> Result<ApprovalMode, String> {
    text.parse()
}

/// The flags that override configuration.
fn overrides(args: &TuiArgs) -> Overrides {
    Overrides {
        model: args.model.clone(),
        base_url: args.base_url.clone(),
        max_steps: args.max_steps.map(|n| n.max(1)),
        approve: args.approve,
        sitemaps: args.sitemap.clone(),
        ..super::config::browser_overrides(&args.browser)
    }
}

/// The options these flags describe over the configuration (flags already
/// applied to `loaded`).
pub fn options(args: TuiArgs, loaded: &super::config::Loaded) -> WorkbenchOptions {
    let config = &loaded.config;
    let mut options = WorkbenchOptions::new(args.url.unwrap_or_else(|| "about:blank".into()));
    options.sitemaps = config.sitemap_paths();
    options.recipes = args.recipes.or_else(|| {
        config
            .paths
            .recipes
            .is_dir()
            .then(|| config.paths.recipes.clone())
    });
    options.theme = args.theme.map(|spec| theme_in(&config.paths.themes, spec));
    options.approval = config.agent.approve;
    options.launch = config.launch_options();
    options.llm = config.llm_config(&loaded.env);
    options.llm_configured =
        options.llm.api_key.is_some() || options.llm.base_url != DEFAULT_BASE_URL;
    options.max_steps = config.agent.max_steps;
    options.task = args.task.filter(|t| !t.trim().is_empty());
    options
}

/// A bare theme name found as NAME.yaml in the configured themes
/// directory becomes that file; anything else is passed on as given.
fn theme_in(dir: &std::path::Path, spec: String) -> String {
    let bare = !spec.contains(['/', '\\']) && !spec.ends_with(".yaml");
    let file = dir.join(format!("{spec}.yaml"));
    if bare && !matches!(spec.as_str(), "dark" | "light") && file.is_file() {
        file.display().to_string()
    } else {
        spec
    }
}

/// Runs `webagent tui`.
pub fn run(args: TuiArgs) -> anyhow::Result<ExitCode> {
    let loaded = match super::config::load(None, &overrides(&args)) {
        Ok(loaded) => loaded,
        Err(code) => return Ok(code),
    };
    let secrets = match loaded.config.resolve_secrets(&loaded.env) {
        Ok(secrets) => secrets,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(super::config::EXIT_BAD_CONFIG));
        }
    };
    crate::config::redact::mask_in_logs(&secrets);
    let mut options = options(args, &loaded);
    options.secrets = secrets;
    options.allow_javascript = loaded.config.allow_javascript;
    options.sessions_dir = loaded.config.paths.sessions.clone();
    services::run(options)?;
    Ok(ExitCode::SUCCESS)
}

/// Opens the workbench on the demo site (called by `webagent demo`).
pub fn open_demo(url: String, sitemap: PathBuf, recipes: PathBuf) -> anyhow::Result<ExitCode> {
    let args = TuiArgs {
        url: Some(url),
        sitemap: vec![sitemap],
        recipes: Some(recipes),
        ..TuiArgs::default()
    };
    run(args)
}

/// Flags of `webagent bench tui`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Elements in the synthetic listing.
    #[arg(long, default_value_t = 20_000, value_name = "N")]
    pub elements: usize,
    /// Elements in the small-listing baseline.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub small: usize,
    /// Frames drawn per case.
    #[arg(long, default_value_t = 300, value_name = "K")]
    pub frames: usize,
}

fn fmt_duration(duration: Duration) -> String {
    let micros = duration.as_secs_f64() * 1e6;
    if micros >= 1000.0 {
        format!("{:.2} ms", micros / 1000.0)
    } else {
        format!("{micros:.0} µs")
    }
}

fn ratio(ours: Duration, baseline: Duration) -> String {
    if ours.is_zero() {
        return "-".into();
    }
    format!("{:.2}×", baseline.as_secs_f64() / ours.as_secs_f64())
}

/// Runs `webagent bench tui`: frame draw time of the workbench over a large
/// listing, against the same frame drawn without windowing and against a
/// small listing, at 80×24 and 160×48.
pub fn bench(args: BenchArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(args.elements >= 1, "--elements must be at least 1");
    anyhow::ensure!(args.small >= 1, "--small must be at least 1");
    anyhow::ensure!(args.frames >= 1, "--frames must be at least 1");
    println!(
        "tui draw bench: {} frames per case, the cursor jumping through the listing{}",
        args.frames,
        if cfg!(debug_assertions) {
            " (debug build: use --release for real figures)"
        } else {
            ""
        }
    );
    println!();
    println!(
        "{:<8} {:<34} {:>10} {:>10} {:>10} {:>10}",
        "size", "case", "mean", "median", "p95", "max"
    );
    for (columns, rows) in [(80u16, 24u16), (160, 48)] {
        let size = format!("{columns}x{rows}");
        let windowed = bench_draw_with(
            ListingDraw::Windowed,
            args.elements,
            args.frames,
            columns,
            rows,
        );
        let small = bench_draw_with(
            ListingDraw::Windowed,
            args.small,
            args.frames,
            columns,
            rows,
        );
        let unwindowed = bench_draw_with(
            ListingDraw::Unwindowed,
            args.elements,
            args.frames,
            columns,
            rows,
        );
        let cases = [
            (format!("windowed, {} elements", args.elements), windowed),
            (format!("windowed, {} elements", args.small), small),
            (
                format!("unwindowed baseline, {} elements", args.elements),
                unwindowed,
            ),
        ];
        for (name, figures) in &cases {
            println!(
                "{size:<8} {name:<34} {:>10} {:>10} {:>10} {:>10}",
                fmt_duration(figures.mean),
                fmt_duration(figures.median),
                fmt_duration(figures.p95),
                fmt_duration(figures.max),
            );
        }
        println!(
            "{size:<8} the unwindowed baseline's median is {} the windowed one; {} elements take {} the time of {}",
            ratio(windowed.median, unwindowed.median),
            args.elements,
            ratio(small.median, windowed.median),
            args.small,
        );
        println!();
    }
    Ok(ExitCode::SUCCESS)
}
