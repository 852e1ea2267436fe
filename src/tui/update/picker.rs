//! Opening the locator picker (`L`, `A`) on an element, wherever the
//! person meets one: a row of the listing, the target of an action
//! waiting for approval, the element a past step acted on, a point of the
//! page pane's picture (Alt+click) or the element under the pointer in a
//! headed window (Alt+Shift+A while recording). Each asks the page for
//! the same report and shows it in the same view; only a row of the
//! listing is shown in full besides.

use serde_json::Value;

use crate::actions::Target;
use crate::script::PickedElement;
use crate::tui::event::Effect;
use crate::tui::state::{AppState, LocatorPick, Modal};

/// Opens the picker on `element` and asks the page for its report: in the
/// element view of the listing's row `position` when given, else in a
/// view of its own over `under` (a dialog that comes back when the picker
/// closes). `title` says what the element is.
fn open(
    state: &mut AppState,
    element: PickedElement,
    position: Option<usize>,
    title: String,
    under: Option<Modal>,
    effects: &mut Vec<Effect>,
) {
    state.picks += 1;
    let pick = state.picks;
    effects.push(Effect::PickLocators { pick, element });
    state.locators = Some(LocatorPick {
        pick,
        position,
        title,
        report: None,
    });
    state.modal = Some(match (position, under) {
        (Some(position), None) => Modal::Element {
            position,
            scroll: 0,
        },
        (_, under) => Modal::Locators {
            scroll: 0,
            under: under.map(Box::new),
        },
    });
}

/// Whether the page can answer the picker now; says why not when a run
/// has it (it answers at the run's next approval, where `L` asks).
fn page_free(state: &mut AppState) -> bool {
    if state.run_active() {
        state.notice(
            true,
            "the run has the page; L reads it once the run ends, or at an approval".into(),
        );
        return false;
    }
    true
}

/// Closes the picker's view; the dialog it was opened over comes back.
pub(super) fn close(state: &mut AppState) {
    state.modal = match state.modal.take() {
        Some(Modal::Locators { under, .. }) => under.map(|m| *m),
        _ => None,
    };
}

/// The page's report for the pick numbered `pick`; a late one for an
/// earlier pick is dropped.
pub(super) fn answered(
    state: &mut AppState,
    pick: u64,
    report: Result<crate::script::LocatorReport, String>,
) {
    if let Some(shown) = state.locators.as_mut().filter(|p| p.pick == pick) {
        shown.report = Some(report);
    }
}

/// `L` or `A` on the listing's row `position`.
pub(super) fn pick_listed(state: &mut AppState, position: usize, effects: &mut Vec<Effect>) {
    let Some(element) = state.page.as_ref().and_then(|p| p.elements.get(position)) else {
        state.notice(true, "no element is listed yet".into());
        return;
    };
    let index = element.index;
    if !page_free(state) {
        return;
    }
    let title = format!("element [{index}]");
    let target = Target::Index { index };
    open(
        state,
        PickedElement::Target(target),
        Some(position),
        title,
        None,
        effects,
    );
}

/// `L` in the approval modal: the picker on the element the waiting
/// action targets, over the modal, whose approval stays pending.
pub(super) fn pick_approval_target(state: &mut AppState, effects: &mut Vec<Effect>) {
    let (target, line) = match &state.modal {
        Some(Modal::Approval(m)) => (
            m.request.action.target().cloned(),
            m.request.element.clone(),
        ),
        _ => return,
    };
    let Some(target) = target else {
        state.notice(
            true,
            "this action targets no element; L shows the locators of one".into(),
        );
        return;
    };
    let title = line.unwrap_or_else(|| match &target {
        Target::Index { index } => format!("element [{index}]"),
        Target::Selector { selector } => selector.as_str().to_string(),
    });
    let under = state.modal.take();
    open(
        state,
        PickedElement::Target(target),
        None,
        title,
        under,
        effects,
    );
}

/// `L` on a row of the action log (a past session's step in the sessions
/// view too): the locators the step kept for its element, checked on the
/// page open now.
pub(super) fn pick_logged_step(state: &mut AppState, effects: &mut Vec<Effect>) {
    let Some(entry) = state.log.get(state.log_view.cursor) else {
        state.notice(true, "no step is logged yet".into());
        return;
    };
    let step = entry
        .step
        .map_or_else(|| "this row".to_string(), |n| format!("step {n}"));
    let facts = entry.record.as_ref().and_then(|record| {
        let result = serde_json::to_value(&record.result).ok()?;
        result
            .get("data")
            .and_then(|d| d.get("locator"))
            .filter(|l| l.is_object())
            .cloned()
    });
    let Some(facts) = facts else {
        state.notice(
            false,
            format!("{step} acted on no element it kept locators for; L needs one that did"),
        );
        return;
    };
    if !page_free(state) {
        return;
    }
    let what = element_words(&facts);
    open(
        state,
        PickedElement::Facts(facts),
        None,
        format!("{step}'s element, {what}"),
        None,
        effects,
    );
}

/// Alt+click on the page pane's picture at `point` (in the picture's
/// pixels, `(x, y)` in the page's CSS pixels): the picker on the listed
/// element whose box holds the point, the smallest when boxes nest, as
/// `A` on its row; else on whatever element the page has there.
pub(super) fn pick_at(
    state: &mut AppState,
    point: (f64, f64),
    (x, y): (f64, f64),
    effects: &mut Vec<Effect>,
) {
    let marks = state
        .picture
        .shot
        .as_ref()
        .map(|s| s.marks.clone())
        .unwrap_or_default();
    let holds = |m: &crate::vision::Mark| {
        let (px, py) = point;
        px >= f64::from(m.x)
            && py >= f64::from(m.y)
            && px < f64::from(m.x) + f64::from(m.width)
            && py < f64::from(m.y) + f64::from(m.height)
    };
    let smallest = marks
        .iter()
        .filter(|m| holds(m))
        .min_by_key(|m| u64::from(m.width) * u64::from(m.height))
        .map(|m| m.index);
    let position = smallest.and_then(|index| {
        state
            .page
            .as_ref()?
            .elements
            .iter()
            .position(|e| e.index.0 == index)
    });
    match position {
        Some(position) => pick_listed(state, position, effects),
        None => open(
            state,
            PickedElement::Point { x, y },
            None,
            format!("the element at ({x:.0}, {y:.0}) on the page"),
            None,
            effects,
        ),
    }
}

/// Alt+Shift+A in a headed window while recording: the picker on the
/// element under the pointer, whose facts the recorder read.
pub(super) fn picked_on_page(state: &mut AppState, facts: Value, effects: &mut Vec<Effect>) {
    if state.modal.is_some() {
        state.notice(
            true,
            "an element was picked on the page; close the dialog open here and pick it again"
                .into(),
        );
        return;
    }
    let what = element_words(&facts);
    open(
        state,
        PickedElement::Facts(facts),
        None,
        format!("picked on the page, {what}"),
        None,
        effects,
    );
}

/// An element as its facts tell it shortly: `<h1> "Orders"`.
fn element_words(facts: &Value) -> String {
    let text = |key: &str| facts.get(key).and_then(Value::as_str).unwrap_or_default();
    let name = [
        text("accessibleName"),
        text("text"),
        text("label"),
        text("id"),
    ]
    .into_iter()
    .find(|t| !t.is_empty())
    .map(|t| format!(" {}", crate::script::export::rhai_string(t)))
    .unwrap_or_default();
    format!("<{}>{name}", text("tag"))
}
