//! The restricted CSS selectors a model, a script or a person may use as a
//! target: type, `#id`, `.class`, `[attr]`, `[attr=value]` (and `^=`, `$=`,
//! `*=`, `~=`), `:nth-child()`, descendant and `>` child combinators, and
//! comma-separated lists. `a >>> b` enters a document or shadow root: `b`
//! is looked for inside the `<iframe>` matching `a` (of any origin) or
//! inside the open shadow root of the element matching `a`; the hops chain
//! (`iframe#pay >>> card-field >>> input`).
//!
//! The restriction keeps selectors cheap and predictable: `*`, `:has()`,
//! `:not()` and other pseudo-classes can match huge node sets or depend on
//! state (`:hover`) that changes while the agent acts, and sibling
//! combinators make a target depend on its neighbours.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::error::ActionError;

/// The combinator that enters an `<iframe>`'s document or a shadow root.
pub const PIERCE: &str = ">>>";

/// A CSS selector that passed the restricted grammar. It holds the text as
/// given (trimmed), ready for `querySelectorAll`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Selector(String);

impl Selector {
    /// Parses and validates a selector against the allowed subset.
    pub fn parse(text: &str) -> Result<Self, ActionError> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(ActionError::InvalidSelector {
                selector: String::new(),
                column: 1,
                reason: "the selector is empty".into(),
            });
        }
        let mut start = 0;
        for part in trimmed.split(PIERCE) {
            let mut parser = Parser {
                source: trimmed,
                chars: trimmed.chars().collect(),
                pos: trimmed[..start].chars().count(),
            };
            let lead = part.len() - part.trim_start().len();
            parser.pos += trimmed[start..start + lead].chars().count();
            let end = parser.pos + part.trim().chars().count();
            parser.chars.truncate(end);
            if part.trim().is_empty() {
                return Err(parser.error(
                    parser.pos,
                    format!("`{PIERCE}` needs a selector on each side"),
                ));
            }
            parser.selector_list()?;
            start += part.len() + PIERCE.len();
        }
        Ok(Selector(trimmed.to_string()))
    }

    /// Whether the selector enters frames or shadow roots (`>>>`).
    pub fn pierces(&self) -> bool {
        self.0.contains(PIERCE)
    }

    /// The selector text, as passed to `querySelectorAll`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Selector {
    type Error = ActionError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        Selector::parse(&text)
    }
}

impl From<Selector> for String {
    fn from(selector: Selector) -> Self {
        selector.0
    }
}

