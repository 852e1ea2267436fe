//! The page as the model sees it: interactive elements with their indices,
//! and the text listing built from them.
//!
//! Listing lines follow `[index]<tag attrs>text</tag>`; an element nested in
//! another listed element is indented one tab under it; `*[index]` marks an
//! element that was not in the previous observation of the same document.
//! Lines above and below say how much of the page was left out, so a model
//! knows when to scroll.
//!
//! An element that shows no words of its own is named for the model:
//! `label="…"` when the name comes from where a browser's accessible name
//! would (aria-labelledby, an image's alt, an SVG title, an inner
//! aria-label, CSS-drawn text); `name~="…"` when it is a guess: a lone
//! field's row (never a control's own words), the header of a table
//! column a field stands in, class, id, `data-icon`, an SVG `<use>`
//! reference or the file name of a picture (an image's `src`, or one its
//! style draws), so the model can weigh it (see `browser/scripts/observer/`
//! for the order). A control whose line repeats (one per row or card)
//! carries `in="…"`, its row's first words. A field's value is shown
//! exactly, JSON-quoted, up to [`FIELD_VALUE_LIMIT`] characters, with the
//! rest counted.
//!
//! This module knows nothing of CDP: it reads the JSON the in-page observer
//! produces and renders text.

mod locator;

use std::fmt::{self, Write as _};

use serde::{Deserialize, Serialize};

pub use locator::{
    looks_generated, ElementState, LocateFailure, LocateProblem, Location, Locator, LocatorError,
    TriedLocator, LOCATOR_KINDS,
};

/// Why an observation could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DomError {
    /// The observer's JSON did not have the expected shape.
    #[error("the page observation is malformed: {0}")]
    Malformed(#[from] serde_json::Error),
}

/// The number of an element in a listing: what the model writes as `index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ElementIndex(pub usize);

impl fmt::Display for ElementIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// One listed (visible, uncovered, interactive) element.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InteractiveElement {
    /// Its number in this listing.
    pub index: ElementIndex,
    /// Lower-case tag name.
    pub tag: String,
    /// The attributes kept for choosing (type, name, placeholder, aria-label,
    /// role, value, href, title, checked, selected, disabled, contenteditable,
    /// …), in listing order, values shortened (a field's `value` is exact up
    /// to [`FIELD_VALUE_LIMIT`] characters, with `value+` the count left past
    /// it), then a found name (`label`) or a guessed one (`name~`) for an
    /// element without words, then `in` (its row's first words) for a
    /// control repeated once per row. Flags have an empty value.
    pub attributes: Vec<(String, String)>,
    /// Its visible text, whitespace collapsed and clipped at a word: the
    /// words of listed descendants too (a signature reads whole around its
    /// linked types), and a picture's alt text as `[icon: …]`.
    pub text: String,
    /// Not in the previous observation of the same document.
    pub is_new: bool,
    /// Nesting depth among listed elements (0 = top level).
    pub depth: usize,
    /// The nearest listed ancestor, if any.
    pub parent: Option<ElementIndex>,
    /// Inside an open shadow root.
    pub in_shadow_root: bool,
    /// The listed `<iframe>` whose document holds it (`None`: the page).
    pub frame: Option<ElementIndex>,
    /// An `<iframe>` from another origin whose contents cannot be read.
    pub cross_origin_frame: bool,
    /// The element's identity in its document, the same in every
    /// observation of that document (`None` inside a cross-origin frame,
    /// whose numbering is its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<u64>,
}

impl InteractiveElement {
    /// The value of a kept attribute.
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Where the viewport is on the page, in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ScrollPosition {
    /// Horizontal scroll offset.
    pub x: f64,
    /// Vertical scroll offset.
    pub y: f64,
    /// Viewport width.
    #[serde(alias = "viewportWidth")]
    pub viewport_width: f64,
    /// Viewport height.
    #[serde(alias = "viewportHeight")]
    pub viewport_height: f64,
    /// Scrollable page width.
    #[serde(alias = "pageWidth")]
    pub page_width: f64,
    /// Scrollable page height.
    #[serde(alias = "pageHeight")]
    pub page_height: f64,
}

impl ScrollPosition {
    /// Viewport heights above the current one.
    pub fn pages_above(&self) -> f64 {
        if self.viewport_height <= 0.0 {
            return 0.0;
        }
        (self.y / self.viewport_height).max(0.0)
    }

