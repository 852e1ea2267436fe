//! The page pane's picture as the state holds it, and the rendering jobs
//! that fit it into the pane's cells: a service renders off the loop's
//! thread ([`PictureJob`] out, [`RenderedPicture`] back), newest wins.

use std::sync::Arc;

use ratatui_image::protocol::Protocol;

use crate::vision::{Mark, Screenshot};

/// What the pane knows of its picture.
#[derive(Debug, Default)]
pub struct PictureView {
    /// Whether the pane is shown.
    pub visible: bool,
    /// The latest picture of the page.
    pub shot: Option<Arc<Screenshot>>,
    /// The last job asked for, to drop the answers to older ones and to
    /// ask for nothing twice.
    pub requested: Option<PictureJobKey>,
    /// The picture as the terminal draws it, once a job came back.
    pub rendered: Option<RenderedPicture>,
    /// Whether the pane has the keyboard: keys type into the page's
    /// focused element. A click on the picture gives it; Ctrl+O, a click
    /// elsewhere, hiding the pane or a dialog takes it back.
    pub keyboard: bool,
}

/// What a rendering depends on: the picture, the cells it fills and the
/// element outlined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PictureJobKey {
    /// Which picture (numbered as they arrive).
    pub picture: u64,
    /// Cells across.
    pub columns: u16,
    /// Cells down.
    pub rows: u16,
    /// The listed element outlined.
    pub outline: Option<usize>,
}

/// Work for the picture service: fit `shot` into the cells, outline one
/// mark.
#[derive(Clone)]
pub struct PictureJob {
    /// What the result will be matched by.
    pub key: PictureJobKey,
    /// The picture.
    pub shot: Arc<Screenshot>,
    /// The mark to outline, and its colour.
    pub outline: Option<(Mark, [u8; 3])>,
}

impl std::fmt::Debug for PictureJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PictureJob")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

/// A picture encoded for the terminal at one size.
#[derive(Clone)]
pub struct RenderedPicture {
    /// The job it answers.
    pub key: PictureJobKey,
    /// The cells (or graphics escape) to draw.
    pub protocol: Protocol,
}

impl std::fmt::Debug for RenderedPicture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderedPicture")
            .field("key", &self.key)
            .field("area", &self.protocol.area())
            .finish()
    }
}
