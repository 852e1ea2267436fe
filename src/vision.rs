//! Seeing the page: the picture a model that reads images gets with each
//! step, and the person sees in the workbench's page pane.
//!
//! A [`Screenshot`] is the viewport (or one element, or the whole page) as
//! a JPEG that Chromium scaled and encoded itself, with the boxes of the
//! listed elements drawn on it as numbered marks ([`Mark`]). This module
//! holds the types every part shares and the rules that need no browser:
//! which models take images ([`accepts_images`]), what an image costs in
//! the prompt ([`image_tokens`]), and the data URL it travels in. The
//! capture itself is [`crate::browser::shot`].

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::actions::Target;
use crate::secrets::SecretValue;

/// The image width when none is configured (`llm.image_width` of the
/// built-in defaults): enough to read a page's labels, and four
/// 512-pixel tiles at a 1280×800 viewport.
pub fn default_image_width() -> u32 {
    crate::defaults::number(&["llm", "image_width"]) as u32
}

/// The narrowest and widest image `llm.image_width` accepts.
pub const IMAGE_WIDTH_RANGE: std::ops::RangeInclusive<u32> = 256..=4096;

/// When the model is sent a picture of the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VisionMode {
    /// For models known to read images ([`accepts_images`]); the first
    /// refusal of an image turns it off for the rest of the run.
    #[default]
    Auto,
    /// Always, whatever the model's name (a model the list does not know).
    Always,
    /// Never: the model reads text only.
    Never,
}

impl VisionMode {
    /// The word used in config files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            VisionMode::Auto => "auto",
            VisionMode::Always => "always",
            VisionMode::Never => "never",
        }
    }

    /// Whether a run with `model` starts with pictures.
    pub fn enabled_for(self, model: &str) -> bool {
        match self {
            VisionMode::Auto => accepts_images(model),
            VisionMode::Always => true,
            VisionMode::Never => false,
        }
    }
}

impl fmt::Display for VisionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for VisionMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(VisionMode::Auto),
            "always" | "on" => Ok(VisionMode::Always),
            "never" | "off" => Ok(VisionMode::Never),
            other => Err(format!(
                "`{other}` is not a vision mode: use auto, always or never"
            )),
        }
    }
}

/// Parts of model names that read images. A name matches when it
/// contains one of them, case ignored. The list is kept short and sure;
/// `llm.vision: always` covers a model it misses.
pub const VISION_MODEL_PATTERNS: &[&str] = &[
    "gpt-4o",
    "gpt-4.1",
    "gpt-4-turbo",
    "gpt-4-vision",
    "gpt-5",
    "claude",
    "gemini",
    "gemma-3",
    "gemma3",
    "llava",
    "bakllava",
    "pixtral",
    "qwen-vl",
    "qwen2-vl",
    "qwen2.5-vl",
    "qwen2.5vl",
    "qwen3-vl",
    "internvl",
    "minicpm-v",
    "moondream",
    "vision",
];

/// Whether a model of this name is known to read images.
pub fn accepts_images(model: &str) -> bool {
    let model = model.to_ascii_lowercase();
    VISION_MODEL_PATTERNS.iter().any(|p| model.contains(p))
}

/// Whether a server's error text says it cannot take images (the model
/// reads text only, or the server was built without image support).
/// Only asked when the refused request carried an image.
pub fn says_images_unsupported(message: &str) -> bool {
    let text = message.to_ascii_lowercase();
    const PHRASES: &[&str] = &[
        "image_url",
        "image url",
        "image input",
        "images are not",
        "image is not supported",
        "does not support image",
        "doesn't support image",
        "not support image",
        "no image support",
        "multi-modal",
        "content must be a string",
        "mmproj",
    ];
    // Whole words only: "provisioned" is not about vision.
    let words = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| matches!(w, "vision" | "multimodal" | "images"));
    words || PHRASES.iter().any(|p| text.contains(p))
}

/// The prompt tokens one image is counted as: OpenAI's tile rule for a
/// detailed image (scaled to fit 2048×2048, then down to 768 on its short
/// side, 170 tokens per 512-pixel tile plus 85). Other providers count
/// differently, mostly lower; the estimate only has to keep a prompt
/// inside `llm.context_window`.
pub fn image_tokens(width: u32, height: u32) -> u64 {
    if width == 0 || height == 0 {
        return 0;
    }
    let (mut w, mut h) = (f64::from(width), f64::from(height));
    let fit = (2048.0 / w.max(h)).min(1.0);
    w *= fit;
    h *= fit;
    let short = (768.0 / w.min(h)).min(1.0);
    w *= short;
    h *= short;
    let tiles = (w / 512.0).ceil() * (h / 512.0).ceil();
    170 * tiles as u64 + 85
}

/// Which part of the page a screenshot shows.
#[derive(Debug, Clone, PartialEq)]
pub enum ShotRegion {
    /// What the viewport shows now.
    Viewport,
    /// The whole scrollable page (clipped to a maximum height).
    FullPage,
    /// One element's box.
    Element(Target),
}

/// What a screenshot is asked to be.
#[derive(Debug, Clone, PartialEq)]
pub struct ShotRequest {
    /// The part of the page.
    pub region: ShotRegion,
    /// The image's width in pixels; the page is scaled down to it (never
    /// up).
    pub width: u32,
    /// Draw the listed elements' boxes and indices (viewport only).
    pub marks: bool,
    /// Values that must not show: visible text fields holding one are
    /// blanked in the picture. Whoever asks leaves it empty: the secrets'
    /// boundary (`environment::Masked`) fills it on the way down.
    pub secrets: Vec<SecretValue>,
    /// Encode a PNG (lossless, larger) rather than a JPEG.
    pub png: bool,
    /// The index drawn on each listed element, by its index in the page,
    /// for someone who numbers the elements their own way (a named
    /// session's workbench); the marks come back with these indices. An
    /// element it does not name is drawn with the page's index.
    pub labels: HashMap<usize, usize>,
}

