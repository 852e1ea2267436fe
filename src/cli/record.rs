//! `webagent record`: what a person does on a page, recorded into a recipe
//! that replays it without the model.
//!
//! `--no-tui` records without the workbench, for scripts and tests: it
//! says `recording URL` once the page takes input, prints each step as
//! the recipe line it becomes, and writes the recipe when it gets Ctrl-C,
//! SIGTERM or the end of its standard input. Lines on standard input edit
//! the recording as it grows: `undo` takes the last step back, and
//! `goal N TEXT` gives step N the goal a heal is told. A dialog the page
//! opens waits for the person (it says so): in the window, or with
//! `accept [TEXT]` or `dismiss` on standard input.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use tokio::io::AsyncBufReadExt as _;

use super::exit::EXIT_USAGE;
use super::flags::{parse_page_url, RunFlags, SessionFlags};
use super::headless::start_reporting;
use crate::browser::record::{Input, Recorder};
use crate::script::Recording;
use crate::words::is_snake_case;

/// Flags of `webagent record`.
#[derive(Debug, clap::Args)]
pub struct RecordArgs {
    /// The page to start on.
    #[arg(value_parser = parse_page_url)]
    pub url: String,
    /// Where to write the recipe (default: NAME.rhai in the recipes
    /// folder). An existing file is never replaced.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The recipe's name, a snake_case word.
    #[arg(long, default_value = "recorded")]
    pub name: String,
    /// Record without the workbench: print each step as it is recorded and
    /// write the recipe on Ctrl-C, SIGTERM or the end of standard input.
    /// Lines on standard input: `undo`, `goal N TEXT`, and for a dialog
    /// the page opened, `accept [TEXT]` or `dismiss`. Without it the workbench opens recording, its recipe pane showing
    /// the recipe as it grows; `:record stop` writes it.
    #[arg(long)]
    pub no_tui: bool,
    /// Config, scripts, sitemaps, secrets, browser (--headed opens a window
    /// to act in).
    #[command(flatten)]
    pub session: SessionFlags,
}

