//! Screenshots of a tab for a model that reads images and for the person:
//! the viewport (or one element, or the whole page) with the listed
//! elements' boxes and indices drawn on it, secrets blanked.
//!
//! Chromium does the expensive part: `Page.captureScreenshot` with a clip
//! whose `scale` makes the image the asked width, encoded as JPEG in the
//! browser, so no pixel is touched in Rust on the way to the model. The
//! marks are drawn by `scripts/marks.js` in webagent's isolated world, in a
//! layer that cannot move anything on the page (see the script), and removed
//! right after the capture, whatever its outcome, so the next action finds
//! the page as it was.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, CaptureScreenshotParams, Viewport,
};
use serde::Deserialize;
use serde_json::json;

use super::error::BrowserError;
use super::scripts::MARKS_JS;
use super::tab::Tab;
use crate::actions::Target;
use crate::dom::PageState;
use crate::secrets::SecretValue;
use crate::vision::{Mark, Screenshot, ShotRegion, ShotRequest};

/// JPEG quality: labels and small text stay legible, a 1024×640 viewport
/// stays near 100 kB.
const JPEG_QUALITY: i64 = 75;

/// A full-page picture stops this far down (CSS pixels): a very long page
/// would be an image no model reads whole.
const FULL_PAGE_MAX_HEIGHT: f64 = 16_384.0;

/// The colours of the marks, `#rrggbb`: the element listing's own (the
/// built-in theme's `accent` for listed elements, `new_element` for those
/// new since the previous observation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkColors {
    /// Elements listed before.
    pub listed: String,
    /// Elements new since the previous observation (`*` in the listing).
    pub fresh: String,
}

impl Default for MarkColors {
    fn default() -> Self {
        MarkColors {
            listed: "#88c0d0".into(),
            fresh: "#a3be8c".into(),
        }
    }
}

/// What `marks.js` reports.
#[derive(Debug, Deserialize)]
struct Prepared {
    vw: f64,
    vh: f64,
    sx: f64,
    sy: f64,
    pw: f64,
    ph: f64,
    marks: Vec<RawMark>,
    masked: usize,
    clip: Option<Rect>,
    error: Option<String>,
}

#[derive(Debug, Deserialize)]
struct RawMark {
    i: usize,
    x: f64,
    y: f64,
    w: f64,
    h: f64,
    n: bool,
}

