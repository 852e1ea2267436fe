//! The built-in actions: their specs (descriptions written for the model,
//! parameter schemas, risk levels, command-line argument order) and the few
//! checks that do not fit the schema subset.

use serde_json::{json, Map, Value};

use super::address::{first_segment, host_like};
use super::error::ActionError;
use super::risk_level::Risk;
use super::spec::{ActionSpec, SpecOrigin};

/// Checks that do not fit the schema subset.
pub(crate) fn check_builtin_extras(name: &str, params: &Value) -> Result<(), ActionError> {
    if name == "navigate" {
        if let Some(url) = params.get("url").and_then(Value::as_str) {
            check_navigate_url(url)?;
        }
    }
    if name == "select_text"
        && ["index", "selector", "text"]
            .iter()
            .all(|key| params.get(key).is_none())
    {
        return Err(ActionError::invalid(
            name,
            "give a target (index or selector), the text to select, or both",
        ));
    }
    if matches!(name, "highlight" | "border") {
        if let Some(color) = params.get("color").and_then(Value::as_str) {
            let plain = color.chars().all(|c| {
                c.is_ascii_alphanumeric()
                    || matches!(c, '#' | '(' | ')' | ',' | '.' | '%' | ' ' | '-')
            });
            if !plain || color.trim().is_empty() {
                return Err(ActionError::invalid(
                    format!("{name}.color"),
                    format!("`{color}` is not a CSS colour; use a name (`orange`), `#ffcc00` or `rgb(255, 204, 0)`"),
                ));
            }
        }
    }
    Ok(())
}

/// A URL without a scheme (`example.com/x`, `localhost:8080`) would be
/// resolved as a path on the current site, which is never what was meant.
fn check_navigate_url(url: &str) -> Result<(), ActionError> {
    let url = url.trim();
    let field = "navigate.url";
    if url.chars().any(char::is_whitespace) {
        return Err(ActionError::invalid(
            field,
            format!("`{url}` contains whitespace; percent-encode it (%20)"),
        ));
    }
    match url::Url::parse(url) {
        Ok(parsed) => {
            let scheme_is_host = parsed.cannot_be_a_base()
                && !matches!(
                    parsed.scheme(),
                    "about" | "data" | "javascript" | "blob" | "mailto" | "tel"
                );
            if scheme_is_host {
                return Err(ActionError::invalid(
                    field,
                    format!("`{url}` has no scheme; write http://{url} (or https://)"),
                ));
            }
        }
        Err(_) if !url.starts_with(['/', '.', '?', '#']) && host_like(first_segment(url)) => {
            return Err(ActionError::invalid(
                field,
                format!("`{url}` looks like a host without a scheme; write https://{url}, or /{url} for a path"),
            ));
        }
        Err(_) => {}
    }
    Ok(())
}

/// How a spec's parameters are shaped around its target.
enum Targeting {
    /// No element.
    None,
    /// `index` or `selector`, exactly one.
    Required,
    /// `index` or `selector`, at most one.
    Optional,
}

fn target_properties() -> Map<String, Value> {
    let mut properties = Map::new();
    properties.insert(
        "index".to_string(),
        json!({
            "type": "integer",
            "minimum": 0,
            "maximum": 1_000_000,
            "description": "Number of the element in the latest element listing, e.g. 12 for [12]."
        }),
    );
    properties.insert(
        "selector".to_string(),
        json!({
            "type": "string",
            "format": "selector",
            "minLength": 1,
            "maxLength": 500,
            "description": "CSS selector, only when the element has no index: tag, #id, .class, [attr], [attr=value], :nth-child(); no *, :has() or :not(). `a >>> b`: b inside iframe or shadow host a."
        }),
    );
    properties
}

fn target_object(description: &str) -> Value {
    json!({
        "type": "object",
        "description": description,
        "properties": target_properties(),
        "additionalProperties": false,
        "oneOf": [{"required": ["index"]}, {"required": ["selector"]}]
    })
}

