//! From a concrete path or URL to the page that serves it.

use super::model::{Sitemap, SitemapNode};

/// A concrete path matched to a page of the sitemap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved<'a> {
    /// The concrete path, normalized: no query, fragment or trailing slash.
    pub path: String,
    /// The page's pattern, e.g. `/orders/:id`.
    pub pattern: &'a str,
    /// Values of the dynamic segments, in path order (`id` → `12345`).
    pub params: Vec<(String, String)>,
    /// The page.
    pub node: &'a SitemapNode,
}

impl Resolved<'_> {
    /// The value of one dynamic segment.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl Sitemap {
    /// The page serving `target`, a path (`/orders/12345`) or a full URL
    /// (`http://host/orders/12345?tab=items#top`). Query, fragment and a
    /// trailing slash are ignored; percent-escapes in segments are decoded.
    /// A static segment wins over a dynamic sibling, falling back to the
    /// dynamic one when the static branch has no page for the rest.
    pub fn resolve(&self, target: &str) -> Option<Resolved<'_>> {
        let path = path_of(target);
        let segments: Vec<String> = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(percent_decode)
            .collect();
        let mut params = Vec::new();
        let page = self.walk(0, &segments, &mut params)?;
        let p = self.page(page);
        Some(Resolved {
            path: if segments.is_empty() {
                "/".into()
            } else {
                path.split('/')
                    .filter(|s| !s.is_empty())
                    .fold(String::new(), |acc, s| acc + "/" + s)
            },
            pattern: p.pattern,
            params,
            node: p.node,
        })
    }

    fn walk(&self, page: usize, rest: &[String], params: &mut Vec<(String, String)>) -> Option<usize> {
        let Some((segment, tail)) = rest.split_first() else {
            return Some(page);
        };
        let here = &self.pages[page];
        if let Some(&child) = here.static_children.get(segment.as_str()) {
            if let Some(found) = self.walk(child, tail, params) {
                return Some(found);
            }
        }
        if let Some((name, child)) = &here.dynamic_child {
            params.push((name.clone(), segment.clone()));
            if let Some(found) = self.walk(*child, tail, params) {
                return Some(found);
            }
            params.pop();
        }
        None
    }
}

/// The path part of a path or URL, without query and fragment.
fn path_of(target: &str) -> &str {
    let target = target.trim();
    let end = target.find(['?', '#']).unwrap_or(target.len());
    let target = &target[..end];
    match target.find("://") {
        Some(scheme_end) => {
            let after = &target[scheme_end + 3..];
            after.find('/').map(|i| &after[i..]).unwrap_or("/")
        }
        None => target,
    }
}

/// Decodes `%XX` escapes; a segment that does not decode to UTF-8 is kept
/// as written.
fn percent_decode(segment: &str) -> String {
    if !segment.contains('%') {
        return segment.to_string();
    }
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| segment.to_string())
}
