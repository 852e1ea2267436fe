//! A person's recording as it grows: each input the recorder reports
//! becomes a step, and the recipe is the one an exported run with the
//! same steps would give (the same locator lists, parameters and secret
//! references), because it is made by the same export.
//!
//! A password is never in a step: the recorder sends no value for it,
//! and the step types a secret reference named after its field
//! (`<secret>password</secret>`), which the recipe's header lists.

use serde_json::{json, Value};

use super::export::{
    action_line, origin_of, page_pattern, param_base, recipe_from_events_with, ExportOptions,
};
use super::host::Expectation;
use crate::actions::ActionResult;
use crate::browser::record::Input;
use crate::dom::Locator;
use crate::events::{Event, StepRecord};
use crate::sitemap::SitemapSet;

/// One recorded step: the action a replay takes, the facts that find its
/// element again, and its goal (what a heal is told the step was for).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedStep {
    /// `{"name": {params}}`, as a trace records an action.
    pub action: Value,
    /// What finds the step's element again; `None` for a step with no
    /// element (a key, a navigation).
    pub facts: Option<Value>,
    /// The page the step was taken on.
    pub url: String,
    /// What the step is for, in the person's words; empty until given.
    pub goal: String,
}

/// A recording in progress.
#[derive(Debug, Clone)]
pub struct Recording {
    name: String,
    start_url: String,
    steps: Vec<RecordedStep>,
    /// Parameters the person renamed: (the name the export gives, theirs).
    renames: Vec<(String, String)>,
}

impl Recording {
    /// An empty recording named `name` (a snake_case word) that starts on
    /// `start_url`.
    pub fn new(name: &str, start_url: &str) -> Self {
        Recording {
            name: name.to_string(),
            start_url: start_url.to_string(),
            steps: Vec::new(),
            renames: Vec::new(),
        }
    }

    /// The recipe's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Calls the parameter `from` `to` in the recipe; `Err` says why not
    /// (no such parameter, a name that is not a snake_case word or is
    /// taken).
    pub fn rename_param(&mut self, from: &str, to: &str) -> Result<(), String> {
        if !crate::words::is_snake_case(to) {
            return Err(format!(
                "`{to}` is not a parameter name: use lowercase words joined by _"
            ));
        }
        let names = self.param_names();
        if !names.iter().any(|n| n == from) {
            return Err(match names.is_empty() {
                true => "the recording has no parameters yet".to_string(),
                false => format!("no parameter `{from}`; it has {}", names.join(", ")),
            });
        }
        if names.iter().any(|n| n == to) {
            return Err(format!("a parameter is called `{to}` already"));
        }
        // A rename of a rename replaces it.
        match self.renames.iter_mut().find(|(_, theirs)| theirs == from) {
            Some(pair) => pair.1 = to.to_string(),
            None => self.renames.push((from.to_string(), to.to_string())),
        }
        Ok(())
    }

    /// The parameters the recipe declares, as it names them.
    pub fn param_names(&self) -> Vec<String> {
        let Some(source) = self.source(None) else {
            return Vec::new();
        };
        source
            .lines()
            .filter_map(|line| {
                let name = line.strip_prefix("    ")?.split_once(": #{ type:")?.0;
                crate::words::is_snake_case(name).then(|| name.to_string())
            })
            .collect()
    }

    /// The steps so far.
    pub fn steps(&self) -> &[RecordedStep] {
        &self.steps
    }

    /// Adds the step `input` stands for and returns its number, or `None`
    /// for an input that is no step (a dialog opening: its answer is one;
    /// an alert's answer, which a replay always gives). A dialog's answer
    /// goes before the step that opened it, so a replay answers it so.
    pub fn push(&mut self, input: Input, url: &str) -> Option<usize> {
        let dialog = matches!(input, Input::Dialog { .. });
        let input = match input {
            Input::SwitchTab { url } => Input::SwitchTab {
                url: page_pattern(&url, origin_of(&self.start_url).as_deref(), None),
            },
            other => other,
        };
        let (action, facts) = step_of(input)?;
        let url = facts
            .as_ref()
            .and_then(|f| f.get("url"))
            .and_then(Value::as_str)
            .unwrap_or(url)
            .to_string();
        let step = RecordedStep {
            action,
            facts,
            url,
            goal: String::new(),
        };
        let at = match dialog {
            true => self.steps.len().saturating_sub(1),
            false => self.steps.len(),
        };
        self.steps.insert(at, step);
        Some(at + 1)
    }