fn spec(
    name: &str,
    risk: Risk,
    description: &str,
    targeting: Targeting,
    properties: Value,
    required: &[&str],
    positional: &[&str],
) -> ActionSpec {
    let mut all = match targeting {
        Targeting::None => Map::new(),
        _ => target_properties(),
    };
    if let Value::Object(own) = properties {
        all.extend(own);
    }
    let mut schema = Map::new();
    schema.insert("type".to_string(), json!("object"));
    schema.insert("properties".to_string(), Value::Object(all));
    if !required.is_empty() {
        schema.insert("required".to_string(), json!(required));
    }
    schema.insert("additionalProperties".to_string(), json!(false));
    match targeting {
        Targeting::None => {}
        Targeting::Required => {
            schema.insert(
                "oneOf".to_string(),
                json!([{"required": ["index"]}, {"required": ["selector"]}]),
            );
        }
        Targeting::Optional => {
            schema.insert(
                "oneOf".to_string(),
                json!([
                    {"required": ["index"]},
                    {"required": ["selector"]},
                    {"properties": {"index": false, "selector": false}}
                ]),
            );
        }
    }
    ActionSpec {
        name: name.to_string(),
        description: description.to_string(),
        risk,
        schema: Value::Object(schema),
        positional: positional.iter().map(|p| p.to_string()).collect(),
        origin: SpecOrigin::Builtin,
    }
}

