//! URL patterns: the one glob of URLs and paths that recipes' location
//! checks, Rhai's `url_matches`, a suite's `url:` check and `switch_tab`'s
//! `url` share. It sits below both the browser and the script host.

/// Whether the page at `url` is the page `pattern` names: a path pattern
/// (`/orders/:id`, `/orders/*`: one segment each) compared with the URL's
/// path, query and fragment ignored, a trailing slash too; or, for a
/// pattern with a scheme, [`url_matches`].
pub fn page_matches(url: &str, pattern: &str) -> bool {
    if !pattern.starts_with('/') {
        return url_matches(url, pattern);
    }
    let path = match url::Url::parse(url) {
        Ok(parsed) => parsed.path().to_string(),
        Err(_) => url.split(['?', '#']).next().unwrap_or("").to_string(),
    };
    let parts = |text: &str| -> Vec<String> {
        text.split(['?', '#'])
            .next()
            .unwrap_or("")
            .split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    let (have, want) = (parts(&path), parts(pattern));
    have.len() == want.len()
        && have
            .iter()
            .zip(&want)
            .all(|(h, w)| w == "*" || w.starts_with(':') || h == w)
}

/// Whether `url` (query and fragment ignored) matches a pattern where `*`
/// stands for any run of characters other than `/` (see [`glob`]).
pub fn url_matches(url: &str, pattern: &str) -> bool {
    let url = url.split(['?', '#']).next().unwrap_or("");
    glob(url, pattern)
}

/// Whether `text` matches `pattern`, where `*` stands for any run of
/// characters other than `/` and `**` for any run at all: the one glob of
/// URLs and paths (recipes' location checks, Rhai's `url_matches`, a
/// suite's `url:` check).
pub fn glob(text: &str, pattern: &str) -> bool {
    glob_bytes(text.as_bytes(), pattern.as_bytes())
}

fn glob_bytes(text: &[u8], pattern: &[u8]) -> bool {
    match pattern {
        [] => text.is_empty(),
        [b'*', b'*', rest @ ..] => (0..=text.len()).any(|i| glob_bytes(&text[i..], rest)),
        [b'*', rest @ ..] => {
            let mut i = 0;
            loop {
                if glob_bytes(&text[i..], rest) {
                    return true;
                }
                if i >= text.len() || text[i] == b'/' {
                    return false;
                }
                i += 1;
            }
        }
        [c, rest @ ..] => text.first() == Some(c) && glob_bytes(&text[1..], rest),
    }
}
