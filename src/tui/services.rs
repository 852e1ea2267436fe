//! Connects the workbench's effects to the real browser, agent run and
//! file watchers.
