//! The typed action the executor runs. Built-in actions carry typed
//! parameters; custom actions keep their validated JSON parameters.
//!
//! The JSON form is the one the model emits, `{"name": {params}}`, with the
//! target fields (`index` or `selector`) inline in the parameters. Build
//! actions through [`crate::actions::Catalog::parse`], which validates first;
//! the serde derive here is the second half of that pipeline.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::keys::KeyChord;
use super::risk_level::Risk;
use super::selector::Selector;
use crate::dom::ElementIndex;

/// Which element an action acts on.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Target {
    /// The element listed under this number in the latest observation.
    Index {
        /// The number in the element listing.
        index: ElementIndex,
    },
    /// The first visible element matching a restricted CSS selector.
    Selector {
        /// The selector.
        selector: Selector,
    },
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Index { index } => write!(f, "[{index}]"),
            Target::Selector { selector } => write!(f, "`{selector}`"),
        }
    }
}

/// What `wait_for` waits for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WaitCondition {
    /// An element matching the selector becomes visible.
    Selector {
        /// The selector to wait for.
        selector: Selector,
    },
    /// The text appears in the page's visible text.
    Text {
        /// The text to wait for.
        text: String,
    },
}

/// How `select_option` picks the option.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OptionChoice {
    /// By the option's `value` attribute.
    Value {
        /// The `value` attribute to match.
        value: String,
    },
    /// By the option's visible text.
    Text {
        /// The visible text to match.
        text: String,
    },
}

/// Which way `scroll` moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScrollDirection {
    /// Towards the top.
    Up,
    /// Towards the bottom.
    Down,
    /// Towards the left edge.
    Left,
    /// Towards the right edge.
    Right,
}

/// Where `inject` places its text relative to the target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InjectPosition {
    /// Just before the element.
    Before,
    /// Just after the element (the default).
    #[default]
    After,
}

/// An action from a Rhai script or another extension: its name, validated
/// parameters and the risk it was registered with.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomAction {
    /// The registered name.
    pub name: String,
    /// The parameters, validated against the registered schema with its
    /// defaults filled in.
    pub params: Value,
    /// The registered risk level.
    pub risk: Risk,
}

impl Serialize for CustomAction {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut wrapper = Map::new();
        wrapper.insert(self.name.clone(), self.params.clone());
        wrapper.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for CustomAction {
    fn deserialize<D: Deserializer<'de>>(_deserializer: D) -> Result<Self, D::Error> {
        // A custom action's schema and risk live in the catalog, so it can
        // only be read through `Catalog::parse`.
        Err(serde::de::Error::custom(
            "unknown action (custom actions are read through the catalog)",
        ))
    }
}

