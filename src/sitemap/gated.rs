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
