//! The `webagent` binary as the tests run it, and reading back what it
//! printed.

use std::process::{Command, Output};

use serde_json::Value;

/// `webagent` with no model from this process's environment: the tests
/// say which model it talks to, or that there is none.
pub fn webagent() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_webagent"));
    for name in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "WEBAGENT_MODEL"] {
        command.env_remove(name);
    }
    command
}

/// The JSON lines a `--json` run printed; other lines are passed over.
pub fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// The exit code and both streams, for a failing assertion to show.
pub fn said(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Runs [`webagent`] with `args`, its log in the temp folder, and waits
/// for it.
pub fn run_webagent(args: &[&str]) -> Output {
    webagent()
        .args(args)
        .arg("--log-file")
        .arg(std::env::temp_dir().join(format!("webagent-{}-test.log", env!("CARGO_CRATE_NAME"))))
        .output()
        .expect("running the webagent binary")
}

/// Runs `command` off the runtime's threads (the test's servers answer on
/// them meanwhile) and returns its output.
pub async fn output_of(mut command: Command) -> Output {
    tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("joined")
        .expect("webagent runs")
}