pub(crate) fn builtin_specs() -> Vec<ActionSpec> {
    use Risk::{Commit, Dangerous, Interact, Read};
    use Targeting::{None as NoTarget, Optional, Required};
    let text = |description: &str| json!({"type": "string", "description": description});
    let nonempty =
        |description: &str| json!({"type": "string", "minLength": 1, "description": description});
    let color = json!({"type": "string", "maxLength": 40, "description": "CSS colour such as orange or #ffcc00; a theme colour when omitted."});
    let label = json!({"type": "string", "maxLength": 80, "description": "Short caption shown next to the element."});
    vec![
        spec(
            "navigate",
            Interact,
            "Open a URL in the current tab and wait for the page to settle. Give an absolute URL (https://…) or a path on the current site (/orders). Leaving the current site counts as a commit and may need approval.",
            NoTarget,
            json!({"url": nonempty("Absolute URL, or a path starting with / on the current origin.")}),
            &["url"],
            &["url"],
        ),
        spec("back", Interact, "Go back one page in the tab's history.", NoTarget, json!({}), &[], &[]),
        spec("forward", Interact, "Go forward one page in the tab's history.", NoTarget, json!({}), &[], &[]),
        spec("reload", Interact, "Reload the current page and wait for it to settle.", NoTarget, json!({}), &[], &[]),
        spec(
            "goto_page",
            Interact,
            "Open a page of this site by name: the sitemap is searched for it (titles, keywords, paths) and the best match is opened. Use it when you know which page you want but not its URL.",
            NoTarget,
            json!({"name": nonempty("What the page is called or is for, e.g. \"billing\" or \"new order\".")}),
            &["name"],
            &["name"],
        ),
        spec(
            "wait",
            Read,
            "Pause for a fixed time. Prefer wait_for, which returns as soon as what you expect is there.",
            NoTarget,
            json!({"seconds": {"type": "number", "minimum": 0.1, "maximum": 10, "description": "How long, from 0.1 to 10 seconds."}}),
            &["seconds"],
            &["seconds"],
        ),
        spec(
            "wait_for",
            Read,
            "Wait until an element matching a selector is visible, or until a text appears on the page. Fails with timeout if it does not happen in time.",
            NoTarget,
            json!({
                "selector": {"type": "string", "format": "selector", "minLength": 1, "maxLength": 500, "description": "Wait for a visible element matching this CSS selector."},
                "text": {"type": "string", "minLength": 1, "description": "Wait for this text to appear in the page."},
                "timeout_ms": {"type": "integer", "minimum": 100, "maximum": 60000, "default": 5000, "description": "Give up after this many milliseconds."}
            }),
            &[],
            &["selector", "timeout_ms"],
        )
        .with_one_of(json!([{"required": ["selector"]}, {"required": ["text"]}])),
        spec(
            "click",
            Interact,
            "Click an element with a real mouse click at its visible centre. Give the element's index from the listing. Clicking a submit button or a link to another site counts as a commit.",
            Required,
            json!({}),
            &[],
            &["target"],
        ),
        spec(
            "hover",
            Interact,
            "Move the mouse over an element, e.g. to open a menu that shows on hover.",
            Required,
            json!({}),
            &[],
            &["target"],
        ),
        spec(
            "input_text",
            Interact,
            "Type text into an input, textarea or other editable field with key presses, as a person would, so the page's own scripts see every change. By default the field is emptied first. Into a widget that is no field (a terminal, a game reading keydown; click it first if it takes no focus) the text goes as one key press per character (a line break is Enter); the result then says it typed keystrokes.",
            Required,
            json!({
                "text": text("The text to type."),
                "clear": {"type": "boolean", "default": true, "description": "Empty the field before typing (default true); false appends."}
            }),
            &["text"],
            &["target", "text"],
        ),
        spec(
            "select_option",
            Interact,
            "Choose an option in a <select> element, by the option's value attribute or by its visible text (give one of the two).",
            Required,
            json!({
                "value": text("The option's value attribute."),
                "text": text("The option's visible text.")
            }),
            &[],
            &["target", "value"],
        )
        .with_extra_one_of(json!([{"required": ["value"]}, {"required": ["text"]}])),
        // Interact, not read: a selection is page state, and the drag runs
        // the page's own mouse and selection handlers (a "quote this"
        // bubble, a copy button that appears).
        spec(
            "select_text",
            Interact,
            "Select text with a real mouse drag, as a person highlights it: the target's whole text, or the passage given as text (its words as the page text shows them) inside the target or, without a target, anywhere on the page. A long passage can be given as its start…its end. The page sees the drag and the selection; the result has the selected text.",
            Optional,
            json!({"text": nonempty("The passage to select, as the page text shows it; start…end for a long one.")}),
            &[],
            &["target", "text"],
        ),
        spec(
            "submit_form",
            Commit,
            "Submit a form: give the form or any element inside it. Submitting sends data to the site, so it is a commit.",
            Required,
            json!({}),
            &[],
            &["target"],
        ),
        spec(
            "clear_input",
            Interact,
            "Empty an input or textarea.",
            Required,
            json!({}),
            &[],
            &["target"],
        ),
        spec(
            "set_text",
            Interact,
            "Replace the whole text of a contenteditable element (rich text editors, editable cells). For ordinary inputs use input_text.",
            Required,
            json!({"text": text("The new text.")}),
            &["text"],
            &["target", "text"],
        ),
        spec(
            "press_keys",
            Interact,
            "Press a key or key combination on the focused element, e.g. Enter, Tab, Escape, ArrowDown, Backspace, Control+A, Shift+Tab, Meta+Enter, F5, or a single character. Pressing Enter in a form field submits the form.",
            NoTarget,
            json!({
                "keys": {"type": "string", "format": "key-combination", "minLength": 1, "description": "One key or a combination joined with +, e.g. Control+A."},
                "repeat": {"type": "integer", "minimum": 1, "maximum": 200, "default": 1, "description": "How many times to press it."}
            }),
            &["keys"],
            &["keys", "repeat"],
        ),
        spec(
            "scroll",
            Read,
            "Scroll the page, or a scrollable element when an index or selector is given, by a number of screen heights (or widths for left and right).",
            Optional,
            json!({
                "direction": {"type": "string", "enum": ["up", "down", "left", "right"], "description": "Which way to scroll."},
                "pages": {"type": "number", "exclusiveMinimum": 0, "maximum": 50, "default": 1, "description": "How far, in viewport heights; 0.5 is half a screen."}
            }),
            &["direction"],
            &["direction", "pages", "target"],
        ),
        spec(
            "scroll_to",
            Read,
            "Scroll until an element is in view.",
            Required,
            json!({}),
            &[],
            &["target"],
        ),
        spec(
            "drag_and_drop",
            Interact,
            "Drag one element with the mouse and drop it onto another. Each of from and to is an object with an index or a selector.",
            NoTarget,
            json!({
                "from": target_object("The element to drag: {\"index\": n} or {\"selector\": \"…\"}."),
                "to": target_object("The element to drop onto: {\"index\": n} or {\"selector\": \"…\"}.")
            }),
            &["from", "to"],
            &["from", "to"],
        ),
        spec(
            "upload_file",
            Commit,
            "Put a local file into a file input (<input type=file>). The file is sent to the site, so it is a commit.",
            Required,
            json!({"path": nonempty("Path of the file on this machine.")}),
            &["path"],
            &["target", "path"],
        ),
        spec(
            "highlight",
            Interact,
            "Give an element a coloured background so the person watching sees it. Purely visual; the page's layout is not changed.",
            Required,
            json!({"color": color.clone(), "label": label.clone()}),
            &[],
            &["target", "color", "label"],
        ),
        spec(
            "border",
            Interact,
            "Draw a border around an element so the person watching sees it. Purely visual.",
            Required,
            json!({"color": color, "label": label}),
            &[],
            &["target", "color", "label"],
        ),
        spec(
            "spotlight",
            Interact,
            "Dim everything except one element to draw the person's attention to it. Purely visual.",
            Required,
            json!({}),
            &[],
            &["target"],
        ),
        spec(
            "inject",
            Interact,
            "Show a note right before or after an element, for the person watching. Purely visual; it does not change form values.",
            Required,
            json!({
                "text": nonempty("The note."),
                "position": {"type": "string", "enum": ["before", "after"], "default": "after", "description": "Before or after the element."}
            }),
            &["text"],
            &["target", "text"],
        ),
        spec(
            "clear_overlays",
            Interact,
            "Remove every highlight, border, spotlight, note and subtitle drawn so far.",
            NoTarget,
            json!({}),
            &[],
            &[],
        ),
        spec(
            "show_subtitle",
            Interact,
            "Show a caption bar at the bottom of the page telling the person watching what is happening.",
            NoTarget,
            json!({"text": nonempty("The caption.")}),
            &["text"],
            &["text"],
        ),
        spec(
            "extract",
            Read,
            "Pull structured data out of the current page according to an instruction, optionally shaped by a JSON schema. Use it when you need specific values (a table, prices, ids), not to read the page in general.",
            NoTarget,
            json!({
                "instruction": nonempty("What to extract, e.g. \"every order number with its total\"."),
                "schema": {"type": "object", "description": "Optional JSON schema the result must follow."}
            }),
            &["instruction"],
            &["instruction"],
        ),
        spec(
            "read_page",
            Read,
            "Return the readable text of the whole page, including parts outside the viewport, a part at a time: a long page's text comes in parts of about 3,000 characters, each saying how many characters are left (chars_left) and where the next part starts (next_offset).",
            NoTarget,
            json!({
                "offset": {"type": "integer", "minimum": 0, "default": 0, "description": "0, or the last part's next_offset."}
            }),
            &[],
            &["offset"],
        ),
        spec(
            "screenshot",
            Read,
            "Save a PNG screenshot of the viewport, the whole page, or one element (by index or selector) to a file and return its path; when you can see images, the picture is also shown to you at the next step. Without a path it goes into the session directory; writing to a chosen path counts as a commit.",
            Optional,
            json!({
                "path": nonempty("Where to write the PNG."),
                "full_page": {"type": "boolean", "default": false, "description": "Capture the whole scrollable page, not just the viewport."}
            }),
            &[],
            &["path", "full_page", "target"],
        ),
        spec(
            "ask_user",
            Read,
            "Ask the person a question and wait for their answer. Use it for missing information (credentials, choices) or before anything irreversible you were not told to do.",
            NoTarget,
            json!({"question": nonempty("The question, self-contained.")}),
            &["question"],
            &["question"],
        ),
        spec(
            "hand_over",
            Read,
            "Hand the page to the person when only a person can get past it: a CAPTCHA, a one-time code with no totp secret, a sign-in with no credentials. Do not guess or loop. The run waits until they hand it back.",
            NoTarget,
            json!({"reason": nonempty("What they must do.")}),
            &["reason"],
            &["reason"],
        ),
        spec(
            "think",
            Read,
            "Write down reasoning or a plan without touching the page.",
            NoTarget,
            json!({"reasoning": nonempty("Your reasoning.")}),
            &["reasoning"],
            &["reasoning"],
        ),
        spec(
            "done",
            Read,
            "Finish the task. Give the answer or a summary of what was done, and whether the task succeeded. Call it also when the task cannot be completed, with success false and the reason.",
            NoTarget,
            json!({
                "text": nonempty("The answer or summary for the person."),
                "success": {"type": "boolean", "description": "true if the task was fully accomplished."}
            }),
            &["text", "success"],
            &["text", "success"],
        ),
        spec(
            "read_file",
            Read,
            "Read a file a click downloaded (text, CSV, JSON; long files are clipped). Give the file name the click's result reported.",
            NoTarget,
            json!({"path": nonempty("The downloaded file's name (or its path in the downloads directory).")}),
            &["path"],
            &["path"],
        ),
        spec(
            "switch_tab",
            Interact,
            "Drive another open tab (by number, or a URL pattern); later actions are there.",
            NoTarget,
            json!({
                "tab": {"type": "integer", "minimum": 0, "description": "The tab's number in the tab list."},
                "url": nonempty("A pattern its URL matches: a path with * or a whole URL.")
            }),
            &[],
            &["tab"],
        )
        .with_extra_one_of(json!([{"required": ["tab"]}, {"required": ["url"]}])),
        spec(
            "answer_dialogs",
            Interact,
            "How the page's next confirm and prompt dialogs are answered: accept (a prompt with text) or dismiss.",
            NoTarget,
            json!({
                "accept": {"type": "boolean", "description": "false dismisses."},
                "text": text("A prompt's answer.")
            }),
            &["accept"],
            &["accept", "text"],
        ),
        spec(
            "close_tab",
            Interact,
            "Close a tab (by its number in the tab list; the current one when none is given). Closing the current tab goes back to the one that opened it, or another open tab.",
            NoTarget,
            json!({"tab": {"type": "integer", "minimum": 0, "description": "The tab's number in the tab list."}}),
            &[],
            &["tab"],
        ),
        spec(
            "execute_javascript",
            Dangerous,
            "Run JavaScript in the page and return its result. Disabled unless the person enabled it; prefer the other actions.",
            NoTarget,
            json!({"script": nonempty("The script; the value of its last expression is returned.")}),
            &["script"],
            &["script"],
        ),
    ]
}

impl ActionSpec {
    /// Sets the spec's `oneOf` (for actions whose choice is not a target).
    fn with_one_of(mut self, branches: Value) -> Self {
        if let Value::Object(schema) = &mut self.schema {
            schema.insert("oneOf".to_string(), branches);
        }
        self
    }

    /// Adds a second exactly-one-of choice next to the target's: both
    /// must hold, so the two `oneOf`s go under `allOf`.
    fn with_extra_one_of(mut self, branches: Value) -> Self {
        if let Value::Object(schema) = &mut self.schema {
            match schema.remove("oneOf") {
                Some(target) => {
                    schema.insert(
                        "allOf".to_string(),
                        json!([{"oneOf": target}, {"oneOf": branches}]),
                    );
                }
                None => {
                    schema.insert("oneOf".to_string(), branches);
                }
            }
        }
        self
    }
}
