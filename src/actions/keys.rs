//! `press_keys` combinations (`Enter`, `Control+A`, `Shift+Tab`, `F5`, `a`)
//! turned into the fields CDP's `Input.dispatchKeyEvent` needs.
//!
//! Key values and codes follow the US layout, the one headless Chromium
//! uses. Named keys are matched without regard to case (`enter`, `ENTER`)
//! and common aliases are accepted (`Ctrl`, `Cmd`, `Esc`, `Return`, `Up`),
//! because models and people write them all ways; single characters keep
//! their case, since `a` and `A` type different text.

use std::fmt;

use serde::Serialize;

use super::error::ActionError;

/// The modifier bitmask of `Input.dispatchKeyEvent`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Modifiers(u8);

impl Modifiers {
    /// No modifier held.
    pub const NONE: Modifiers = Modifiers(0);
    /// Alt (Option on macOS).
    pub const ALT: Modifiers = Modifiers(1);
    /// Control.
    pub const CONTROL: Modifiers = Modifiers(2);
    /// Meta (Command on macOS, the Windows key elsewhere).
    pub const META: Modifiers = Modifiers(4);
    /// Shift.
    pub const SHIFT: Modifiers = Modifiers(8);

    /// The raw bitmask CDP expects.
    pub fn bits(self) -> u8 {
        self.0
    }

    /// Whether every modifier in `other` is held here.
    pub fn contains(self, other: Modifiers) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether no modifier is held.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    fn with(self, other: Modifiers) -> Modifiers {
        Modifiers(self.0 | other.0)
    }

    pub(crate) fn without(self, other: Modifiers) -> Modifiers {
        Modifiers(self.0 & !other.0)
    }
}

/// One physical key: what a key event reports about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyDefinition {
    /// The DOM `key` value (`Enter`, `a`, `A`, `ArrowDown`).
    pub key: String,
    /// The DOM `code` of the physical key (`Enter`, `KeyA`); empty for
    /// characters outside the US layout.
    pub code: String,
    /// The Windows virtual key code (`windowsVirtualKeyCode` in CDP); 0 for
    /// characters outside the US layout.
    pub key_code: u32,
    /// The text the key types when no command modifier is held, if any.
    pub text: Option<String>,
    /// DOM key location: 0 standard, 1 left (modifiers).
    pub location: u8,
    /// The modifier this key is, if it is one.
    modifier: Option<Modifiers>,
}

impl KeyDefinition {
    fn named(key: &str, code: &str, key_code: u32, text: Option<&str>) -> Self {
        KeyDefinition {
            key: key.to_string(),
            code: code.to_string(),
            key_code,
            text: text.map(str::to_string),
            location: 0,
            modifier: None,
        }
    }

    fn modifier(key: &str, code: &str, key_code: u32, modifier: Modifiers) -> Self {
        KeyDefinition {
            key: key.to_string(),
            code: code.to_string(),
            key_code,
            text: None,
            location: 1,
            modifier: Some(modifier),
        }
    }

    /// Whether this key is a modifier (Shift, Control, Alt, Meta).
    pub fn is_modifier(&self) -> bool {
        self.modifier.is_some()
    }
}

/// The kind of one `Input.dispatchKeyEvent` call (its `type` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum KeyEventKind {
    /// A key press that also types text.
    #[serde(rename = "keyDown")]
    KeyDown,
    /// A key press that types nothing (modifiers, arrows, shortcuts).
    #[serde(rename = "rawKeyDown")]
    RawKeyDown,
    /// A key release.
    #[serde(rename = "keyUp")]
    KeyUp,
}

/// The parameters of one `Input.dispatchKeyEvent` call, serialized with the
/// CDP field names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyEvent {
    /// Press or release.
    #[serde(rename = "type")]
    pub kind: KeyEventKind,
    /// Modifiers held during this event.
    pub modifiers: Modifiers,
    /// DOM `key`.
    pub key: String,
    /// DOM `code`.
    pub code: String,
    /// Windows virtual key code.
    pub windows_virtual_key_code: u32,
    /// Text typed by this event, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Text the key would type without modifiers, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unmodified_text: Option<String>,
    /// DOM key location.
    pub location: u8,
}

