//! Text fitted to columns: cut to a width with a mark, wrapped into rows
//! with its styles kept, control characters made harmless. Pure helpers
//! for the panes, the update and the replay alike.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Cuts `text` to at most `width` characters, marking the cut with `…`.
pub fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out: String = text.chars().take(width - 1).collect();
    out.push('…');
    out
}

/// Tabs as spaces and other control characters dropped: the terminal would
/// otherwise move the cursor instead of showing them.
pub fn printable(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            '\t' => out.push_str("    "),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

fn char_width(c: char) -> usize {
    let mut buffer = [0u8; 4];
    Span::raw(&*c.encode_utf8(&mut buffer)).width()
}

/// Splits a styled line into rows of at most `width` columns, breaking
/// after the last space of a row when there is one, else mid-word.
pub fn wrap_line(line: Line<'static>, width: usize) -> Vec<Line<'static>> {
    if width == 0 || line.width() <= width {
        return vec![line];
    }
    let mut rows = Vec::new();
    let mut row: Vec<(char, Style)> = Vec::new();
    let mut row_width = 0;
    for span in &line.spans {
        let style = line.style.patch(span.style);
        for c in span.content.chars() {
            let w = char_width(c);
            if row_width + w > width && !row.is_empty() {
                let rest = match row.iter().rposition(|(c, _)| *c == ' ') {
                    Some(space) => row.split_off(space + 1),
                    None => Vec::new(),
                };
                rows.push(styled_row(&row));
                row = rest;
                row_width = row.iter().map(|(c, _)| char_width(*c)).sum();
            }
            row.push((c, style));
            row_width += w;
        }
    }
    if !row.is_empty() {
        rows.push(styled_row(&row));
    }
    rows
}

/// One row of styled characters as spans, one span per run of a style.
fn styled_row(row: &[(char, Style)]) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut run = String::new();
    let mut run_style = None;
    for &(c, style) in row {
        if run_style.is_some_and(|s| s != style) {
            spans.push(Span::styled(
                std::mem::take(&mut run),
                run_style.unwrap_or(style),
            ));
        }
        run_style = Some(style);
        run.push(c);
    }
    if let Some(style) = run_style {
        spans.push(Span::styled(run, style));
    }
    Line::from(spans)
}
