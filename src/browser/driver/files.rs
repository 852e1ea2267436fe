//! `read_file`: the text of a file the session downloaded, and nothing
//! outside the downloads directory.

use serde_json::json;

use super::effects::{DOWNLOAD_BEGIN_WAIT, DOWNLOAD_WAIT};
use super::Driver;
use crate::actions::{ActionResult, FailureReason};

/// The most characters `read_file` returns.
pub(super) const READ_FILE_LIMIT: usize = 20_000;
/// The largest file `read_file` opens.
const READ_FILE_MAX_BYTES: u64 = 8 * 1024 * 1024;

impl Driver {
    /// `read_file`: a downloaded file's text, clipped. Only files in the
    /// downloads directory can be read.
    ///
    /// A file not there yet may still be arriving: a download the last
    /// action started can be announced after that action's result (the
    /// browser reports it on its own connection, and a busy machine
    /// delays it), and one in progress has no name yet. So a missing file
    /// is looked for again once those have ended.
    pub(super) async fn read_file(&self, path: &str) -> ActionResult {
        let Some(downloads) = self.tab.downloads().cloned() else {
            return ActionResult::blocked(
                "read_file reads downloaded files, and this session keeps no downloads",
            );
        };
        let first = read_download(downloads.dir(), path);
        if !matches!(
            first,
            ActionResult::Failure {
                reason: FailureReason::NotFound,
                ..
            }
        ) {
            return first;
        }
        downloads.arrivals(DOWNLOAD_BEGIN_WAIT, DOWNLOAD_WAIT).await;
        read_download(downloads.dir(), path)
    }
}

/// A downloaded file's text, clipped to [`READ_FILE_LIMIT`] characters:
/// `path` is taken in `dir` (an absolute one must lie inside it), and only
/// text files up to [`READ_FILE_MAX_BYTES`] are read.
pub(super) fn read_download(dir: &std::path::Path, path: &str) -> ActionResult {
    let dir = &dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let given = std::path::Path::new(path.trim());
    let candidate = if given.is_absolute() {
        given.to_path_buf()
    } else {
        dir.join(given)
    };
    let file = match candidate.canonicalize() {
        Ok(file) => file,
        Err(_) => {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .map(|entries| {
                    entries
                        .flatten()
                        .filter(|e| e.path().is_file())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            names.truncate(20);
            return ActionResult::not_found(format!(
                "no downloaded file `{path}` in {}; there are: {}",
                dir.display(),
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            ));
        }
    };
    if !file.starts_with(dir) || !file.is_file() {
        return ActionResult::blocked(format!(
            "read_file reads only files in the downloads directory {}; `{path}` is not one",
            dir.display()
        ));
    }
    let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
    let mime = crate::browser::download::mime_of(&file);
    if size > READ_FILE_MAX_BYTES {
        return ActionResult::invalid_params(format!(
            "{} is {size} bytes; read_file opens files up to {READ_FILE_MAX_BYTES} bytes",
            file.display()
        ));
    }
    let bytes = match std::fs::read(&file) {
        Ok(bytes) => bytes,
        Err(error) => return ActionResult::unknown(format!("reading {}: {error}", file.display())),
    };
    let text = match String::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => text,
        _ => {
            return ActionResult::invalid_params(format!(
                "{} is not a text file ({mime}, {size} bytes); read_file reads text, CSV and JSON",
                file.display()
            ))
        }
    };
    let clipped = text.chars().count() > READ_FILE_LIMIT;
    // Secrets the file holds are masked above, at the environment's
    // boundary, like everything else a page hands back.
    let shown: String = text.chars().take(READ_FILE_LIMIT).collect();
    ActionResult::ok_with(json!({
        "file": file.display().to_string(),
        "size": size,
        "type": mime,
        "clipped": clipped,
        "text": shown,
    }))
}