/// A key combination such as `Control+Shift+Z`: modifiers held while one
/// key is pressed. In JSON it is the string form (`"Control+A"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct KeyChord {
    /// The modifier keys, in the order they were written.
    pub modifier_keys: Vec<KeyDefinition>,
    /// The key pressed while they are held.
    pub key: KeyDefinition,
}

impl KeyChord {
    /// Parses `Enter`, `Control+A`, `Shift+Tab`, `Meta+Enter`, `a`, `+`,
    /// `Control++`. A modifier alone (`Shift`) is a valid chord too.
    pub fn parse(text: &str) -> Result<KeyChord, ActionError> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(ActionError::InvalidKeys {
                reason:
                    "no key given; write a key such as `Enter` or a combination such as `Control+A`"
                        .to_string(),
            });
        }
        let parts = split_chord(trimmed);
        let mut definitions = Vec::with_capacity(parts.len());
        for part in &parts {
            let definition = key_definition(part).ok_or_else(|| ActionError::InvalidKeys {
                reason: format!(
                    "unknown key `{part}`{}; use names such as Enter, Tab, Escape, Backspace, \
                     ArrowDown, F5, Control, Shift, Alt, Meta, or a single character",
                    if parts.len() > 1 {
                        format!(" in `{trimmed}`")
                    } else {
                        String::new()
                    }
                ),
            })?;
            definitions.push(definition);
        }
        // `split_chord` yields at least one part for non-empty text, so
        // this error is only a guard.
        let key = definitions.pop().ok_or_else(|| ActionError::InvalidKeys {
            reason: format!("no key in `{trimmed}`"),
        })?;
        if let Some(plain) = definitions.iter().find(|d| !d.is_modifier()) {
            return Err(ActionError::InvalidKeys {
                reason: format!(
                    "`{}` in `{trimmed}` is not a modifier; only Control, Shift, Alt and Meta can \
                     be held while another key is pressed (press keys one after another instead)",
                    plain.key
                ),
            });
        }
        Ok(KeyChord {
            modifier_keys: definitions,
            key,
        })
    }

    /// A key pressed alone.
    pub(super) fn plain(key: KeyDefinition) -> KeyChord {
        KeyChord {
            modifier_keys: Vec::new(),
            key,
        }
    }

    /// The modifiers held when the main key goes down.
    pub fn modifiers(&self) -> Modifiers {
        self.modifier_keys
            .iter()
            .filter_map(|d| d.modifier)
            .fold(Modifiers::NONE, Modifiers::with)
    }

    /// The `Input.dispatchKeyEvent` calls for one press of the chord, in
    /// order: each modifier down, the key down and up, the modifiers up in
    /// reverse.
    pub fn events(&self) -> Vec<KeyEvent> {
        let mut events = Vec::with_capacity(self.modifier_keys.len() * 2 + 2);
        let mut held = Modifiers::NONE;
        for modifier in &self.modifier_keys {
            held = held.with(modifier.modifier.unwrap_or_default());
            events.push(event(KeyEventKind::RawKeyDown, held, modifier, None));
        }
        let chord_key = self.key_as_typed(held);
        if chord_key.is_modifier() {
            held = held.with(chord_key.modifier.unwrap_or_default());
        }
        // Control, Alt or Meta turn a printable key into a shortcut: it must
        // not also insert its character into a focused field.
        let command_held = held.without(Modifiers::SHIFT) != Modifiers::NONE;
        let text = if command_held {
            None
        } else {
            chord_key.text.clone()
        };
        let kind = if text.is_some() {
            KeyEventKind::KeyDown
        } else {
            KeyEventKind::RawKeyDown
        };
        events.push(event(kind, held, &chord_key, text));
        events.push(event(KeyEventKind::KeyUp, held, &chord_key, None));
        if chord_key.is_modifier() {
            held = held.without(chord_key.modifier.unwrap_or_default());
        }
        for modifier in self.modifier_keys.iter().rev() {
            held = held.without(modifier.modifier.unwrap_or_default());
            events.push(event(KeyEventKind::KeyUp, held, modifier, None));
        }
        events
    }

    /// Shift changes what a letter types (`Shift+a` types `A`), as on a
    /// real keyboard.
    fn key_as_typed(&self, held: Modifiers) -> KeyDefinition {
        let mut key = self.key.clone();
        if held.contains(Modifiers::SHIFT) && key.key.chars().count() == 1 {
            let upper: String = key.key.to_uppercase();
            if upper != key.key {
                key.key = upper.clone();
                key.text = Some(upper);
            }
        }
        key
    }
}

