//! Hot reload: watches script files (or directories of them), recompiles
//! a file when it changes and swaps it into the shared [`Scripts`]. The
//! next call uses the new version; a file that fails to compile keeps the
//! last good one and the error is reported with file, line and column.
//!
//! Like the sitemap watcher, it watches each file's parent directory, so
//! editors that save by writing a new file and renaming it over the old one
//! are seen, and it debounces bursts of writes into one reload.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use notify_debouncer_full::notify::{EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{new_debouncer, DebounceEventResult, Debouncer, RecommendedCache};

use super::library::{FileSummary, Scripts};
use super::ScriptError;
use crate::events::Event;

/// How long writes must pause before a file is reloaded.
const DEBOUNCE: Duration = Duration::from_millis(100);
const TICK: Duration = Duration::from_millis(25);

/// What the watcher reports.
#[derive(Debug, Clone)]
pub enum ScriptEvent {
    /// A file was loaded (at start or after a change).
    Loaded {
        /// What it declares.
        summary: FileSummary,
        /// Whether it replaced an earlier version.
        reloaded: bool,
    },
    /// A file was deleted; its actions and recipes are gone.
    Removed {
        /// The file.
        file: PathBuf,
    },
    /// A file failed to load; the last good version (if any) stays.
    Error {
        /// The file.
        file: PathBuf,
        /// Why, with line and column when known.
        error: ScriptError,
    },
}

impl ScriptEvent {
    /// The events a run or the TUI emits for this: a `script_reloaded`,
    /// and for a failure also a non-fatal `error`.
    pub fn to_events(&self) -> Vec<Event> {
        match self {
            ScriptEvent::Loaded { summary, .. } => vec![Event::ScriptReloaded {
                file: summary.file.clone(),
                error: None,
            }],
            ScriptEvent::Removed { file } => vec![Event::ScriptReloaded {
                file: file.display().to_string(),
                error: Some("the file was removed; its actions and recipes are gone".into()),
            }],
            ScriptEvent::Error { file, error } => vec![
                Event::ScriptReloaded {
                    file: file.display().to_string(),
                    error: Some(error.to_string()),
                },
                Event::Error {
                    error: format!("{error} (the last good version stays loaded)"),
                    fatal: false,
                },
            ],
        }
    }
}

type Callback = Box<dyn FnMut(ScriptEvent) + Send>;

/// Keeps [`Scripts`] in step with files on disk while it lives.
pub struct ScriptWatcher {
    _debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
}

impl std::fmt::Debug for ScriptWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptWatcher").finish_non_exhaustive()
    }
}

/// The files and directories asked for, by canonical path, with the name
/// to show (and load under).
struct Targets {
    files: HashMap<PathBuf, PathBuf>,
    dirs: HashMap<PathBuf, PathBuf>,
}

impl Targets {
    fn display_name(&self, path: &Path) -> Option<PathBuf> {
        if let Some(name) = self.files.get(path) {
            return Some(name.clone());
        }
        let dir = self.dirs.get(path.parent()?)?;
        let name = path.file_name()?;
        is_script_name(name.to_str()?).then(|| dir.join(name))
    }
}

fn is_script_name(name: &str) -> bool {
    !name.starts_with('.') && name.ends_with(".rhai")
}

