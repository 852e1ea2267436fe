//! `webagent config`: placeholder until configuration lands.

use std::process::ExitCode;

/// Flags of `webagent config`.
#[derive(Debug, clap::Args)]
pub struct ConfigArgs {}

/// Runs `webagent config`.
pub fn run(_args: ConfigArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("webagent config is not built yet")
}