#[derive(Debug, Clone, Copy, Deserialize)]
struct Rect {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

/// Takes a screenshot of `tab` as `request` says. `page` is the latest
/// observation of the tab: its elements are the marks, and index targets
/// refer to it. The image is JPEG unless the request asks for a PNG (a
/// file the person asked for).
pub async fn capture(
    tab: &Tab,
    page: Option<&PageState>,
    request: &ShotRequest,
    colors: &MarkColors,
) -> Result<Screenshot, BrowserError> {
    let png = request.png;
    let started = Instant::now();
    let viewport = request.region == ShotRegion::Viewport;
    let clip = match &request.region {
        ShotRegion::Element(Target::Index { index }) => {
            let Some(page) = page else {
                return Err(BrowserError::Script(
                    "an index needs an observation of the page first".into(),
                ));
            };
            let rect = element_box(tab, page.observation, index.0).await?;
            json!({"rect": rect})
        }
        ShotRegion::Element(Target::Selector { selector }) => {
            json!({"selector": selector.as_str()})
        }
        _ => serde_json::Value::Null,
    };
    let marks = request.marks && viewport && page.is_some();
    let (items, boxes) = match page {
        Some(page) if marks => listed_boxes(tab, page, &request.labels).await,
        _ => (Vec::new(), Vec::new()),
    };
    // Whether each mark, by the index drawn on it, is new.
    let fresh: serde_json::Map<String, serde_json::Value> = page
        .into_iter()
        .flat_map(|p| &p.elements)
        .filter(|e| e.is_new)
        .map(|e| (label(&request.labels, e.index.0).to_string(), json!(true)))
        .collect();
    let options = json!({
        "seq": page.map_or(0, |p| p.observation),
        "items": items,
        "boxes": boxes,
        "fresh": fresh,
        "marks": marks,
        "secrets": request.secrets.iter().map(SecretValue::expose).collect::<Vec<_>>(),
        "colors": {"listed": colors.listed, "fresh": colors.fresh},
        "clip": clip,
    });
    let expression = format!(
        "(globalThis.__webagentMarker = globalThis.__webagentMarker || {}).prepare({options})",
        MARKS_JS.trim_end().trim_end_matches(';')
    );
    let value = tab.eval(&expression).await?;
    let prepared_at = started.elapsed();
    let prepared: Prepared = serde_json::from_value(value)
        .map_err(|e| BrowserError::Decode(format!("the screenshot preparation: {e}")))?;
    let shot = shoot(tab, &prepared, request, png).await;
    tracing::debug!(
        prepare_ms = prepared_at.as_secs_f64() * 1000.0,
        capture_ms = (started.elapsed() - prepared_at).as_secs_f64() * 1000.0,
        marks = prepared.marks.len(),
        "screenshot"
    );
    // The layer goes whatever the capture did.
    if !prepared.marks.is_empty() || prepared.masked > 0 {
        if let Err(error) = tab
            .eval("globalThis.__webagentMarker && globalThis.__webagentMarker.clear()")
            .await
        {
            tracing::debug!(%error, "removing the screenshot marks");
        }
    }
    let (image, width, height, scale) = shot?;
    let marks = prepared
        .marks
        .iter()
        .map(|m| Mark {
            index: m.i,
            x: ((m.x - prepared.sx) * scale).max(0.0).round() as u32,
            y: ((m.y - prepared.sy) * scale).max(0.0).round() as u32,
            width: (m.w * scale).round() as u32,
            height: (m.h * scale).round() as u32,
            new: m.n,
        })
        .collect();
    Ok(Screenshot {
        image,
        mime: if png { "image/png" } else { "image/jpeg" },
        width,
        height,
        scale,
        marks,
        masked: prepared.masked,
        capture_ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}

/// An element's box `{x, y, width, height}` in top-level viewport
/// coordinates: measured in the world that lists it, moved by its frame's
/// place when that is a frame of another origin.
async fn element_box(
    tab: &Tab,
    observation: u64,
    index: usize,
) -> Result<serde_json::Value, BrowserError> {
    let (slot, _, _) = tab.element_route(observation, index).await?;
    let mut rect = tab
        .eval_on_index(
            observation,
            crate::dom::ElementIndex(index),
            "(el, a, h) => h.topRect(el)",
            serde_json::Value::Null,
        )
        .await?;
    if let Some(slot) = slot {
        let (ox, oy) = tab.frame_origin(slot).await?;
        for (key, by) in [("x", ox), ("y", oy)] {
            let moved = rect.get(key).and_then(|v| v.as_f64()).unwrap_or(0.0) + by;
            rect[key] = json!(moved);
        }
    }
    Ok(rect)
}

/// The index drawn on the page's element `index`.
fn label(labels: &HashMap<usize, usize>, index: usize) -> usize {
    labels.get(&index).copied().unwrap_or(index)
}

/// Where the marks of `page` go: `[label, own index]` pairs of the
/// elements the top document lists itself (measured by `marks.js`), and
/// the boxes of those inside frames of another origin, measured in their
/// frame and moved by its place. A frame that cannot be measured goes
/// unmarked; the picture is still worth having.
async fn listed_boxes(
    tab: &Tab,
    page: &PageState,
    labels: &HashMap<usize, usize>,
) -> (Vec<[usize; 2]>, Vec<serde_json::Value>) {
    let mut top = Vec::new();
    let mut framed: std::collections::BTreeMap<usize, (u64, Vec<[usize; 2]>)> =
        std::collections::BTreeMap::new();
    for element in &page.elements {
        let index = element.index.0;
        let drawn = label(labels, index);
        match tab.element_route(page.observation, index).await {
            Ok((None, _, local)) => top.push([drawn, local]),
            Ok((Some(slot), seq, local)) => framed
                .entry(slot)
                .or_insert_with(|| (seq, Vec::new()))
                .1
                .push([drawn, local]),
            Err(error) => tracing::debug!(%error, index, "no mark for an element"),
        }
    }
    let mut boxes = Vec::new();
    for (slot, (seq, pairs)) in framed {
        let origin = match tab.frame_origin(slot).await {
            Ok(origin) => origin,
            Err(error) => {
                tracing::debug!(%error, slot, "a frame's elements go unmarked");
                continue;
            }
        };
        let locals: Vec<usize> = pairs.iter().map(|p| p[1]).collect();
        let expression = format!(
            "{locals:?}.map((l) => {{ const r = JSON.parse(globalThis.__webagentObserver.call({seq}, l, (el, a, h) => h.topRect(el), null)); return r.ok ? r.value : null; }})"
        );
        let measured = match tab
            .eval_in(Some(slot), &expression, "measuring a frame's marks")
            .await
        {
            Ok((serde_json::Value::Array(rects), _)) => rects,
            Ok(_) => continue,
            Err(error) => {
                tracing::debug!(%error, slot, "a frame's elements go unmarked");
                continue;
            }
        };
        for (pair, rect) in pairs.iter().zip(measured) {
            let field = |key: &str| rect.get(key).and_then(|v| v.as_f64());
            if let (Some(x), Some(y), Some(width), Some(height)) =
                (field("x"), field("y"), field("width"), field("height"))
            {
                boxes.push(json!({
                    "i": pair[0],
                    "x": x + origin.0,
                    "y": y + origin.1,
                    "width": width,
                    "height": height,
                }));
            }
        }
    }
    (top, boxes)
}

/// The capture itself: the clip for the region, scaled to the width.
async fn shoot(
    tab: &Tab,
    prepared: &Prepared,
    request: &ShotRequest,
    png: bool,
) -> Result<(Arc<[u8]>, u32, u32, f64), BrowserError> {
    if let Some(error) = &prepared.error {
        return Err(BrowserError::Script(error.clone()));
    }
    let (clip, beyond) = match (&request.region, prepared.clip) {
        (ShotRegion::Element(_), Some(rect)) => (rect, true),
        (ShotRegion::FullPage, _) => (
            Rect {
                x: 0.0,
                y: 0.0,
                w: prepared.pw.max(prepared.vw),
                h: prepared.ph.max(prepared.vh).min(FULL_PAGE_MAX_HEIGHT),
            },
            true,
        ),
        _ => (
            Rect {
                x: prepared.sx,
                y: prepared.sy,
                w: prepared.vw,
                h: prepared.vh,
            },
            false,
        ),
    };
    if clip.w < 1.0 || clip.h < 1.0 {
        return Err(BrowserError::Script(
            "the page has no size to capture".into(),
        ));
    }
    // Never enlarged: a small element stays its own size.
    let scale = (f64::from(request.width.max(1)) / clip.w).min(1.0);
    let mut params = CaptureScreenshotParams::builder()
        .clip(Viewport {
            x: clip.x,
            y: clip.y,
            width: clip.w,
            height: clip.h,
            scale,
        })
        .capture_beyond_viewport(beyond)
        .optimize_for_speed(true);
    params = if png {
        params.format(CaptureScreenshotFormat::Png)
    } else {
        params
            .format(CaptureScreenshotFormat::Jpeg)
            .quality(JPEG_QUALITY)
    };
    // A full page of a long document takes Chromium a while to paint.
    let limit = if beyond {
        tab.call_timeout().max(Duration::from_secs(30))
    } else {
        tab.call_timeout()
    };
    let shot = tab
        .with_timeout(
            "taking a screenshot",
            limit,
            tab.page().execute(params.build()),
        )
        .await?;
    let text: &str = shot.result.data.as_ref();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| BrowserError::Decode(format!("the screenshot's base64: {e}")))?;
    // The header says what Chromium made (a device scale factor or
    // rounding can differ from the clip's figures).
    let (width, height) = image::ImageReader::new(std::io::Cursor::new(&bytes))
        .with_guessed_format()
        .ok()
        .and_then(|reader| reader.into_dimensions().ok())
        .unwrap_or((
            (clip.w * scale).round().max(1.0) as u32,
            (clip.h * scale).round().max(1.0) as u32,
        ));
    let scale = f64::from(width) / clip.w;
    Ok((Arc::from(bytes), width, height, scale))
}