struct Parser<'a> {
    source: &'a str,
    chars: Vec<char>,
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, at: usize, reason: impl Into<String>) -> ActionError {
        ActionError::InvalidSelector {
            selector: self.source.to_string(),
            column: at + 1,
            reason: reason.into(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn skip_whitespace(&mut self) -> bool {
        let start = self.pos;
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
        self.pos > start
    }

    fn selector_list(&mut self) -> Result<(), ActionError> {
        if self.chars.is_empty() {
            return Err(self.error(0, "the selector is empty"));
        }
        loop {
            self.complex()?;
            self.skip_whitespace();
            match self.peek() {
                None => return Ok(()),
                Some(',') => {
                    self.pos += 1;
                    self.skip_whitespace();
                    if self.peek().is_none() {
                        return Err(self.error(self.pos, "a selector must follow the comma"));
                    }
                }
                Some(other) => {
                    return Err(self.error(self.pos, format!("unexpected `{other}`")));
                }
            }
        }
    }

    /// Compound selectors joined by descendant (whitespace) or child (`>`)
    /// combinators.
    fn complex(&mut self) -> Result<(), ActionError> {
        self.compound()?;
        loop {
            let had_space = self.skip_whitespace();
            match self.peek() {
                None | Some(',') => return Ok(()),
                Some('>') => {
                    self.pos += 1;
                    self.skip_whitespace();
                    if matches!(self.peek(), None | Some(',') | Some('>')) {
                        return Err(self.error(self.pos, "a selector must follow `>`"));
                    }
                    self.compound()?;
                }
                Some(c @ ('+' | '~')) => {
                    return Err(self.error(
                        self.pos,
                        format!(
                            "the sibling combinator `{c}` is not allowed; use a descendant \
                             (space) or child (`>`) combinator"
                        ),
                    ));
                }
                Some(_) if had_space => self.compound()?,
                Some(other) => {
                    return Err(self.error(self.pos, format!("unexpected `{other}`")));
                }
            }
        }
    }

    /// A type selector and/or any number of id, class, attribute and
    /// `:nth-child()` parts, with no whitespace between them.
    fn compound(&mut self) -> Result<(), ActionError> {
        let start = self.pos;
        if self.peek() == Some('*') {
            return Err(self.error(
                self.pos,
                "the universal selector `*` is not allowed; name a tag, id, class or attribute",
            ));
        }
        if self
            .peek()
            .is_some_and(|c| starts_ident(c) || c == '-' || c == '\\')
        {
            self.ident("a tag name")?;
        }
        loop {
            match self.peek() {
                Some('#') => {
                    self.pos += 1;
                    self.ident("an id after `#`")?;
                }
                Some('.') => {
                    self.pos += 1;
                    self.ident("a class name after `.`")?;
                }
                Some('[') => self.attribute()?,
                Some(':') => self.pseudo()?,
                Some('*') => {
                    return Err(self.error(self.pos, "the universal selector `*` is not allowed"));
                }
                _ => break,
            }
        }
        if self.pos == start {
            return Err(match self.peek() {
                Some(c) => self.error(
                    self.pos,
                    format!("expected a tag, `#id`, `.class`, `[attribute]` or `:nth-child()`, found `{c}`"),
                ),
                None => self.error(self.pos, "the selector ends where a part was expected"),
            });
        }
        Ok(())
    }

    /// An identifier, with CSS escapes; `what` names it in errors.
    fn ident(&mut self, what: &str) -> Result<String, ActionError> {
        let start = self.pos;
        let mut name = String::new();
        let valid_start = match self.peek() {
            Some('-') => match self.peek_at(1) {
                Some(c) => c == '-' || c == '\\' || starts_ident(c),
                None => false,
            },
            Some('\\') => true,
            Some(c) => starts_ident(c),
            None => false,
        };
        if !valid_start {
            return Err(self.error(start, format!("expected {what}")));
        }
        while let Some(c) = self.peek() {
            if c == '\\' {
                name.push(self.escape()?);
            } else if continues_ident(c) {
                name.push(c);
                self.pos += 1;
            } else {
                break;
            }
        }
        Ok(name)
    }

    /// A backslash escape: up to six hex digits (plus one optional space),
    /// or any other character taken literally.
    fn escape(&mut self) -> Result<char, ActionError> {
        let at = self.pos;
        self.pos += 1;
        let Some(first) = self.peek() else {
            return Err(self.error(at, "a backslash at the end escapes nothing"));
        };
        if first == '\n' {
            return Err(self.error(at, "a backslash cannot escape a line break"));
        }
        if !first.is_ascii_hexdigit() {
            self.pos += 1;
            return Ok(first);
        }
        let mut digits = String::new();
        while digits.len() < 6 && self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
            digits.extend(self.peek());
            self.pos += 1;
        }
        if self.peek() == Some(' ') {
            self.pos += 1;
        }
        // ok: at most six hex digits always fit in a u32.
        let code = u32::from_str_radix(&digits, 16).unwrap_or(0xFFFD);
        Ok(char::from_u32(code)
            .filter(|c| *c != '\0')
            .unwrap_or('\u{FFFD}'))
    }

    fn attribute(&mut self) -> Result<(), ActionError> {
        let open = self.pos;
        self.pos += 1;
        self.skip_whitespace();
        if self.peek() == Some('*') {
            return Err(self.error(
                self.pos,
                "namespace wildcards in attributes are not allowed",
            ));
        }
        self.ident("an attribute name after `[`")?;
        self.skip_whitespace();
        match self.peek() {
            Some(']') => {
                self.pos += 1;
                return Ok(());
            }
            Some('=') => self.pos += 1,
            Some('^' | '$' | '*' | '~') if self.peek_at(1) == Some('=') => self.pos += 2,
            Some('|') if self.peek_at(1) == Some('=') => {
                return Err(self.error(
                    self.pos,
                    "the `|=` operator is not allowed; use `=`, `^=`, `$=`, `*=` or `~=`",
                ));
            }
            Some(c) => {
                return Err(self.error(
                    self.pos,
                    format!(
                        "expected `]` or an operator (`=`, `^=`, `$=`, `*=`, `~=`), found `{c}`"
                    ),
                ))
            }
            None => return Err(self.error(open, "the attribute selector is not closed with `]`")),
        }
        self.skip_whitespace();
        match self.peek() {
            Some(quote @ ('"' | '\'')) => self.quoted(quote)?,
            Some(_) => {
                self.ident("an attribute value (quote it if it is not a plain word)")?;
            }
            None => return Err(self.error(open, "the attribute selector is not closed with `]`")),
        }
        self.skip_whitespace();
        // Case-sensitivity flags `i` and `s` are harmless and common in
        // hand-written selectors.
        if self
            .peek()
            .is_some_and(|c| matches!(c, 'i' | 'I' | 's' | 'S'))
        {
            self.pos += 1;
            self.skip_whitespace();
        }
        match self.peek() {
            Some(']') => {
                self.pos += 1;
                Ok(())
            }
            Some(c) => Err(self.error(self.pos, format!("expected `]`, found `{c}`"))),
            None => Err(self.error(open, "the attribute selector is not closed with `]`")),
        }
    }

    fn quoted(&mut self, quote: char) -> Result<(), ActionError> {
        let open = self.pos;
        self.pos += 1;
        loop {
            match self.peek() {
                None => {
                    return Err(self.error(open, format!("the string is not closed with {quote}")))
                }
                Some('\n') => {
                    return Err(self.error(self.pos, "a line break inside a quoted value"))
                }
                Some('\\') => {
                    self.escape()?;
                }
                Some(c) if c == quote => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    fn pseudo(&mut self) -> Result<(), ActionError> {
        let colon = self.pos;
        self.pos += 1;
        if self.peek() == Some(':') {
            return Err(self.error(colon, "pseudo-elements (`::…`) are not allowed"));
        }
        let name = self
            .ident("a pseudo-class name after `:`")
            .map_err(|_| self.error(colon, "expected a pseudo-class name after `:`"))?
            .to_ascii_lowercase();
        match name.as_str() {
            "nth-child" => {}
            "has" | "not" => {
                return Err(self.error(
                    colon,
                    format!(":{name}() is not allowed; target the element itself by id, class, attribute or index"),
                ))
            }
            other => {
                return Err(self.error(
                    colon,
                    format!("the pseudo-class `:{other}` is not allowed; only :nth-child() is"),
                ))
            }
        }
        if self.peek() != Some('(') {
            return Err(self.error(self.pos, ":nth-child needs an argument, e.g. :nth-child(2)"));
        }
        self.pos += 1;
        let arg_start = self.pos;
        let Some(close) = self.chars[self.pos..].iter().position(|c| *c == ')') else {
            return Err(self.error(colon, ":nth-child( is not closed with `)`"));
        };
        let argument: String = self.chars[arg_start..arg_start + close].iter().collect();
        if !valid_nth(&argument) {
            return Err(self.error(
                arg_start,
                format!(
                    "`{}` is not a valid :nth-child() argument; use a number, odd, even or an+b",
                    argument.trim()
                ),
            ));
        }
        self.pos = arg_start + close + 1;
        Ok(())
    }
}

fn starts_ident(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || !c.is_ascii()
}

fn continues_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-' || !c.is_ascii()
}

/// `odd`, `even`, an integer, or `an+b` with optional signs and spaces
/// around the operator between the two terms.
fn valid_nth(argument: &str) -> bool {
    let text = argument.trim().to_ascii_lowercase();
    if text == "odd" || text == "even" {
        return true;
    }
    let Some(n_at) = text.find('n') else {
        return signed_integer(&text);
    };
    let coefficient = &text[..n_at];
    let coefficient_ok = matches!(coefficient, "" | "+" | "-") || signed_integer(coefficient);
    if !coefficient_ok {
        return false;
    }
    let rest = text[n_at + 1..].trim_start();
    if rest.is_empty() {
        return true;
    }
    let Some(offset) = rest.strip_prefix(['+', '-']) else {
        return false;
    };
    let offset = offset.trim_start();
    !offset.is_empty() && offset.chars().all(|c| c.is_ascii_digit())
}

fn signed_integer(text: &str) -> bool {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reject(text: &str) -> (usize, String) {
        match Selector::parse(text) {
            Err(ActionError::InvalidSelector { column, reason, .. }) => (column, reason),
            other => panic!("expected `{text}` to be rejected, got {other:?}"),
        }
    }

    #[test]
    fn accepts_the_allowed_subset() {
        for text in [
            "button",
            "#submit",
            ".btn.primary",
            "button.btn#go",
            "[data-testid]",
            "[data-testid=save]",
            "input[name=\"email\"]",
            "a[href^='/orders']",
            "a[href$=\".pdf\"]",
            "div[class*=modal]",
            "span[class~=badge]",
            "input[type=checkbox i]",
            "li:nth-child(2)",
            "li:nth-child(odd)",
            "tr:nth-child(even)",
            "li:nth-child(2n+1)",
            "li:nth-child(-n + 3)",
            "li:NTH-CHILD(n)",
            "form .field > input",
            "nav>ul>li",
            "#a, .b ,c",
            "#foo\\:bar",
            "#\\31 23",
            "[aria-label='Close dialog']",
            "  .padded  ",
            "-custom-tag",
            "x-élément",
        ] {
            assert!(
                Selector::parse(text).is_ok(),
                "should accept `{text}`: {:?}",
                Selector::parse(text)
            );
        }
    }

    #[test]
    fn piercing_hops_are_checked_part_by_part_with_columns_of_the_whole() {
        for text in [
            "iframe#pay >>> input[name=card]",
            "iframe >>> my-widget >>> button.ok",
            "  x-card>>>button ",
        ] {
            let selector = Selector::parse(text).expect(text);
            assert!(selector.pierces(), "{text}");
        }
        assert!(!Selector::parse("form > input").unwrap().pierces());
        let (column, reason) = reject("iframe >>> div > *");
        assert_eq!(column, 18);
        assert!(reason.contains("`*`"), "{reason}");
        let (column, reason) = reject("iframe >>>  ");
        assert_eq!(column, 11);
        assert!(reason.contains(">>>"), "{reason}");
        let (_, reason) = reject(">>> input");
        assert!(reason.contains(">>>"), "{reason}");
    }

    #[test]
    fn keeps_the_trimmed_text_for_query_selector_all() {
        let selector = Selector::parse("  form > input[name=q] ").unwrap();
        assert_eq!(selector.as_str(), "form > input[name=q]");
    }

    #[test]
    fn rejects_universal_selector_with_position() {
        let (column, reason) = reject("div > *");
        assert_eq!(column, 7);
        assert!(reason.contains("`*`"), "{reason}");
        let (column, _) = reject("*");
        assert_eq!(column, 1);
        let (column, _) = reject("div*");
        assert_eq!(column, 4);
    }

    #[test]
    fn rejects_has_and_not_by_name() {
        let (column, reason) = reject("div:has(a)");
        assert_eq!(column, 4);
        assert!(reason.contains(":has()"), "{reason}");
        let (_, reason) = reject("button:not(.disabled)");
        assert!(reason.contains(":not()"), "{reason}");
    }

    #[test]
    fn rejects_other_pseudo_classes_and_elements() {
        assert!(reject("a:hover").1.contains(":hover"));
        assert!(reject("li:first-child").1.contains(":first-child"));
        assert!(reject("p::before").1.contains("pseudo-elements"));
        assert!(reject("input:checked").1.contains("only :nth-child()"));
    }

    #[test]
    fn rejects_sibling_combinators() {
        let (column, reason) = reject("h2 + p");
        assert_eq!(column, 4);
        assert!(reason.contains("sibling"), "{reason}");
        assert!(reject("h2 ~ p").1.contains("sibling"));
    }

    #[test]
    fn rejects_malformed_selectors_with_position() {
        assert!(reject("").1.contains("empty"));
        assert_eq!(reject("#").0, 2);
        assert_eq!(reject(".").0, 2);
        assert!(reject("[name").1.contains("not closed"));
        assert!(reject("[name='x]").1.contains("not closed"));
        assert!(reject("[name|=en]").1.contains("`|=`"));
        assert!(reject("div >").1.contains("follow `>`"));
        assert!(reject("a,").1.contains("follow the comma"));
        assert!(reject("li:nth-child(abc)")
            .1
            .contains("not a valid :nth-child()"));
        assert!(reject("li:nth-child(2n+)").1.contains("not a valid"));
        assert!(reject("li:nth-child(3").1.contains("not closed"));
        assert!(reject("li:nth-child").1.contains("needs an argument"));
        assert!(reject("#1abc").1.contains("expected an id"));
        assert!(reject("div)").1.contains("unexpected `)`"));
    }

    #[test]
    fn round_trips_through_json_as_a_string() {
        let selector: Selector = serde_json::from_str("\"#name\"").unwrap();
        assert_eq!(serde_json::to_string(&selector).unwrap(), "\"#name\"");
        assert!(serde_json::from_str::<Selector>("\"div:has(p)\"").is_err());
    }
}
