//! The recipe API: every host function a script may call, with its
//! parameters, what it returns, the errors it raises and an example.
//!
//! One table ([`HOST_FUNCTIONS`]) serves three readers: `webagent recipe
//! api` prints it, a call with the wrong arguments is answered with the
//! signatures it lists, and `recipe check` knows from it which names the
//! host defines. A test compares it with the functions the engine really
//! registers (names and parameter counts), so the reference cannot drift
//! from the engine.

use serde_json::{json, Value};

/// One host function, at one parameter count (an overload is a second
/// entry of the same name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostFunction {
    /// The name a script calls.
    pub name: &'static str,
    /// The parameters' names, in order.
    pub params: &'static [&'static str],
    /// What the call returns.
    pub returns: &'static str,
    /// What it does, in one line.
    pub summary: &'static str,
    /// The errors that end the script.
    pub errors: &'static str,
    /// One line of Rhai that calls it.
    pub example: &'static str,
}

impl HostFunction {
    /// `fill(target, text)`.
    pub fn signature(&self) -> String {
        format!("{}({})", self.name, self.params.join(", "))
    }
}

const RESULT: &str = "the action's result map (`ok`, `data`)";
const EXPECT_ERRORS: &str =
    "assertion failed: the call, what it expected and what the element shows, or that no locator names it";
const PAGE_ERRORS: &str = "no element shows the text; the action failed (its reason and message)";

