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
            eprintln!("error: {err:#}");
            ExitCode::from(1)
        }
    }
}
