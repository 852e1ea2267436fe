//! `webagent sitemap`: placeholder until its part lands (owned by the sitemap work).

use std::process::ExitCode;

/// Flags of `webagent sitemap`.
#[derive(Debug, clap::Args)]
pub struct SitemapArgs {}

/// Runs `webagent sitemap`.
pub fn run(_args: SitemapArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("webagent sitemap is not built yet")
}

/// Flags of `webagent bench sitemap`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {}

/// Runs `webagent bench sitemap`.
pub fn bench(_args: BenchArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("webagent bench sitemap is not built yet")
}
