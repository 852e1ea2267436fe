//! Loading script files and running their actions and recipes.
//!
//! [`Scripts`] is a cheap, cloneable handle on the loaded files: the TUI,
//! the agent's environment and the watcher share one. A file that fails to
//! load never replaces the version already loaded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use rhai::{CallFnOptions, Dynamic, Engine, Position, Scope};
use serde_json::{Map, Value};

use super::bounds;
use super::bounds::Limits;
use super::debug::{self, Debuggee};
use super::declare::Collected;
use super::engine::{self, build_engine, LogSink};
use super::error::{parse_error, script_error, Located, ScriptError};
use super::host::ScriptHost;
use super::loaded::{ActionDef, FileSummary, LoadedFile, RecipeDef, Snapshot};
use super::params::resolve_params;
use crate::actions::{ActionError, ActionResult, ActionSpec, Catalog};

/// Cancels a running script: the engine checks it between operations and
/// a host call in flight is abandoned.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// A flag that is not set.
    pub fn new() -> Self {
        CancelFlag::default()
    }

    /// Asks the script to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether stopping was asked for.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// The loaded scripts and the sandboxed engine they run in.
#[derive(Clone)]
pub struct Scripts {
    engine: Arc<Engine>,
    limits: Limits,
    files: Arc<RwLock<BTreeMap<PathBuf, Arc<LoadedFile>>>>,
    /// The debugger the recipes run from this handle stop for.
    debuggee: Option<Debuggee>,
}

impl std::fmt::Debug for Scripts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scripts")
            .field("files", &self.files().len())
            .finish()
    }
}

impl Default for Scripts {
    fn default() -> Self {
        Scripts::new(Limits::default(), None)
    }
}

impl Scripts {
    /// No files yet; `log` also receives every `print`, `debug` and `log`
    /// line (they always go to the tracing log).
    pub fn new(limits: Limits, log: Option<LogSink>) -> Self {
        // Built once and never changed again: the frozen engine.
        let engine = build_engine(&limits, log);
        Scripts {
            engine: Arc::new(engine),
            limits,
            files: Arc::new(RwLock::new(BTreeMap::new())),
            debuggee: None,
        }
    }

    /// The same scripts, whose recipes run under `debuggee`: each stops at
    /// its first line and then as its controller says (custom actions
    /// the agent calls are not debugged).
    pub fn debugged(&self, debuggee: Debuggee) -> Scripts {
        Scripts {
            debuggee: Some(debuggee),
            ..self.clone()
        }
    }

