//! `webagent tui` (and plain `webagent`): the terminal workbench.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use super::flags::{RunFlags, SessionFlags};
use crate::tui::event_loop::{bench_draw_with, ListingDraw};
use crate::tui::services::{self, WorkbenchOptions};

/// Flags of `webagent tui`.
#[derive(Debug, Default, clap::Args)]
pub struct TuiArgs {
    /// The page to open (default: about:blank; `:navigate URL` goes
    /// elsewhere later).
    #[arg(long)]
    pub url: Option<String>,
    /// A theme: dark, light, a name in ./themes, or a YAML file (reloaded
    /// when it changes).
    #[arg(long, value_name = "NAME|FILE")]
    pub theme: Option<String>,
    /// A task to start as soon as the page is open.
    #[arg(long)]
    pub task: Option<String>,
    /// Approval mode (`a` cycles it while running) and step limit.
    #[command(flatten)]
    pub run: RunFlags,
    /// Config, model, scripts (their custom actions join the `:` line and
    /// the model's tools, `:recipe NAME` or R runs a recipe, E exports the
    /// session to the first directory), sitemaps, secrets, browser.
    #[command(flatten)]
    pub session: SessionFlags,
}

/// A bare theme name found as NAME.yaml in the configured themes
/// directory becomes that file; anything else is passed on as given.
fn theme_in(dir: &std::path::Path, spec: String) -> String {
    let bare = !spec.contains(['/', '\\']) && !spec.ends_with(".yaml");
    let file = dir.join(format!("{spec}.yaml"));
    if bare && !matches!(spec.as_str(), "dark" | "light") && file.is_file() {
        file.display().to_string()
    } else {
        spec
    }
}

/// Runs `webagent tui`.
pub fn run(mut args: TuiArgs) -> anyhow::Result<ExitCode> {
    args.run.max_steps = args.run.max_steps.map(|n| n.max(1));
    let prepared = match args.session.prepare(args.run) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let themes = prepared.config.paths.themes.clone();
    let mut options =
        WorkbenchOptions::new(args.url.unwrap_or_else(|| "about:blank".into()), prepared);
    options.theme = args.theme.map(|spec| theme_in(&themes, spec));
    options.task = args.task.filter(|t| !t.trim().is_empty());
    services::run(options)?;
    Ok(ExitCode::SUCCESS)
}

/// Opens the workbench on the demo site (called by `webagent demo`).
pub fn open_demo(url: String, sitemap: PathBuf, recipes: PathBuf) -> anyhow::Result<ExitCode> {
    let args = TuiArgs {
        url: Some(url),
        session: SessionFlags {
            sitemap: vec![sitemap],
            recipes: vec![recipes],
            ..SessionFlags::default()
        },
        ..TuiArgs::default()
    };
    run(args)
}

/// Flags of `webagent bench tui`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Elements in the synthetic listing.
    #[arg(long, default_value_t = 20_000, value_name = "N")]
    pub elements: usize,
    /// Elements in the small-listing baseline.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub small: usize,
    /// Frames drawn per case.
    #[arg(long, default_value_t = 300, value_name = "K")]
    pub frames: usize,
}

fn fmt_duration(duration: Duration) -> String {
    let micros = duration.as_secs_f64() * 1e6;
    if micros >= 1000.0 {
        format!("{:.2} ms", micros / 1000.0)
    } else {
        format!("{micros:.0} µs")
    }
}

fn ratio(ours: Duration, baseline: Duration) -> String {
    if ours.is_zero() {
        return "-".into();
    }
    format!("{:.2}×", baseline.as_secs_f64() / ours.as_secs_f64())
}

/// Runs `webagent bench tui`: frame draw time of the workbench over a large
/// listing, against the same frame drawn without windowing and against a
/// small listing, at 80×24 and 160×48.
pub fn bench(args: BenchArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(args.elements >= 1, "--elements must be at least 1");
    anyhow::ensure!(args.small >= 1, "--small must be at least 1");
    anyhow::ensure!(args.frames >= 1, "--frames must be at least 1");
    println!(
        "tui draw bench: {} frames per case, the cursor jumping through the listing{}",
        args.frames,
        if cfg!(debug_assertions) {
            " (debug build: use --release for real figures)"
        } else {
            ""
        }
    );
    println!();
    println!(
        "{:<8} {:<34} {:>10} {:>10} {:>10} {:>10}",
        "size", "case", "mean", "median", "p95", "max"
    );
    for (columns, rows) in [(80u16, 24u16), (160, 48)] {
        let size = format!("{columns}x{rows}");
        let windowed = bench_draw_with(
            ListingDraw::Windowed,
            args.elements,
            args.frames,
            columns,
            rows,
        );
        let small = bench_draw_with(
            ListingDraw::Windowed,
            args.small,
            args.frames,
            columns,
            rows,
        );
        let unwindowed = bench_draw_with(
            ListingDraw::Unwindowed,
            args.elements,
            args.frames,
            columns,
            rows,
        );
        let cases = [
            (format!("windowed, {} elements", args.elements), windowed),
            (format!("windowed, {} elements", args.small), small),
            (
                format!("unwindowed baseline, {} elements", args.elements),
                unwindowed,
            ),
        ];
        for (name, figures) in &cases {
            println!(
                "{size:<8} {name:<34} {:>10} {:>10} {:>10} {:>10}",
                fmt_duration(figures.mean),
                fmt_duration(figures.median),
                fmt_duration(figures.p95),
                fmt_duration(figures.max),
            );
        }
        println!(
            "{size:<8} the unwindowed baseline's median is {} the windowed one; {} elements take {} the time of {}",
            ratio(windowed.median, unwindowed.median),
            args.elements,
            ratio(small.median, windowed.median),
            args.small,
        );
        println!();
    }
    Ok(ExitCode::SUCCESS)
}
