//! Turning a recorded session (a trace of [`Event`]s) into a recipe that
//! replays it without the model, on any origin of the same app.
//!
//! What a recording keeps, so the recipe survives change:
//! - URLs relative to the run's start origin (`navigate("/orders/1024")`):
//!   the origin is chosen when the recipe runs (`recipe run --url`);
//! - before each step, the page it ran on, by path, or by its sitemap
//!   route when one matches (`step(4, "…", "/orders/:id")`), so a replay
//!   that went astray stops (or heals) instead of clicking on the wrong
//!   page; numeric ids in a path without a route are left open (`*`);
//! - every locator the step's target recorded, strongest first (see
//!   [`Locator`]); the replay takes the first that still names an element
//!   and fails as ambiguous when two name different ones;
//! - the reflection's goal of each step, which a self-healing replay hands
//!   to the agent when the step no longer runs;
//! - values typed or chosen as parameters with the recorded values as
//!   defaults (`params.email`); secrets stay `<secret>NAME</secret>`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::dom::Locator;
use crate::events::{read_trace, Event, TraceReadError};
use crate::sitemap::SitemapSet;
pub use crate::urls::{glob, page_matches, url_matches};

/// Everything that can go wrong exporting.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The trace could not be read, or a line of it is not an event.
    #[error(transparent)]
    Trace(#[from] TraceReadError),
    /// The trace has no successful step to replay.
    #[error("the trace {} has no successful step to replay", path.display())]
    NoSteps {
        /// The trace file.
        path: PathBuf,
    },
}

/// How to export.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExportOptions<'a> {
    /// Sitemaps whose routes name the pages of location checks.
    pub sitemaps: Option<&'a SitemapSet>,
    /// Leave typed values in the steps instead of making them parameters
    /// (a cached recipe replays exactly what its run typed).
    pub no_params: bool,
    /// The recipe's name (a snake_case word); `replay` when not given.
    pub name: Option<&'a str>,
    /// The header's first line, instead of saying the file was exported
    /// from `label` (a person's recording says it was recorded).
    pub header: Option<&'a str>,
}

/// Reads the trace at `path` and returns the recipe's source.
pub fn export_recipe(path: &Path) -> Result<String, ExportError> {
    export_recipe_with(path, ExportOptions::default())
}

/// [`export_recipe`] with options (sitemap routes for location checks).
pub fn export_recipe_with(path: &Path, options: ExportOptions<'_>) -> Result<String, ExportError> {
    let events = read_trace(path)?;
    recipe_from_events_with(&events, &path.display().to_string(), options).ok_or_else(|| {
        ExportError::NoSteps {
            path: path.to_path_buf(),
        }
    })
}

/// The recipe for these events, or `None` when no step can be replayed.
pub fn recipe_from_events(events: &[Event], origin: &str) -> Option<String> {
    recipe_from_events_with(events, origin, ExportOptions::default())
}

/// One parameter an export declares.
struct ExportedParam {
    name: String,
    default: Value,
    kind: &'static str,
}

/// What an export gathers as it reads the trace.
#[derive(Default)]
struct Gathered {
    body: Vec<String>,
    params: Vec<ExportedParam>,
    replayed: usize,
}

