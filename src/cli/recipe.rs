//! `webagent recipe run|check`, `webagent export` and `webagent bench
//! script`.
//!
//! `recipe run` behaves like `webagent run` without the model: the same
//! events (step log or `--json` lines), a trace file, the approval gate,
//! exit 0 on success, 1 when the recipe fails, 2 for bad usage.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use super::exit::EXIT_USAGE;
use super::flags::{parse_page_url, HeadlessFlags};
use super::headless::Headless;
use crate::interrupt::Interrupt;
use crate::script::params::{parse_assignment, resolve_params};
use crate::script::{export_recipe_with, pick_recipe, ExportOptions, Scripts};
use crate::session::{located_text, same_file, Bare, RecipeChoice, ReplayOptions};

/// The recipe subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum RecipeCommand {
    /// Run a recipe headless, like `webagent run` without the model.
    Run(Box<RunArgs>),
    /// Compile script files and list the actions and recipes they declare.
    Check(CheckArgs),
    /// Print every host function a script may call: parameters, return,
    /// errors and an example.
    Api(ApiArgs),
}

/// Flags of `webagent recipe api`.
#[derive(Debug, clap::Args)]
pub struct ApiArgs {
    /// Print the reference as JSON, for tools.
    #[arg(long)]
    pub json: bool,
    /// Print the reference as a Markdown table (the one docs/recipes.md
    /// embeds).
    #[arg(long, conflicts_with = "json")]
    pub markdown: bool,
}

/// Flags of `webagent recipe run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The script file that declares the recipe.
    pub file: PathBuf,
    /// Which recipe to run (needed when the file declares several).
    #[arg(long, value_name = "NAME")]
    pub recipe: Option<String>,
    /// The page to start on; its origin is the one the recipe's paths
    /// (`navigate("/orders")`) open on.
    #[arg(long, value_parser = parse_page_url)]
    pub url: Option<String>,
    /// Run it in the named session (`webagent session start --recipes
    /// FILE`), from the page its last command left; the session's
    /// approval rules apply.
    #[arg(long = "session", value_name = "NAME", conflicts_with_all = ["url", "update", "yes", "approve"])]
    pub session_name: Option<String>,
    /// A value for one of the recipe's parameters (repeatable); the text
    /// is read as the parameter's declared type.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Write the repaired recipe of a healed run over FILE instead of next
    /// to it (FILE.healed.rhai).
    #[arg(long)]
    pub update: bool,
    /// Do not heal failed steps with the model, even when one is
    /// configured: a step that no longer runs fails the recipe.
    #[arg(long)]
    pub no_heal: bool,
    /// Step through the recipe: `--debug` in the workbench (a terminal
    /// is needed), `--debug=cli` as JSON lines on standard input and
    /// output (see docs/debugger.md).
    #[arg(long, value_name = "MODE", num_args = 0..=1, require_equals = true, default_missing_value = "tui")]
    pub debug: Option<super::debug::DebugMode>,
    /// Approvals, output, and the session: config, the model for
    /// `agent("…")` sub-goals, more scripts, sitemaps, secrets, browser.
    #[command(flatten)]
    pub flags: HeadlessFlags,
}

/// Flags of `webagent recipe check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Script files to compile, or folders of them (their `*.rhai`, as a
    /// session loads them).
    #[arg(required = true, value_name = "FILE|DIR")]
    pub files: Vec<PathBuf>,
}

/// Runs a recipe subcommand.
pub fn run(command: RecipeCommand) -> anyhow::Result<ExitCode> {
    match command {
        RecipeCommand::Check(args) => Ok(check(&args)),
        RecipeCommand::Api(args) => {
            if args.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&crate::script::api::reference_json())?
                );
            } else if args.markdown {
                print!("{}", crate::script::api::reference_markdown());
            } else {
                print!("{}", crate::script::api::reference_text());
            }
            Ok(ExitCode::SUCCESS)
        }
        RecipeCommand::Run(args) if args.session_name.is_some() => {
            let request = crate::daemon::Request::Recipe {
                file: super::session_client::absolute(&args.file),
                recipe: args.recipe.clone(),
                params: args.params.clone(),
                json: args.flags.json,
                no_heal: args.no_heal,
            };
            let name = args.session_name.as_deref().unwrap_or_default();
            Ok(super::session_client::forward(name, &request))
        }
        RecipeCommand::Run(args) if args.debug == Some(super::debug::DebugMode::Tui) => {
            debug_in_the_workbench(&args)
        }
        RecipeCommand::Run(args) => {
            let runtime = super::runtime()?;
            runtime.block_on(run_recipe_command(*args))
        }
    }
}

