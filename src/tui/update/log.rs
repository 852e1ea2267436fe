//! The log rows the update adds: an action's target as the log shows it,
//! a new row with the cursor following, and what an action's result adds
//! beyond its page (downloads, a tab it opened).

use crate::actions::{ActionResult, Target};
use crate::dom::element_line;
use crate::tui::state::{AppState, LogEntry, Outcome, Pane};
use crate::tui::text::clip;

/// The listed element an action targets, as the log and approval show it.
pub(super) fn target_text(state: &AppState, target: Option<&Target>) -> String {
    match target {
        Some(Target::Index { index }) => state
            .page
            .as_ref()
            .and_then(|p| p.elements.iter().find(|e| e.index == *index))
            .map(|e| clip(&element_line(e), 80))
            .unwrap_or_else(|| format!("[{index}]")),
        Some(Target::Selector { selector }) => selector.to_string(),
        None => String::new(),
    }
}

/// Adds a row to the log; the cursor follows it when it was on the last
/// row.
pub(super) fn push_log(state: &mut AppState, entry: LogEntry) {
    let was_at_end = state.log.is_empty() || state.log_view.cursor + 1 >= state.log.len();
    state.log.push(entry);
    let (len, rows) = (state.log.len(), state.visible_rows(Pane::Log));
    if was_at_end {
        state.log_view.move_to(len - 1, len, rows);
    }
}

/// What an action caused beyond its page, as the result reports it: a
/// log row per downloaded file, a notice for a tab it opened or closed.
pub(super) fn log_side_effects(state: &mut AppState, result: &ActionResult) {
    let ActionResult::Success { data: Some(data) } = result else {
        return;
    };
    let downloads = data.get("downloads").and_then(|d| d.as_array());
    for download in downloads.into_iter().flatten() {
        let text = |key: &str| download.get(key).and_then(|v| v.as_str()).unwrap_or("");
        let size = download.get("size").and_then(|v| v.as_u64()).unwrap_or(0);
        let outcome = if text("state") == "completed" {
            Outcome::Ok
        } else {
            Outcome::Failed {
                reason: text("state").to_string(),
                message: format!("the download of {} did not complete", text("url")),
            }
        };
        push_log(
            state,
            LogEntry {
                params: format!("{size} bytes, {}", text("type")),
                ..LogEntry::row("download", text("file"), outcome)
            },
        );
    }
    if let Some(closed) = data.get("tab_closed") {
        let text = |key: &str| closed.get(key).and_then(|v| v.as_str()).unwrap_or_default();
        state.notice(
            false,
            format!("the tab {} closed; now on {}", text("url"), text("now_on")),
        );
    }
    if let Some(tab) = data.get("new_tab") {
        let url = tab.get("url").and_then(|v| v.as_str()).unwrap_or_default();
        let switched = tab.get("switched").and_then(|v| v.as_bool()) == Some(true);
        state.notice(
            false,
            format!(
                "a tab opened: {url}{}",
                if switched { " (now driven)" } else { "" }
            ),
        );
    }
}