    /// Viewport heights below the current one.
    pub fn pages_below(&self) -> f64 {
        if self.viewport_height <= 0.0 {
            return 0.0;
        }
        ((self.page_height - self.y - self.viewport_height) / self.viewport_height).max(0.0)
    }
}

/// What the listing left out because it lay outside the observed band.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LeftOut {
    /// Page sections (subtrees) skipped above the band.
    pub above: usize,
    /// Page sections (subtrees) skipped below (or beside) the band.
    pub below: usize,
}

/// The page's readable text near what was observed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PageText {
    /// The text, one block element per line.
    pub text: String,
    /// Whether it was cut at `limit` characters.
    pub clipped: bool,
    /// The clip length in characters.
    pub limit: usize,
}

impl PageText {
    /// The text with the clip stated at its end when it was cut.
    pub fn for_model(&self) -> String {
        if self.clipped {
            format!(
                "{}\n[page text clipped at {} characters]",
                self.text, self.limit
            )
        } else {
            self.text.clone()
        }
    }
}

/// One open tab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TabInfo {
    /// The CDP target id.
    pub id: String,
    /// Its URL.
    pub url: String,
    /// Its title.
    pub title: String,
    /// Whether this is the tab that was observed.
    pub current: bool,
}

/// Everything one observation found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageState {
    /// The observation's number within its document; indices are only valid
    /// with this number (see `Tab::eval_on_index`).
    pub observation: u64,
    /// The page URL.
    pub url: String,
    /// The page title.
    pub title: String,
    /// Open tabs.
    pub tabs: Vec<TabInfo>,
    /// Scroll position and page size.
    pub scroll: ScrollPosition,
    /// The listed elements, in index order.
    pub elements: Vec<InteractiveElement>,
    /// Subtrees outside the observed band.
    pub left_out: LeftOut,
    /// Whether the whole page was observed rather than the viewport band.
    pub full_page: bool,
    /// The exact listing text the model gets.
    pub listing: String,
    /// Readable text of the observed part of the page.
    pub page_text: PageText,
    /// Milliseconds from asking for the state to having the listing.
    pub extract_ms: f64,
}

impl PageState {
    /// The page as far as an action that names no listed element needs
    /// it: its URL, nothing listed (a recipe's step by locator, an action
    /// chosen before any observation).
    pub fn stand_in(url: String) -> PageState {
        PageState {
            observation: 0,
            url,
            title: String::new(),
            tabs: Vec::new(),
            scroll: ScrollPosition::default(),
            elements: Vec::new(),
            left_out: LeftOut::default(),
            full_page: false,
            listing: String::new(),
            page_text: PageText::default(),
            extract_ms: 0.0,
        }
    }

    /// Calls `change` on every string the page wrote: its URL, title,
    /// tabs, listing, text, and each element's tag, text and attribute
    /// values. What leaves the environment's boundary (masked secrets, a
    /// defused fence) is made of these.
    pub fn page_strings_mut(&mut self, mut change: impl FnMut(&mut String)) {
        change(&mut self.url);
        change(&mut self.title);
        change(&mut self.listing);
        change(&mut self.page_text.text);
        for tab in &mut self.tabs {
            change(&mut tab.url);
            change(&mut tab.title);
        }
        for element in &mut self.elements {
            change(&mut element.tag);
            change(&mut element.text);
            for (_, value) in &mut element.attributes {
                change(value);
            }
        }
    }
}

