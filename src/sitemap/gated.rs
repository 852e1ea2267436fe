//! Pages behind sign-in.

use super::model::Sitemap;

impl Sitemap {
    /// Every page that needs a signed-in user, in tree order, as path
    /// patterns. A page under a gated page is gated too, and an admin-only
    /// page is always gated (an administrator has to sign in as well).
    pub fn gated_paths(&self) -> Vec<&str> {
        self.pages()
            .filter(|page| page.gated)
            .map(|page| page.pattern)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::sitemap::Sitemap;

    #[test]
    fn seed_gated_list_in_tree_order_with_inheritance() {
        let sitemap = Sitemap::from_yaml_str(crate::sitemap::serialize_tests_seed()).unwrap();
        // Profile has no flag of its own but sits under /settings.
        assert_eq!(
            sitemap.gated_paths(),
            [
                "/dashboard",
                "/orders",
                "/orders/new",
                "/orders/:id",
                "/settings",
                "/settings/profile",
                "/settings/billing"
            ]
        );
    }

    #[test]
    fn admin_only_pages_are_gated_and_public_pages_are_not() {
        let sitemap = Sitemap::from_yaml_str(
            "title: R\nchildren:\n  about: { title: About }\n  admin:\n    title: Admin\n    requiresAdmin: true\n    children:\n      logs: { title: Logs }\n",
        )
        .unwrap();
        assert_eq!(sitemap.gated_paths(), ["/admin", "/admin/logs"]);
    }
}
