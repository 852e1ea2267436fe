//! `webagent sitemap …` (inspect, check and watch YAML sitemaps) and
//! `webagent bench sitemap` (search and resolve timings on a generated site).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc;

use anyhow::Context;
use clap::{Args, Subcommand};
use serde_json::{json, Map, Value};

use crate::sitemap::{Sitemap, SitemapEvent, SitemapWatcher, TEMPLATE_YAML};

/// Flags of `webagent sitemap`.
#[derive(Debug, Args)]
pub struct SitemapArgs {
    /// What to do with the sitemap.
    #[command(subcommand)]
    pub command: SitemapCommand,
}

/// The `webagent sitemap` subcommands.
#[derive(Debug, Subcommand)]
pub enum SitemapCommand {
    /// Print the outline the model sees.
    Print {
        /// The sitemap YAML file.
        file: PathBuf,
    },
    /// Find the page serving a path or URL; exits 1 when no page does.
    Resolve {
        /// The sitemap YAML file.
        file: PathBuf,
        /// A path (`/orders/12345`) or full URL; query, fragment and a
        /// trailing slash are ignored.
        target: String,
        /// Print `{"path", "pattern", "params", "title"}` as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Rank pages for a query (titles, keywords, path segments, actions,
    /// descriptions; CJK without spaces; small typos forgiven).
    Search {
        /// The sitemap YAML file.
        file: PathBuf,
        /// What to look for, e.g. `billing` or `帳單`.
        query: String,
        /// Print a JSON array, best first, of `{path, title, score, …}`.
        #[arg(long)]
        json: bool,
        /// At most this many results.
        #[arg(long, default_value_t = 10, value_name = "N")]
        limit: usize,
    },
    /// List every page that needs sign-in (inherited by sub-pages), one per
    /// line.
    Gated {
        /// The sitemap YAML file.
        file: PathBuf,
    },
    /// Validate files; prints `FILE:LINE:COLUMN: message` per error and
    /// exits 1 when any is invalid.
    Check {
        /// The sitemap YAML files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print the built-in SaaS template as YAML, a starting point for your
    /// own sitemap.
    Template,
    /// Watch files or directories and print one JSON event per line
    /// (`sitemap_loaded`, `sitemap_reloaded`, `sitemap_removed`, `error`)
    /// until interrupted.
    Watch {
        /// Sitemap files, or directories whose `.yaml`/`.yml` files are
        /// watched.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
}

/// Runs `webagent sitemap`.
pub fn run(args: SitemapArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        SitemapCommand::Print { file } => {
            let sitemap = load(&file)?;
            print!("{}", sitemap.serialize());
            Ok(ExitCode::SUCCESS)
        }
        SitemapCommand::Resolve { file, target, json } => resolve(&file, &target, json),
        SitemapCommand::Search {
            file,
            query,
            json,
            limit,
        } => search(&file, &query, json, limit),
        SitemapCommand::Gated { file } => {
            let sitemap = load(&file)?;
            for path in sitemap.gated_paths() {
                println!("{path}");
            }
            Ok(ExitCode::SUCCESS)
        }
        SitemapCommand::Check { files } => Ok(check(&files)),
        SitemapCommand::Template => {
            print!("{TEMPLATE_YAML}");
            Ok(ExitCode::SUCCESS)
        }
        SitemapCommand::Watch { paths } => watch(&paths),
    }
}

fn load(file: &Path) -> anyhow::Result<Sitemap> {
    Ok(Sitemap::load(file)?)
}

fn resolve(file: &Path, target: &str, json: bool) -> anyhow::Result<ExitCode> {
    let sitemap = load(file)?;
    let Some(found) = sitemap.resolve(target) else {
        eprintln!(
            "no page in {} matches {target}; `webagent sitemap print {}` lists the pages",
            file.display(),
            file.display()
        );
        return Ok(ExitCode::from(1));
    };
    if json {
        let params: Map<String, Value> = found
            .params
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let value = json!({
            "path": found.path,
            "pattern": found.pattern,
            "params": params,
            "title": found.node.title,
        });
        println!("{value}");
    } else {
        println!("{}  →  {}  {}", found.path, found.pattern, found.node.title);
        for (name, value) in &found.params {
            println!("  :{name} = {value}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn search(file: &Path, query: &str, json: bool, limit: usize) -> anyhow::Result<ExitCode> {
    let sitemap = load(file)?;
    let matches = sitemap.search(query, limit);
    if json {
        let items: Vec<Value> = matches
            .iter()
            .map(|m| {
                json!({
                    "path": m.path,
                    "title": m.title,
                    "score": m.score,
                    "description": m.node.description,
                })
            })
            .collect();
        println!("{}", Value::Array(items));
    } else if matches.is_empty() {
        eprintln!("no page matches {query:?}");
    } else {
        let width = matches
            .iter()
            .map(|m| m.path.chars().count())
            .max()
            .unwrap_or(0);
        for m in &matches {
            println!("{:>7.2}  {:<width$}  {}", m.score, m.path, m.title);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn check(files: &[PathBuf]) -> ExitCode {
    let mut failed = 0;
    for file in files {
        match Sitemap::load(file) {
            Ok(sitemap) => {
                eprintln!("{}: ok ({} pages)", file.display(), sitemap.page_count());
            }
            Err(err) => {
                failed += 1;
                let (line, column) = err.position().unwrap_or((1, 1));
                println!("{}:{line}:{column}: {}", file.display(), err.message());
            }
        }
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The JSON line printed by `watch` for one event.
fn event_json(event: &SitemapEvent) -> Value {
    match event {
        SitemapEvent::Loaded { file, pages } => {
            json!({"type": "sitemap_loaded", "file": file.display().to_string(), "pages": pages})
        }
        SitemapEvent::Reloaded { file, pages } => {
            json!({"type": "sitemap_reloaded", "file": file.display().to_string(), "pages": pages})
        }
        SitemapEvent::Removed { file } => {
            json!({"type": "sitemap_removed", "file": file.display().to_string()})
        }
        SitemapEvent::Error {
            file,
            line,
            column,
            message,
        } => json!({
            "type": "error",
            "file": file.display().to_string(),
            "line": line,
            "column": column,
            "error": message,
        }),
    }
}

fn watch(paths: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let (sender, receiver) = mpsc::channel();
    let _watcher = SitemapWatcher::start(paths, move |event| {
        // The receiver lives until the process exits; a failed send only
        // means we are shutting down.
        let _ = sender.send(event);
    })?;
    let stdout = std::io::stdout();
    for event in receiver {
        let mut out = stdout.lock();
        writeln!(out, "{}", event_json(&event)).context("writing to stdout")?;
        // Each line is read live by whoever runs us (a test, the TUI).
        out.flush().context("writing to stdout")?;
    }
    Ok(ExitCode::SUCCESS)
}
