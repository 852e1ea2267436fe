//! `webagent config`: prints the merged configuration as YAML, then where
//! each non-default value came from. Secrets appear only as references
//! (`env:VAR`, `file:PATH`) and the API key only as set or not set.
//!
//! Also home of the config loading every command shares: [`load`] reads the
//! layers, applies the flags and turns a bad file into exit code 2 with the
//! reason.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use crate::config::{Config, ConfigSources, Overrides};

/// Exit code for a configuration that cannot be used.
pub const EXIT_BAD_CONFIG: u8 = 2;

/// Flags of `webagent config`.
#[derive(Debug, clap::Args)]
pub struct ConfigArgs {
    /// Check that every secret can be read (values are still not shown).
    #[arg(long)]
    pub check_secrets: bool,
    /// The flags other commands take, so the printed result is what that
    /// command would use.
    #[command(flatten)]
    pub run: super::flags::RunFlags,
    /// The session flags other commands take.
    #[command(flatten)]
    pub session: super::flags::SessionFlags,
}

/// A loaded configuration with the environment it was read from (secrets
/// and the API key are looked up there).
pub struct Loaded {
    /// The merged configuration, flags applied.
    pub config: Config,
    /// The environment variables.
    pub env: BTreeMap<String, String>,
}

/// Loads the configuration for a command: the usual layers (or `explicit`
/// instead of ./webagent.yaml), then `flags`. On failure the reason is
/// printed and the exit code to return is given.
pub fn load(explicit: Option<&Path>, flags: &Overrides) -> Result<Loaded, ExitCode> {
    let sources = ConfigSources::standard(explicit);
    match Config::load(&sources, flags) {
        Ok(config) => Ok(Loaded {
            config,
            env: sources.env,
        }),
        Err(error) => {
            eprintln!("error: {error}");
            Err(ExitCode::from(EXIT_BAD_CONFIG))
        }
    }
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
                return Ok(ExitCode::from(EXIT_BAD_CONFIG));
            }
        }
    }
    print!("{}", loaded.config.to_annotated_yaml(&loaded.env));
    Ok(ExitCode::SUCCESS)
}
