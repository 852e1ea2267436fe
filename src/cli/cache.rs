//! `webagent cache list | show | clear`: the task cache `run --cache`
//! fills.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::session::cache::{TaskCache, DEFAULT_CACHE_DIR};

/// The cache subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum CacheCommand {
    /// List the cached tasks: key, route, replays, what the recording cost.
    List(CacheArgs),
    /// Print one cached task's recipe (by key, or a key's first characters,
    /// or the task's words).
    Show(ShowArgs),
    /// Remove every cached task.
    Clear(CacheArgs),
}

/// Where the cache is.
#[derive(Debug, Clone, clap::Args)]
pub struct CacheArgs {
    /// The cache directory (default: config `agent.cache`, else
    /// .webagent/cache).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Flags of `cache show`.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The entry's key (or its first characters), or the task's words.
    pub entry: String,
    /// Where the cache is.
    #[command(flatten)]
    pub cache: CacheArgs,
}

/// The cache `args` name.
fn cache_of(args: &CacheArgs) -> Result<TaskCache, ExitCode> {
    if let Some(dir) = &args.dir {
        return Ok(TaskCache::new(dir));
    }
    let loaded = super::flags::load(None, &crate::config::Overrides::default())?;
    Ok(TaskCache::new(
        loaded
            .config
            .agent
            .cache
            .unwrap_or_else(|| PathBuf::from(DEFAULT_CACHE_DIR)),
    ))
}

/// Runs a cache subcommand.
pub fn run(command: CacheCommand) -> anyhow::Result<ExitCode> {
    let args = match &command {
        CacheCommand::List(args) | CacheCommand::Clear(args) => args,
        CacheCommand::Show(show) => &show.cache,
    };
    let cache = match cache_of(args) {
        Ok(cache) => cache,
        Err(code) => return Ok(code),
    };
    let failed = |error: crate::session::CacheError| {
        eprintln!("error: {error}");
        Ok(ExitCode::from(1))
    };
    match command {
        CacheCommand::List(args) => {
            let entries = match cache.list() {
                Ok(entries) => entries,
                Err(error) => return failed(error),
            };
            if args.json {
                for entry in &entries {
                    println!("{}", serde_json::to_string(entry)?);
                }
            } else if entries.is_empty() {
                println!("no cached tasks in {}", cache.dir().display());
            } else {
                println!(
                    "{} cached task(s) in {}:",
                    entries.len(),
                    cache.dir().display()
                );
                for entry in &entries {
                    println!(
                        "{}  {}  on {}  ({} replays; recorded {} with {} model calls, {} tokens; used {})",
                        entry.key,
                        entry.task,
                        entry.route,
                        entry.replays,
                        entry.recorded,
                        entry.model_calls,
                        entry.tokens,
                        entry.used
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        CacheCommand::Show(show) => {
            let entry = match cache.find(&show.entry) {
                Ok(entry) => entry,
                Err(error) => return failed(error),
            };
            let path = cache.recipe_path(&entry.key);
            let recipe = match std::fs::read_to_string(&path) {
                Ok(recipe) => recipe,
                Err(error) => {
                    eprintln!("error: could not read {}: {error}", path.display());
                    return Ok(ExitCode::from(1));
                }
            };
            if show.cache.json {
                let mut value = serde_json::to_value(&entry)?;
                value["recipe"] = serde_json::Value::String(recipe);
                println!("{value}");
            } else {
                println!(
                    "// {} — task {:?} on {} ({} replays)\n// {}\n{recipe}",
                    entry.key,
                    entry.task,
                    entry.route,
                    entry.replays,
                    path.display()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        CacheCommand::Clear(_) => match cache.clear() {
            Ok(n) => {
                println!("removed {n} cached task(s) from {}", cache.dir().display());
                Ok(ExitCode::SUCCESS)
            }
            Err(error) => failed(error),
        },
    }
}