fn check(args: &CheckArgs) -> ExitCode {
    let scripts = Scripts::default();
    let mut failed = false;
    let mut files = Vec::new();
    for path in &args.files {
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        match crate::script::script_files(path) {
            Ok(found) if found.is_empty() => {
                failed = true;
                println!("{}: no *.rhai scripts in this folder", path.display());
            }
            Ok(found) => files.extend(found),
            Err(error) => {
                failed = true;
                println!("{error}");
            }
        }
    }
    for file in &files {
        match scripts.check_file(file) {
            Ok(summary) => {
                let list = |names: &[String]| {
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                };
                println!(
                    "{}: actions: {}; recipes: {}",
                    summary.file,
                    list(&summary.actions),
                    list(&summary.recipes)
                );
                for problem in &summary.problems {
                    failed = true;
                    println!("{problem}");
                }
            }
            Err(error) => {
                failed = true;
                println!("{}", located_text(file, &error));
            }
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// What `recipe run` runs, checked before the browser starts: the
/// session, the recipe and its parameters.
struct CheckedRun {
    prepared: crate::session::Prepared,
    recipe: crate::script::RecipeDef,
    params: serde_json::Map<String, serde_json::Value>,
}

/// Prepares the session with the recipe's file among its scripts, picks
/// the recipe and checks its parameters; the exit code when one fails.
fn check_run(args: &RunArgs) -> Result<CheckedRun, ExitCode> {
    // The recipe's file joins the scripts the session loads and watches;
    // everything is checked before the browser starts.
    let mut flags = args.flags.session.clone();
    if flags.recipes.is_empty() {
        // Without --recipes the configured directory still lends its
        // custom actions.
        let loaded = super::flags::load(flags.config.as_deref(), &flags.overrides(args.flags.run))?;
        flags.recipes = crate::session::Prepared::script_paths(&loaded.config, &[]);
    }
    if !covered(&flags.recipes, &args.file) {
        flags.recipes.insert(0, args.file.clone());
    }
    let prepared = flags.prepare(args.flags.run)?;
    let recipes = prepared.scripts.recipes();
    let own: Vec<_> = recipes
        .into_iter()
        .filter(|r| same_file(&r.file, &args.file))
        .collect();
    let recipe = match pick_recipe(
        &own,
        &args.file,
        args.recipe.as_deref(),
        "pick one with --recipe NAME",
    ) {
        Ok(recipe) => recipe.clone(),
        Err(why) => {
            eprintln!("error: {why}");
            return Err(ExitCode::from(EXIT_USAGE));
        }
    };
    // Parameters are checked before the browser starts: a typo costs no
    // Chromium launch, and nothing runs with a value of the wrong type.
    let params = match recipe_params(&recipe, &args.params) {
        Ok(params) => params,
        Err(why) => {
            eprintln!("error: {why}");
            return Err(ExitCode::from(EXIT_USAGE));
        }
    };
    Ok(CheckedRun {
        prepared,
        recipe,
        params,
    })
}

/// `recipe run FILE --debug` with a terminal: the workbench on the page,
/// debugging the recipe from its first line.
fn debug_in_the_workbench(args: &RunArgs) -> anyhow::Result<ExitCode> {
    if !std::io::stdout().is_terminal() {
        eprintln!(
            "error: --debug opens the workbench, which needs a terminal; \
             --debug=cli steps through the recipe over JSON lines (see docs/debugger.md)"
        );
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let CheckedRun {
        prepared,
        recipe,
        params,
    } = match check_run(args) {
        Ok(checked) => checked,
        Err(code) => return Ok(code),
    };
    let url = args.url.clone().unwrap_or_else(|| "about:blank".into());
    let mut options = crate::tui::services::WorkbenchOptions::new(url, prepared);
    options.debug = Some(crate::tui::state::DebugStart {
        name: recipe.name,
        file: args.file.clone(),
        params,
    });
    crate::tui::services::run(options)?;
    Ok(ExitCode::SUCCESS)
}

async fn run_recipe_command(args: RunArgs) -> anyhow::Result<ExitCode> {
    let CheckedRun {
        prepared,
        recipe,
        params,
    } = match check_run(&args) {
        Ok(checked) => checked,
        Err(code) => return Ok(code),
    };
    if args.debug == Some(super::debug::DebugMode::Cli) {
        let run = super::debug::DebugRun {
            file: &args.file,
            recipe: &recipe.name,
            params,
            url: args.url.as_deref(),
            heal: !args.no_heal,
            yes: args.flags.yes,
        };
        return super::debug::run_cli(prepared, run).await;
    }

    let interrupt = Interrupt::listen().context("listening for Ctrl-C and SIGTERM")?;
    let mut headless = match Headless::start(prepared, args.url.as_deref(), args.flags.json).await {
        Ok(headless) => headless,
        Err(code) => return Ok(code),
    };
    let session = &mut headless.session;
    let mut options = ReplayOptions::headless(args.flags.yes);
    options.origin = args
        .url
        .as_deref()
        .and_then(crate::script::export::origin_of);
    options.heal = !args.no_heal;
    options.rewrite = Some(args.update);
    let ctrl_c = {
        let cancel = options.oversight.cancel.clone();
        interrupt.spawn_then(move || cancel.cancel())
    };
    let choice = RecipeChoice::InFile {
        file: &args.file,
        name: Some(&recipe.name),
    };
    let outcome = session.run_recipe(choice, params, options, &Bare).await;
    ctrl_c.abort();
    let success = succeeded(session, outcome);
    Ok(headless.finish(success).await)
}

/// The `NAME=VALUE` assignments read as `recipe`'s parameters, each as
/// its declared type; what does not fit says why.
fn recipe_params(
    recipe: &crate::script::RecipeDef,
    assignments: &[String],
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let mut params = serde_json::Map::new();
    for assignment in assignments {
        let (name, value) = parse_assignment(assignment).map_err(|why| why.to_string())?;
        params.insert(name, value);
    }
    resolve_params(&recipe.name, &recipe.params, &params).map_err(|why| why.to_string())?;
    Ok(params)
}

/// What `recipe run --session` asks of a session.
pub struct SessionRecipe<'a> {
    /// The script file that declares the recipe.
    pub file: &'a std::path::Path,
    /// Which recipe of the file.
    pub recipe: Option<&'a str>,
    /// `NAME=VALUE` parameters.
    pub params: &'a [String],
    /// Do not heal failed steps with the model.
    pub no_heal: bool,
    /// Who approves what would need approval: the session's rules, or
    /// the person attached to it.
    pub approvers: crate::session::ApproverFactory,
}

impl std::fmt::Debug for SessionRecipe<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionRecipe")
            .field("file", &self.file)
            .field("recipe", &self.recipe)
            .field("params", &self.params)
            .field("no_heal", &self.no_heal)
            .finish_non_exhaustive()
    }
}

/// Runs a recipe the session loaded, as `recipe run` runs one, from the
/// page the session is on; its events go to the session's sink. Gives
/// whether it succeeded, or why it could not start (a usage error).
pub async fn recipe_in_session(
    session: &mut crate::session::Session,
    asked: &SessionRecipe<'_>,
) -> Result<bool, String> {
    let recipes = session.scripts.recipes();
    let own: Vec<_> = recipes
        .into_iter()
        .filter(|r| same_file(&r.file, asked.file))
        .collect();
    if own.is_empty() {
        return Err(format!(
            "{} declares no recipe this session loaded; start the session with --recipes {}",
            asked.file.display(),
            asked.file.display()
        ));
    }
    let recipe = pick_recipe(
        &own,
        asked.file,
        asked.recipe,
        "pick one with --recipe NAME",
    )
    .map_err(|why| why.to_string())?
    .clone();
    let params = recipe_params(&recipe, asked.params)?;
    let mut options = ReplayOptions::headless(false);
    options.oversight.approvers = asked.approvers.clone();
    options.heal = !asked.no_heal;
    options.rewrite = Some(false);
    let choice = RecipeChoice::InFile {
        file: asked.file,
        name: Some(&recipe.name),
    };
    let outcome = session.run_recipe(choice, params, options, &Bare).await;
    Ok(succeeded(session, outcome))
}

/// Whether a recipe run succeeded; one that could not start says why in
/// the run's events (the trace, and what is printed).
fn succeeded(
    session: &crate::session::Session,
    outcome: Result<crate::session::RecipeOutcome, crate::session::SessionError>,
) -> bool {
    match outcome {
        Ok(outcome) => outcome.success,
        Err(error) => {
            session.events.send(crate::events::Event::Error {
                error: error.to_string(),
                fatal: true,
            });
            false
        }
    }
}

/// Whether `file` is among `paths` already, itself or in a directory
/// (loading it twice would declare its actions twice).
fn covered(paths: &[PathBuf], file: &std::path::Path) -> bool {
    let Ok(file) = file.canonicalize() else {
        return false;
    };
    paths
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .any(|p| p == file || (p.is_dir() && file.parent() == Some(p.as_path())))
}

/// Flags of `webagent export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// The session trace (`.webagent/sessions/<time>.jsonl`).
    #[arg(required_unless_present = "session_name")]
    pub trace: Option<PathBuf>,
    /// Export the trace of the named session (`webagent session start`):
    /// what its commands did so far.
    #[arg(long = "session", value_name = "NAME", conflicts_with = "trace")]
    pub session_name: Option<String>,
    /// Where to write the recipe.
    #[arg(long, value_name = "OUT.rhai")]
    pub recipe: PathBuf,
    /// The recipe's name, a snake_case word (what `recipe run --recipe`
    /// and `:recipe` call it).
    #[arg(long, default_value = "replay", value_parser = recipe_name)]
    pub name: String,
    /// A sitemap file or directory whose routes name the pages of the
    /// location checks (`/orders/:id`; repeatable; default: config
    /// `paths.sitemaps`).
    #[arg(long, value_name = "PATH")]
    pub sitemap: Vec<PathBuf>,
}

