//! Hot reload of script files (filled in below).

/// What the script watcher reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptEvent {}

/// Watches script files and reloads them.
#[derive(Debug)]
pub struct ScriptWatcher;
