//! `webagent bench`: benchmarks that print figures, each measured as a ratio
//! against a baseline in the same run, so they can be rerun on any machine.
//! Build with `--release` before trusting the numbers.

use std::process::ExitCode;

use clap::Subcommand;

mod late_ui;

/// The benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Sitemap search and resolve on a generated sitemap.
    Sitemap(super::sitemap::BenchArgs),
    /// Page observation against a bare DOMSnapshot capture.
    Observe(super::observe::BenchArgs),
    /// The non-LLM part of a step (act, settle, observe) against a bare
    /// `Runtime.evaluate` round trip; then a step whose action changes
    /// nothing and one whose action opens a submenu 300 ms late.
    Step(super::exec::BenchArgs),
    /// Workbench frame draw time over a 20,000-element listing against the
    /// same frame drawn without windowing.
    Tui(super::tui::BenchArgs),
    /// A custom action's call through the Rhai sandbox (thread, engine,
    /// host round trip) against the same work as a plain Rust call.
    Script(super::recipe::BenchArgs),
    /// The size of each part of a step's request (fixed part, page,
    /// history at step 1 and 20) on the demo pages and a 20,000-item list,
    /// and whether the part before the page stays a cacheable prefix.
    Prompt(PromptBenchArgs),
}

/// Flags of `webagent bench prompt`.
#[derive(Debug, clap::Args)]
pub struct PromptBenchArgs {
    /// Print one JSON object per page instead of a table.
    #[arg(long)]
    pub json: bool,
    /// The browser to use.
    #[command(flatten)]
    pub browser: super::observe::BrowserOpts,
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
        BenchCommand::Sitemap(args) => super::sitemap::bench(args),
        BenchCommand::Observe(args) => super::observe::bench(args),
        BenchCommand::Step(args) => {
            // The settling figures run after the step table, in a browser
            // of their own, so the step benchmark itself is unchanged.
            let (launch, runs, json) = (
                args.browser.launch_options(),
                (args.runs / 5).clamp(5, 40),
                args.json,
            );
            let code = super::exec::bench(args)?;
            let report = super::runtime()?.block_on(late_ui::measure(launch, runs))?;
            late_ui::print(&report, json);
            Ok(code)
        }
        BenchCommand::Tui(args) => super::tui::bench(args),
        BenchCommand::Script(args) => super::recipe::bench(args),
        BenchCommand::Prompt(args) => bench_prompt(args),
    }
}
