//! `webagent config`: prints the merged configuration as YAML, then where
//! each non-default value came from. Secrets appear only as references
//! (`env:VAR`, `file:PATH`) and the API key only as set or not set.

use std::process::ExitCode;

use super::exit::EXIT_USAGE;
use super::flags::{load, RunFlags, SessionFlags};

/// Flags of `webagent config`.
#[derive(Debug, clap::Args)]
pub struct ConfigArgs {
    /// Check that every secret can be read (values are still not shown).
    #[arg(long)]
    pub check_secrets: bool,
    /// The flags other commands take, so the printed result is what that
    /// command would use.
    #[command(flatten)]
    pub run: RunFlags,
    /// The session flags other commands take.
    #[command(flatten)]
    pub session: SessionFlags,
}

/// Runs `webagent config`.
pub fn run(args: ConfigArgs) -> anyhow::Result<ExitCode> {
    let flags = args.session.overrides(args.run);
    let loaded = match load(args.session.config.as_deref(), &flags) {
        Ok(loaded) => loaded,
        Err(code) => return Ok(code),
    };
    if args.check_secrets {
        match loaded.config.resolve_secrets(&loaded.env) {
            Ok(secrets) => eprintln!("secrets readable: {}", secrets.names().join(", ")),
            Err(error) => {
                eprintln!("error: {error}");
                return Ok(ExitCode::from(EXIT_USAGE));
            }
        }
    }
    print!("{}", loaded.config.to_annotated_yaml(&loaded.env));
    for warning in loaded.config.unbound_secrets() {
        eprintln!("warning: {warning}");
    }
    Ok(ExitCode::SUCCESS)
}
