//! How risky an action is: the static level of each action, and the
//! effective level of one concrete action once facts about its target and
//! the page are known (the levels themselves are in `risk_level`).
//! The approval gate asks about `commit` and `dangerous` in its default mode,
//! so these rules decide what a person is asked to confirm.

use serde::{Deserialize, Serialize};
use url::Url;

use super::action::Action;
use super::error::ActionError;
use super::keys::Modifiers;
use super::risk_level::Risk;

/// What the observer knows about the element an action targets (for
/// `press_keys`, the focused element).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetFacts {
    /// Lower-case tag name (`button`, `a`, `input`).
    pub tag: String,
    /// The `type` attribute of an `input` or `button`, lower-case.
    pub input_type: Option<String>,
    /// Whether the element is inside a `<form>` (or owned by one through
    /// its `form` attribute).
    pub in_form: bool,
    /// Whether the observer already determined that activating the element
    /// submits a form (for example a button wired as the form's submitter).
    pub is_submit: bool,
    /// The `href` of a link, as written in the page.
    pub href: Option<String>,
    /// Whether the link has a `download` attribute.
    pub download: bool,
}

impl TargetFacts {
    /// Whether activating this element submits its form: an explicit
    /// submitter, `<input type=submit|image>`, `<button type=submit>`, or a
    /// `<button>` with no type inside a form (HTML's default is submit).
    pub fn submits_form(&self) -> bool {
        if self.is_submit {
            return true;
        }
        let kind = self.input_type.as_deref().map(str::to_ascii_lowercase);
        match self.tag.to_ascii_lowercase().as_str() {
            "input" => matches!(kind.as_deref(), Some("submit" | "image")),
            "button" => match kind.as_deref() {
                Some("submit") => true,
                None | Some("") => self.in_form,
                Some(_) => false,
            },
            _ => false,
        }
    }

    fn is_text_field(&self) -> bool {
        self.tag.eq_ignore_ascii_case("input")
            && !matches!(
                self.input_type
                    .as_deref()
                    .map(str::to_ascii_lowercase)
                    .as_deref(),
                Some("checkbox" | "radio" | "button" | "reset" | "file" | "range" | "color")
            )
    }
}

/// Facts about the page and target that can raise an action's risk above
/// its static level. Unknown facts are `None`; the rules then assume the
/// riskier case where it matters (an absolute URL with no known page origin
/// counts as leaving the site).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RiskFacts {
    /// The URL of the page the action runs on.
    pub page_url: Option<String>,
    /// The element the action targets (for `press_keys`, the focused one).
    pub target: Option<TargetFacts>,
}

impl Action {
    /// The static risk of this action, before anything is known about its
    /// target. `screenshot` is `commit` only when it is told where to write
    /// (a model-chosen path could overwrite any file); without a path it
    /// writes into the session directory and is `read`.
    pub fn risk(&self) -> Risk {
        match self {
            Action::Back {}
            | Action::Forward {}
            | Action::Reload {}
            | Action::GotoPage { .. }
            | Action::Navigate { .. }
            | Action::Click { .. }
            | Action::Hover { .. }
            | Action::InputText { .. }
            | Action::SetText { .. }
            | Action::SelectOption { .. }
            | Action::SelectText { .. }
            | Action::ClearInput { .. }
            | Action::PressKeys { .. }
            | Action::DragAndDrop { .. }
            | Action::Highlight { .. }
            | Action::Border { .. }
            | Action::Spotlight { .. }
            | Action::Inject { .. }
            | Action::ClearOverlays {}
            | Action::ShowSubtitle { .. }
            | Action::SwitchTab { .. }
            | Action::AnswerDialogs { .. }
            | Action::CloseTab { .. } => Risk::Interact,
            Action::ReadPage { .. }
            | Action::Wait { .. }
            | Action::WaitFor { .. }
            | Action::Scroll { .. }
            | Action::ScrollTo { .. }
            | Action::Extract { .. }
            | Action::AskUser { .. }
            | Action::HandOver { .. }
            | Action::Think { .. }
            | Action::ReadFile { .. }
            | Action::Done { .. } => Risk::Read,
            Action::Screenshot { path, .. } => {
                if path.is_some() {
                    Risk::Commit
                } else {
                    Risk::Read
                }
            }
            Action::SubmitForm { .. } | Action::UploadFile { .. } => Risk::Commit,
            Action::ExecuteJavascript { .. } => Risk::Dangerous,
            Action::Custom(custom) => custom.risk,
        }
    }

