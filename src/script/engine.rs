//! The sandboxed engine and the host functions scripts may call.
//!
//! Host functions (all block only the script thread):
//! - page: `navigate(url)` (a path is on the run's origin), `click(target)`,
//!   `fill(target, text)`, `select(target, option)`,
//!   `wait_for(text_or_selector)` /
//!   `wait_for(text_or_selector, timeout_ms)`, `press_keys(keys)`,
//!   `page()` (a map: `url`, `title`, `text`, `elements` as an array of
//!   maps), `url()`, `title()`, `text()`;
//! - any action: `act(name, params)` returns the `{ok, …}` map;
//!   `run_action(name, params)` does the same but ends the script when the
//!   action fails (built-in or custom);
//! - `url_matches(url, pattern)` (`*` stands for one path segment or part
//!   of one), `assert(condition, message)`, `ask_user(question)`, `log(message)`,
//!   `agent(goal)` (hands a sub-goal to the LLM agent), `breakpoint()`
//!   (stops there when a debugger is attached, see [`super::debug`]);
//! - recorded recipes: `start_at(path)` (opens `path` on the run's origin
//!   unless the page is already there), `step(n, goal)` /
//!   `step(n, goal, page)` (step `n` begins: the goal it was recorded with,
//!   and the page it ran on, checked by path or route);
//! - at the top level of a file only: `action(name, spec)`,
//!   `recipe(name, description)`, `recipe(name, description, params)`.
//!
//! A target is an element index (number), a list of locators
//! (`["id:login", "role:button:Sign in", "css:form > button"]`, see
//! [`crate::dom::Locator`]: the first that still names an element wins,
//! and a failing step may be healed), a CSS selector (starts with `#`, `.`
//! or `[`, or is written `css:…`) or visible text (anything else), which
//! is matched against the latest observation: an element's text,
//! `aria-label`, placeholder, `name`, title or value, exact matches first.
//! `run_action` and `act` take locators as a `locators` list among the
//! parameters.

use std::cell::RefCell;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use rhai::packages::{Package, StandardPackage};
use rhai::{Dynamic, Engine, EvalAltResult, Map, NativeCallContext, Position};
use serde_json::{json, Value};

use super::bounds::{self, Limits};
use super::calls::{self, cancelled, host_call, runtime, Bridge};
use super::debug;
use super::declare::Collected;
use super::host::{result_json, HostCall};
use super::loaded::{ActionDef, Snapshot};
use super::targets::{locator_list, selector_text, HostResult};
use crate::actions::{ActionResult, Catalog};
use crate::dom::Locator;

/// Where `print`, `debug` and `log` lines go besides the tracing log.
pub type LogSink = Arc<dyn Fn(&str) + Send + Sync>;

thread_local! {
    /// The files loaded when the call started (for calling custom actions).
    static LIBRARY: RefCell<Option<Arc<Snapshot>>> = const { RefCell::new(None) };
    /// Declarations gathered while a file loads.
    static COLLECT: RefCell<Option<Collected>> = const { RefCell::new(None) };
}

/// How deeply custom actions may call each other.
const MAX_ACTION_NESTING: usize = 8;

/// Sets up this (script) thread for one call.
pub(crate) fn enter(
    cancel: Arc<AtomicBool>,
    bridge: Option<Bridge>,
    library: Arc<Snapshot>,
    collect: Option<Collected>,
) {
    let sources = Arc::clone(&library);
    calls::enter(
        cancel,
        bridge,
        Arc::new(move |file| sources.source_of(file)),
    );
    LIBRARY.with(|l| *l.borrow_mut() = Some(library));
    COLLECT.with(|c| *c.borrow_mut() = collect);
}

/// Takes back the declarations gathered while a file loaded.
pub(crate) fn take_collected() -> Option<Collected> {
    COLLECT.with(|c| c.borrow_mut().take())
}

