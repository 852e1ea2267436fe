//! `webagent tui` (and plain `webagent`): the terminal workbench.

use std::path::PathBuf;
use std::process::ExitCode;

use super::exit::EXIT_USAGE;
use super::flags::{parse_page_url, RunFlags, SessionFlags};
use super::session_client::unreachable_code;
use crate::daemon::{open, valid_name, Request, SessionFiles};
use crate::session::Prepared;
use crate::tui::services::{self, AttachedSession, WorkbenchOptions};

/// Flags of `webagent tui`.
#[derive(Debug, Default, clap::Args)]
pub struct TuiArgs {
    /// The page to open (default: about:blank; `:navigate URL` goes
    /// elsewhere later).
    #[arg(long, value_parser = parse_page_url)]
    pub url: Option<String>,
    /// A theme: dark, light, a name in ./themes, or a YAML file (reloaded
    /// when it changes).
    #[arg(long, value_name = "NAME|FILE")]
    pub theme: Option<String>,
    /// A task to start as soon as the page is open.
    #[arg(long)]
    pub task: Option<String>,
    /// Watch the named session (`webagent session start`) instead of
    /// opening a browser: its commands show in the panes and ask you
    /// before risky actions; `:` actions and messages run there; q
    /// detaches and the session goes on (exit 3 when another workbench is
    /// attached, 4 when there is no such session, 5 when it is gone).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["url", "task"])]
    pub attach: Option<String>,
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
    if let Some(name) = args.attach {
        let theme = args.theme.map(|spec| theme_in(&themes, spec));
        return attach(name, &prepared, theme);
    }
    let mut options =
        WorkbenchOptions::new(args.url.unwrap_or_else(|| "about:blank".into()), prepared);
    options.theme = args.theme.map(|spec| theme_in(&themes, spec));
    options.task = args.task.filter(|t| !t.trim().is_empty());
    services::run(options)?;
    Ok(ExitCode::SUCCESS)
}

/// `tui --attach NAME`: attaches to the session and opens the workbench
/// on it, or says why it cannot (exit 2, 3, 4 or 5).
fn attach(name: String, prepared: &Prepared, theme: Option<String>) -> anyhow::Result<ExitCode> {
    if let Err(error) = valid_name(&name) {
        eprintln!("error: {error}");
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let (reply, connection) = match open(&SessionFiles::named(&name), &Request::Attach) {
        Ok(opened) => opened,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(unreachable_code(&error)));
        }
    };
    if reply.code != 0 {
        eprint!("{}", reply.stderr);
        return Ok(ExitCode::from(reply.code));
    }
    let session = AttachedSession {
        name,
        url: reply.status.map(|s| s.url).unwrap_or_default(),
        connection,
    };
    services::run_attached(session, prepared, theme)?;
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
