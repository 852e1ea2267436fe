//! Locators: the ways a recipe finds an element again on a page that has
//! changed since it was recorded, and what trying them found.
//!
//! A recipe step keeps every locator its run recorded, strongest first:
//! test id, id, role with accessible name, label, placeholder, name,
//! visible text, then a CSS path. Each is written as one string,
//! `kind:value` (`role:ROLE:NAME` for a role), so a recipe line reads as a
//! plain list: `click(["id:login", "role:button:Sign in", "text:Sign in",
//! "css:form > button:nth-child(3)"])`.
//!
//! The page side (which elements each locator names, and whether the
//! locators that name one element agree) is the environment's; see
//! `crate::environment::Environment::locate`.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// One way to find an element.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Locator {
    /// `data-testid`.
    TestId(String),
    /// The `id` attribute.
    Id(String),
    /// An ARIA role (explicit or implied by the tag) with the element's
    /// accessible name.
    Role {
        /// `button`, `link`, `textbox`, …
        role: String,
        /// The accessible name (compared ignoring case and spacing).
        name: String,
    },
    /// A form field's label text.
    Label(String),
    /// The `placeholder` attribute.
    Placeholder(String),
    /// The `name` attribute.
    Name(String),
    /// The visible text of a control (not a field).
    Text(String),
    /// A CSS path, the last resort: it breaks when the page's structure
    /// changes, and then it names another element or none.
    Css(String),
}

/// The kinds in the order they are tried and written.
pub const LOCATOR_KINDS: [&str; 8] = [
    "testid",
    "id",
    "role",
    "label",
    "placeholder",
    "name",
    "text",
    "css",
];

/// Why a written locator does not read as one; `text` is the locator as
/// written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocatorError {
    /// No `kind:` before the value.
    #[error("locator {text:?} has no kind; write it as kind:value with a kind among {}", LOCATOR_KINDS.join(", "))]
    NoKind {
        /// The locator as written.
        text: String,
    },
    /// Nothing after the kind.
    #[error("locator {text:?} has an empty value")]
    EmptyValue {
        /// The locator as written.
        text: String,
    },
    /// A role without both its role and its name.
    #[error("locator {text:?}: a role is written role:ROLE:NAME, e.g. role:button:Sign in")]
    BadRole {
        /// The locator as written.
        text: String,
    },
    /// A kind that is not among [`LOCATOR_KINDS`].
    #[error("locator {text:?}: unknown kind {kind:?}; use one of {}", LOCATOR_KINDS.join(", "))]
    UnknownKind {
        /// The locator as written.
        text: String,
        /// The kind as written.
        kind: String,
    },
}

impl Locator {
    /// Reads `kind:value` (`role:ROLE:NAME`).
    pub fn parse(text: &str) -> Result<Locator, LocatorError> {
        let Some((kind, value)) = text.split_once(':') else {
            return Err(LocatorError::NoKind {
                text: text.to_string(),
            });
        };
        let value = value.trim();
        if value.is_empty() {
            return Err(LocatorError::EmptyValue {
                text: text.to_string(),
            });
        }
        let value = value.to_string();
        Ok(match kind.trim() {
            "testid" => Locator::TestId(value),
            "id" => Locator::Id(value),
            "role" => match value.split_once(':') {
                Some((role, name)) if !role.trim().is_empty() && !name.trim().is_empty() => {
                    Locator::Role {
                        role: role.trim().to_string(),
                        name: name.trim().to_string(),
                    }
                }
                _ => {
                    return Err(LocatorError::BadRole {
                        text: text.to_string(),
                    })
                }
            },
            "label" => Locator::Label(value),
            "placeholder" => Locator::Placeholder(value),
            "name" => Locator::Name(value),
            "text" => Locator::Text(value),
            "css" => Locator::Css(value),
            other => {
                return Err(LocatorError::UnknownKind {
                    text: text.to_string(),
                    kind: other.to_string(),
                })
            }
        })
    }

