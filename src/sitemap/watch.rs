//! Reloading sitemap files while the program runs.
//!
//! Each file's parent directory is watched, not the file: editors save by
//! writing in place, by truncating then writing, or by writing a new file
//! and renaming it over the old one (which replaces the inode a file watch
//! would follow), and some delete and recreate. Directory events see all of
//! these and the watch survives them. Events are debounced so one save is
//! one reload, and a file that fails to parse or validate never replaces the
//! last good version of it.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use notify_debouncer_full::notify::{EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{new_debouncer, DebounceEventResult, Debouncer, RecommendedCache};

use super::model::Sitemap;
use super::set::SitemapSet;
use super::SitemapError;

/// Quiet time after the last file event before a file is reloaded; with
/// the debouncer's tick this keeps a save visible well within 300 ms while
/// a truncate-then-write still lands as one reload.
const DEBOUNCE: Duration = Duration::from_millis(100);
const TICK: Duration = Duration::from_millis(25);

/// What the watcher reports; the TUI and agent map these onto their own
/// event type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SitemapEvent {
    /// A file was loaded for the first time (at start, or a new file in a
    /// watched directory).
    Loaded {
        /// The file, as the caller named it (or under the named directory).
        file: PathBuf,
        /// How many pages it has, the root included.
        pages: usize,
    },
    /// A good new version of a loaded file is now in use.
    Reloaded {
        /// The file.
        file: PathBuf,
        /// How many pages it has now.
        pages: usize,
    },
    /// A loaded file was deleted; its sitemap is no longer in use.
    Removed {
        /// The file.
        file: PathBuf,
    },
    /// A file failed to read, parse or validate; the last good version (if
    /// any) stays in use.
    Error {
        /// The file.
        file: PathBuf,
        /// 1-based line of the problem, 0 when it has no position (a read
        /// or watch failure).
        line: usize,
        /// 1-based column, 0 when there is no position.
        column: usize,
        /// What is wrong.
        message: String,
    },
}

impl SitemapEvent {
    fn from_error(file: &Path, err: &SitemapError) -> SitemapEvent {
        let (line, column) = err.position().unwrap_or((0, 0));
        SitemapEvent::Error {
            file: file.to_path_buf(),
            line,
            column,
            message: err.message(),
        }
    }
}

type Callback = Box<dyn FnMut(SitemapEvent) + Send>;

/// Watches sitemap files and directories and keeps the good set current.
///
/// Dropping it stops watching.
pub struct SitemapWatcher {
    sitemaps: Arc<RwLock<SitemapSet>>,
    _debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
}

impl std::fmt::Debug for SitemapWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SitemapWatcher").finish_non_exhaustive()
    }
}

/// Which files the watcher cares about, by canonical path, and how to name
/// them in events (as the caller named them).
struct Targets {
    files: HashMap<PathBuf, PathBuf>,
    /// Canonical directory → the directory as the caller named it.
    dirs: HashMap<PathBuf, PathBuf>,
}

impl Targets {
    /// The caller-facing name of a canonical path, if it is a sitemap we
    /// watch: a named file, or a visible `.yaml`/`.yml` file directly in a
    /// named directory.
    fn display_name(&self, path: &Path) -> Option<PathBuf> {
        if let Some(name) = self.files.get(path) {
            return Some(name.clone());
        }
        let dir = self.dirs.get(path.parent()?)?;
        let name = path.file_name()?;
        is_sitemap_file_name(name.to_str()?).then(|| dir.join(name))
    }
}

pub(super) fn is_sitemap_file_name(name: &str) -> bool {
    !name.starts_with('.') && (name.ends_with(".yaml") || name.ends_with(".yml"))
}

