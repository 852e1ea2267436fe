//! Sign-ins that outlast a browser: cookies and local storage written to a
//! JSON file (`webagent state save FILE`) and loaded into a fresh profile
//! when a session starts (`--state FILE`, `browser.state`).
//!
//! The file has the shape of Playwright's `storageState` (`cookies`, and
//! `origins` with their `localStorage` entries), so a file made by one tool
//! works in the other. It holds credentials: it is written with owner-only
//! permissions (0600) through a temporary file and a rename, and its values
//! never reach a log (the [`std::fmt::Debug`] form shows only counts).
//!
//! Cookies go in at the browser level before the first page loads. Local
//! storage has no browser-level door (Chromium writes an origin's storage
//! only through a document of that origin), so each tab gets a script that
//! runs before the page's own: on the first document of a listed origin in
//! that tab it writes the saved entries the page does not already have.

use std::path::{Path, PathBuf};

use chromiumoxide::cdp::browser_protocol::network::{
    Cookie, CookieParam, CookieSameSite, TimeSinceEpoch,
};
use serde::{Deserialize, Serialize};

/// Why a state file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The file could not be read.
    #[error("could not read the state file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a state file.
    #[error("the state file {path} is not valid (line {line}, column {column}): {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Where the error is.
        line: usize,
        /// Where the error is.
        column: usize,
        /// What is wrong (no values from the file).
        message: String,
    },
    /// The file could not be written.
    #[error("could not write the state file {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Cookies and local storage of a browser session.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageState {
    /// Every cookie of the browser.
    #[serde(default)]
    pub cookies: Vec<StoredCookie>,
    /// Local storage, per origin.
    #[serde(default)]
    pub origins: Vec<OriginStorage>,
}

impl std::fmt::Debug for StorageState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Values are credentials: only counts may reach a log.
        f.debug_struct("StorageState")
            .field("cookies", &self.cookies.len())
            .field("origins", &self.origins.len())
            .finish()
    }
}

/// One cookie, in the file's form.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredCookie {
    /// Name.
    pub name: String,
    /// Value.
    pub value: String,
    /// Domain (a leading dot covers subdomains).
    pub domain: String,
    /// Path.
    #[serde(default = "root_path")]
    pub path: String,
    /// Expiry in seconds since the epoch; -1 for a session cookie.
    #[serde(default = "session_expiry")]
    pub expires: f64,
    /// Hidden from page scripts.
    #[serde(default)]
    pub http_only: bool,
    /// Sent over https only.
    #[serde(default)]
    pub secure: bool,
    /// `Strict`, `Lax` or `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_site: Option<String>,
}

fn root_path() -> String {
    "/".into()
}

fn session_expiry() -> f64 {
    -1.0
}

/// The local storage of one origin.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OriginStorage {
    /// `scheme://host[:port]`.
    pub origin: String,
    /// Its entries.
    #[serde(default)]
    pub local_storage: Vec<StorageEntry>,
}

/// One local storage entry.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct StorageEntry {
    /// The key.
    pub name: String,
    /// The value.
    pub value: String,
}

impl StorageState {
    /// Reads a state file.
    pub fn load(path: &Path) -> Result<StorageState, StateError> {
        let text = std::fs::read_to_string(path).map_err(|source| StateError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|e| StateError::Invalid {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            // serde_json's messages name types and fields, not values.
            message: e.to_string(),
        })
    }

