//! Where everything sits on the screen, as pure functions of the terminal
//! area. Drawing places the panes and dialogs with them; the update asks
//! the same functions how many rows a list shows, how far a dialog
//! scrolls and how big the page picture is, so no size is worked out
//! twice and the update never calls drawing code.

use ratatui::layout::{Constraint, Layout, Margin, Rect};

/// Where each pane goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    /// The element listing (left, top).
    pub elements: Rect,
    /// The reflection (right, top).
    pub reflection: Rect,
    /// The sitemap tree (right, below the reflection); empty while the
    /// page pane is shown.
    pub sitemap: Rect,
    /// The page pane (right, above the reflection); empty while hidden.
    pub page: Rect,
    /// The action log (below both).
    pub log: Rect,
    /// The task input.
    pub task: Rect,
    /// The status line.
    pub status: Rect,
    /// The key hints, or the `:` command line while it is open.
    pub hints: Rect,
}

/// The layout for a terminal area, the page pane hidden.
pub fn areas(area: Rect) -> Areas {
    areas_with(area, false)
}

/// The layout with the page pane shown or not. Shown, it takes the top of
/// the right column and the sitemap tree gives way.
pub fn areas_with(area: Rect, page: bool) -> Areas {
    let [main, task, status, hints] = Layout::vertical([
        Constraint::Min(6),
        Constraint::Length(3),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let [top, log] = Layout::vertical([Constraint::Percentage(62), Constraint::Min(4)]).areas(main);
    let [elements, right] =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(top);
    let (page, reflection, sitemap) = if page {
        let [page, reflection] =
            Layout::vertical([Constraint::Percentage(65), Constraint::Percentage(35)]).areas(right);
        (page, reflection, Rect::default())
    } else {
        let [reflection, sitemap] =
            Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(right);
        (Rect::default(), reflection, sitemap)
    };
    Areas {
        elements,
        reflection,
        sitemap,
        page,
        log,
        task,
        status,
        hints,
    }
}

/// Where the debugger sits while a recipe is debugged: (its source, its
/// variables). It takes the right column below the page pane when that
/// is shown, else the whole right column (reflection and sitemap).
pub fn debugger_areas(area: Rect, page: bool) -> (Rect, Rect) {
    let a = areas_with(area, page);
    let column = if page {
        a.reflection
    } else {
        a.reflection.union(a.sitemap)
    };
    let [source, vars] =
        Layout::vertical([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(column);
    (source, vars)
}

/// Rows a bordered pane of `area` shows (at least one).
pub fn rows_inside(area: Rect) -> usize {
    usize::from(area.height.saturating_sub(2)).max(1)
}

/// The cells the picture gets inside a page pane of `area`.
pub fn picture_cells(area: Rect) -> (u16, u16) {
    (area.width.saturating_sub(2), area.height.saturating_sub(2))
}

/// The cells the picture gets on a terminal of `area` with the page pane
/// shown.
pub fn page_picture_cells(area: Rect) -> (u16, u16) {
    picture_cells(areas_with(area, true).page)
}

/// A rectangle of `percent_x` by `percent_y` of `area`, centred, but never
/// smaller than `min` (columns, rows) where the area allows.
pub fn centered(area: Rect, percent_x: u16, percent_y: u16, min: (u16, u16)) -> Rect {
    // u32 so a very wide terminal cannot overflow the percentage.
    let scale = |length: u16, percent: u16| {
        u16::try_from(u32::from(length) * u32::from(percent) / 100).unwrap_or(length)
    };
    let width = scale(area.width, percent_x).max(min.0).min(area.width);
    let height = scale(area.height, percent_y).max(min.1).min(area.height);
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}

/// Where the approval dialog sits.
pub fn approval_area(area: Rect) -> Rect {
    centered(area, 80, 70, (60, 16))
}

/// Where the answer box of `ask_user` sits.
pub fn ask_area(area: Rect) -> Rect {
    centered(area, 70, 40, (50, 10))
}

/// Where the help sits on a `size` terminal: (the whole dialog, its
/// text, its footer). Nearly the whole terminal, so its lines wrap as
/// little as they can; shared by drawing and scrolling.
pub fn help_layout(size: (u16, u16)) -> (Rect, Rect, Rect) {
    let area = centered(Rect::new(0, 0, size.0, size.1), 90, 90, (76, 20));
    let inner = area.inner(Margin::new(1, 1));
    // Its keys, scrolling included, wrap onto a second row at 80 columns.
    let [body, foot] = Layout::vertical([Constraint::Min(1), Constraint::Length(2)]).areas(inner);
    (area, body, foot)
}

/// How far the help can scroll: the last page shows its last line.
pub fn help_max_scroll(lines: usize, size: (u16, u16)) -> usize {
    let (_, body, _) = help_layout(size);
    lines.saturating_sub(usize::from(body.height))
}

/// Footer rows of the inspector: its keys wrap onto a second row at 80
/// columns.
const INSPECTOR_FOOTER_ROWS: u16 = 2;

/// Where the inspector sits on a `size` terminal: (the whole dialog, its
/// text, its footer). Shared by drawing and scrolling so a page is exactly
/// what is shown.
pub fn inspector_layout(size: (u16, u16)) -> (Rect, Rect, Rect) {
    let area = centered(Rect::new(0, 0, size.0, size.1), 90, 85, (70, 20));
    let inner = area.inner(Margin::new(1, 1));
    let [body, foot] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(INSPECTOR_FOOTER_ROWS),
    ])
    .areas(inner);
    (area, body, foot)
}

/// How far the inspector can scroll: the last page shows the last row.
pub fn inspector_max_scroll(rows: usize, size: (u16, u16)) -> usize {
    let (_, body, _) = inspector_layout(size);
    rows.saturating_sub(usize::from(body.height))
}

/// Where the sessions view sits: over the panes, above the status and
/// hint lines.
pub fn sessions_area(area: Rect) -> Rect {
    Rect {
        height: area.height.saturating_sub(2),
        ..area
    }
}

/// Inside the sessions view's border: the search line, the column
/// headings and the rows.
pub fn sessions_inside(inner: Rect) -> [Rect; 3] {
    Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(1),
    ])
    .areas(inner)
}

