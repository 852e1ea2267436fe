//! YAML loading with validation.
//!
//! The tree is read with hand-written `DeserializeSeed`s rather than derived
//! structs: each rule (segment syntax, one dynamic child, non-empty title,
//! root-only `origin`) is checked inside the visitor of the key or value it
//! concerns, and serde_yaml attaches the position of that key or value to
//! errors raised there. A check made after deserializing would only know the
//! position of the enclosing mapping.

use std::collections::HashSet;
use std::fmt;
use std::path::Path;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};

use super::error::SitemapError;
use super::node::SitemapNode;
use super::origin::normalize_origin;
use super::rules::{check_segment, join_pattern, two_dynamic_message, SegmentError};
use crate::spelling::edit_distance;
use crate::yaml::YamlError;

/// The keys a page accepts, as written in YAML.
const PAGE_FIELDS: &[&str] = &[
    "title",
    "description",
    "requiresAuth",
    "requiresAdmin",
    "actions",
    "keywords",
    "notes",
    "instructions",
    "children",
];

thread_local! {
    /// The last message this module raised. serde_yaml prefixes custom
    /// errors with the key path (`children.orders: …`), which our messages
    /// already express in page terms, so the original text is kept here and
    /// preferred when the error comes back out.
    static OWN_MESSAGE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// A custom error with `message`, remembered for `yaml_error`.
fn fail<E: de::Error>(message: impl Into<String>) -> E {
    let message = message.into();
    let error = E::custom(&message);
    OWN_MESSAGE.with(|own| *own.borrow_mut() = Some(message));
    error
}

/// Parses a whole sitemap document into its root node and optional origin.
pub(crate) fn parse_tree(
    text: &str,
    source: &Path,
) -> Result<(SitemapNode, Option<String>), SitemapError> {
    if text.trim().is_empty() {
        return Err(SitemapError::Invalid(YamlError::at(
            source,
            (1, 1),
            "the file is empty; a sitemap needs at least a root `title`",
        )));
    }
    OWN_MESSAGE.with(|own| own.borrow_mut().take());
    let deserializer = serde_yaml::Deserializer::from_str(text);
    PageSeed {
        is_root: true,
        pattern: "/",
    }
    .deserialize(deserializer)
    .map_err(|err| yaml_error(err, source, text))
}

fn yaml_error(err: serde_yaml::Error, source: &Path, text: &str) -> SitemapError {
    let mut problem = YamlError::parsing_text(source, &err, text, (1, 1));
    // A message of this module's own, said without serde's wrapping.
    let own = OWN_MESSAGE.with(|own| own.borrow_mut().take());
    if let Some(own) = own.filter(|m| problem.message.contains(m.as_str())) {
        problem.message = own;
    }
    SitemapError::Invalid(problem)
}

/// Deserializes one page; the root additionally accepts `origin`.
struct PageSeed<'p> {
    is_root: bool,
    pattern: &'p str,
}

impl<'de> DeserializeSeed<'de> for PageSeed<'_> {
    type Value = (SitemapNode, Option<String>);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(PageVisitor {
            is_root: self.is_root,
            pattern: self.pattern,
        })
    }
}

struct PageVisitor<'p> {
    is_root: bool,
    pattern: &'p str,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum PageField {
    Title,
    Description,
    RequiresAuth,
    RequiresAdmin,
    Actions,
    Keywords,
    Notes,
    Instructions,
    Children,
    Origin,
}

impl<'de> Visitor<'de> for PageVisitor<'_> {
    type Value = (SitemapNode, Option<String>);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "a page (a mapping with at least `title`) for {}",
            self.pattern
        )
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut node = SitemapNode::default();
        let mut title = None;
        let mut origin = None;
        let mut seen = HashSet::new();
        while let Some(field) = map.next_key_seed(FieldSeed {
            is_root: self.is_root,
            seen: &mut seen,
        })? {
            match field {
                PageField::Title => title = Some(map.next_value_seed(TitleSeed)?),
                PageField::Description => node.description = map.next_value()?,
                PageField::RequiresAuth => node.requires_auth = map.next_value()?,
                PageField::RequiresAdmin => node.requires_admin = map.next_value()?,
                PageField::Actions => node.actions = map.next_value_seed(WordListSeed)?,
                PageField::Keywords => node.keywords = map.next_value_seed(WordListSeed)?,
                PageField::Notes => node.notes = map.next_value()?,
                PageField::Instructions => node.instructions = map.next_value()?,
                PageField::Children => {
                    node.children = map.next_value_seed(ChildrenSeed {
                        pattern: self.pattern,
                    })?
                }
                PageField::Origin => origin = Some(map.next_value_seed(OriginSeed)?),
            }
        }
        node.title = title.ok_or_else(|| {
            fail(format!(
                "page {} has no `title`; every page needs one",
                self.pattern
            ))
        })?;
        Ok((node, origin))
    }
}