/// One action, ready to execute. Parameter names match the catalog (and
/// DESIGN.md); defaults are already applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Go to an absolute URL or a path on the current origin.
    Navigate {
        /// Absolute URL or path.
        url: String,
    },
    /// Go back in history.
    Back {},
    /// Go forward in history.
    Forward {},
    /// Reload the page.
    Reload {},
    /// Search the sitemap for a page by name, then navigate to it.
    GotoPage {
        /// What to search for.
        name: String,
    },
    /// Wait a fixed time (0.1 to 10 seconds).
    Wait {
        /// Seconds to wait.
        seconds: f64,
    },
    /// Wait until an element or a text appears.
    WaitFor {
        /// What to wait for.
        #[serde(flatten)]
        condition: WaitCondition,
        /// Give up after this many milliseconds.
        timeout_ms: u64,
    },
    /// Click an element.
    Click {
        /// The element.
        #[serde(flatten)]
        target: Target,
    },
    /// Move the mouse over an element.
    Hover {
        /// The element.
        #[serde(flatten)]
        target: Target,
    },
    /// Submit the form the element belongs to (or the form itself).
    SubmitForm {
        /// The form or an element inside it.
        #[serde(flatten)]
        target: Target,
    },
    /// Empty an input or textarea.
    ClearInput {
        /// The field.
        #[serde(flatten)]
        target: Target,
    },
    /// Scroll an element into view.
    ScrollTo {
        /// The element.
        #[serde(flatten)]
        target: Target,
    },
    /// Dim the page around an element.
    Spotlight {
        /// The element.
        #[serde(flatten)]
        target: Target,
    },
    /// Type text into a field.
    InputText {
        /// The field.
        #[serde(flatten)]
        target: Target,
        /// The text to type.
        text: String,
        /// Empty the field first.
        clear: bool,
    },
    /// Replace the text of a contenteditable element.
    SetText {
        /// The contenteditable element.
        #[serde(flatten)]
        target: Target,
        /// The new text.
        text: String,
    },
    /// Select text with the mouse, as a person highlights it: an element's
    /// whole text, or a passage found by its words.
    SelectText {
        /// The element whose text is selected, or within which the passage
        /// is looked for; the whole page when absent.
        #[serde(flatten, skip_serializing_if = "Option::is_none")]
        target: Option<Target>,
        /// The passage, as the page text shows it (`start…end` for a long
        /// one); the target's whole text when absent.
        #[serde(skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// Pick an option of a `<select>`.
    SelectOption {
        /// The select element.
        #[serde(flatten)]
        target: Target,
        /// Which option.
        #[serde(flatten)]
        choice: OptionChoice,
    },
    /// Press a key or key combination, possibly several times.
    PressKeys {
        /// The combination.
        keys: KeyChord,
        /// How many times to press it.
        repeat: u32,
    },
    /// Scroll the page or a scrollable element.
    Scroll {
        /// Which way.
        direction: ScrollDirection,
        /// How far, in viewport (or container) heights or widths.
        pages: f64,
        /// The scrollable element; the page when absent.
        #[serde(flatten, skip_serializing_if = "Option::is_none")]
        target: Option<Target>,
    },
    /// Drag one element onto another.
    DragAndDrop {
        /// The element to drag.
        from: Target,
        /// The element to drop it on.
        to: Target,
    },
    /// Set a file on a file input.
    UploadFile {
        /// The file input.
        #[serde(flatten)]
        target: Target,
        /// Path of the local file.
        path: String,
    },
    /// Give an element a coloured background, optionally labelled.
    Highlight {
        /// The element.
        #[serde(flatten)]
        target: Target,
        /// CSS colour; the theme's highlight colour when absent.
        #[serde(skip_serializing_if = "Option::is_none")]
        color: Option<String>,
        /// A short label drawn next to it.
        #[serde(skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    },
    /// Draw a border around an element, optionally labelled.
    Border {
        /// The element.
        #[serde(flatten)]
        target: Target,
        /// CSS colour; the theme's border colour when absent.
        #[serde(skip_serializing_if = "Option::is_none")]
        color: Option<String>,
        /// A short label drawn next to it.
        #[serde(skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    },
    /// Show a note next to an element.
    Inject {
        /// The element.
        #[serde(flatten)]
        target: Target,
        /// The note.
        text: String,
        /// Before or after the element.
        position: InjectPosition,
    },
    /// Remove every overlay drawn so far.
    ClearOverlays {},
    /// Show a caption bar at the bottom of the page.
    ShowSubtitle {
        /// The caption.
        text: String,
    },
    /// Pull structured data out of the page with the LLM.
    Extract {
        /// What to extract.
        instruction: String,
        /// JSON schema of the wanted result.
        #[serde(skip_serializing_if = "Option::is_none")]
        schema: Option<Value>,
    },
    /// Return a part of the page's readable text.
    ReadPage {
        /// Where the part starts, in characters from the start of the
        /// text: 0, or the `next_offset` the previous part gave.
        offset: usize,
    },
    /// Save a screenshot to a file (and show it to a model that reads
    /// images at its next step).
    Screenshot {
        /// Where to write it; a file in the session directory when absent.
        #[serde(skip_serializing_if = "Option::is_none")]
        path: Option<String>,
        /// The whole scrollable page rather than the viewport.
        full_page: bool,
        /// One element only, rather than the viewport or the page.
        #[serde(flatten, skip_serializing_if = "Option::is_none")]
        target: Option<Target>,
    },
    /// Ask the person a question and wait for the answer.
    AskUser {
        /// The question.
        question: String,
    },
    /// Hand the page to a person (a CAPTCHA, a one-time code, a sign-in
    /// with no credentials) and wait until they hand it back.
    HandOver {
        /// What the person is needed for.
        reason: String,
    },
    /// Record reasoning without acting.
    Think {
        /// The reasoning.
        reasoning: String,
    },
    /// Finish the task.
    Done {
        /// The final answer or summary.
        text: String,
        /// Whether the task was accomplished.
        success: bool,
    },
    /// Read a downloaded file (text, clipped).
    ReadFile {
        /// The file: a name in the downloads directory, or a path inside it.
        path: String,
    },
    /// Drive another open tab: by its number in the page state's tab
    /// list, or by its URL (a recipe's way: the numbers depend on the
    /// tabs open when it runs).
    SwitchTab {
        /// Its number in the page state's tab list.
        #[serde(skip_serializing_if = "Option::is_none")]
        tab: Option<u32>,
        /// A pattern its URL matches, as `expect_url` takes one (a path
        /// with `*`, or a whole URL).
        #[serde(skip_serializing_if = "Option::is_none")]
        url: Option<String>,
    },
    /// How the page's next `confirm` and `prompt` dialogs are answered,
    /// from now on (alerts are always accepted).
    AnswerDialogs {
        /// Accept them (else dismiss them).
        accept: bool,
        /// What a `prompt` is answered with when accepted.
        #[serde(skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// Close a tab (the current one when no number is given).
    CloseTab {
        /// Its number in the page state's tab list.
        #[serde(skip_serializing_if = "Option::is_none")]
        tab: Option<u32>,
    },
    /// Run JavaScript in the page (off unless enabled).
    ExecuteJavascript {
        /// The script.
        script: String,
    },
    /// An action registered by a script.
    #[serde(untagged)]
    Custom(CustomAction),
}

impl Action {
    /// The action's catalog name (`click`, `input_text`, or a custom name).
    pub fn name(&self) -> &str {
        match self {
            Action::Navigate { .. } => "navigate",
            Action::Back {} => "back",
            Action::Forward {} => "forward",
            Action::Reload {} => "reload",
            Action::GotoPage { .. } => "goto_page",
            Action::Wait { .. } => "wait",
            Action::WaitFor { .. } => "wait_for",
            Action::Click { .. } => "click",
            Action::Hover { .. } => "hover",
            Action::SubmitForm { .. } => "submit_form",
            Action::ClearInput { .. } => "clear_input",
            Action::ScrollTo { .. } => "scroll_to",
            Action::Spotlight { .. } => "spotlight",
            Action::InputText { .. } => "input_text",
            Action::SetText { .. } => "set_text",
            Action::SelectText { .. } => "select_text",
            Action::SelectOption { .. } => "select_option",
            Action::PressKeys { .. } => "press_keys",
            Action::Scroll { .. } => "scroll",
            Action::DragAndDrop { .. } => "drag_and_drop",
            Action::UploadFile { .. } => "upload_file",
            Action::Highlight { .. } => "highlight",
            Action::Border { .. } => "border",
            Action::Inject { .. } => "inject",
            Action::ClearOverlays {} => "clear_overlays",
            Action::ShowSubtitle { .. } => "show_subtitle",
            Action::Extract { .. } => "extract",
            Action::ReadPage { .. } => "read_page",
            Action::Screenshot { .. } => "screenshot",
            Action::AskUser { .. } => "ask_user",
            Action::HandOver { .. } => "hand_over",
            Action::Think { .. } => "think",
            Action::Done { .. } => "done",
            Action::ReadFile { .. } => "read_file",
            Action::SwitchTab { .. } => "switch_tab",
            Action::AnswerDialogs { .. } => "answer_dialogs",
            Action::CloseTab { .. } => "close_tab",
            Action::ExecuteJavascript { .. } => "execute_javascript",
            Action::Custom(custom) => &custom.name,
        }
    }

    /// The whole action as the model would emit it: `{"name": {params}}`,
    /// with defaults filled in.
    pub fn to_json(&self) -> Value {
        // ok: every field is a string, number, bool, enum or JSON value,
        // which always serialize.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Just the parameters object, with defaults filled in (what traces and
    /// `exec --json` print next to the name).
    pub fn params(&self) -> Value {
        match self.to_json() {
            Value::Object(mut wrapper) => wrapper
                .remove(self.name())
                .unwrap_or_else(|| Value::Object(Map::new())),
            _ => Value::Object(Map::new()),
        }
    }

    /// The element the action acts on, for actions with one target. The
    /// approval gate binds to it; `drag_and_drop` reports its source.
    pub fn target(&self) -> Option<&Target> {
        match self {
            Action::Click { target }
            | Action::Hover { target }
            | Action::SubmitForm { target }
            | Action::ClearInput { target }
            | Action::ScrollTo { target }
            | Action::Spotlight { target }
            | Action::InputText { target, .. }
            | Action::SetText { target, .. }
            | Action::SelectOption { target, .. }
            | Action::UploadFile { target, .. }
            | Action::Highlight { target, .. }
            | Action::Border { target, .. }
            | Action::Inject { target, .. } => Some(target),
            Action::Scroll { target, .. }
            | Action::Screenshot { target, .. }
            | Action::SelectText { target, .. } => target.as_ref(),
            Action::DragAndDrop { from, .. } => Some(from),
            _ => None,
        }
    }
}

impl fmt::Display for Action {
    /// `name {params}` on one line, e.g. `click {"index":3}`: the form the
    /// TUI command line accepts back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name(), self.params())
    }
}
