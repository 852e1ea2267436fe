//! Several sitemaps at once, picked by the origin of the page in view.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::SitemapError;
use super::model::Sitemap;
use super::origin::origin_of;

/// The sitemaps in use, one per file; the agent asks for the one matching
/// the current page.
#[derive(Debug, Clone, Default)]
pub struct SitemapSet {
    /// Sorted by source file so the fallback choice does not depend on the
    /// order files were loaded or reloaded in.
    sitemaps: Vec<Arc<Sitemap>>,
}

impl SitemapSet {
    /// An empty set.
    pub fn new() -> Self {
        SitemapSet::default()
    }

    /// Loads every sitemap named: files, and the visible `.yaml` / `.yml`
    /// files directly inside directories (the same files a watcher of those
    /// paths picks up). The first file that fails stops the load, so a
    /// caller never runs with half of what it asked for.
    pub fn load_paths(paths: &[PathBuf]) -> Result<SitemapSet, SitemapError> {
        let mut set = SitemapSet::new();
        for path in paths {
            if path.is_dir() {
                let entries = std::fs::read_dir(path).map_err(|e| SitemapError::Read {
                    file: path.clone(),
                    source: e,
                })?;
                let mut files: Vec<PathBuf> = entries
                    .filter_map(Result::ok)
                    .map(|entry| entry.path())
                    .filter(|file| {
                        file.is_file()
                            && file
                                .file_name()
                                .and_then(|n| n.to_str())
                                .is_some_and(is_sitemap_file_name)
                    })
                    .collect();
                files.sort();
                for file in files {
                    set.insert(Sitemap::load(&file)?);
                }
            } else {
                set.insert(Sitemap::load(path)?);
            }
        }
        Ok(set)
    }

    /// Adds a sitemap, replacing the one loaded from the same file.
    pub fn insert(&mut self, sitemap: impl Into<Arc<Sitemap>>) {
        let sitemap = sitemap.into();
        self.sitemaps
            .retain(|s| s.source().is_none() || s.source() != sitemap.source());
        self.sitemaps.push(sitemap);
        self.sitemaps.sort_by(|a, b| a.source().cmp(&b.source()));
    }

    /// Removes the sitemap loaded from `file`; returns whether there was one.
    pub fn remove(&mut self, file: &Path) -> bool {
        let before = self.sitemaps.len();
        self.sitemaps.retain(|s| s.source() != Some(file));
        self.sitemaps.len() != before
    }

    /// The sitemap loaded from `file`.
    pub fn get(&self, file: &Path) -> Option<&Arc<Sitemap>> {
        self.sitemaps.iter().find(|s| s.source() == Some(file))
    }

    /// The sitemap that applies to a page, if one does: the one whose
    /// `origin` matches the URL's origin (on every page of that origin,
    /// so the model can be told a page is not in it), else the first
    /// without an `origin` that has the page, its path resolving to one
    /// of its pages (dynamic segments included).
    ///
    /// A sitemap without `origin` names no site, so its own pages are
    /// all that tie it to one: it describes the app whose paths it lists,
    /// and is not handed to the model on another site (a demo's sitemap
    /// on a documentation site) where its paths mean nothing. A bare path
    /// has no origin and takes the same rule.
    pub fn for_url(&self, url: &str) -> Option<&Arc<Sitemap>> {
        let origin = origin_of(url);
        origin
            .and_then(|o| {
                self.sitemaps
                    .iter()
                    .find(|s| s.origin() == Some(o.as_str()))
            })
            .or_else(|| {
                self.sitemaps
                    .iter()
                    .find(|s| s.origin().is_none() && s.resolve(url).is_some())
            })
    }

    /// All sitemaps, ordered by source file.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Sitemap>> {
        self.sitemaps.iter()
    }

    /// How many sitemaps are loaded.
    pub fn len(&self) -> usize {
        self.sitemaps.len()
    }

    /// Whether none is loaded.
    pub fn is_empty(&self) -> bool {
        self.sitemaps.is_empty()
    }
}

/// Whether a file in a sitemap directory is a sitemap: a visible `.yaml`
/// or `.yml` file (loading and watching pick the same files).
pub(super) fn is_sitemap_file_name(name: &str) -> bool {
    !name.starts_with('.') && (name.ends_with(".yaml") || name.ends_with(".yml"))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::SitemapSet;
    use crate::sitemap::Sitemap;

    fn sitemap(file: &str, origin: Option<&str>) -> Sitemap {
        let origin_line = origin.map(|o| format!("origin: {o}\n")).unwrap_or_default();
        Sitemap::parse(&format!("title: {file}\n{origin_line}"), Path::new(file)).unwrap()
    }

    #[test]
    fn picks_by_origin_with_fallback() {
        let mut set = SitemapSet::new();
        set.insert(sitemap("shop.yaml", Some("http://127.0.0.1:8080")));
        set.insert(sitemap("any.yaml", None));
        set.insert(sitemap("docs.yaml", Some("https://docs.example.com")));
        let title = |url: &str| set.for_url(url).map(|s| s.root().title.clone());
        assert_eq!(
            title("http://127.0.0.1:8080/orders/1?x#y").as_deref(),
            Some("shop.yaml")
        );
        assert_eq!(
            title("HTTPS://Docs.Example.com:443/a").as_deref(),
            Some("docs.yaml")
        );
        assert_eq!(title("http://127.0.0.1:9090/").as_deref(), Some("any.yaml"));
        assert_eq!(title("/").as_deref(), Some("any.yaml"));
    }

    #[test]
    fn a_sitemap_without_origin_applies_only_to_its_own_pages() {
        let mut set = SitemapSet::new();
        set.insert(
            Sitemap::parse(
                "title: Acme\nchildren:\n  orders:\n    title: Orders\n    children:\n      \":id\":\n        title: Order\n",
                Path::new("acme.yaml"),
            )
            .unwrap(),
        );
        let title = |url: &str| set.for_url(url).map(|s| s.root().title.clone());
        assert_eq!(
            title("http://127.0.0.1:9090/orders/7").as_deref(),
            Some("Acme")
        );
        assert_eq!(title("/orders").as_deref(), Some("Acme"));
        // Another site's page is not one of its pages: no sitemap at all.
        assert_eq!(title("https://doc.rust-lang.org/std/index.html"), None);
        assert_eq!(title("http://127.0.0.1:9090/settings"), None);
    }

    #[test]
    fn no_fallback_means_no_sitemap_for_other_sites() {
        let mut set = SitemapSet::new();
        set.insert(sitemap("shop.yaml", Some("http://127.0.0.1:8080")));
        assert!(set.for_url("http://example.com/").is_none());
    }

    #[test]
    fn insert_replaces_the_same_file_and_remove_drops_it() {
        let mut set = SitemapSet::new();
        set.insert(sitemap("a.yaml", None));
        set.insert(Sitemap::parse("title: A2\n", Path::new("a.yaml")).unwrap());
        assert_eq!(set.len(), 1);
        assert_eq!(set.get(Path::new("a.yaml")).unwrap().root().title, "A2");
        assert!(set.remove(Path::new("a.yaml")));
        assert!(set.is_empty());
    }
}