/// Rows the sessions list shows on a terminal of `size`: the view less its
/// border, search line and headings.
pub fn sessions_rows(size: (u16, u16)) -> usize {
    let area = sessions_area(Rect::new(0, 0, size.0, size.1));
    usize::from(area.height.saturating_sub(4)).max(1)
}

/// Where a terminal cell falls on the page picture, as fractions of its
/// width and height (the cell's centre), when it falls on it: the picture
/// fills `used` cells (it keeps its shape, so maybe fewer than the pane
/// has) from the top left of the page pane's inside on a `size` terminal.
pub fn picture_point(
    size: (u16, u16),
    used: (u16, u16),
    column: u16,
    row: u16,
) -> Option<(f64, f64)> {
    let pane = areas_with(Rect::new(0, 0, size.0, size.1), true).page;
    let inside = pane.inner(Margin::new(1, 1));
    let (across, down) = (column.checked_sub(inside.x)?, row.checked_sub(inside.y)?);
    if across >= used.0.min(inside.width) || down >= used.1.min(inside.height) {
        return None;
    }
    Some((
        (f64::from(across) + 0.5) / f64::from(used.0),
        (f64::from(down) + 0.5) / f64::from(used.1),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_on_the_picture_is_its_centre_as_fractions_and_a_cell_beside_it_is_none() {
        let size = (120, 40);
        let pane = areas_with(Rect::new(0, 0, 120, 40), true).page;
        let (x, y) = (pane.x + 1, pane.y + 1);
        assert_eq!(
            picture_point(size, (30, 8), x, y),
            Some((0.5 / 30.0, 0.5 / 8.0))
        );
        assert_eq!(
            picture_point(size, (30, 8), x + 29, y + 7),
            Some((29.5 / 30.0, 7.5 / 8.0))
        );
        // Past the picture's own cells (it keeps its shape), on the border,
        // and outside the pane.
        assert_eq!(picture_point(size, (30, 8), x + 30, y), None);
        assert_eq!(picture_point(size, (30, 8), x, y + 8), None);
        assert_eq!(picture_point(size, (30, 8), pane.x, y), None);
        assert_eq!(picture_point(size, (30, 8), 0, 0), None);
    }
}
