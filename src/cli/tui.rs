//! `webagent tui` (and plain `webagent`): the terminal workbench.

use std::path::PathBuf;
use std::process::ExitCode;

use super::observe::BrowserOpts;
use crate::agent::ApprovalMode;
use crate::config::Overrides;
use crate::llm::DEFAULT_BASE_URL;
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
    /// The recipes directory (default: ./recipes when it exists); shown in
    /// the status line, run once the script engine is part of the build.
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
    options.theme = args.theme;
    options.approval = config.agent.approve;
    options.launch = config.launch_options();
    options.llm = config.llm_config(&loaded.env);
    options.llm_configured =
        options.llm.api_key.is_some() || options.llm.base_url != DEFAULT_BASE_URL;
    options.max_steps = config.agent.max_steps;
    options.task = args.task.filter(|t| !t.trim().is_empty());
    options
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
