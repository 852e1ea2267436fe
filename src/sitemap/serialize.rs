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
            out.push_str(node.access_flags());
            if let Some(description) = node.description.as_deref().filter(|d| !d.trim().is_empty())
            {
                out.push_str(" — ");
                out.push_str(&one_line(description));
            }
            out.push('\n');
            let detail_indent = "  ".repeat(page.depth + 1);
            if !node.actions.is_empty() {
                out.push_str(&format!(
                    "{detail_indent}actions: {}\n",
                    node.actions.join(", ")
                ));
            }
            if !node.keywords.is_empty() {
                out.push_str(&format!(
                    "{detail_indent}keywords: {}\n",
                    node.keywords.join(", ")
                ));
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

#[cfg(test)]
pub(crate) mod tests {
    use crate::sitemap::{Sitemap, SitemapNode};

    /// The seed document's Acme tree, field for field.
    pub(crate) const SEED_ACME: &str = r#"
title: Acme
description: 電商後台
children:
  login: { title: Sign in }
  dashboard:
    title: Dashboard
    requiresAuth: true
    actions: [view]
  orders:
    title: Orders
    description: 訂單列表
    requiresAuth: true
    actions: [view, filter, export]
    keywords: [order, invoice, sales, 訂單]
    children:
      new:
        title: New order
        requiresAuth: true
        actions: [create]
      ":id":
        title: Order detail
        requiresAuth: true
        actions: [view, edit, cancel, refund, ship]
        notes: Refund 必須先 ship 才能做
  settings:
    title: Settings
    requiresAuth: true
    children:
      profile: { title: Profile }
      billing:
        title: Billing
        requiresAuth: true
        requiresAdmin: true
        actions: [view, upgrade, cancel]
"#;

    #[test]
    fn seed_outline_is_reproduced_exactly() {
        let sitemap = Sitemap::from_yaml_str(SEED_ACME).unwrap();
        let expected = "\
## Site map
/                        Acme — 電商後台
  /login                 Sign in
  /dashboard             Dashboard [auth]
    actions: view
  /orders                Orders [auth] — 訂單列表
    actions: view, filter, export
    keywords: order, invoice, sales, 訂單
    /orders/new          New order [auth]
      actions: create
    /orders/:id          Order detail [auth]
      actions: view, edit, cancel, refund, ship
      note: Refund 必須先 ship 才能做
  /settings              Settings [auth]
    /settings/profile    Profile
    /settings/billing    Billing [auth,admin]
      actions: view, upgrade, cancel
";
        assert_eq!(sitemap.serialize(), expected);
    }

    #[test]
    fn column_moves_right_for_long_paths_and_text_stays_on_one_line() {
        let mut root = SitemapNode::new("Root");
        let mut deep = SitemapNode::new("Deep");
        deep.description = Some("two\n  lines".into());
        deep.requires_admin = true;
        let mut mid = SitemapNode::new("Mid");
        mid.children.push(("a-very-long-segment-name".into(), deep));
        root.children.push(("middle".into(), mid));
        let text = Sitemap::new(root, None).unwrap().serialize();
        let lines: Vec<&str> = text.lines().collect();
        // "    /middle/a-very-long-segment-name" is 36 wide: title at 38.
        assert_eq!(
            lines[3],
            format!(
                "{:<38}Deep [admin] — two lines",
                "    /middle/a-very-long-segment-name"
            )
        );
        assert_eq!(lines[1], format!("{:<38}Root", "/"));
    }
}
