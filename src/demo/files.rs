//! The demo's sitemap, recipes and suite, built into the binary so
//! `webagent demo` and the suite run from any folder (a `cargo install`
//! has no checkout beside it), and written out by `webagent demo --write`
//! for a person to edit.

use std::io;
use std::path::{Path, PathBuf};

/// The sitemap, relative to the folder the files are written to.
pub const SITEMAP_FILE: &str = "sitemaps/acme.yaml";
/// The recipes' folder, relative to the same folder.
pub const RECIPES_DIR: &str = "recipes";

/// Each file as it is in the repository: its path below the folder the
/// files go to, and its text.
pub const FILES: &[(&str, &str)] = &[
    (SITEMAP_FILE, include_str!("../../sitemaps/acme.yaml")),
    ("recipes/acme.rhai", include_str!("../../recipes/acme.rhai")),
    (
        "recipes/acme.suite.yaml",
        include_str!("../../recipes/acme.suite.yaml"),
    ),
];

/// Why the files were not written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A file is there already; nothing was written.
    #[error("{} exists already; nothing was written (choose another folder or move it)", path.display())]
    Exists {
        /// The file that is in the way.
        path: PathBuf,
    },
    /// A folder or file could not be written.
    #[error("writing {}: {source}", path.display())]
    Io {
        /// What was being written.
        path: PathBuf,
        /// Why it failed.
        source: io::Error,
    },
}

/// Writes the files below `dir`, creating folders as needed, and returns
/// their paths. Refuses before writing anything when one exists already,
/// so a person's edited copy is never overwritten.
pub fn write_files(dir: &Path) -> Result<Vec<PathBuf>, WriteError> {
    let paths: Vec<PathBuf> = FILES.iter().map(|(name, _)| dir.join(name)).collect();
    if let Some(path) = paths.iter().find(|p| p.exists()) {
        return Err(WriteError::Exists { path: path.clone() });
    }
    for (path, (_, text)) in paths.iter().zip(FILES) {
        let io = |source| WriteError::Io {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::write(path, text).map_err(io)?;
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_are_written_once_and_never_overwritten() {
        let dir = std::env::temp_dir().join(format!("webagent-demo-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let written = write_files(&dir).expect("written");
        assert_eq!(written.len(), FILES.len());
        let sitemap = std::fs::read_to_string(dir.join(SITEMAP_FILE)).expect("the sitemap");
        assert_eq!(sitemap, FILES[0].1);
        std::fs::write(dir.join("recipes/acme.rhai"), "// mine").expect("edited");
        let refused = write_files(&dir).expect_err("refused");
        assert!(refused.to_string().contains("exists already"), "{refused}");
        let kept = std::fs::read_to_string(dir.join("recipes/acme.rhai")).expect("kept");
        assert_eq!(kept, "// mine");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
