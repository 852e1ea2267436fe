//! What the update does to the panes themselves: the focus, the text
//! field keys go to, list cursors and scrolling kept inside what is shown,
//! and the page picture asked for at the pane's size.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use tui_textarea::TextArea;

use crate::tui::event::Effect;
use crate::tui::keys::{Command, KeyContext};
use crate::tui::layout::{page_picture_cells, sessions_rows};
use crate::tui::sitemap_tree;
use crate::tui::state::{AppState, ListView, Modal, Pane, PictureJob, PictureJobKey};
use crate::tui::task::set_field_focus;

/// The text field keys go to now, if any.
pub(super) fn active_field(state: &mut AppState) -> Option<&mut TextArea<'static>> {
    let context = state.key_context();
    field_in(state, context)
}

/// The text field of `context`, while it is there (the task field always
/// is, even under a dialog).
pub(super) fn field_in(
    state: &mut AppState,
    context: KeyContext,
) -> Option<&mut TextArea<'static>> {
    match context {
        KeyContext::CommandLine => state.command_line.as_mut(),
        KeyContext::Task => Some(&mut state.task),
        KeyContext::ApprovalEdit => match state.modal.as_mut() {
            Some(Modal::Approval(m)) => m.editor.as_mut(),
            _ => None,
        },
        KeyContext::ApprovalNote => match state.modal.as_mut() {
            Some(Modal::Approval(m)) => m.note.as_mut(),
            _ => None,
        },
        KeyContext::AskUser => match state.modal.as_mut() {
            Some(Modal::AskUser(m)) => Some(&mut m.answer),
            _ => None,
        },
        KeyContext::SessionSearch => state.sessions.as_mut().and_then(|v| v.search.as_mut()),
        _ => None,
    }
}

/// Shows the cursor of the field that has the focus, in the theme's
/// colours.
pub(super) fn restyle_fields(state: &mut AppState) {
    let theme = state.theme.clone();
    let task_focused = state.focus == Pane::Task && state.modal.is_none();
    set_field_focus(&mut state.task, task_focused, &theme);
    if let Some(field) = state.command_line.as_mut() {
        set_field_focus(field, true, &theme);
    }
}

/// Gives `pane` the focus.
pub(super) fn set_focus(state: &mut AppState, pane: Pane) {
    state.focus = pane;
    restyle_fields(state);
}

/// Keeps every list's cursor visible after a resize or new content.
pub(super) fn refollow(state: &mut AppState) {
    let rows = state.visible_rows(Pane::Elements);
    state.elements.follow(state.element_count(), rows);
    let rows = state.visible_rows(Pane::Log);
    state.log_view.follow(state.log.len(), rows);
    let rows = state.visible_rows(Pane::Sitemap);
    let len = sitemap_tree::rows(state).len();
    state.sitemap_view.follow(len, rows);
    let rows = sessions_rows(state.size);
    if let Some(view) = state.sessions.as_mut() {
        let len = view.shown.len();
        view.list.follow(len, rows);
    }
}

/// Where a list cursor goes for a movement command.
pub(super) fn moved(view: &ListView, command: Command, len: usize, rows: usize) -> Option<usize> {
    let at = view.cursor;
    Some(match command {
        Command::Up => at.saturating_sub(1),
        Command::Down => at + 1,
        Command::PageUp => at.saturating_sub(rows),
        Command::PageDown => at + rows,
        Command::Top => 0,
        Command::Bottom => len.saturating_sub(1),
        _ => return None,
    })
}

/// Scrolls text (reflection, inspector, help) for a movement command.
pub(super) fn scrolled(offset: usize, command: Command, rows: usize, lines: usize) -> usize {
    let max = lines.saturating_sub(1);
    match command {
        Command::Up => offset.saturating_sub(1),
        Command::Down => (offset + 1).min(max),
        Command::PageUp => offset.saturating_sub(rows),
        Command::PageDown => (offset + rows).min(max),
        Command::Top => 0,
        Command::Bottom => max,
        _ => offset,
    }
}

/// Moves the listing cursor and asks for the element to be outlined.
pub(super) fn move_elements(state: &mut AppState, command: Command, effects: &mut Vec<Effect>) {
    let (len, rows) = (state.element_count(), state.visible_rows(Pane::Elements));
    if let Some(target) = moved(&state.elements, command, len, rows) {
        let before = state.elements.cursor;
        state.elements.move_to(target, len, rows);
        if state.elements.cursor != before {
            highlight_cursor(state, effects);
            request_picture(state, effects);
        }
    }
}

