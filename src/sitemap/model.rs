//! The sitemap tree and the per-page index built once when a sitemap loads.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::search::SearchIndex;
use super::SitemapError;

/// One page of a site and, through `children`, the pages below it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SitemapNode {
    /// Human name of the page (required, never empty).
    pub title: String,
    /// What the page is for.
    pub description: Option<String>,
    /// The page needs a signed-in user (YAML `requiresAuth`).
    pub requires_auth: bool,
    /// The page needs an administrator (YAML `requiresAdmin`).
    pub requires_admin: bool,
    /// Verbs a user can perform on the page (`view`, `refund`, …).
    pub actions: Vec<String>,
    /// Other words, in any language, people use for the page.
    pub keywords: Vec<String>,
    /// Facts the model should know about the page ("refund only after ship").
    pub notes: Option<String>,
    /// Extra guidance for the model while it is on this page.
    pub instructions: Option<String>,
    /// Sub-pages by path segment, in file order; a segment starting with `:`
    /// is dynamic (`:id`).
    pub children: Vec<(String, SitemapNode)>,
}

impl SitemapNode {
    /// A page with only a title.
    pub fn new(title: impl Into<String>) -> Self {
        SitemapNode {
            title: title.into(),
            ..SitemapNode::default()
        }
    }

    /// The child under `segment` (exact, so `:id` finds the dynamic child).
    pub fn child(&self, segment: &str) -> Option<&SitemapNode> {
        self.children
            .iter()
            .find(|(s, _)| s == segment)
            .map(|(_, n)| n)
    }
}

/// A page as seen while walking a loaded sitemap in tree order.
#[derive(Debug, Clone, Copy)]
pub struct SitemapPage<'a> {
    /// The path pattern, e.g. `/orders/:id`.
    pub pattern: &'a str,
    /// 0 for the root, 1 for its children, …
    pub depth: usize,
    /// Whether this page or one above it requires sign-in.
    pub gated: bool,
    /// The page itself.
    pub node: &'a SitemapNode,
}

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
            Some(o) => {
                Some(
                    super::set::normalize_origin(o).map_err(|message| SitemapError::Tree {
                        page: "/".into(),
                        message,
                    })?,
                )
            }
            None => None,
        };
        Ok(Sitemap::build(root, origin, None))
    }

    /// Parses YAML text; `source` names it in error messages and events.
    pub fn parse(text: &str, source: &Path) -> Result<Sitemap, SitemapError> {
        let (root, origin) = super::load::parse_tree(text, source)?;
        Ok(Sitemap::build(root, origin, Some(source.to_path_buf())))
    }

    /// Parses YAML text that has no file (errors name `<string>`).
    pub fn from_yaml_str(text: &str) -> Result<Sitemap, SitemapError> {
        Sitemap::parse(text, Path::new("<string>"))
    }

    /// Reads and parses a YAML file.
    pub fn load(path: &Path) -> Result<Sitemap, SitemapError> {
        let text = std::fs::read_to_string(path).map_err(|source| SitemapError::Read {
            file: path.to_path_buf(),
            source,
        })?;
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
        sitemap.search_index = SearchIndex::build(&sitemap);
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

/// `/` + `orders` → `/orders`; `/orders` + `:id` → `/orders/:id`.
pub(crate) fn join_pattern(parent: &str, segment: &str) -> String {
    if parent == "/" {
        format!("/{segment}")
    } else {
        format!("{parent}/{segment}")
    }
}

/// Checks that a `children` key is one URL path segment; the error says how
/// to fix it.
pub(crate) fn check_segment(segment: &str) -> Result<(), String> {
    if segment.is_empty() {
        return Err("a children key cannot be empty: name the path segment, e.g. `orders`".into());
    }
    if segment.contains('/') {
        let trimmed: Vec<&str> = segment.split('/').filter(|s| !s.is_empty()).collect();
        let hint = if trimmed.len() == 1 {
            format!("write `{}`", trimmed[0])
        } else {
            "nest each segment under `children` instead".to_string()
        };
        return Err(format!(
            "children key `{segment}` is not a single path segment: {hint}"
        ));
    }
    if let Some(name) = segment.strip_prefix(':') {
        let mut chars = name.chars();
        let valid = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(format!(
                "dynamic segment `{segment}` needs a parameter name of letters, digits and _ after `:`, e.g. `:id`"
            ));
        }
        return Ok(());
    }
    if segment == "." || segment == ".." {
        return Err(format!(
            "children key `{segment}` is not a page: `.` and `..` are relative path steps"
        ));
    }
    let bad = segment
        .chars()
        .find(|&c| !(c.is_alphanumeric() || "-._~!$&'()*+,;=@%:".contains(c)));
    if let Some(c) = bad {
        return Err(format!(
            "children key `{segment}` is not a path segment: `{}` is not allowed (use letters, digits and - . _ ~, or `:name` for a dynamic segment)",
            c.escape_default()
        ));
    }
    Ok(())
}

/// The rules the YAML loader enforces, for trees built in code.
fn validate_tree(node: &SitemapNode, pattern: &str) -> Result<(), SitemapError> {
    let fail = |message: String| SitemapError::Tree {
        page: pattern.to_string(),
        message,
    };
    if node.title.trim().is_empty() {
        return Err(fail("the title is empty; every page needs a title".into()));
    }
    let mut dynamic: Option<&str> = None;
    for (i, (segment, child)) in node.children.iter().enumerate() {
        check_segment(segment).map_err(fail)?;
        if node.children[..i].iter().any(|(s, _)| s == segment) {
            return Err(fail(format!("children key `{segment}` appears twice")));
        }
        if segment.starts_with(':') {
            if let Some(first) = dynamic {
                return Err(fail(two_dynamic_message(first, segment, pattern)));
            }
            dynamic = Some(segment);
        }
        validate_tree(child, &join_pattern(pattern, segment))?;
    }
    Ok(())
}

pub(crate) fn two_dynamic_message(first: &str, second: &str, parent: &str) -> String {
    format!(
        "`{second}` and `{first}` are both dynamic children of {parent}; a page can have only one, since a URL cannot tell them apart"
    )
}
