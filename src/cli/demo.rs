//! `webagent demo`: serves the built-in Acme admin app on 127.0.0.1 and opens
//! the workbench on it with the demo's sitemap and recipes: the folder's own
//! copies when it has them (the repository, or a folder `--write` filled),
//! else the ones built into the binary, so the demo starts anywhere.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;

use super::exit::EXIT_USAGE;
use crate::demo::{write_files, DemoSite, DEMO_EMAIL, DEMO_PASSWORD, RECIPES_DIR, SITEMAP_FILE};

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

    /// Sitemap the workbench loads for the demo (default: ./sitemaps/acme.yaml
    /// when there is one, else the built-in one).
    #[arg(long, value_name = "FILE")]
    pub sitemap: Option<PathBuf>,

    /// Recipes directory the workbench loads for the demo (default:
    /// ./recipes when it holds acme.rhai, else the built-in recipes).
    #[arg(long, value_name = "DIR")]
    pub recipes: Option<PathBuf>,

    /// Write the demo's sitemap, recipes and suite into DIR to edit
    /// (refusing to overwrite a file), then exit; `webagent demo` run in DIR
    /// loads them.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["serve_only", "sitemap", "recipes"])]
    pub write: Option<PathBuf>,
}

/// The built-in files written to a folder of this process's own for the
/// workbench to load (and watch), removed when the demo ends.
struct BuiltIn(PathBuf);

impl BuiltIn {
    fn write() -> anyhow::Result<BuiltIn> {
        let dir = std::env::temp_dir().join(format!("webagent-demo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        write_files(&dir).context("writing the demo's built-in files")?;
        Ok(BuiltIn(dir))
    }
}

impl Drop for BuiltIn {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The sitemap and recipes the demo loads: each as given, else this
/// folder's copy, else the built-in one (written out once for both).
fn demo_files(
    sitemap: Option<PathBuf>,
    recipes: Option<PathBuf>,
) -> anyhow::Result<(PathBuf, PathBuf, Option<BuiltIn>)> {
    let here_sitemap = Path::new(SITEMAP_FILE);
    let here_recipes = Path::new(RECIPES_DIR);
    let sitemap = sitemap.or_else(|| here_sitemap.is_file().then(|| here_sitemap.into()));
    let recipes = recipes.or_else(|| {
        here_recipes
            .join("acme.rhai")
            .is_file()
            .then(|| here_recipes.into())
    });
    let built_in = if sitemap.is_none() || recipes.is_none() {
        Some(BuiltIn::write()?)
    } else {
        None
    };
    let from_built_in = |name: &str| built_in.as_ref().map(|b| b.0.join(name));
    let sitemap = sitemap.or_else(|| from_built_in(SITEMAP_FILE));
    let recipes = recipes.or_else(|| from_built_in(RECIPES_DIR));
    match (sitemap, recipes) {
        (Some(sitemap), Some(recipes)) => {
            tracing::info!(sitemap = %sitemap.display(), recipes = %recipes.display(), "demo files");
            Ok((sitemap, recipes, built_in))
        }
        _ => anyhow::bail!("the demo's files could not be found or written"),
    }
}

/// `webagent demo --write DIR`.
fn write_out(dir: &Path) -> ExitCode {
    match write_files(dir) {
        Ok(paths) => {
            for path in paths {
                println!("wrote {}", path.display());
            }
            println!(
                "edit them, then run `webagent demo` in {} (it loads a folder's own \
                 sitemaps/acme.yaml and recipes/), or `webagent test recipes/acme.suite.yaml --demo` there",
                dir.display()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Runs `webagent demo`.
pub fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    if let Some(dir) = &args.write {
        return Ok(write_out(dir));
    }
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

    let (sitemap, recipes, built_in) = demo_files(args.sitemap, args.recipes)?;
    let code = super::tui::open_demo(url, sitemap, recipes);
    drop(site);
    drop(built_in);
    code
}
