//! `webagent exec`: placeholder until action execution lands.

use std::process::ExitCode;

/// Flags of `webagent exec`.
#[derive(Debug, clap::Args)]
pub struct ExecArgs {}

/// Runs `webagent exec`.
pub fn run(_args: ExecArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("webagent exec is not built yet")
}

/// Flags of `webagent bench step`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {}

/// Runs `webagent bench step`.
pub fn bench(_args: BenchArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("webagent bench step is not built yet")
}