    /// Adds an assertion the person picked (see [`assertion_step`]) and
    /// returns it.
    pub fn push_assertion(
        &mut self,
        expectation: &Expectation,
        facts: Option<Value>,
        locators: &[Locator],
        url: &str,
    ) -> &RecordedStep {
        self.steps
            .push(assertion_step(expectation, facts, locators, url));
        &self.steps[self.steps.len() - 1]
    }

    /// Takes the last step back.
    pub fn undo(&mut self) -> Option<RecordedStep> {
        self.steps.pop()
    }

    /// Gives step `number` (1 for the first) its goal; `false` when there
    /// is no such step.
    pub fn set_goal(&mut self, number: usize, goal: &str) -> bool {
        match number.checked_sub(1).and_then(|i| self.steps.get_mut(i)) {
            Some(step) => {
                step.goal = goal.trim().to_string();
                true
            }
            None => false,
        }
    }

    /// The recipe line of step `number`, as the recipe will have it
    /// (without parameters: the line shows what was typed).
    pub fn line(&self, number: usize) -> Option<String> {
        let step = self.steps.get(number.checked_sub(1)?)?;
        action_line(
            &step.action,
            step.facts.as_ref(),
            origin_of(&self.start_url).as_deref(),
        )
    }

    /// The names of the secrets the recording types.
    pub fn secrets(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .steps
            .iter()
            .filter_map(|s| s.action.get("input_text")?.get("text")?.as_str())
            .filter_map(|text| {
                text.strip_prefix("<secret>")?
                    .strip_suffix("</secret>")
                    .map(str::to_string)
            })
            .collect();
        names.dedup();
        names
    }

    /// The recording as a trace: the events an export reads.
    pub fn events(&self) -> Vec<Event> {
        let mut events = vec![Event::RunStarted {
            task: String::new(),
            url: self.start_url.clone(),
            model: String::new(),
            max_steps: self.steps.len(),
        }];
        for (i, step) in self.steps.iter().enumerate() {
            let result = match &step.facts {
                Some(facts) => ActionResult::ok_with(json!({ "locator": facts })),
                None => ActionResult::ok(),
            };
            events.push(Event::Step(StepRecord::taken(
                i + 1,
                step.action.clone(),
                result,
                step.goal.clone(),
                (0, 0),
            )));
        }
        events
    }

    /// The recipe's source, or `None` while no step replays.
    pub fn source(&self, sitemaps: Option<&SitemapSet>) -> Option<String> {
        let secrets = self.secrets();
        let header = if secrets.is_empty() {
            format!("Recorded by `webagent record` on {}.", self.start_url)
        } else {
            format!(
                "Recorded by `webagent record` on {}.\n// Secrets it types (give their values as for any run): {}.",
                self.start_url,
                secrets.join(", ")
            )
        };
        let options = ExportOptions {
            sitemaps,
            no_params: false,
            name: Some(&self.name),
            header: Some(&header),
        };
        let mut source = recipe_from_events_with(&self.events(), &self.start_url, options)?;
        for (from, to) in &self.renames {
            source = rename_in(&source, from, to);
        }
        Some(source)
    }
}

/// The step of an assertion the person picked: `expectation` of the
/// element `facts` find again, or of the elements `locators` name when
/// given (a count names the locator that counts); the URL needs neither.
pub fn assertion_step(
    expectation: &Expectation,
    facts: Option<Value>,
    locators: &[Locator],
    url: &str,
) -> RecordedStep {
    let mut params = match expectation {
        Expectation::Visible => json!({}),
        Expectation::Text(text) | Expectation::TextContains(text) => json!({ "text": text }),
        Expectation::Value(value) => json!({ "value": value }),
        Expectation::Checked(checked) => json!({ "checked": checked }),
        Expectation::Count(count) => json!({ "count": count }),
        Expectation::Url(pattern) => json!({ "pattern": pattern }),
    };
    if !locators.is_empty() {
        params["locators"] = json!(locators.iter().map(Locator::to_string).collect::<Vec<_>>());
    }
    let facts = match expectation {
        Expectation::Url(_) => None,
        _ if !locators.is_empty() => None,
        _ => facts,
    };
    RecordedStep {
        action: json!({ expectation.function(): params }),
        facts,
        url: url.to_string(),
        goal: String::new(),
    }
}

