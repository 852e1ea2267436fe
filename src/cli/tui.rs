//! `webagent tui`: placeholder until the terminal workbench lands.

use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `webagent tui`.
#[derive(Debug, clap::Args)]
pub struct TuiArgs {}

/// Runs `webagent tui`.
pub fn run(_args: TuiArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("webagent tui is not built yet")
}

/// Opens the workbench on the demo site (called by `webagent demo`).
pub fn open_demo(_url: String, _sitemap: PathBuf, _recipes: PathBuf) -> anyhow::Result<ExitCode> {
    anyhow::bail!("the terminal workbench is not built yet; use `webagent demo --serve-only`")
}
