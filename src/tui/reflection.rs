//! The reflection of the current step: how the last step went, what the
//! model remembers, what it aims for next and the action it proposes. The
//! fields fill in while the answer streams, read from the partial JSON.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use super::app::{AppState, Pane, ReflectionView, RunStatus};
use super::draw::pane_block;

/// The value of a string field in JSON that may still be arriving: the
/// text after `"name":"` up to the closing quote or the end so far, with
/// escapes decoded. `None` until the field has begun.
pub fn partial_field(raw: &str, name: &str) -> Option<String> {
    let key = format!("\"{name}\"");
    let after_key = raw.find(&key)? + key.len();
    let rest = raw[after_key..].trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    let mut chars = rest.strip_prefix('"')?.chars();
    let mut out = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    if let Some(decoded) =
                        u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32)
                    {
                        out.push(decoded);
                    }
                }
                Some(other) => out.push(other),
                None => break,
            },
            c => out.push(c),
        }
    }
    Some(out)
}

impl ReflectionView {
    /// Adds streamed text and refreshes the fields it has reached.
    ///
    /// The agent streams the fields as readable `label: value` lines;
    /// a model that writes its JSON as plain text is read as JSON.
    pub fn push_stream(&mut self, text: &str) {
        self.raw.push_str(text);
        self.streaming = true;
        if !self.raw.trim_start().starts_with('{') {
            self.read_labelled();
            return;
        }
        for (name, field) in [
            ("evaluation_previous_goal", &mut self.evaluation),
            ("memory", &mut self.memory),
            ("next_goal", &mut self.next_goal),
        ] {
            if let Some(value) = partial_field(&self.raw, name) {
                *field = value;
            }
        }
    }
}

impl ReflectionView {
    /// Reads `evaluation: …`, `memory: …`, `next goal: …` lines; a line
    /// without a label continues the field above it.
    fn read_labelled(&mut self) {
        let mut current: Option<usize> = None;
        let mut fields = [String::new(), String::new(), String::new()];
        for line in self.raw.split('\n') {
            let labelled = [("evaluation:", 0), ("memory:", 1), ("next goal:", 2)]
                .iter()
                .find_map(|(label, at)| line.strip_prefix(label).map(|rest| (*at, rest)));
            match (labelled, current) {
                (Some((at, rest)), _) => {
                    current = Some(at);
                    fields[at] = rest.trim_start().to_string();
                }
                (None, Some(at)) => {
                    fields[at].push('\n');
                    fields[at].push_str(line);
                }
                (None, None) => {}
            }
        }
        let [evaluation, memory, next_goal] = fields;
        self.evaluation = evaluation;
        self.memory = memory;
        self.next_goal = next_goal;
    }
}

/// The reflection's lines, for drawing and for scrolling bounds.
pub fn lines(state: &AppState) -> Vec<Line<'static>> {
    let theme = &state.theme;
    let r = &state.reflection;
    let label = |text: &'static str| {
        Span::styled(
            text,
            Style::default()
                .fg(theme.palette.muted)
                .add_modifier(Modifier::BOLD),
        )
    };
    let empty = r.evaluation.is_empty()
        && r.memory.is_empty()
        && r.next_goal.is_empty()
        && r.action.is_none();
    if empty {
        let text = match state.status.run {
            RunStatus::Running if r.streaming || r.step > 0 => "the model is thinking…",
            RunStatus::Running => "starting the run…",
            _ => "no run yet: press t, type a task, Enter",
        };
        return vec![Line::from(Span::styled(text, theme.muted()))];
    }
    let mut out = Vec::new();
    for (name, value) in [
        ("eval  ", &r.evaluation),
        ("memory", &r.memory),
        ("goal  ", &r.next_goal),
    ] {
        if value.is_empty() {
            continue;
        }
        out.push(Line::from(vec![
            label(name),
            Span::raw(" "),
            Span::styled(value.clone(), theme.fg(theme.palette.text)),
        ]));
    }
    if let Some(action) = &r.action {
        out.push(Line::from(vec![
            label("action"),
            Span::raw(" "),
            Span::styled(
                action.clone(),
                theme.fg(theme.palette.accent).add_modifier(Modifier::BOLD),
            ),
        ]));
    }
    out
}

/// Draws the reflection pane.
pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let r = &state.reflection;
    let mut title = if let Some(shown) = r.shown_step {
        format!("Reflection · step {shown} (step {} thinking)", r.step)
    } else if r.step > 0 {
        format!("Reflection · step {}", r.step)
    } else {
        "Reflection".to_string()
    };
    if r.streaming {
        title.push_str(" …");
    }
    let block = pane_block(title, Pane::Reflection, state);
    let scroll = u16::try_from(state.reflection_view.offset).unwrap_or(u16::MAX);
    frame.render_widget(
        Paragraph::new(lines(state))
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .block(block),
        area,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_appear_while_the_json_streams() {
        let mut view = ReflectionView::default();
        view.push_stream(r#"{"evaluation_previous_goal": "Signed in", "mem"#);
        assert_eq!(view.evaluation, "Signed in");
        assert_eq!(view.memory, "");
        view.push_stream(r#"ory":"orders at /ord"#);
        assert_eq!(view.memory, "orders at /ord");
        view.push_stream(r#"ers\n", "next_goal":"Open \"Orders\""}"#);
        assert_eq!(view.memory, "orders at /orders\n");
        assert_eq!(view.next_goal, "Open \"Orders\"");
    }

    #[test]
    fn the_agents_readable_stream_fills_the_fields() {
        let mut view = ReflectionView::default();
        view.push_stream("evaluation: Signed");
        view.push_stream(" in\nmemory: two orders");
        assert_eq!(view.evaluation, "Signed in");
        assert_eq!(view.memory, "two orders");
        view.push_stream("\nstill pending\nnext goal: open Orders");
        assert_eq!(view.memory, "two orders\nstill pending");
        assert_eq!(view.next_goal, "open Orders");
    }

    #[test]
    fn a_field_that_has_not_begun_is_none() {
        assert_eq!(partial_field(r#"{"memory"#, "memory"), None);
        assert_eq!(partial_field(r#"{"memory": "#, "memory"), None);
        assert_eq!(
            partial_field(r#"{"memory": ""#, "memory"),
            Some(String::new())
        );
    }
}
