//! Logging to a file through `tracing`.
//!
//! The terminal belongs to the TUI or to `--json` output, so log lines never
//! go to stdout or stderr. The default file is `.webagent/logs/webagent.log`
//! under the working directory; `WEBAGENT_LOG` sets the level (`error`,
//! `warn`, `info`, `debug`, `trace`; default `info`).

use std::fs::{self, OpenOptions};
use std::io::Write;
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
        .with_writer(Mutex::new(MaskingWriter { inner: file }))
        .with_ansi(false)
        .with_max_level(level)
        .try_init()
        .map_err(|e| anyhow::anyhow!("installing the log subscriber: {e}"))?;
    Ok(())
}

/// Masks the secrets a run registered ([`crate::secrets::mask_in_logs`])
/// in what passes through. The formatter writes each log event as one
/// buffer, so a value is never split across two writes.
struct MaskingWriter<W> {
    inner: W,
}

impl<W: Write> Write for MaskingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match std::str::from_utf8(buf) {
            Ok(text) => {
                self.inner
                    .write_all(crate::secrets::mask_log_line(text).as_bytes())?;
                Ok(buf.len())
            }
            // Formatted log lines are always UTF-8; anything else passes.
            Err(_) => self.inner.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::{mask_in_logs, Secrets};

    #[test]
    fn escaped_forms_of_a_registered_value_are_masked_in_log_lines() {
        let mut secrets = Secrets::new();
        secrets.insert("quoted", "pa\"ss\\wörd-7731");
        mask_in_logs(&secrets);
        let value = "pa\"ss\\wörd-7731";
        let json = serde_json::to_string(value).unwrap();
        let logged = format!("typed {value}; sent {json}; debug {:?}", json);
        let mut out = MaskingWriter { inner: Vec::new() };
        out.write_all(logged.as_bytes()).unwrap();
        let written = String::from_utf8(out.inner).unwrap();
        assert!(!written.contains("7731"), "{written}");
        assert_eq!(written.matches("<secret>quoted</secret>").count(), 3);
        assert_eq!(
            crate::secrets::mask_log_line("nothing here"),
            "nothing here"
        );
    }
}
