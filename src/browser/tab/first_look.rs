//! The first look at a new document: an observation the page takes in
//! its load task, before its first frame, so the observation that follows
//! a navigation is answered without waiting for that frame. Also the
//! tab's counts of looks used and of navigations that brought no document.

use std::time::{Duration, Instant};

use super::options::{observer_options, ObserveOptions};
use super::world::Evaluated;
use super::{FirstLook, Tab};

/// How long a first look stays the answer to the next observation: the
/// observation that follows a navigation comes at once, and one asked for
/// later looks at the page again.
const FIRST_LOOK_FRESH: Duration = Duration::from_millis(250);

impl Tab {
    /// Forgets which world the last document announced: a navigation is
    /// about to start, and [`Tab::first_look`] waits for the next one.
    pub(crate) fn expect_new_document(&self) {
        if let Ok(mut announced) = self.announced.lock() {
            *announced = None;
        }
        self.expect_first_look_unused();
    }

    /// The first look at the document a navigation is loading: waits for
    /// its world to be announced, then asks the page to take the
    /// observation for `opts` in its load task (after every load listener,
    /// before the first frame), when the page is done loading by then.
    /// True when it did; the next [`Tab::observe`] with the same options
    /// then answers with it. Meant to run beside the navigation, and to be
    /// dropped when the navigation brings no document.
    pub(crate) async fn first_look(&self, opts: &ObserveOptions) -> bool {
        let world = loop {
            let announced = self.announcements.notified();
            if let Some(world) = self.announced.lock().ok().and_then(|a| a.clone()) {
                break world;
            }
            announced.await;
        };
        let options = observer_options(opts);
        let expression = format!(
            "globalThis.__webagentAct ? globalThis.__webagentAct.firstLook({options}) : {{early: false}}"
        );
        let looked = self
            .evaluate_in(&world, &expression, "taking the first look", opts.timeout)
            .await;
        let json = match looked {
            Ok(Evaluated::Value(v)) if v.get("early").and_then(|e| e.as_bool()) == Some(true) => v
                .get("observation")
                .and_then(|o| o.as_str())
                .map(str::to_owned),
            Ok(_) => None,
            Err(err) => {
                tracing::debug!(%err, "no first look");
                None
            }
        };
        let Some(json) = json else { return false };
        if let Ok(mut first) = self.first_look.lock() {
            *first = Some(FirstLook {
                world,
                taken: Instant::now(),
                options,
                json,
            });
        }
        true
    }

    /// Whether a world was announced since [`Tab::expect_new_document`]:
    /// the new document started with webagent's scripts in it.
    pub(crate) fn world_announced(&self) -> bool {
        self.announced.lock().is_ok_and(|a| a.is_some())
    }

    /// How many observations a first look answered, over the tab's life:
    /// what `bench observe` and the tests read to see the look was used.
    pub fn first_looks_used(&self) -> u64 {
        self.looks_used.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Counts a navigation of the top frame that an action's settling saw
    /// stop before any document came (a download, a 204).
    pub(crate) fn note_navigation_without_document(&self) {
        self.documentless
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// How many navigations stopped before a document came, over the
    /// tab's life.
    pub(crate) fn navigations_without_document(&self) -> u64 {
        self.documentless.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Drops a first look the page may change before it is read.
    pub(crate) fn expect_first_look_unused(&self) {
        if let Ok(mut first) = self.first_look.lock() {
            *first = None;
        }
    }

    /// A first look taken for `options` in the current document, still
    /// fresh; the world it was taken in becomes the tab's world.
    pub(super) async fn take_first_look(&self, options: &serde_json::Value) -> Option<String> {
        let first = self.first_look.lock().ok()?.take()?;
        if &first.options != options || first.taken.elapsed() > FIRST_LOOK_FRESH {
            return None;
        }
        let mut world = self.world.lock().await;
        let mut announced = self.announced.lock().ok()?;
        match announced.take() {
            // Not adopted yet: the world the newest document announced,
            // which the tab now takes as its own.
            Some(newest) if newest == first.world => *world = Some(newest),
            // A newer document started since: the look is of a page gone.
            Some(newest) => {
                *announced = Some(newest);
                return None;
            }
            None if world.as_ref() == Some(&first.world) => {}
            None => return None,
        }
        self.looks_used
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(first.json)
    }
}
