//! `webagent run`: placeholder until the agent loop lands.

use std::process::ExitCode;

/// Flags of `webagent run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {}

/// Runs `webagent run`.
pub fn run(_args: RunArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("webagent run is not built yet")
}
