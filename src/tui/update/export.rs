//! Exporting a session as a named recipe: `E` asks for the name on the
//! `:` line, and `:export NAME` checks it and asks the services to write
//! the live session, or the past one on screen.

use tui_textarea::TextArea;

use crate::tui::event::Effect;
use crate::tui::state::AppState;
use crate::tui::task::set_field_focus;

/// `E`: the `:` line opens on `export `, for the recipe's name.
pub(super) fn ask_export_name(state: &mut AppState) {
    let mut field = TextArea::new(vec!["export ".to_string()]);
    set_field_focus(&mut field, true, &state.theme);
    field.move_cursor(tui_textarea::CursorMove::End);
    state.command_line = Some(field);
    let what = if state.replay.is_some() {
        "this past session"
    } else {
        "the session"
    };
    state.notice(
        false,
        format!("name the recipe {what} becomes (a snake_case word), then Enter"),
    );
}

/// `:export NAME`: the session on screen (a replay, else the live one)
/// written as the recipe `NAME` in `NAME.rhai`. A name that is not a
/// snake_case word, or that a loaded recipe has, is refused and the line
/// stays for correction; the file is never replaced.
pub(super) fn export_as(state: &mut AppState, name: &str, effects: &mut Vec<Effect>) {
    if !crate::words::is_snake_case(name) {
        state.notice(
            true,
            "usage: export NAME, NAME a snake_case word (order_refund) that names the recipe and its file".into(),
        );
        return;
    }
    if let Some(clash) = state.recipes.iter().find(|r| r.name == name) {
        state.notice(
            true,
            format!(
                "a recipe named `{name}` is loaded already ({}); pick another name",
                clash.file
            ),
        );
        return;
    }
    state.command_line = None;
    state.notice(false, format!("exporting as the recipe `{name}`…"));
    let name = name.to_string();
    effects.push(match &state.replay {
        Some(replay) => Effect::ExportTrace {
            path: replay.data.path.clone(),
            name,
        },
        None => Effect::ExportSession { name },
    });
}