    /// The risk of this action given what is known about its target and
    /// page. Never lower than [`Action::risk`].
    ///
    /// - a click on a submit control, on a link to another origin, or on a
    ///   download link is `commit`;
    /// - `navigate` to another origin is `commit`, to a `javascript:` URL
    ///   `dangerous`;
    /// - `Enter` (or `Control`/`Meta+Enter`) pressed in a form's text field
    ///   or on a submit control submits the form, so it is `commit`.
    pub fn effective_risk(&self, facts: &RiskFacts) -> Risk {
        let base = self.risk();
        let page = facts.page_url.as_deref();
        let raised = match self {
            Action::Click { .. } => match &facts.target {
                Some(target) if target.submits_form() || target.download => Risk::Commit,
                Some(TargetFacts {
                    href: Some(href), ..
                }) if leaves_origin(page, href) => Risk::Commit,
                _ => base,
            },
            Action::Navigate { url } => {
                if is_javascript_url(url) {
                    Risk::Dangerous
                } else if leaves_origin(page, url) {
                    Risk::Commit
                } else {
                    base
                }
            }
            Action::PressKeys { keys, .. } => {
                let enter = keys.key.key == "Enter";
                match &facts.target {
                    Some(target)
                        if enter
                            && (target.submits_form()
                                || (target.in_form && target.is_text_field())) =>
                    {
                        Risk::Commit
                    }
                    Some(target)
                        if enter
                            && target.in_form
                            && !keys.modifiers().without(Modifiers::SHIFT).is_empty() =>
                    {
                        Risk::Commit
                    }
                    _ => base,
                }
            }
            _ => base,
        };
        raised.max(base)
    }
}

/// Whether following `href` from `page` ends on a different origin. Paths
/// stay on the page's origin; an absolute URL with no known page is treated
/// as leaving. A blank tab (`about:blank`, where a session without a start
/// page begins) is no site, so going anywhere from it leaves none.
fn leaves_origin(page: Option<&str>, href: &str) -> bool {
    let href = href.trim();
    let page = page.and_then(|p| Url::parse(p).ok());
    if page.as_ref().is_some_and(|p| p.scheme() == "about") {
        return false;
    }
    let target = match &page {
        Some(base) => base.join(href),
        None => Url::parse(href),
    };
    match (page, target) {
        (Some(base), Ok(target)) => {
            // Fragment-only and same-document links never leave; opaque
            // origins (data:, about:blank) compare unequal to everything.
            base.origin() != target.origin()
        }
        // A relative link on an unknown page cannot leave what it is on.
        (None, Err(_)) => false,
        (None, Ok(_)) => true,
        (Some(_), Err(_)) => true,
    }
}

fn is_javascript_url(url: &str) -> bool {
    url.trim_start()
        .get(..11)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("javascript:"))
}

