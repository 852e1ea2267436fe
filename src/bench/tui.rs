//! `webagent bench tui`.

use crate::tui::event_loop::{bench_draw_with, ListingDraw};
use std::process::ExitCode;
use std::time::Duration;

use super::fmt_duration;

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
