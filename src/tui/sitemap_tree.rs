//! The sitemap tree of the site being worked on, with the current page
//! marked, so the person sees where the agent is in the site's map.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::sitemap::Sitemap;

use super::state::{AppState, Pane};
use super::widgets::{pane_block, row_style};

/// One page of the tree as drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeRow {
    /// Indentation plus the last path segment (`/` for the root).
    pub label: String,
    /// The page's title.
    pub title: String,
    /// Its access flags, as the model reads them (` [auth,admin]`).
    pub flags: &'static str,
    /// Whether the browser is on this page now.
    pub current: bool,
}

/// The sitemap for the current page: the one whose origin matches, else
/// the one without an origin.
pub fn current_sitemap(state: &AppState) -> Option<&Sitemap> {
    state
        .sitemaps
        .for_url(&state.status.url)
        .or_else(|| state.sitemaps.iter().next())
        .map(|s| s.as_ref())
}

/// The tree's rows in tree order.
pub fn rows(state: &AppState) -> Vec<TreeRow> {
    let Some(sitemap) = current_sitemap(state) else {
        return Vec::new();
    };
    let current = sitemap
        .resolve(&state.status.url)
        .map(|r| r.pattern.to_string());
    sitemap
        .pages()
        .map(|page| {
            let segment = page
                .pattern
                .rsplit('/')
                .find(|s| !s.is_empty())
                .unwrap_or("/");
            TreeRow {
                label: format!("{}{}", "  ".repeat(page.depth), segment),
                title: page.node.title.clone(),
                flags: page.node.access_flags(),
                current: current.as_deref() == Some(page.pattern),
            }
        })
        .collect()
}

/// Draws the sitemap pane.
pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let theme = &state.theme;
    let tree = rows(state);
    let title = match current_sitemap(state).and_then(|s| s.source()) {
        Some(path) => format!(
            "Sitemap {}",
            path.file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
        ),
        None => "Sitemap".to_string(),
    };
    let block = pane_block(title, Pane::Sitemap, state);
    let height = usize::from(area.height.saturating_sub(2));
    let lines: Vec<Line> = if tree.is_empty() {
        vec![Line::from(Span::styled(
            "no sitemap loaded (--sitemap FILE)",
            theme.muted(),
        ))]
    } else {
        // Unless the person is browsing the tree, keep the current page
        // in view as the agent moves around the site.
        let start = match tree.iter().position(|r| r.current) {
            Some(at) if state.focus != Pane::Sitemap && at >= height => {
                (at + 1 - height / 2 - 1).min(tree.len().saturating_sub(height))
            }
            _ => state.sitemap_view.offset.min(tree.len()),
        };
        let end = (start + height).min(tree.len());
        tree[start..end]
            .iter()
            .enumerate()
            .map(|(i, row)| {
                let selected =
                    start + i == state.sitemap_view.cursor && state.focus == Pane::Sitemap;
                let (marker, base) = if row.current {
                    (
                        "▶ ",
                        theme.fg(theme.palette.accent).add_modifier(Modifier::BOLD),
                    )
                } else {
                    ("  ", Style::default().fg(theme.palette.text))
                };
                let mut spans = vec![
                    Span::styled(
                        format!("{marker}{}", row.label),
                        row_style(selected, theme, base),
                    ),
                    Span::styled(
                        format!("  {}", row.title),
                        row_style(selected, theme, theme.muted()),
                    ),
                ];
                if !row.flags.is_empty() {
                    spans.push(Span::styled(row.flags, theme.fg(theme.palette.warn)));
                }
                Line::from(spans)
            })
            .collect()
    };
    frame.render_widget(Paragraph::new(lines).block(block), area);
}
