//! The indented outline the model reads.

use super::model::Sitemap;

/// The outline's title column is at least this far from the line start.
const MIN_TITLE_COLUMN: usize = 25;

impl Sitemap {
    /// The outline given to the model: a `## Site map` header, then one line
    /// per page (indented path padded to a common column, title, the page's
    /// own `[auth]` / `[auth,admin]` flags, ` — description`), with its
    /// `actions:`, `keywords:` and `note:` lines indented below it.
    pub fn serialize(&self) -> String {
        let paths: Vec<(String, usize)> = self
            .pages()
            .map(|page| {
                let indented = format!("{}{}", "  ".repeat(page.depth), page.pattern);
                let width = indented.chars().count();
                (indented, width)
            })
            .collect();
        let longest = paths.iter().map(|(_, w)| *w).max().unwrap_or(0);
        let column = MIN_TITLE_COLUMN.max(longest + 2);

        let mut out = String::from("## Site map\n");
        for (page, (indented, width)) in self.pages().zip(&paths) {
            let node = page.node;
            out.push_str(indented);
            out.push_str(&" ".repeat(column - width));
            out.push_str(&one_line(&node.title));
            let flags = match (node.requires_auth, node.requires_admin) {
                (true, true) => " [auth,admin]",
                (true, false) => " [auth]",
                (false, true) => " [admin]",
                (false, false) => "",
            };
            out.push_str(flags);
            if let Some(description) = node.description.as_deref().filter(|d| !d.trim().is_empty()) {
                out.push_str(" — ");
                out.push_str(&one_line(description));
            }
            out.push('\n');
            let detail_indent = "  ".repeat(page.depth + 1);
            if !node.actions.is_empty() {
                out.push_str(&format!("{detail_indent}actions: {}\n", node.actions.join(", ")));
            }
            if !node.keywords.is_empty() {
                out.push_str(&format!("{detail_indent}keywords: {}\n", node.keywords.join(", ")));
            }
            if let Some(notes) = node.notes.as_deref().filter(|n| !n.trim().is_empty()) {
                out.push_str(&format!("{detail_indent}note: {}\n", one_line(notes)));
            }
        }
        out
    }
}

/// Multi-line YAML text would break the outline's one-line-per-field shape.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
