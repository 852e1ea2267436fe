//! Addresses a person or a model writes without their scheme
//! (`localhost:8080`, `example.com/x`): a browser would read them as a
//! path or fail after its load timeout, never what was meant. Shared by
//! the `navigate` check and the commands' `--url`.

/// The part of `url` before its first `/`, `?` or `#`: the host when
/// the scheme was left out.
pub(crate) fn first_segment(url: &str) -> &str {
    url.split(['/', '?', '#']).next().unwrap_or("")
}

/// Whether `segment` reads as a host: a port, `www.`, `localhost`, or a
/// dotted name ending in a common top-level domain.
pub(crate) fn host_like(segment: &str) -> bool {
    let host = segment.split(':').next().unwrap_or("");
    let tld = host.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    has_port(segment)
        || host.starts_with("www.")
        || host == "localhost"
        || (host.contains('.') && COMMON_TLDS.contains(&tld.as_str()))
}

/// Whether `segment` ends in `:PORT`.
fn has_port(segment: &str) -> bool {
    segment
        .split_once(':')
        .is_some_and(|(_, port)| !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()))
}

/// A page address as a command takes it (`--url`, `observe URL`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageAddress {
    /// The address to open.
    pub url: String,
    /// The scheme added to what was written, when one was (`http` for a
    /// host with a port, as local servers are; `https` for another host).
    pub added_scheme: Option<&'static str>,
}

/// Reads `given` as the page a command opens, at once, so an address the
/// browser cannot load is refused before it starts rather than after its
/// load timeout. An absolute URL is kept; a host without a scheme gets
/// one (see [`PageAddress::added_scheme`]); anything else is an error
/// that says how to write it.
pub fn page_address(given: &str) -> Result<PageAddress, String> {
    let given = given.trim();
    let how = "write it with its scheme, like https://example.com/ or http://127.0.0.1:8080/";
    if given.is_empty() {
        return Err(format!("the address is empty; {how}"));
    }
    let kept = |url: &str| PageAddress {
        url: url.to_string(),
        added_scheme: None,
    };
    match url::Url::parse(given) {
        // `localhost:8080` parses with `localhost` as its scheme.
        Ok(parsed) if !(parsed.cannot_be_a_base() && has_port(first_segment(given))) => {
            if parsed.cannot_be_a_base() && !matches!(parsed.scheme(), "about" | "data") {
                return Err(format!("`{given}` is not a page address; {how}"));
            }
            Ok(kept(given))
        }
        _ if !given.contains(char::is_whitespace) && host_like(first_segment(given)) => {
            let scheme = if has_port(first_segment(given)) {
                "http"
            } else {
                "https"
            };
            Ok(PageAddress {
                url: format!("{scheme}://{given}"),
                added_scheme: Some(scheme),
            })
        }
        _ => Err(format!("`{given}` is not a page address; {how}")),
    }
}

const COMMON_TLDS: &[&str] = &[
    "com",
    "org",
    "net",
    "io",
    "dev",
    "app",
    "ai",
    "co",
    "cn",
    "de",
    "uk",
    "jp",
    "fr",
    "edu",
    "gov",
    "info",
    "biz",
    "me",
    "us",
    "ru",
    "in",
    "test",
    "local",
    "localhost",
    "example",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_urls_are_kept() {
        for url in [
            "https://example.com/x",
            "http://127.0.0.1:8080/",
            "about:blank",
            "file:///tmp/a.html",
            "data:text/html,<p>hi</p>",
        ] {
            assert_eq!(
                page_address(url),
                Ok(PageAddress {
                    url: url.into(),
                    added_scheme: None
                })
            );
        }
    }

    #[test]
    fn a_host_with_a_port_gets_http_and_another_host_https() {
        let local = page_address("localhost:8765").expect("a host");
        assert_eq!(local.url, "http://localhost:8765");
        assert_eq!(local.added_scheme, Some("http"));
        let remote = page_address("example.com/docs").expect("a host");
        assert_eq!(remote.url, "https://example.com/docs");
        assert_eq!(remote.added_scheme, Some("https"));
        assert_eq!(
            page_address("127.0.0.1:3000/x").expect("a host").url,
            "http://127.0.0.1:3000/x"
        );
    }

    #[test]
    fn what_is_no_address_is_refused_saying_how_to_write_one() {
        for given in ["not-a-url", "not a url", "mailto:a@b.c", "two words.com"] {
            let error = page_address(given).expect_err(given);
            assert!(
                error.contains("is not a page address") && error.contains("https://"),
                "{given}: {error}"
            );
        }
    }
}