/// Builds the sandboxed engine with the host functions. The caller keeps
/// it immutable from then on (it is shared behind an `Arc`).
pub fn build_engine(limits: &Limits, log: Option<LogSink>) -> Engine {
    let mut engine = Engine::new_raw();
    // The standard packages: language core, arithmetic, strings, arrays,
    // maps, time. None of them touches files or the network.
    engine.register_global_module(StandardPackage::new().as_shared_module());
    engine.set_max_operations(limits.operations);
    engine.set_max_call_levels(limits.call_depth);
    engine.set_max_expr_depths(limits.expr_depth, limits.fn_expr_depth);
    engine.set_max_string_size(limits.string_bytes);
    engine.set_max_array_size(limits.array_items);
    engine.set_max_map_size(limits.map_entries);
    engine.set_max_variables(limits.variables);
    engine.set_max_functions(limits.functions);
    engine.disable_symbol("eval");
    // Modules could read other files; recipes share code by calling each
    // other's actions instead.
    engine.disable_symbol("import");
    engine.on_progress(|_| {
        if cancelled() {
            Some(Dynamic::from(bounds::CANCELLED))
        } else if bounds::timed_out() {
            Some(bounds::time_limit_token())
        } else {
            None
        }
    });
    bounds::install(&mut engine, cancelled);
    debug::install_hook(&mut engine);
    let print_log = log.clone();
    engine.on_print(move |text| script_log(text, print_log.as_ref()));
    let debug_log = log.clone();
    engine.on_debug(move |text, source, pos| {
        let place = format!(
            "{}:{}:{}",
            source.unwrap_or("<script>"),
            pos.line().unwrap_or(0),
            pos.position().unwrap_or(0)
        );
        script_log(&format!("{place}: {text}"), debug_log.as_ref());
    });
    let log_fn = log;
    engine.register_fn("log", move |text: &str| script_log(text, log_fn.as_ref()));
    register_host_functions(&mut engine);
    super::expect::register(&mut engine);
    engine
}

/// Sends a script's log line to tracing, the caller's sink and the host.
fn script_log(text: &str, sink: Option<&LogSink>) {
    tracing::info!(target: "webagent::script", "{text}");
    if let Some(sink) = sink {
        sink(text);
    }
    debug::log(text);
    let bridge = calls::bridge();
    if let Some(bridge) = bridge {
        // Fire and forget: a log line needs no answer.
        let (reply, _) = std::sync::mpsc::channel();
        let _ = bridge.send((HostCall::Log(text.to_string()), reply));
    }
}

fn to_json(value: &Dynamic, pos: Position) -> HostResult<Value> {
    bounds::check_depth(value, "a value handed to the page").map_err(|e| runtime(e, pos))?;
    rhai::serde::from_dynamic::<Value>(value)
        .map_err(|e| runtime(format!("cannot turn a script value into JSON: {e}"), pos))
}

fn from_json(value: &Value) -> Dynamic {
    // ok: every JSON value has a Rhai form.
    rhai::serde::to_dynamic(value).unwrap_or(Dynamic::UNIT)
}

/// The locators in an action's parameters (`locators: [...]`), taken out.
fn take_locators(params: &mut Value, pos: Position) -> HostResult<Option<Vec<Locator>>> {
    let Some(list) = params.as_object_mut().and_then(|o| o.remove("locators")) else {
        return Ok(None);
    };
    let Value::Array(items) = list else {
        return Err(runtime(
            "`locators` is a list of strings like \"id:login\"",
            pos,
        ));
    };
    let mut out = Vec::new();
    for item in items {
        let Value::String(text) = item else {
            return Err(runtime(format!("a locator is a string, not {item}"), pos));
        };
        out.push(Locator::parse(&text).map_err(|e| runtime(e.to_string(), pos))?);
    }
    Ok(Some(out))
}

/// Runs `name` on the one element `locators` name; the `{ok, …}` result.
fn act_on(name: &str, params: Value, locators: Vec<Locator>, pos: Position) -> HostResult<Value> {
    host_call(
        HostCall::ActOn {
            name: name.to_string(),
            params,
            locators,
            line: pos.line().unwrap_or(0),
        },
        pos,
    )
}

