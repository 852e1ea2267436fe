//! The built-in SaaS template.

use std::path::Path;

use super::model::Sitemap;

/// The template as YAML, for `webagent sitemap template` and as a starting
/// file: marketing pages, sign-in, dashboard, orders (list, new, detail) and
/// settings (profile, team, billing, API keys), with English and Chinese
/// keywords.
pub const TEMPLATE_YAML: &str = include_str!("template.yaml");

impl Sitemap {
    /// The built-in template, parsed.
    pub fn template() -> Sitemap {
        match Sitemap::parse(TEMPLATE_YAML, Path::new("<template>")) {
            Ok(sitemap) => sitemap,
            // ok: the text is compiled in and a unit test parses it.
            Err(err) => panic!("the built-in sitemap template is invalid: {err}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::sitemap::Sitemap;

    #[test]
    fn template_has_the_promised_pages() {
        let sitemap = Sitemap::template();
        for path in [
            "/pricing",
            "/login",
            "/signup",
            "/dashboard",
            "/orders",
            "/orders/new",
            "/orders/:id",
            "/settings/profile",
            "/settings/team",
            "/settings/billing",
            "/settings/api-keys",
        ] {
            assert!(sitemap.pages().any(|p| p.pattern == path), "missing {path}");
        }
        assert_eq!(sitemap.resolve("/orders/9").unwrap().pattern, "/orders/:id");
        assert!(sitemap.gated_paths().contains(&"/settings/api-keys"));
        assert!(!sitemap.gated_paths().contains(&"/pricing"));
    }
}