/// A recipe's name as `--name` takes it: a snake_case word.
fn recipe_name(text: &str) -> Result<String, String> {
    if crate::words::is_snake_case(text) {
        Ok(text.to_string())
    } else {
        Err("a recipe's name is a snake_case word: lowercase letters, digits and _, starting with a letter (weekly_refunds)".into())
    }
}

/// Runs `webagent export`.
pub fn export(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let trace = match (&args.trace, &args.session_name) {
        (Some(trace), _) => trace.clone(),
        (None, Some(name)) => match super::session_client::trace_of(name) {
            Ok(trace) => trace,
            Err(code) => return Ok(code),
        },
        (None, None) => {
            eprintln!("error: give a TRACE or --session NAME");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    let paths = if args.sitemap.is_empty() {
        match super::flags::load(None, &crate::config::Overrides::default()) {
            Ok(loaded) => loaded.config.sitemap_paths(),
            Err(code) => return Ok(code),
        }
    } else {
        args.sitemap.clone()
    };
    let sitemaps = match crate::sitemap::SitemapSet::load_paths(&paths) {
        Ok(sitemaps) => sitemaps,
        Err(error) => {
            eprintln!("error: sitemap: {error}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    let options = ExportOptions {
        sitemaps: Some(&sitemaps),
        no_params: false,
        name: Some(&args.name),
        header: None,
    };
    let source = match export_recipe_with(&trace, options) {
        Ok(source) => source,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(1));
        }
    };
    // What is written must load: a recipe that does not compile would only
    // fail later, far from its cause.
    if let Err(error) = Scripts::default().load_source(&args.recipe.display().to_string(), &source)
    {
        eprintln!("error: the exported recipe does not compile ({error}); please report this");
        return Ok(ExitCode::from(1));
    }
    std::fs::write(&args.recipe, &source)
        .with_context(|| format!("writing {}", args.recipe.display()))?;
    println!(
        "wrote {} (recipe `replay`; run it with: webagent recipe run {} --url ORIGIN)",
        args.recipe.display(),
        args.recipe.display()
    );
    Ok(ExitCode::SUCCESS)
}
