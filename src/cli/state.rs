//! `webagent state save FILE`: write a browser session's cookies and local
//! storage to a state file that `--state FILE` loads later.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;

use super::flags::{parse_page_url, RunFlags, SessionFlags};
use super::headless::start_reporting;

/// `webagent state …`.
#[derive(Debug, clap::Subcommand)]
pub enum StateCommand {
    /// Open a session (a persistent --profile, another --state, or a
    /// browser attached with --connect), open --url, and write its cookies
    /// and the page's local storage to FILE (owner-only). With --headed it
    /// first waits for Enter, so a person can sign in by hand in the
    /// window.
    Save(SaveArgs),
}

/// Flags of `webagent state save`.
#[derive(Debug, clap::Args)]
pub struct SaveArgs {
    /// The state file to write.
    pub file: PathBuf,
    /// The page to open first (its local storage is saved).
    #[arg(long, value_parser = parse_page_url)]
    pub url: Option<String>,
    /// Save the sign-ins of the named session (`webagent session start`)
    /// instead of opening one (exit 4 when there is no such session, 5
    /// when it is gone).
    #[arg(long = "session", value_name = "NAME", conflicts_with = "url")]
    pub session_name: Option<String>,
    /// Config and browser (`--profile`, `--state`, `--connect`,
    /// `--headed`).
    #[command(flatten)]
    pub session: SessionFlags,
}

/// Runs `webagent state …`.
pub fn run(command: StateCommand) -> anyhow::Result<ExitCode> {
    let StateCommand::Save(args) = command;
    if let Some(name) = &args.session_name {
        let request = crate::daemon::Request::SaveState {
            path: Some(super::session_client::absolute(&args.file)),
        };
        return Ok(super::session_client::forward(name, &request));
    }
    let prepared = match args.session.prepare(RunFlags::default()) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let headed = !prepared.config.browser.headless;
    let runtime = super::runtime()?;
    runtime.block_on(async move {
        let (session, reporter) = match start_reporting(prepared, args.url.as_deref()).await {
            Ok(started) => started,
            Err(code) => return Ok(code),
        };
        if headed {
            eprintln!("Sign in in the browser window, then press Enter here to save the state.");
            let waited = tokio::task::spawn_blocking(|| {
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line)
            })
            .await;
            if !matches!(waited, Ok(Ok(_))) {
                eprintln!("error: could not read Enter from the terminal");
                return Ok(ExitCode::from(1));
            }
        }
        let saved = session.save_state(Some(&args.file)).await;
        session.close().await;
        let _ = reporter.await;
        match saved {
            Ok(text) => {
                println!("{text}");
                Ok(ExitCode::SUCCESS)
            }
            Err(why) => {
                eprintln!("error: {why}");
                Ok(ExitCode::from(1))
            }
        }
    })
}