impl SitemapWatcher {
    /// Loads every sitemap in `paths` (files, or directories whose `.yaml`
    /// and `.yml` files are loaded), reports each through `on_event`
    /// (`Loaded` or `Error`), then keeps watching and reports every change.
    ///
    /// `on_event` runs on the watcher's thread; keep it short (send on a
    /// channel). Fails when a path's directory does not exist or cannot be
    /// watched; a file that is missing or invalid at start is only reported.
    pub fn start<F>(paths: &[PathBuf], on_event: F) -> Result<SitemapWatcher, SitemapError>
    where
        F: FnMut(SitemapEvent) + Send + 'static,
    {
        let mut targets = Targets {
            files: HashMap::new(),
            dirs: HashMap::new(),
        };
        let mut watch_dirs: BTreeSet<PathBuf> = BTreeSet::new();
        for path in paths {
            let watch_error = |message: String| SitemapError::Watch {
                path: path.clone(),
                message,
            };
            if path.is_dir() {
                let canonical = path
                    .canonicalize()
                    .map_err(|e| watch_error(e.to_string()))?;
                watch_dirs.insert(canonical.clone());
                targets.dirs.insert(canonical, path.clone());
            } else {
                let parent = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
                let name = path
                    .file_name()
                    .ok_or_else(|| watch_error("is not a file or directory name".into()))?;
                let canonical_parent = parent.canonicalize().map_err(|e| {
                    watch_error(format!(
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

        let sitemaps = Arc::new(RwLock::new(SitemapSet::new()));
        let callback: Arc<Mutex<Callback>> = Arc::new(Mutex::new(Box::new(on_event)));
        let targets = Arc::new(targets);

        // Watch before the first load so a save made during it is not lost.
        let handler = {
            let sitemaps = Arc::clone(&sitemaps);
            let callback = Arc::clone(&callback);
            let targets = Arc::clone(&targets);
            move |result: DebounceEventResult| {
                handle_batch(result, &targets, &sitemaps, &callback);
            }
        };
        let mut debouncer =
            new_debouncer(DEBOUNCE, Some(TICK), handler).map_err(|e| SitemapError::Watch {
                path: paths.first().cloned().unwrap_or_default(),
                message: e.to_string(),
            })?;
        for dir in &watch_dirs {
            debouncer
                .watch(dir, RecursiveMode::NonRecursive)
                .map_err(|e| SitemapError::Watch {
                    path: dir.clone(),
                    message: e.to_string(),
                })?;
        }

        // A file named explicitly and also found in a watched directory is
        // loaded once, under the name the caller gave it (as events use).
        let mut initial: Vec<(PathBuf, PathBuf)> = targets
            .files
            .iter()
            .map(|(canonical, shown)| (canonical.clone(), shown.clone()))
            .collect();
        for (canonical_dir, shown_dir) in &targets.dirs {
            let entries = std::fs::read_dir(canonical_dir).map_err(|e| SitemapError::Watch {
                path: shown_dir.clone(),
                message: e.to_string(),
            })?;
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(name_str) = name.to_str() else {
                    continue;
                };
                let canonical = canonical_dir.join(&name);
                if is_sitemap_file_name(name_str)
                    && entry.path().is_file()
                    && !targets.files.contains_key(&canonical)
                {
                    initial.push((canonical, shown_dir.join(&name)));
                }
            }
        }
        initial.sort_by(|a, b| a.1.cmp(&b.1));
        for (canonical, shown) in initial {
            reload(&canonical, &shown, &sitemaps, &callback, true);
        }

        Ok(SitemapWatcher {
            sitemaps,
            _debouncer: debouncer,
        })
    }

    /// The shared set of good sitemaps; readers take the lock briefly.
    pub fn sitemaps(&self) -> Arc<RwLock<SitemapSet>> {
        Arc::clone(&self.sitemaps)
    }

    /// A copy of the current good set (cheap: the sitemaps are shared).
    pub fn snapshot(&self) -> SitemapSet {
        self.sitemaps
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

fn handle_batch(
    result: DebounceEventResult,
    targets: &Targets,
    sitemaps: &RwLock<SitemapSet>,
    callback: &Mutex<Callback>,
) {
    let events = match result {
        Ok(events) => events,
        Err(errors) => {
            for err in errors {
                tracing::warn!(error = %err, "sitemap watch error");
                let file = err.paths.first().cloned().unwrap_or_default();
                emit(
                    callback,
                    SitemapEvent::Error {
                        file,
                        line: 0,
                        column: 0,
                        message: format!("file watch failed: {err}"),
                    },
                );
            }
            return;
        }
    };
    let mut touched: BTreeSet<(PathBuf, PathBuf)> = BTreeSet::new();
    for event in &events {
        // Opening or reading a file (our own reload included) is not a change.
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
        reload(&canonical, &shown, sitemaps, callback, false);
    }
}

/// Loads one file and updates the set; `at_start` reports a missing file
/// as an error (the caller named it) instead of ignoring it.
fn reload(
    canonical: &Path,
    shown: &Path,
    sitemaps: &RwLock<SitemapSet>,
    callback: &Mutex<Callback>,
    at_start: bool,
) {
    if !canonical.exists() {
        let removed = sitemaps
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(shown);
        if removed {
            tracing::info!(file = %shown.display(), "sitemap removed");
            emit(
                callback,
                SitemapEvent::Removed {
                    file: shown.to_path_buf(),
                },
            );
        } else if at_start {
            let err = SitemapError::Read {
                file: shown.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            };
            emit(callback, SitemapEvent::from_error(shown, &err));
        }
        return;
    }
    let loaded = std::fs::read_to_string(canonical)
        .map_err(|source| SitemapError::Read {
            file: shown.to_path_buf(),
            source,
        })
        .and_then(|text| Sitemap::parse(&text, shown));
    match loaded {
        Ok(sitemap) => {
            let pages = sitemap.page_count();
            let replaced = {
                let mut set = sitemaps.write().unwrap_or_else(PoisonError::into_inner);
                let had = set.get(shown).is_some();
                set.insert(sitemap);
                had
            };
            tracing::info!(file = %shown.display(), pages, replaced, "sitemap loaded");
            let file = shown.to_path_buf();
            emit(
                callback,
                if replaced {
                    SitemapEvent::Reloaded { file, pages }
                } else {
                    SitemapEvent::Loaded { file, pages }
                },
            );
        }
        Err(err) => {
            tracing::warn!(error = %err, "sitemap rejected; keeping the last good version");
            emit(callback, SitemapEvent::from_error(shown, &err));
        }
    }
}

fn emit(callback: &Mutex<Callback>, event: SitemapEvent) {
    let mut callback = callback.lock().unwrap_or_else(PoisonError::into_inner);
    (callback)(event);
}
