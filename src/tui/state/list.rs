//! A cursor over a list and the window of it on screen: every list pane,
//! the sessions view and the scrolled texts share it.

/// A cursor in a list and the first row shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListView {
    /// The selected row.
    pub cursor: usize,
    /// The first visible row.
    pub offset: usize,
}

impl ListView {
    /// Moves the cursor to `target` (clamped to `len` rows) and scrolls so
    /// it stays within `height` visible rows.
    pub fn move_to(&mut self, target: usize, len: usize, height: usize) {
        self.cursor = if len == 0 { 0 } else { target.min(len - 1) };
        self.follow(len, height);
    }

    /// Keeps the cursor visible and the window inside the list (after a
    /// move, a resize or a shorter list).
    pub fn follow(&mut self, len: usize, height: usize) {
        let height = height.max(1);
        if len == 0 {
            self.cursor = 0;
            self.offset = 0;
            return;
        }
        self.cursor = self.cursor.min(len - 1);
        if self.cursor < self.offset {
            self.offset = self.cursor;
        } else if self.cursor >= self.offset + height {
            self.offset = self.cursor + 1 - height;
        }
        self.offset = self.offset.min(len.saturating_sub(height));
    }
}
