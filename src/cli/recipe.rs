//! `webagent recipe` and `webagent export`: placeholders until scripts land.

use std::process::ExitCode;

/// The recipe subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum RecipeCommand {
    /// Run a recipe headless.
    Run,
}

/// Runs a recipe subcommand.
pub fn run(_command: RecipeCommand) -> anyhow::Result<ExitCode> {
    anyhow::bail!("webagent recipe is not built yet")
}

/// Flags of `webagent export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {}

/// Runs `webagent export`.
pub fn export(_args: ExportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("webagent export is not built yet")
}
