//! Origins (`scheme://host:port`): the one a sitemap declares for its site,
//! and the one of a page's URL, which picks the sitemap.

/// Why a text is not an origin; the message says what a valid one looks
/// like.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "origin `{origin}` {problem}; write scheme, host and optional port, e.g. `http://127.0.0.1:8080`"
)]
pub struct OriginError {
    /// The origin as written.
    pub origin: String,
    /// What is wrong with it.
    pub problem: OriginProblem,
}

/// What is wrong with an origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OriginProblem {
    /// No `://` after a scheme.
    #[error("has no scheme")]
    NoScheme,
    /// The scheme has characters a scheme cannot have.
    #[error("has an invalid scheme")]
    InvalidScheme,
    /// Nothing after `://`.
    #[error("has no host")]
    NoHost,
    /// More than scheme, host and port.
    #[error("has a path, query or spaces after the host")]
    PathAfterHost,
    /// An IPv6 host without its `]`.
    #[error("has an unclosed `[`")]
    UnclosedBracket,
    /// A port that is not a number from 0 to 65535.
    #[error("has an invalid port")]
    InvalidPort,
}

/// The normalized origin of a URL (`HTTP://Host:80/x` → `http://host`), or
/// `None` for a path or something that is not a URL.
pub fn origin_of(url: &str) -> Option<String> {
    let url = url.trim();
    let scheme_end = url.find("://")?;
    let after = &url[scheme_end + 3..];
    let authority_end = after.find(['/', '?', '#']).unwrap_or(after.len());
    normalize_origin(&url[..scheme_end + 3 + authority_end]).ok()
}

/// Checks and normalizes an origin: lowercase scheme and host, default port
/// dropped, no path.
pub(crate) fn normalize_origin(origin: &str) -> Result<String, OriginError> {
    let bad = |problem: OriginProblem| OriginError {
        origin: origin.to_string(),
        problem,
    };
    let trimmed = origin.trim().trim_end_matches('/');
    let (scheme, authority) = trimmed
        .split_once("://")
        .ok_or_else(|| bad(OriginProblem::NoScheme))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return Err(bad(OriginProblem::InvalidScheme));
    }
    if authority.is_empty() {
        return Err(bad(OriginProblem::NoHost));
    }
    if authority.contains(['/', '?', '#', ' ']) {
        return Err(bad(OriginProblem::PathAfterHost));
    }
    // Credentials are not part of an origin.
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let authority = authority.to_ascii_lowercase();
    // An IPv6 host is bracketed and full of colons; the port follows `]`.
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => {
            let close = rest
                .find(']')
                .ok_or_else(|| bad(OriginProblem::UnclosedBracket))?;
            (&authority[..close + 2], rest[close + 1..].strip_prefix(':'))
        }
        None => match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority.as_str(), None),
        },
    };
    if host.is_empty() || host == "[]" {
        return Err(bad(OriginProblem::NoHost));
    }
    if let Some(p) = port {
        if p.parse::<u16>().is_err() || !p.chars().all(|c| c.is_ascii_digit()) {
            return Err(bad(OriginProblem::InvalidPort));
        }
    }
    let default_port = match scheme.as_str() {
        "http" | "ws" => Some("80"),
        "https" | "wss" => Some("443"),
        _ => None,
    };
    Ok(match port {
        Some(p) if Some(p) != default_port => format!("{scheme}://{host}:{p}"),
        _ => format!("{scheme}://{host}"),
    })
}

#[cfg(test)]
mod tests {
    use super::{normalize_origin, origin_of, OriginError, OriginProblem};

    #[test]
    fn origins_are_normalized_or_rejected_with_a_reason() {
        assert_eq!(
            normalize_origin("HTTP://LocalHost:80/").unwrap(),
            "http://localhost"
        );
        assert_eq!(
            normalize_origin("http://[::1]:8080").unwrap(),
            "http://[::1]:8080"
        );
        assert_eq!(origin_of("https://a.b/c").as_deref(), Some("https://a.b"));
        assert!(origin_of("/just/a/path").is_none());
        assert!(normalize_origin("http://host/path")
            .unwrap_err()
            .to_string()
            .contains("path"));
        assert!(normalize_origin("http://host:99999")
            .unwrap_err()
            .to_string()
            .contains("port"));
    }

    #[test]
    fn a_bad_origin_names_its_problem_and_shows_a_good_one() {
        let error = normalize_origin("example.com").unwrap_err();
        assert_eq!(
            error,
            OriginError {
                origin: "example.com".into(),
                problem: OriginProblem::NoScheme,
            }
        );
        assert_eq!(
            error.to_string(),
            "origin `example.com` has no scheme; write scheme, host and optional port, e.g. `http://127.0.0.1:8080`"
        );
        assert_eq!(
            normalize_origin("http://[::1").map_err(|e| e.problem),
            Err(OriginProblem::UnclosedBracket)
        );
    }
}
