//! From a concrete path or URL to the page that serves it.

use super::model::Sitemap;
use super::node::SitemapNode;

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

    fn walk(
        &self,
        page: usize,
        rest: &[String],
        params: &mut Vec<(String, String)>,
    ) -> Option<usize> {
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

#[cfg(test)]
mod tests {
    use crate::sitemap::Sitemap;

    fn acme() -> Sitemap {
        Sitemap::from_yaml_str(include_str!("../../sitemaps/acme.yaml")).unwrap()
    }

    #[test]
    fn seed_example_resolves_with_params() {
        let sitemap = acme();
        let found = sitemap.resolve("/orders/12345").unwrap();
        assert_eq!(found.path, "/orders/12345");
        assert_eq!(found.pattern, "/orders/:id");
        assert_eq!(found.params, vec![("id".to_string(), "12345".to_string())]);
        assert_eq!(found.param("id"), Some("12345"));
        assert_eq!(found.node.title, "Order detail");
    }

    #[test]
    fn static_beats_dynamic_and_urls_are_normalized() {
        let sitemap = acme();
        let new = sitemap.resolve("/orders/new").unwrap();
        assert_eq!(new.pattern, "/orders/new");
        assert!(new.params.is_empty());
        let url = sitemap
            .resolve("https://acme.test:8443/orders/77/?tab=items#top")
            .unwrap();
        assert_eq!(
            (url.path.as_str(), url.pattern),
            ("/orders/77", "/orders/:id")
        );
        assert_eq!(sitemap.resolve("http://acme.test").unwrap().pattern, "/");
        assert_eq!(
            sitemap.resolve("/settings/billing/").unwrap().node.title,
            "Billing"
        );
        assert_eq!(
            sitemap.resolve("/orders/a%20b").unwrap().param("id"),
            Some("a b")
        );
    }

    #[test]
    fn unknown_paths_do_not_resolve() {
        let sitemap = acme();
        assert!(sitemap.resolve("/orders/1/items").is_none());
        assert!(sitemap.resolve("/nowhere").is_none());
    }

    #[test]
    fn falls_back_to_dynamic_when_the_static_branch_dead_ends() {
        let sitemap = Sitemap::from_yaml_str(
            "title: R\nchildren:\n  users:\n    title: Users\n    children:\n      me: { title: Me }\n      \":user\":\n        title: User\n        children:\n          posts: { title: Posts }\n",
        )
        .unwrap();
        let found = sitemap.resolve("/users/me/posts").unwrap();
        assert_eq!(found.pattern, "/users/:user/posts");
        assert_eq!(found.param("user"), Some("me"));
    }
}