impl fmt::Display for KeyChord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for modifier in &self.modifier_keys {
            write!(f, "{}+", modifier.key)?;
        }
        // A bare space would be trimmed away when read back.
        if self.key.key == " " {
            f.write_str("Space")
        } else {
            f.write_str(&self.key.key)
        }
    }
}

impl TryFrom<String> for KeyChord {
    type Error = ActionError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        KeyChord::parse(&text)
    }
}

impl From<KeyChord> for String {
    fn from(chord: KeyChord) -> Self {
        chord.to_string()
    }
}

pub(super) fn event(
    kind: KeyEventKind,
    modifiers: Modifiers,
    definition: &KeyDefinition,
    text: Option<String>,
) -> KeyEvent {
    let unmodified_text = if text.is_some() {
        definition.text.clone()
    } else {
        None
    };
    KeyEvent {
        kind,
        modifiers,
        key: definition.key.clone(),
        code: definition.code.clone(),
        windows_virtual_key_code: definition.key_code,
        text,
        unmodified_text,
        location: definition.location,
    }
}

/// Splits on `+`, treating a `+` that is itself the key (`+`, `Control++`)
/// as a key rather than a separator.
fn split_chord(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if c == '+' && !current.is_empty() {
            parts.push(std::mem::take(&mut current).trim().to_string());
        } else {
            current.push(c);
        }
    }
    if current.is_empty() && text.ends_with('+') {
        // `Control++`: the trailing `+` is the key itself.
        current.push('+');
    }
    parts.push(current.trim().to_string());
    parts
}

pub(super) fn key_definition(name: &str) -> Option<KeyDefinition> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Some(character_key(c));
    }
    let lower = name.to_ascii_lowercase();
    let named = |key, code, key_code, text| Some(KeyDefinition::named(key, code, key_code, text));
    match lower.as_str() {
        "enter" | "return" => named("Enter", "Enter", 13, Some("\r")),
        "tab" => named("Tab", "Tab", 9, None),
        "escape" | "esc" => named("Escape", "Escape", 27, None),
        "backspace" => named("Backspace", "Backspace", 8, None),
        "delete" | "del" => named("Delete", "Delete", 46, None),
        "insert" | "ins" => named("Insert", "Insert", 45, None),
        "space" | "spacebar" => named(" ", "Space", 32, Some(" ")),
        "arrowup" | "up" => named("ArrowUp", "ArrowUp", 38, None),
        "arrowdown" | "down" => named("ArrowDown", "ArrowDown", 40, None),
        "arrowleft" | "left" => named("ArrowLeft", "ArrowLeft", 37, None),
        "arrowright" | "right" => named("ArrowRight", "ArrowRight", 39, None),
        "home" => named("Home", "Home", 36, None),
        "end" => named("End", "End", 35, None),
        "pageup" => named("PageUp", "PageUp", 33, None),
        "pagedown" => named("PageDown", "PageDown", 34, None),
        "capslock" => named("CapsLock", "CapsLock", 20, None),
        "contextmenu" => named("ContextMenu", "ContextMenu", 93, None),
        "shift" => Some(KeyDefinition::modifier(
            "Shift",
            "ShiftLeft",
            16,
            Modifiers::SHIFT,
        )),
        "control" | "ctrl" | "controlormeta" => Some(KeyDefinition::modifier(
            "Control",
            "ControlLeft",
            17,
            Modifiers::CONTROL,
        )),
        "alt" | "option" => Some(KeyDefinition::modifier(
            "Alt",
            "AltLeft",
            18,
            Modifiers::ALT,
        )),
        "meta" | "cmd" | "command" | "super" | "win" => Some(KeyDefinition::modifier(
            "Meta",
            "MetaLeft",
            91,
            Modifiers::META,
        )),
        _ => function_key(&lower),
    }
}

