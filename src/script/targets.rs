//! How a script names an element: a CSS selector, visible text, or a list
//! of locators (`["id:login", "role:button:Sign in"]`), as a recorded step
//! keeps them. The engine's actions and the assertions both read targets
//! this way, so they sit below both.

use rhai::{Dynamic, EvalAltResult, Position};

use super::calls::runtime;
use crate::dom::Locator;

/// What a host function gives a script: a value, or an error Rhai shows
/// at the call's position.
pub(super) type HostResult<T> = Result<T, Box<EvalAltResult>>;

/// Whether a string target is a CSS selector rather than visible text.
pub(super) fn selector_text(target: &str) -> Option<&str> {
    if let Some(css) = target.strip_prefix("css:") {
        return Some(css.trim());
    }
    let first = target.trim_start().chars().next()?;
    matches!(first, '#' | '.' | '[').then_some(target.trim())
}

/// A list of locator strings (`["id:x", "text:Go"]`), or `None` when the
/// value is no list.
pub(super) fn locator_list(value: &Dynamic, pos: Position) -> HostResult<Option<Vec<Locator>>> {
    let Some(items) = value.read_lock::<rhai::Array>() else {
        return Ok(None);
    };
    let mut out = Vec::new();
    for item in items.iter() {
        let Some(text) = item.clone().into_immutable_string().ok() else {
            return Err(runtime(
                format!(
                    "a locator is a string like \"id:login\", not {}",
                    item.type_name()
                ),
                pos,
            ));
        };
        out.push(Locator::parse(&text).map_err(|e| runtime(e.to_string(), pos))?);
    }
    if out.is_empty() {
        return Err(runtime("the list of locators is empty", pos));
    }
    Ok(Some(out))
}
