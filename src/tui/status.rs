//! The status line (page, step, model, approval mode, tokens, what is
//! loaded) and the hint line below it, generated from the keymap.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::state::{AppState, BrowserStatus, LoadState, RunStatus};
use super::text::clip;
use super::theme::Theme;

/// Token counts the way people read them: `950`, `12.4k`, `1.2M`.
pub fn tokens_text(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// The status line's token figure: "12.4k tok", with "~" in front when
/// some of it is estimated from text length because the server sent no
/// count.
pub fn tokens_label(usage: &crate::events::TokenUsage) -> String {
    let mark = if usage.estimated { "~" } else { "" };
    format!("{mark}{} tok", tokens_text(usage.total_tokens))
}

fn run_word(state: &AppState) -> (&'static str, fn(&Theme) -> ratatui::style::Color) {
    if state.replay.is_some() {
        return ("REPLAY", |t| t.palette.accent);
    }
    match (&state.status.run, &state.status.browser) {
        (_, BrowserStatus::Failed(_)) => ("NO BROWSER", |t| t.palette.error),
        (_, BrowserStatus::Starting) => ("STARTING", |t| t.palette.warn),
        (RunStatus::Idle, _) => ("READY", |t| t.palette.ok),
        (RunStatus::Running, _) => ("RUNNING", |t| t.palette.accent),
        (RunStatus::Paused, _) => ("PAUSED", |t| t.palette.warn),
        (RunStatus::Stopping, _) => ("STOPPING", |t| t.palette.warn),
        (RunStatus::HandedOver { .. }, _) => ("YOUR TURN", |t| t.palette.warn),
        (RunStatus::Finished { success: true }, _) => ("DONE", |t| t.palette.ok),
        (RunStatus::Finished { success: false }, _) => ("ENDED", |t| t.palette.error),
    }
}

fn load_span(name: &str, state: &LoadState, theme: &Theme) -> Span<'static> {
    match state {
        LoadState::None => Span::styled(format!("{name} -"), theme.muted()),
        LoadState::Loaded(n) => Span::styled(format!("{name} {n}"), theme.fg(theme.palette.ok)),
        LoadState::Failed(_) => Span::styled(
            format!("{name} ERROR"),
            theme.fg(theme.palette.error).add_modifier(Modifier::BOLD),
        ),
    }
}

/// The first load error to show in full (sitemap, script or theme).
pub fn load_error(state: &AppState) -> Option<String> {
    let s = &state.status;
    if let LoadState::Failed(e) = &s.sitemaps {
        return Some(e.clone());
    }
    if let LoadState::Failed(e) = &s.scripts {
        return Some(e.clone());
    }
    s.theme_error.clone()
}

