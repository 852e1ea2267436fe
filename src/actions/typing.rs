//! Text typed as a person's keyboard types it, turned into the calls CDP
//! needs: every key press for a widget that reads keys (a terminal), and
//! for a field key presses with the bulk of a long value put in at once.

use super::keys::{character_key, event, key_definition, KeyChord};
use super::{KeyEvent, KeyEventKind, Modifiers};

/// The longest value a field gets whole as key presses, one per
/// character.
///
/// The trade of a long value: every key press is a round trip through the
/// page (`keydown`, `keypress`, the edit and its `input`, `keyup`, each
/// handled by the renderer before the next, with the frames the edits
/// ask for in between), 1.5–2 ms a character on a busy two-core machine
/// and 3 ms at the end of a 2,000-character line, so a pasted paragraph
/// typed key by key would take seconds where `Input.insertText` takes one
/// call. A value of at most
/// `TYPED_WHOLE` characters (names, e-mail addresses, searches) is typed
/// whole, key by key. A longer one is typed in three parts: its first
/// [`TYPED_HEAD`] characters as keys (what wakes an autocomplete, a
/// character counter, a filter), the middle at once (one `input` event
/// and no key events: a page that counts keys sees fewer than there are
/// characters), and its last [`TYPED_TAIL`] characters as keys again, so a
/// listener waiting on `keydown` or `keyup` reads the whole value.
pub const TYPED_WHOLE: usize = 24;

/// Characters a field gets as key presses at the start of a value longer
/// than [`TYPED_WHOLE`].
pub const TYPED_HEAD: usize = 6;

/// Characters a field gets as key presses at the end of a value longer
/// than [`TYPED_WHOLE`].
pub const TYPED_TAIL: usize = 2;

/// One part of typing a value into a field, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypedPart {
    /// Key presses, each down (with the character it types) and up.
    Keys(Vec<KeyEvent>),
    /// Text put in at once, as `Input.insertText` does: the middle of a
    /// long value, and characters a key press would not type into this
    /// field as written (a tab moves the focus, Enter in a one-line field
    /// submits its form).
    Text(String),
}

/// The key events of typing `text` one character at a time, as a person
/// types it: each character's key down (with its text) and up; a line
/// break is Enter and a tab is Tab. Capitals and the characters above a
/// digit or symbol key are typed with Shift held, as on a US keyboard, so
/// a page that reads `shiftKey` sees what a person's keyboard sends.
pub fn typing_events(text: &str) -> Vec<KeyEvent> {
    let mut events = Vec::with_capacity(text.len() * 2);
    for unit in units(text) {
        match unit {
            Unit::LineBreak(_) => events.extend(named_press("Enter")),
            Unit::Char('\t') => events.extend(named_press("Tab")),
            Unit::Char(c) => events.extend(character_press(c)),
        }
    }
    events
}

/// How `text` is typed into a focused field: key presses for each
/// character of a short value, and for the head and tail of a long one
/// with the middle put in at once (see [`TYPED_WHOLE`]). `multiline`: the
/// field is a text area, where a line break is the Enter key; elsewhere
/// it goes in as text, as a tab does everywhere.
pub fn field_typing(text: &str, multiline: bool) -> Vec<TypedPart> {
    let units = units(text);
    let count = units.len();
    let keyed = |at: usize| count <= TYPED_WHOLE || at < TYPED_HEAD || at >= count - TYPED_TAIL;
    let mut parts: Vec<TypedPart> = Vec::new();
    for (at, unit) in units.into_iter().enumerate() {
        let press = match unit {
            Unit::LineBreak(_) if multiline && keyed(at) => Some(named_press("Enter")),
            Unit::Char(c) if c != '\t' && keyed(at) => Some(character_press(c).to_vec()),
            _ => None,
        };
        match (press, parts.last_mut()) {
            (Some(press), Some(TypedPart::Keys(events))) => events.extend(press),
            (Some(press), _) => parts.push(TypedPart::Keys(press)),
            (None, Some(TypedPart::Text(text))) => unit.push_to(text),
            (None, _) => {
                let mut text = String::new();
                unit.push_to(&mut text);
                parts.push(TypedPart::Text(text));
            }
        }
    }
    parts
}

/// One thing typed: a character, or a line break (`\n`, `\r` or the
/// Windows `\r\n`, one press of Enter), kept as written.
#[derive(Debug, Clone, Copy)]
enum Unit {
    Char(char),
    LineBreak(&'static str),
}

impl Unit {
    fn push_to(self, text: &mut String) {
        match self {
            Unit::Char(c) => text.push(c),
            Unit::LineBreak(written) => text.push_str(written),
        }
    }
}

fn units(text: &str) -> Vec<Unit> {
    let mut units = Vec::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        units.push(match c {
            '\r' if chars.peek() == Some(&'\n') => {
                chars.next();
                Unit::LineBreak("\r\n")
            }
            '\r' => Unit::LineBreak("\r"),
            '\n' => Unit::LineBreak("\n"),
            c => Unit::Char(c),
        });
    }
    units
}

