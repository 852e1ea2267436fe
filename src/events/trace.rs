//! The trace file: every event of a run appended as one JSON line, written
//! through at once so a run that is killed leaves a readable file.
//! Screenshots are stored once each as files in a directory beside it
//! (`<trace>.images/step-3.jpg`) and named in their event, so the trace
//! itself stays text of a modest size.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::clock::utc_stamp;

use super::{Event, EventError};

/// Where traces go when no other directory is configured.
pub const DEFAULT_SESSIONS_DIR: &str = ".webagent/sessions";

/// Appends events to `<dir>/<timestamp>.jsonl`.
#[derive(Debug)]
pub struct TraceWriter {
    path: PathBuf,
    file: File,
    /// Images written so far, to name the next one uniquely.
    images: usize,
}

impl TraceWriter {
    /// Creates `dir` if needed and a new trace file in it, named after the
    /// current UTC time (and the process id, so two runs started in the
    /// same second do not share a file).
    pub fn create(dir: &Path) -> Result<TraceWriter, EventError> {
        std::fs::create_dir_all(dir).map_err(|source| EventError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
        let name = format!(
            "{}-{}.jsonl",
            utc_stamp(SystemTime::now()),
            std::process::id()
        );
        let path = dir.join(name);
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|source| EventError::Write {
                path: path.clone(),
                source,
            })?;
        Ok(TraceWriter {
            path,
            file,
            images: 0,
        })
    }

    /// The trace file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one event as a line. The line goes to the operating system
    /// in a single write, so a kill between events never leaves half a
    /// line behind.
    pub fn write(&mut self, event: &Event) -> Result<(), EventError> {
        // Most seconds of a wait say nothing a reader of the trace needs.
        if !event.is_kept() {
            return Ok(());
        }
        let stored;
        let event = match event {
            Event::Screenshot(shot) if shot.image.is_some() && shot.file.is_none() => {
                let mut shot = shot.clone();
                shot.file = Some(self.store_image(&shot)?);
                stored = Event::Screenshot(shot);
                &stored
            }
            other => other,
        };
        let mut line = event.to_json_line()?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|source| EventError::Write {
                path: self.path.clone(),
                source,
            })
    }
}

impl TraceWriter {
    /// The directory beside the trace that holds its images.
    pub fn images_dir(&self) -> PathBuf {
        let stem = self
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "trace".into());
        self.path.with_file_name(format!("{stem}.images"))
    }

    /// Writes a screenshot's image and returns its name relative to the
    /// trace's directory.
    fn store_image(&mut self, shot: &super::ScreenshotRecord) -> Result<String, EventError> {
        let dir = self.images_dir();
        std::fs::create_dir_all(&dir).map_err(|source| EventError::CreateDir {
            path: dir.clone(),
            source,
        })?;
        self.images += 1;
        let suffix = if shot.purpose == "step" {
            String::new()
        } else {
            format!("-{}", shot.purpose)
        };
        let mut name = format!("step-{}{suffix}.jpg", shot.step);
        if dir.join(&name).exists() {
            name = format!("step-{}{suffix}-{}.jpg", shot.step, self.images);
        }
        let file = dir.join(&name);
        let bytes = shot.image.as_deref().unwrap_or_default();
        std::fs::write(&file, bytes).map_err(|source| EventError::Write {
            path: file.clone(),
            source,
        })?;
        let folder = dir
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(format!("{folder}/{name}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_event_is_one_line_on_disk_at_once() {
        let dir = std::env::temp_dir().join(format!("webagent-trace-{}", std::process::id()));
        let mut writer = TraceWriter::create(&dir.join("sessions")).unwrap();
        writer
            .write(&Event::Text {
                content: "one\ntwo".into(),
            })
            .unwrap();
        writer
            .write(&Event::Error {
                error: "x".into(),
                fatal: false,
            })
            .unwrap();
        // Read while the writer is still open: nothing waits in a buffer.
        let text = std::fs::read_to_string(writer.path()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        let first: Event = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(
            first,
            Event::Text {
                content: "one\ntwo".into()
            }
        );
        assert!(writer
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .ends_with(".jsonl"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_screenshot_is_a_file_beside_the_trace_named_in_its_event() {
        let dir = std::env::temp_dir().join(format!("webagent-trace-img-{}", std::process::id()));
        let mut writer = TraceWriter::create(&dir).unwrap();
        let jpeg: std::sync::Arc<[u8]> = std::sync::Arc::from(&b"\xff\xd8\xffpicture"[..]);
        let shot = super::super::ScreenshotRecord {
            step: 3,
            url: "http://a.test/".into(),
            purpose: "step".into(),
            sent: true,
            width: 1024,
            height: 640,
            marks: Vec::new(),
            masked: 0,
            capture_ms: 12.5,
            tokens: 765,
            file: None,
            image: Some(jpeg),
        };
        writer.write(&Event::Screenshot(shot)).unwrap();
        let text = std::fs::read_to_string(writer.path()).unwrap();
        assert!(
            !text.contains("picture"),
            "no image bytes in the trace: {text}"
        );
        let event: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(event["type"], "screenshot");
        let name = event["file"].as_str().unwrap();
        assert!(name.ends_with(".images/step-3.jpg"), "{name}");
        let stored = std::fs::read(dir.join(name)).unwrap();
        assert_eq!(stored, b"\xff\xd8\xffpicture");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
