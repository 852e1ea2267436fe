//! Turning a session trace into a recipe (filled in below).

/// Everything that can go wrong exporting.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {}

/// Exports a trace as a recipe.
pub fn export_recipe() {}
