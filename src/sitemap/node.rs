//! A page of a sitemap as written: its title, what can be done on it, the
//! words people use for it, and the pages below it.

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
    /// Its own access flags as the model and the workbench show them:
    /// ` [auth]`, ` [admin]`, ` [auth,admin]` or nothing.
    pub fn access_flags(&self) -> &'static str {
        match (self.requires_auth, self.requires_admin) {
            (true, true) => " [auth,admin]",
            (true, false) => " [auth]",
            (false, true) => " [admin]",
            (false, false) => "",
        }
    }
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
