//! An action's target as read from the page itself: the facts that
//! decide its risk (the listing does not show form membership), and what
//! a selector target matches, as a person approving the action reads it.

use serde_json::json;

use super::Driver;
use crate::actions::{Action, Target, TargetFacts};
use crate::dom::PageState;

/// Reads, from the element itself, what decides an action's risk: tag,
/// type, link target, and whether activating it submits a form (the
/// listing does not show form membership).
const TARGET_FACTS_JS: &str = "(el) => { \
    const tag = el.tagName.toLowerCase(); \
    const type = (el.getAttribute('type') || '').toLowerCase(); \
    const form = el.form || (el.closest && el.closest('form')); \
    const submits = !!form && ((tag === 'button' && (type === '' || type === 'submit')) \
        || (tag === 'input' && (type === 'submit' || type === 'image'))); \
    return { tag, type: type || null, inForm: !!form, isSubmit: submits, \
        href: el.getAttribute('href'), download: el.hasAttribute('download') }; }";

impl Driver {
    /// What decides the risk of acting on `action`'s target, read from the
    /// element itself (the listing does not show form membership); `None`
    /// for an action without a target, or one whose element is gone (the
    /// executor will say so).
    pub async fn target_facts(&mut self, action: &Action, page: &PageState) -> Option<TargetFacts> {
        let reply = match action.target() {
            Some(Target::Index { index }) => {
                self.tab
                    .eval_on_index(page.observation, *index, TARGET_FACTS_JS, json!({}))
                    .await
            }
            Some(Target::Selector { selector }) => {
                let first = format!("(els) => els.length ? ({TARGET_FACTS_JS})(els[0]) : null");
                self.tab
                    .eval_on_selector(selector.as_str(), &first, json!({}))
                    .await
            }
            None => return None,
        };
        match reply {
            Ok(value) if value.is_object() => {
                let mut target = target_facts(&value);
                // Downloads are a commit only when the person said so.
                target.download &= self.downloads_commit;
                Some(target)
            }
            Ok(_) => None,
            Err(error) => {
                tracing::debug!(%error, "reading the target's risk facts");
                None
            }
        }
    }
}

/// Finds the first element a selector matches among the listed ones (or
/// describes it briefly when it is not listed).
const DESCRIBE_SELECTOR_JS: &str = "(els, args) => { \
    if (!els.length) return null; \
    const o = globalThis.__webagentObserver; \
    for (const i of args.indices) { if (o.element(args.seq, i) === els[0]) return { index: i, count: els.length }; } \
    const el = els[0]; \
    const text = String(el.innerText || el.value || '').replace(/\\s+/g, ' ').trim().slice(0, 60); \
    const attrs = ['id', 'type', 'name', 'aria-label', 'placeholder', 'href', 'role'] \
      .filter((a) => el.hasAttribute(a)) \
      .map((a) => ` ${a}=\"${String(el.getAttribute(a)).slice(0, 40)}\"`).join(''); \
    return { tag: el.localName, attrs, text, count: els.length }; \
  }";

impl Driver {
    /// What a selector target matches on `page`, as a person checking an
    /// approval reads it: the listing line of the listed element it
    /// matches, else a short description of the element, else that it
    /// matches nothing. `None` for an index target or when the page could
    /// not be asked.
    pub async fn describe_selector(&mut self, target: &Target, page: &PageState) -> Option<String> {
        let Target::Selector { selector } = target else {
            return None;
        };
        let indices: Vec<usize> = page.elements.iter().map(|e| e.index.0).collect();
        let args = json!({"seq": page.observation, "indices": indices});
        let reply = self
            .tab
            .eval_on_selector(selector.as_str(), DESCRIBE_SELECTOR_JS, args)
            .await;
        let value = match reply {
            Ok(value) => value,
            Err(error) => {
                tracing::debug!(%error, "describing a selector target");
                return None;
            }
        };
        if value.is_null() {
            return Some(format!("`{selector}` matches nothing on the page now"));
        }
        let count = value.get("count").and_then(|v| v.as_u64()).unwrap_or(1);
        let more = if count > 1 {
            format!(" (first of {count} matches)")
        } else {
            String::new()
        };
        if let Some(index) = value.get("index").and_then(|v| v.as_u64()) {
            let listed = page
                .elements
                .iter()
                .find(|e| e.index.0 as u64 == index)
                .map(crate::dom::element_line)?;
            return Some(format!("{listed}{more}"));
        }
        let text = |key: &str| value.get(key).and_then(|v| v.as_str()).unwrap_or("");
        let tag = text("tag");
        let body = text("text");
        let element = if body.is_empty() {
            format!("<{tag}{} />", text("attrs"))
        } else {
            format!("<{tag}{}>{body}</{tag}>", text("attrs"))
        };
        Some(format!("{element} (not in the listing){more}"))
    }
}

pub(super) fn target_facts(value: &serde_json::Value) -> TargetFacts {
    let text = |key: &str| value.get(key).and_then(|v| v.as_str()).map(str::to_owned);
    let flag = |key: &str| value.get(key).and_then(|v| v.as_bool()).unwrap_or(false);
    TargetFacts {
        tag: text("tag").unwrap_or_default(),
        input_type: text("type"),
        in_form: flag("inForm"),
        is_submit: flag("isSubmit"),
        href: text("href"),
        download: flag("download"),
    }
}
