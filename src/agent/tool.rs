//! The forced tool of each step, `agent_step`: the reflection fields and
//! the action union.
//!
//! The tool and the system prompt are the fixed part of every request, so
//! they are kept small and say each thing once: the schema carries only
//! structure (what a local server's grammar needs), and the tool's
//! description lists every action once, one line each, with its parameters
//! in a compact signature (`?` optional, `=` default, a range, `a|b` for
//! exactly one of two) and a few words on what it does.

use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::actions::{ActionSpec, Catalog};
use crate::llm::FunctionTool;

use super::defaults::AGENT_TOOL_NAME;

/// The most characters the fixed part of a request (the step tool as sent
/// and the system prompt) may take; `bench prompt` prints the figure.
pub const FIXED_PART_LIMIT: usize = 10_000;

/// A few words per built-in action, where its name and parameters do not
/// already say it all (empty: the signature alone); custom actions use the
/// first sentence of their own description.
const SUMMARIES: &[(&str, &str)] = &[
    ("navigate", "URL or path on this site"),
    ("back", ""),
    ("forward", ""),
    ("reload", ""),
    ("goto_page", "a sitemap page"),
    ("wait", ""),
    ("wait_for", ""),
    ("click", ""),
    ("hover", ""),
    ("input_text", "type; a focusable non-field gets key presses"),
    ("select_option", "by value or visible text"),
    (
        "select_text",
        "mouse-select target's text, or passage text (start…end)",
    ),
    ("submit_form", "the form holding target"),
    ("clear_input", ""),
    ("set_text", "replace a contenteditable's text"),
    ("press_keys", "to the focused element: Enter, Control+A"),
    ("scroll", "by screen heights"),
    ("scroll_to", ""),
    ("drag_and_drop", ""),
    ("upload_file", "into a file input"),
    ("highlight", "for the person"),
    ("border", ""),
    ("spotlight", "dim all but target"),
    ("inject", "a note beside target"),
    ("clear_overlays", ""),
    ("show_subtitle", "caption"),
    ("extract", "structured data"),
    ("read_page", "page text, in parts"),
    ("screenshot", "PNG; shown next step if you see images"),
    ("ask_user", ""),
    ("hand_over", ""),
    ("think", ""),
    ("done", "the answer, or why not"),
    ("read_file", "a downloaded file"),
    ("switch_tab", ""),
    ("close_tab", ""),
    ("execute_javascript", "only if enabled"),
];

/// The forced tool for a catalog: the reflection fields and the action
/// union, all required.
pub fn agent_tool(catalog: &Catalog) -> FunctionTool {
    agent_tool_with(catalog, super::defaults::default_max_actions())
}

/// [`agent_tool`] for a run that takes lists of up to `max_actions`
/// actions per step: `action` is one action or a list of them (list items
/// are only said to be objects, so the schema stays small; each is
/// validated like a single action).
pub fn agent_tool_with(catalog: &Catalog, max_actions: usize) -> FunctionTool {
    let mut action = catalog.action_schema();
    if max_actions > 1 {
        if let Some(branches) = action.get_mut("anyOf").and_then(Value::as_array_mut) {
            // How many, the system prompt says.
            branches.push(json!({"type": "array", "items": {"type": "object"}}));
        }
    }
    // What a target is, the system prompt says once.
    let mut description = String::from("{\"name\": {params}}; ? optional, = default:\n");
    for spec in catalog.specs().iter().filter(|s| s.for_the_model()) {
        let _ = write!(description, "{}({})", spec.name, signature(&spec.schema));
        let summary = summary(spec);
        if !summary.is_empty() {
            let _ = write!(description, ": {summary}");
        }
        description.push('\n');
    }
    FunctionTool {
        name: AGENT_TOOL_NAME.to_string(),
        description: description.trim_end().to_string(),
        parameters: json!({
            "type": "object",
            "properties": {
                "evaluation_previous_goal": {"type": "string"},
                "memory": {"type": "string"},
                "next_goal": {"type": "string"},
                "action": action,
            },
            "required": ["evaluation_previous_goal", "memory", "next_goal", "action"],
        }),
    }
}

fn summary(spec: &ActionSpec) -> String {
    if let Some((_, text)) = SUMMARIES.iter().find(|(name, _)| *name == spec.name) {
        return (*text).to_string();
    }
    let description = spec.description.trim();
    let first = description
        .split_inclusive(['.', '!', '?'])
        .next()
        .unwrap_or(description)
        .trim_end_matches('.');
    super::prompt::clip(first, 80)
}

/// `target, text, clear=true`: the parameters of an action schema.
fn signature(schema: &Value) -> String {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return String::new();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let (groups, optional_groups) = one_of_groups(schema);
    let mut parts: Vec<String> = Vec::new();
    let mut done: Vec<&str> = Vec::new();
    for (name, property) in properties {
        if done.contains(&name.as_str()) {
            continue;
        }
        if let Some(group) = groups.iter().find(|g| g.contains(&name.as_str())) {
            done.extend(group.iter().copied());
            let optional = if optional_groups.iter().any(|g| g == group) {
                "?"
            } else {
                ""
            };
            let joined =
                if group.len() == 2 && group.contains(&"index") && group.contains(&"selector") {
                    "target".to_string()
                } else {
                    group.join("|")
                };
            parts.push(format!("{joined}{optional}"));
            continue;
        }
        let mut part = name.clone();
        let is_target_object = property
            .get("properties")
            .is_some_and(|p| p.get("index").is_some() && p.get("selector").is_some());
        if is_target_object {
            part.push_str(":target");
        }
        if let Some(values) = property.get("enum").and_then(Value::as_array) {
            let values: Vec<String> = values
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect();
            let _ = write!(part, ":{}", values.join("|"));
        }
        if let (Some(min), Some(max)) = (
            property
                .get("minimum")
                .or_else(|| property.get("exclusiveMinimum")),
            property.get("maximum"),
        ) {
            if property.get("minimum").is_some() && name != "index" {
                let _ = write!(part, " {min}-{max}");
            } else {
                let _ = write!(part, " ≤{max}");
            }
        }
        match property.get("default") {
            Some(default) => {
                let shown = default
                    .as_str()
                    .map_or_else(|| default.to_string(), str::to_owned);
                let _ = write!(part, "={shown}");
            }
            None if !required.contains(&name.as_str()) => part.push('?'),
            None => {}
        }
        parts.push(part);
    }
    parts.join(", ")
}