/// The JSON the in-page observer returns (see `browser/scripts/observer/`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawObservation {
    /// Observation number in this document.
    pub sequence: u64,
    /// `location.href`.
    pub url: String,
    /// `document.title`.
    pub title: String,
    /// Whether the whole page was walked.
    pub full_page: bool,
    /// The listed elements.
    pub elements: Vec<RawElement>,
    /// Subtrees skipped above the band.
    pub skipped_above: usize,
    /// Subtrees skipped below the band.
    pub skipped_below: usize,
    /// Scroll and size figures.
    pub scroll: ScrollPosition,
    /// Readable text collected on the walk.
    pub text: String,
    /// Whether the text hit its limit.
    pub text_clipped: bool,
    /// The text limit.
    pub text_limit: usize,
}

/// One element as the observer reports it; its index is its position.
/// Fields at their default are left out of the JSON to keep long pages'
/// payloads small.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawElement {
    /// Tag name.
    pub tag: String,
    /// Identity in its document across observations.
    #[serde(default)]
    pub id: Option<u64>,
    /// Kept attributes as `[name, value]` pairs.
    #[serde(default)]
    pub attrs: Vec<(String, String)>,
    /// Own text.
    #[serde(default)]
    pub text: String,
    /// Not seen by the previous observation.
    #[serde(default)]
    pub is_new: bool,
    /// Depth among listed elements.
    #[serde(default)]
    pub depth: usize,
    /// Nearest listed ancestor.
    #[serde(default)]
    pub parent: Option<usize>,
    /// Inside an open shadow root.
    #[serde(default)]
    pub shadow: bool,
    /// Index of the iframe element holding it.
    #[serde(default)]
    pub frame: Option<usize>,
    /// A cross-origin iframe.
    #[serde(default)]
    pub cross_origin: bool,
    /// For a cross-origin iframe: where its content starts (x, y) and the
    /// part of it that shows (left, top, right, bottom), in the observed
    /// document's top-level viewport coordinates.
    #[serde(default)]
    pub frame_at: Option<[f64; 6]>,
}

impl RawObservation {
    /// Parses the observer's JSON string.
    pub fn parse(json: &str) -> Result<RawObservation, DomError> {
        Ok(serde_json::from_str(json)?)
    }

    /// Builds the page state and its listing.
    pub fn into_page_state(self, tabs: Vec<TabInfo>, extract_ms: f64) -> PageState {
        let elements: Vec<InteractiveElement> = self
            .elements
            .into_iter()
            .enumerate()
            .map(|(i, e)| InteractiveElement {
                index: ElementIndex(i),
                tag: e.tag,
                attributes: e.attrs,
                text: e.text,
                is_new: e.is_new,
                depth: e.depth,
                parent: e.parent.map(ElementIndex),
                in_shadow_root: e.shadow,
                frame: e.frame.map(ElementIndex),
                cross_origin_frame: e.cross_origin,
                node: e.id,
            })
            .collect();
        let left_out = LeftOut {
            above: self.skipped_above,
            below: self.skipped_below,
        };
        let listing = render_listing(&elements, &self.scroll, &left_out, self.full_page);
        PageState {
            observation: self.sequence,
            url: self.url,
            title: self.title,
            tabs,
            scroll: self.scroll,
            elements,
            left_out,
            full_page: self.full_page,
            listing,
            page_text: PageText {
                text: self.text,
                clipped: self.text_clipped,
                limit: self.text_limit,
            },
            extract_ms,
        }
    }
}

/// The most characters of a field's value (input, textarea) the listing
/// shows; the observer (`browser/scripts/observer/`, `VALUE_LIMIT`) clips there and
/// says how many are left, and secrets are masked in that clipped form.
pub const FIELD_VALUE_LIMIT: usize = 2000;

/// Quotes an attribute value for the listing: double quotes inside become
/// single ones so a line stays one readable unit.
fn quote(value: &str) -> String {
    value.replace('"', "'")
}

/// Quotes a field's value exactly: JSON escapes keep a trailing space, a
/// line break or a quote visible on the one line.
pub fn quote_value(value: &str) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| format!("\"{}\"", quote(value)))
}

