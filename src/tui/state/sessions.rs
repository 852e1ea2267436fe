//! The list of past sessions as the state holds it: the traces as far as
//! they have been read, the search in force and the cursor over the rows
//! it keeps.

use tui_textarea::TextArea;

use crate::events::{TraceFile, TraceSummary};

use super::list::ListView;

/// The list of past sessions, as far as it has been read.
#[derive(Debug)]
pub struct SessionsView {
    /// Which opening of the view this is (a late listing for an earlier
    /// one is dropped).
    pub generation: u64,
    /// Every trace, newest first; a row not read yet has no task.
    pub rows: Vec<TraceSummary>,
    /// Rows read so far.
    pub read: usize,
    /// The files are not listed yet.
    pub listing: bool,
    /// Why the directory could not be listed.
    pub error: Option<String>,
    /// The search in force (case-insensitive, every word must match).
    pub query: String,
    /// The search field while it is being typed.
    pub search: Option<TextArea<'static>>,
    /// The rows the search keeps, as indices into `rows`.
    pub shown: Vec<usize>,
    /// The cursor over `shown`.
    pub list: ListView,
}

impl SessionsView {
    /// A view waiting for its listing.
    pub fn new(generation: u64) -> Self {
        SessionsView {
            generation,
            rows: Vec::new(),
            read: 0,
            listing: true,
            error: None,
            query: String::new(),
            search: None,
            shown: Vec::new(),
            list: ListView::default(),
        }
    }

    /// The files are known: one unread row each.
    pub fn listed(&mut self, files: Vec<TraceFile>) {
        self.rows = files.into_iter().map(TraceSummary::unread).collect();
        self.read = 0;
        self.listing = false;
        self.refilter();
    }

    /// Summaries read for rows `from..`.
    pub fn summarized(&mut self, from: usize, summaries: Vec<TraceSummary>) {
        for (offset, summary) in summaries.into_iter().enumerate() {
            if let Some(row) = self.rows.get_mut(from + offset) {
                if row.file.path == summary.file.path {
                    *row = summary;
                    self.read += 1;
                }
            }
        }
        if !self.query.is_empty() {
            self.refilter();
        }
    }

    /// The row under the cursor.
    pub fn selected(&self) -> Option<&TraceSummary> {
        self.shown
            .get(self.list.cursor)
            .and_then(|&i| self.rows.get(i))
    }

    /// Applies the search to the rows, keeping the cursor on the same
    /// trace when it is still shown.
    pub fn refilter(&mut self) {
        let keep = self.selected().map(|r| r.file.path.clone());
        let words: Vec<String> = self
            .query
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        self.shown = self
            .rows
            .iter()
            .enumerate()
            .filter(|(_, row)| words.is_empty() || matches_all(row, &words))
            .map(|(i, _)| i)
            .collect();
        let cursor = keep
            .and_then(|path| {
                self.shown
                    .iter()
                    .position(|&i| self.rows[i].file.path == path)
            })
            .unwrap_or(0);
        self.list.cursor = cursor.min(self.shown.len().saturating_sub(1));
        self.list.offset = self.list.offset.min(self.list.cursor);
    }
}

/// Whether every word is found in the row's task, model, outcome, file
/// name or problem.
fn matches_all(row: &TraceSummary, words: &[String]) -> bool {
    let text = format!(
        "{} {} {} {} {}",
        row.task,
        row.model,
        row.outcome.word(),
        row.file.name,
        row.problem.as_deref().unwrap_or("")
    )
    .to_lowercase();
    words.iter().all(|w| text.contains(w.as_str()))
}