/// The "exactly one of" groups of a schema (`oneOf` branches that only
/// name a required field, also under `allOf`), and those of them that may
/// also be left out entirely.
fn one_of_groups(schema: &Value) -> (Vec<Vec<&str>>, Vec<Vec<&str>>) {
    let mut lists: Vec<&Value> = Vec::new();
    if let Some(one_of) = schema.get("oneOf") {
        lists.push(one_of);
    }
    if let Some(all_of) = schema.get("allOf").and_then(Value::as_array) {
        lists.extend(all_of.iter().filter_map(|part| part.get("oneOf")));
    }
    let mut groups = Vec::new();
    let mut optional = Vec::new();
    for list in lists {
        let Some(branches) = list.as_array() else {
            continue;
        };
        let names: Vec<&str> = branches
            .iter()
            .filter_map(|b| b.get("required")?.as_array()?.first()?.as_str())
            .collect();
        if names.len() < 2 {
            continue;
        }
        if branches.iter().any(|b| b.get("required").is_none()) {
            optional.push(names.clone());
        }
        groups.push(names);
    }
    (groups, optional)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::{grammar_subset_problems, Risk, SpecOrigin};

    #[test]
    fn the_step_tool_stays_inside_the_grammar_subset_local_servers_accept() {
        let mut catalog = Catalog::builtin();
        // A script's action, with the branches converters reject.
        catalog
            .register(ActionSpec {
                name: "open_chat_panel".into(),
                description: "Open the support chat. Then type.".into(),
                risk: Risk::Interact,
                schema: json!({
                    "type": "object",
                    "properties": {"message": {"type": "string", "minLength": 1}, "room": {"type": "integer"}},
                    "oneOf": [{"required": ["message"]}, {"required": ["room"]}]
                }),
                positional: vec!["message".into()],
                origin: SpecOrigin::Custom { source: None },
            })
            .expect("a valid custom action");
        let tool = agent_tool(&catalog);
        let problems = grammar_subset_problems(&tool.parameters);
        assert!(problems.is_empty(), "{problems:#?}");
        let branches = tool.parameters["properties"]["action"]["anyOf"]
            .as_array()
            .expect("one branch per action, and one for a list of them");
        let offered = catalog.specs().iter().filter(|s| s.for_the_model()).count();
        assert_eq!(branches.len(), offered + 1);
        assert_eq!(branches[branches.len() - 1]["type"], "array");
        // "Exactly one of index or selector" stays in webagent's own check.
        let click = &branches[0]["properties"]["click"];
        assert!(click.get("oneOf").is_none() && click.get("required").is_none());
        assert!(catalog.parse(&json!({"click": {}})).is_err());
        assert!(
            tool.description
                .contains("open_chat_panel(message|room): Open the support chat\n")
                || tool
                    .description
                    .ends_with("open_chat_panel(message|room): Open the support chat")
        );
    }

    #[test]
    fn the_fixed_part_of_a_request_stays_at_ten_thousand_characters_or_fewer() {
        // What every request carries whatever the page, measured as `bench
        // prompt` does: the tool serialized as it is sent, and the system
        // prompt, with the whole built-in catalog and lists of actions.
        let tool = agent_tool(&Catalog::builtin()).to_json().to_string();
        let system = crate::agent::system_prompt(&crate::secrets::Secrets::new());
        let (tool, system) = (tool.chars().count(), system.chars().count());
        assert!(
            tool + system <= FIXED_PART_LIMIT,
            "tool {tool} + system {system} = {} characters, over {FIXED_PART_LIMIT}",
            tool + system
        );
    }

    #[test]
    fn each_action_is_listed_once_with_a_compact_signature() {
        let tool = agent_tool(&Catalog::builtin());
        let lines: Vec<&str> = tool.description.lines().collect();
        for expected in [
            "click(target)",
            "input_text(target, text, clear=true): type; a focusable non-field gets key presses",
            "wait(seconds 0.1-10)",
            "wait_for(selector|text, timeout_ms 100-60000=5000)",
            "scroll(target?, direction:up|down|left|right, pages ≤50=1): by screen heights",
            "drag_and_drop(from:target, to:target)",
            "select_option(target, value|text): by value or visible text",
            "select_text(target?, text?): mouse-select target's text, or passage text (start…end)",
        ] {
            assert!(
                lines.contains(&expected),
                "{expected}\n{}",
                tool.description
            );
        }
        for spec in Catalog::builtin().specs() {
            let prefix = format!("{}(", spec.name);
            // Once, or never for an action that is the person's.
            assert_eq!(
                lines.iter().filter(|l| l.starts_with(&prefix)).count(),
                usize::from(spec.for_the_model()),
                "{}",
                spec.name
            );
        }
    }
}
