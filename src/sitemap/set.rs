//! Several sitemaps at once, picked by the origin of the page in view.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::model::Sitemap;
use super::SitemapError;

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
                                .is_some_and(super::watch::is_sitemap_file_name)
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

    /// The sitemap for a page: the one whose `origin` matches the URL's
    /// origin, else the first without an `origin` (the fallback). A bare
    /// path has no origin and gets the fallback.
    pub fn for_url(&self, url: &str) -> Option<&Arc<Sitemap>> {
        let origin = origin_of(url);
        origin
            .and_then(|o| {
                self.sitemaps
                    .iter()
                    .find(|s| s.origin() == Some(o.as_str()))
            })
            .or_else(|| self.sitemaps.iter().find(|s| s.origin().is_none()))
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

/// The normalized origin of a URL (`HTTP://Host:80/x` → `http://host`), or
/// `None` for a path or something that is not a URL.
pub fn origin_of(url: &str) -> Option<String> {
    let url = url.trim();
    let scheme_end = url.find("://")?;
    let after = &url[scheme_end + 3..];
    let authority_end = after.find(['/', '?', '#']).unwrap_or(after.len());
    normalize_origin(&url[..scheme_end + 3 + authority_end]).ok()
}

/// Checks and normalizes an origin: lowercase scheme and host, default port
/// dropped, no path. The error says what a valid origin looks like.
pub(crate) fn normalize_origin(origin: &str) -> Result<String, String> {
    let bad = |why: &str| {
        format!("origin `{origin}` {why}; write scheme, host and optional port, e.g. `http://127.0.0.1:8080`")
    };
    let trimmed = origin.trim().trim_end_matches('/');
    let (scheme, authority) = trimmed
        .split_once("://")
        .ok_or_else(|| bad("has no scheme"))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return Err(bad("has an invalid scheme"));
    }
    if authority.is_empty() {
        return Err(bad("has no host"));
    }
    if authority.contains(['/', '?', '#', ' ']) {
        return Err(bad("has a path, query or spaces after the host"));
    }
    // Credentials are not part of an origin.
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let authority = authority.to_ascii_lowercase();
    // An IPv6 host is bracketed and full of colons; the port follows `]`.
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => {
            let close = rest.find(']').ok_or_else(|| bad("has an unclosed `[`"))?;
            (&authority[..close + 2], rest[close + 1..].strip_prefix(':'))
        }
        None => match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority.as_str(), None),
        },
    };
    if host.is_empty() || host == "[]" {
        return Err(bad("has no host"));
    }
    if let Some(p) = port {
        if p.parse::<u16>().is_err() || !p.chars().all(|c| c.is_ascii_digit()) {
            return Err(bad("has an invalid port"));
        }
    }
    let default_port = match scheme.as_str() {
        "http" | "ws" => Some("80"),
        "https" | "wss" => Some("443"),
        _ => None,
    };
    Ok(match port {
        Some(p) if Some(p) != default_port => format!("{scheme}://{host}:{p}"),
        _ => format!("{scheme}://{host}"),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{normalize_origin, origin_of, SitemapSet};
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
        assert_eq!(title("/orders").as_deref(), Some("any.yaml"));
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

    #[test]
    fn origins_are_normalized_or_rejected_with_a_reason() {
        assert_eq!(
            normalize_origin("HTTP://LocalHost:80/").unwrap(),
            "http://localhost"
        );
        assert_eq!(
            normalize_origin("http://[::1]:8080").unwrap(),
            "http://[::1]:8080"
        );
        assert_eq!(origin_of("https://a.b/c").as_deref(), Some("https://a.b"));
        assert!(origin_of("/just/a/path").is_none());
        assert!(normalize_origin("http://host/path")
            .unwrap_err()
            .contains("path"));
        assert!(normalize_origin("http://host:99999")
            .unwrap_err()
            .contains("port"));
    }
}
