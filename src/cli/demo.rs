//! `webagent demo`: placeholder until the demo site lands.

use std::process::ExitCode;

/// Flags of `webagent demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {}

/// Runs `webagent demo`.
pub fn run(_args: DemoArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("webagent demo is not built yet")
}