    /// The kind word (`testid`, `role`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            Locator::TestId(_) => "testid",
            Locator::Id(_) => "id",
            Locator::Role { .. } => "role",
            Locator::Label(_) => "label",
            Locator::Placeholder(_) => "placeholder",
            Locator::Name(_) => "name",
            Locator::Text(_) => "text",
            Locator::Css(_) => "css",
        }
    }

    /// What the page side reads: `{kind, value}` (and `role`, `name` for a
    /// role).
    pub fn to_json(&self) -> Value {
        match self {
            Locator::Role { role, name } => json!({"kind": "role", "role": role, "name": name}),
            Locator::TestId(v)
            | Locator::Id(v)
            | Locator::Label(v)
            | Locator::Placeholder(v)
            | Locator::Name(v)
            | Locator::Text(v)
            | Locator::Css(v) => json!({"kind": self.kind(), "value": v}),
        }
    }

    /// The locators a run recorded for one element (the facts a result's
    /// `locator` carries: `testid`, `id`, `role`, `accessibleName`,
    /// `label`, `placeholder`, `name`, `text`, `css`), strongest first.
    /// Ids that look generated by a framework (`:r3:`, `ember123`) are left
    /// out: the next build renames them.
    pub fn from_facts(facts: &Value) -> Vec<Locator> {
        let fact = |key: &str| {
            facts
                .get(key)
                .and_then(Value::as_str)
                .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
                .filter(|v| !v.is_empty())
        };
        let tag = fact("tag").unwrap_or_default();
        let field = matches!(tag.as_str(), "input" | "textarea" | "select");
        let mut out = Vec::new();
        if let Some(testid) = fact("testid") {
            out.push(Locator::TestId(testid));
        }
        if let Some(id) = facts.get("id").and_then(Value::as_str) {
            if !id.trim().is_empty() && !looks_generated(id) {
                out.push(Locator::Id(id.to_string()));
            }
        }
        if let (Some(role), Some(name)) = (fact("role"), fact("accessibleName")) {
            out.push(Locator::Role { role, name });
        }
        if let Some(label) = fact("label") {
            out.push(Locator::Label(label));
        }
        if let Some(placeholder) = fact("placeholder") {
            out.push(Locator::Placeholder(placeholder));
        }
        if let Some(name) = fact("name") {
            out.push(Locator::Name(name));
        }
        if !field {
            if let Some(text) = fact("text") {
                out.push(Locator::Text(text));
            }
        }
        if let Some(css) = fact("css") {
            out.push(Locator::Css(css));
        }
        out
    }
}

/// Whether an id looks made by a framework rather than a person: React's
/// `:r1:`, a run of three or more digits (`ember123`, `field-20931`).
pub fn looks_generated(id: &str) -> bool {
    if id.starts_with(':') || id.contains("«") {
        return true;
    }
    let mut run = 0;
    for c in id.chars() {
        if c.is_ascii_digit() {
            run += 1;
            if run >= 3 {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

impl fmt::Display for Locator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Locator::Role { role, name } => write!(f, "role:{role}:{name}"),
            Locator::TestId(v)
            | Locator::Id(v)
            | Locator::Label(v)
            | Locator::Placeholder(v)
            | Locator::Name(v)
            | Locator::Text(v)
            | Locator::Css(v) => write!(f, "{}:{v}", self.kind()),
        }
    }
}

/// What one locator named on the page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriedLocator {
    /// The locator, as written.
    pub locator: String,
    /// How many elements it named (visible ones, when any is visible).
    pub matches: usize,
    /// The element it named when it named one, shortly
    /// (`<button id=go>Sign in</button>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<String>,
}

/// The element a step's locators found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// A CSS path that names exactly that element now (an action's
    /// `selector`).
    pub selector: String,
    /// The locator that matched: the first, in the recipe's order, that
    /// named it.
    pub matched: String,
    /// The element, shortly.
    pub element: String,
    /// What every locator named.
    pub tried: Vec<TriedLocator>,
    /// What the element shows now, which assertions compare (`None` when
    /// the page did not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ElementState>,
}

/// What an element shows as the page stands: what a recipe's assertions
/// (`expect_text`, `expect_checked`, …) compare with what they expect.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ElementState {
    /// Whether it takes room on the page and is not hidden.
    pub visible: bool,
    /// Its visible text, spacing collapsed (a field's is empty: see
    /// `value`).
    pub text: String,
    /// A field's value (a `<select>`'s chosen option's value); `None` for
    /// an element that is no field.
    #[serde(default)]
    pub value: Option<String>,
    /// Whether a checkbox, a radio or an element with `aria-checked` is
    /// checked; `None` for one that cannot be.
    #[serde(default)]
    pub checked: Option<bool>,
}

/// Why a step's locators found no one element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LocateProblem {
    /// No locator named any element.
    NotFound,
    /// Locators named different elements, or each named several: the step
    /// does not guess.
    Ambiguous,
    /// The environment cannot look elements up (a scripted page), or the
    /// page could not be asked.
    Unavailable,
}