/// A value a step types, as text: strings as they are, numbers and
/// booleans as written.
fn typed_text(value: &Dynamic, pos: Position) -> HostResult<String> {
    if value.is_string() {
        return Ok(value
            .clone()
            .into_immutable_string()
            .map(|s| s.to_string())
            .unwrap_or_default());
    }
    if value.is_int() || value.is_float() || value.is_bool() || value.is_char() {
        return Ok(value.to_string());
    }
    Err(runtime(
        format!(
            "a value to type is text or a number, not {}",
            value.type_name()
        ),
        pos,
    ))
}

/// What a script's target means for one action: `{"index": n}` or
/// `{"selector": …}`. Visible text is looked up in a fresh observation.
fn resolve_target(target: &Dynamic, prefer_fields: bool, pos: Position) -> HostResult<Value> {
    if let Ok(index) = target.as_int() {
        if index < 0 {
            return Err(runtime(format!("element index {index} is negative"), pos));
        }
        return Ok(json!({ "index": index }));
    }
    let Some(text) = target.clone().into_immutable_string().ok() else {
        return Err(runtime(
            format!(
                "a target is an element index, a CSS selector or visible text, not {}",
                target.type_name()
            ),
            pos,
        ));
    };
    if let Some(css) = selector_text(&text) {
        return Ok(json!({ "selector": css }));
    }
    let page = host_call(HostCall::Observe, pos)?;
    match find_by_text(&page, &text, prefer_fields) {
        Some(index) => Ok(json!({ "index": index })),
        // A bare tag name (`select`, `button.primary`) is a selector too
        // when no element shows it as text.
        None if crate::actions::Selector::parse(&text).is_ok() => {
            Ok(json!({ "selector": text.trim() }))
        }
        None => Err(runtime(
            format!(
                "no element on {} shows the text {:?}",
                page.get("url")
                    .and_then(Value::as_str)
                    .unwrap_or("the page"),
                text.as_str()
            ),
            pos,
        )),
    }
}

/// The index of the element whose text, label, placeholder, name, title
/// or value is `wanted`: exact (ignoring case) before containing, and
/// form fields first when filling.
pub(crate) fn find_by_text(page: &Value, wanted: &str, prefer_fields: bool) -> Option<u64> {
    let wanted = wanted.trim().to_lowercase();
    let elements = page.get("elements")?.as_array()?;
    let mut best: Option<(u8, u64)> = None;
    for element in elements {
        let Some(index) = element.get("index").and_then(Value::as_u64) else {
            continue;
        };
        let tag = element.get("tag").and_then(Value::as_str).unwrap_or("");
        let is_field = matches!(tag, "input" | "textarea" | "select");
        let mut names = vec![element.get("text").and_then(Value::as_str).unwrap_or("")];
        if let Some(attributes) = element.get("attributes").and_then(Value::as_object) {
            for key in [
                "aria-label",
                "placeholder",
                "name",
                "title",
                "value",
                "id",
                "label",
            ] {
                if let Some(value) = attributes.get(key).and_then(Value::as_str) {
                    names.push(value);
                }
            }
        }
        let mut score = None;
        for name in names {
            let name = name.trim().to_lowercase();
            if name.is_empty() {
                continue;
            }
            let rank = if name == wanted {
                0
            } else if name.contains(&wanted) {
                2
            } else {
                continue;
            };
            score = Some(score.map_or(rank, |s: u8| s.min(rank)));
        }
        let Some(mut score) = score else { continue };
        if prefer_fields && !is_field {
            score += 1;
        }
        if best.is_none_or(|(s, _)| score < s) {
            best = Some((score, index));
        }
    }
    best.map(|(_, index)| index)
}

