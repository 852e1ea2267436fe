//! The default keymap: every pane's and modal's own keys, gathered in
//! help order. It sits above the panes it gathers from; the key types it
//! fills sit below them ([`super::keys`]), so no pane imports this file and
//! nothing loops. The help popup and the hint line read the gathered
//! table from the state, so a key is described exactly once.

use super::keys::{list_keys, KeyContext, Keymap, GLOBAL_KEYS};
use super::{debugger, element_detail, elements, log, modals, replay, sessions, task};

/// Every pane's keys, in help order.
impl Default for Keymap {
    fn default() -> Self {
        let mut bindings = GLOBAL_KEYS.to_vec();
        bindings.extend_from_slice(elements::KEYS);
        bindings.extend_from_slice(element_detail::KEYS);
        bindings.extend_from_slice(&list_keys(KeyContext::Elements));
        bindings.extend_from_slice(&list_keys(KeyContext::Reflection));
        bindings.extend_from_slice(log::KEYS);
        bindings.extend_from_slice(&list_keys(KeyContext::Log));
        bindings.extend_from_slice(&list_keys(KeyContext::Sitemap));
        bindings.extend_from_slice(task::KEYS);
        bindings.extend_from_slice(modals::KEYS);
        bindings.extend(modals::scroll_keys(KeyContext::Inspector));
        bindings.extend(modals::scroll_keys(KeyContext::ElementDetail));
        bindings.extend(modals::scroll_keys(KeyContext::Help));
        bindings.extend_from_slice(sessions::KEYS);
        bindings.extend_from_slice(&list_keys(KeyContext::Sessions));
        bindings.extend_from_slice(replay::KEYS);
        bindings.extend_from_slice(debugger::KEYS);
        Keymap::new(bindings)
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    use crate::tui::keys::{Command, KeyContext, Keymap};

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn pane_keys_apply_in_panes_but_letters_are_text_in_fields() {
        let map = Keymap::default();
        assert_eq!(
            map.lookup(KeyContext::Elements, &key(KeyCode::Char('q'))),
            Some(Command::Quit)
        );
        assert_eq!(map.lookup(KeyContext::Task, &key(KeyCode::Char('q'))), None);
        assert_eq!(
            map.lookup(
                KeyContext::Task,
                &KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)
            ),
            Some(Command::Quit)
        );
    }

    #[test]
    fn picking_uses_the_listing_keys() {
        let map = Keymap::default();
        assert_eq!(
            map.lookup(KeyContext::Picking, &key(KeyCode::Char('j'))),
            Some(Command::Down)
        );
        assert_eq!(
            map.lookup(KeyContext::Picking, &key(KeyCode::Enter)),
            Some(Command::Submit)
        );
    }

    #[test]
    fn help_joins_keys_that_do_the_same() {
        let map = Keymap::default();
        let rows = map.help_rows(KeyContext::Elements);
        assert!(
            rows.iter().any(|(k, d)| k == "k/↑" && *d == "up"),
            "{rows:?}"
        );
    }

    #[test]
    fn no_key_is_bound_twice_in_one_context() {
        let map = Keymap::default();
        let all = map.bindings();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert!(
                    !(a.context == b.context && a.key == b.key),
                    "{:?} bound twice in {:?}",
                    a.key,
                    a.context
                );
            }
        }
    }

    #[test]
    fn shifted_characters_match_their_binding() {
        let map = Keymap::default();
        let shifted = KeyEvent::new(KeyCode::Char('?'), KeyModifiers::SHIFT);
        assert_eq!(map.lookup(KeyContext::Log, &shifted), Some(Command::Help));
    }
}
