//! The action catalog: every action's name, description, parameter schema
//! and risk level, the typed [`Action`] the rest of the program executes, and
//! the [`ActionResult`] every action returns.
//!
//! One [`Catalog`] serves the model (its tool schema), the TUI command line
//! ([`Catalog::parse_command`]), Rhai scripts (custom actions join through
//! [`Catalog::register`]) and the headless runner ([`Catalog::parse`]).
//! Nothing here talks to a browser: parameters are validated before anything
//! runs, so the executor only ever sees well-formed actions.
//!
//! Parts:
//! - `action`: the typed [`Action`] and its targets.
//! - `builtins`: the built-in specs.
//! - `catalog`: the catalog, custom registration, parsing.
//! - `command`: the one-line command syntax of the TUI.
//! - `error`: [`ActionError`], what can be wrong before an action runs.
//! - `keys`: `press_keys` strings to CDP key events.
//! - `repair`: schema-driven fixes for near-miss model output.
//! - `risk_level`: the [`Risk`] levels.
//! - `risk`: the static and effective risk of an action.
//! - `schema`: the JSON-schema subset validator.
//! - `selector`: the restricted CSS selector parser.
//! - `spec`: one catalog entry, [`ActionSpec`].
//! - `result`: [`ActionResult`] and [`FailureReason`].
//! - `typing`: text typed as key presses (and, for the bulk of a long
//!   value in a field, put in at once).
//! - `wire`: the parameter schemas as sent to the model.

mod action;
mod address;
mod builtins;
mod catalog;
mod command;
mod error;
mod keys;
mod repair;
mod result;
mod risk;
mod risk_level;
mod schema;
mod selector;
mod spec;
mod typing;
mod wire;

pub use action::{
    Action, CustomAction, InjectPosition, OptionChoice, ScrollDirection, Target, WaitCondition,
};
pub use address::{page_address, PageAddress};
pub use catalog::Catalog;
pub use command::command_words;
pub use error::ActionError;
pub use keys::{KeyChord, KeyDefinition, KeyEvent, KeyEventKind, Modifiers};
pub use result::{ActionResult, FailureReason};
pub use risk::{origin_of, resolve_url, RiskFacts, TargetFacts};
pub use risk_level::{Risk, UnknownRisk};
pub use selector::Selector;
pub use spec::{ActionSpec, SpecOrigin, NOT_FOR_THE_MODEL};
pub use typing::{field_typing, typing_events, TypedPart, TYPED_HEAD, TYPED_TAIL, TYPED_WHOLE};
pub use wire::{grammar_subset_problems, model_schema};

/// Checks `value` against a JSON schema of the subset the catalog uses
/// (unknown keywords are annotations), as the catalog checks parameters:
/// the value with defaults filled in, or what is wrong and where (`path`
/// names the value).
pub fn check_value(
    schema: &serde_json::Value,
    value: &serde_json::Value,
    path: &str,
) -> Result<serde_json::Value, ActionError> {
    let mut checked = value.clone();
    schema::validate(schema, &mut checked, path)?;
    Ok(checked)
}

#[cfg(test)]
mod robustness_tests {
    //! Whatever a model or a person types, parsing returns a value or an
    //! error; it never panics. A fixed pseudo-random stream keeps the test
    //! deterministic.

    use super::*;

    /// xorshift64: enough variety for input generation, no dependency.
    struct Stream(u64);

    impl Stream {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn text(&mut self, alphabet: &[char], max_len: usize) -> String {
            let len = (self.next() % (max_len as u64 + 1)) as usize;
            (0..len)
                .map(|_| alphabet[(self.next() % alphabet.len() as u64) as usize])
                .collect()
        }
    }

    const ALPHABET: &[char] = &[
        'a', 'b', 'z', 'A', 'Z', '0', '1', '9', '-', '_', '#', '.', '[', ']', '=', '^', '$', '*',
        '~', '|', ':', '(', ')', ',', '>', '+', ' ', '\t', '"', '\'', '\\', '{', '}', 'n', 'é',
        '中', '\n', '/', '?', '&',
    ];

    #[test]
    fn selector_parser_never_panics() {
        let mut stream = Stream(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let text = stream.text(ALPHABET, 24);
            let _ = Selector::parse(&text);
        }
    }

    #[test]
    fn key_parser_never_panics() {
        let mut stream = Stream(0xD1B5_4A32_D192_ED03);
        let words = [
            "Control", "Shift", "Enter", "F1", "F13", "+", "", " ", "a", "é", "Meta",
        ];
        for _ in 0..5_000 {
            let mut text = stream.text(ALPHABET, 6);
            text.push_str(words[(stream.next() % words.len() as u64) as usize]);
            if stream.next() % 2 == 0 {
                text.push('+');
                text.push_str(words[(stream.next() % words.len() as u64) as usize]);
            }
            if let Ok(chord) = KeyChord::parse(&text) {
                assert!(!chord.events().is_empty());
            }
        }
    }

    #[test]
    fn command_parser_never_panics() {
        let catalog = Catalog::builtin();
        let names = catalog.names();
        let mut stream = Stream(0x2545_F491_4F6C_DD1D);
        for _ in 0..20_000 {
            let name = names[(stream.next() % names.len() as u64) as usize];
            let rest = stream.text(ALPHABET, 20);
            let line = if stream.next() % 4 == 0 {
                rest
            } else {
                format!("{name} {rest}")
            };
            if let Ok(action) = catalog.parse_command(&line) {
                // Whatever parsed must survive the trip through JSON.
                assert_eq!(
                    catalog.parse(&action.to_json()).as_ref(),
                    Ok(&action),
                    "{line}"
                );
            }
        }
    }
}