/// Runs a built-in or custom action; returns its `{ok, …}` result.
fn run_any(name: &str, mut params: Value, pos: Position) -> HostResult<Value> {
    if let Some(locators) = take_locators(&mut params, pos)? {
        return act_on(name, params, locators, pos);
    }
    if name == "navigate" {
        if let Some(url) = params.get("url").and_then(Value::as_str) {
            return host_call(HostCall::Navigate(url.to_string()), pos);
        }
    }
    let library = LIBRARY.with(|l| l.borrow().clone());
    if let Some(def) = library.as_ref().and_then(|l| l.action(name)) {
        return Ok(call_custom(&def, params, true, pos));
    }
    let action = match Catalog::builtin().parse(&json!({ name: params })) {
        Ok(action) => action,
        Err(error) => {
            return Ok(result_json(&ActionResult::invalid_params(
                error.to_string(),
            )))
        }
    };
    host_call(HostCall::Act(action), pos)
}

/// Ends the script unless the `{ok, …}` result is a success.
fn require_ok(name: &str, result: Value, pos: Position) -> HostResult<Dynamic> {
    if result.get("ok").and_then(Value::as_bool) == Some(true) {
        return Ok(from_json(&result));
    }
    let reason = result
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let message = result.get("message").and_then(Value::as_str).unwrap_or("");
    Err(runtime(format!("{name} failed ({reason}): {message}"), pos))
}

/// Runs a custom action's handler on this thread. `gated`: ask the host
/// to approve and record it (a script calling another action); the agent
/// and the command line gate the call themselves.
pub(crate) fn call_custom(def: &ActionDef, params: Value, gated: bool, pos: Position) -> Value {
    let mut catalog = Catalog::builtin();
    let action = match catalog
        .register(def.spec.clone())
        .and_then(|()| catalog.parse(&json!({ def.spec.name.clone(): params })))
    {
        Ok(action) => action,
        Err(error) => return result_json(&ActionResult::invalid_params(error.to_string())),
    };
    if gated {
        if let Err(error) = host_call(HostCall::Gate(action.clone()), pos) {
            return result_json(&ActionResult::denied(error_text(&error)));
        }
    }
    let depth = calls::action_depth();
    let result = if depth >= MAX_ACTION_NESTING {
        ActionResult::unknown(format!(
            "custom actions called each other more than {MAX_ACTION_NESTING} deep"
        ))
    } else {
        calls::set_action_depth(depth + 1);
        let outcome = def.invoke(action.params());
        calls::set_action_depth(depth);
        outcome
    };
    if gated {
        let _ = host_call(HostCall::Record(action, result.clone()), pos);
    }
    result_json(&result)
}

fn error_text(error: &EvalAltResult) -> String {
    match error {
        EvalAltResult::ErrorRuntime(value, _) => value.to_string(),
        other => other.to_string(),
    }
}

