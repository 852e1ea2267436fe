//! Hot reload: watches script files (or directories of them), recompiles
//! a file when it changes and swaps it into the shared [`Scripts`]. The
//! next call uses the new version; a file that fails to compile keeps the
//! last good one and the error is reported with file, line and column.
//!
//! Like the sitemap watcher, it stands on [`crate::watch::FileWatcher`]:
//! parent-directory watches, so editors that save by renaming a new file
//! over the old one are seen, with bursts of writes debounced into one
//! reload.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::watch::{FileWatcher, WatchBatch};

use super::error::ScriptError;
use super::library::{is_script_name, Scripts};
use super::loaded::FileSummary;
use crate::events::Event;

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
                removed: false,
            }],
            ScriptEvent::Removed { file } => vec![Event::ScriptReloaded {
                file: file.display().to_string(),
                error: None,
                removed: true,
            }],
            ScriptEvent::Error { file, error } => vec![
                Event::ScriptReloaded {
                    file: file.display().to_string(),
                    error: Some(error.to_string()),
                    removed: false,
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
    _watcher: FileWatcher,
}

impl std::fmt::Debug for ScriptWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptWatcher").finish_non_exhaustive()
    }
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
        let callback: Arc<Mutex<Callback>> = Arc::new(Mutex::new(Box::new(on_event)));
        let on_change = {
            let scripts = scripts.clone();
            let callback = Arc::clone(&callback);
            move |batch: WatchBatch| match batch {
                Ok(files) => {
                    for file in files {
                        reload(&file.canonical, &file.shown, &scripts, &callback, true);
                    }
                }
                Err(errors) => {
                    for error in errors {
                        tracing::warn!(path = %error.path.display(), message = %error.message, "script watch error");
                    }
                }
            }
        };
        let (watcher, initial) =
            FileWatcher::start(paths, is_script_name, on_change).map_err(|e| {
                ScriptError::Read {
                    path: e.path,
                    message: e.message,
                }
            })?;
        for file in initial {
            reload(&file.canonical, &file.shown, &scripts, &callback, false);
        }
        Ok(ScriptWatcher { _watcher: watcher })
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
