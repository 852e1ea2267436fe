//! Small text helpers for the demo's hand-written HTML: escaping user text,
//! reading form bodies, query strings and cookies, and formatting money and
//! dates. Kept here so no page function builds markup from raw input.

use std::collections::HashMap;

/// Every piece of text that came from a request (customer names, notes,
/// search terms, key names) goes through this before it reaches a page.
pub use crate::markup::escape;

/// Name/value pairs from an `application/x-www-form-urlencoded` body or a
/// query string. A repeated name keeps its last value, as the demo's forms
/// never send lists.
#[derive(Debug, Default, Clone)]
pub struct FormFields(HashMap<String, String>);

impl FormFields {
    /// Decodes `key=value&...` (also a query string without `?`).
    pub fn parse(encoded: &[u8]) -> FormFields {
        FormFields(
            url::form_urlencoded::parse(encoded)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    /// The trimmed value of a field, or `""` when it is missing.
    pub fn get(&self, name: &str) -> &str {
        self.0.get(name).map_or("", |v| v.trim())
    }
}

/// Percent-encodes a value for a query string (used for `next=`).
pub fn encode_query_value(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// The value of cookie `name` in a `Cookie:` header.
pub fn cookie<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
}

/// Formats cents as US dollars with thousands separators, e.g. `$1,234.50`.
pub fn money(cents: u64) -> String {
    let dollars = (cents / 100).to_string();
    let mut grouped = String::new();
    for (i, digit) in dollars.chars().enumerate() {
        if i > 0 && (dollars.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("${grouped}.{:02}", cents % 100)
}

/// Today's date in UTC as `YYYY-MM-DD`, for orders and keys created now.
pub fn today() -> String {
    crate::clock::utc_date(std::time::SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_neutralises_markup_and_attribute_breakouts() {
        assert_eq!(
            escape(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
        assert_eq!(escape("訂單 plain"), "訂單 plain");
    }

    #[test]
    fn form_bodies_decode_plus_percent_and_utf8() {
        let form = FormFields::parse(
            b"customer=Ada+Lovelace&notes=50%25+off%21&city=%E5%8F%B0%E5%8C%97&q=",
        );
        assert_eq!(form.get("customer"), "Ada Lovelace");
        assert_eq!(form.get("notes"), "50% off!");
        assert_eq!(form.get("city"), "台北");
        assert_eq!(form.get("q"), "");
        assert_eq!(form.get("missing"), "");
    }

    #[test]
    fn cookies_are_found_by_exact_name() {
        let header = "theme=dark; acme_session=abc123; acme_session_old=zzz";
        assert_eq!(cookie(header, "acme_session"), Some("abc123"));
        assert_eq!(cookie(header, "session"), None);
    }

    #[test]
    fn money_groups_thousands() {
        assert_eq!(money(5), "$0.05");
        assert_eq!(money(12_345_678), "$123,456.78");
        assert_eq!(money(100_000), "$1,000.00");
    }
}
