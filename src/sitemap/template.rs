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
