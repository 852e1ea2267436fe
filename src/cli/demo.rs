//! `webagent demo`: serves the built-in Acme admin app on 127.0.0.1 and opens
//! the workbench on it with `sitemaps/acme.yaml` and `recipes/`.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use crate::demo::{DemoSite, DEMO_EMAIL, DEMO_PASSWORD};

/// Flags of `webagent demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Port on 127.0.0.1 to serve the demo on (0 picks a free one).
    #[arg(long, default_value_t = 0, value_name = "PORT")]
    pub port: u16,

    /// Only serve the site: print its URL and keep serving until Ctrl-C,
    /// without opening the workbench.
    #[arg(long)]
    pub serve_only: bool,

    /// Sitemap the workbench loads for the demo.
    #[arg(long, default_value = "sitemaps/acme.yaml", value_name = "FILE")]
    pub sitemap: PathBuf,

    /// Recipes directory the workbench loads for the demo.
    #[arg(long, default_value = "recipes", value_name = "DIR")]
    pub recipes: PathBuf,
}

/// Runs `webagent demo`.
pub fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    // The site's accept loop runs on this runtime's worker threads, so it
    // keeps serving while the workbench owns the main thread (and may start
    // its own runtime there).
    let runtime = super::runtime()?;
    let site = runtime
        .block_on(DemoSite::start_on(args.port))
        .context("starting the demo site")?;
    let url = site.url("/");

    if args.serve_only {
        // Listen for the signal before announcing the URL: whoever reads the
        // URL may stop us at once, and an unhandled SIGINT would kill the
        // process instead of shutting the site down.
        let stop = runtime
            .block_on(async { crate::interrupt::Interrupt::listen() })
            .context("listening for Ctrl-C")?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{url}")?;
        writeln!(
            out,
            "Acme demo serving; sign in as {DEMO_EMAIL} / {DEMO_PASSWORD}. Ctrl-C stops it."
        )?;
        out.flush()?;
        drop(out);
        runtime.block_on(stop.wait());
        tracing::info!("demo stopped by a signal");
        drop(site);
        return Ok(ExitCode::SUCCESS);
    }

    let code = super::tui::open_demo(url, args.sitemap, args.recipes);
    drop(site);
    code
}