/// Asks for the element under the listing's cursor to be outlined in
/// the page (a replay's listing names no element of the live page).
pub(super) fn highlight_cursor(state: &AppState, effects: &mut Vec<Effect>) {
    if state.replay.is_some() {
        // A recorded listing names no element of the live page.
        return;
    }
    if let Some(element) = state
        .page
        .as_ref()
        .and_then(|p| p.elements.get(state.elements.cursor))
    {
        if let Ok(index) = u32::try_from(element.index.0) {
            effects.push(Effect::Highlight(index));
        }
    }
}

/// Asks for the picture to be fitted into the page pane, with the
/// element under the listing's cursor outlined, unless that exact
/// rendering was already asked for.
pub(super) fn request_picture(state: &mut AppState, effects: &mut Vec<Effect>) {
    if !state.picture.visible {
        return;
    }
    let Some(shot) = state.picture.shot.clone() else {
        return;
    };
    let (columns, rows) = page_picture_cells(state.area());
    if columns == 0 || rows == 0 {
        return;
    }
    let selected = state
        .page
        .as_ref()
        .and_then(|p| p.elements.get(state.elements.cursor))
        .map(|e| e.index.0);
    let mark = selected.and_then(|i| shot.marks.iter().find(|m| m.index == i).copied());
    let key = PictureJobKey {
        picture: state.pictures_seen,
        columns,
        rows,
        outline: mark.map(|m| m.index),
    };
    if state.picture.requested == Some(key) {
        return;
    }
    state.picture.requested = Some(key);
    let color = match state.theme.palette.warn {
        ratatui::style::Color::Rgb(r, g, b) => [r, g, b],
        _ => [235, 203, 139],
    };
    effects.push(Effect::RenderPicture(PictureJob {
        key,
        shot,
        outline: mark.map(|m| (m, color)),
    }));
}

/// The mouse on the page pane's picture: a left click clicks the page at
/// that point and the wheel scrolls it there, as the person's own input
/// (a recording takes it like a click in a window). Alt+click (or
/// Ctrl+click, for terminals that keep Alt+click for themselves) clicks
/// nothing: it opens the locator and assertion picker on the element
/// there. Elsewhere, and while a dialog is open, the mouse does nothing.
pub(super) fn page_mouse(
    state: &mut AppState,
    mouse: crossterm::event::MouseEvent,
    effects: &mut Vec<Effect>,
) {
    use crate::browser::record::PaneInput;
    use crossterm::event::{MouseButton, MouseEventKind};
    if !state.picture.visible || state.modal.is_some() || state.replay.is_some() {
        return;
    }
    let Some(shot) = &state.picture.shot else {
        return;
    };
    let Some(rendered) = &state.picture.rendered else {
        // The pane says "drawing…": there is nothing to aim at yet, and a
        // click dropped without a word would look like a dead page.
        state.notice(
            true,
            "the picture is still drawing; click again once it shows".into(),
        );
        return;
    };
    let used = rendered.protocol.area();
    let Some((fx, fy)) = crate::tui::layout::picture_point(
        state.size,
        (used.width, used.height),
        mouse.column,
        mouse.row,
    ) else {
        if matches!(mouse.kind, MouseEventKind::Down(_)) && state.picture.keyboard {
            state.picture.keyboard = false;
            state.notice(false, "the keys are the workbench's again".into());
        }
        return;
    };
    let scale = if shot.scale > 0.0 { shot.scale } else { 1.0 };
    let point = (fx * f64::from(shot.width), fy * f64::from(shot.height));
    let (x, y) = (point.0 / scale, point.1 / scale);
    let picking = mouse
        .modifiers
        .intersects(KeyModifiers::ALT | KeyModifiers::CONTROL);
    if picking && mouse.kind == MouseEventKind::Down(MouseButton::Left) {
        if state.run_active() {
            state.notice(
                true,
                "the agent is running; pick an element once it ends".into(),
            );
            return;
        }
        super::picker::pick_at(state, point, (x, y), effects);
        return;
    }
    let pointer = match mouse.kind {
        MouseEventKind::Down(MouseButton::Left) => PaneInput::Click { x, y },
        MouseEventKind::ScrollDown => PaneInput::Wheel { x, y, dy: 120.0 },
        MouseEventKind::ScrollUp => PaneInput::Wheel { x, y, dy: -120.0 },
        _ => return,
    };
    if state.run_active() {
        state.notice(
            true,
            "the agent is running; the page takes the mouse once it ends".into(),
        );
        return;
    }
    if matches!(pointer, PaneInput::Click { .. }) && !state.picture.keyboard {
        state.picture.keyboard = true;
        state.notice(
            false,
            "the page has the keys: typing goes into it; Ctrl+O gives them back".into(),
        );
    }
    effects.push(Effect::PaneInput(pointer));
}

