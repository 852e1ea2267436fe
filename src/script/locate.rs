//! Finding an element again: the facts that name a target's element,
//! recorded as an action runs, and the one element a recipe step's
//! locators name on the page now. Both ask `locate.js` in the page; the
//! script environment records, and both hosts find.

use serde_json::{json, Value};

use crate::actions::Target;
use crate::browser::Tab;
use crate::dom::{
    ElementState, LocateFailure, LocateProblem, Location, Locator, PageState, TriedLocator,
};

use crate::browser::{place_in_frame, LOCATE_JS};

/// What finds `target`'s element again (test id, id, role and accessible
/// name, label, placeholder, name, text, a CSS path, the URL), read from
/// the page before the action runs; `last` is the page last observed,
/// whose listing an index target refers to.
pub(crate) async fn record_locator(
    tab: &Tab,
    target: &Target,
    last: Option<&PageState>,
) -> Option<Value> {
    let args = json!({"record": true});
    let (reply, frame) = match target {
        Target::Index { index } => {
            let observation = last?.observation;
            let reply = tab
                .eval_on_index(observation, *index, LOCATE_JS, args)
                .await;
            let slot = match tab.element_route(observation, index.0).await {
                Ok((slot, _, _)) => slot,
                Err(_) => None,
            };
            (reply, slot)
        }
        Target::Selector { selector } => (
            tab.eval_on_selector(selector.as_str(), LOCATE_JS, args)
                .await,
            None,
        ),
    };
    match reply {
        Ok(Value::Object(mut facts)) => {
            facts.retain(|_, v| !v.is_null());
            let mut facts = Value::Object(facts);
            if let Some(slot) = frame {
                let way_in = tab.frame_path(slot).await.ok();
                let url = tab.url().await.ok();
                place_in_frame(&mut facts, way_in.as_deref(), url.as_deref());
            }
            Some(facts)
        }
        Ok(_) => None,
        Err(error) => {
            tracing::debug!(%error, "reading the target's locator");
            None
        }
    }
}

/// The one element `locators` name on `tab`'s page now (see
/// [`crate::environment::Environment::locate`]).
///
/// The top document is asked first, with its shadow roots and same-origin
/// frames. When no locator but the CSS path names an element there, each
/// frame of another origin (out of the top document's reach) is asked
/// too, a frame in one of them as well: the element is the one a strong
/// locator names in exactly one of these documents, else the one its CSS
/// path names. Its selector then enters the frame with `>>>`, as an
/// action's selector does.
pub(crate) async fn locate_on(tab: &Tab, locators: &[Locator]) -> Result<Location, LocateFailure> {
    if locators.is_empty() {
        return Err(LocateFailure {
            problem: LocateProblem::NotFound,
            message: "the step names no locator".into(),
            tried: Vec::new(),
            page: String::new(),
        });
    }
    let top = ask(tab, None, locators)
        .await
        .map_err(|e| LocateFailure::unavailable(format!("the page could not be asked: {e}")))?;
    let frames = far_frames(&top);
    let top = location_from(top);
    let strong = |found: &Location| !found.matched.starts_with("css:");
    if frames.is_empty() || top.as_ref().is_ok_and(strong) {
        return top;
    }
    // Each frame: the CSS path that names its <iframe> in the world that
    // holds it, that world (`None`: the top document), and how deep it is.
    let mut waiting: Vec<(String, Option<usize>, usize)> =
        frames.into_iter().map(|path| (path, None, 1)).collect();
    let mut answers = Vec::new();
    while let Some((path, parent, depth)) = waiting.pop() {
        let Some((way_in, slot)) = enter(tab, parent, &path).await else {
            continue;
        };
        let here = rebased(locators, &way_in);
        if here.is_empty() {
            continue;
        }
        let reply = match ask(tab, Some(slot), &here).await {
            Ok(reply) => reply,
            Err(error) => {
                tracing::debug!(%error, frame = %way_in, "a frame of another origin could not be asked");
                continue;
            }
        };
        if depth < FRAME_DEPTH {
            let inner = far_frames(&reply).into_iter();
            waiting.extend(inner.map(|p| (p, Some(slot), depth + 1)));
        }
        answers.push((way_in, location_from(reply)));
    }
    chosen(top, answers)
}

/// How deep frames of other origins inside each other are looked in.
const FRAME_DEPTH: usize = 3;

/// Asks `locate.js` in the document of frame `slot` (`None`: the top
/// document) which element `locators` name, and which frames of another
/// origin it holds.
async fn ask(
    tab: &Tab,
    slot: Option<usize>,
    locators: &[Locator],
) -> Result<Value, crate::browser::BrowserError> {
    let args = json!({
        "locators": locators.iter().map(Locator::to_json).collect::<Vec<_>>(),
        "frames": true,
    });
    tab.eval_on_selector_in(slot, ":root", LOCATE_JS, args)
        .await
}

