//! Logging to a file through `tracing`.
//!
//! The terminal belongs to the TUI or to `--json` output, so log lines never
//! go to stdout or stderr. The default file is `.webagent/logs/webagent.log`
//! under the working directory; `WEBAGENT_LOG` sets the level (`error`,
//! `warn`, `info`, `debug`, `trace`; default `info`).

use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Context;
use tracing::Level;

/// Where logs go when `--log-file` is not given.
pub fn default_log_path() -> PathBuf {
    PathBuf::from(".webagent").join("logs").join("webagent.log")
}

/// Installs the global subscriber writing to `path` (or the default path).
///
/// Fails when the file cannot be opened; the caller keeps running without
/// logs rather than writing them to the terminal.
pub fn init(path: Option<&Path>) -> anyhow::Result<()> {
    let path = path.map(Path::to_path_buf).unwrap_or_else(default_log_path);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("opening log file {}", path.display()))?;
    let level = std::env::var("WEBAGENT_LOG")
        .ok()
        .and_then(|v| v.parse::<Level>().ok())
        .unwrap_or(Level::INFO);
    tracing_subscriber::fmt()
        // Secrets registered by a run are masked in every line, whichever
        // library logged it.
        .with_writer(Mutex::new(crate::config::redact::RedactingWriter::new(
            file,
        )))
        .with_ansi(false)
        .with_max_level(level)
        .try_init()
        .map_err(|e| anyhow::anyhow!("installing the log subscriber: {e}"))?;
    Ok(())
}