/// Renders one element line (without indentation).
pub fn element_line(e: &InteractiveElement) -> String {
    let mut line = String::new();
    if e.is_new {
        line.push('*');
    }
    // ok: writing to a String cannot fail.
    let _ = write!(line, "[{}]<{}", e.index, e.tag);
    for (name, value) in &e.attributes {
        if name == "value+" {
            // Said with the value itself.
            continue;
        }
        if name == "value" {
            let _ = write!(line, " value={}", quote_value(value));
            if let Some(left) = e.attribute("value+") {
                let left = left
                    .parse()
                    .map(grouped)
                    .unwrap_or_else(|_| left.to_string());
                let _ = write!(line, " (+{left} more characters)");
            }
        } else if value.is_empty() {
            let _ = write!(line, " {name}");
        } else {
            let _ = write!(line, " {name}=\"{}\"", quote(value));
        }
    }
    if e.cross_origin_frame {
        line.push_str(" cross-origin");
    }
    if e.text.is_empty() {
        if e.cross_origin_frame {
            line.push_str(">(other origin: contents not listed)</iframe>");
        } else {
            line.push_str(" />");
        }
    } else {
        let _ = write!(line, ">{}</{}>", e.text, e.tag);
    }
    // A page names its own tags: one named like the prompt's fence must
    // not read as the fence.
    crate::fence::defuse(&line).into_owned()
}

