//! How a recipe's assertion is checked: the element its locators name
//! (found as a step's is), what it shows now against what the assertion
//! expects, tried again for a while, since a page that just acted may
//! still be rendering what the assertion looks for. Both hosts check
//! assertions here, so a custom action's handler and a recipe agree.

use std::time::{Duration, Instant};

use super::call::Expectation;
use crate::dom::{ElementState, LocateProblem, Location, Locator};
use crate::environment::Environment;
use crate::script::export::{page_matches, rhai_string};

/// How long an assertion waits for the page to show what it expects.
const EXPECT_WAIT: Duration = Duration::from_secs(3);
/// How often it looks again meanwhile.
const EXPECT_POLL: Duration = Duration::from_millis(150);

/// Whether the page shows what `expectation` expects of the element
/// `locators` name, waiting up to [`EXPECT_WAIT`]; `Err` says what was
/// expected and what the page showed the last time it was asked.
pub(super) async fn check<E: Environment>(
    environment: &mut E,
    expectation: &Expectation,
    locators: &[Locator],
) -> Result<(), String> {
    let deadline = Instant::now() + EXPECT_WAIT;
    loop {
        let (held, final_answer) = look(environment, expectation, locators).await;
        match held {
            Ok(()) => return Ok(()),
            Err(why) if final_answer || Instant::now() >= deadline => return Err(why),
            Err(_) => tokio::time::sleep(EXPECT_POLL).await,
        }
    }
}

/// One look: whether it holds, and whether looking again cannot change
/// the answer (the page could not be asked).
async fn look<E: Environment>(
    environment: &mut E,
    expectation: &Expectation,
    locators: &[Locator],
) -> (Result<(), String>, bool) {
    let expected = expected_words(expectation);
    match expectation {
        Expectation::Url(pattern) => {
            let here = environment.current_url().await.unwrap_or_default();
            let held = if page_matches(&here, pattern) {
                Ok(())
            } else {
                Err(format!("expected {expected}, but it is {here}"))
            };
            (held, false)
        }
        Expectation::Count(wanted) => {
            let Some(first) = locators.first() else {
                return (Err("the assertion names no locator".into()), true);
            };
            let tried = match environment.locate(std::slice::from_ref(first)).await {
                Ok(location) => location.tried,
                Err(failure) if failure.problem == LocateProblem::Unavailable => {
                    return (Err(failure.describe()), true)
                }
                Err(failure) => failure.tried,
            };
            let found = tried.first().map_or(0, |t| t.matches);
            let held = if found == *wanted {
                Ok(())
            } else {
                Err(format!("expected {expected}, but {first} names {found}"))
            };
            (held, false)
        }
        _ => match environment.locate(locators).await {
            Ok(location) => (compare(expectation, &location, &expected), false),
            Err(failure) => {
                let last = failure.problem == LocateProblem::Unavailable;
                let what = match failure.problem {
                    LocateProblem::Ambiguous => "the locators name no one element",
                    _ => "no locator names an element",
                };
                (
                    Err(format!(
                        "expected {expected}, but {what}: {}",
                        failure.describe()
                    )),
                    last,
                )
            }
        },
    }
}

/// The element's state against the expectation.
fn compare(expectation: &Expectation, location: &Location, expected: &str) -> Result<(), String> {
    let state = location.state.clone().unwrap_or_default();
    let ElementState {
        visible,
        text,
        value,
        checked,
    } = state;
    let actual = match expectation {
        Expectation::Visible if visible => return Ok(()),
        Expectation::Visible => "it is hidden".to_string(),
        Expectation::Text(want) if collapse(want) == text => return Ok(()),
        Expectation::TextContains(want) if text.contains(collapse(want).as_str()) => return Ok(()),
        Expectation::Text(_) | Expectation::TextContains(_) => {
            format!("it is {}", rhai_string(&text))
        }
        Expectation::Value(want) => match value {
            Some(value) if value == *want => return Ok(()),
            Some(value) => format!("it is {}", rhai_string(&value)),
            None => "it is no field".to_string(),
        },
        Expectation::Checked(want) => match checked {
            Some(checked) if checked == *want => return Ok(()),
            Some(true) => "it is checked".to_string(),
            Some(false) => "it is not checked".to_string(),
            None => "it cannot be checked".to_string(),
        },
        // Answered without the element (see `look`).
        Expectation::Count(_) | Expectation::Url(_) => return Ok(()),
    };
    Err(format!(
        "expected {expected}, but {actual} ({}, found by {})",
        location.element, location.matched
    ))
}

/// What is expected, as the message says it.
fn expected_words(expectation: &Expectation) -> String {
    match expectation {
        Expectation::Visible => "it visible".to_string(),
        Expectation::Text(text) => format!("the text {}", rhai_string(text)),
        Expectation::TextContains(text) => format!("text containing {}", rhai_string(text)),
        Expectation::Value(value) => format!("the value {}", rhai_string(value)),
        Expectation::Checked(true) => "it checked".to_string(),
        Expectation::Checked(false) => "it not checked".to_string(),
        Expectation::Count(1) => "1 element".to_string(),
        Expectation::Count(n) => format!("{n} elements"),
        Expectation::Url(pattern) => format!("the URL to match {}", rhai_string(pattern)),
    }
}

/// Text with its spacing collapsed, as the page's side reads text.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(state: ElementState) -> Location {
        Location {
            selector: "#status".into(),
            matched: "id:status".into(),
            element: "<p id=status>Saved</p>".into(),
            tried: Vec::new(),
            state: Some(state),
        }
    }

    #[test]
    fn a_mismatch_says_what_was_expected_what_is_there_and_where() {
        let shown = at(ElementState {
            visible: true,
            text: "Error: try again".into(),
            value: None,
            checked: None,
        });
        let text = Expectation::Text("Saved".into());
        assert_eq!(
            compare(&text, &shown, &expected_words(&text)),
            Err(
                "expected the text \"Saved\", but it is \"Error: try again\" \
                 (<p id=status>Saved</p>, found by id:status)"
                    .into()
            )
        );
        let contains = Expectation::TextContains("try  again".into());
        assert_eq!(
            compare(&contains, &shown, &expected_words(&contains)),
            Ok(())
        );
        let checked = Expectation::Checked(true);
        assert_eq!(
            compare(&checked, &shown, &expected_words(&checked)),
            Err("expected it checked, but it cannot be checked \
                 (<p id=status>Saved</p>, found by id:status)"
                .into())
        );
    }
}