/// The CSS paths of the frames of another origin an answer met.
fn far_frames(reply: &Value) -> Vec<String> {
    reply
        .get("frames")
        .and_then(Value::as_array)
        .map(|paths| {
            paths
                .iter()
                .filter_map(|p| p.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Enters the frame `path` names in world `parent`: its way in from the
/// top document and its slot, or `None` when it cannot be entered.
async fn enter(tab: &Tab, parent: Option<usize>, path: &str) -> Option<(String, usize)> {
    let entered = async {
        let slot = tab.frame_slot(parent, path).await?;
        Ok::<_, crate::browser::BrowserError>((tab.frame_path(slot).await?, slot))
    };
    match entered.await {
        Ok(entered) => Some(entered),
        Err(error) => {
            tracing::debug!(%error, frame = %path, "a frame of another origin could not be entered");
            None
        }
    }
}

/// `locators` as the document of the frame `way_in` enters sees them: a
/// CSS path into that frame starts at its document, and one that does not
/// go there names nothing in it and is left out.
fn rebased(locators: &[Locator], way_in: &str) -> Vec<Locator> {
    let into = format!("{way_in} >>> ");
    locators
        .iter()
        .filter_map(|locator| match locator {
            Locator::Css(path) => path
                .strip_prefix(&into)
                .map(|inner| Locator::Css(inner.to_string())),
            other => Some(other.clone()),
        })
        .collect()
}

/// The element among the top document's answer and the frames' (each with
/// its way in): the one a strong locator names in exactly one document,
/// else the one its CSS path names; several strong ones are ambiguous.
fn chosen(
    top: Result<Location, LocateFailure>,
    frames: Vec<(String, Result<Location, LocateFailure>)>,
) -> Result<Location, LocateFailure> {
    let looked = frames.len();
    let mut found: Vec<(Option<String>, Location)> = Vec::new();
    let mut failures = Vec::new();
    for (way_in, answer) in
        std::iter::once((None, top.clone())).chain(frames.into_iter().map(|(w, a)| (Some(w), a)))
    {
        match answer {
            Ok(location) => found.push((way_in, location)),
            Err(failure) => failures.push((way_in, failure)),
        }
    }
    let strong: Vec<&(Option<String>, Location)> = found
        .iter()
        .filter(|(_, l)| !l.matched.starts_with("css:"))
        .collect();
    let pick = match strong.as_slice() {
        [one] => Some((*one).clone()),
        [] => found.first().cloned(),
        [first, second, ..] => {
            let place = |w: &Option<String>| match w {
                Some(w) => format!("the frame `{w}`"),
                None => "the page".to_string(),
            };
            return Err(LocateFailure {
                problem: LocateProblem::Ambiguous,
                message: format!(
                    "{} names {} in {} and {} names {} in {}",
                    first.1.matched,
                    first.1.element,
                    place(&first.0),
                    second.1.matched,
                    second.1.element,
                    place(&second.0)
                ),
                tried: first.1.tried.clone(),
                page: String::new(),
            });
        }
    };
    if let Some((way_in, mut location)) = pick {
        if let Some(way_in) = way_in {
            location.selector = format!("{way_in} >>> {}", location.selector);
        }
        return Ok(location);
    }
    // Nothing anywhere: an ambiguity in a frame says more than the top
    // document's nothing.
    if let Some((Some(way_in), failure)) = failures
        .iter()
        .find(|(w, f)| w.is_some() && f.problem == LocateProblem::Ambiguous)
    {
        let mut failure = failure.clone();
        failure.message = format!("in the frame `{way_in}`: {}", failure.message);
        return Err(failure);
    }
    let mut failure = match top {
        Err(failure) => failure,
        Ok(location) => return Ok(location),
    };
    failure.message = format!(
        "{}, nor in the {looked} frame(s) of another origin on it",
        failure.message
    );
    Err(failure)
}

/// The page's answer to a locate call.
fn location_from(reply: Value) -> Result<Location, LocateFailure> {
    let tried: Vec<TriedLocator> = reply
        .get("tried")
        .cloned()
        .and_then(|t| serde_json::from_value(t).ok())
        .unwrap_or_default();
    let text = |key: &str| {
        reply
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match reply.get("error").and_then(Value::as_str) {
        None if reply.get("selector").is_some() => Ok(Location {
            selector: text("selector"),
            matched: text("matched"),
            element: text("element"),
            tried,
            state: reply
                .get("state")
                .cloned()
                .and_then(|s| serde_json::from_value(s).ok()),
        }),
        error => Err(LocateFailure {
            problem: match error {
                Some("ambiguous") => LocateProblem::Ambiguous,
                Some("not_found") => LocateProblem::NotFound,
                _ => LocateProblem::Unavailable,
            },
            message: match text("detail") {
                detail if detail.is_empty() => format!("the page gave no answer: {reply}"),
                detail => detail,
            },
            tried,
            page: text("page"),
        }),
    }
}

/// What the locator picker shows of one element: the locators a recorded
/// step would keep, strongest first, each with how many elements it names
/// on the page now, and the recipe line that acts on the element.
#[derive(Debug, Clone, PartialEq)]
pub struct LocatorReport {
    /// Each locator and the elements it names now (1: unique).
    pub locators: Vec<(Locator, usize)>,
    /// The recipe line: `click([...]);`, `fill([...], "");` or
    /// `select([...], "");`.
    pub line: String,
    /// The facts the locators come from, as a recorded step keeps them.
    pub facts: Value,
    /// What the element shows now (text, value, checked, visible), for
    /// an assertion picked on it; `None` when its locators name no one
    /// element.
    pub state: Option<ElementState>,
    /// The locator a count of elements like this one uses (the first
    /// that names several, else its CSS path without its last position)
    /// and how many it names now.
    pub count: Option<(Locator, usize)>,
}

impl LocatorReport {
    /// The report as it may reach the screen, a clipboard or a recipe:
    /// every secret value in it (a field the run filled with one, a page
    /// that shows one) replaced by its placeholder, which a recipe step's
    /// locator is looked for as again.
    pub fn masked(self, secrets: &crate::secrets::Secrets) -> LocatorReport {
        let locator = |l: Locator| {
            let text = l.to_string();
            match secrets.mask(&text) {
                masked if masked == text => l,
                masked => Locator::parse(&masked).unwrap_or(l),
            }
        };
        LocatorReport {
            locators: self
                .locators
                .into_iter()
                .map(|(l, n)| (locator(l), n))
                .collect(),
            line: secrets.mask(&self.line),
            facts: secrets.masked(self.facts),
            state: self.state.map(|s| secrets.masked(s)),
            count: self.count.map(|(l, n)| (locator(l), n)),
        }
    }
}

/// The element a locator picker is asked about.
#[derive(Debug, Clone, PartialEq)]
pub enum PickedElement {
    /// An action's target: an index in the last listing, or a selector
    /// (what a recipe step's locators resolved to).
    Target(Target),
    /// The facts a step kept when it ran or was recorded (a past
    /// session's step, a pick in a headed window).
    Facts(Value),
    /// The element at this point of the viewport, in CSS pixels (a pick
    /// on the page pane's picture).
    Point {
        /// From the viewport's left edge.
        x: f64,
        /// From the viewport's top edge.
        y: f64,
    },
}

impl PickedElement {
    /// The element as the page is asked about it: facts a step kept in
    /// its trace carry secret values as placeholders (everything that
    /// leaves is masked), which are looked for as their values, as a
    /// recipe step's locators are.
    pub fn filled(self, secrets: &crate::secrets::Secrets) -> PickedElement {
        match self {
            PickedElement::Facts(facts) => PickedElement::Facts(secrets.filled(facts)),
            other => other,
        }
    }
}

/// Finds the element at `args.x, args.y` and hands it to `locate.js` to
/// record, in webagent's isolated world (which sees the page's DOM but
/// none of its scripts).
const AT_POINT_JS: &str =
    "(_, args) => (LOCATE)(document.elementFromPoint(args.x, args.y), { record: true })";

/// The [`LocatorReport`] of `element`, read from the page now; `last` is
/// the page last observed, whose listing an index target refers to.
/// `Err` says why there is none.
pub async fn locator_report(
    tab: &Tab,
    element: &PickedElement,
    last: Option<&PageState>,
) -> Result<LocatorReport, String> {
    let facts = match element {
        PickedElement::Target(target) => {
            record_locator(tab, target, last).await.ok_or_else(|| {
                format!(
                    "{} could not be read from the page; observe again",
                    target_words(target)
                )
            })?
        }
        PickedElement::Facts(facts) => facts.clone(),
        PickedElement::Point { x, y } => {
            let function = AT_POINT_JS.replace("LOCATE", LOCATE_JS);
            match tab
                .eval_on_selector(":root", &function, json!({"x": x, "y": y}))
                .await
            {
                Ok(Value::Object(mut facts)) => {
                    facts.retain(|_, v| !v.is_null());
                    Value::Object(facts)
                }
                Ok(_) => return Err(format!("no element is at ({x:.0}, {y:.0}) on the page")),
                Err(error) => return Err(format!("the page could not be asked: {error}")),
            }
        }
    };
    let locators = Locator::from_facts(&facts);
    if locators.is_empty() {
        return Err(match element {
            PickedElement::Target(target) => format!(
                "nothing names {} but its place in the listing",
                target_words(target)
            ),
            _ => "nothing names that element: it has no id, role, label, text or CSS path".into(),
        });
    }
    let (tried, state) = match locate_on(tab, &locators).await {
        Ok(location) => (location.tried, location.state),
        Err(failure) => (failure.tried, None),
    };
    let counted: Vec<(Locator, usize)> = locators
        .iter()
        .enumerate()
        .map(|(i, l)| (l.clone(), tried.get(i).map_or(0, |t| t.matches)))
        .collect();
    let count = match counted.iter().find(|(_, n)| *n > 1) {
        Some(several) => Some(several.clone()),
        None => match locators.last().and_then(siblings) {
            Some(like) => {
                let found = match locate_on(tab, std::slice::from_ref(&like)).await {
                    Ok(location) => location.tried,
                    Err(failure) => failure.tried,
                };
                found.first().map(|t| (like, t.matches))
            }
            None => counted.first().cloned(),
        },
    };
    let target = super::export::locators_literal(&locators);
    let tag = facts.get("tag").and_then(Value::as_str).unwrap_or_default();
    let kind = facts
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let line = match (tag, kind) {
        ("select", _) => format!("select({target}, \"\");"),
        ("textarea", _) | ("input", "textbox" | "searchbox" | "spinbutton") => {
            format!("fill({target}, \"\");")
        }
        _ => format!("click({target});"),
    };
    Ok(LocatorReport {
        locators: counted,
        line,
        facts,
        state,
        count,
    })
}

/// How a target is named in a message.
fn target_words(target: &Target) -> String {
    match target {
        Target::Index { index } => format!("element {index}"),
        Target::Selector { selector } => format!("the element `{}`", selector.as_str()),
    }
}

/// A CSS path's elements like the one it names: the path without its
/// last position (`#orders > li:nth-child(2) > a` → `#orders > li > a`);
/// `None` for another locator or a path with no position.
fn siblings(locator: &Locator) -> Option<Locator> {
    let Locator::Css(path) = locator else {
        return None;
    };
    let at = path.rfind(":nth-child(")?;
    let close = at + path[at..].find(')')?;
    Some(Locator::Css(format!(
        "{}{}",
        &path[..at],
        &path[close + 1..]
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_reaches_the_screen_with_every_secret_value_masked() {
        let mut secrets = crate::secrets::Secrets::new();
        secrets.insert("pin", "4711-99");
        let report = LocatorReport {
            locators: vec![(Locator::Text("code 4711-99".into()), 1)],
            line: r#"click(["text:code 4711-99"]);"#.into(),
            facts: json!({"tag": "input", "text": "code 4711-99"}),
            state: Some(ElementState {
                visible: true,
                text: String::new(),
                value: Some("4711-99".into()),
                checked: None,
            }),
            count: Some((Locator::Text("code 4711-99".into()), 1)),
        }
        .masked(&secrets);
        assert!(!format!("{report:?}").contains("4711-99"), "{report:?}");
        let pin = crate::secrets::placeholder("pin");
        assert_eq!(report.state.and_then(|s| s.value), Some(pin.clone()));
        assert_eq!(report.locators, [(Locator::Text(format!("code {pin}")), 1)]);
    }

    #[test]
    fn kept_facts_are_looked_for_with_their_secrets_values() {
        let mut secrets = crate::secrets::Secrets::new();
        secrets.insert("user", "ada@example.test");
        let placeholder = crate::secrets::placeholder("user");
        let kept = PickedElement::Facts(
            json!({"tag": "a", "text": format!("Signed in as {placeholder}")}),
        );
        assert_eq!(
            kept.filled(&secrets),
            PickedElement::Facts(json!({"tag": "a", "text": "Signed in as ada@example.test"}))
        );
        let point = PickedElement::Point { x: 1.0, y: 2.0 };
        assert_eq!(point.clone().filled(&secrets), point);
    }

    #[test]
    fn a_count_takes_the_css_path_without_its_last_position() {
        let css = |s: &str| Locator::Css(s.to_string());
        assert_eq!(
            siblings(&css("#orders > li:nth-child(2)")),
            Some(css("#orders > li"))
        );
        assert_eq!(
            siblings(&css("#items > li:nth-child(3) > a")),
            Some(css("#items > li > a"))
        );
        assert_eq!(siblings(&css("#save")), None);
        assert_eq!(siblings(&Locator::Id("save".into())), None);
    }
}