fn register_host_functions(engine: &mut Engine) {
    engine.register_fn(
        "act",
        |ctx: NativeCallContext, name: &str, params: Map| -> HostResult<Dynamic> {
            let pos = ctx.call_position();
            let params = to_json(&Dynamic::from_map(params), pos)?;
            Ok(from_json(&run_any(name, params, pos)?))
        },
    );
    engine.register_fn(
        "run_action",
        |ctx: NativeCallContext, name: &str, params: Map| -> HostResult<Dynamic> {
            let pos = ctx.call_position();
            let params = to_json(&Dynamic::from_map(params), pos)?;
            debug::retrying(pos, || {
                let result = run_any(name, params.clone(), pos)?;
                require_ok(name, result, pos)
            })
        },
    );
    engine.register_fn(
        "navigate",
        |ctx: NativeCallContext, url: &str| -> HostResult<Dynamic> {
            let pos = ctx.call_position();
            debug::retrying(pos, || {
                let result = run_any("navigate", json!({ "url": url }), pos)?;
                require_ok("navigate", result, pos)
            })
        },
    );
    engine.register_fn(
        "click",
        |ctx: NativeCallContext, target: Dynamic| -> HostResult<Dynamic> {
            let pos = ctx.call_position();
            debug::retrying(pos, || {
                if let Some(locators) = locator_list(&target, pos)? {
                    let result = act_on("click", json!({}), locators, pos)?;
                    return require_ok("click", result, pos);
                }
                let params = resolve_target(&target, false, pos)?;
                let result = run_any("click", params, pos)?;
                require_ok(&format!("click {target}"), result, pos)
            })
        },
    );
    engine.register_fn(
        "fill",
        |ctx: NativeCallContext, target: Dynamic, value: Dynamic| -> HostResult<Dynamic> {
            let pos = ctx.call_position();
            let text = typed_text(&value, pos)?;
            debug::retrying(pos, || {
                if let Some(locators) = locator_list(&target, pos)? {
                    let params = json!({ "text": text, "clear": true });
                    let result = act_on("input_text", params, locators, pos)?;
                    return require_ok("fill", result, pos);
                }
                let mut params = resolve_target(&target, true, pos)?;
                params["text"] = json!(text);
                params["clear"] = json!(true);
                let result = run_any("input_text", params, pos)?;
                require_ok(&format!("fill {target}"), result, pos)
            })
        },
    );
    engine.register_fn(
        "select",
        |ctx: NativeCallContext, target: Dynamic, option: Dynamic| -> HostResult<Dynamic> {
            let pos = ctx.call_position();
            let option = typed_text(&option, pos)?;
            debug::retrying(pos, || {
                if let Some(locators) = locator_list(&target, pos)? {
                    let result = act_on("select_option", json!({ "text": option }), locators, pos)?;
                    return require_ok("select", result, pos);
                }
                let mut params = resolve_target(&target, true, pos)?;
                params["text"] = json!(option);
                let result = run_any("select_option", params, pos)?;
                require_ok(&format!("select {target}"), result, pos)
            })
        },
    );
    engine.register_fn(
        "start_at",
        |ctx: NativeCallContext, path: &str| -> HostResult<()> {
            let pos = ctx.call_position();
            debug::retrying(pos, || {
                host_call(HostCall::StartAt(path.to_string()), pos).map(|_| ())
            })
        },
    );
    fn step(number: i64, goal: &str, page: Option<&str>, pos: Position) -> HostResult<()> {
        debug::retrying(pos, || {
            host_call(
                HostCall::Step {
                    number: usize::try_from(number).unwrap_or(0),
                    goal: goal.to_string(),
                    page: page.map(str::to_string),
                    line: pos.line().unwrap_or(0),
                },
                pos,
            )
            .map(|_| ())
        })
    }
    engine.register_fn(
        "step",
        |ctx: NativeCallContext, number: i64, goal: &str| -> HostResult<()> {
            step(number, goal, None, ctx.call_position())
        },
    );
    engine.register_fn(
        "step",
        |ctx: NativeCallContext, number: i64, goal: &str, page: &str| -> HostResult<()> {
            step(number, goal, Some(page), ctx.call_position())
        },
    );
    engine.register_fn(
        "press_keys",
        |ctx: NativeCallContext, keys: &str| -> HostResult<Dynamic> {
            let pos = ctx.call_position();
            debug::retrying(pos, || {
                let result = run_any("press_keys", json!({ "keys": keys }), pos)?;
                require_ok("press_keys", result, pos)
            })
        },
    );
    fn wait_for(what: &str, timeout_ms: i64, pos: Position) -> HostResult<Dynamic> {
        let mut params = match selector_text(what) {
            Some(css) => json!({ "selector": css }),
            None => json!({ "text": what }),
        };
        params["timeout_ms"] = json!(timeout_ms.max(0));
        debug::retrying(pos, || {
            let result = run_any("wait_for", params.clone(), pos)?;
            require_ok(&format!("wait_for {what:?}"), result, pos)
        })
    }
    engine.register_fn(
        "wait_for",
        |ctx: NativeCallContext, what: &str| -> HostResult<Dynamic> {
            wait_for(what, 10_000, ctx.call_position())
        },
    );
    engine.register_fn(
        "wait_for",
        |ctx: NativeCallContext, what: &str, timeout_ms: i64| -> HostResult<Dynamic> {
            wait_for(what, timeout_ms, ctx.call_position())
        },
    );
    engine.register_fn("page", |ctx: NativeCallContext| -> HostResult<Dynamic> {
        Ok(from_json(&host_call(
            HostCall::Observe,
            ctx.call_position(),
        )?))
    });
    for field in ["url", "title", "text"] {
        engine.register_fn(
            field,
            move |ctx: NativeCallContext| -> HostResult<Dynamic> {
                let page = host_call(HostCall::Observe, ctx.call_position())?;
                Ok(from_json(page.get(field).unwrap_or(&Value::Null)))
            },
        );
    }
    engine.register_fn("url_matches", |url: &str, pattern: &str| {
        super::export::url_matches(url, pattern)
    });
    engine.register_fn(
        "assert",
        |ctx: NativeCallContext, condition: bool, message: &str| -> HostResult<()> {
            if condition {
                return Ok(());
            }
            // Retrying an assertion fails the same way (its condition was
            // computed before the call); skipping it goes on.
            let pos = ctx.call_position();
            debug::retrying(pos, || {
                Err(runtime(format!("assertion failed: {message}"), pos))
            })
        },
    );
    engine.register_fn("breakpoint", debug::pause_here);
    engine.register_fn(
        "ask_user",
        |ctx: NativeCallContext, question: &str| -> HostResult<Dynamic> {
            let answer = host_call(HostCall::AskUser(question.to_string()), ctx.call_position())?;
            Ok(from_json(&answer))
        },
    );
    engine.register_fn(
        "agent",
        |ctx: NativeCallContext, goal: &str| -> HostResult<Dynamic> {
            let outcome = host_call(HostCall::Agent(goal.to_string()), ctx.call_position())?;
            Ok(from_json(&outcome))
        },
    );
    engine.register_fn(
        "action",
        |ctx: NativeCallContext, name: &str, spec: Map| -> HostResult<()> {
            let pos = ctx.call_position();
            let spec = to_json(&Dynamic::from_map(spec), pos)?;
            declare(pos, |c| c.add_action(name, &spec, pos))
        },
    );
    engine.register_fn(
        "secret_sites",
        |ctx: NativeCallContext, name: &str, sites: rhai::Array| -> HostResult<()> {
            let pos = ctx.call_position();
            let sites: Vec<String> = sites.iter().map(|s| s.to_string()).collect();
            declare(pos, |c| c.add_secret_sites(name, sites))
        },
    );
    engine.register_fn(
        "recipe",
        |ctx: NativeCallContext, name: &str, description: &str| -> HostResult<()> {
            let pos = ctx.call_position();
            declare(pos, |c| c.add_recipe(name, description, None, pos))
        },
    );
    engine.register_fn(
        "recipe",
        |ctx: NativeCallContext, name: &str, description: &str, params: Map| -> HostResult<()> {
            let pos = ctx.call_position();
            let params = to_json(&Dynamic::from_map(params), pos)?;
            declare(pos, |c| c.add_recipe(name, description, Some(&params), pos))
        },
    );
}

