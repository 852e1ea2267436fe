//! The rules every sitemap tree obeys (a title on every page, `children`
//! keys that are single path segments, at most one dynamic child), shared
//! by the YAML loader, which checks them where each key is written, and
//! by trees built in code.

use super::error::SitemapError;
use super::node::SitemapNode;

/// Why a `children` key is not one URL path segment; each message says
/// how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SegmentError {
    /// The key is empty.
    #[error("a children key cannot be empty: name the path segment, e.g. `orders`")]
    Empty,
    /// The key holds a `/`, so it is a path rather than one segment.
    #[error(
        "children key `{segment}` is not a single path segment: {}",
        slash_hint(segment)
    )]
    NotSingle {
        /// The key as written.
        segment: String,
    },
    /// A `:` segment without a parameter name of letters, digits and `_`.
    #[error(
        "dynamic segment `{segment}` needs a parameter name of letters, digits and _ after `:`, e.g. `:id`"
    )]
    BadParameter {
        /// The key as written.
        segment: String,
    },
    /// `.` or `..`, which are steps of a relative path, not pages.
    #[error("children key `{segment}` is not a page: `.` and `..` are relative path steps")]
    RelativeStep {
        /// The key as written.
        segment: String,
    },
    /// A character a path segment cannot hold unescaped.
    #[error(
        "children key `{segment}` is not a path segment: `{}` is not allowed (use letters, digits and - . _ ~, or `:name` for a dynamic segment)",
        character.escape_default()
    )]
    BadCharacter {
        /// The key as written.
        segment: String,
        /// The first character that is not allowed.
        character: char,
    },
}

/// How to fix a key with a `/`: the one segment it holds, or nesting.
fn slash_hint(segment: &str) -> String {
    let trimmed: Vec<&str> = segment.split('/').filter(|s| !s.is_empty()).collect();
    if trimmed.len() == 1 {
        format!("write `{}`", trimmed[0])
    } else {
        "nest each segment under `children` instead".to_string()
    }
}

/// `/` + `orders` → `/orders`; `/orders` + `:id` → `/orders/:id`.
pub(crate) fn join_pattern(parent: &str, segment: &str) -> String {
    if parent == "/" {
        format!("/{segment}")
    } else {
        format!("{parent}/{segment}")
    }
}

/// Checks that a `children` key is one URL path segment.
pub(crate) fn check_segment(segment: &str) -> Result<(), SegmentError> {
    if segment.is_empty() {
        return Err(SegmentError::Empty);
    }
    if segment.contains('/') {
        return Err(SegmentError::NotSingle {
            segment: segment.to_string(),
        });
    }
    if let Some(name) = segment.strip_prefix(':') {
        let mut chars = name.chars();
        let valid = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(SegmentError::BadParameter {
                segment: segment.to_string(),
            });
        }
        return Ok(());
    }
    if segment == "." || segment == ".." {
        return Err(SegmentError::RelativeStep {
            segment: segment.to_string(),
        });
    }
    let bad = segment
        .chars()
        .find(|&c| !(c.is_alphanumeric() || "-._~!$&'()*+,;=@%:".contains(c)));
    if let Some(character) = bad {
        return Err(SegmentError::BadCharacter {
            segment: segment.to_string(),
            character,
        });
    }
    Ok(())
}

/// The rules the YAML loader enforces, for trees built in code.
pub(crate) fn validate_tree(node: &SitemapNode, pattern: &str) -> Result<(), SitemapError> {
    let fail = |message: String| SitemapError::Tree {
        page: pattern.to_string(),
        message,
    };
    if node.title.trim().is_empty() {
        return Err(fail("the title is empty; every page needs a title".into()));
    }
    let mut dynamic: Option<&str> = None;
    for (i, (segment, child)) in node.children.iter().enumerate() {
        check_segment(segment).map_err(|e| fail(e.to_string()))?;
        if node.children[..i].iter().any(|(s, _)| s == segment) {
            return Err(fail(format!("children key `{segment}` appears twice")));
        }
        if segment.starts_with(':') {
            if let Some(first) = dynamic {
                return Err(fail(two_dynamic_message(first, segment, pattern)));
            }
            dynamic = Some(segment);
        }
        validate_tree(child, &join_pattern(pattern, segment))?;
    }
    Ok(())
}

/// Two dynamic children of one page: a URL could not tell them apart.
pub(crate) fn two_dynamic_message(first: &str, second: &str, parent: &str) -> String {
    format!(
        "`{second}` and `{first}` are both dynamic children of {parent}; a page can have only one, since a URL cannot tell them apart"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_that_breaks_a_rule_says_which_and_how_to_fix_it() {
        assert_eq!(check_segment("orders"), Ok(()));
        assert_eq!(check_segment(":id"), Ok(()));
        assert_eq!(check_segment(""), Err(SegmentError::Empty));
        let slashed = check_segment("/orders/").unwrap_err();
        assert_eq!(
            slashed.to_string(),
            "children key `/orders/` is not a single path segment: write `orders`"
        );
        assert_eq!(
            check_segment("a/b").unwrap_err().to_string(),
            "children key `a/b` is not a single path segment: nest each segment under `children` instead"
        );
        assert!(matches!(
            check_segment(":1d"),
            Err(SegmentError::BadParameter { .. })
        ));
        assert!(matches!(
            check_segment(".."),
            Err(SegmentError::RelativeStep { .. })
        ));
        assert_eq!(
            check_segment("a b"),
            Err(SegmentError::BadCharacter {
                segment: "a b".into(),
                character: ' ',
            })
        );
    }
}
