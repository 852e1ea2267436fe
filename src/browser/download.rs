//! Downloads: a click that saves a file lands it in one directory
//! (`paths.downloads`), under the site's file name made unique, and the
//! action's result names it.
//!
//! Chromium is told (`Browser.setDownloadBehavior`, `allowAndName`) to
//! save each download as its guid in that directory and to report its
//! progress; when one completes it is renamed to the name the site
//! suggested (`report.csv`, then `report (1).csv`, …). One larger than the
//! limit is cancelled and its partial file removed.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::browser::{
    CancelDownloadParams, DownloadProgressState, EventDownloadProgress, EventDownloadWillBegin,
    SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::Browser;
use futures_util::StreamExt;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::error::BrowserError;

/// Where downloads go and how large one may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadOptions {
    /// The directory (created when missing).
    pub dir: PathBuf,
    /// The largest download kept, in bytes.
    pub max_bytes: u64,
}

/// How a download ended (or that it has not yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DownloadState {
    /// Still arriving.
    InProgress,
    /// Saved.
    Completed,
    /// Cancelled by the browser or the site.
    Canceled,
    /// Cancelled here: larger than the limit.
    TooLarge,
    /// Saved, but it could not be given its name (the text says why).
    Failed(String),
}

/// One download of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Download {
    /// Its place in the session's order (1, 2, …).
    pub seq: u64,
    /// Chromium's id for it.
    pub guid: String,
    /// Where it came from.
    pub url: String,
    /// Where it is (the final name once completed).
    pub file: PathBuf,
    /// Bytes received.
    pub size: u64,
    /// How it ended.
    pub state: DownloadState,
}

impl Download {
    /// The MIME type its file name suggests.
    pub fn mime(&self) -> &'static str {
        mime_of(&self.file)
    }

    /// The download as an action result reports it.
    pub fn to_json(&self) -> serde_json::Value {
        let state = match &self.state {
            DownloadState::InProgress => "in_progress".to_string(),
            DownloadState::Completed => "completed".to_string(),
            DownloadState::Canceled => "canceled".to_string(),
            DownloadState::TooLarge => "too_large".to_string(),
            DownloadState::Failed(why) => format!("failed: {why}"),
        };
        serde_json::json!({
            "file": self.file.display().to_string(),
            "name": self.file.file_name().map(|n| n.to_string_lossy().into_owned()),
            "size": self.size,
            "type": self.mime(),
            "state": state,
            "url": self.url,
        })
    }
}

/// The downloads of one browser session.
#[derive(Debug)]
pub struct Downloads {
    options: DownloadOptions,
    list: Mutex<Vec<Download>>,
    changed: Notify,
}

impl Downloads {
    fn new(options: DownloadOptions) -> Self {
        Downloads {
            options,
            list: Mutex::new(Vec::new()),
            changed: Notify::new(),
        }
    }

    /// The directory downloads land in.
    pub fn dir(&self) -> &Path {
        &self.options.dir
    }

    /// The highest sequence number so far (0 before any download).
    pub fn mark(&self) -> u64 {
        self.lock().last().map_or(0, |d| d.seq)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Download>> {
        self.list.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The downloads begun after `mark`, once each has ended or `limit`
    /// has passed (those still arriving are reported as such).
    pub async fn since(&self, mark: u64, limit: Duration) -> Vec<Download> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let changed = self.changed.notified();
            let list: Vec<Download> = self
                .lock()
                .iter()
                .filter(|d| d.seq > mark)
                .cloned()
                .collect();
            let pending = list.iter().any(|d| d.state == DownloadState::InProgress);
            if !pending || tokio::time::Instant::now() >= deadline {
                return list;
            }
            let _ = tokio::time::timeout_at(deadline, changed).await;
        }
    }

