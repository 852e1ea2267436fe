//! Watching named files and directories for saves, shared by every part
//! that reloads files while the program runs (sitemaps, scripts).
//!
//! Each file's parent directory is watched, not the file: editors save by
//! writing in place, by truncating then writing, or by writing a new file
//! and renaming it over the old one (which replaces the inode a file watch
//! would follow), and some delete and recreate. Directory events see all of
//! these and the watch survives them. Events are debounced so one save is
//! one change. What a change means (reload, keep the last good version) is
//! the caller's business.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use notify_debouncer_full::notify::{EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{new_debouncer, DebounceEventResult, Debouncer, RecommendedCache};

/// Quiet time after the last file event before a change is reported; with
/// the debouncer's tick this keeps a save visible well within 300 ms while
/// a truncate-then-write still lands as one change.
const DEBOUNCE: Duration = Duration::from_millis(100);
const TICK: Duration = Duration::from_millis(25);

/// One watched file: where it really is, and the name the caller gave it
/// (or its name under the directory the caller named), which events use.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct WatchedFile {
    /// The name to show and load under.
    pub shown: PathBuf,
    /// The canonical path the operating system reports.
    pub canonical: PathBuf,
}

/// A path that could not be watched, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchError {
    /// The file or directory.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

/// What one debounced batch brought: the watched files touched (each once,
/// ordered by shown name; a file that is gone now was deleted), or the
/// watch failures the operating system reported.
pub type WatchBatch = Result<Vec<WatchedFile>, Vec<WatchError>>;

/// The files and directories asked for, by canonical path.
struct Targets {
    /// Canonical file → the file as the caller named it.
    files: HashMap<PathBuf, PathBuf>,
    /// Canonical directory → the directory as the caller named it.
    dirs: HashMap<PathBuf, PathBuf>,
    /// Which file names inside a watched directory count.
    accepts: fn(&str) -> bool,
}

impl Targets {
    /// The caller-facing name of a canonical path, if it is one we watch: a
    /// named file, or an accepted file directly in a named directory.
    fn display_name(&self, path: &Path) -> Option<PathBuf> {
        if let Some(name) = self.files.get(path) {
            return Some(name.clone());
        }
        let dir = self.dirs.get(path.parent()?)?;
        let name = path.file_name()?;
        (self.accepts)(name.to_str()?).then(|| dir.join(name))
    }
}

/// Watches files while it lives; dropping it stops watching.
pub struct FileWatcher {
    _debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
}

impl std::fmt::Debug for FileWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileWatcher").finish_non_exhaustive()
    }
}

impl FileWatcher {
    /// Starts watching `paths` (files, or directories whose files `accepts`
    /// takes by name) and returns the watcher with the watched files that
    /// exist now, for the caller's first load. Watching begins before that
    /// list is made, so a save made during the first load is not lost.
    ///
    /// `on_change` runs on the watcher's thread; keep it short. A file named
    /// explicitly and also found in a watched directory is listed once,
    /// under the name the caller gave it. A named file that does not exist
    /// yet is listed too (its directory must exist), so the caller can say
    /// it is missing.
    pub fn start<F>(
        paths: &[PathBuf],
        accepts: fn(&str) -> bool,
        mut on_change: F,
    ) -> Result<(FileWatcher, Vec<WatchedFile>), WatchError>
    where
        F: FnMut(WatchBatch) + Send + 'static,
    {
        let mut targets = Targets {
            files: HashMap::new(),
            dirs: HashMap::new(),
            accepts,
        };
        let mut watch_dirs: BTreeSet<PathBuf> = BTreeSet::new();
        for path in paths {
            let unusable = |message: String| WatchError {
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
                let canonical_parent = parent.canonicalize().map_err(|e| {
                    unusable(format!(
                        "its directory {} is not usable: {e}",
                        parent.display()
                    ))
                })?;
                targets
                    .files
                    .insert(canonical_parent.join(name), path.clone());
                watch_dirs.insert(canonical_parent);
            }
        }

        let targets = std::sync::Arc::new(targets);
        let handler = {
            let targets = std::sync::Arc::clone(&targets);
            move |result: DebounceEventResult| on_change(touched(result, &targets))
        };
        let mut debouncer =
            new_debouncer(DEBOUNCE, Some(TICK), handler).map_err(|e| WatchError {
                path: paths.first().cloned().unwrap_or_default(),
                message: format!("cannot watch for changes: {e}"),
            })?;
        for dir in &watch_dirs {
            debouncer
                .watch(dir, RecursiveMode::NonRecursive)
                .map_err(|e| WatchError {
                    path: dir.clone(),
                    message: format!("cannot watch for changes: {e}"),
                })?;
        }

        let mut initial: Vec<WatchedFile> = targets
            .files
            .iter()
            .map(|(canonical, shown)| WatchedFile {
                shown: shown.clone(),
                canonical: canonical.clone(),
            })
            .collect();
        for (canonical_dir, shown_dir) in &targets.dirs {
            let entries = std::fs::read_dir(canonical_dir).map_err(|e| WatchError {
                path: shown_dir.clone(),
                message: e.to_string(),
            })?;
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(text) = name.to_str() else { continue };
                let canonical = canonical_dir.join(&name);
                if accepts(text)
                    && entry.path().is_file()
                    && !targets.files.contains_key(&canonical)
                {
                    initial.push(WatchedFile {
                        shown: shown_dir.join(&name),
                        canonical,
                    });
                }
            }
        }
        initial.sort();
        Ok((
            FileWatcher {
                _debouncer: debouncer,
            },
            initial,
        ))
    }
}

/// The watched files one debounced batch touched.
fn touched(result: DebounceEventResult, targets: &Targets) -> WatchBatch {
    let events = result.map_err(|errors| {
        errors
            .into_iter()
            .map(|err| WatchError {
                path: err.paths.first().cloned().unwrap_or_default(),
                message: format!("file watch failed: {err}"),
            })
            .collect::<Vec<_>>()
    })?;
    let mut touched: BTreeSet<WatchedFile> = BTreeSet::new();
    for event in &events {
        // Opening or reading a file (the caller's own reload included) is
        // not a change.
        if matches!(event.kind, EventKind::Access(_)) {
            continue;
        }
        for path in &event.paths {
            if let Some(shown) = targets.display_name(path) {
                touched.insert(WatchedFile {
                    shown,
                    canonical: path.clone(),
                });
            }
        }
    }
    Ok(touched.into_iter().collect())
}