impl ScriptWatcher {
    /// Loads every script in `paths` (files or directories) into
    /// `scripts`, reporting each through `on_event`, then keeps them
    /// reloaded until the watcher is dropped.
    pub fn start<F>(
        scripts: Scripts,
        paths: &[PathBuf],
        on_event: F,
    ) -> Result<ScriptWatcher, ScriptError>
    where
        F: FnMut(ScriptEvent) + Send + 'static,
    {
        let mut targets = Targets {
            files: HashMap::new(),
            dirs: HashMap::new(),
        };
        let mut watch_dirs = BTreeSet::new();
        for path in paths {
            let unusable = |message: String| ScriptError::Read {
                path: path.clone(),
                message,
            };
            if path.is_dir() {
                let canonical = path.canonicalize().map_err(|e| unusable(e.to_string()))?;
                watch_dirs.insert(canonical.clone());
                targets.dirs.insert(canonical, path.clone());
            } else {
                let parent = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
                let name = path
                    .file_name()
                    .ok_or_else(|| unusable("is not a file or directory name".into()))?;
                let canonical_parent = parent
                    .canonicalize()
                    .map_err(|e| unusable(format!("its directory is not usable: {e}")))?;
                targets
                    .files
                    .insert(canonical_parent.join(name), path.clone());
                watch_dirs.insert(canonical_parent);
            }
        }
        let callback: Arc<Mutex<Callback>> = Arc::new(Mutex::new(Box::new(on_event)));
        let targets = Arc::new(targets);
        let handler = {
            let scripts = scripts.clone();
            let callback = Arc::clone(&callback);
            let targets = Arc::clone(&targets);
            move |result: DebounceEventResult| handle_batch(result, &targets, &scripts, &callback)
        };
        let mut debouncer =
            new_debouncer(DEBOUNCE, Some(TICK), handler).map_err(|e| ScriptError::Read {
                path: paths.first().cloned().unwrap_or_default(),
                message: format!("cannot watch for changes: {e}"),
            })?;
        for dir in &watch_dirs {
            debouncer
                .watch(dir, RecursiveMode::NonRecursive)
                .map_err(|e| ScriptError::Read {
                    path: dir.clone(),
                    message: format!("cannot watch for changes: {e}"),
                })?;
        }
        let mut initial: Vec<(PathBuf, PathBuf)> = targets
            .files
            .iter()
            .map(|(c, s)| (c.clone(), s.clone()))
            .collect();
        for (canonical_dir, shown_dir) in &targets.dirs {
            let entries = std::fs::read_dir(canonical_dir).map_err(|e| ScriptError::Read {
                path: shown_dir.clone(),
                message: e.to_string(),
            })?;
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(text) = name.to_str() else { continue };
                if is_script_name(text) && entry.path().is_file() {
                    initial.push((canonical_dir.join(&name), shown_dir.join(&name)));
                }
            }
        }
        initial.sort_by(|a, b| a.1.cmp(&b.1));
        for (canonical, shown) in initial {
            reload(&canonical, &shown, &scripts, &callback, false);
        }
        Ok(ScriptWatcher {
            _debouncer: debouncer,
        })
    }
}

fn handle_batch(
    result: DebounceEventResult,
    targets: &Targets,
    scripts: &Scripts,
    callback: &Mutex<Callback>,
) {
    let events = match result {
        Ok(events) => events,
        Err(errors) => {
            for error in errors {
                tracing::warn!(%error, "script watch error");
            }
            return;
        }
    };
    let mut touched = BTreeSet::new();
    for event in &events {
        // Reading a file (our own reload included) is not a change.
        if matches!(event.kind, EventKind::Access(_)) {
            continue;
        }
        for path in &event.paths {
            if let Some(shown) = targets.display_name(path) {
                touched.insert((path.clone(), shown));
            }
        }
    }
    for (canonical, shown) in touched {
        reload(&canonical, &shown, scripts, callback, true);
    }
}

fn reload(
    canonical: &Path,
    shown: &Path,
    scripts: &Scripts,
    callback: &Mutex<Callback>,
    reloaded: bool,
) {
    if !canonical.exists() {
        if scripts.remove_file(shown) {
            tracing::info!(file = %shown.display(), "script removed");
            emit(
                callback,
                ScriptEvent::Removed {
                    file: shown.to_path_buf(),
                },
            );
        }
        return;
    }
    let event = match scripts.load_file(shown) {
        Ok(summary) => {
            tracing::info!(file = %shown.display(), actions = summary.actions.len(), recipes = summary.recipes.len(), "script loaded");
            ScriptEvent::Loaded { summary, reloaded }
        }
        Err(error) => {
            tracing::warn!(file = %shown.display(), %error, "script failed to load; the last good version stays");
            ScriptEvent::Error {
                file: shown.to_path_buf(),
                error,
            }
        }
    };
    emit(callback, event);
}

fn emit(callback: &Mutex<Callback>, event: ScriptEvent) {
    let mut callback = callback.lock().unwrap_or_else(PoisonError::into_inner);
    callback(event);
}
