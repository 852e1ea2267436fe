//! `read_page`: the page's whole text, read in parts a model takes in one
//! step each, in order, every part saying where the next starts and how
//! much is left.
//!
//! The observer reads the text as an observation reads it (icons named,
//! fields' values quoted, preformatted lines kept), all of it; the part is
//! cut here, so its offsets count characters as Rust does and the parts
//! joined are the text. A part ends at a line's end when one is near, at a
//! space when not: never inside a word.

use serde_json::{json, Map, Value};

use super::error::ActError;
use super::replies::strip_ok;
use super::Executor;
use crate::actions::ActionResult;

/// The most characters of a page's text `read_page` reads into parts; a
/// page with more says where its text was cut.
const WHOLE_TEXT_LIMIT: usize = 2_000_000;

impl Executor<'_> {
    /// The part of the page's text that starts `offset` characters in.
    pub(super) async fn read_page(&self, offset: usize) -> Result<ActionResult, ActError> {
        let reply = self
            .helper("readPage", json!({"limit": WHOLE_TEXT_LIMIT}))
            .await?;
        let text = reply["text"].as_str().unwrap_or_default();
        let chars = text.chars().count();
        if offset > chars {
            return Ok(ActionResult::invalid_params(format!(
                "read_page.offset: {offset} is past the end of the page's text ({chars} characters); \
                 offset 0 reads it from the start"
            )));
        }
        let part = Part::of(text, offset, self.options.read_part);
        let mut data = Map::new();
        data.insert("url".into(), reply["url"].clone());
        data.insert("title".into(), reply["title"].clone());
        data.insert("offset".into(), json!(offset));
        data.insert("chars".into(), json!(chars));
        // Where to go on is said before the text, so it stays in view of a
        // reader that cuts a long result short.
        if part.left > 0 {
            data.insert("next_offset".into(), json!(part.end));
        }
        data.insert("chars_left".into(), json!(part.left));
        if reply["clipped"].as_bool() == Some(true) {
            data.insert(
                "cut".into(),
                json!(format!(
                    "the page's text is longer than {WHOLE_TEXT_LIMIT} characters; what lies past them is not read"
                )),
            );
        }
        data.insert("text".into(), Value::String(part.text));
        Ok(ActionResult::ok_with(Value::Object(data)))
    }

    /// What `extract` answers from: the page's text up to the executor's
    /// read limit, at once.
    pub(super) async fn read_for_extract(&self) -> Result<ActionResult, ActError> {
        let reply = self
            .helper("readPage", json!({"limit": self.options.read_limit}))
            .await?;
        Ok(ActionResult::ok_with(strip_ok(reply)))
    }
}

/// One part of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Part {
    /// The part's text, exactly as it stands in the whole.
    text: String,
    /// Where the next part starts, in characters.
    end: usize,
    /// Characters after this part.
    left: usize,
}

impl Part {
    /// The part of `text` from character `offset` that JSON writes in at
    /// most `room` characters (a line break or a quote takes two there):
    /// the rest when it fits, else up to its last line break when that
    /// keeps at least half of the room, else up to its last space.
    fn of(text: &str, offset: usize, room: usize) -> Part {
        let rest: Vec<char> = text.chars().skip(offset).collect();
        let mut written = 0;
        let mut fits = 0;
        for &c in &rest {
            written += json_width(c);
            if written > room {
                break;
            }
            fits += 1;
        }
        let take = if fits == rest.len() {
            fits
        } else {
            let after = |wanted: fn(char) -> bool| {
                rest[..fits]
                    .iter()
                    .rposition(|&c| wanted(c))
                    .map(|at| at + 1)
            };
            match (after(|c| c == '\n'), after(char::is_whitespace)) {
                (Some(line), _) if line >= fits / 2 => line,
                (_, Some(space)) if space >= fits / 2 => space,
                // A word longer than half the room is cut rather than
                // never read.
                _ => fits.max(1),
            }
        };
        Part {
            text: rest[..take].iter().collect(),
            end: offset + take,
            left: rest.len() - take,
        }
    }
}

/// How many characters `c` takes inside a JSON string.
fn json_width(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_that_fits_is_one_part() {
        let part = Part::of("one\ntwo", 0, 100);
        assert_eq!(part.text, "one\ntwo");
        assert_eq!((part.end, part.left), (7, 0));
    }

    #[test]
    fn a_part_ends_at_a_whole_line_and_the_parts_join_to_the_text() {
        let text: String = (0..40)
            .map(|i| format!("line {i:02} of the page\n"))
            .collect();
        let mut joined = String::new();
        let mut offset = 0;
        loop {
            let part = Part::of(&text, offset, 100);
            assert!(part.text.ends_with('\n') || part.left == 0, "{part:?}");
            assert!(serde_json::to_string(&part.text).unwrap().len() <= 102);
            joined.push_str(&part.text);
            offset = part.end;
            if part.left == 0 {
                break;
            }
            assert_eq!(part.left, text.chars().count() - part.end);
        }
        assert_eq!(joined, text);
    }

    #[test]
    fn a_long_line_is_cut_between_words_and_characters_count_as_rust_counts_them() {
        let text = "Grüße aus Köln, ".repeat(20);
        let part = Part::of(&text, 3, 50);
        assert!(part.text.ends_with(' '), "{:?}", part.text);
        assert_eq!(part.end, 3 + part.text.chars().count());
        assert!(text
            .chars()
            .skip(3)
            .collect::<String>()
            .starts_with(&part.text));
        // A word longer than the room is cut rather than never read.
        let long = "x".repeat(80);
        assert_eq!(Part::of(&long, 0, 50).end, 50);
    }
}