    /// Reads the state file when it exists; a missing file is an empty
    /// state (the first run, before anything was saved).
    pub fn load_if_present(path: &Path) -> Result<Option<StorageState>, StateError> {
        match std::fs::metadata(path) {
            Ok(_) => StorageState::load(path).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StateError::Read {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    /// Writes the state to `path`, readable by its owner only. The file is
    /// replaced whole (a temporary file renamed over it), so a crash never
    /// leaves half a file, and a file that existed with wider permissions
    /// gets owner-only ones.
    pub fn save(&self, path: &Path) -> Result<(), StateError> {
        let failed = |source| StateError::Write {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(failed)?;
        }
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| failed(std::io::Error::other(e.to_string())))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "state".into());
        let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        let written = write_private(&temp, text.as_bytes());
        if let Err(error) = written.and_then(|()| std::fs::rename(&temp, path)) {
            let _ = std::fs::remove_file(&temp);
            return Err(failed(error));
        }
        Ok(())
    }

    /// The cookies as CDP parameters for `Storage.setCookies`.
    pub(crate) fn cookie_params(&self) -> Vec<CookieParam> {
        self.cookies
            .iter()
            .map(|c| {
                let mut param = CookieParam::new(c.name.clone(), c.value.clone());
                param.domain = Some(c.domain.clone());
                param.path = Some(c.path.clone());
                param.secure = Some(c.secure);
                param.http_only = Some(c.http_only);
                param.same_site = c.same_site.as_deref().and_then(|s| match s {
                    "Strict" => Some(CookieSameSite::Strict),
                    "Lax" => Some(CookieSameSite::Lax),
                    "None" => Some(CookieSameSite::None),
                    _ => None,
                });
                if c.expires > 0.0 {
                    param.expires = Some(TimeSinceEpoch::new(c.expires));
                }
                param
            })
            .collect()
    }

    /// Takes the browser's cookies as they are now.
    pub(crate) fn from_cookies(cookies: &[Cookie]) -> StorageState {
        StorageState {
            cookies: cookies
                .iter()
                .map(|c| StoredCookie {
                    name: c.name.clone(),
                    value: c.value.clone(),
                    domain: c.domain.clone(),
                    path: c.path.clone(),
                    expires: if c.session { -1.0 } else { c.expires },
                    http_only: c.http_only,
                    secure: c.secure,
                    same_site: c.same_site.as_ref().map(|s| s.as_ref().to_string()),
                })
                .collect(),
            origins: Vec::new(),
        }
    }

    /// Replaces (or adds) one origin's local storage.
    pub(crate) fn set_origin(&mut self, origin: OriginStorage) {
        self.origins.retain(|o| o.origin != origin.origin);
        self.origins.push(origin);
    }

    /// The script each tab runs before a page's own: on the first document
    /// of a saved origin in this tab, the saved entries the page lacks are
    /// written. `None` when no local storage was saved.
    pub(crate) fn local_storage_script(&self) -> Option<String> {
        let origins: serde_json::Map<String, serde_json::Value> = self
            .origins
            .iter()
            .filter(|o| !o.local_storage.is_empty())
            .map(|o| {
                let entries: serde_json::Map<String, serde_json::Value> = o
                    .local_storage
                    .iter()
                    .map(|e| (e.name.clone(), serde_json::Value::String(e.value.clone())))
                    .collect();
                (o.origin.clone(), serde_json::Value::Object(entries))
            })
            .collect();
        if origins.is_empty() {
            return None;
        }
        // The marker lives in sessionStorage (per tab and origin), so an
        // entry the page removes later (a sign-out) is not put back on the
        // next navigation.
        Some(format!(
            "(() => {{ try {{ const saved = {}[location.origin]; \
             if (!saved || sessionStorage.getItem('__webagent_state_loaded')) return; \
             sessionStorage.setItem('__webagent_state_loaded', '1'); \
             for (const [k, v] of Object.entries(saved)) {{ \
               if (localStorage.getItem(k) === null) localStorage.setItem(k, v); }} \
             }} catch (e) {{}} }})();",
            serde_json::Value::Object(origins)
        ))
    }
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> StorageState {
        StorageState {
            cookies: vec![StoredCookie {
                name: "sid".into(),
                value: "s3cret-cookie".into(),
                domain: "127.0.0.1".into(),
                path: "/".into(),
                expires: -1.0,
                http_only: true,
                secure: false,
                same_site: Some("Lax".into()),
            }],
            origins: vec![OriginStorage {
                origin: "http://127.0.0.1:8080".into(),
                local_storage: vec![StorageEntry {
                    name: "token".into(),
                    value: "s3cret-token".into(),
                }],
            }],
        }
    }

    #[test]
    fn a_saved_state_reads_back_the_same_and_only_its_owner_can_read_it() {
        let dir = std::env::temp_dir().join(format!("webagent-state-{}", std::process::id()));
        let path = dir.join("nested").join("state.json");
        sample().save(&path).unwrap();
        assert_eq!(StorageState::load(&path).unwrap(), sample());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn debug_output_never_shows_values() {
        let text = format!("{:?}", sample());
        assert!(!text.contains("s3cret"), "{text}");
        assert!(text.contains("cookies: 1"), "{text}");
    }

    #[test]
    fn a_broken_file_names_the_file_and_place_but_no_value() {
        let dir = std::env::temp_dir().join(format!("webagent-bad-state-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("state.json");
        std::fs::write(&path, "{\"cookies\": [{\"name\": \"sid\", \"value\": 5}]}").unwrap();
        let text = StorageState::load(&path).unwrap_err().to_string();
        assert!(text.contains("state.json"), "{text}");
        assert!(text.contains("line 1"), "{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_missing_file_is_an_empty_start() {
        let path = Path::new("/nonexistent/webagent/state.json");
        assert!(StorageState::load_if_present(path).unwrap().is_none());
    }

    #[test]
    fn the_storage_script_is_written_only_when_something_was_saved() {
        assert!(StorageState::default().local_storage_script().is_none());
        let script = sample().local_storage_script().unwrap();
        assert!(script.contains("http://127.0.0.1:8080"), "{script}");
    }
}
