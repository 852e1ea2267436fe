//! The assertions a recipe makes about the page (`expect_visible`,
//! `expect_text`, `expect_count`, `expect_url`, …): each names its element
//! the way a recorded step does, by a list of locators, and the host
//! checks it (waiting a little for the page, see `host/expect.rs`). One
//! that does not hold ends the recipe with the call, what it expected
//! and what the page showed; a recording's picked assertions export as
//! these calls.

use rhai::{Dynamic, Engine, NativeCallContext, Position};

use super::calls::{host_call, runtime};
use super::debug;
use super::export::{locators_literal, rhai_string};
use super::host::{Expectation, HostCall};
use super::targets::{locator_list, selector_text, HostResult};
use crate::dom::{Locator, LOCATOR_KINDS};

/// Registers the assertion functions on `engine`.
pub(super) fn register(engine: &mut Engine) {
    engine.register_fn(
        "expect_visible",
        |ctx: NativeCallContext, target: Dynamic| -> HostResult<()> {
            let pos = ctx.call_position();
            expect("expect_visible", &target, Expectation::Visible, None, pos)
        },
    );
    engine.register_fn(
        "expect_text",
        |ctx: NativeCallContext, target: Dynamic, text: &str| -> HostResult<()> {
            let pos = ctx.call_position();
            let expectation = Expectation::Text(text.to_string());
            expect(
                "expect_text",
                &target,
                expectation,
                Some(rhai_string(text)),
                pos,
            )
        },
    );
    engine.register_fn(
        "expect_text_contains",
        |ctx: NativeCallContext, target: Dynamic, text: &str| -> HostResult<()> {
            let pos = ctx.call_position();
            let expectation = Expectation::TextContains(text.to_string());
            let written = Some(rhai_string(text));
            expect("expect_text_contains", &target, expectation, written, pos)
        },
    );
    engine.register_fn(
        "expect_value",
        |ctx: NativeCallContext, target: Dynamic, value: Dynamic| -> HostResult<()> {
            let pos = ctx.call_position();
            // A number is compared as the field shows it.
            let value = match value.clone().into_immutable_string() {
                Ok(text) => text.to_string(),
                Err(_) => value.to_string(),
            };
            let expectation = Expectation::Value(value.clone());
            let written = Some(rhai_string(&value));
            expect("expect_value", &target, expectation, written, pos)
        },
    );
    engine.register_fn(
        "expect_checked",
        |ctx: NativeCallContext, target: Dynamic, checked: bool| -> HostResult<()> {
            let pos = ctx.call_position();
            let expectation = Expectation::Checked(checked);
            expect(
                "expect_checked",
                &target,
                expectation,
                Some(checked.to_string()),
                pos,
            )
        },
    );
    engine.register_fn(
        "expect_count",
        |ctx: NativeCallContext, target: Dynamic, count: i64| -> HostResult<()> {
            let pos = ctx.call_position();
            let Ok(wanted) = usize::try_from(count) else {
                return Err(runtime(format!("a count is 0 or more, not {count}"), pos));
            };
            let expectation = Expectation::Count(wanted);
            expect(
                "expect_count",
                &target,
                expectation,
                Some(count.to_string()),
                pos,
            )
        },
    );
    engine.register_fn(
        "expect_url",
        |ctx: NativeCallContext, pattern: &str| -> HostResult<()> {
            let pos = ctx.call_position();
            let call = format!("expect_url({})", rhai_string(pattern));
            let expectation = Expectation::Url(pattern.to_string());
            debug::retrying(pos, || {
                host_call(
                    HostCall::Expect {
                        expectation: expectation.clone(),
                        locators: Vec::new(),
                        call: call.clone(),
                    },
                    pos,
                )
                .map(|_| ())
            })
        },
    );
}

/// Asks the host to check `expectation` on the element `target` names;
/// `written` is the expected value as the call wrote it.
fn expect(
    name: &str,
    target: &Dynamic,
    expectation: Expectation,
    written: Option<String>,
    pos: Position,
) -> HostResult<()> {
    let locators = target_locators(target, pos)?;
    let call = match written {
        Some(value) => format!("{name}({}, {value})", locators_literal(&locators)),
        None => format!("{name}({})", locators_literal(&locators)),
    };
    // A debugger stops at an assertion that does not hold, to look at the
    // page and try again.
    debug::retrying(pos, || {
        host_call(
            HostCall::Expect {
                expectation: expectation.clone(),
                locators: locators.clone(),
                call: call.clone(),
            },
            pos,
        )
        .map(|_| ())
    })
}

/// The locators an assertion's target stands for: a list of locators as
/// they are; one string as one locator (`kind:value`, a CSS selector, or
/// else visible text). An index is refused: it names a listing, which the
/// next run does not have.
fn target_locators(target: &Dynamic, pos: Position) -> HostResult<Vec<Locator>> {
    if let Some(locators) = locator_list(target, pos)? {
        return Ok(locators);
    }
    let Ok(text) = target.clone().into_immutable_string() else {
        return Err(runtime(
            format!(
                "an assertion names its element by locators ([\"id:status\"]), a CSS selector or its text, not {}",
                target.type_name()
            ),
            pos,
        ));
    };
    let written_kind = text
        .split_once(':')
        .is_some_and(|(kind, _)| LOCATOR_KINDS.contains(&kind.trim()));
    if written_kind {
        return Locator::parse(&text)
            .map(|l| vec![l])
            .map_err(|e| runtime(e.to_string(), pos));
    }
    Ok(vec![match selector_text(&text) {
        Some(css) => Locator::Css(css.to_string()),
        None => Locator::Text(text.trim().to_string()),
    }])
}
