//! (sitemap: being built)
