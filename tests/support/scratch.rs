//! Scratch folders: a fresh one per test, under the system's temp folder,
//! named after the binary, the test's own name and the process, so tests
//! running side by side (and binaries run at once) never share one.

use std::path::PathBuf;

/// An empty folder `webagent-BINARY-NAME-PID` in the temp folder; what an
/// earlier run left there is removed first.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "webagent-{}-{name}-{}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("creating a scratch folder");
    dir
}