/// `source` with the parameter `from` called `to`: its declaration and
/// every `params.from` (not `params.from_2`).
fn rename_in(source: &str, from: &str, to: &str) -> String {
    let declared = format!("    {from}: #{{ type:");
    let used = format!("params.{from}");
    let mut out = String::with_capacity(source.len());
    for line in source.split_inclusive('\n') {
        let line = match line.strip_prefix(&declared) {
            Some(rest) => format!("    {to}: #{{ type:{rest}"),
            None => line.to_string(),
        };
        let mut rest = line.as_str();
        while let Some(at) = rest.find(&used) {
            let after = &rest[at + used.len()..];
            out.push_str(&rest[..at]);
            if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                out.push_str(&used);
            } else {
                out.push_str(&format!("params.{to}"));
            }
            rest = after;
        }
        out.push_str(rest);
    }
    out
}

/// Writes `source` to the new file `path` (its folder made when missing);
/// a file already there is never replaced.
pub fn write_new(path: &std::path::Path, source: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    std::io::Write::write_all(&mut file, source.as_bytes())
}

/// The action and the element facts a recorded input stands for, or
/// `None` for one that is no step.
fn step_of(input: Input) -> Option<(Value, Option<Value>)> {
    let css = |facts: &Value| facts.get("css").cloned().unwrap_or(Value::Null);
    Some(match input {
        Input::Click { facts } => (json!({"click": {"selector": css(&facts)}}), Some(facts)),
        Input::Fill { facts, value } => {
            let text = match value {
                Some(value) => value,
                None => format!("<secret>{}</secret>", secret_name(&facts)),
            };
            (
                json!({"input_text": {"selector": css(&facts), "text": text}}),
                Some(facts),
            )
        }
        Input::Select { facts, text } => (
            json!({"select_option": {"selector": css(&facts), "text": text}}),
            Some(facts),
        ),
        Input::Upload { facts, files } => {
            let path = files.into_iter().next().unwrap_or_default();
            (
                json!({"upload_file": {"selector": css(&facts), "path": path}}),
                Some(facts),
            )
        }
        Input::Keys { keys } => (json!({"press_keys": {"keys": keys}}), None),
        Input::Drag { from, to } => (
            json!({"drag_and_drop": {
                "from": {"selector": css(&from)},
                "to": {"selector": css(&to)},
            }}),
            Some(from),
        ),
        Input::Navigate { url } => (json!({"navigate": {"url": url}}), None),
        Input::Back => (json!({"back": {}}), None),
        Input::Forward => (json!({"forward": {}}), None),
        Input::Hover { facts } => (json!({"hover": {"selector": css(&facts)}}), Some(facts)),
        Input::SwitchTab { url } => (json!({"switch_tab": {"url": url}}), None),
        Input::DialogOpened { .. } => return None,
        Input::Dialog { kind, .. } if kind == "alert" || kind == "beforeunload" => return None,
        Input::Dialog { accepted, text, .. } => {
            let mut answer = json!({"accept": accepted});
            if let Some(text) = text {
                answer["text"] = Value::String(text);
            }
            (json!({"answer_dialogs": answer}), None)
        }
        // A pick with no one to choose the assertion (`webagent record`):
        // the simplest, that the element is there.
        Input::Pick { facts } => (json!({"expect_visible": {}}), Some(facts)),
    })
}

