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

use super::AGENT_TOOL_NAME;

/// A few words per built-in action; custom actions use the first sentence
/// of their own description.
const SUMMARIES: &[(&str, &str)] = &[
    ("navigate", "open a URL or a path on this site"),
    ("back", "previous page"),
    ("forward", "next page"),
    ("reload", "reload the page"),
    ("goto_page", "open a sitemap page by name"),
    ("wait", "pause"),
    ("wait_for", "wait until a selector or text shows"),
    ("click", "mouse click"),
    ("hover", "move the mouse over"),
    ("input_text", "type into a field"),
    ("select_option", "choose an option by value or visible text"),
    (
        "select_text",
        "mouse-select the target's text, or the passage text (start…end)",
    ),
    ("submit_form", "submit the form holding the element"),
    ("clear_input", "empty a field"),
    ("set_text", "replace a contenteditable's text"),
    (
        "press_keys",
        "keys to the focused element, e.g. Enter, Control+A",
    ),
    ("scroll", "page or target, by screen heights"),
    ("scroll_to", "scroll the element into view"),
    ("drag_and_drop", "drag from onto to"),
    ("upload_file", "put a local file into a file input"),
    ("highlight", "colour an element for the person"),
    ("border", "outline an element for the person"),
    ("spotlight", "dim all but the element"),
    ("inject", "show a note next to the element"),
    ("clear_overlays", "remove highlights and notes"),
    ("show_subtitle", "caption at the bottom"),
    ("extract", "structured data by instruction"),
    ("read_page", "the whole page's text"),
    (
        "screenshot",
        "save a PNG; you see it next step if you read images",
    ),
    ("ask_user", "ask the person; waits for the answer"),
    ("think", "plan without touching the page"),
    (
        "done",
        "finish: the answer or why not, and whether it worked",
    ),
    ("read_file", "read a downloaded file"),
    ("switch_tab", "drive the tab with this number"),
    ("close_tab", "close a tab (this one by default)"),
    ("execute_javascript", "run JavaScript (only if enabled)"),
];

/// The forced tool for a catalog: the reflection fields and the action
/// union, all required.
pub fn agent_tool(catalog: &Catalog) -> FunctionTool {
    agent_tool_with(catalog, super::default_max_actions())
}

/// [`agent_tool`] for a run that takes lists of up to `max_actions`
/// actions per step: `action` is one action or a list of them (list items
/// are only said to be objects, so the schema stays small; each is
/// validated like a single action).
pub fn agent_tool_with(catalog: &Catalog, max_actions: usize) -> FunctionTool {
    let mut action = catalog.action_schema();
    if max_actions > 1 {
        if let Some(branches) = action.get_mut("anyOf").and_then(Value::as_array_mut) {
            branches.push(json!({
                "type": "array",
                "items": {"type": "object"},
                "description": format!("at most {max_actions}"),
            }));
        }
    }
    let mut description = String::from(
        "Actions as {\"name\": {parameters}}; target = index or selector, ? optional, = default:\n",
    );
    for spec in catalog.specs() {
        let _ = writeln!(
            description,
            "{}({}): {}",
            spec.name,
            signature(&spec.schema),
            summary(spec)
        );
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
        assert_eq!(branches.len(), catalog.names().len() + 1);
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

    /// The actions added after the prompt-size goal was set (tabs and
    /// downloads); "at equal information" leaves them out.
    const ADDED_SINCE: [&str; 3] = ["read_file", "switch_tab", "close_tab"];

    fn fixed_part(max_actions: usize, leave_out: &[&str]) -> (usize, usize) {
        let mut tool = agent_tool_with(&Catalog::builtin(), max_actions);
        tool.description = tool
            .description
            .lines()
            .filter(|l| !leave_out.iter().any(|n| l.starts_with(&format!("{n}("))))
            .collect::<Vec<_>>()
            .join("\n");
        if let Some(branches) = tool.parameters["properties"]["action"]["anyOf"].as_array_mut() {
            branches.retain(|b| !leave_out.iter().any(|n| b["properties"].get(*n).is_some()));
        }
        let system = crate::agent::prompt::system_prompt_with(&[], max_actions);
        (
            tool.to_json().to_string().chars().count(),
            system.chars().count(),
        )
    }

    #[test]
    fn the_fixed_part_of_a_request_stays_under_ten_thousand_characters() {
        // At equal information (the actions and one-action steps the goal
        // was set for) the fixed part keeps under 10,000 characters.
        let (tool, system) = fixed_part(1, &ADDED_SINCE);
        assert!(
            tool + system <= 10_000,
            "tool {tool} + system {system} characters"
        );
        // Everything a request carries now: the new actions and lists.
        let (tool, system) = fixed_part(crate::agent::default_max_actions(), &[]);
        assert!(
            tool + system <= 11_000,
            "tool {tool} + system {system} characters"
        );
    }

    #[test]
    fn each_action_is_listed_once_with_a_compact_signature() {
        let tool = agent_tool(&Catalog::builtin());
        let lines: Vec<&str> = tool.description.lines().collect();
        for expected in [
            "click(target): mouse click",
            "input_text(target, text, clear=true): type into a field",
            "wait(seconds 0.1-10): pause",
            "wait_for(selector|text, timeout_ms 100-60000=5000): wait until a selector or text shows",
            "scroll(target?, direction:up|down|left|right, pages ≤50=1): page or target, by screen heights",
            "drag_and_drop(from:target, to:target): drag from onto to",
            "select_option(target, value|text): choose an option by value or visible text",
        ] {
            assert!(lines.contains(&expected), "{expected}\n{}", tool.description);
        }
        for spec in Catalog::builtin().specs() {
            let prefix = format!("{}(", spec.name);
            assert_eq!(
                lines.iter().filter(|l| l.starts_with(&prefix)).count(),
                1,
                "{}",
                spec.name
            );
        }
    }
}