/// A page key: known, not repeated, and `origin` only on the root.
struct FieldSeed<'s> {
    is_root: bool,
    seen: &'s mut HashSet<PageField>,
}

impl<'de> DeserializeSeed<'de> for FieldSeed<'_> {
    type Value = PageField;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<PageField, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for FieldSeed<'_> {
    type Value = PageField;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a page field name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<PageField, E> {
        let field = match key {
            "title" => PageField::Title,
            "description" => PageField::Description,
            "requiresAuth" => PageField::RequiresAuth,
            "requiresAdmin" => PageField::RequiresAdmin,
            "actions" => PageField::Actions,
            "keywords" => PageField::Keywords,
            "notes" => PageField::Notes,
            "instructions" => PageField::Instructions,
            "children" => PageField::Children,
            "origin" if self.is_root => PageField::Origin,
            "origin" => {
                return Err(fail(
                    "`origin` belongs on the root page only (it says which site the whole sitemap describes)",
                ))
            }
            other => return Err(fail(unknown_field_message(other, self.is_root))),
        };
        if !self.seen.insert(field) {
            return Err(fail(format!("`{key}` appears twice in this page")));
        }
        Ok(field)
    }
}

fn unknown_field_message(key: &str, is_root: bool) -> String {
    let mut allowed: Vec<&str> = PAGE_FIELDS.to_vec();
    if is_root {
        allowed.push("origin");
    }
    let lower = key.to_lowercase().replace(['_', '-'], "");
    let suggestion = allowed
        .iter()
        .find(|f| f.to_lowercase() == lower)
        .or_else(|| {
            allowed
                .iter()
                .find(|f| edit_distance(&f.to_lowercase(), &lower, 2).is_some())
        });
    let hint = match suggestion {
        Some(s) => format!(" (did you mean `{s}`?)"),
        None => String::new(),
    };
    format!(
        "unknown field `{key}`{hint}; a page takes {}",
        allowed.join(", ")
    )
}

/// A title that is a non-empty string.
struct TitleSeed;

impl<'de> DeserializeSeed<'de> for TitleSeed {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for TitleSeed {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a non-empty title")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        if v.trim().is_empty() {
            return Err(fail("the title is empty; every page needs a title"));
        }
        Ok(v.to_string())
    }

    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        Err(fail("the title is empty; every page needs a title"))
    }
}

/// `actions` and `keywords`: a list of strings; a missing value (`actions:`)
/// is an empty list, as people write while editing.
struct WordListSeed;

impl<'de> DeserializeSeed<'de> for WordListSeed {
    type Value = Vec<String>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Vec<String>, D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for WordListSeed {
    type Value = Vec<String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of words such as `[view, edit]`")
    }