    fn files(&self) -> BTreeMap<PathBuf, Arc<LoadedFile>> {
        match self.files.read() {
            Ok(files) => files.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        Arc::new(Snapshot {
            files: self.files().into_values().collect(),
        })
    }

    /// Compiles `path` and runs its top level, without keeping it; the
    /// summary lists the problems found in what loaded.
    pub fn check_file(&self, path: &Path) -> Result<FileSummary, ScriptError> {
        let source = read_source(path)?;
        let loaded = self.compile(&path.display().to_string(), &source)?;
        let mut summary = loaded.summary();
        summary.problems = super::lint::lint(&self.engine, &loaded);
        Ok(summary)
    }

    /// Loads (or reloads) `path`. On any error the version loaded before
    /// stays.
    pub fn load_file(&self, path: &Path) -> Result<FileSummary, ScriptError> {
        let source = read_source(path)?;
        self.load_source_as(path, &path.display().to_string(), &source)
    }

    /// Loads code that has no file (tests, the command line), under `name`.
    pub fn load_source(&self, name: &str, source: &str) -> Result<FileSummary, ScriptError> {
        self.load_source_as(Path::new(name), name, source)
    }

    fn load_source_as(
        &self,
        key: &Path,
        name: &str,
        source: &str,
    ) -> Result<FileSummary, ScriptError> {
        let loaded = self.compile(name, source)?;
        // Action names must stay unique across files.
        let others = self.files();
        for action in &loaded.actions {
            let clash = others
                .iter()
                .filter(|(path, _)| path.as_path() != key)
                .find(|(_, f)| f.actions.iter().any(|a| a.spec.name == action.spec.name));
            if let Some((_, other)) = clash {
                return Err(ScriptError::Definition(Located::at(
                    name,
                    Position::NONE,
                    format!(
                        "the action `{}` is already declared in {}",
                        action.spec.name, other.file
                    ),
                )));
            }
        }
        let summary = loaded.summary();
        let mut files = match self.files.write() {
            Ok(files) => files,
            Err(poisoned) => poisoned.into_inner(),
        };
        files.insert(key.to_path_buf(), Arc::new(loaded));
        Ok(summary)
    }

    /// Loads every script in `dir` (`.rhai`, not hidden, not a healed
    /// replay's repaired copy awaiting review); one result per file.
    pub fn load_dir(&self, dir: &Path) -> Vec<Result<FileSummary, ScriptError>> {
        match script_files(dir) {
            Ok(paths) => paths.iter().map(|p| self.load_file(p)).collect(),
            Err(error) => vec![Err(error)],
        }
    }

    /// Forgets a file (it was deleted); returns whether it was loaded.
    pub fn remove_file(&self, path: &Path) -> bool {
        let mut files = match self.files.write() {
            Ok(files) => files,
            Err(poisoned) => poisoned.into_inner(),
        };
        files.remove(path).is_some()
    }

    /// Every custom action's spec, in file order.
    pub fn action_specs(&self) -> Vec<ActionSpec> {
        self.snapshot()
            .files
            .iter()
            .flat_map(|f| f.actions.iter().map(|a| a.spec.clone()))
            .collect()
    }

    /// The built-in catalog plus every custom action.
    pub fn catalog(&self) -> Result<Catalog, ActionError> {
        let mut catalog = Catalog::builtin();
        catalog.replace_custom(self.action_specs())?;
        Ok(catalog)
    }

    /// Every `secret_sites(name, [sites])` the files declare, in file
    /// order: each limits where its secret is filled, on top of the
    /// session's own binding.
    pub fn secret_sites(&self) -> Vec<(String, Vec<String>)> {
        self.snapshot()
            .files
            .iter()
            .flat_map(|f| f.secret_sites.iter().cloned())
            .collect()
    }

    /// How many files are loaded.
    pub fn file_count(&self) -> usize {
        self.files().len()
    }

    /// Every recipe, in file order.
    pub fn recipes(&self) -> Vec<RecipeDef> {
        self.snapshot()
            .files
            .iter()
            .flat_map(|f| f.recipes.iter().cloned())
            .collect()
    }

    /// Runs a custom action's handler with validated `params`, answering
    /// its host calls with `host`. The caller has already approved it.
    pub async fn call_action<H: ScriptHost>(
        &self,
        name: &str,
        params: Value,
        host: &mut H,
        cancel: &CancelFlag,
    ) -> ActionResult {
        let snapshot = self.snapshot();
        let Some(def) = snapshot.action(name) else {
            return ActionResult::invalid_params(format!(
                "no custom action named `{name}` is loaded"
            ));
        };
        let deadline = Instant::now() + self.limits.action_time;
        match self
            .drive(host, cancel, Some(deadline), snapshot, move || {
                def.invoke(params)
            })
            .await
        {
            Ok(result) => result,
            Err(error) => ActionResult::unknown(error.to_string()),
        }
    }

    /// Runs a recipe (by name, or the only one loaded when `name` is
    /// `None`) to its end with its parameters' defaults; returns what its
    /// function returned.
    pub async fn run_recipe<H: ScriptHost>(
        &self,
        name: Option<&str>,
        host: &mut H,
        cancel: &CancelFlag,
    ) -> Result<Value, ScriptError> {
        self.run_recipe_with(name, &Map::new(), host, cancel).await
    }

    /// The recipe `name` (or the only one loaded), or why there is none.
    pub fn recipe(&self, name: Option<&str>) -> Result<RecipeDef, ScriptError> {
        let all = self.recipes();
        let unknown = |name: &str| ScriptError::UnknownEntry {
            kind: "recipe",
            name: name.to_string(),
            available: all.iter().map(|r| r.name.clone()).collect(),
        };
        match name {
            Some(name) => all
                .iter()
                .find(|r| r.name == name)
                .cloned()
                .ok_or_else(|| unknown(name)),
            None if all.len() == 1 => Ok(all[0].clone()),
            None => Err(unknown("(none given)")),
        }
    }

    /// Runs a recipe with `params` (checked against what it declares, and
    /// refused with the names and types it takes before anything runs).
    pub async fn run_recipe_with<H: ScriptHost>(
        &self,
        name: Option<&str>,
        params: &Map<String, Value>,
        host: &mut H,
        cancel: &CancelFlag,
    ) -> Result<Value, ScriptError> {
        let snapshot = self.snapshot();
        let all: Vec<(&RecipeDef, &Arc<LoadedFile>)> = snapshot
            .files
            .iter()
            .flat_map(|f| f.recipes.iter().map(move |r| (r, f)))
            .collect();
        let unknown = |name: &str| ScriptError::UnknownEntry {
            kind: "recipe",
            name: name.to_string(),
            available: all.iter().map(|(r, _)| r.name.clone()).collect(),
        };
        let (recipe, file) = match name {
            Some(name) => all
                .iter()
                .find(|(r, _)| r.name == name)
                .ok_or_else(|| unknown(name))?,
            None if all.len() == 1 => &all[0],
            None => return Err(unknown("(none given)")),
        };
        let values = resolve_params(&recipe.name, &recipe.params, params).map_err(|message| {
            ScriptError::Params {
                recipe: recipe.name.clone(),
                message: message.to_string(),
            }
        })?;
        let takes_params = file
            .ast
            .iter_functions()
            .any(|f| f.name == recipe.name && f.params.len() == 1);
        let ast = file.ast.clone();
        let engine = self.engine.clone();
        let function = recipe.name.clone();
        let source = file.file.clone();
        let debuggee = self.debuggee.clone();
        self.drive(host, cancel, None, snapshot.clone(), move || {
            if let Some(debuggee) = &debuggee {
                debug::attach(debuggee, &source);
            }
            let mut scope = Scope::new();
            let options = CallFnOptions::new().eval_ast(false).rewind_scope(true);
            let called = if takes_params {
                let arg = rhai::serde::to_dynamic(Value::Object(values)).unwrap_or(Dynamic::UNIT);
                engine.call_fn_with_options::<Dynamic>(options, &mut scope, &ast, &function, (arg,))
            } else {
                engine.call_fn_with_options::<Dynamic>(options, &mut scope, &ast, &function, ())
            };
            debug::detach();
            match called {
                Ok(value) => match bounds::check_depth(&value, "the value the recipe returned") {
                    Ok(()) => Ok(rhai::serde::from_dynamic::<Value>(&value).unwrap_or(Value::Null)),
                    Err(message) => Err(ScriptError::Limit(bounds::located_here(&source, message))),
                },
                Err(error) => Err(script_error(&error, &source)),
            }
        })
        .await?
    }

    /// Runs `job` on a new script thread and answers its host calls until
    /// it ends, or, past `deadline`, stops answering (the script then
    /// ends with the time limit's error).
    async fn drive<H: ScriptHost, T: Send + 'static>(
        &self,
        host: &mut H,
        cancel: &CancelFlag,
        deadline: Option<Instant>,
        snapshot: Arc<Snapshot>,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ScriptError> {
        let (calls_tx, mut calls) = tokio::sync::mpsc::unbounded_channel();
        let (done_tx, mut done) = tokio::sync::oneshot::channel();
        let flag = cancel.0.clone();
        let limits = self.limits.clone();
        std::thread::Builder::new()
            .name("webagent-script".into())
            .stack_size(bounds::SCRIPT_STACK)
            .spawn(move || {
                bounds::enter(&limits, deadline);
                engine::enter(flag, Some(calls_tx), snapshot, None);
                let out = job();
                // Dropping the bridge before answering lets the host side
                // see every call the script made first.
                engine::enter(Arc::default(), None, Arc::default(), None);
                let _ = done_tx.send(out);
            })
            .map_err(|e| ScriptError::Thread(e.to_string()))?;
        loop {
            tokio::select! {
                biased;
                Some((call, reply)) = calls.recv() => {
                    let answer = tokio::select! {
                        answer = Box::pin(host.handle(call)) => Some(answer),
                        () = cancelled(cancel) => None,
                        () = past(deadline) => None,
                    };
                    // A cancelled call, or one past the time limit, is
                    // dropped unanswered: the script thread sees the flag
                    // or the clock and ends.
                    if let Some(answer) = answer {
                        let _ = reply.send(answer.map_err(|e| e.to_string()));
                    }
                }
                out = &mut done => {
                    return out.map_err(|_| {
                        ScriptError::Thread("the script thread ended without an answer".into())
                    });
                }
            }
        }
    }

    /// Compiles `source` and runs its top level; an error shows the line
    /// it points at.
    fn compile(&self, name: &str, source: &str) -> Result<LoadedFile, ScriptError> {
        self.compile_unplaced(name, source)
            .map_err(|error| error.with_source(name, source))
    }

    fn compile_unplaced(&self, name: &str, source: &str) -> Result<LoadedFile, ScriptError> {
        let mut ast = self
            .engine
            .compile(source)
            .map_err(|e| parse_error(&e, name))?;
        ast.set_source(name);
        let ast = Arc::new(ast);
        let engine = self.engine.clone();
        let file = name.to_string();
        let top_ast = ast.clone();
        // The top level runs on its own thread too, within the limits.
        let limits = self.limits.clone();
        let collected = std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("webagent-script-load".into())
                .stack_size(bounds::SCRIPT_STACK)
                .spawn_scoped(scope, move || {
                    bounds::enter(&limits, None);
                    engine::enter(
                        Arc::default(),
                        None,
                        Arc::default(),
                        Some(Collected::new(file.clone())),
                    );
                    let ran = engine.run_ast(&top_ast);
                    let collected = engine::take_collected();
                    ran.map_err(|e| script_error(&e, &file)).map(|()| collected)
                })
                .map_err(|e| ScriptError::Thread(e.to_string()))?
                .join()
                .map_err(|_| ScriptError::Thread("loading the script panicked".into()))
        })??;
        let Some(collected) = collected else {
            return Err(ScriptError::Thread("the declarations were lost".into()));
        };
        let functions: Vec<(String, usize)> = ast
            .iter_functions()
            .map(|f| (f.name.to_string(), f.params.len()))
            .collect();
        let place = |pos: Position, message: String| {
            ScriptError::Definition(Located::at(name, pos, message))
        };
        let mut actions = Vec::new();
        for (spec, handler, pos) in collected.actions {
            let arity: Vec<usize> = functions
                .iter()
                .filter(|(n, _)| *n == handler)
                .map(|(_, a)| *a)
                .collect();
            let takes_params = if arity.contains(&1) {
                true
            } else if arity.contains(&0) {
                false
            } else {
                return Err(place(
                    pos,
                    format!(
                        "the action `{}` needs a function `fn {handler}(params)` in this file",
                        spec.name
                    ),
                ));
            };
            actions.push(ActionDef {
                spec,
                file: name.to_string(),
                handler,
                takes_params,
                ast: ast.clone(),
                engine: self.engine.clone(),
            });
        }
        let mut recipes = Vec::new();
        for (recipe, pos) in collected.recipes {
            let arities: Vec<usize> = functions
                .iter()
                .filter(|(n, _)| *n == recipe.name)
                .map(|(_, a)| *a)
                .collect();
            // A recipe with parameters takes them as one map; one without
            // may still take the (empty) map.
            let fits = arities.contains(&1) || (recipe.params.is_empty() && arities.contains(&0));
            if !fits {
                let wanted = if recipe.params.is_empty() {
                    format!("`fn {}()`", recipe.name)
                } else {
                    format!("`fn {}(params)`", recipe.name)
                };
                return Err(place(
                    pos,
                    format!(
                        "the recipe `{}` needs a function {wanted} in this file",
                        recipe.name
                    ),
                ));
            }
            recipes.push(recipe);
        }
        Ok(LoadedFile {
            actions,
            recipes,
            secret_sites: collected.secret_sites,
            ast,
            file: name.to_string(),
            source: source.into(),
        })
    }
}

