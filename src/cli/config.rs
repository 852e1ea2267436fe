//! `webagent config`: prints the merged configuration as YAML, then where
//! each non-default value came from. Secrets appear only as references
//! (`env:VAR`, `file:PATH`) and the API key only as set or not set.
//!
//! Also home of the config loading every command shares: [`load`] reads the
//! layers, applies the flags and turns a bad file into exit code 2 with the
//! reason.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::agent::ApprovalMode;
use crate::config::{Config, ConfigSources, Overrides};

/// Exit code for a configuration that cannot be used.
pub const EXIT_BAD_CONFIG: u8 = 2;

/// Flags of `webagent config`.
#[derive(Debug, clap::Args)]
pub struct ConfigArgs {
    /// Read this file instead of ./webagent.yaml (it must exist).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Check that every secret can be read (values are still not shown).
    #[arg(long)]
    pub check_secrets: bool,
    /// Flags that override the files, as other commands take them.
    #[command(flatten)]
    pub overrides: OverrideFlags,
    /// The browser flags other commands take.
    #[command(flatten)]
    pub browser: super::observe::BrowserOpts,
}

/// The flags every command shares with `webagent config`, so the printed
/// result is what that command would use.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OverrideFlags {
    /// The model.
    #[arg(long)]
    pub model: Option<String>,
    /// The API root of an OpenAI-compatible server.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The step limit.
    #[arg(long, value_name = "N")]
    pub max_steps: Option<usize>,
    /// never, risky or always.
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub approve: Option<ApprovalMode>,
    /// A dotenv file whose entries are all secrets.
    #[arg(long, value_name = "FILE")]
    pub secrets_file: Option<PathBuf>,
}

fn parse_mode(text: &str) -> Result<ApprovalMode, String> {
    text.parse()
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
    let flags = Overrides {
        model: args.overrides.model.clone(),
        base_url: args.overrides.base_url.clone(),
        max_steps: args.overrides.max_steps,
        approve: args.overrides.approve,
        secrets_file: args.overrides.secrets_file.clone(),
        ..browser_overrides(&args.browser)
    };
    let loaded = match load(args.config.as_deref(), &flags) {
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

/// The overrides the shared browser flags (`--chrome`, `--headed`,
/// `--connect`) make.
pub fn browser_overrides(browser: &super::observe::BrowserOpts) -> Overrides {
    Overrides {
        chrome: browser.chrome.clone(),
        headed: browser.headed,
        connect: browser.connect.clone(),
        allowed_domains: browser.allow_domains.clone(),
        ..Overrides::default()
    }
}