impl Gathered {
    /// The Rhai expression for a typed value: a parameter (reused when the
    /// same field got the same value before), or the literal itself for a
    /// secret's placeholder.
    fn value(&mut self, text: &str, facts: Option<&Value>, no_params: bool) -> String {
        if no_params || text.contains("<secret>") || text.is_empty() {
            return rhai_string(text);
        }
        let base = facts.map(param_base).unwrap_or_else(|| "value".into());
        let (kind, default) = typed_default(text);
        if let Some(same) = self.params.iter().find(|p| {
            (p.name == base || p.name.starts_with(&format!("{base}_"))) && p.default == default
        }) {
            return format!("params.{}", same.name);
        }
        let mut name = base.clone();
        let mut n = 1;
        while self.params.iter().any(|p| p.name == name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        self.params.push(ExportedParam {
            name: name.clone(),
            default,
            kind,
        });
        format!("params.{name}")
    }
}

/// A parameter's type and default from the text the run typed: short
/// whole numbers (a quantity, an amount in cents) are integers, so a
/// wrong `--param` is refused; everything else is text, kept exactly.
fn typed_default(text: &str) -> (&'static str, Value) {
    let digits = text.len() <= 6
        && !text.is_empty()
        && text.chars().all(|c| c.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    match text.parse::<i64>() {
        Ok(n) if digits => ("integer", Value::from(n)),
        _ => ("string", Value::String(text.to_string())),
    }
}

/// Words Rhai keeps for itself: a parameter named so could not be read
/// as `params.NAME`.
const RHAI_RESERVED: [&str; 56] = [
    "as",
    "async",
    "await",
    "break",
    "call",
    "case",
    "catch",
    "const",
    "continue",
    "curry",
    "debug",
    "default",
    "do",
    "else",
    "eval",
    "exit",
    "export",
    "false",
    "fn",
    "for",
    "global",
    "go",
    "goto",
    "if",
    "import",
    "in",
    "is",
    "let",
    "loop",
    "match",
    "module",
    "new",
    "package",
    "print",
    "private",
    "protected",
    "public",
    "return",
    "shared",
    "spawn",
    "static",
    "super",
    "switch",
    "sync",
    "this",
    "thread",
    "throw",
    "true",
    "try",
    "type_of",
    "until",
    "use",
    "var",
    "while",
    "with",
    "yield",
];

/// A parameter's name from what names its field: `name`, id, label,
/// placeholder, the accessible name; in snake_case.
pub(crate) fn param_base(facts: &Value) -> String {
    for key in [
        "name",
        "id",
        "label",
        "placeholder",
        "accessibleName",
        "ariaLabel",
    ] {
        let Some(text) = facts.get(key).and_then(Value::as_str) else {
            continue;
        };
        if key == "id" && crate::dom::looks_generated(text) {
            continue;
        }
        let mut name = String::new();
        let mut gap = false;
        for c in text.chars() {
            if c.is_ascii_alphanumeric() {
                if gap && !name.is_empty() {
                    name.push('_');
                }
                name.push(c.to_ascii_lowercase());
                gap = false;
            } else {
                gap = true;
            }
            if name.len() >= 30 {
                break;
            }
        }
        let name = name.trim_start_matches(|c: char| c.is_ascii_digit() || c == '_');
        if RHAI_RESERVED.contains(&name) {
            return format!("{name}_value");
        }
        if !name.is_empty() {
            return name.to_string();
        }
    }
    "value".into()
}

/// The recipe for these events with `options`, or `None` when no step can
/// be replayed.
pub fn recipe_from_events_with(
    events: &[Event],
    label: &str,
    options: ExportOptions<'_>,
) -> Option<String> {
    let mut task = String::new();
    let mut start_url = String::new();
    let mut checked = String::new();
    let mut gathered = Gathered::default();
    let builtin = crate::actions::Catalog::builtin();
    let mut observed: HashMap<usize, String> = HashMap::new();
    let mut last_index = 0;
    let mut wrappers = crate::events::Wrappers::default();
    let mut first_navigates = None;
    let mut secret_sites = std::collections::BTreeMap::new();
    for event in events {
        match event {
            Event::RunSettings(settings) => {
                secret_sites.extend(settings.secret_sites.clone());
            }
            Event::RunStarted { task: t, url, .. } if task.is_empty() => {
                task = t.clone();
                start_url = url.clone();
            }
            Event::Observation(summary) => {
                observed.insert(summary.step, summary.url.clone());
            }
            Event::Step(step) => {
                let Some((name, params)) = step.action.as_object().and_then(|o| o.iter().next())
                else {
                    continue;
                };
                // A custom action is recorded after the steps it ran: those
                // steps are replayed, so the call itself is not. (Traces
                // from before `within` show it by its earlier number.)
                let wrapper = wrappers.is_wrapper(step)
                    || (builtin.get(name).is_none() && step.index < last_index);
                last_index = last_index.max(step.index);
                if wrapper {
                    continue;
                }
                if !step.result.is_ok() {
                    gathered.body.push(format!(
                        "    // step {}: {name} failed when recorded; left out",
                        step.index
                    ));
                    continue;
                }
                let data = serde_json::to_value(&step.result).unwrap_or(Value::Null);
                let facts = data.get("data").and_then(|d| d.get("locator"));
                // Only a URL seen at this step is checked: one carried over
                // from an earlier step may be stale.
                let url = facts
                    .and_then(|l| l.get("url"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or_else(|| observed.get(&step.index).cloned())
                    .unwrap_or_default();
                if start_url.is_empty() {
                    // A session without a run (actions typed by hand) is
                    // relative to the first page it touched.
                    start_url = match name.as_str() {
                        "navigate" => params
                            .get("url")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        _ => url.clone(),
                    };
                }
                let origin = origin_of(&start_url);
                let Some(line) = step_line(
                    name,
                    params,
                    facts,
                    origin.as_deref(),
                    &mut gathered,
                    options.no_params,
                ) else {
                    gathered.body.push(format!(
                        "    // step {}: {name} does not change the page; left out",
                        step.index
                    ));
                    continue;
                };
                gathered.replayed += 1;
                first_navigates.get_or_insert(name == "navigate");
                let goal = step.reflection.next_goal.trim();
                let number = gathered.replayed;
                let page = if name == "navigate" {
                    String::new()
                } else {
                    page_pattern(&url, origin.as_deref(), options.sitemaps)
                };
                if name == "navigate" {
                    checked.clear();
                }
                if !page.is_empty() && page != checked {
                    gathered.body.push(format!(
                        "    step({number}, {}, {});",
                        rhai_string(goal),
                        rhai_string(&page)
                    ));
                    checked = page;
                } else {
                    gathered
                        .body
                        .push(format!("    step({number}, {});", rhai_string(goal)));
                }
                gathered.body.push(format!("    {line}"));
            }
            _ => {}
        }
    }
    if gathered.replayed == 0 {
        return None;
    }
    let description = if task.is_empty() {
        format!("Replays the session recorded in {label}")
    } else {
        format!("Replays: {task}")
    };
    let origin = origin_of(&start_url);
    // A recording that opens its first page itself needs no start page.
    let start = origin
        .as_deref()
        .and_then(|o| relative_to(&start_url, o))
        .filter(|_| first_navigates != Some(true));
    let mut out = String::new();
    match options.header {
        Some(header) => out.push_str(&format!("// {header}\n")),
        None => out.push_str(&format!("// Exported by `webagent export` from {label}.\n")),
    }
    if !task.is_empty() {
        out.push_str(&format!("// Task: {}\n", one_line(&task)));
    }
    if let Some(origin) = &origin {
        out.push_str(&format!(
            "// Recorded on {origin}; URLs are relative to the origin the recipe runs on\n// (`webagent recipe run FILE --url ORIGIN`).\n"
        ));
    }
    out.push_str(&format!(
        "// Replays {} step(s) without the model. Each step finds its element through\n// the first of its recorded locators that still names one (test id, id, role\n// and name, label, placeholder, name, text, CSS path); two that name different\n// elements stop the step as ambiguous.\n\n",
        gathered.replayed
    ));
    // A secret bound to its sites when recorded stays bound in the recipe,
    // whatever the session that replays it configures.
    let mut bound = false;
    for (name, sites) in &secret_sites {
        if !gathered
            .body
            .iter()
            .any(|l| l.contains(&format!("<secret>{name}</secret>")))
        {
            continue;
        }
        let sites: Vec<String> = sites.iter().map(|s| rhai_string(s)).collect();
        out.push_str(&format!(
            "secret_sites({}, [{}]);\n",
            rhai_string(name),
            sites.join(", ")
        ));
        bound = true;
    }
    if bound {
        out.push('\n');
    }
    let name = options.name.unwrap_or("replay");
    let takes = !gathered.params.is_empty();
    if takes {
        out.push_str(&format!(
            "recipe(\"{name}\", {}, #{{\n",
            rhai_string(&description)
        ));
        for param in &gathered.params {
            // `default` is a reserved word in Rhai: the key is quoted.
            out.push_str(&format!(
                "    {}: #{{ type: \"{}\", \"default\": {} }},\n",
                param.name,
                param.kind,
                rhai_literal(&param.default)
            ));
        }
        out.push_str(&format!("}});\n\nfn {name}(params) {{\n"));
    } else {
        out.push_str(&format!(
            "recipe(\"{name}\", {});\n\nfn {name}() {{\n",
            rhai_string(&description)
        ));
    }
    if let Some(start) = start {
        out.push_str(&format!("    start_at({});\n", rhai_string(&start)));
    }
    for line in gathered.body {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&format!(
        "    \"replayed {} step(s)\"\n}}\n",
        gathered.replayed
    ));
    Some(out)
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Actions that leave the page as it was (or need the model, as
/// `extract` does): a replay leaves them out.
const NOT_REPLAYED: [&str; 12] = [
    "think",
    "done",
    "ask_user",
    "hand_over",
    "read_page",
    "extract",
    "screenshot",
    "highlight",
    "border",
    "spotlight",
    "clear_overlays",
    "show_subtitle",
];

/// Whether a replay repeats the action `name` (it changes the page).
pub fn replays(name: &str) -> bool {
    !NOT_REPLAYED.contains(&name)
}

/// The script line of one recorded action, or `None` for actions that do
/// not act on the page (think, done, read_page, …).
fn step_line(
    name: &str,
    params: &Value,
    facts: Option<&Value>,
    origin: Option<&str>,
    gathered: &mut Gathered,
    no_params: bool,
) -> Option<String> {
    if !replays(name) {
        return None;
    }
    let text_param = |key: &str| params.get(key).and_then(Value::as_str);
    let target = target_expression(params, facts);
    Some(match (name, target) {
        ("navigate", _) => {
            let url = text_param("url")?;
            let url = origin
                .and_then(|o| relative_to(url, o))
                .unwrap_or_else(|| url.to_string());
            format!("navigate({});", rhai_string(&url))
        }
        ("click", Some(target)) => format!("click({target});"),
        ("input_text", Some(target)) => {
            let value = gathered.value(text_param("text")?, facts, no_params);
            format!("fill({target}, {value});")
        }
        ("select_option", Some(target)) if params.get("text").is_some() => {
            let value = gathered.value(text_param("text")?, facts, no_params);
            format!("select({target}, {value});")
        }
        ("press_keys", _) if params.get("repeat").and_then(Value::as_u64).unwrap_or(1) == 1 => {
            format!("press_keys({});", rhai_string(text_param("keys")?))
        }
        // The file's path is a parameter like a typed value: the next run
        // uploads another file.
        ("upload_file", Some(target)) if target.starts_with('[') => {
            let path = gathered.value(text_param("path")?, facts, no_params);
            format!("run_action(\"upload_file\", #{{ locators: {target}, path: {path} }});")
        }
        ("wait_for", _) => {
            let what = text_param("selector")
                .or_else(|| text_param("text"))
                .map(rhai_string)?;
            let timeout = params
                .get("timeout_ms")
                .and_then(Value::as_u64)
                .unwrap_or(10_000);
            format!("wait_for({what}, {timeout});")
        }
        (name, target) if name.starts_with("expect_") => expect_line(name, params, target)?,
        (_, _) => {
            let mut params = params.clone();
            let locators = facts.map(Locator::from_facts).unwrap_or_default();
            if let Some(object) = params.as_object_mut() {
                if !locators.is_empty() {
                    object.remove("index");
                    object.remove("selector");
                    object.insert(
                        "locators".into(),
                        Value::Array(
                            locators
                                .iter()
                                .map(|l| Value::String(l.to_string()))
                                .collect(),
                        ),
                    );
                }
            }
            format!(
                "run_action({}, {});",
                rhai_string(name),
                rhai_literal(&params)
            )
        }
    })
}

/// The line of an assertion a person picked while recording
/// (`{"expect_text": {"text": "Saved"}}` on an element): its target is the
/// element's recorded locators, or the `locators` it names itself (a
/// count names the locator that counts).
fn expect_line(name: &str, params: &Value, target: Option<String>) -> Option<String> {
    let named = params
        .get("locators")
        .and_then(Value::as_array)
        .map(|items| {
            let locators: Vec<Locator> = items
                .iter()
                .filter_map(Value::as_str)
                .filter_map(|text| Locator::parse(text).ok())
                .collect();
            locators_literal(&locators)
        });
    let target = named.or(target);
    let text = |key: &str| params.get(key).and_then(Value::as_str).map(rhai_string);
    Some(match name {
        "expect_url" => format!("expect_url({});", text("pattern")?),
        "expect_visible" => format!("expect_visible({});", target?),
        "expect_text" | "expect_text_contains" => {
            format!("{name}({}, {});", target?, text("text")?)
        }
        "expect_value" => format!("expect_value({}, {});", target?, text("value")?),
        "expect_checked" => format!(
            "expect_checked({}, {});",
            target?,
            params.get("checked")?.as_bool()?
        ),
        "expect_count" => format!(
            "expect_count({}, {});",
            target?,
            params.get("count")?.as_u64()?
        ),
        _ => return None,
    })
}

/// How the target is named: the recorded locators as a list, else the
/// recorded selector, else (nothing recorded) the index.
fn target_expression(params: &Value, facts: Option<&Value>) -> Option<String> {
    let locators = facts.map(Locator::from_facts).unwrap_or_default();
    if !locators.is_empty() {
        return Some(locators_literal(&locators));
    }
    if let Some(selector) = params.get("selector").and_then(Value::as_str) {
        return Some(rhai_string(&format!("css:{selector}")));
    }
    params
        .get("index")
        .and_then(Value::as_u64)
        .map(|i| i.to_string())
}

/// A list of locators as a Rhai array of strings.
pub fn locators_literal(locators: &[Locator]) -> String {
    format!(
        "[{}]",
        locators
            .iter()
            .map(|l| rhai_string(&l.to_string()))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The recipe line that does what a healing agent's action did: its
/// target by the locators it recorded, its values as typed.
pub fn action_line(action: &Value, facts: Option<&Value>, origin: Option<&str>) -> Option<String> {
    let (name, params) = action.as_object().and_then(|o| o.iter().next())?;
    let mut scratch = Gathered::default();
    step_line(name, params, facts, origin, &mut scratch, true)
}

/// `scheme://host:port` of a URL, for http(s) only.
pub fn origin_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    matches!(parsed.scheme(), "http" | "https").then(|| parsed.origin().ascii_serialization())
}

/// `url` as a path (with query and fragment) when it is on `origin`.
fn relative_to(url: &str, origin: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    if parsed.origin().ascii_serialization() != origin {
        return None;
    }
    let mut out = parsed.path().to_string();
    if let Some(query) = parsed.query() {
        out.push('?');
        out.push_str(query);
    }
    if let Some(fragment) = parsed.fragment() {
        out.push('#');
        out.push_str(fragment);
    }
    Some(out)
}

/// The page a step ran on, as a location check: its sitemap route when
/// one matches (`/orders/:id`), else its path with ids left open
/// (`/orders/*`). A page on another origin than the run's start keeps its
/// whole URL as a pattern.
pub fn page_pattern(url: &str, origin: Option<&str>, sitemaps: Option<&SitemapSet>) -> String {
    let Ok(parsed) = url::Url::parse(url) else {
        return String::new();
    };
    if !matches!(parsed.scheme(), "http" | "https") {
        return String::new();
    }
    if origin.is_some_and(|o| o != parsed.origin().ascii_serialization()) {
        return url_pattern(url);
    }
    if let Some(route) = sitemaps
        .and_then(|set| set.for_url(url))
        .and_then(|sitemap| sitemap.resolve(url))
    {
        return route.pattern.to_string();
    }
    path_pattern(parsed.path())
}

/// A path with segments that look like ids (numbers, long runs of digits)
/// left open as `*`.
fn path_pattern(path: &str) -> String {
    let segments: Vec<&str> = path
        .split('/')
        .map(|segment| if looks_like_id(segment) { "*" } else { segment })
        .collect();
    let joined = segments.join("/");
    if joined.is_empty() {
        "/".into()
    } else {
        joined
    }
}

fn looks_like_id(segment: &str) -> bool {
    !segment.is_empty()
        && (segment.chars().all(|c| c.is_ascii_digit()) || crate::dom::looks_generated(segment))
}

/// The page a step ran on, as a pattern: query and fragment dropped,
/// path segments that are numbers (ids) left open as `*`.
pub fn url_pattern(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return String::new();
    };
    if !matches!(parsed.scheme(), "http" | "https" | "file") {
        return String::new();
    }
    parsed.set_query(None);
    parsed.set_fragment(None);
    let path: Vec<String> = parsed
        .path()
        .split('/')
        .map(|segment| {
            if !segment.is_empty() && segment.chars().all(|c| c.is_ascii_digit()) {
                "*".to_string()
            } else {
                segment.to_string()
            }
        })
        .collect();
    format!(
        "{}{}",
        parsed.origin().ascii_serialization(),
        path.join("/")
    )
}

/// A Rhai string literal.
pub fn rhai_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON value as a Rhai literal (`#{ "key": … }`, `[…]`, `()` for null).
pub fn rhai_literal(value: &Value) -> String {
    match value {
        Value::Null => "()".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => rhai_string(s),
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(rhai_literal)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Object(map) => format!(
            "#{{ {} }}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", rhai_string(k), rhai_literal(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn url_patterns_leave_ids_open() {
        assert_eq!(
            url_pattern("http://127.0.0.1:8080/orders/1001?tab=2#x"),
            "http://127.0.0.1:8080/orders/*"
        );
        assert!(url_matches(
            "http://127.0.0.1:8080/orders/1002?x=1",
            "http://127.0.0.1:8080/orders/*"
        ));
        assert!(!url_matches(
            "http://127.0.0.1:8080/orders/1002/edit",
            "http://127.0.0.1:8080/orders/*"
        ));
    }

    #[test]
    fn location_checks_are_paths_or_routes_on_any_origin() {
        let sitemaps = {
            let mut set = SitemapSet::new();
            set.insert(
                crate::sitemap::Sitemap::from_yaml_str(
                    "title: Acme\nchildren:\n  orders:\n    title: Orders\n    children:\n      \":id\":\n        title: Order\n",
                )
                .unwrap(),
            );
            set
        };
        let origin = Some("http://127.0.0.1:39011");
        assert_eq!(
            page_pattern(
                "http://127.0.0.1:39011/orders/1024?tab=1",
                origin,
                Some(&sitemaps)
            ),
            "/orders/:id"
        );
        assert_eq!(
            page_pattern("http://127.0.0.1:39011/login.html", origin, None),
            "/login.html"
        );
        assert_eq!(
            page_pattern("http://127.0.0.1:39011/orders/1024", origin, None),
            "/orders/*"
        );
        assert!(page_matches(
            "http://127.0.0.1:40000/orders/77?x",
            "/orders/:id"
        ));
        assert!(page_matches("http://other.test/login.html/", "/login.html"));
        assert!(!page_matches(
            "http://other.test/orders/77/edit",
            "/orders/:id"
        ));
        assert!(!page_matches("http://other.test/orders", "/orders/*"));
        assert!(page_matches("http://x.test/", "/"));
    }

    #[test]
    fn targets_are_every_recorded_locator_in_order() {
        let by_id = json!({"tag": "input", "id": "email", "name": "email", "label": "Email",
            "role": "textbox", "accessibleName": "Email", "css": "#email"});
        assert_eq!(
            target_expression(&json!({"index": 3}), Some(&by_id)),
            Some(
                "[\"id:email\", \"role:textbox:Email\", \"label:Email\", \"name:email\", \"css:#email\"]"
                    .into()
            )
        );
        assert_eq!(
            target_expression(&json!({"index": 3}), None),
            Some("3".into())
        );
    }

    #[test]
    fn typed_values_become_parameters_named_for_their_field() {
        let mut gathered = Gathered::default();
        let email = json!({"name": "email"});
        let quantity = json!({"label": "Quantity (units)"});
        assert_eq!(
            gathered.value("ann@x.test", Some(&email), false),
            "params.email"
        );
        assert_eq!(
            gathered.value("3", Some(&quantity), false),
            "params.quantity_units"
        );
        // The same value in the same field again reuses the parameter; a
        // new value gets its own.
        assert_eq!(
            gathered.value("ann@x.test", Some(&email), false),
            "params.email"
        );
        assert_eq!(
            gathered.value("bob@x.test", Some(&email), false),
            "params.email_2"
        );
        assert_eq!(
            gathered.value("<secret>pw</secret>", Some(&email), false),
            "\"<secret>pw</secret>\""
        );
        assert_eq!(gathered.params[1].kind, "integer");
        assert_eq!(gathered.params[1].default, json!(3));
        assert_eq!(
            typed_default("0042").0,
            "string",
            "a leading zero stays text"
        );
    }

    #[test]
    fn literals_round_trip_through_rhai_syntax() {
        assert_eq!(
            rhai_literal(&json!({"a": [1, "x\"y"], "b": null})),
            "#{ \"a\": [1, \"x\\\"y\"], \"b\": () }"
        );
    }
}