/// Every host function, grouped as the reference prints them.
pub const HOST_FUNCTIONS: &[HostFunction] = &[
    HostFunction {
        name: "navigate",
        params: &["url"],
        returns: RESULT,
        summary: "Opens a URL; a path (`/orders`) opens on the run's origin.",
        errors: "the page did not load; a path with no origin to open it on",
        example: "navigate(\"/orders\");",
    },
    HostFunction {
        name: "click",
        params: &["target"],
        returns: RESULT,
        summary: "Clicks an element: an index, a CSS selector, visible text or a list of locators.",
        errors: PAGE_ERRORS,
        example: "click(\"Sign in\");",
    },
    HostFunction {
        name: "fill",
        params: &["target", "text"],
        returns: RESULT,
        summary: "Clears a field and types text (or a number) into it; form fields win over labels.",
        errors: PAGE_ERRORS,
        example: "fill(\"Email\", \"admin@acme.test\");",
    },
    HostFunction {
        name: "select",
        params: &["target", "option"],
        returns: RESULT,
        summary: "Chooses the option with this text in a <select>.",
        errors: PAGE_ERRORS,
        example: "select(\"Status\", \"Shipped\");",
    },
    HostFunction {
        name: "press_keys",
        params: &["keys"],
        returns: RESULT,
        summary: "Presses keys on the focused element (`Enter`, `Control+A`).",
        errors: "the keys are not known; the action failed",
        example: "press_keys(\"Enter\");",
    },
    HostFunction {
        name: "wait_for",
        params: &["text_or_selector"],
        returns: RESULT,
        summary: "Waits up to 10 s for visible text or a CSS selector.",
        errors: "timeout: it did not appear in time",
        example: "wait_for(\"Orders\");",
    },
    HostFunction {
        name: "wait_for",
        params: &["text_or_selector", "timeout_ms"],
        returns: RESULT,
        summary: "Waits up to `timeout_ms` for visible text or a CSS selector.",
        errors: "timeout: it did not appear in time",
        example: "wait_for(\"#orders\", 5000);",
    },
    HostFunction {
        name: "page",
        params: &[],
        returns: "a map: `url`, `title`, `text`, `elements` (a list of maps: `index`, `tag`, `text`, `attributes`)",
        summary: "Observes the page as the model would see it.",
        errors: "the page could not be read",
        example: "let count = page().elements.len();",
    },
    HostFunction {
        name: "url",
        params: &[],
        returns: "a string",
        summary: "The page's URL.",
        errors: "the page could not be read",
        example: "assert(url().ends_with(\"/dashboard\"), \"signed in\");",
    },
    HostFunction {
        name: "title",
        params: &[],
        returns: "a string",
        summary: "The page's title.",
        errors: "the page could not be read",
        example: "log(title());",
    },
    HostFunction {
        name: "text",
        params: &[],
        returns: "a string",
        summary: "The page's visible text.",
        errors: "the page could not be read",
        example: "assert(text().contains(\"Welcome\"), \"the welcome shows\");",
    },
    HostFunction {
        name: "act",
        params: &["name", "params"],
        returns: "the result map (`ok`, `reason`, `message`, `data`); a failure does not end the script",
        summary: "Runs any action, built-in or custom, by name.",
        errors: "none of its own: read `ok` in the result",
        example: "let r = act(\"click\", #{ selector: \"#maybe\" });",
    },
    HostFunction {
        name: "run_action",
        params: &["name", "params"],
        returns: RESULT,
        summary: "Runs any action, built-in or custom, by name; a failure ends the script.",
        errors: "NAME failed (reason): message",
        example: "run_action(\"sign_in\", #{ email: \"admin@acme.test\", password: \"demo\" });",
    },
    HostFunction {
        name: "url_matches",
        params: &["url", "pattern"],
        returns: "true or false",
        summary: "Whether a URL's path fits a pattern; `*` stands for one path segment or part of one.",
        errors: "none",
        example: "if url_matches(url(), \"/orders/*\") { log(\"an order\"); }",
    },
    HostFunction {
        name: "assert",
        params: &["condition", "message"],
        returns: "nothing",
        summary: "Ends the script with `assertion failed: message` unless the condition holds.",
        errors: "assertion failed: MESSAGE",
        example: "assert(text().contains(\"Order created\"), \"the order was created\");",
    },
    HostFunction {
        name: "expect_visible",
        params: &["target"],
        returns: "nothing",
        summary: "Asserts the element is there and visible (waits up to 3 s for it).",
        errors: EXPECT_ERRORS,
        example: "expect_visible([\"id:welcome\", \"text:Welcome back\"]);",
    },
    HostFunction {
        name: "expect_text",
        params: &["target", "text"],
        returns: "nothing",
        summary: "Asserts the element's visible text is `text` (spacing collapsed).",
        errors: EXPECT_ERRORS,
        example: "expect_text([\"id:status\"], \"Order created\");",
    },
    HostFunction {
        name: "expect_text_contains",
        params: &["target", "text"],
        returns: "nothing",
        summary: "Asserts the element's visible text contains `text`.",
        errors: EXPECT_ERRORS,
        example: "expect_text_contains([\"css:.toast\"], \"created\");",
    },
    HostFunction {
        name: "expect_value",
        params: &["target", "value"],
        returns: "nothing",
        summary: "Asserts a field's value (a select's: its chosen option's value).",
        errors: EXPECT_ERRORS,
        example: "expect_value([\"label:Email\"], \"admin@acme.test\");",
    },
    HostFunction {
        name: "expect_checked",
        params: &["target", "checked"],
        returns: "nothing",
        summary: "Asserts a checkbox or radio is checked (`true`) or not (`false`).",
        errors: EXPECT_ERRORS,
        example: "expect_checked([\"label:Remember me\"], true);",
    },
    HostFunction {
        name: "expect_count",
        params: &["target", "count"],
        returns: "nothing",
        summary: "Asserts the target's first locator names `count` elements (the visible ones when any is).",
        errors: "assertion failed: the call, the count expected and the count found",
        example: "expect_count(\"css:#orders tbody tr\", 3);",
    },
    HostFunction {
        name: "expect_url",
        params: &["pattern"],
        returns: "nothing",
        summary: "Asserts the page's path fits a pattern (`/orders/*`, `/orders/:id`; one with a scheme matches the whole URL).",
        errors: "assertion failed: the pattern and the URL the page is on",
        example: "expect_url(\"/orders/*\");",
    },
    HostFunction {
        name: "breakpoint",
        params: &[],
        returns: "nothing",
        summary: "Stops here when a debugger is attached (`recipe run --debug=cli`); does nothing otherwise.",
        errors: "none",
        example: "breakpoint();",
    },
    HostFunction {
        name: "ask_user",
        params: &["question"],
        returns: "the person's answer, a string",
        summary: "Asks the person running the recipe (refused headless without a terminal).",
        errors: "no one can answer",
        example: "let code = ask_user(\"The code from the text message?\");",
    },
    HostFunction {
        name: "log",
        params: &["message"],
        returns: "nothing",
        summary: "Writes a line to the run's log (the workbench's log pane, the headless step log).",
        errors: "none",
        example: "log(`signed in as ${params.email}`);",
    },
    HostFunction {
        name: "agent",
        params: &["goal"],
        returns: "the sub-run's outcome map",
        summary: "Hands a sub-goal to the LLM agent (needs a configured model).",
        errors: "no model is configured; the agent gave up",
        example: "agent(\"open the newest order\");",
    },
    HostFunction {
        name: "sleep",
        params: &["seconds"],
        returns: "nothing",
        summary: "Waits; Ctrl-C and the time limit still end it.",
        errors: "time limit: longer than one action may take",
        example: "sleep(0.5);",
    },
    HostFunction {
        name: "start_at",
        params: &["path"],
        returns: "nothing",
        summary: "Opens a path on the run's origin unless the page is already there (recorded recipes).",
        errors: "the page did not load",
        example: "start_at(\"/orders\");",
    },
    HostFunction {
        name: "step",
        params: &["number", "goal"],
        returns: "nothing",
        summary: "Marks where recorded step `number` begins, with the goal it was recorded with.",
        errors: "none",
        example: "step(1, \"sign in\");",
    },
    HostFunction {
        name: "step",
        params: &["number", "goal", "page"],
        returns: "nothing",
        summary: "As `step(number, goal)`, and checks the page is the one it ran on (a path or a route).",
        errors: "the page is not the one the step was recorded on",
        example: "step(2, \"open the orders\", \"/orders\");",
    },
    HostFunction {
        name: "action",
        params: &["name", "spec"],
        returns: "nothing",
        summary: "Declares a custom action (top level only): `description`, `params`, `risk`; `fn NAME(params)` runs it.",
        errors: "the spec is wrong; called while a script runs",
        example: "action(\"sign_in\", #{ description: \"Signs in\", params: #{ email: #{ type: \"string\" } }, risk: \"commit\" });",
    },
    HostFunction {
        name: "recipe",
        params: &["name", "description"],
        returns: "nothing",
        summary: "Declares a recipe (top level only); `fn NAME()` runs it.",
        errors: "no function of that name; called while a script runs",
        example: "recipe(\"smoke\", \"Signs in and opens the orders\");",
    },
    HostFunction {
        name: "recipe",
        params: &["name", "description", "params"],
        returns: "nothing",
        summary: "Declares a recipe with parameters (`type`, `default`, `secret`); `fn NAME(params)` runs it.",
        errors: "a parameter's type is not known; no function of that name",
        example: "recipe(\"new_order\", \"Creates an order\", #{ customer: #{ type: \"string\" } });",
    },
    HostFunction {
        name: "secret_sites",
        params: &["name", "sites"],
        returns: "nothing",
        summary: "Limits the sites a secret may be typed into (top level only).",
        errors: "called while a script runs",
        example: "secret_sites(\"acme_password\", [\"127.0.0.1\"]);",
    },
];

