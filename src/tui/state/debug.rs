//! A recipe under the debugger in the workbench (`:debug`): its source
//! with the line it stopped on, its breakpoints, the variables at the
//! stop, and an edit of its file waiting for the person's choice.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::script::Stop;

use super::ListView;

/// What a debugged run starts from: the recipe, its file and its
/// parameters (checked against its declaration).
#[derive(Debug, Clone, PartialEq)]
pub struct DebugStart {
    /// The recipe's name.
    pub name: String,
    /// Its file, whose lines the source pane shows and breakpoints name.
    pub file: PathBuf,
    /// Its parameters.
    pub params: Map<String, Value>,
}

/// The debugger's view of its recipe.
#[derive(Debug, Clone, PartialEq)]
pub struct DebugView {
    /// What the run started from (a restart starts from it again).
    pub start: DebugStart,
    /// The source the run is running, line by line (empty until read).
    pub source: Vec<String>,
    /// The file as saved since the run started, when it differs: a
    /// restart runs it, going on keeps the old code.
    pub edited: Option<Vec<String>>,
    /// Where it stopped; `None` while it runs.
    pub stop: Option<Stop>,
    /// The variables at the stop.
    pub vars: Map<String, Value>,
    /// The lines with a breakpoint (kept across restarts).
    pub breakpoints: BTreeSet<usize>,
    /// The source pane's cursor (a row is line − 1).
    pub cursor: ListView,
    /// The person asked to restart: the run is ending, and a new one
    /// starts from the top when it has.
    pub restarting: bool,
}

impl DebugView {
    /// A view of a run that is starting.
    pub fn new(start: DebugStart) -> Self {
        DebugView {
            start,
            source: Vec::new(),
            edited: None,
            stop: None,
            vars: Map::new(),
            breakpoints: BTreeSet::new(),
            cursor: ListView::default(),
            restarting: false,
        }
    }

    /// The stop, when it is in the recipe's own file (stepping into a
    /// custom action of another script stops in that script).
    pub fn stop_here(&self) -> Option<&Stop> {
        self.stop.as_ref().filter(|stop| {
            std::path::Path::new(&stop.file).file_name() == self.start.file.file_name()
        })
    }

    /// The line under the source pane's cursor (from 1).
    pub fn cursor_line(&self) -> usize {
        self.cursor.cursor + 1
    }
}
