//! The `webagent` command line. Each subcommand's flags and behaviour live in
//! a file of their own; this module only dispatches.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod actions;
pub mod bench;
pub mod cache;
pub mod config;
pub mod debug;
pub mod demo;
pub mod examples;
pub mod exec;
pub mod exit;
pub mod flags;
#[cfg(test)]
mod guide;
pub mod headless;
pub mod init;
pub mod mcp;
pub mod observe;
pub mod output;
pub mod recipe;
pub mod record;
pub mod resume;
pub mod run;
pub mod session;
pub mod session_client;
pub mod sitemap;
pub mod skill;
pub mod state;
pub mod test;
pub mod tui;

/// A terminal workbench for LLM web agents driving Chromium over CDP.
#[derive(Debug, Parser)]
#[command(name = "webagent", version, about, long_about = None)]
pub struct Cli {
    /// Write logs to this file instead of `.webagent/logs/webagent.log`
    /// (the level comes from `WEBAGENT_LOG`, default `info`).
    #[arg(long, global = true, value_name = "FILE")]
    pub log_file: Option<PathBuf>,

    /// What to do (without one, the workbench opens).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Work with YAML sitemaps: print, resolve, search, check, watch.
    Sitemap(sitemap::SitemapArgs),
    /// Open a page in Chromium and print what the model would see.
    #[command(after_help = examples::OBSERVE)]
    Observe(observe::ObserveArgs),
    /// List the action catalog.
    Actions(actions::ActionsArgs),
    /// Open a page and run actions on it, observing after each.
    #[command(after_help = examples::EXEC)]
    Exec(exec::ExecArgs),
    /// Run a task headless with the agent and print its steps or events
    /// (exit 0 done, 1 not done, 6 handed over to a person).
    #[command(after_help = examples::RUN)]
    Run(run::RunArgs),
    /// Continue a run from its trace, at the step that did not finish (a
    /// handed-over run once the person hands back).
    #[command(after_help = examples::RESUME)]
    Resume(resume::ResumeArgs),
    /// Serve the built-in Acme demo app and open the workbench on it.
    #[command(after_help = examples::DEMO)]
    Demo(demo::DemoArgs),
    /// Open the terminal workbench.
    #[command(after_help = examples::TUI)]
    Tui(tui::TuiArgs),
    /// Run or check Rhai recipes.
    #[command(subcommand, after_help = examples::RECIPE)]
    Recipe(recipe::RecipeCommand),
    /// Record what you do on a page into a recipe that replays it without
    /// the model.
    #[command(after_help = examples::RECORD)]
    Record(record::RecordArgs),
    /// Turn a session trace into a recipe that replays without the LLM.
    #[command(after_help = examples::EXPORT)]
    Export(recipe::ExportArgs),
    /// The task cache `run --cache` fills: list, show, clear.
    #[command(subcommand)]
    Cache(cache::CacheCommand),
    /// Print the merged configuration, secrets masked.
    Config(config::ConfigArgs),
    /// Write a starter webagent.yaml, sitemap and recipe in this folder.
    Init(init::InitArgs),
    /// Serve the session over MCP (stdio) for another agent to drive.
    #[command(after_help = examples::MCP)]
    Mcp(mcp::McpArgs),
    /// Save a session's sign-ins (cookies, local storage) to a state file.
    #[command(subcommand)]
    State(state::StateCommand),
    /// Run suites of checks (YAML): workers, isolation, retries, shards,
    /// JUnit and HTML reports.
    #[command(after_help = examples::TEST)]
    Test(test::TestArgs),
    /// Named sessions that outlive a command: start, list, stop. Commands
    /// use one with `--session NAME`.
    #[command(subcommand, after_help = examples::SESSION)]
    Session(session::SessionCommand),
    /// Print the skill file (SKILL.md) that teaches a coding agent to use
    /// webagent sessions, or install it with --install DIR.
    Skill(skill::SkillArgs),
    /// Run a benchmark and print its figures.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
}

/// Runs the parsed command line and returns the process exit code.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let Some(command) = cli.command else {
        return tui::run(tui::TuiArgs::default());
    };
    match command {
        Command::Sitemap(args) => sitemap::run(args),
        Command::Observe(args) => observe::run(args),
        Command::Actions(args) => actions::run(args),
        Command::Exec(args) => exec::run(args),
        Command::Run(args) => run::run(args),
        Command::Resume(args) => resume::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Tui(args) => tui::run(args),
        Command::Recipe(command) => recipe::run(command),
        Command::Export(args) => recipe::export(args),
        Command::Record(args) => record::run(args),
        Command::Cache(command) => cache::run(command),
        Command::Config(args) => config::run(args),
        Command::Init(args) => init::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::State(command) => state::run(command),
        Command::Session(command) => session::run(command),
        Command::Skill(args) => skill::run(args),
        Command::Bench(command) => bench::run(command),
        Command::Test(args) => test::run_command(args),
    }
}

/// The runtime of the commands that talk to a browser (see
/// [`crate::session::runtime`]).
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    crate::session::runtime().map_err(|e| anyhow::anyhow!("starting the async runtime: {e}"))
}
