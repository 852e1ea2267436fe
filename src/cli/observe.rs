//! `webagent observe`: placeholder until its part lands (owned by the observe work).

use std::process::ExitCode;

/// Flags of `webagent observe`.
#[derive(Debug, clap::Args)]
pub struct ObserveArgs {}

/// Runs `webagent observe`.
pub fn run(_args: ObserveArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("webagent observe is not built yet")
}

/// Flags of `webagent bench observe`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {}

/// Runs `webagent bench observe`.
pub fn bench(_args: BenchArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("webagent bench observe is not built yet")
}