/// One press of a named key (`Enter`, `Tab`).
fn named_press(name: &str) -> Vec<KeyEvent> {
    key_definition(name)
        .map(|key| KeyChord::plain(key).events())
        .unwrap_or_default()
}

/// One press of the key that types `c`, with Shift held where a US
/// keyboard needs it.
fn character_press(c: char) -> [KeyEvent; 2] {
    let key = character_key(c);
    let held = if shifted(c) {
        Modifiers::SHIFT
    } else {
        Modifiers::NONE
    };
    let text = key.text.clone();
    [
        event(KeyEventKind::KeyDown, held, &key, text),
        event(KeyEventKind::KeyUp, held, &key, None),
    ]
}

/// Whether a US keyboard types `c` with Shift held.
fn shifted(c: char) -> bool {
    c.is_ascii_uppercase() || "~!@#$%^&*()_+{}|:\"<>?".contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typing_is_one_press_per_character_with_shift_where_a_keyboard_needs_it() {
        let events = typing_events("lS -A\r\n!");
        let downs: Vec<(&str, Option<&str>, u8)> = events
            .iter()
            .filter(|e| e.kind != KeyEventKind::KeyUp)
            .map(|e| (e.key.as_str(), e.text.as_deref(), e.modifiers.bits()))
            .collect();
        let shift = Modifiers::SHIFT.bits();
        assert_eq!(
            downs,
            vec![
                ("l", Some("l"), 0),
                ("S", Some("S"), shift),
                (" ", Some(" "), 0),
                ("-", Some("-"), 0),
                ("A", Some("A"), shift),
                ("Enter", Some("\r"), 0),
                ("!", Some("!"), shift),
            ]
        );
        assert_eq!(events.len(), 14, "each press has its release");
        assert_eq!(events[1].kind, KeyEventKind::KeyUp);
        assert_eq!(events[0].code, "KeyL");
        assert_eq!(typing_events("\t")[0].key, "Tab");
        assert!(typing_events("").is_empty());
    }

    /// The characters a field typing presses keys for, and the text it
    /// puts in at once, in order (`Text` parts in brackets).
    fn shape(parts: &[TypedPart]) -> String {
        parts
            .iter()
            .map(|part| match part {
                TypedPart::Keys(events) => events
                    .iter()
                    .filter(|e| e.kind == KeyEventKind::KeyDown)
                    .map(|e| e.text.clone().unwrap_or_default())
                    .collect::<String>(),
                TypedPart::Text(text) => format!("[{text}]"),
            })
            .collect()
    }

    #[test]
    fn a_short_value_is_pressed_key_by_key_and_a_field_keeps_what_keys_would_change() {
        assert_eq!(shape(&field_typing("Ab 1!", false)), "Ab 1!");
        let parts = field_typing("Ab", false);
        assert_eq!(parts.len(), 1, "{parts:?}");
        let TypedPart::Keys(events) = &parts[0] else {
            panic!("{parts:?}")
        };
        assert_eq!(events.len(), 4, "a press and a release each");
        // A tab would move the focus, Enter would submit a one-line field's
        // form: both go in as written. In a text area a line break is Enter.
        assert_eq!(shape(&field_typing("a\tb\r\nc", false)), "a[\t]b[\r\n]c");
        assert_eq!(shape(&field_typing("a\tb\r\nc", true)), "a[\t]b\rc");
        // Characters beyond a US keyboard are pressed with their text too.
        assert_eq!(shape(&field_typing("é中😀", false)), "é中😀");
        assert!(field_typing("", false).is_empty());
    }

    #[test]
    fn a_long_value_is_pressed_at_its_head_and_tail_and_put_in_between() {
        let text: String = ('a'..='z').cycle().take(100).collect();
        let parts = field_typing(&text, false);
        let head: String = text.chars().take(TYPED_HEAD).collect();
        let middle: String = text
            .chars()
            .skip(TYPED_HEAD)
            .take(100 - TYPED_HEAD - TYPED_TAIL)
            .collect();
        let tail: String = text.chars().skip(100 - TYPED_TAIL).collect();
        assert_eq!(shape(&parts), format!("{head}[{middle}]{tail}"));
        assert!(
            matches!(parts.last(), Some(TypedPart::Keys(_))),
            "ends on keys"
        );
        // At the limit the value is still typed whole.
        let limit: String = text.chars().take(TYPED_WHOLE).collect();
        assert_eq!(shape(&field_typing(&limit, false)), limit);
        const { assert!(TYPED_HEAD + TYPED_TAIL < TYPED_WHOLE) };
    }
}