/// The entries named `name`, fewest parameters first.
pub fn host_functions(name: &str) -> Vec<&'static HostFunction> {
    let mut found: Vec<_> = HOST_FUNCTIONS.iter().filter(|f| f.name == name).collect();
    found.sort_by_key(|f| f.params.len());
    found
}

/// Every host function's name, once each.
pub fn host_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = HOST_FUNCTIONS.iter().map(|f| f.name).collect();
    names.dedup();
    names
}

/// What Rhai's "Function not found" means, in words: the signatures the
/// host function accepts, or a likely spelling, and the arguments given.
/// `call` is Rhai's own text, `fill (&str | ImmutableString | String)`.
pub(crate) fn not_found_message(call: &str) -> String {
    let (name, args) = match call.split_once(" (") {
        Some((name, rest)) => (name.trim(), rest.strip_suffix(')').unwrap_or(rest)),
        None => (call.trim(), ""),
    };
    // A method call (`x.fill(…)`) is named with its object's type first.
    let name = name.rsplit('.').next().unwrap_or(name);
    let args: Vec<&str> = if args.trim().is_empty() {
        Vec::new()
    } else {
        args.split(", ").collect()
    };
    let given = match args.len() {
        0 => "no arguments".to_string(),
        n => format!(
            "{n} argument{} ({})",
            if n == 1 { "" } else { "s" },
            args.iter()
                .map(|a| type_words(a))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let accepted = host_functions(name);
    if !accepted.is_empty() {
        let signatures: Vec<String> = accepted.iter().map(|f| f.signature()).collect();
        return format!(
            "{name} takes {}; it was called with {given}",
            signatures.join(" or ")
        );
    }
    if !name.starts_with(|c: char| c.is_alphabetic() || c == '_') {
        return format!("the operator {name} does not work on {given}");
    }
    let hint = crate::spelling::closest(name, &host_names())
        .map(|near| format!("; did you mean {near}?"))
        .unwrap_or_default();
    format!("no function {name} takes {given}{hint}")
}

/// A Rhai type name as a person says it.
fn type_words(rhai_type: &str) -> &'static str {
    match rhai_type.trim() {
        t if t.contains("String") || t == "&str" => "a string",
        "i64" | "i32" | "u64" | "usize" | "f64" | "f32" | "INT" | "FLOAT" => "a number",
        "bool" => "true or false",
        "char" => "a character",
        "array" | "Array" => "a list",
        "map" | "Map" => "a map",
        "()" => "nothing",
        "Fn" | "FnPtr" => "a function",
        _ => "a value",
    }
}

/// The reference as text, one block per function.
pub fn reference_text() -> String {
    let mut out = String::new();
    for f in HOST_FUNCTIONS {
        out.push_str(&format!(
            "{}\n    {}\n    returns: {}\n    errors: {}\n    example: {}\n\n",
            f.signature(),
            f.summary,
            f.returns,
            f.errors,
            f.example
        ));
    }
    out.push_str(
        "A target is an element index, a CSS selector (`#id`, `.class`, `[attr]`, `css:…`), \
         visible text, or a list of locators ([\"id:login\", \"role:button:Sign in\"]). \
         An assertion's target is a list of locators or one string: a locator (`id:status`), a CSS selector or visible text.\n",
    );
    out
}

/// The reference as JSON, for tools.
pub fn reference_json() -> Value {
    Value::Array(
        HOST_FUNCTIONS
            .iter()
            .map(|f| {
                json!({
                    "name": f.name,
                    "params": f.params,
                    "signature": f.signature(),
                    "summary": f.summary,
                    "returns": f.returns,
                    "errors": f.errors,
                    "example": f.example,
                })
            })
            .collect(),
    )
}

/// The reference as a Markdown table, the form docs/recipes.md embeds.
pub fn reference_markdown() -> String {
    let mut out = String::from("| function | returns | errors | example |\n|---|---|---|---|\n");
    for f in HOST_FUNCTIONS {
        out.push_str(&format!(
            "| `{}`: {} | {} | {} | `{}` |\n",
            f.signature(),
            f.summary.replace('|', "\\|"),
            f.returns.replace('|', "\\|"),
            f.errors.replace('|', "\\|"),
            f.example.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::Limits;

    /// `(name, parameter count)` of every function the engine registers
    /// itself (the standard packages left out).
    fn registered() -> Vec<(String, usize)> {
        let engine = crate::script::engine::build_engine(&Limits::default(), None);
        let mut found: Vec<(String, usize)> = engine
            .gen_fn_signatures(false)
            .iter()
            .filter_map(|sig| {
                let (name, rest) = sig.split_once('(')?;
                let params = rest.split(')').next().unwrap_or("");
                let count = if params.trim().is_empty() {
                    0
                } else {
                    params.split(',').count()
                };
                Some((name.trim().to_string(), count))
            })
            .collect();
        found.sort();
        found.dedup();
        found
    }

    #[test]
    fn the_reference_and_the_engine_name_the_same_functions_and_parameter_counts() {
        let mut reference: Vec<(String, usize)> = HOST_FUNCTIONS
            .iter()
            .map(|f| (f.name.to_string(), f.params.len()))
            .collect();
        reference.sort();
        let engine = registered();
        let missing: Vec<_> = engine.iter().filter(|f| !reference.contains(f)).collect();
        let extra: Vec<_> = reference.iter().filter(|f| !engine.contains(f)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "registered with no entry in HOST_FUNCTIONS: {missing:?}; \
             in HOST_FUNCTIONS but not registered: {extra:?}"
        );
    }

    #[test]
    fn the_guide_embeds_the_reference_as_generated() {
        let page = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/recipes.md"),
        )
        .expect("docs/recipes.md");
        let embedded = page
            .split("<!-- recipe api: begin -->\n")
            .nth(1)
            .and_then(|rest| rest.split("<!-- recipe api: end -->").next())
            .expect("docs/recipes.md has the recipe api markers");
        assert_eq!(
            embedded,
            reference_markdown(),
            "docs/recipes.md's table is stale: paste `webagent recipe api --markdown` between the markers"
        );
    }

    #[test]
    fn a_wrong_call_names_the_signatures_the_function_takes() {
        assert_eq!(
            not_found_message("fill (&str | ImmutableString | String)"),
            "fill takes fill(target, text); it was called with 1 argument (a string)"
        );
        assert_eq!(
            not_found_message("wait_for (i64, i64, i64)"),
            "wait_for takes wait_for(text_or_selector) or wait_for(text_or_selector, timeout_ms); \
             it was called with 3 arguments (a number, a number, a number)"
        );
        assert_eq!(
            not_found_message("clik (&str | ImmutableString | String)"),
            "no function clik takes 1 argument (a string); did you mean click?"
        );
        assert_eq!(
            not_found_message("page (map)"),
            "page takes page(); it was called with 1 argument (a map)"
        );
    }
}
