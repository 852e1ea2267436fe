//! The benchmarks behind `webagent bench …`. Each prints its figures next
//! to a baseline measured in the same run (a bare CDP call, a naive scan,
//! an unwindowed draw, a plain Rust call), so a figure means the same on
//! any machine. Build with `--release` before trusting them.

pub mod agent_browser;
pub mod cache;
pub mod cli;
pub mod late_ui;
pub mod mcp;
pub mod mcp_session;
pub mod observe;
pub mod prompt;
pub mod record;
pub mod script;
pub mod sitemap;
pub mod step;
pub mod suite;
pub mod tui;

use std::time::Duration;

/// Milliseconds since `started`.
pub fn ms_since(started: std::time::Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// `v` rounded to two decimals, for printed figures.
pub fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// The median of sorted values.
pub fn median(sorted: &[f64]) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// The p-th percentile of sorted values (nearest rank).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// A duration in µs below a millisecond, in ms above.
pub fn fmt_duration(duration: Duration) -> String {
    let micros = duration.as_secs_f64() * 1e6;
    if micros >= 1000.0 {
        format!("{:.2} ms", micros / 1000.0)
    } else {
        format!("{micros:.1} µs")
    }
}