    fn visit_none<E: de::Error>(self) -> Result<Vec<String>, E> {
        Ok(Vec::new())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Vec<String>, E> {
        Ok(Vec::new())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Vec<String>, D::Error> {
        deserializer.deserialize_seq(self)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
        let mut words = Vec::new();
        while let Some(word) = seq.next_element::<String>()? {
            words.push(word);
        }
        Ok(words)
    }
}

/// The root's `origin`: scheme, host and optional port.
struct OriginSeed;

impl<'de> DeserializeSeed<'de> for OriginSeed {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for OriginSeed {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an origin such as `http://127.0.0.1:8080`")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        normalize_origin(v).map_err(|e| fail(e.to_string()))
    }
}

/// `children`: an ordered map from path segment to page.
struct ChildrenSeed<'p> {
    pattern: &'p str,
}

impl<'de> DeserializeSeed<'de> for ChildrenSeed<'_> {
    type Value = Vec<(String, SitemapNode)>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for ChildrenSeed<'_> {
    type Value = Vec<(String, SitemapNode)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "a mapping from path segment to page under {}",
            self.pattern
        )
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut children: Vec<(String, SitemapNode)> = Vec::new();
        let mut dynamic: Option<String> = None;
        while let Some(segment) = map.next_key_seed(SegmentSeed {
            parent: self.pattern,
            earlier: &children,
            dynamic: dynamic.as_deref(),
        })? {
            let pattern = join_pattern(self.pattern, &segment);
            let (node, _) = map.next_value_seed(PageSeed {
                is_root: false,
                pattern: &pattern,
            })?;
            if segment.starts_with(':') {
                dynamic = Some(segment.clone());
            }
            children.push((segment, node));
        }
        Ok(children)
    }
}

/// A `children` key: a valid segment, not repeated, and not a second
/// dynamic segment.
struct SegmentSeed<'a> {
    parent: &'a str,
    earlier: &'a [(String, SitemapNode)],
    dynamic: Option<&'a str>,
}

