//! `webagent actions`: placeholder until its part lands (owned by the actions work).

use std::process::ExitCode;

/// Flags of `webagent actions`.
#[derive(Debug, clap::Args)]
pub struct ActionsArgs {}

/// Runs `webagent actions`.
pub fn run(_args: ActionsArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("webagent actions is not built yet")
}