/// A key while the page pane has the keyboard: printable keys are typed
/// into the page's focused element and the others (Enter, Tab, Esc,
/// Backspace, the arrows, a key with Ctrl or Alt) pressed there, as the
/// person's own input, so a recording takes them like typing in a
/// window. Ctrl+C still quits and Ctrl+O gives the keys back; whether
/// the key was the page's.
pub(super) fn page_key(state: &mut AppState, key: KeyEvent, effects: &mut Vec<Effect>) -> bool {
    use crate::browser::record::PaneInput;
    if !state.picture.keyboard {
        return false;
    }
    if !state.picture.visible
        || state.modal.is_some()
        || state.command_line.is_some()
        || state.replay.is_some()
        || state.sessions.is_some()
    {
        state.picture.keyboard = false;
        return false;
    }
    if key.kind == KeyEventKind::Release {
        return true;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    match key.code {
        KeyCode::Char('c') if ctrl => return false,
        KeyCode::Char('o') if ctrl => {
            state.picture.keyboard = false;
            state.notice(false, "the keys are the workbench's again".into());
            return true;
        }
        _ => {}
    }
    let input = match key.code {
        KeyCode::Char(c) if !ctrl && !alt => PaneInput::Type(c.to_string()),
        code => {
            let name = match code {
                KeyCode::Char(c) => c.to_string(),
                KeyCode::Enter => "Enter".into(),
                KeyCode::Tab => "Tab".into(),
                KeyCode::BackTab => "Shift+Tab".into(),
                KeyCode::Esc => "Escape".into(),
                KeyCode::Backspace => "Backspace".into(),
                KeyCode::Delete => "Delete".into(),
                KeyCode::Left => "ArrowLeft".into(),
                KeyCode::Right => "ArrowRight".into(),
                KeyCode::Up => "ArrowUp".into(),
                KeyCode::Down => "ArrowDown".into(),
                KeyCode::Home => "Home".into(),
                KeyCode::End => "End".into(),
                KeyCode::PageUp => "PageUp".into(),
                KeyCode::PageDown => "PageDown".into(),
                // Keys a page has no use for stay with no one.
                _ => return true,
            };
            let mut chord = String::new();
            if ctrl {
                chord.push_str("Control+");
            }
            if alt {
                chord.push_str("Alt+");
            }
            let shifted = key.modifiers.contains(KeyModifiers::SHIFT);
            if shifted && !matches!(code, KeyCode::Char(_) | KeyCode::BackTab) {
                chord.push_str("Shift+");
            }
            chord.push_str(&name);
            match crate::actions::KeyChord::parse(&chord) {
                Ok(chord) => PaneInput::Press(chord),
                Err(_) => return true,
            }
        }
    };
    if state.run_active() {
        state.notice(
            true,
            "the agent is running; the page takes the keys once it ends".into(),
        );
        return true;
    }
    effects.push(Effect::PaneInput(input));
    true
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

    #[test]
    fn a_click_before_the_first_picture_is_drawn_says_so_and_sends_nothing() {
        let mut state = AppState::new((120, 40));
        state.picture.visible = true;
        state.picture.shot = Some(Arc::new(crate::vision::Screenshot {
            image: Arc::from(Vec::new()),
            mime: "image/png",
            width: 1024,
            height: 640,
            scale: 1.0,
            marks: Vec::new(),
            masked: 0,
            capture_ms: 1.0,
        }));
        let mut effects = Vec::new();
        let click = MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: 90,
            row: 3,
            modifiers: KeyModifiers::NONE,
        };
        page_mouse(&mut state, click, &mut effects);
        assert!(effects.is_empty(), "{effects:?}");
        assert_eq!(
            state.status.notice.as_ref().map(|n| n.text.as_str()),
            Some("the picture is still drawing; click again once it shows")
        );
    }
}
