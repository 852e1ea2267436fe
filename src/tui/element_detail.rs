//! One element of the listing in full, over the panes: its whole line
//! (the pane cuts it at its width), each attribute on a row of its own,
//! where it sits, and the locators the listing already tells (the ones a
//! recipe step would try first). The page's id, test id and CSS path are
//! not in the listing; a recorded step reads those from the page itself.
//!
//! The locator picker (`L`, `A`) shows here too: in the row's view, or in
//! a view of its own for an element that is not a row (an approval's
//! target, a past step's element, one picked on the page).

use crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Margin, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;
use serde_json::{json, Map, Value};

use crate::dom::{element_line, InteractiveElement, Locator};
use crate::script::Expectation;

use super::keys::{Binding, Command, KeyBinding, KeyContext};
use super::layout::centered;
use super::state::{AppState, LocatorPick, Modal};
use super::widgets::{footer, open_modal};

/// The keys that open and close the view (it scrolls with the list keys).
pub const KEYS: &[Binding] = &[
    Binding::new(
        KeyContext::Elements,
        KeyBinding::char('i'),
        Command::Inspect,
        "element in full",
    )
    .hinted(),
    Binding::new(
        KeyContext::Elements,
        KeyBinding::char('L'),
        Command::PickLocators,
        "locators, checked, and the recipe line",
    ),
    Binding::new(
        KeyContext::Elements,
        KeyBinding::char('A'),
        Command::PickLocators,
        "assert on it: its locators and the assertions to pick (1–7)",
    ),
    Binding::new(
        KeyContext::ElementDetail,
        KeyBinding::char('y'),
        Command::CopyLine,
        "copy the recipe line",
    ),
    Binding::new(
        KeyContext::ElementDetail,
        KeyBinding::char('1'),
        Command::PickAssertion(1),
        "assert it is visible",
    ),
    Binding::new(
        KeyContext::ElementDetail,
        KeyBinding::char('2'),
        Command::PickAssertion(2),
        "assert its text equals what it shows",
    ),
    Binding::new(
        KeyContext::ElementDetail,
        KeyBinding::char('3'),
        Command::PickAssertion(3),
        "assert its text contains what it shows",
    ),
    Binding::new(
        KeyContext::ElementDetail,
        KeyBinding::char('4'),
        Command::PickAssertion(4),
        "assert a field's value",
    ),
    Binding::new(
        KeyContext::ElementDetail,
        KeyBinding::char('5'),
        Command::PickAssertion(5),
        "assert it is checked or not, as it is",
    ),
    Binding::new(
        KeyContext::ElementDetail,
        KeyBinding::char('6'),
        Command::PickAssertion(6),
        "assert the count of elements like it",
    ),
    Binding::new(
        KeyContext::ElementDetail,
        KeyBinding::char('7'),
        Command::PickAssertion(7),
        "assert the URL's path",
    ),
    Binding::new(
        KeyContext::ElementDetail,
        KeyBinding::plain(KeyCode::Esc),
        Command::Cancel,
        "close",
    )
    .hinted(),
    Binding::new(
        KeyContext::ElementDetail,
        KeyBinding::char('q'),
        Command::Cancel,
        "close",
    )
    .hinted(),
    Binding::new(
        KeyContext::ElementDetail,
        KeyBinding::char('i'),
        Command::InsertLine,
        "record the line / close",
    )
    .hinted(),
];

/// Where the view sits on a `size` terminal: (the whole dialog, its
/// text, its footer); shared by drawing and scrolling.
pub fn layout(size: (u16, u16)) -> (Rect, Rect, Rect) {
    let area = centered(Rect::new(0, 0, size.0, size.1), 85, 80, (70, 16));
    let inner = area.inner(Margin::new(1, 1));
    let [body, foot] = Layout::vertical([Constraint::Min(1), Constraint::Length(2)]).areas(inner);
    (area, body, foot)
}

/// The role a person or a screen reader knows the element by: its own
/// `role`, else the one its tag implies.
fn role_of(element: &InteractiveElement) -> Option<String> {
    if let Some(role) = element.attribute("role").filter(|r| !r.is_empty()) {
        return Some(role.to_string());
    }
    let input_type = element.attribute("type").unwrap_or("text");
    let role = match (element.tag.as_str(), input_type) {
        ("a", _) if element.attribute("href").is_some() => "link",
        ("button", _) | ("input", "submit" | "button" | "reset" | "image") => "button",
        ("input", "checkbox") => "checkbox",
        ("input", "radio") => "radio",
        ("input", "hidden" | "file" | "range" | "color") => return None,
        ("input", _) | ("textarea", _) => "textbox",
        ("select", _) => "combobox",
        _ => return None,
    };
    Some(role.to_string())
}