/// Runs `webagent record`.
pub fn run(args: RecordArgs) -> anyhow::Result<ExitCode> {
    if !is_snake_case(&args.name) {
        eprintln!(
            "error: --name {:?} is not a recipe name: use lowercase words joined by _ (sign_in)",
            args.name
        );
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    if !args.no_tui {
        return in_the_workbench(args);
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("recipes").join(format!("{}.rhai", args.name)));
    if out.exists() {
        eprintln!(
            "error: {} already exists; give another --out or --name (a recording never replaces a file)",
            out.display()
        );
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let prepared = match args.session.prepare(RunFlags::default()) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let runtime = super::runtime()?;
    runtime.block_on(record(args, out, prepared))
}

/// The workbench on the page, recording from the start: the recipe pane
/// shows the recipe as it grows and `:record stop` writes it (into the
/// folder of --out when given, its file named after the recipe).
fn in_the_workbench(args: RecordArgs) -> anyhow::Result<ExitCode> {
    let name = match &args.out {
        Some(out) if out.extension().is_some_and(|e| e == "rhai") => out
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|s| is_snake_case(s))
            .map(str::to_string),
        Some(_) => None,
        None => Some(args.name.clone()),
    };
    let Some(name) = name else {
        eprintln!(
            "error: --out must name a NAME.rhai file, NAME a snake_case word: the workbench names the recipe after its file"
        );
        return Ok(ExitCode::from(EXIT_USAGE));
    };
    let prepared = match args.session.prepare(RunFlags::default()) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let has_recipes = prepared.script_paths.iter().any(|p| p.is_dir());
    let mut options = crate::tui::services::WorkbenchOptions::new(args.url, prepared);
    // As with --no-tui: the recipes folder, made when there is none yet.
    match args.out.as_deref().and_then(std::path::Path::parent) {
        Some(dir) if !dir.as_os_str().is_empty() => options.export_dir = dir.to_path_buf(),
        _ if !has_recipes => options.export_dir = PathBuf::from("recipes"),
        _ => {}
    }
    options.record = Some(name);
    crate::tui::services::run(options)?;
    Ok(ExitCode::SUCCESS)
}

async fn record(
    args: RecordArgs,
    out: PathBuf,
    prepared: crate::session::Prepared,
) -> anyhow::Result<ExitCode> {
    let (session, reporter) = match start_reporting(prepared, Some(&args.url)).await {
        Ok(started) => started,
        Err(code) => return Ok(code),
    };
    let sitemaps = session
        .sitemaps
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let tab = session.environment.inner().inner().tab();
    let mut recorder = match Recorder::start(tab).await {
        Ok(recorder) => recorder,
        Err(error) => {
            eprintln!(
                "error: the recorder could not start on {}: {error}",
                args.url
            );
            session.close().await;
            return Ok(ExitCode::FAILURE);
        }
    };
    let mut recording = Recording::new(&args.name, &args.url);
    println!("recording {}", args.url);
    let _ = std::io::stdout().flush();

    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    loop {
        tokio::select! {
            input = recorder.next() => match input {
                Some(input) => take(&mut recording, input, &args.url),
                None => break,
            },
            line = lines.next_line() => match line {
                Ok(Some(line)) => match line.trim().split_once(' ').unwrap_or((line.trim(), "")) {
                    ("accept", text) => answer(&recorder, true, text).await,
                    ("dismiss", "") => answer(&recorder, false, "").await,
                    _ => edit(&mut recording, &line),
                },
                _ => break,
            },
            _ = tokio::signal::ctrl_c() => break,
            _ = terminate.recv() => break,
        }
    }
    // A field still being typed into when the recording stopped gives its
    // fill now.
    for input in recorder.stop(tab).await {
        take(&mut recording, input, &args.url);
    }
    session.close().await;
    let _ = reporter.await;
    write_recipe(&recording, &out, &sitemaps)
}

/// Adds what the person did to the recording and prints its step; a
/// dialog waiting for an answer says how to give it.
fn take(recording: &mut Recording, input: Input, url: &str) {
    if let Input::DialogOpened { kind, message } = &input {
        println!(
            "the page opened a {kind} dialog: {message:?}; answer it in the window, or type `accept [TEXT]` or `dismiss`"
        );
        let _ = std::io::stdout().flush();
        return;
    }
    if let Some(number) = recording.push(input, url) {
        print_step(recording, number);
    }
}

/// Answers the dialog open on the page, as the person typed.
async fn answer(recorder: &Recorder, accept: bool, text: &str) {
    let text = (!text.is_empty()).then(|| text.to_string());
    if let Err(error) = recorder.answer_dialog(accept, text).await {
        println!("no dialog was answered: {error}");
        let _ = std::io::stdout().flush();
    }
}

/// Prints step `number` as its recipe line.
fn print_step(recording: &Recording, number: usize) {
    match recording.line(number) {
        Some(line) => println!("{number:>3}  {line}"),
        None => println!(
            "{number:>3}  (does not replay: {})",
            recording.steps()[number - 1].action
        ),
    }
    let _ = std::io::stdout().flush();
}

/// One line typed while recording: `undo`, or `goal N TEXT`.
fn edit(recording: &mut Recording, line: &str) {
    let line = line.trim();
    if line.is_empty() {
        return;
    }
    if line == "undo" {
        match recording.undo() {
            Some(_) => println!("undone; {} step(s) left", recording.steps().len()),
            None => println!("nothing to undo"),
        }
    } else if let Some(rest) = line.strip_prefix("goal ") {
        let (number, goal) = rest.trim().split_once(' ').unwrap_or((rest.trim(), ""));
        match number.parse::<usize>() {
            Ok(n) if recording.set_goal(n, goal) => println!("step {n}: goal {:?}", goal.trim()),
            _ => println!(
                "no step {number}; steps are 1 to {}",
                recording.steps().len()
            ),
        }
    } else {
        println!(
            "unknown line {line:?}: type `undo`, `goal N TEXT`, or for a dialog `accept [TEXT]` or `dismiss`"
        );
    }
    let _ = std::io::stdout().flush();
}

fn write_recipe(
    recording: &Recording,
    out: &std::path::Path,
    sitemaps: &crate::sitemap::SitemapSet,
) -> anyhow::Result<ExitCode> {
    let Some(source) = recording.source(Some(sitemaps)) else {
        eprintln!("nothing was recorded that replays; no file written");
        return Ok(ExitCode::FAILURE);
    };
    if let Err(error) = crate::script::recording::write_new(out, &source) {
        eprintln!("error: could not write {}: {error}", out.display());
        return Ok(ExitCode::FAILURE);
    }
    println!(
        "wrote {} ({} step(s))",
        out.display(),
        recording.steps().len()
    );
    for secret in recording.secrets() {
        println!(
            "the recipe types the secret {secret}: give its value when it runs (--secret {secret} with {secret} in the environment)"
        );
    }
    Ok(ExitCode::SUCCESS)
}
