//! The `webagent` binary: the command line over the library (see `webagent --help`).

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = webagent::cli::Cli::parse();
    // Logs go to a file: stdout and stderr belong to the command's own output
    // (JSON lines, the TUI), so nothing from tracing may land there.
    if let Err(err) = webagent::logging::init(cli.log_file.as_deref()) {
        eprintln!("warning: logging disabled: {err:#}");
    }
    match webagent::cli::run(cli) {
        Ok(code) => code,
        Err(err) => {
            // The one way out that no event sink sees: masked like a log
            // line (a model server's refusal may quote the API key).
            let text = chain_text(&err);
            eprintln!("error: {}", webagent::secrets::mask_log_line(&text));
            ExitCode::from(1)
        }
    }
}

/// The error and its causes, each said once: a message that already quotes
/// its cause (`starting the browser: X`, whose source is X) is not
/// followed by the cause again.
fn chain_text(err: &anyhow::Error) -> String {
    let mut text = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}