/// The locators the listing tells for `element`, strongest first, in the
/// order a recipe step tries them.
pub fn listed_locators(element: &InteractiveElement) -> Vec<Locator> {
    let mut facts = Map::new();
    facts.insert("tag".into(), json!(element.tag));
    let mut put = |key: &str, value: Option<&str>| {
        if let Some(value) = value.filter(|v| !v.trim().is_empty()) {
            facts.insert(key.into(), Value::String(value.to_string()));
        }
    };
    put("label", element.attribute("label"));
    put("placeholder", element.attribute("placeholder"));
    put("name", element.attribute("name"));
    put("text", Some(element.text.as_str()));
    let accessible = element
        .attribute("aria-label")
        .or_else(|| element.attribute("label"))
        .or_else(|| Some(element.text.as_str()).filter(|t| !t.is_empty()));
    if let (Some(role), Some(name)) = (role_of(element), accessible) {
        facts.insert("role".into(), Value::String(role));
        facts.insert("accessibleName".into(), Value::String(name.to_string()));
    }
    Locator::from_facts(&Value::Object(facts))
}

/// `text` cut into pieces of at most `width` characters (a listing line
/// has no spaces to break at in its attributes).
fn pieces(text: &str, width: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars
        .chunks(width.max(1))
        .map(|c| c.iter().collect())
        .collect()
}

/// Width of the locator picker's mark column.
const MARK_WIDTH: usize = 24;

/// Width of the names column.
const NAME_WIDTH: usize = 16;

/// The view's lines for `element`, cut to `width` columns so every row
/// counts when scrolling.
pub fn lines(state: &AppState, element: &InteractiveElement, width: u16) -> Vec<Line<'static>> {
    let theme = &state.theme;
    let width = usize::from(width).max(NAME_WIDTH + 8);
    let text = theme.fg(theme.palette.text);
    let heading = |title: &str| {
        Line::from(Span::styled(
            title.to_string(),
            theme.fg(theme.palette.accent).add_modifier(Modifier::BOLD),
        ))
    };
    let mut out = vec![heading("As the model reads it")];
    for piece in pieces(&element_line(element), width) {
        out.push(Line::from(Span::styled(piece, text)));
    }
    out.push(Line::default());
    out.push(heading("Attributes"));
    let row = |name: &str, value: &str, out: &mut Vec<Line<'static>>| {
        for (n, piece) in pieces(value, width - NAME_WIDTH - 2)
            .into_iter()
            .enumerate()
        {
            let label = if n == 0 { name } else { "" };
            out.push(Line::from(vec![
                Span::styled(format!("  {label:<w$}", w = NAME_WIDTH), theme.key()),
                Span::styled(piece, text),
            ]));
        }
    };
    row("tag", &element.tag, &mut out);
    for (name, value) in &element.attributes {
        row(
            name,
            if value.is_empty() { "(set)" } else { value },
            &mut out,
        );
    }
    if !element.text.is_empty() {
        row("text", &element.text, &mut out);
    }
    let mut place = vec![format!("depth {}", element.depth)];
    if let Some(parent) = element.parent {
        place.push(format!("inside [{parent}]"));
    }
    if let Some(frame) = element.frame {
        place.push(format!("in the frame [{frame}]"));
    }
    if element.in_shadow_root {
        place.push("in a shadow root".into());
    }
    if element.is_new {
        place.push("new since the last observation".into());
    }
    row("where", &place.join(" · "), &mut out);
    out.push(Line::default());
    if let Some(pick) = state
        .locators
        .as_ref()
        .filter(|p| p.position.is_some() && p.position == shown_position(state))
    {
        picked_lines(state, pick, width, &heading, &mut out);
        return out;
    }
    out.push(heading("Locators the listing tells, strongest first"));
    let locators = listed_locators(element);
    if locators.is_empty() {
        out.push(Line::from(Span::styled(
            "  none: the listing names it by its index only",
            theme.muted(),
        )));
    }
    for locator in locators {
        for piece in pieces(&format!("  {locator}"), width) {
            out.push(Line::from(Span::styled(piece, text)));
        }
    }
    for piece in pieces(
        "  (a recorded step adds the id, test id and CSS path)",
        width,
    ) {
        out.push(Line::from(Span::styled(piece, theme.muted())));
    }
    out
}