    /// Waits until a download begun after `mark` is listed, or `limit`
    /// has passed; true when one is.
    pub async fn begun_since(&self, mark: u64, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let changed = self.changed.notified();
            if self.mark() > mark {
                return true;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return self.mark() > mark;
            }
        }
    }

    /// Waits for downloads that may still be arriving: one announced
    /// within `begin`, and those in progress, until each has ended or
    /// `end` has passed.
    pub async fn arrivals(&self, begin: Duration, end: Duration) {
        let settled = {
            let list = self.lock();
            list.iter()
                .find(|d| d.state == DownloadState::InProgress)
                .map_or_else(|| list.last().map_or(0, |d| d.seq), |d| d.seq - 1)
        };
        if self.begun_since(settled, begin).await {
            self.since(settled, end).await;
        }
    }

    fn begin(&self, guid: String, url: String, suggested: String) {
        let mut list = self.lock();
        let seq = list.last().map_or(1, |d| d.seq + 1);
        // The suggested name rides along until the rename.
        list.push(Download {
            seq,
            guid,
            url,
            file: PathBuf::from(suggested),
            size: 0,
            state: DownloadState::InProgress,
        });
        drop(list);
        self.changed.notify_waiters();
    }

    /// Applies one progress report; returns the guid to cancel when the
    /// download outgrew the limit.
    fn progress(&self, event: &EventDownloadProgress) -> Option<String> {
        let mut list = self.lock();
        let download = list
            .iter_mut()
            .find(|d| d.guid == event.guid && d.state == DownloadState::InProgress)?;
        download.size = event.received_bytes.max(0.0) as u64;
        let total = event.total_bytes.max(0.0) as u64;
        let mut cancel = None;
        if download.size > self.options.max_bytes || total > self.options.max_bytes {
            download.state = DownloadState::TooLarge;
            download.file = self.options.dir.join(&download.guid);
            cancel = Some(download.guid.clone());
        } else {
            match event.state {
                DownloadProgressState::InProgress => return None,
                DownloadProgressState::Canceled => {
                    download.state = DownloadState::Canceled;
                    download.file = self.options.dir.join(&download.guid);
                }
                DownloadProgressState::Completed => {
                    let saved = self.options.dir.join(&download.guid);
                    let suggested = download.file.to_string_lossy().into_owned();
                    match place(&saved, &self.options.dir, &suggested) {
                        Ok(file) => {
                            download.file = file;
                            download.state = DownloadState::Completed;
                        }
                        Err(error) => {
                            download.file = saved;
                            download.state = DownloadState::Failed(error.to_string());
                        }
                    }
                }
            }
        }
        drop(list);
        self.changed.notify_waiters();
        cancel
    }
}

/// Renames the file Chromium saved as its guid to the site's name, made
/// safe and unique in `dir`.
fn place(saved: &Path, dir: &Path, suggested: &str) -> std::io::Result<PathBuf> {
    let name = safe_name(suggested);
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem.to_string(), format!(".{ext}")),
        _ => (name.clone(), String::new()),
    };
    for n in 0..10_000u32 {
        let candidate = if n == 0 {
            dir.join(&name)
        } else {
            dir.join(format!("{stem} ({n}){ext}"))
        };
        // Hard-linking fails when the name is taken, so two downloads
        // finishing at once never take the same name.
        match std::fs::hard_link(saved, &candidate) {
            Ok(()) => {
                std::fs::remove_file(saved)?;
                return Ok(candidate);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(format!(
        "no free name for {name} in {}",
        dir.display()
    )))
}

/// The last path component of a suggested name, without control
/// characters; `download` when nothing usable is left.
fn safe_name(suggested: &str) -> String {
    let last = suggested.rsplit(['/', '\\']).next().unwrap_or_default();
    let cleaned: String = last.chars().filter(|c| !c.is_control()).collect();
    let cleaned = cleaned.trim().trim_start_matches('.').to_string();
    if cleaned.is_empty() {
        "download".into()
    } else {
        cleaned
    }
}

/// The MIME type a file name suggests (by extension).
pub fn mime_of(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "csv" => "text/csv",
        "tsv" => "text/tab-separated-values",
        "json" => "application/json",
        "txt" | "log" => "text/plain",
        "md" => "text/markdown",
        "html" | "htm" => "text/html",
        "xml" => "application/xml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        _ => "application/octet-stream",
    }
}