/// The secret a password field's step types: named after the field
/// (`password`, `admin_pin`).
fn secret_name(facts: &Value) -> String {
    match param_base(facts) {
        name if name.is_empty() || name == "value" => "password".to_string(),
        name => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picked_assertions_export_as_expect_calls_on_the_element_s_locators() {
        let url = "http://127.0.0.1:9/order";
        let mut recording = Recording::new("order", url);
        let status =
            json!({"tag": "p", "id": "status", "text": "Saved", "css": "#status", "url": url});
        recording.push_assertion(
            &Expectation::Text("Saved".into()),
            Some(status.clone()),
            &[],
            url,
        );
        recording.push_assertion(&Expectation::Checked(false), Some(status), &[], url);
        let rows = [Locator::Css("#items > li".into())];
        recording.push_assertion(&Expectation::Count(3), None, &rows, url);
        recording.push_assertion(&Expectation::Url("/order".into()), None, &[], url);
        assert_eq!(
            recording.line(1).as_deref(),
            Some("expect_text([\"id:status\", \"text:Saved\", \"css:#status\"], \"Saved\");")
        );
        assert_eq!(
            recording.line(2).as_deref(),
            Some("expect_checked([\"id:status\", \"text:Saved\", \"css:#status\"], false);")
        );
        assert_eq!(
            recording.line(3).as_deref(),
            Some("expect_count([\"css:#items > li\"], 3);")
        );
        assert_eq!(
            recording.line(4).as_deref(),
            Some("expect_url(\"/order\");")
        );
        let source = recording.source(None).expect("a recipe");
        assert!(
            source.contains("    step(4, \"\");\n    expect_url(\"/order\");\n"),
            "{source}"
        );
    }

    fn facts(pairs: Value) -> Value {
        pairs
    }

    #[test]
    fn a_pick_with_no_picker_to_choose_records_that_the_element_is_visible() {
        let url = "http://127.0.0.1:9/orders";
        let mut recording = Recording::new("orders", url);
        recording.push(
            Input::Pick {
                facts: json!({"tag": "h1", "id": "title", "role": "heading",
                    "accessibleName": "Orders", "css": "#title", "url": url}),
            },
            url,
        );
        assert_eq!(
            recording.line(1).as_deref(),
            Some(r#"expect_visible(["id:title", "role:heading:Orders", "css:#title"]);"#)
        );
    }

    #[test]
    fn a_recording_is_a_recipe_with_locators_parameters_and_a_secret_reference() {
        let mut recording = Recording::new("sign_in", "http://127.0.0.1:9/login");
        let url = "http://127.0.0.1:9/login";
        recording.push(
            Input::Fill {
                facts: facts(json!({"tag": "input", "id": "email", "name": "email",
                    "label": "Email", "css": "#email", "url": url})),
                value: Some("ada@example.test".into()),
            },
            url,
        );
        recording.push(
            Input::Fill {
                facts: facts(json!({"tag": "input", "id": "pw", "name": "pw",
                    "label": "Password", "css": "#pw", "url": url})),
                value: None,
            },
            url,
        );
        recording.push(
            Input::Click {
                facts: facts(json!({"tag": "button", "role": "button",
                    "accessibleName": "Sign in", "text": "Sign in", "css": "form > button", "url": url})),
            },
            url,
        );
        recording.push(
            Input::Keys {
                keys: "Escape".into(),
            },
            url,
        );
        assert!(recording.set_goal(3, "sign in"));
        let source = recording.source(None).expect("a recipe");
        assert!(source.starts_with("// Recorded by `webagent record` on http://127.0.0.1:9/login.\n// Secrets it types (give their values as for any run): pw.\n"), "{source}");
        assert!(source.contains("recipe(\"sign_in\""), "{source}");
        assert!(
            source.contains("email: #{ type: \"string\", \"default\": \"ada@example.test\" }"),
            "{source}"
        );
        assert!(source.contains("fill([\"id:email\", \"label:Email\", \"name:email\", \"css:#email\"], params.email);"), "{source}");
        assert!(source.contains("\"<secret>pw</secret>\""), "{source}");
        assert!(
            source.contains(
                "click([\"role:button:Sign in\", \"text:Sign in\", \"css:form > button\"]);"
            ),
            "{source}"
        );
        assert!(source.contains("press_keys(\"Escape\");"), "{source}");
        assert!(source.contains("sign in"), "{source}");
        assert_eq!(
            recording.line(3).as_deref(),
            Some("click([\"role:button:Sign in\", \"text:Sign in\", \"css:form > button\"]);")
        );
        recording
            .rename_param("email", "login")
            .expect("a parameter renamed");
        let source = recording.source(None).expect("a recipe");
        assert!(
            source.contains("    login: #{ type: \"string\""),
            "{source}"
        );
        assert!(source.contains("], params.login);"), "{source}");
        assert!(!source.contains("params.email"), "{source}");
        assert_eq!(
            recording.rename_param("nope", "x").unwrap_err(),
            "no parameter `nope`; it has login"
        );
        assert!(recording.undo().is_some());
        assert_eq!(recording.steps().len(), 3);
    }
}
