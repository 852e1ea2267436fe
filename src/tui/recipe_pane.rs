//! The recipe a recording is growing, shown live in place of the sitemap
//! tree (of the reflection while the page pane is shown): the person sees
//! each step land as the line a replay will run.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use super::state::{AppState, Pane};
use super::widgets::pane_block;

/// Draws the recording's recipe, its end in view.
pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let Some(recording) = &state.recording else {
        return;
    };
    let theme = &state.theme;
    let steps = recording.steps().len();
    let title = format!(
        "Recording {} · {}",
        recording.name(),
        crate::words::counted(steps, "step", "steps")
    );
    let block = pane_block(title, Pane::Sitemap, state);
    let height = usize::from(area.height.saturating_sub(2));
    let lines: Vec<Line> = match recording.source(Some(&state.sitemaps)) {
        None => vec![
            Line::from(Span::styled(
                "act on the page: each click, fill, choice and key becomes a step here",
                theme.muted(),
            )),
            Line::from(Span::styled(
                ":record stop saves it; :record undo, goal N TEXT and rename OLD NEW edit it",
                theme.muted(),
            )),
        ],
        Some(source) => {
            // The header comments say what every recipe says; the body is
            // what the person is making.
            let body: Vec<&str> = source
                .lines()
                .skip_while(|l| l.starts_with("//") || l.is_empty())
                .collect();
            // Lines wrap (a step's locators are long): as many of the
            // last lines as fit, wrapped, are shown.
            let width = usize::from(area.width.saturating_sub(2)).max(1);
            let mut rows = 0;
            let start = body
                .iter()
                .rposition(|line| {
                    rows += line.chars().count().max(1).div_ceil(width);
                    rows > height
                })
                .map_or(0, |at| at + 1);
            body[start..]
                .iter()
                .map(|l| Line::from(Span::styled(l.to_string(), theme.text())))
                .collect()
        }
    };
    let text = Paragraph::new(lines)
        .block(block)
        .wrap(Wrap { trim: false });
    frame.render_widget(text, area);
}
