//! The tab's sign-ins as a state file holds them: the browser's cookies
//! and the current document's local storage, read and saved.

use super::Tab;
use crate::browser::error::BrowserError;
use crate::browser::state::{OriginStorage, StorageEntry, StorageState};

impl Tab {
    /// The browser's cookies, as a state file holds them.
    pub async fn cookies(&self) -> Result<StorageState, BrowserError> {
        let browser = self
            .ctx
            .browser
            .upgrade()
            .ok_or_else(|| BrowserError::Disconnected("the session was closed".into()))?;
        let cookies = self
            .browser_call("reading the cookies", self.ctx.call_timeout, async {
                browser.get_cookies().await
            })
            .await?;
        Ok(StorageState::from_cookies(&cookies))
    }

    /// The browser's cookies and this document's local storage, as a state
    /// file holds them.
    pub async fn storage_state(&self) -> Result<StorageState, BrowserError> {
        let mut state = self.cookies().await?;
        // An opaque origin (about:blank, data:) has no storage to read.
        let local = self
            .eval(
                "(() => { try { if (location.origin === 'null') return null; \
                 return { origin: location.origin, entries: Object.entries(localStorage) }; } \
                 catch (e) { return null; } })()",
            )
            .await?;
        if let Some(origin) = local.get("origin").and_then(|o| o.as_str()) {
            let entries = local
                .get("entries")
                .and_then(|e| e.as_array())
                .map(|list| {
                    list.iter()
                        .filter_map(|pair| {
                            Some(StorageEntry {
                                name: pair.get(0)?.as_str()?.to_string(),
                                value: pair.get(1)?.as_str()?.to_string(),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            state.set_origin(OriginStorage {
                origin: origin.to_string(),
                local_storage: entries,
            });
        }
        Ok(state)
    }

    /// Writes [`Tab::storage_state`] to `path` (owner-only permissions);
    /// local storage of other origins already in the file is kept.
    pub async fn save_state(&self, path: &std::path::Path) -> Result<StorageState, BrowserError> {
        let mut state = self.storage_state().await?;
        if let Ok(Some(earlier)) = StorageState::load_if_present(path) {
            for origin in earlier.origins {
                if !state.origins.iter().any(|o| o.origin == origin.origin) {
                    state.origins.push(origin);
                }
            }
        }
        state.save(path)?;
        Ok(state)
    }
}