/// Whether a file found in a scripts directory loads: `.rhai` files, but
/// not hidden ones, nor the repaired copy a healed replay writes beside
/// its recipe (`NAME.healed.rhai`). That copy waits for the person's
/// review, and loaded beside the original it would declare the same
/// actions and recipes again. Named on its own (`--recipes
/// x.healed.rhai`, `recipe run x.healed.rhai`) it loads like any file.
/// The script files of `dir` a session loads, in name order (hidden
/// files and healed copies left out).
pub fn script_files(dir: &Path) -> Result<Vec<PathBuf>, ScriptError> {
    let entries = std::fs::read_dir(dir).map_err(|error| ScriptError::Read {
        path: dir.to_path_buf(),
        message: error.to_string(),
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_script_name)
        })
        .collect();
    paths.sort();
    Ok(paths)
}

pub(crate) fn is_script_name(name: &str) -> bool {
    !name.starts_with('.') && name.ends_with(".rhai") && !name.ends_with(".healed.rhai")
}

/// Waits until `deadline`; forever without one.
async fn past(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
        None => std::future::pending().await,
    }
}

async fn cancelled(cancel: &CancelFlag) {
    while !cancel.is_cancelled() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn read_source(path: &Path) -> Result<String, ScriptError> {
    std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ScriptError::Missing {
            path: path.to_path_buf(),
        },
        _ => ScriptError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_loads_without_the_repaired_copy_a_heal_left_for_review() {
        let dir = std::env::temp_dir().join(format!("webagent-load-dir-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let source = "action(\"greet\", #{ description: \"Says hi\" }); fn greet() { 1 }\n\
                      recipe(\"hello\", \"Greets\"); fn hello() { greet() }";
        std::fs::write(dir.join("greet.rhai"), source).unwrap();
        // Beside the original it would declare `greet` a second time.
        std::fs::write(dir.join("greet.healed.rhai"), source).unwrap();
        std::fs::write(dir.join(".greet.rhai.swp"), "not a script").unwrap();
        let scripts = Scripts::default();
        let loaded = scripts.load_dir(&dir);
        assert_eq!(loaded.len(), 1, "{loaded:?}");
        assert!(loaded[0].is_ok(), "{loaded:?}");
        assert_eq!(scripts.recipes().len(), 1);
        // Named on its own, the copy loads.
        let copy = Scripts::default();
        copy.load_file(&dir.join("greet.healed.rhai")).unwrap();
        assert_eq!(copy.recipes()[0].name, "hello");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_broken_reload_keeps_the_last_good_file() {
        let scripts = Scripts::default();
        let good = "action(\"greet\", #{ description: \"Says hi\" }); fn greet() { 1 }";
        scripts.load_source("a.rhai", good).unwrap();
        let broken = scripts.load_source(
            "a.rhai",
            "action(\"greet\", #{ description: \"x\" }); fn greet( {",
        );
        let error = broken.unwrap_err().to_string();
        assert!(error.starts_with("a.rhai:1:"), "{error}");
        assert_eq!(
            scripts.catalog().unwrap().get("greet").unwrap().description,
            "Says hi"
        );
    }

    #[test]
    fn declarations_without_a_handler_are_refused_where_they_are() {
        let scripts = Scripts::default();
        let error = scripts
            .load_source("b.rhai", "\n  recipe(\"smoke\", \"d\");")
            .unwrap_err();
        let located = error.located().unwrap();
        assert_eq!((located.line, located.column), (2, 3));
        assert!(located.message.contains("fn smoke()"), "{error}");
    }
}
