//! Reloading sitemap files while the program runs, on top of
//! [`crate::watch::FileWatcher`] (parent-directory watches, debounced). A
//! file that fails to parse or validate never replaces the last good
//! version of it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use crate::watch::{FileWatcher, WatchBatch};

use super::error::SitemapError;
use super::model::Sitemap;
use super::set::{is_sitemap_file_name, SitemapSet};

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
    _watcher: FileWatcher,
}

impl std::fmt::Debug for SitemapWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SitemapWatcher").finish_non_exhaustive()
    }
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
        let sitemaps = Arc::new(RwLock::new(SitemapSet::new()));
        let callback: Arc<Mutex<Callback>> = Arc::new(Mutex::new(Box::new(on_event)));
        let on_change = {
            let sitemaps = Arc::clone(&sitemaps);
            let callback = Arc::clone(&callback);
            move |batch: WatchBatch| handle_batch(batch, &sitemaps, &callback)
        };
        let (watcher, initial) = FileWatcher::start(paths, is_sitemap_file_name, on_change)
            .map_err(|e| SitemapError::Watch {
                path: e.path,
                message: e.message,
            })?;
        for file in initial {
            reload(&file.canonical, &file.shown, &sitemaps, &callback, true);
        }

        Ok(SitemapWatcher {
            sitemaps,
            _watcher: watcher,
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

fn handle_batch(batch: WatchBatch, sitemaps: &RwLock<SitemapSet>, callback: &Mutex<Callback>) {
    match batch {
        Ok(files) => {
            for file in files {
                reload(&file.canonical, &file.shown, sitemaps, callback, false);
            }
        }
        Err(errors) => {
            for err in errors {
                tracing::warn!(path = %err.path.display(), message = %err.message, "sitemap watch error");
                emit(
                    callback,
                    SitemapEvent::Error {
                        file: err.path,
                        line: 0,
                        column: 0,
                        message: err.message,
                    },
                );
            }
        }
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
    let loaded = crate::yaml::read_text(canonical)
        .map_err(|error| match error {
            // The file as the person named it, not its resolved path.
            crate::yaml::ReadError::Io { source, .. } => SitemapError::Read {
                file: shown.to_path_buf(),
                source,
            },
            other => SitemapError::from_reading(other),
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