/// Thousands separators for counts in the listing.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The full listing: a line about what lies above, the element lines
/// indented by depth, and a line about what lies below. Sections left out
/// are only mentioned in a direction the page can scroll: what no scrolling
/// reaches (a box parked off-screen on a page that fits) is not "below".
pub fn render_listing(
    elements: &[InteractiveElement],
    scroll: &ScrollPosition,
    left_out: &LeftOut,
    full_page: bool,
) -> String {
    let mut out = String::new();
    let above = scroll.pages_above();
    let below = scroll.pages_below();
    if full_page {
        out.push_str("[whole page listed]\n");
    } else if left_out.above > 0 && above >= 0.05 {
        let _ = writeln!(
            out,
            "[... {} page sections above not listed ({above:.1} pages above the viewport); scroll up to list them]",
            grouped(left_out.above)
        );
    } else if above >= 0.05 {
        let _ = writeln!(out, "[{above:.1} pages above the viewport, all listed]");
    } else {
        out.push_str("[top of page]\n");
    }
    if elements.is_empty() {
        out.push_str("(no interactive elements in view)\n");
    }
    for e in elements {
        for _ in 0..e.depth {
            out.push('\t');
        }
        out.push_str(&element_line(e));
        out.push('\n');
    }
    if full_page {
        // Nothing was left out, but the model still needs to know where the
        // viewport is before it scrolls.
        let _ = writeln!(
            out,
            "[viewport at {above:.1} pages from the top, {below:.1} pages below it]"
        );
    } else if left_out.below > 0 && below >= 0.05 {
        let _ = writeln!(
            out,
            "[... {} page sections below not listed ({below:.1} pages below the viewport); scroll down to list them]",
            grouped(left_out.below)
        );
    } else if below >= 0.05 {
        let _ = writeln!(out, "[{below:.1} pages below the viewport, all listed]");
    } else {
        out.push_str("[end of page]\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn element(index: usize, tag: &str, text: &str, depth: usize) -> InteractiveElement {
        InteractiveElement {
            index: ElementIndex(index),
            tag: tag.into(),
            attributes: Vec::new(),
            text: text.into(),
            is_new: false,
            depth,
            parent: None,
            in_shadow_root: false,
            frame: None,
            cross_origin_frame: false,
            node: None,
        }
    }

    #[test]
    fn lines_show_index_tag_attributes_text_and_new_marker() {
        let mut e = element(4, "input", "", 0);
        e.attributes = vec![
            ("type".into(), "text".into()),
            ("placeholder".into(), "Your \"name\"".into()),
            ("required".into(), String::new()),
        ];
        e.is_new = true;
        assert_eq!(
            element_line(&e),
            "*[4]<input type=\"text\" placeholder=\"Your 'name'\" required />"
        );
        let b = element(0, "button", "Save", 0);
        assert_eq!(element_line(&b), "[0]<button>Save</button>");
    }

    #[test]
    fn a_fields_value_is_quoted_exactly_and_a_clipped_one_says_what_is_left() {
        let mut e = element(3, "textarea", "", 0);
        e.attributes = vec![
            ("name".into(), "notes".into()),
            ("value".into(), "say \"hi\"\nthen wait ".into()),
        ];
        assert_eq!(
            element_line(&e),
            "[3]<textarea name=\"notes\" value=\"say \\\"hi\\\"\\nthen wait \" />"
        );
        e.attributes = vec![
            ("value".into(), "abc".into()),
            ("value+".into(), "1234".into()),
            ("in".into(), "Row \"one\"".into()),
        ];
        assert_eq!(
            element_line(&e),
            "[3]<textarea value=\"abc\" (+1,234 more characters) in=\"Row 'one'\" />"
        );
    }

    #[test]
    fn children_are_indented_and_the_edges_of_the_page_are_stated() {
        let els = vec![
            element(0, "form", "Sign in", 0),
            element(1, "button", "Go", 1),
        ];
        let scroll = ScrollPosition {
            y: 0.0,
            viewport_height: 800.0,
            page_height: 800.0,
            ..Default::default()
        };
        let text = render_listing(&els, &scroll, &LeftOut::default(), false);
        assert_eq!(
            text,
            "[top of page]\n[0]<form>Sign in</form>\n\t[1]<button>Go</button>\n[end of page]\n"
        );
    }

    #[test]
    fn left_out_sections_are_counted_with_pages() {
        let scroll = ScrollPosition {
            y: 1600.0,
            viewport_height: 800.0,
            page_height: 80_000.0,
            ..Default::default()
        };
        let left = LeftOut {
            above: 12,
            below: 19_950,
        };
        let text = render_listing(&[element(0, "a", "x", 0)], &scroll, &left, false);
        assert!(
            text.starts_with("[... 12 page sections above not listed (2.0 pages above"),
            "{text}"
        );
        assert!(
            text.contains("[... 19,950 page sections below not listed (97.0 pages below"),
            "{text}"
        );
    }

    #[test]
    fn a_page_that_cannot_scroll_never_asks_to_scroll() {
        let scroll = ScrollPosition {
            y: 0.0,
            viewport_height: 800.0,
            page_height: 800.0,
            ..Default::default()
        };
        let left = LeftOut { above: 0, below: 1 };
        let text = render_listing(&[element(0, "a", "x", 0)], &scroll, &left, false);
        assert!(text.ends_with("[end of page]\n"), "{text}");
        assert!(!text.contains("scroll down"), "{text}");
    }

    #[test]
    fn cross_origin_frames_say_their_contents_are_not_listed() {
        let mut e = element(2, "iframe", "", 0);
        e.cross_origin_frame = true;
        e.attributes = vec![("src".into(), "http://other.test/".into())];
        assert_eq!(
            element_line(&e),
            "[2]<iframe src=\"http://other.test/\" cross-origin>(other origin: contents not listed)</iframe>"
        );
    }

    #[test]
    fn observer_json_becomes_a_page_state() {
        let json = r#"{"sequence":3,"url":"http://x/","title":"T","fullPage":false,"elements":[
            {"tag":"a","attrs":[["href","/a"]],"text":"A","isNew":true}],
            "skippedAbove":0,"skippedBelow":0,
            "scroll":{"x":0,"y":0,"viewportWidth":800,"viewportHeight":600,"pageWidth":800,"pageHeight":600},
            "text":"A","textClipped":false,"textLimit":4000}"#;
        let state = RawObservation::parse(json)
            .unwrap()
            .into_page_state(Vec::new(), 1.5);
        assert_eq!(state.observation, 3);
        assert_eq!(state.elements[0].attribute("href"), Some("/a"));
        assert!(
            state.listing.contains("*[0]<a href=\"/a\">A</a>"),
            "{}",
            state.listing
        );
        assert!(RawObservation::parse("{}").is_err());
    }
}