/// Sends downloads of `browser` to `options.dir` and keeps their list.
pub(crate) async fn watch_downloads(
    browser: Arc<Browser>,
    options: DownloadOptions,
    limit: Duration,
) -> Result<(Arc<Downloads>, JoinHandle<()>), BrowserError> {
    std::fs::create_dir_all(&options.dir)
        .map_err(|e| BrowserError::Profile(options.dir.clone(), e))?;
    let dir = options
        .dir
        .canonicalize()
        .map_err(|e| BrowserError::Profile(options.dir.clone(), e))?;
    let options = DownloadOptions { dir, ..options };
    let cdp = |e: chromiumoxide::error::CdpError| BrowserError::Cdp {
        what: "watching downloads".into(),
        message: e.to_string(),
    };
    let began = browser
        .event_listener::<EventDownloadWillBegin>()
        .await
        .map_err(cdp)?;
    let progress = browser
        .event_listener::<EventDownloadProgress>()
        .await
        .map_err(cdp)?;
    let params = SetDownloadBehaviorParams::builder()
        .behavior(SetDownloadBehaviorBehavior::AllowAndName)
        .download_path(options.dir.display().to_string())
        .events_enabled(true)
        .build()
        .map_err(BrowserError::Script)?;
    tokio::time::timeout(limit, browser.execute(params))
        .await
        .map_err(|_| BrowserError::Timeout {
            what: "setting where downloads go".into(),
            after: limit,
        })?
        .map_err(cdp)?;
    let downloads = Arc::new(Downloads::new(options));
    let list = Arc::clone(&downloads);
    let task = tokio::spawn(async move {
        enum Seen {
            Began(Arc<EventDownloadWillBegin>),
            Progress(Arc<EventDownloadProgress>),
        }
        let mut events =
            futures_util::stream::select(began.map(Seen::Began), progress.map(Seen::Progress));
        while let Some(seen) = events.next().await {
            match seen {
                Seen::Began(e) => {
                    tracing::info!(url = %e.url, "a download began");
                    list.begin(e.guid.clone(), e.url.clone(), e.suggested_filename.clone());
                }
                Seen::Progress(e) => {
                    if let Some(guid) = list.progress(&e) {
                        tracing::warn!("a download outgrew the limit; cancelled");
                        if let Err(error) = browser
                            .execute(CancelDownloadParams::new(guid.clone()))
                            .await
                        {
                            tracing::debug!(%error, "cancelling a download");
                        }
                        let _ = std::fs::remove_file(list.dir().join(&guid));
                    }
                }
            }
        }
    });
    Ok((downloads, task))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_name_gets_a_number_and_a_path_in_the_name_is_dropped() {
        let dir = std::env::temp_dir().join(format!("webagent-dl-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for guid in ["a", "b"] {
            std::fs::write(dir.join(guid), guid).unwrap();
        }
        let first = place(&dir.join("a"), &dir, "../../etc/report.csv").unwrap();
        let second = place(&dir.join("b"), &dir, "report.csv").unwrap();
        assert_eq!(first, dir.join("report.csv"));
        assert_eq!(second, dir.join("report (1).csv"));
        assert_eq!(std::fs::read_to_string(second).unwrap(), "b");
        assert!(!dir.join("a").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn waiting_for_a_download_to_begin_ends_when_one_is_announced_or_at_the_limit() {
        let downloads = Arc::new(Downloads::new(DownloadOptions {
            dir: std::env::temp_dir(),
            max_bytes: 1,
        }));
        let mark = downloads.mark();
        let late = Arc::clone(&downloads);
        let announce = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            late.begin("g".into(), "http://127.0.0.1/x.csv".into(), "x.csv".into());
        });
        assert!(downloads.begun_since(mark, Duration::from_secs(10)).await);
        announce.await.unwrap();
        let mark = downloads.mark();
        assert!(!downloads.begun_since(mark, Duration::from_millis(20)).await);
    }

    #[tokio::test]
    async fn arrivals_wait_for_a_download_in_progress_to_end() {
        let dir = std::env::temp_dir().join(format!("webagent-dl-arrive-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("g"), "notes").unwrap();
        let downloads = Arc::new(Downloads::new(DownloadOptions {
            dir: dir.clone(),
            max_bytes: 1024,
        }));
        downloads.begin("g".into(), "http://127.0.0.1/n.txt".into(), "n.txt".into());
        let late = Arc::clone(&downloads);
        let finish = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            late.progress(&EventDownloadProgress {
                guid: "g".into(),
                total_bytes: 5.0,
                received_bytes: 5.0,
                state: DownloadProgressState::Completed,
                file_path: None,
            });
        });
        downloads
            .arrivals(Duration::from_millis(20), Duration::from_secs(10))
            .await;
        let ended = downloads.lock()[0].clone();
        assert_eq!(ended.state, DownloadState::Completed);
        assert_eq!(ended.file, dir.join("n.txt"));
        finish.await.unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn names_without_anything_usable_become_download() {
        assert_eq!(safe_name(""), "download");
        assert_eq!(safe_name("dir/"), "download");
        assert_eq!(safe_name("..."), "download");
        assert_eq!(mime_of(Path::new("x.CSV")), "text/csv");
    }
}