fn function_key(lower: &str) -> Option<KeyDefinition> {
    let number: u32 = lower.strip_prefix('f')?.parse().ok()?;
    if !(1..=12).contains(&number) {
        return None;
    }
    let name = format!("F{number}");
    Some(KeyDefinition::named(&name, &name, 111 + number, None))
}

/// A single character: its physical key on the US layout when it has one,
/// otherwise a key that only types the character.
pub(super) fn character_key(c: char) -> KeyDefinition {
    let text = c.to_string();
    let (code, key_code) = us_layout_key(c).unwrap_or((String::new(), 0));
    KeyDefinition {
        key: text.clone(),
        code,
        key_code,
        text: Some(text),
        location: 0,
        modifier: None,
    }
}

fn us_layout_key(c: char) -> Option<(String, u32)> {
    if c.is_ascii_alphabetic() {
        let upper = c.to_ascii_uppercase();
        return Some((format!("Key{upper}"), upper as u32));
    }
    if c.is_ascii_digit() {
        return Some((format!("Digit{c}"), c as u32));
    }
    let (code, key_code) = match c {
        ' ' => ("Space", 32),
        ')' => ("Digit0", 48),
        '!' => ("Digit1", 49),
        '@' => ("Digit2", 50),
        '#' => ("Digit3", 51),
        '$' => ("Digit4", 52),
        '%' => ("Digit5", 53),
        '^' => ("Digit6", 54),
        '&' => ("Digit7", 55),
        '*' => ("Digit8", 56),
        '(' => ("Digit9", 57),
        ';' | ':' => ("Semicolon", 186),
        '=' | '+' => ("Equal", 187),
        ',' | '<' => ("Comma", 188),
        '-' | '_' => ("Minus", 189),
        '.' | '>' => ("Period", 190),
        '/' | '?' => ("Slash", 191),
        '`' | '~' => ("Backquote", 192),
        '[' | '{' => ("BracketLeft", 219),
        '\\' | '|' => ("Backslash", 220),
        ']' | '}' => ("BracketRight", 221),
        '\'' | '"' => ("Quote", 222),
        _ => return None,
    };
    Some((code.to_string(), key_code))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chord(text: &str) -> KeyChord {
        KeyChord::parse(text).unwrap_or_else(|e| panic!("`{text}` should parse: {e}"))
    }

    fn key_down(chord: &KeyChord) -> KeyEvent {
        chord
            .events()
            .into_iter()
            .find(|e| {
                e.kind != KeyEventKind::KeyUp && e.key == chord.key_as_typed(chord.modifiers()).key
            })
            .unwrap()
    }

    #[test]
    fn enter_types_a_carriage_return() {
        let enter = chord("Enter");
        let events = enter.events();
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].kind, KeyEventKind::KeyDown);
        assert_eq!(events[0].windows_virtual_key_code, 13);
        assert_eq!(events[0].code, "Enter");
        assert_eq!(events[0].text.as_deref(), Some("\r"));
        assert_eq!(events[1].kind, KeyEventKind::KeyUp);
    }

    #[test]
    fn named_keys_have_codes_and_no_text() {
        for (name, key, code, vk) in [
            ("Tab", "Tab", "Tab", 9),
            ("Escape", "Escape", "Escape", 27),
            ("Esc", "Escape", "Escape", 27),
            ("Backspace", "Backspace", "Backspace", 8),
            ("Delete", "Delete", "Delete", 46),
            ("ArrowDown", "ArrowDown", "ArrowDown", 40),
            ("arrowup", "ArrowUp", "ArrowUp", 38),
            ("PageDown", "PageDown", "PageDown", 34),
            ("Home", "Home", "Home", 36),
            ("F1", "F1", "F1", 112),
            ("f12", "F12", "F12", 123),
        ] {
            let down = key_down(&chord(name));
            assert_eq!(
                (
                    down.key.as_str(),
                    down.code.as_str(),
                    down.windows_virtual_key_code
                ),
                (key, code, vk),
                "{name}"
            );
            assert_eq!(down.kind, KeyEventKind::RawKeyDown, "{name}");
            assert_eq!(down.text, None, "{name}");
        }
    }

    #[test]
    fn control_a_is_a_shortcut_without_text() {
        let select_all = chord("Control+A");
        assert_eq!(select_all.modifiers(), Modifiers::CONTROL);
        let events = select_all.events();
        let kinds: Vec<_> = events
            .iter()
            .map(|e| (e.kind, e.key.as_str(), e.modifiers.bits()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (KeyEventKind::RawKeyDown, "Control", 2),
                (KeyEventKind::RawKeyDown, "A", 2),
                (KeyEventKind::KeyUp, "A", 2),
                (KeyEventKind::KeyUp, "Control", 0),
            ]
        );
        assert_eq!(events[1].code, "KeyA");
        assert_eq!(events[1].windows_virtual_key_code, 65);
        assert_eq!(events[1].text, None);
    }

    #[test]
    fn modifier_bitmask_matches_cdp() {
        assert_eq!(chord("Alt+x").modifiers().bits(), 1);
        assert_eq!(chord("Ctrl+x").modifiers().bits(), 2);
        assert_eq!(chord("Meta+Enter").modifiers().bits(), 4);
        assert_eq!(chord("Cmd+Enter").modifiers().bits(), 4);
        assert_eq!(chord("Shift+Tab").modifiers().bits(), 8);
        assert_eq!(chord("Control+Shift+Z").modifiers().bits(), 10);
    }

    #[test]
    fn shift_with_a_letter_types_the_capital() {
        let down = key_down(&chord("Shift+a"));
        assert_eq!(down.key, "A");
        assert_eq!(down.text.as_deref(), Some("A"));
        assert_eq!(down.modifiers, Modifiers::SHIFT);
        assert_eq!(down.kind, KeyEventKind::KeyDown);
    }

    #[test]
    fn single_characters_type_themselves() {
        for (text, code, vk) in [
            ("a", "KeyA", 65),
            ("Z", "KeyZ", 90),
            ("7", "Digit7", 55),
            ("/", "Slash", 191),
            ("?", "Slash", 191),
        ] {
            let down = key_down(&chord(text));
            assert_eq!(down.text.as_deref(), Some(text));
            assert_eq!(down.code, code);
            assert_eq!(down.windows_virtual_key_code, vk);
        }
        let accented = key_down(&chord("é"));
        assert_eq!(accented.text.as_deref(), Some("é"));
        assert_eq!(accented.windows_virtual_key_code, 0);
    }

    #[test]
    fn plus_can_be_the_key_itself() {
        assert_eq!(chord("+").key.key, "+");
        let control_plus = chord("Control++");
        assert_eq!(control_plus.key.key, "+");
        assert_eq!(control_plus.modifiers(), Modifiers::CONTROL);
    }

    #[test]
    fn space_is_named_or_literal() {
        assert_eq!(key_down(&chord("Space")).text.as_deref(), Some(" "));
        assert_eq!(chord("Space").key.code, "Space");
    }

    #[test]
    fn unknown_key_names_are_named_in_the_error() {
        let err = KeyChord::parse("Control+Foo").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("unknown key `Foo`"), "{text}");
        assert!(text.contains("Control+Foo"), "{text}");
        assert!(KeyChord::parse("F13")
            .unwrap_err()
            .to_string()
            .contains("`F13`"));
        assert!(KeyChord::parse("").is_err());
    }

    #[test]
    fn only_modifiers_may_be_held() {
        let text = KeyChord::parse("a+b").unwrap_err().to_string();
        assert!(text.contains("not a modifier"), "{text}");
    }

    #[test]
    fn events_serialize_with_cdp_field_names() {
        let value = serde_json::to_value(&chord("Enter").events()[0]).unwrap();
        assert_eq!(value["type"], "keyDown");
        assert_eq!(value["windowsVirtualKeyCode"], 13);
        assert_eq!(value["modifiers"], 0);
        assert_eq!(value["text"], "\r");
        assert_eq!(value["unmodifiedText"], "\r");
    }

    #[test]
    fn chords_print_canonically() {
        assert_eq!(chord("ctrl+shift+z").to_string(), "Control+Shift+z");
        assert_eq!(chord("ENTER").to_string(), "Enter");
        assert_eq!(chord("Shift+Space").to_string(), "Shift+Space");
        assert_eq!(
            KeyChord::parse(&chord("Control+Space").to_string()),
            Ok(chord("Control+Space"))
        );
    }
}
