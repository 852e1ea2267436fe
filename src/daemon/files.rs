//! The files of named sessions: one private folder, and in it for each
//! session its control socket, a small metadata file and the process's
//! log.

use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The folder of the sessions' sockets: `$XDG_RUNTIME_DIR/webagent` (a
/// folder the system keeps for the user alone), else `.webagent/run` in
/// the working folder.
pub fn run_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("webagent"),
        None => PathBuf::from(".webagent").join("run"),
    }
}

/// Whether `name` may name a session: 1 to 40 letters, digits, `-` or
/// `_`, so it is a file name everywhere and never a path.
pub fn valid_name(name: &str) -> Result<(), String> {
    let fits = !name.is_empty()
        && name.len() <= 40
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if fits {
        Ok(())
    } else {
        Err(format!(
            "`{name}` cannot name a session: use 1 to 40 letters, digits, `-` or `_`"
        ))
    }
}

/// Where one session's files are.
#[derive(Debug, Clone)]
pub struct SessionFiles {
    /// The session's name.
    pub name: String,
    /// The control socket (mode 0600).
    pub socket: PathBuf,
    /// What `session list` reads when the process does not answer.
    pub meta: PathBuf,
    /// The session process's stdout and stderr.
    pub log: PathBuf,
}

impl SessionFiles {
    /// The files of session `name` in `dir`.
    pub fn new(dir: &Path, name: &str) -> SessionFiles {
        SessionFiles {
            name: name.to_string(),
            socket: dir.join(format!("{name}.sock")),
            meta: dir.join(format!("{name}.json")),
            log: dir.join(format!("{name}.log")),
        }
    }

    /// The files of session `name` in the usual folder ([`run_dir`]).
    pub fn named(name: &str) -> SessionFiles {
        SessionFiles::new(&run_dir(), name)
    }

    /// Every session that left its metadata in `dir`, by name.
    pub fn all_in(dir: &Path) -> Vec<SessionFiles> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                name.strip_suffix(".json").map(str::to_owned)
            })
            .filter(|name| valid_name(name).is_ok())
            .collect();
        names.sort();
        names
            .iter()
            .map(|name| SessionFiles::new(dir, name))
            .collect()
    }

    /// Creates the sessions' folder, owner-only (0700), so nobody else
    /// can reach a socket in it whatever its own mode.
    pub fn create_dir(&self) -> io::Result<()> {
        let dir = self.socket.parent().unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
    }

    /// The metadata the process left, when it is there and reads.
    pub fn read_meta(&self) -> Option<SessionMeta> {
        let text = std::fs::read_to_string(&self.meta).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Writes the metadata, owner-only.
    pub fn write_meta(&self, meta: &SessionMeta) -> io::Result<()> {
        let text = serde_json::to_string_pretty(meta).map_err(io::Error::other)?;
        std::fs::write(&self.meta, text)?;
        std::fs::set_permissions(&self.meta, std::fs::Permissions::from_mode(0o600))
    }

    /// Removes the socket and the metadata (the log stays, for whoever
    /// asks why the session ended). Missing files are no error.
    pub fn remove(&self) {
        for file in [&self.socket, &self.meta] {
            if let Err(error) = std::fs::remove_file(file) {
                if error.kind() != io::ErrorKind::NotFound {
                    tracing::warn!(%error, file = %file.display(), "removing a session file");
                }
            }
        }
    }
}

/// What a session process writes about itself when it starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    /// The session's name.
    pub name: String,
    /// The session process's id.
    pub pid: u32,
    /// The page it was started on (empty for a blank page).
    pub url: String,
    /// When it started, in seconds since the Unix epoch.
    pub started: u64,
    /// Its trace file.
    pub trace: PathBuf,
    /// Its log file.
    pub log: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_a_plain_file_name() {
        assert!(valid_name("shop-2_b").is_ok());
        for bad in ["", "a/b", "..", "a b", &"x".repeat(41)] {
            let error = valid_name(bad).unwrap_err();
            assert!(error.contains("cannot name a session"), "{error}");
        }
    }

    #[test]
    fn sessions_are_found_by_their_metadata_and_their_files_are_private() {
        let dir =
            std::env::temp_dir().join(format!("webagent-daemon-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let files = SessionFiles::new(&dir.join("webagent"), "one");
        files.create_dir().unwrap();
        let meta = SessionMeta {
            name: "one".into(),
            pid: 7,
            url: "http://127.0.0.1:1/".into(),
            started: 1,
            trace: "t.jsonl".into(),
            log: "one.log".into(),
        };
        files.write_meta(&meta).unwrap();
        std::fs::write(dir.join("webagent").join("notes.txt"), "").unwrap();
        let found = SessionFiles::all_in(&dir.join("webagent"));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].read_meta(), Some(meta));
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir.join("webagent")), 0o700);
        assert_eq!(mode(&files.meta), 0o600);
        files.remove();
        assert!(SessionFiles::all_in(&dir.join("webagent")).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
