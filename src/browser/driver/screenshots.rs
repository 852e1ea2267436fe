//! Pictures of the page: for the model (as a request asks, marks and
//! secrets handled by [`crate::browser::shot`]) and the `screenshot`
//! action's PNG file.

use serde_json::json;

use super::Driver;
use crate::actions::{ActionResult, FailureReason, Target};
use crate::browser::error::BrowserError;
use crate::browser::shot::{self, MarkColors};
use crate::vision::{Screenshot, ShotRegion, ShotRequest};

impl Driver {
    /// A picture of the page as last observed, as `request` asks.
    pub async fn screenshot(&mut self, request: &ShotRequest) -> Result<Screenshot, BrowserError> {
        // Boxed: the capture's state is large, and the futures of a run,
        // a recipe or an MCP call nest it on a thread's stack.
        Box::pin(shot::capture(
            &self.tab,
            self.last.as_ref(),
            request,
            &MarkColors::default(),
        ))
        .await
    }

    /// `screenshot`: the viewport, the whole page or one element at full
    /// size as a PNG, written where asked (else the screenshots directory),
    /// with text fields that show a secret covered like in the model's
    /// pictures.
    pub(super) async fn screenshot_file(
        &self,
        path: Option<&str>,
        full_page: bool,
        target: Option<&Target>,
    ) -> ActionResult {
        let region = match (target, full_page) {
            (Some(target), _) => ShotRegion::Element(target.clone()),
            (None, true) => ShotRegion::FullPage,
            (None, false) => ShotRegion::Viewport,
        };
        let request = ShotRequest {
            region,
            width: u32::MAX,
            marks: false,
            secrets: self.covered.values(),
            png: true,
            labels: std::collections::HashMap::new(),
        };
        let shot = match Box::pin(shot::capture(
            &self.tab,
            self.last.as_ref(),
            &request,
            &MarkColors::default(),
        ))
        .await
        {
            Ok(shot) => shot,
            Err(error) => {
                let reason = match error {
                    BrowserError::Script(_) => FailureReason::NotFound,
                    BrowserError::Timeout { .. } => FailureReason::Timeout,
                    _ => FailureReason::Unknown,
                };
                return ActionResult::fail(reason, format!("the screenshot failed: {error}"));
            }
        };
        let file = match path {
            Some(path) => std::path::PathBuf::from(path),
            None => self.exec.screenshot_dir.join(format!(
                "screenshot-{}.png",
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis())
                    .unwrap_or(0)
            )),
        };
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            if let Err(error) = std::fs::create_dir_all(dir) {
                return ActionResult::unknown(format!("creating {}: {error}", dir.display()));
            }
        }
        if let Err(error) = std::fs::write(&file, &shot.image) {
            return ActionResult::unknown(format!("writing {}: {error}", file.display()));
        }
        ActionResult::ok_with(json!({
            "path": file.to_string_lossy(),
            "bytes": shot.image.len(),
            "full_page": full_page,
            "width": shot.width,
            "height": shot.height,
        }))
    }
}
