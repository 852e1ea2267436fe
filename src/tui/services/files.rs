//! What both workbenches, the one with a browser of its own and the one
//! attached to a named session, do with files alone: the sessions view's
//! listing of the traces, a trace opened as a replay or exported as a
//! recipe, a replayed step's picture, a theme loaded and watched. None of
//! it needs a browser, so it lives once, here, and the two workbenches
//! cannot drift apart.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};

use super::{export_session, read_sessions};
use crate::events::read_trace;
use crate::tui::error::ExportError;
use crate::tui::event::{AppEvent, Effect};
use crate::tui::state::ReplayData;
use crate::tui::theme::{Theme, ThemeWatcher};

/// File work for a thread that is not the loop's.
pub(super) type FileWork = Box<dyn FnOnce() + Send + 'static>;

/// The traces' folder, where exports go and the theme's watcher, as a
/// workbench reaches them.
pub(super) struct WorkbenchFiles {
    tx: Sender<AppEvent>,
    /// Where the traces are (the sessions view lists them).
    dir: PathBuf,
    /// Where an exported recipe is written.
    export_dir: PathBuf,
    /// The latest opening of the sessions view: a listing for an older
    /// one stops reading.
    generation: Arc<AtomicU64>,
    /// Watches the theme in use; replaced by each theme load.
    theme_watcher: Arc<Mutex<Option<ThemeWatcher>>>,
}

impl WorkbenchFiles {
    /// The traces in `dir`, exported to `export_dir`; outcomes go to `tx`.
    pub(super) fn new(tx: Sender<AppEvent>, dir: PathBuf, export_dir: PathBuf) -> WorkbenchFiles {
        WorkbenchFiles {
            tx,
            dir,
            export_dir,
            generation: Arc::new(AtomicU64::new(0)),
            theme_watcher: Arc::new(Mutex::new(None)),
        }
    }

    /// The work `effect` asks for when it is files' alone (listing the
    /// traces, opening or exporting one, loading a replayed step's
    /// picture, loading a theme), to run off the loop; any other effect
    /// comes back as it was.
    pub(super) fn work(&self, effect: Effect) -> Result<FileWork, Effect> {
        let tx = self.tx.clone();
        let work: FileWork = match effect {
            Effect::ListSessions { generation } => {
                self.generation.store(generation, Ordering::Relaxed);
                let (dir, current) = (self.dir.clone(), Arc::clone(&self.generation));
                Box::new(move || read_sessions(&dir, generation, &current, &tx))
            }
            Effect::OpenTrace(path) => Box::new(move || {
                let opened = read_trace(&path)
                    .map(|events| Box::new(ReplayData::from_events(&path, &events)));
                let _ = tx.send(AppEvent::TraceOpened(opened));
            }),
            Effect::ExportTrace { path, name } => {
                let dir = self.export_dir.clone();
                Box::new(move || {
                    let exported =
                        read_trace(&path)
                            .map_err(ExportError::from)
                            .and_then(|events| {
                                export_session(&events, &dir, &name).map_err(ExportError::from)
                            });
                    let _ = tx.send(AppEvent::Exported(exported));
                })
            }
            Effect::LoadReplayPicture { row, file, record } => Box::new(move || {
                let shot = std::fs::read(&file).ok().and_then(|bytes| {
                    let mut record = *record;
                    record.image = Some(Arc::from(bytes));
                    record.screenshot().map(Box::new)
                });
                let _ = tx.send(AppEvent::ReplayPicture { row, shot });
            }),
            Effect::LoadTheme(spec) => {
                let slot = Arc::clone(&self.theme_watcher);
                Box::new(move || load_theme(&spec, &slot, &tx))
            }
            other => return Err(other),
        };
        Ok(work)
    }
}

/// Loads theme `spec` and watches its file in place of the last one
/// watched; the outcome, and each later edit of the file, comes back as
/// an event.
fn load_theme(spec: &str, slot: &Mutex<Option<ThemeWatcher>>, tx: &Sender<AppEvent>) {
    let mut watcher = slot.lock().unwrap_or_else(PoisonError::into_inner);
    *watcher = None;
    let theme = match Theme::find(spec) {
        Ok(theme) => theme,
        Err(error) => {
            let _ = tx.send(AppEvent::ThemeReloaded(Err(error)));
            return;
        }
    };
    if let Some(path) = theme.source.clone() {
        let reloads = tx.clone();
        match ThemeWatcher::start(&path, move |result| {
            let _ = reloads.send(AppEvent::ThemeReloaded(result));
        }) {
            Ok(started) => *watcher = Some(started),
            Err(error) => {
                let _ = tx.send(AppEvent::Notice {
                    error: true,
                    text: error.to_string(),
                });
            }
        }
    }
    let _ = tx.send(AppEvent::ThemeReloaded(Ok(theme)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_traces_work_is_taken_and_every_other_effect_comes_back() {
        let dir =
            std::env::temp_dir().join(format!("webagent-workbench-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap(); // ok: a unit test, where a failure is the test failing
        let (tx, rx) = std::sync::mpsc::channel();
        let traces = WorkbenchFiles::new(tx, dir.clone(), dir.clone());

        let Ok(listing) = traces.work(Effect::ListSessions { generation: 3 }) else {
            panic!("the sessions view's listing is the traces' work");
        };
        listing();
        assert!(matches!(
            rx.recv().unwrap(), // ok: a unit test, where a failure is the test failing
            AppEvent::SessionsListed { generation: 3, files: Ok(files) } if files.is_empty()
        ));

        let Ok(opening) = traces.work(Effect::OpenTrace(dir.join("gone.jsonl"))) else {
            panic!("opening a trace is the traces' work");
        };
        opening();
        assert!(matches!(rx.recv().unwrap(), AppEvent::TraceOpened(Err(_)))); // ok: a unit test, where a failure is the test failing

        assert!(matches!(traces.work(Effect::Quit), Err(Effect::Quit)));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
