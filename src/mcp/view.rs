//! What one MCP client has been shown of the page, so that after an
//! action it gets only what changed.
//!
//! A client keeps its own numbering of the elements: an element keeps the
//! index the client first saw it under for as long as its document lives
//! (the observer's per-document identity follows it across observations),
//! and a new element takes the next unused number. So one button added at
//! the top of a list changes one line of the client's listing, not every
//! index below it. Indices the client sends in a call are turned back into
//! the page's current ones before the call runs.
//!
//! Lines carry no `*` mark for new elements: what is new to the client is
//! what a delta inserts.
//!
//! A delta names the element lines removed, changed and inserted (each
//! insertion after a line the client has, or at the top), plus the lines
//! around the listing and the page text when they changed. Applying it to
//! the listing last sent gives the listing `observe` would give now.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::{json, Value};

use crate::agent::prompt::page_for_model;
use crate::dom::{element_line, render_listing, ElementIndex, PageState};

/// One element line of a client's listing: its index in the client's
/// numbering and the line as `observe` shows it (indentation included).
pub type Line = (usize, String);

/// What changed in the page since the client's last listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PageDelta {
    /// The page URL now.
    pub url: String,
    /// The page title now.
    pub title: String,
    /// Client indices whose lines are gone.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<usize>,
    /// Lines whose element stayed but reads differently now.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<Line>,
    /// Runs of new lines, each after the line of the client index given
    /// (`null`: at the top), in the order to apply them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inserted: Vec<(Option<usize>, Vec<Line>)>,
    /// The lines before and after the elements (where the viewport is,
    /// what was left out), when they changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_lines: Option<(String, String)>,
    /// How the page text changed, when it did: its lines from `at`,
    /// `remove` of them replaced by `insert`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<TextSplice>,
}

/// One replacement of a run of lines in a text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TextSplice {
    /// The first line replaced (0-based).
    pub at: usize,
    /// How many lines from there go.
    pub remove: usize,
    /// The lines put there.
    pub insert: Vec<String>,
}