impl LocateProblem {
    /// The word results and logs use (`not_found`, `ambiguous`).
    pub fn as_str(self) -> &'static str {
        match self {
            LocateProblem::NotFound => "not_found",
            LocateProblem::Ambiguous => "ambiguous",
            LocateProblem::Unavailable => "unavailable",
        }
    }
}

/// A step's locators found no one element: what each named, and what the
/// page showed instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{}", self.describe())]
pub struct LocateFailure {
    /// Why.
    pub problem: LocateProblem,
    /// In words.
    pub message: String,
    /// What every locator named.
    #[serde(default)]
    pub tried: Vec<TriedLocator>,
    /// What the page showed instead: its URL and title, and the elements
    /// most like the one looked for.
    #[serde(default)]
    pub page: String,
}

impl LocateFailure {
    /// A failure with nothing tried (the environment cannot look).
    pub fn unavailable(message: impl Into<String>) -> Self {
        LocateFailure {
            problem: LocateProblem::Unavailable,
            message: message.into(),
            tried: Vec::new(),
            page: String::new(),
        }
    }

    /// The whole story: the problem, each locator and its count, and the
    /// page.
    pub fn describe(&self) -> String {
        let mut text = self.message.clone();
        if !self.tried.is_empty() {
            let tried: Vec<String> = self
                .tried
                .iter()
                .map(|t| match (&t.element, t.matches) {
                    (Some(element), 1) => format!("{} → {element}", t.locator),
                    (_, n) => format!("{} → {n} elements", t.locator),
                })
                .collect();
            text.push_str(&format!("; tried: {}", tried.join("; ")));
        }
        if !self.page.is_empty() {
            text.push_str(&format!("; the page showed: {}", self.page));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locators_read_and_write_as_kind_and_value() {
        for text in [
            "testid:submit",
            "id:login",
            "role:button:Sign in",
            "label:Email address",
            "placeholder:you@company.com",
            "name:email",
            "text:Sign in",
            "css:form > button:nth-child(3)",
        ] {
            let locator = Locator::parse(text).unwrap();
            assert_eq!(locator.to_string(), text);
        }
        assert_eq!(
            Locator::parse("role:link:Orders: all").unwrap(),
            Locator::Role {
                role: "link".into(),
                name: "Orders: all".into()
            }
        );
        assert!(Locator::parse("xpath://a")
            .unwrap_err()
            .to_string()
            .contains("unknown kind"));
        assert!(Locator::parse("role:button")
            .unwrap_err()
            .to_string()
            .contains("role:ROLE:NAME"));
        assert!(Locator::parse("Sign in")
            .unwrap_err()
            .to_string()
            .contains("no kind"));
    }

    #[test]
    fn recorded_facts_become_locators_strongest_first() {
        let button = json!({
            "tag": "button", "id": "login", "testid": "go", "role": "button",
            "accessibleName": "Sign in", "text": "Sign  in", "css": "form > button",
        });
        let written: Vec<String> = Locator::from_facts(&button)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            written,
            [
                "testid:go",
                "id:login",
                "role:button:Sign in",
                "text:Sign in",
                "css:form > button"
            ]
        );
        // A field records no text locator, and a generated id is left out.
        let field = json!({
            "tag": "input", "id": "field-20931", "role": "textbox", "accessibleName": "Email",
            "label": "Email", "placeholder": "you@x", "name": "email", "css": "#f > input",
        });
        let written: Vec<String> = Locator::from_facts(&field)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            written,
            [
                "role:textbox:Email",
                "label:Email",
                "placeholder:you@x",
                "name:email",
                "css:#f > input"
            ]
        );
    }

    #[test]
    fn a_failure_names_every_locator_and_the_page() {
        let failure = LocateFailure {
            problem: LocateProblem::Ambiguous,
            message: "locators name different elements".into(),
            tried: vec![
                TriedLocator {
                    locator: "id:go".into(),
                    matches: 1,
                    element: Some("<button id=go>Delete</button>".into()),
                },
                TriedLocator {
                    locator: "text:Save".into(),
                    matches: 0,
                    element: None,
                },
            ],
            page: "http://x/ (X)".into(),
        };
        assert_eq!(
            failure.to_string(),
            "locators name different elements; tried: id:go → <button id=go>Delete</button>; \
             text:Save → 0 elements; the page showed: http://x/ (X)"
        );
    }
}
