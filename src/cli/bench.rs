//! `webagent bench`: benchmarks that print figures, each measured as a ratio
//! against a baseline in the same run, so they can be rerun on any machine.
//! Build with `--release` before trusting the numbers.

use std::process::ExitCode;

use clap::Subcommand;

/// The benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Sitemap search and resolve on a generated sitemap.
    Sitemap(crate::bench::sitemap::BenchArgs),
    /// Page observation against a bare DOMSnapshot capture; the step after
    /// a navigation (navigate action, then observation) against a bare CDP
    /// client's navigate, load and first evaluate on a tab of its own.
    Observe(crate::bench::observe::BenchArgs),
    /// The non-LLM part of a step (act, settle, observe) against a bare
    /// `Runtime.evaluate` round trip; then a step whose action changes
    /// nothing, one whose action opens a submenu 300 ms late and one whose
    /// click opens a panel that grows for 400 ms; then a click answered
    /// directly against the same click as an MCP call.
    Step(crate::bench::step::BenchArgs),
    /// Workbench frame draw time over a 20,000-element listing against the
    /// same frame drawn without windowing.
    Tui(crate::bench::tui::BenchArgs),
    /// A custom action's call through the Rhai sandbox (thread, engine,
    /// host round trip) against the same work as a plain Rust call.
    Script(crate::bench::script::BenchArgs),
    /// The size of each part of a step's request (fixed part, page,
    /// history at step 1 and 20) on the demo pages and a 20,000-item list,
    /// whether the part before the page stays a cacheable prefix, and the
    /// fixed part against its goal of 10,000 characters.
    Prompt(PromptBenchArgs),
    /// The characters an MCP client is sent over a scripted 20-call
    /// session on the demo: whole pages after each action against deltas.
    Mcp(PromptBenchArgs),
    /// The demo's create-order task with a scripted model answering after a
    /// delay: the first run (cache miss), replays from the task cache
    /// (hits), and the exported recipe run directly; model calls, tokens
    /// and wall time of each.
    Cache(crate::bench::cache::BenchArgs),
    /// `webagent test` on 16 recipe cases of the demo at 1, 2 and 4
    /// workers: cases per minute, the speed-up against one worker, and
    /// peak memory.
    Suite(SuiteBenchArgs),
    /// A command on a named session (`observe --session S --delta`, then
    /// `exec --session S 'click N'`, each a process) against the action's
    /// own time inside the session, on the benchmark pages; and the idle
    /// session process's memory.
    Cli(crate::bench::cli::BenchArgs),
    /// The recorder's added time per input event in the page (with it and
    /// without it, alternating), and a recorded recipe's replay against the
    /// same steps written by hand.
    Record(crate::bench::record::BenchArgs),
}

/// Flags of `webagent bench suite`.
#[derive(Debug, clap::Args)]
pub struct SuiteBenchArgs {
    /// Cases in the suite.
    #[arg(long, default_value_t = 16)]
    pub cases: usize,
    /// The worker counts to compare, the first being the baseline.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2, 4])]
    pub workers: Vec<usize>,
    /// Print one JSON object per worker count instead of a table.
    #[arg(long)]
    pub json: bool,
    /// The browser to use.
    #[command(flatten)]
    pub browser: crate::config::BrowserOpts,
}

/// Flags of `webagent bench prompt`.
#[derive(Debug, clap::Args)]
pub struct PromptBenchArgs {
    /// Print one JSON object per page instead of a table.
    #[arg(long)]
    pub json: bool,
    /// The browser to use.
    #[command(flatten)]
    pub browser: crate::config::BrowserOpts,
}

fn bench_prompt(args: PromptBenchArgs) -> anyhow::Result<ExitCode> {
    let runtime = super::runtime()?;
    let figures = runtime.block_on(crate::bench::prompt::run(args.browser.launch_options()))?;
    if args.json {
        for f in &figures {
            println!("{}", serde_json::to_string(f)?);
        }
    } else {
        print!("{}", crate::bench::prompt::table(&figures));
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs one benchmark.
pub fn run(command: BenchCommand) -> anyhow::Result<ExitCode> {
    match command {
        BenchCommand::Sitemap(args) => crate::bench::sitemap::bench(args),
        BenchCommand::Observe(args) => crate::bench::observe::bench(args),
        BenchCommand::Step(args) => {
            // The settling figures run after the step table, in a browser
            // of their own, so the step benchmark itself is unchanged.
            let (launch, runs, json) = (
                args.browser.launch_options(),
                (args.runs / 5).clamp(5, 40),
                args.json,
            );
            let code = crate::bench::step::bench(args)?;
            let runtime = super::runtime()?;
            let report = runtime.block_on(crate::bench::late_ui::measure(launch.clone(), runs))?;
            crate::bench::late_ui::print(&report, json);
            // The MCP round trip: the same click directly and as a tool call.
            let round_trip = runtime.block_on(crate::bench::mcp::measure(launch, runs * 4))?;
            crate::bench::mcp::print(&round_trip, json);
            Ok(code)
        }
        BenchCommand::Tui(args) => crate::bench::tui::bench(args),
        BenchCommand::Script(args) => crate::bench::script::bench(args),
        BenchCommand::Prompt(args) => bench_prompt(args),
        BenchCommand::Suite(args) => {
            if args.cases == 0 || args.workers.contains(&0) {
                anyhow::bail!("--cases and every --workers count must be at least 1");
            }
            let runtime = super::runtime()?;
            let rows = runtime.block_on(crate::bench::suite::measure(
                args.browser.launch_options(),
                args.cases,
                &args.workers,
            ))?;
            crate::bench::suite::print(&rows, args.json);
            Ok(ExitCode::SUCCESS)
        }
        BenchCommand::Cache(args) => crate::bench::cache::bench(args),
        BenchCommand::Cli(args) => crate::bench::cli::bench(args),
        BenchCommand::Record(args) => crate::bench::record::bench(args),
        BenchCommand::Mcp(args) => {
            let runtime = super::runtime()?;
            let sent = runtime.block_on(crate::bench::mcp_session::measure(
                args.browser.launch_options(),
            ))?;
            crate::bench::mcp_session::print(&sent, args.json);
            Ok(ExitCode::SUCCESS)
        }
    }
}