/// The origin (`scheme://host[:port]`) of an absolute URL, or `None` when it
/// does not parse or has an opaque origin (`data:`, `about:blank`).
pub fn origin_of(url: &str) -> Option<String> {
    let parsed = Url::parse(url.trim()).ok()?;
    let origin = parsed.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

/// Resolves a `navigate` URL against the current page: an absolute URL is
/// returned normalized, a path is joined onto the current page's URL.
pub fn resolve_url(current: Option<&str>, target: &str) -> Result<String, ActionError> {
    let target = target.trim();
    if let Ok(absolute) = Url::parse(target) {
        return Ok(absolute.to_string());
    }
    let Some(current) = current else {
        return Err(ActionError::invalid(
            "navigate.url",
            format!("`{target}` is a path but there is no current page to resolve it against; give an absolute URL"),
        ));
    };
    let base = Url::parse(current).map_err(|e| {
        ActionError::invalid(
            "navigate.url",
            format!("the current page URL `{current}` cannot be used as a base: {e}"),
        )
    })?;
    base.join(target).map(String::from).map_err(|e| {
        ActionError::invalid(
            "navigate.url",
            format!("`{target}` is not a valid path or URL: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::Catalog;
    use serde_json::json;

    fn action(value: serde_json::Value) -> Action {
        Catalog::builtin().parse(&value).unwrap()
    }

    fn on_page(url: &str, target: Option<TargetFacts>) -> RiskFacts {
        RiskFacts {
            page_url: Some(url.to_string()),
            target,
        }
    }

    fn link(href: &str) -> TargetFacts {
        TargetFacts {
            tag: "a".into(),
            href: Some(href.into()),
            ..TargetFacts::default()
        }
    }

    const PAGE: &str = "http://127.0.0.1:8080/orders";

    #[test]
    fn risk_levels_serialize_snake_case_and_order() {
        assert_eq!(
            serde_json::to_value(Risk::Dangerous).unwrap(),
            json!("dangerous")
        );
        assert_eq!("Commit".parse::<Risk>(), Ok(Risk::Commit));
        assert!("risky".parse::<Risk>().is_err());
        assert!(
            Risk::Read < Risk::Interact
                && Risk::Interact < Risk::Commit
                && Risk::Commit < Risk::Dangerous
        );
    }

    #[test]
    fn static_levels_of_representative_actions() {
        assert_eq!(action(json!({"read_page": {}})).risk(), Risk::Read);
        assert_eq!(
            action(json!({"scroll": {"direction": "down"}})).risk(),
            Risk::Read
        );
        assert_eq!(
            action(json!({"click": {"index": 1}})).risk(),
            Risk::Interact
        );
        assert_eq!(
            action(json!({"input_text": {"index": 1, "text": "a"}})).risk(),
            Risk::Interact
        );
        assert_eq!(
            action(json!({"submit_form": {"index": 1}})).risk(),
            Risk::Commit
        );
        assert_eq!(
            action(json!({"upload_file": {"index": 1, "path": "/tmp/a.pdf"}})).risk(),
            Risk::Commit
        );
        assert_eq!(
            action(json!({"execute_javascript": {"script": "1"}})).risk(),
            Risk::Dangerous
        );
    }

    #[test]
    fn screenshot_to_a_chosen_path_is_commit() {
        assert_eq!(action(json!({"screenshot": {}})).risk(), Risk::Read);
        assert_eq!(
            action(json!({"screenshot": {"path": "/etc/passwd"}})).risk(),
            Risk::Commit
        );
    }

    #[test]
    fn clicking_a_submit_button_is_commit() {
        let click = action(json!({"click": {"index": 4}}));
        let submit = TargetFacts {
            tag: "button".into(),
            input_type: Some("submit".into()),
            ..TargetFacts::default()
        };
        assert_eq!(
            click.effective_risk(&on_page(PAGE, Some(submit))),
            Risk::Commit
        );
        let untyped_in_form = TargetFacts {
            tag: "button".into(),
            in_form: true,
            ..TargetFacts::default()
        };
        assert_eq!(
            click.effective_risk(&on_page(PAGE, Some(untyped_in_form))),
            Risk::Commit
        );
        let input_submit = TargetFacts {
            tag: "input".into(),
            input_type: Some("SUBMIT".into()),
            ..TargetFacts::default()
        };
        assert_eq!(
            click.effective_risk(&on_page(PAGE, Some(input_submit))),
            Risk::Commit
        );
    }

    #[test]
    fn clicking_a_plain_button_stays_interact() {
        let click = action(json!({"click": {"index": 4}}));
        let plain = TargetFacts {
            tag: "button".into(),
            input_type: Some("button".into()),
            in_form: true,
            ..TargetFacts::default()
        };
        assert_eq!(
            click.effective_risk(&on_page(PAGE, Some(plain))),
            Risk::Interact
        );
        let outside_form = TargetFacts {
            tag: "button".into(),
            ..TargetFacts::default()
        };
        assert_eq!(
            click.effective_risk(&on_page(PAGE, Some(outside_form))),
            Risk::Interact
        );
        assert_eq!(click.effective_risk(&RiskFacts::default()), Risk::Interact);
    }

    #[test]
    fn clicking_a_link_to_another_origin_is_commit() {
        let click = action(json!({"click": {"index": 2}}));
        for href in [
            "https://evil.example/",
            "http://127.0.0.1:9090/",
            "https://127.0.0.1:8080/",
            "//other.test/x",
        ] {
            assert_eq!(
                click.effective_risk(&on_page(PAGE, Some(link(href)))),
                Risk::Commit,
                "{href}"
            );
        }
        for href in [
            "/orders/5",
            "5",
            "#top",
            "?page=2",
            "http://127.0.0.1:8080/settings",
            "HTTP://127.0.0.1:8080/x",
        ] {
            assert_eq!(
                click.effective_risk(&on_page(PAGE, Some(link(href)))),
                Risk::Interact,
                "{href}"
            );
        }
    }

    #[test]
    fn userinfo_does_not_disguise_another_origin() {
        let click = action(json!({"click": {"index": 2}}));
        let tricky = link("http://127.0.0.1:8080@evil.example/");
        assert_eq!(
            click.effective_risk(&on_page(PAGE, Some(tricky))),
            Risk::Commit
        );
    }

    #[test]
    fn download_links_are_commit() {
        let click = action(json!({"click": {"index": 2}}));
        let mut download = link("/report.csv");
        download.download = true;
        assert_eq!(
            click.effective_risk(&on_page(PAGE, Some(download))),
            Risk::Commit
        );
    }

    #[test]
    fn navigating_away_is_commit_and_javascript_is_dangerous() {
        let facts = on_page(PAGE, None);
        assert_eq!(
            action(json!({"navigate": {"url": "/settings"}})).effective_risk(&facts),
            Risk::Interact
        );
        assert_eq!(
            action(json!({"navigate": {"url": "http://127.0.0.1:8080/x"}})).effective_risk(&facts),
            Risk::Interact
        );
        assert_eq!(
            action(json!({"navigate": {"url": "https://example.com/"}})).effective_risk(&facts),
            Risk::Commit
        );
        assert_eq!(
            action(json!({"navigate": {"url": "javascript:alert(1)"}})).effective_risk(&facts),
            Risk::Dangerous
        );
        // A blank tab is no site: the first navigation leaves nothing.
        assert_eq!(
            action(json!({"navigate": {"url": "https://example.com/"}}))
                .effective_risk(&on_page("about:blank", None)),
            Risk::Interact
        );
        // With no page known, an absolute URL is assumed to leave.
        assert_eq!(
            action(json!({"navigate": {"url": "https://example.com/"}}))
                .effective_risk(&RiskFacts::default()),
            Risk::Commit
        );
    }

    #[test]
    fn enter_in_a_form_field_is_commit() {
        let enter = action(json!({"press_keys": {"keys": "Enter"}}));
        let field = TargetFacts {
            tag: "input".into(),
            input_type: Some("email".into()),
            in_form: true,
            ..TargetFacts::default()
        };
        assert_eq!(
            enter.effective_risk(&on_page(PAGE, Some(field.clone()))),
            Risk::Commit
        );
        let tab = action(json!({"press_keys": {"keys": "Tab"}}));
        assert_eq!(
            tab.effective_risk(&on_page(PAGE, Some(field))),
            Risk::Interact
        );
        let textarea = TargetFacts {
            tag: "textarea".into(),
            in_form: true,
            ..TargetFacts::default()
        };
        assert_eq!(
            enter.effective_risk(&on_page(PAGE, Some(textarea.clone()))),
            Risk::Interact
        );
        let send = action(json!({"press_keys": {"keys": "Control+Enter"}}));
        assert_eq!(
            send.effective_risk(&on_page(PAGE, Some(textarea))),
            Risk::Commit
        );
        let loose = TargetFacts {
            tag: "input".into(),
            ..TargetFacts::default()
        };
        assert_eq!(
            enter.effective_risk(&on_page(PAGE, Some(loose))),
            Risk::Interact
        );
    }

    #[test]
    fn execute_javascript_is_always_dangerous() {
        let script = action(json!({"execute_javascript": {"script": "document.title"}}));
        assert_eq!(script.effective_risk(&on_page(PAGE, None)), Risk::Dangerous);
    }

    #[test]
    fn origins_and_resolution() {
        assert_eq!(
            origin_of("HTTP://Example.COM:80/a?b").as_deref(),
            Some("http://example.com")
        );
        assert_eq!(
            origin_of("https://x.test:8443/").as_deref(),
            Some("https://x.test:8443")
        );
        assert_eq!(origin_of("data:text/html,hi"), None);
        assert_eq!(origin_of("/relative"), None);
        assert_eq!(
            resolve_url(Some(PAGE), "/settings/billing").unwrap(),
            "http://127.0.0.1:8080/settings/billing"
        );
        assert_eq!(
            resolve_url(None, "https://example.com").unwrap(),
            "https://example.com/"
        );
        let err = resolve_url(None, "/orders").unwrap_err().to_string();
        assert!(err.starts_with("navigate.url:"), "{err}");
    }
}