/// The row of the listing the view shows, when it is open.
fn shown_position(state: &AppState) -> Option<usize> {
    match &state.modal {
        Some(Modal::Element { position, .. }) => Some(*position),
        _ => None,
    }
}

/// The locator picker's part of the view: each locator the page gives the
/// element, marked unique, matching several or none, and the line.
fn picked_lines(
    state: &AppState,
    pick: &LocatorPick,
    width: usize,
    heading: &dyn Fn(&str) -> Line<'static>,
    out: &mut Vec<Line<'static>>,
) {
    let theme = &state.theme;
    let text = theme.fg(theme.palette.text);
    let report = match &pick.report {
        None => {
            out.push(Line::from(Span::styled(
                "  reading the locators from the page…",
                theme.muted(),
            )));
            return;
        }
        Some(Err(why)) => {
            out.push(Line::from(Span::styled(
                format!("  {why}"),
                theme.fg(theme.palette.error),
            )));
            return;
        }
        Some(Ok(report)) => report,
    };
    out.push(heading("Locators on the page now, strongest first"));
    for (locator, matches) in &report.locators {
        let (mark, style) = match matches {
            1 => ("unique", theme.fg(theme.palette.ok)),
            0 => ("matches none", theme.fg(theme.palette.error)),
            _ => ("matches several", theme.fg(theme.palette.warn)),
        };
        let mark = match matches {
            2.. => format!("{mark} ({matches})"),
            _ => mark.to_string(),
        };
        // The mark's column: "  matches several (12)" fits.
        let room = width.saturating_sub(MARK_WIDTH).max(8);
        for (n, piece) in pieces(&format!("  {locator}"), room)
            .into_iter()
            .enumerate()
        {
            let mut spans = vec![Span::styled(format!("{piece:<room$}"), text)];
            if n == 0 {
                spans.push(Span::styled(format!("  {mark}"), style));
            }
            out.push(Line::from(spans));
        }
    }
    out.push(Line::default());
    let title = if state.recording.is_some() {
        "The recipe line (y copies it, i records it)"
    } else {
        "The recipe line (y copies it)"
    };
    out.push(heading(title));
    for piece in pieces(&format!("  {}", report.line), width) {
        out.push(Line::from(Span::styled(piece, text)));
    }
    out.push(Line::default());
    let title = if state.recording.is_some() {
        "Assertions (press the number to record it)"
    } else {
        "Assertions (press the number to copy its line)"
    };
    out.push(heading(title));
    for (n, label) in (1u8..).zip(ASSERTIONS) {
        let (what, style) = match assertion(state, n) {
            Ok((expectation, locators)) => (assertion_words(&expectation, &locators), text),
            Err(why) => (why, theme.muted()),
        };
        for piece in pieces(&format!("  {n}  {label}: {what}"), width) {
            out.push(Line::from(Span::styled(piece, style)));
        }
    }
}

/// What a picked assertion expects, shortly.
fn assertion_words(expectation: &Expectation, locators: &[Locator]) -> String {
    let quoted = crate::script::export::rhai_string;
    match expectation {
        Expectation::Visible => "yes".into(),
        Expectation::Text(text) | Expectation::TextContains(text) => quoted(text),
        Expectation::Value(value) => quoted(value),
        Expectation::Checked(checked) => checked.to_string(),
        Expectation::Count(count) => match locators.first() {
            Some(locator) => format!("{count} ({locator})"),
            None => count.to_string(),
        },
        Expectation::Url(pattern) => quoted(pattern),
    }
}

/// What the assertions the view offers check, by their number (1–7).
pub const ASSERTIONS: [&str; 7] = [
    "visible",
    "text equals",
    "text contains",
    "value equals",
    "checked",
    "count",
    "URL path",
];

