//! `webagent init`: a starter project in the current folder, each file
//! with comments saying what it is for: `webagent.yaml`, a sitemap to fill
//! in and a recipe with a custom action. It never overwrites: when one of
//! the files exists nothing is written.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::exit::EXIT_USAGE;
use crate::sitemap::TEMPLATE_YAML;

/// Flags of `webagent init`.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The folder to write into (default: the current one).
    #[arg(default_value = ".", value_name = "DIR")]
    pub dir: PathBuf,
}

/// The files, by their path below the folder.
const FILES: &[(&str, &str)] = &[
    ("webagent.yaml", include_str!("init/webagent.yaml")),
    ("sitemaps/site.yaml", TEMPLATE_YAML),
    ("recipes/starter.rhai", include_str!("init/starter.rhai")),
];

/// Runs `webagent init`.
pub fn run(args: InitArgs) -> anyhow::Result<ExitCode> {
    let paths: Vec<PathBuf> = FILES.iter().map(|(name, _)| args.dir.join(name)).collect();
    if let Some(taken) = paths.iter().find(|p| p.exists()) {
        eprintln!(
            "error: {} exists already; nothing was written (webagent init never overwrites)",
            taken.display()
        );
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    for (path, (_, text)) in paths.iter().zip(FILES) {
        write(path, text)?;
        println!("wrote {}", path.display());
    }
    println!(
        "next: fill in sitemaps/site.yaml (add `origin:` for your site), set OPENAI_API_KEY or \
         llm.base_url, then `webagent --url https://your.site/`"
    );
    Ok(ExitCode::SUCCESS)
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    use anyhow::Context as _;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}