impl TextSplice {
    /// The smallest single replacement that turns `old` into `new`: what
    /// is between their common first and last lines.
    fn between(old: &str, new: &str) -> TextSplice {
        let old: Vec<&str> = old.split('\n').collect();
        let new: Vec<&str> = new.split('\n').collect();
        let head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
        let tail = old[head..]
            .iter()
            .rev()
            .zip(new[head..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        TextSplice {
            at: head,
            remove: old.len() - head - tail,
            insert: new[head..new.len() - tail]
                .iter()
                .map(|l| l.to_string())
                .collect(),
        }
    }

    /// `text` with this replacement made.
    pub fn apply(&self, text: &str) -> String {
        let mut lines: Vec<&str> = text.split('\n').collect();
        let end = (self.at + self.remove).min(lines.len());
        let at = self.at.min(end);
        lines.splice(at..end, self.insert.iter().map(String::as_str));
        lines.join("\n")
    }
}

/// What to send after an action: nothing when the client's listing is
/// still right, a delta, or the whole page.
#[derive(Debug, Clone, PartialEq)]
pub enum PageUpdate {
    /// The page reads as the client last saw it.
    Same,
    /// Apply this to the last listing.
    Delta(PageDelta),
    /// The whole page in the client's numbering (a new document, or a
    /// change as large as the page).
    Whole(String),
}

/// One client's view of the page.
#[derive(Debug, Default)]
pub struct ClientView {
    /// Send whole pages only (`webagent mcp --whole-pages`).
    whole_only: bool,
    /// The document the numbering belongs to: URL without fragment.
    document: Option<String>,
    /// The last observation's number in that document.
    observation: u64,
    /// Client index of each element identity seen in this document.
    by_node: HashMap<u64, usize>,
    /// The page's current index of each client index.
    current: HashMap<usize, ElementIndex>,
    /// The next unused client index.
    next: usize,
    /// The element lines last sent, in page order.
    lines: Vec<Line>,
    /// The lines around them last sent.
    frame_lines: (String, String),
    /// The page text last sent.
    text: String,
    /// A copy of `current` kept up to date for someone outside the view
    /// (a named session's attached workbench, which shows this numbering
    /// while approvals come in the page's).
    mirror: Option<Numbering>,
}

/// The page's current index of each client index, shared.
pub type Numbering = std::sync::Arc<std::sync::Mutex<HashMap<usize, ElementIndex>>>;

impl ClientView {
    /// A view that sends whole pages only when `whole_only`.
    pub fn new(whole_only: bool) -> Self {
        ClientView {
            whole_only,
            ..ClientView::default()
        }
    }

    /// The whole page as the model reads it, in this client's numbering;
    /// the client's listing is this one from now on.
    pub fn whole(&mut self, page: &PageState) -> String {
        let renumbered = self.renumber(page);
        let text = page_for_model(&renumbered);
        self.remember(&renumbered);
        text
    }

    /// `page` in this client's numbering, its listing shown whole: the
    /// client's listing is this one from now on (what `observe --session`
    /// prints).
    pub fn shown(&mut self, page: &PageState) -> PageState {
        let renumbered = self.renumber(page);
        self.remember(&renumbered);
        renumbered
    }

    /// Follows the page to `page` without showing it: the indices the
    /// client sends next refer to it, while a delta still counts from the
    /// listing last shown (a session's `exec` observes after each action
    /// and prints nothing of the page).
    pub fn number(&mut self, page: &PageState) {
        self.renumber(page);
    }

    /// `page` in this client's numbering, followed as [`Self::number`]
    /// follows it and not shown: a delta still counts from the listing
    /// last shown (what an attached workbench is sent).
    pub fn numbered(&mut self, page: &PageState) -> PageState {
        self.renumber(page)
    }

    /// The client's index of each element, by its index in the page as
    /// last numbered: what a picture of the page is marked with for this
    /// client.
    pub fn labels(&self) -> HashMap<usize, usize> {
        self.current
            .iter()
            .map(|(client, page)| (page.0, *client))
            .collect()
    }

    /// Keeps `numbering` equal to this view's numbering from now on.
    pub fn mirror_into(&mut self, numbering: Numbering) {
        self.mirror = Some(numbering);
    }

    /// What to send after an action, given the page now. The view moves
    /// on to it.
    pub fn update(&mut self, page: &PageState) -> PageUpdate {
        let same_document = self.document.as_deref() == Some(document_of(&page.url))
            && page.observation >= self.observation;
        if self.whole_only || !same_document {
            let before = (self.document.clone(), self.lines.clone(), self.text.clone());
            let whole = self.whole(page);
            let unchanged =
                before.0 == self.document && before.1 == self.lines && before.2 == self.text;
            return if unchanged && same_document {
                PageUpdate::Same
            } else {
                PageUpdate::Whole(whole)
            };
        }
        let renumbered = self.renumber(page);
        let now = lines_of(&renumbered);
        let frame_now = frame_lines_of(&renumbered);
        let mut delta = diff(&self.lines, &now);
        delta.url = renumbered.url.clone();
        delta.title = renumbered.title.clone();
        if frame_now != self.frame_lines {
            delta.frame_lines = Some(frame_now);
        }
        let text = renumbered.page_text.for_model();
        if text != self.text {
            delta.text = Some(TextSplice::between(&self.text, &text));
        }
        let nothing = delta.removed.is_empty()
            && delta.changed.is_empty()
            && delta.inserted.is_empty()
            && delta.frame_lines.is_none()
            && delta.text.is_none();
        let whole = page_for_model(&renumbered);
        self.remember(&renumbered);
        if nothing {
            return PageUpdate::Same;
        }
        // A change as large as the page is clearer whole.
        let size = serde_json::to_string(&delta).map_or(usize::MAX, |d| d.chars().count());
        if size >= whole.chars().count() {
            PageUpdate::Whole(whole)
        } else {
            PageUpdate::Delta(delta)
        }
    }

    /// Turns the client's indices in a call's arguments (`index`, also
    /// inside `from` and `to`) into the page's current ones. An index the
    /// client's listing no longer has is an error naming it.
    pub fn translate(&self, arguments: &mut Value) -> Result<(), GoneElement> {
        let Value::Object(fields) = arguments else {
            return Ok(());
        };
        if let Some(index) = fields.get_mut("index") {
            if let Some(client) = index.as_u64() {
                let current = self
                    .current
                    .get(&(client as usize))
                    .ok_or(GoneElement { client })?;
                *index = json!(current.0);
            }
        }
        for nested in ["from", "to"] {
            if let Some(target) = fields.get_mut(nested) {
                self.translate(target)?;
            }
        }
        Ok(())
    }

    /// `page` with this client's indices, the numbering carried on from
    /// the last observation of the same document.
    fn renumber(&mut self, page: &PageState) -> PageState {
        let document = document_of(&page.url).to_string();
        if self.document.as_deref() != Some(document.as_str())
            || page.observation < self.observation
        {
            // A new document numbers its elements from 0 again.
            self.document = Some(document);
            self.by_node.clear();
            self.next = 0;
            self.lines.clear();
        }
        self.observation = page.observation;
        self.current.clear();
        let mut map = vec![0; page.elements.len()];
        let mut taken: HashSet<usize> = HashSet::new();
        for element in &page.elements {
            let client = match element.node.and_then(|n| self.by_node.get(&n).copied()) {
                Some(known) if !taken.contains(&known) => known,
                _ => {
                    let fresh = self.next;
                    self.next += 1;
                    if let Some(node) = element.node {
                        self.by_node.insert(node, fresh);
                    }
                    fresh
                }
            };
            taken.insert(client);
            map[element.index.0] = client;
            self.current.insert(client, element.index);
        }
        if let Some(mirror) = &self.mirror {
            *mirror
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = self.current.clone();
        }
        let at = |i: ElementIndex| ElementIndex(map.get(i.0).copied().unwrap_or(i.0));
        let mut renumbered = page.clone();
        for element in &mut renumbered.elements {
            element.index = at(element.index);
            element.parent = element.parent.map(at);
            element.frame = element.frame.map(at);
            // New to a client is what a delta inserts; the observer's mark
            // (new since its own last look) would differ between a delta
            // and the `observe` after it.
            element.is_new = false;
        }
        renumbered.listing = render_listing(
            &renumbered.elements,
            &renumbered.scroll,
            &renumbered.left_out,
            renumbered.full_page,
        );
        renumbered
    }

    fn remember(&mut self, renumbered: &PageState) {
        self.lines = lines_of(renumbered);
        self.frame_lines = frame_lines_of(renumbered);
        self.text = renumbered.page_text.for_model();
    }
}

/// An index in a client's call that its listing no longer has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("element {client} is not on the page any more; look at the latest listing")]
pub struct GoneElement {
    /// The index in the client's numbering.
    pub client: u64,
}

/// A URL without its fragment: what names a document.
fn document_of(url: &str) -> &str {
    url.split('#').next().unwrap_or(url)
}

/// The element lines of a renumbered page, in page order.
fn lines_of(page: &PageState) -> Vec<Line> {
    page.elements
        .iter()
        .map(|e| {
            let mut line = "\t".repeat(e.depth);
            line.push_str(&element_line(e));
            (e.index.0, line)
        })
        .collect()
}

/// The listing's lines before and after its elements.
fn frame_lines_of(page: &PageState) -> (String, String) {
    let all: Vec<&str> = page.listing.lines().collect();
    let count = page.elements.len();
    let before = all.len().saturating_sub(count).min(1);
    let head = all[..before.min(all.len())].join("\n");
    let tail = all
        .get(before + count..)
        .map(|rest| rest.join("\n"))
        .unwrap_or_default();
    (head, tail)
}

/// The lines removed, changed and inserted between two listings whose
/// lines are keyed by client index. Lines kept in place are the longest
/// run of old lines still in the same order; any other line of the new
/// listing is inserted after the line before it.
fn diff(old: &[Line], new: &[Line]) -> PageDelta {
    let old_at: HashMap<usize, usize> = old.iter().enumerate().map(|(i, (k, _))| (*k, i)).collect();
    // For each new line that was in the old listing, its old position; the
    // longest increasing run of those stays where it is.
    let positions: Vec<(usize, usize)> = new
        .iter()
        .enumerate()
        .filter_map(|(i, (k, _))| old_at.get(k).map(|&p| (i, p)))
        .collect();
    let kept: HashSet<usize> = longest_increasing(&positions)
        .into_iter()
        .map(|i| new[i].0)
        .collect();
    let removed: Vec<usize> = old
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| !kept.contains(k))
        .collect();
    let mut changed = Vec::new();
    let mut inserted: Vec<(Option<usize>, Vec<Line>)> = Vec::new();
    let mut previous: Option<usize> = None;
    for (key, line) in new {
        if kept.contains(key) {
            if old[old_at[key]].1 != *line {
                changed.push((*key, line.clone()));
            }
        } else {
            // A line right after another inserted one joins its run.
            let run = inserted
                .last_mut()
                .map(|(_, run)| run)
                .filter(|run| run.last().map(|(k, _)| *k) == previous);
            match run {
                Some(run) => run.push((*key, line.clone())),
                None => inserted.push((previous, vec![(*key, line.clone())])),
            }
        }
        previous = Some(*key);
    }
    PageDelta {
        url: String::new(),
        title: String::new(),
        removed,
        changed,
        inserted,
        frame_lines: None,
        text: None,
    }
}

/// The indices (into `pairs`) of a longest run whose second values
/// increase (patience sorting, O(n log n)).
fn longest_increasing(pairs: &[(usize, usize)]) -> Vec<usize> {
    let mut tails: Vec<usize> = Vec::new(); // indices into pairs
    let mut back: Vec<Option<usize>> = vec![None; pairs.len()];
    for (i, &(_, value)) in pairs.iter().enumerate() {
        let at = tails.partition_point(|&t| pairs[t].1 < value);
        back[i] = at.checked_sub(1).map(|p| tails[p]);
        if at == tails.len() {
            tails.push(i);
        } else {
            tails[at] = i;
        }
    }
    let mut run = Vec::new();
    let mut at = tails.last().copied();
    while let Some(i) = at {
        run.push(pairs[i].0);
        at = back[i];
    }
    run.reverse();
    run
}

/// Applies `delta` to a listing's lines: what a client does with it. The
/// result equals the listing the delta was computed against.
pub fn apply(lines: &[Line], delta: &PageDelta) -> Vec<Line> {
    let removed: HashSet<usize> = delta.removed.iter().copied().collect();
    let mut out: Vec<Line> = lines
        .iter()
        .filter(|(k, _)| !removed.contains(k))
        .cloned()
        .collect();
    for (key, line) in &delta.changed {
        if let Some(entry) = out.iter_mut().find(|(k, _)| k == key) {
            entry.1 = line.clone();
        }
    }
    for (after, run) in &delta.inserted {
        let at = match after {
            None => 0,
            Some(key) => out
                .iter()
                .position(|(k, _)| k == key)
                .map_or(out.len(), |p| p + 1),
        };
        for (offset, line) in run.iter().enumerate() {
            out.insert(at + offset, line.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(keys: &[(usize, &str)]) -> Vec<Line> {
        keys.iter().map(|(k, t)| (*k, t.to_string())).collect()
    }

    /// A page of buttons, each `(node, text)` listed in that order.
    fn buttons(observation: u64, nodes: &[(u64, &str)]) -> PageState {
        let mut page = PageState::stand_in("http://127.0.0.1:1/list".into());
        page.observation = observation;
        page.elements = nodes
            .iter()
            .enumerate()
            .map(|(index, (node, text))| crate::dom::InteractiveElement {
                index: ElementIndex(index),
                tag: "button".into(),
                attributes: Vec::new(),
                text: (*text).into(),
                is_new: false,
                depth: 0,
                parent: None,
                in_shadow_root: false,
                frame: None,
                cross_origin_frame: false,
                node: Some(*node),
            })
            .collect();
        page
    }

    #[test]
    fn a_picture_is_labelled_with_the_client_s_numbers() {
        let mut view = ClientView::new(false);
        view.shown(&buttons(1, &[(10, "a"), (11, "b")]));
        // A button added at the top: the page numbers it 0, the client 2.
        view.number(&buttons(2, &[(12, "new"), (10, "a"), (11, "b")]));
        assert_eq!(view.labels(), HashMap::from([(0, 2), (1, 0), (2, 1)]));
    }

    #[test]
    fn a_delta_applied_gives_the_new_listing() {
        let old = lines(&[(0, "a"), (1, "b"), (2, "c"), (3, "d"), (4, "e")]);
        for new in [
            // One inserted at the top, one changed, one removed.
            lines(&[(9, "new"), (0, "a"), (1, "B"), (3, "d"), (4, "e")]),
            // Moved: d before b.
            lines(&[(0, "a"), (3, "d"), (1, "b"), (2, "c"), (4, "e")]),
            // Everything replaced.
            lines(&[(7, "x"), (8, "y")]),
            // Nothing at all.
            Vec::new(),
            // Inserted at the end and in the middle.
            lines(&[
                (0, "a"),
                (5, "m1"),
                (6, "m2"),
                (1, "b"),
                (2, "c"),
                (3, "d"),
                (4, "e"),
                (7, "z"),
            ]),
        ] {
            let delta = diff(&old, &new);
            assert_eq!(apply(&old, &delta), new, "{delta:?}");
        }
        let same = diff(&old, &old);
        assert!(same.removed.is_empty() && same.changed.is_empty() && same.inserted.is_empty());
    }

    #[test]
    fn a_text_splice_applied_gives_the_new_text() {
        for (old, new) in [
            ("a\nb\nc", "a\nx\nb\nc"),
            ("a\nb\nc", "a\nc"),
            ("a\nb\nc", "z"),
            ("", "a\nb"),
            ("same\ntext", "same\ntext"),
            ("a\na\na", "a\na"),
        ] {
            let splice = TextSplice::between(old, new);
            assert_eq!(splice.apply(old), new, "{splice:?}");
        }
        let one = TextSplice::between("a\nb\nc\nd", "a\nb\nB\nc\nd");
        assert_eq!((one.at, one.remove, one.insert.len()), (2, 0, 1));
    }

    #[test]
    fn the_longest_increasing_run_is_found() {
        let pairs = [(0, 3), (1, 1), (2, 2), (3, 0), (4, 4)];
        assert_eq!(longest_increasing(&pairs), vec![1, 2, 4]);
        assert!(longest_increasing(&[]).is_empty());
    }
}