/// The assertion `number` (1–7, see [`ASSERTIONS`]) on the element the
/// locator picker read, prefilled with what the page shows now: what it
/// expects and the locators that name what it counts (empty for the
/// element's own); `Err` says why it cannot be picked.
pub fn assertion(state: &AppState, number: u8) -> Result<(Expectation, Vec<Locator>), String> {
    let report = match state.locators.as_ref().and_then(|p| p.report.as_ref()) {
        Some(Ok(report)) => report,
        Some(Err(why)) => return Err(why.clone()),
        None => return Err("the page has not answered yet".into()),
    };
    let shown = report.state.as_ref();
    let no_one = || "its locators name no one element now".to_string();
    Ok(match number {
        1 => (Expectation::Visible, Vec::new()),
        2 | 3 => {
            let text = shown.ok_or_else(no_one)?.text.clone();
            if text.is_empty() {
                return Err("it shows no text (a field has a value: 4)".into());
            }
            match number {
                2 => (Expectation::Text(text), Vec::new()),
                _ => (Expectation::TextContains(text), Vec::new()),
            }
        }
        4 => match shown.ok_or_else(no_one)?.value.clone() {
            Some(value) => (Expectation::Value(value), Vec::new()),
            None => return Err("it is no field, so it has no value".into()),
        },
        5 => match shown.ok_or_else(no_one)?.checked {
            Some(checked) => (Expectation::Checked(checked), Vec::new()),
            None => return Err("it cannot be checked".into()),
        },
        6 => match &report.count {
            Some((locator, count)) => (Expectation::Count(*count), vec![locator.clone()]),
            None => return Err("nothing counts elements like it".into()),
        },
        7 => {
            let url = state.page.as_ref().map_or("", |p| p.url.as_str());
            let origin = crate::script::export::origin_of(url);
            let pattern =
                crate::script::export::page_pattern(url, origin.as_deref(), Some(&state.sitemaps));
            if pattern.is_empty() {
                return Err(format!("{url} has no path to check"));
            }
            (Expectation::Url(pattern), Vec::new())
        }
        _ => return Err(format!("no assertion {number}")),
    })
}

/// The picker's lines on an element that is not a row of the listing
/// (see [`Modal::Locators`]): what it is, then its locators.
pub fn picker_lines(state: &AppState, width: u16) -> Vec<Line<'static>> {
    let theme = &state.theme;
    let width = usize::from(width).max(NAME_WIDTH + 8);
    let heading = |title: &str| {
        Line::from(Span::styled(
            title.to_string(),
            theme.fg(theme.palette.accent).add_modifier(Modifier::BOLD),
        ))
    };
    let mut out = vec![heading("The element")];
    let Some(pick) = &state.locators else {
        return out;
    };
    for piece in pieces(&format!("  {}", pick.title), width) {
        out.push(Line::from(Span::styled(
            piece,
            theme.fg(theme.palette.text),
        )));
    }
    out.push(Line::default());
    picked_lines(state, pick, width, &heading, &mut out);
    out
}

/// How far the open view scrolls on a `size` terminal: the last page
/// shows its last row.
pub fn max_scroll(state: &AppState, size: (u16, u16)) -> usize {
    let (_, body, _) = layout(size);
    let total = match (&state.modal, shown(state)) {
        (Some(Modal::Locators { .. }), _) => picker_lines(state, body.width).len(),
        (_, Some((element, _))) => lines(state, element, body.width).len(),
        _ => 0,
    };
    total.saturating_sub(usize::from(body.height))
}

/// The element the view shows, if it is open and the element is listed.
pub fn shown(state: &AppState) -> Option<(&InteractiveElement, usize)> {
    match &state.modal {
        Some(Modal::Element { position, scroll }) => state
            .page
            .as_ref()
            .and_then(|p| p.elements.get(*position))
            .map(|e| (e, *scroll)),
        _ => None,
    }
}

/// Draws the view, when it is open.
pub fn draw(frame: &mut Frame, state: &AppState) {
    let (area, body, foot) = layout((frame.area().width, frame.area().height));
    let (title, text, scroll) = match (&state.modal, shown(state)) {
        (Some(Modal::Locators { scroll, .. }), _) => (
            "Locators and assertions".to_string(),
            picker_lines(state, body.width),
            *scroll,
        ),
        (_, Some((element, scroll))) => (
            format!("Element [{}] in full", element.index),
            lines(state, element, body.width),
            scroll,
        ),
        _ => return,
    };
    let inner = open_modal(frame, area, title, &state.theme);
    if inner.height == 0 {
        return;
    }
    frame.render_widget(
        Paragraph::new(text).scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0)),
        body,
    );
    frame.render_widget(
        Paragraph::new(footer(state, KeyContext::ElementDetail)).wrap(Wrap { trim: false }),
        foot,
    );
}
