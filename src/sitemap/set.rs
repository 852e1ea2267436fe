//! Several sitemaps at once, picked by the origin of the page in view.

use std::path::Path;
use std::sync::Arc;

use super::model::Sitemap;

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
            .and_then(|o| self.sitemaps.iter().find(|s| s.origin() == Some(o.as_str())))
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
    if scheme.is_empty() || !scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) {
        return Err(bad("has an invalid scheme"));
    }
    if authority.is_empty() {
        return Err(bad("has no host"));
    }
    if authority.contains(['/', '?', '#', ' ']) {
        return Err(bad("has a path, query or spaces after the host"));
    }
    // Credentials are not part of an origin.
    let authority = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
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