fn declare(
    pos: Position,
    add: impl FnOnce(&mut Collected) -> Result<(), String>,
) -> HostResult<()> {
    COLLECT.with(|c| match c.borrow_mut().as_mut() {
        Some(collected) => add(collected).map_err(|message| runtime(message, pos)),
        None => Err(runtime(
            "action(...) and recipe(...) declare things at the top level of a file, not while one runs",
            pos,
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_targets_prefer_exact_matches_and_fields_when_filling() {
        let page = json!({"url": "u", "elements": [
            {"index": 0, "tag": "a", "text": "Sign in help", "attributes": {}},
            {"index": 1, "tag": "button", "text": "Sign in", "attributes": {}},
            {"index": 2, "tag": "label", "text": "Email", "attributes": {}},
            {"index": 3, "tag": "input", "text": "", "attributes": {"name": "email"}},
        ]});
        assert_eq!(find_by_text(&page, "sign in", false), Some(1));
        assert_eq!(find_by_text(&page, "Email", true), Some(3));
        assert_eq!(find_by_text(&page, "Nothing", false), None);
    }

    #[test]
    fn selectors_are_told_from_text() {
        assert_eq!(selector_text("#email"), Some("#email"));
        assert_eq!(selector_text("css:button.primary"), Some("button.primary"));
        assert_eq!(selector_text("Sign in"), None);
    }
}