impl ShotRequest {
    /// The picture of a step: the viewport, marked, `width` wide.
    pub fn step(width: u32) -> Self {
        ShotRequest {
            region: ShotRegion::Viewport,
            width,
            marks: true,
            secrets: Vec::new(),
            png: false,
            labels: HashMap::new(),
        }
    }
}

/// One listed element's box as drawn on a screenshot, in the image's
/// pixels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    /// The element's index in the listing.
    pub index: usize,
    /// Left edge.
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
    /// New since the previous observation (drawn in the `new_element`
    /// colour).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub new: bool,
}

/// Why an environment gave no picture of the page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShotError {
    /// There is no page to take a picture of (a scripted environment).
    #[error("this session takes no pictures")]
    NoPictures,
    /// The capture failed; the browser's reason, secrets masked.
    #[error("{0}")]
    Failed(String),
}

/// A captured picture of the page.
#[derive(Clone, PartialEq)]
pub struct Screenshot {
    /// The encoded image (JPEG, or PNG for a file the person asked for).
    pub image: Arc<[u8]>,
    /// `image/jpeg` or `image/png`.
    pub mime: &'static str,
    /// The image's width in pixels.
    pub width: u32,
    /// The image's height in pixels.
    pub height: u32,
    /// Image pixels per CSS pixel.
    pub scale: f64,
    /// The marks drawn on it.
    pub marks: Vec<Mark>,
    /// Text fields blanked because they showed a secret.
    pub masked: usize,
    /// Milliseconds from asking to having the encoded image.
    pub capture_ms: f64,
}

// The bytes would flood a debug line.
impl fmt::Debug for Screenshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Screenshot")
            .field("bytes", &self.image.len())
            .field("mime", &self.mime)
            .field("width", &self.width)
            .field("height", &self.height)
            .field("scale", &self.scale)
            .field("marks", &self.marks.len())
            .field("masked", &self.masked)
            .field("capture_ms", &self.capture_ms)
            .finish()
    }
}

impl Screenshot {
    /// The image as a `data:` URL, the form chat-completions servers take.
    pub fn data_url(&self) -> String {
        format!(
            "data:{};base64,{}",
            self.mime,
            base64::engine::general_purpose::STANDARD.encode(&self.image)
        )
    }

    /// The prompt tokens it is counted as ([`image_tokens`]).
    pub fn tokens(&self) -> u64 {
        image_tokens(self.width, self.height)
    }

    /// The file extension of its format.
    pub fn extension(&self) -> &'static str {
        if self.mime == "image/png" {
            "png"
        } else {
            "jpg"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_knows_vision_models_and_leaves_the_rest_text_only() {
        for model in [
            "gpt-4o-mini",
            "openai/gpt-4.1",
            "claude-sonnet-4",
            "gemini-2.5-flash",
            "llava:13b",
            "Qwen2.5-VL-7B-Instruct",
            "llama-3.2-11b-vision",
        ] {
            assert!(VisionMode::Auto.enabled_for(model), "{model}");
        }
        for model in [
            "qwen2.5-7b-instruct",
            "deepseek-chat",
            "test-model",
            "llama3.1",
        ] {
            assert!(!VisionMode::Auto.enabled_for(model), "{model}");
        }
        assert!(VisionMode::Always.enabled_for("test-model"));
        assert!(!VisionMode::Never.enabled_for("gpt-4o"));
    }

    #[test]
    fn modes_parse_from_their_words_and_refuse_others() {
        assert_eq!("Always".parse::<VisionMode>(), Ok(VisionMode::Always));
        assert_eq!("off".parse::<VisionMode>(), Ok(VisionMode::Never));
        assert!("sometimes"
            .parse::<VisionMode>()
            .unwrap_err()
            .contains("auto, always or never"));
    }

    #[test]
    fn image_refusals_are_told_from_other_bad_requests() {
        assert!(says_images_unsupported(
            "Invalid content type. image_url is only supported by certain models."
        ));
        assert!(says_images_unsupported(
            "this model does not support image input"
        ));
        assert!(says_images_unsupported(
            "llama-server: image input is not supported - hint: if this is unexpected, you may need to provide the mmproj"
        ));
        assert!(!says_images_unsupported("maximum context length exceeded"));
        assert!(!says_images_unsupported("provisioned throughput exceeded"));
        assert!(!says_images_unsupported("tool_choice is not supported"));
    }

    #[test]
    fn images_cost_tiles_as_openai_counts_them() {
        // 1024×640: 2×2 tiles.
        assert_eq!(image_tokens(1024, 640), 765);
        // 512×320: one tile.
        assert_eq!(image_tokens(512, 320), 255);
        // A tall full page is scaled to fit 2048 first.
        assert_eq!(image_tokens(1024, 8000), image_tokens(262, 2048));
        assert_eq!(image_tokens(0, 10), 0);
    }

    #[test]
    fn a_screenshot_travels_as_a_data_url() {
        let shot = Screenshot {
            image: Arc::from(&b"\xff\xd8\xff"[..]),
            mime: "image/jpeg",
            width: 10,
            height: 10,
            scale: 1.0,
            marks: Vec::new(),
            masked: 0,
            capture_ms: 0.0,
        };
        assert_eq!(shot.data_url(), "data:image/jpeg;base64,/9j/");
        assert_eq!(shot.extension(), "jpg");
    }
}