/// Draws the status line.
pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let theme = &state.theme;
    let s = &state.status;
    let (word, color) = run_word(state);
    let sep = || Span::styled(" │ ", theme.muted());
    let step = if s.max_steps > 0 {
        format!("step {}/{}", s.step, s.max_steps)
    } else {
        "step -".to_string()
    };
    let model = if s.model.is_empty() {
        "no model".to_string()
    } else {
        s.model.clone()
    };
    // Narrow terminals drop the model name and use short labels so the
    // step, mode, tokens and file health always fit in 80 columns.
    let narrow = area.width < 120;
    let url_width = if narrow {
        16
    } else {
        usize::from(area.width / 3)
    };
    let mut spans = vec![
        Span::styled(
            format!(" {word} "),
            Style::default()
                .fg(theme.palette.background)
                .bg(color(theme))
                .add_modifier(Modifier::BOLD),
        ),
        Span::raw(" "),
    ];
    if let RunStatus::HandedOver { reason } = &s.run {
        // Why the run waits, first, so it fits at 80 columns too.
        spans.push(Span::styled(
            format!("{} (H hands back) ", clip(reason, 40)),
            theme.fg(theme.palette.warn),
        ));
    }
    spans.extend([
        Span::styled(
            clip(
                if s.url.is_empty() {
                    "about:blank"
                } else {
                    &s.url
                },
                url_width,
            ),
            theme.fg(theme.palette.text),
        ),
        sep(),
        Span::styled(step, theme.fg(theme.palette.text)),
    ]);
    if let Some(wait) = &s.waiting {
        // How long the model has kept the step waiting, and which try.
        spans.push(sep());
        spans.push(Span::styled(
            if narrow {
                format!(
                    "model {}s {}/{}",
                    wait.seconds, wait.attempt, wait.max_attempts
                )
            } else {
                format!(
                    "model {} s, attempt {} of {}",
                    wait.seconds, wait.attempt, wait.max_attempts
                )
            },
            theme.fg(theme.palette.warn),
        ));
    }
    if !narrow {
        spans.push(sep());
        spans.push(Span::styled(model, theme.fg(theme.palette.text)));
    }
    spans.extend([
        sep(),
        Span::styled(
            if narrow {
                format!("ask {}", s.approval.as_str())
            } else {
                format!("approve {}", s.approval.as_str())
            },
            theme.fg(theme.palette.accent),
        ),
        sep(),
        Span::styled(tokens_label(&s.tokens), theme.fg(theme.palette.text)),
        sep(),
    ]);
    if let Some(cache) = s.cache {
        spans.push(Span::styled(
            format!("cache {}", cache.as_str()),
            theme.fg(theme.palette.accent),
        ));
        spans.push(sep());
    }
    spans.extend([
        load_span(if narrow { "map" } else { "sitemaps" }, &s.sitemaps, theme),
        Span::raw(" "),
        load_span(if narrow { "rcp" } else { "scripts" }, &s.scripts, theme),
        Span::raw(" "),
    ]);
    spans.push(match &s.theme_error {
        None => Span::styled(
            if narrow {
                state.theme.name.clone()
            } else {
                format!("theme {}", state.theme.name)
            },
            theme.muted(),
        ),
        Some(_) => Span::styled(
            if narrow { "thm ERROR" } else { "theme ERROR" },
            theme.fg(theme.palette.error).add_modifier(Modifier::BOLD),
        ),
    });
    if let Some(sign_in) = &s.sign_in {
        spans.push(sep());
        spans.push(Span::styled(
            sign_in.clone(),
            theme.fg(theme.palette.accent),
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// Draws the hint line: a load error or the latest notice first, then the
/// keys of the current context.
pub fn draw_hints(frame: &mut Frame, area: Rect, state: &AppState) {
    let theme = &state.theme;
    let mut spans: Vec<Span> = Vec::new();
    if let Some(error) = load_error(state) {
        spans.push(Span::styled(
            format!("{error}  "),
            theme.fg(theme.palette.error),
        ));
    } else if let Some(notice) = &state.status.notice {
        let color = if notice.error {
            theme.palette.error
        } else {
            theme.palette.ok
        };
        spans.push(Span::styled(format!("{}  ", notice.text), theme.fg(color)));
    }
    for (keys, description) in state.keymap.hints_layered(&state.key_layers()) {
        spans.push(Span::styled(keys, theme.key()));
        spans.push(Span::styled(format!(" {description}  "), theme.muted()));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

#[cfg(test)]
mod tests {
    use super::{tokens_label, tokens_text};

    #[test]
    fn token_counts_read_short() {
        assert_eq!(tokens_text(950), "950");
        assert_eq!(tokens_text(12_400), "12.4k");
        assert_eq!(tokens_text(1_250_000), "1.2M");
        let mut usage = crate::events::TokenUsage {
            total_tokens: 12_400,
            ..Default::default()
        };
        assert_eq!(tokens_label(&usage), "12.4k tok");
        usage.estimated = true;
        assert_eq!(tokens_label(&usage), "~12.4k tok");
    }
}
