//! A loaded sitemap: the validated tree, the per-page index built once when
//! it loads, and search through that index.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::error::SitemapError;
use super::load::parse_tree;
use super::node::{SitemapNode, SitemapPage};
use super::origin::normalize_origin;
use super::rules::{join_pattern, validate_tree};
use super::search::{SearchIndex, SearchMatch};

/// What the index knows about one page; pages are stored in tree order and
/// `Page::route` leads from the root to the node.
#[derive(Debug, Clone)]
pub(crate) struct Page {
    pub(crate) pattern: String,
    pub(crate) depth: usize,
    /// Child positions from the root down to this node.
    pub(crate) route: Vec<usize>,
    /// Static children by segment, as page indices, so resolve is a hash
    /// lookup per segment even on very wide levels.
    pub(crate) static_children: HashMap<String, usize>,
    /// The dynamic child's parameter name (without `:`) and page index.
    pub(crate) dynamic_child: Option<(String, usize)>,
    pub(crate) gated: bool,
}

/// A loaded, validated sitemap with its lookup and search indices.
#[derive(Debug, Clone)]
pub struct Sitemap {
    root: SitemapNode,
    origin: Option<String>,
    source: Option<PathBuf>,
    pub(crate) pages: Vec<Page>,
    pub(crate) search_index: SearchIndex,
}

impl Sitemap {
    /// Builds a sitemap from a tree made in code, checking the same rules
    /// as the YAML loader (titles, segments, one dynamic child per page).
    pub fn new(root: SitemapNode, origin: Option<&str>) -> Result<Sitemap, SitemapError> {
        validate_tree(&root, "/")?;
        let origin = match origin {
            Some(o) => Some(normalize_origin(o).map_err(|e| SitemapError::Tree {
                page: "/".into(),
                message: e.to_string(),
            })?),
            None => None,
        };
        Ok(Sitemap::build(root, origin, None))
    }

    /// Parses YAML text; `source` names it in error messages and events.
    pub fn parse(text: &str, source: &Path) -> Result<Sitemap, SitemapError> {
        let (root, origin) = parse_tree(text, source)?;
        Ok(Sitemap::build(root, origin, Some(source.to_path_buf())))
    }

    /// Parses YAML text that has no file (errors name `<string>`).
    pub fn from_yaml_str(text: &str) -> Result<Sitemap, SitemapError> {
        Sitemap::parse(text, Path::new("<string>"))
    }

    /// Reads and parses a YAML file.
    pub fn load(path: &Path) -> Result<Sitemap, SitemapError> {
        let text = crate::yaml::read_text(path).map_err(SitemapError::from_reading)?;
        Sitemap::parse(&text, path)
    }

    /// Indexes an already valid tree.
    pub(crate) fn build(
        root: SitemapNode,
        origin: Option<String>,
        source: Option<PathBuf>,
    ) -> Self {
        let mut pages = Vec::new();
        index_pages(&root, "/".to_string(), 0, Vec::new(), false, &mut pages);
        let mut sitemap = Sitemap {
            root,
            origin,
            source,
            pages,
            search_index: SearchIndex::default(),
        };
        sitemap.search_index = SearchIndex::build(sitemap.pages());
        sitemap
    }

    /// The root page (`/`).
    pub fn root(&self) -> &SitemapNode {
        &self.root
    }

    /// The normalized origin (`http://127.0.0.1:8080`) this sitemap is for,
    /// if the root declares one.
    pub fn origin(&self) -> Option<&str> {
        self.origin.as_deref()
    }

    /// The file it was loaded from, if any.
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// How many pages the tree has, the root included.
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// Every page in tree order (parents before children, siblings in file
    /// order).
    pub fn pages(&self) -> impl Iterator<Item = SitemapPage<'_>> + '_ {
        (0..self.pages.len()).map(move |i| self.page(i))
    }

    /// Pages matching `query`, best first, at most `limit` of them.
    ///
    /// Case-insensitive; CJK text matches without spaces (`帳單` finds a
    /// page with keyword `帳單`, and so does `我要看帳單`); Latin words
    /// tolerate a small typo (`biling` finds Billing). Titles weigh most,
    /// then keywords, the page's path segment, actions and descriptions.
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchMatch<'_>> {
        self.search_index
            .rank(query, limit)
            .into_iter()
            .map(|(index, score)| {
                let page = self.page(index);
                SearchMatch {
                    path: page.pattern,
                    title: &page.node.title,
                    score,
                    node: page.node,
                }
            })
            .collect()
    }

    pub(crate) fn page(&self, index: usize) -> SitemapPage<'_> {
        let page = &self.pages[index];
        SitemapPage {
            pattern: &page.pattern,
            depth: page.depth,
            gated: page.gated,
            node: self.node_at(index),
        }
    }

    pub(crate) fn node_at(&self, index: usize) -> &SitemapNode {
        let mut node = &self.root;
        for &position in &self.pages[index].route {
            node = &node.children[position].1;
        }
        node
    }
}

fn index_pages(
    node: &SitemapNode,
    pattern: String,
    depth: usize,
    route: Vec<usize>,
    parent_gated: bool,
    pages: &mut Vec<Page>,
) -> usize {
    // Admin pages are behind sign-in too, even when only `requiresAdmin` is set.
    let gated = parent_gated || node.requires_auth || node.requires_admin;
    let me = pages.len();
    pages.push(Page {
        pattern: pattern.clone(),
        depth,
        route: route.clone(),
        static_children: HashMap::new(),
        dynamic_child: None,
        gated,
    });
    for (position, (segment, child)) in node.children.iter().enumerate() {
        let child_pattern = join_pattern(&pattern, segment);
        let mut child_route = route.clone();
        child_route.push(position);
        let child_index = index_pages(child, child_pattern, depth + 1, child_route, gated, pages);
        match segment.strip_prefix(':') {
            Some(name) => pages[me].dynamic_child = Some((name.to_string(), child_index)),
            None => {
                pages[me]
                    .static_children
                    .insert(segment.clone(), child_index);
            }
        }
    }
    me
}