impl<'de> DeserializeSeed<'de> for SegmentSeed<'_> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for SegmentSeed<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a path segment such as `orders` or `:id`")
    }

    fn visit_str<E: de::Error>(self, segment: &str) -> Result<String, E> {
        check_segment(segment).map_err(|e| fail(e.to_string()))?;
        if self.earlier.iter().any(|(s, _)| s == segment) {
            return Err(fail(format!(
                "children key `{segment}` appears twice under {}",
                self.parent
            )));
        }
        if let (Some(first), true) = (self.dynamic, segment.starts_with(':')) {
            return Err(fail(two_dynamic_message(first, segment, self.parent)));
        }
        Ok(segment.to_string())
    }

    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        Err(fail(SegmentError::Empty.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use crate::sitemap::{Sitemap, SitemapError};

    /// Parses `text` as `bad.yaml` and returns (line, column, message).
    fn invalid(text: &str) -> (usize, usize, String) {
        match Sitemap::parse(text, Path::new("bad.yaml")) {
            Err(SitemapError::Invalid(problem)) => {
                assert_eq!(problem.file, PathBuf::from("bad.yaml"));
                (problem.line, problem.column, problem.message)
            }
            Err(other) => panic!("expected a positioned error, got {other}"),
            Ok(_) => panic!("expected an error for:\n{text}"),
        }
    }

    #[test]
    fn children_keep_file_order_and_fields_load() {
        let sitemap = Sitemap::from_yaml_str(
            "title: Shop\norigin: HTTP://Shop.example:80/\nchildren:\n  zeta:\n    title: Z\n    requiresAuth: true\n    requiresAdmin: true\n    actions: [view]\n    keywords: [z, 字]\n    notes: n\n    instructions: i\n    description: d\n  alpha:\n    title: A\n",
        )
        .unwrap();
        let segments: Vec<&str> = sitemap
            .root()
            .children
            .iter()
            .map(|(s, _)| s.as_str())
            .collect();
        assert_eq!(segments, ["zeta", "alpha"]);
        let zeta = sitemap.root().child("zeta").unwrap();
        assert!(zeta.requires_auth && zeta.requires_admin);
        assert_eq!(zeta.keywords, ["z", "字"]);
        assert_eq!(zeta.instructions.as_deref(), Some("i"));
        assert_eq!(sitemap.origin(), Some("http://shop.example"));
    }

    #[test]
    fn unknown_field_points_at_the_key_and_suggests() {
        let (line, column, message) = invalid(
            "title: Shop\nchildren:\n  orders:\n    title: Orders\n    requiresAuht: true\n",
        );
        assert_eq!((line, column), (5, 5));
        assert!(
            message.contains("unknown field `requiresAuht`"),
            "{message}"
        );
        assert!(message.contains("did you mean `requiresAuth`"), "{message}");
    }

    #[test]
    fn wrong_type_points_at_the_value() {
        let (line, column, message) = invalid("title: Shop\nrequiresAuth: sometimes\n");
        assert_eq!((line, column), (2, 15));
        assert!(message.contains("expected true or false"), "{message}");
        let (line, column, message) = invalid("title: Shop\nkeywords: billing\n");
        assert_eq!((line, column), (2, 11));
        assert!(
            message.contains("a list of words such as `[view, edit]`"),
            "{message}"
        );
        let empty = Sitemap::from_yaml_str("title: Shop\nactions:\nkeywords: []\n").unwrap();
        assert!(empty.root().actions.is_empty());
    }

    #[test]
    fn slash_in_children_key_points_at_the_key() {
        let (line, column, message) = invalid(
            "title: Shop\nchildren:\n  login:\n    title: In\n  /orders:\n    title: Orders\n",
        );
        assert_eq!((line, column), (5, 3));
        assert!(message.contains("write `orders`"), "{message}");
    }

    #[test]
    fn invalid_characters_in_segment_are_named() {
        let (line, column, message) =
            invalid("title: Shop\nchildren:\n  my orders:\n    title: O\n");
        assert_eq!((line, column), (3, 3));
        assert!(message.contains("` ` is not allowed"), "{message}");
    }

    #[test]
    fn two_dynamic_siblings_point_at_the_second() {
        let (line, column, message) = invalid(
            "title: Shop\nchildren:\n  orders:\n    title: Orders\n    children:\n      \":id\":\n        title: By id\n      \":slug\":\n        title: By slug\n",
        );
        assert_eq!((line, column), (8, 7));
        assert!(message.contains("`:slug` and `:id`"), "{message}");
        assert!(message.contains("/orders"), "{message}");
    }

    #[test]
    fn empty_title_points_at_the_value() {
        let (line, column, message) =
            invalid("title: Shop\nchildren:\n  login:\n    title: \"  \"\n");
        assert_eq!((line, column), (4, 12));
        assert!(message.contains("title is empty"), "{message}");
    }

    #[test]
    fn missing_title_names_the_page() {
        let (line, _, message) = invalid("title: Shop\nchildren:\n  login:\n    description: x\n");
        assert_eq!(line, 4);
        assert!(message.contains("page /login has no `title`"), "{message}");
    }

    #[test]
    fn origin_only_on_the_root() {
        let (line, column, message) =
            invalid("title: Shop\nchildren:\n  a:\n    title: A\n    origin: http://x\n");
        assert_eq!((line, column), (5, 5));
        assert!(message.contains("root page only"), "{message}");
        let (line, column, message) = invalid("title: Shop\norigin: localhost:8080\n");
        assert_eq!((line, column), (2, 9));
        assert!(message.contains("has no scheme"), "{message}");
    }

    #[test]
    fn duplicate_keys_are_rejected() {
        let (line, column, message) = invalid("title: Shop\ntitle: Again\n");
        assert_eq!((line, column), (2, 1));
        assert!(message.contains("`title` appears twice"), "{message}");
        let (line, column, message) =
            invalid("title: Shop\nchildren:\n  a:\n    title: A\n  a:\n    title: B\n");
        assert_eq!((line, column), (5, 3));
        assert!(message.contains("appears twice under /"), "{message}");
    }

    #[test]
    fn malformed_yaml_and_empty_files_have_positions() {
        let (line, _, _) = invalid("title: Shop\nchildren:\n  a: [unclosed\n");
        assert!(line >= 3);
        assert_eq!(invalid("   \n").0, 1);
        let (line, column, message) = invalid("- just\n- a list\n");
        assert_eq!((line, column), (1, 1));
        assert!(message.contains("a page"), "{message}");
    }

    #[test]
    fn trees_built_in_code_follow_the_same_rules() {
        use crate::sitemap::SitemapNode;
        let mut root = SitemapNode::new("Shop");
        root.children.push((":a".into(), SitemapNode::new("A")));
        root.children.push((":b".into(), SitemapNode::new("B")));
        let err = Sitemap::new(root, None).unwrap_err();
        assert!(err.to_string().contains("both dynamic children"), "{err}");
        let mut root = SitemapNode::new("Shop");
        root.children.push(("ok".into(), SitemapNode::new(" ")));
        let err = Sitemap::new(root, None).unwrap_err();
        assert!(err.to_string().starts_with("page /ok: "), "{err}");
    }
}
