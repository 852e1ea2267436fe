//! The browser's side of recording a person's actions (`webagent record`).
//!
//! The in-page part (`scripts/recorder.js`) runs in webagent's isolated
//! world of every document of the tab: the one open now, each frame in it,
//! and every document that loads later. It reports each action through a
//! CDP binding that only worlds of that name can see, so the page's own
//! scripts neither see the recorder nor can call it. Navigations the page
//! did not cause (a URL typed or pasted, back, forward) are read from the
//! tab's history as each new document commits.
//!
//! Not yet followed: frames of another origin (they run in a target of
//! their own) and tabs a click opens.

use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, CreateIsolatedWorldParams, EventFrameNavigated,
    FrameTree, GetFrameTreeParams, GetNavigationHistoryParams,
    RemoveScriptToEvaluateOnNewDocumentParams, ScriptIdentifier, TransitionType,
};
use chromiumoxide::cdp::js_protocol::runtime::{
    AddBindingParams, EvaluateParams, EventBindingCalled, RemoveBindingParams,
};
use chromiumoxide::Page;
use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::act::key_event_params;
use super::error::BrowserError;
use super::scripts::RECORDER_JS;
use super::tab::WORLD_NAME;
use super::Tab;
use crate::actions::KeyChord;

/// What the person does on the page's picture in the workbench: the
/// mouse, for the page at that point (CSS pixels of the viewport), and
/// keys while the pane has the keyboard. It reaches the page as trusted
/// input, so a recording takes it like a click or typing in a window.
/// A workbench attached to a named session sends it over the session's
/// socket, in JSON.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaneInput {
    /// A left click.
    Click {
        /// Across.
        x: f64,
        /// Down.
        y: f64,
    },
    /// The wheel turned by `dy` pixels (down when positive).
    Wheel {
        /// Across.
        x: f64,
        /// Down.
        y: f64,
        /// How far.
        dy: f64,
    },
    /// Text typed into the focused element (`Input.insertText`, which the
    /// page sees as typing).
    Type(String),
    /// A key pressed on the focused element (`Enter`, `Shift+Tab`), as
    /// key events.
    Press(KeyChord),
}

impl PaneInput {
    /// Sends it to `tab`'s page.
    pub async fn send(self, tab: &Tab) -> Result<(), BrowserError> {
        use chromiumoxide::cdp::browser_protocol::input::{
            DispatchMouseEventParams, DispatchMouseEventType, InsertTextParams, MouseButton,
        };
        let limit = tab.call_timeout();
        let event = |kind, x, y| {
            let mut event = DispatchMouseEventParams::new(kind, x, y);
            event.button = Some(MouseButton::Left);
            event.click_count = Some(1);
            event
        };
        let events = match self {
            PaneInput::Click { x, y } => vec![
                DispatchMouseEventParams::new(DispatchMouseEventType::MouseMoved, x, y),
                event(DispatchMouseEventType::MousePressed, x, y),
                event(DispatchMouseEventType::MouseReleased, x, y),
            ],
            PaneInput::Wheel { x, y, dy } => {
                let mut wheel =
                    DispatchMouseEventParams::new(DispatchMouseEventType::MouseWheel, x, y);
                wheel.delta_x = Some(0.0);
                wheel.delta_y = Some(dy);
                vec![wheel]
            }
            PaneInput::Type(text) => {
                let typing = tab.page().execute(InsertTextParams::new(text));
                tab.with_timeout("typing into the page", limit, typing)
                    .await?;
                return Ok(());
            }
            PaneInput::Press(chord) => {
                for key in chord.events() {
                    let press = tab.page().execute(key_event_params(&key));
                    tab.with_timeout("a key on the page", limit, press).await?;
                }
                return Ok(());
            }
        };
        for event in events {
            tab.with_timeout("the mouse on the page", limit, tab.page().execute(event))
                .await?;
        }
        Ok(())
    }
}

/// The binding the in-page part calls with each action.
const BINDING: &str = "__webagentRecord";

/// One thing the person did, as the page or the tab's history saw it.
/// `facts` are what finds the element again, as a recorded step keeps
/// them (see `locate.js`: test id, id, role and name, label, …, CSS path,
/// and the document's URL).
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A click on an element (a link, a button, a checkbox, a label).
    Click {
        /// The element clicked.
        facts: Value,
    },
    /// A field typed into and left.
    Fill {
        /// The field.
        facts: Value,
        /// What it holds; `None` for a password, whose value never leaves
        /// the page.
        value: Option<String>,
    },
    /// An option chosen in a `<select>`.
    Select {
        /// The `<select>`.
        facts: Value,
        /// The chosen option's visible text.
        text: String,
    },
    /// Files chosen in a file input.
    Upload {
        /// The file input.
        facts: Value,
        /// The files' names (a page never sees their paths).
        files: Vec<String>,
    },
    /// A key that does something.
    Keys {
        /// As `press_keys` takes them: `Enter`, `Escape`, `Control+s`.
        keys: String,
    },
    /// An element dragged onto another.
    Drag {
        /// The element picked up.
        from: Value,
        /// The element it was dropped on.
        to: Value,
    },
    /// A URL opened that the page did not link to (typed or pasted).
    Navigate {
        /// The URL.
        url: String,
    },
    /// Back one page in the tab's history.
    Back,
    /// Forward one page in the tab's history.
    Forward,
}

impl Input {
    /// The input a recorder binding call carries, or `None` for a payload
    /// that is not one (a page cannot call the binding, but nothing it
    /// sends is trusted to be well formed).
    fn from_payload(payload: &str) -> Option<Input> {
        let value: Value = serde_json::from_str(payload).ok()?;
        let facts = || value.get("facts").cloned().filter(Value::is_object);
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
        Some(match value.get("kind")?.as_str()? {
            "click" => Input::Click { facts: facts()? },
            "fill" => Input::Fill {
                facts: facts()?,
                value: if value.get("secret").and_then(Value::as_bool) == Some(true) {
                    None
                } else {
                    Some(text("value")?)
                },
            },
            "select" => Input::Select {
                facts: facts()?,
                text: text("text")?,
            },
            "upload" => Input::Upload {
                facts: facts()?,
                files: value
                    .get("files")?
                    .as_array()?
                    .iter()
                    .filter_map(|f| f.as_str().map(str::to_string))
                    .collect(),
            },
            "keys" => Input::Keys {
                keys: text("keys")?,
            },
            "drag" => Input::Drag {
                from: value.get("from").cloned().filter(Value::is_object)?,
                to: value.get("to").cloned().filter(Value::is_object)?,
            },
            _ => return None,
        })
    }
}

/// A recording in progress on one tab; dropping it stops reporting, and
/// [`Recorder::stop`] also takes the recorder out of the documents to come.
pub struct Recorder {
    inputs: mpsc::UnboundedReceiver<Input>,
    tasks: Vec<JoinHandle<()>>,
    script: ScriptIdentifier,
}

impl Drop for Recorder {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Recorder {
    /// Starts recording on `tab`: from now on, in the documents open and
    /// every one that loads later.
    pub async fn start(tab: &Tab) -> Result<Recorder, BrowserError> {
        let page = tab.page().clone();
        let limit = tab.call_timeout();
        let mut called = tab
            .with_timeout(
                "listening to the recorder",
                limit,
                page.event_listener::<EventBindingCalled>(),
            )
            .await?;
        let mut navigated = tab
            .with_timeout(
                "following navigations",
                limit,
                page.event_listener::<EventFrameNavigated>(),
            )
            .await?;
        let binding = AddBindingParams::builder()
            .name(BINDING)
            .execution_context_name(WORLD_NAME)
            .build()
            .map_err(BrowserError::Script)?;
        tab.with_timeout(
            "adding the recorder's binding",
            limit,
            page.execute(binding),
        )
        .await?;
        let script = AddScriptToEvaluateOnNewDocumentParams::builder()
            .source(RECORDER_JS)
            .world_name(WORLD_NAME)
            .build()
            .map_err(BrowserError::Script)?;
        let script = tab
            .with_timeout("installing the recorder", limit, page.execute(script))
            .await?
            .result
            .identifier;
        install_in_open_documents(tab, &page).await?;
        let (sender, inputs) = mpsc::unbounded_channel();

        let from_page = sender.clone();
        let reading = tokio::spawn(async move {
            while let Some(call) = called.next().await {
                if call.name != BINDING {
                    continue;
                }
                match Input::from_payload(&call.payload) {
                    Some(input) => {
                        if from_page.send(input).is_err() {
                            return;
                        }
                    }
                    None => tracing::debug!(payload = %call.payload, "not a recorded input"),
                }
            }
        });

        let history = page.clone();
        let mut place = history_place(&history, limit).await;
        let following = tokio::spawn(async move {
            while let Some(event) = navigated.next().await {
                if event.frame.parent_id.is_some() {
                    continue;
                }
                let now = history_place(&history, limit).await;
                if let (Some(before), Some(after)) = (&place, &now) {
                    if let Some(input) = navigation_input(before, after) {
                        if sender.send(input).is_err() {
                            return;
                        }
                    }
                }
                place = now;
            }
        });
        Ok(Recorder {
            inputs,
            tasks: vec![reading, following],
            script,
        })
    }

    /// Ends the recording on `tab` and returns what was still to come: a
    /// field being typed into gives its fill first. Later documents get
    /// no recorder, and the binding is gone.
    pub async fn stop(mut self, tab: &Tab) -> Vec<Input> {
        let flush = "globalThis.__webagentRecorderFlush && globalThis.__webagentRecorderFlush()";
        let flushed = tab.eval(flush).await;
        let mut rest = Vec::new();
        // The fill's report was sent before the evaluation answered; it
        // only has to pass the reading task.
        while let Ok(Some(input)) =
            tokio::time::timeout(std::time::Duration::from_millis(200), self.next()).await
        {
            rest.push(input);
        }
        if flushed.is_ok() {
            let page = tab.page();
            let limit = tab.call_timeout();
            let script = RemoveScriptToEvaluateOnNewDocumentParams::new(self.script.clone());
            let binding = RemoveBindingParams::new(BINDING);
            let removed = tab
                .with_timeout("removing the recorder", limit, page.execute(script))
                .await
                .and(
                    tab.with_timeout("removing the recorder", limit, page.execute(binding))
                        .await,
                );
            if let Err(error) = removed {
                tracing::debug!(%error, "the recorder stays in the tab's next documents");
            }
        }
        rest
    }

    /// The next input, or `None` once the tab is gone.
    pub async fn next(&mut self) -> Option<Input> {
        self.inputs.recv().await
    }

    /// An input already reported, without waiting.
    pub fn try_next(&mut self) -> Option<Input> {
        self.inputs.try_recv().ok()
    }
}

/// Where the tab stands in its history.
#[derive(Debug, Clone, PartialEq)]
struct Place {
    index: i64,
    length: usize,
    url: String,
    transition: TransitionType,
}

async fn history_place(page: &Page, limit: std::time::Duration) -> Option<Place> {
    let reply = tokio::time::timeout(limit, page.execute(GetNavigationHistoryParams::default()))
        .await
        .ok()?
        .ok()?;
    let history = &reply.result;
    let entry = history
        .entries
        .get(usize::try_from(history.current_index).ok()?)?;
    Some(Place {
        index: history.current_index,
        length: history.entries.len(),
        url: entry.url.clone(),
        transition: entry.transition_type.clone(),
    })
}

/// What the person did to go from `before` to `after`: back or forward
/// when only the position in an unchanged history moved, a navigation
/// when a new entry was typed or pasted. A link followed, a form sent or a
/// reload is the effect of a step already recorded (or of the page).
fn navigation_input(before: &Place, after: &Place) -> Option<Input> {
    if after.length == before.length && after.index == before.index - 1 {
        return Some(Input::Back);
    }
    if after.length == before.length && after.index == before.index + 1 {
        return Some(Input::Forward);
    }
    let typed = matches!(
        after.transition,
        TransitionType::Typed | TransitionType::AddressBar | TransitionType::Generated
    );
    (typed && (after.index != before.index || after.url != before.url)).then(|| Input::Navigate {
        url: after.url.clone(),
    })
}

/// Puts the recorder into the documents already open: the tab's and each
/// frame's of the same process (a document that loads later gets it from
/// the script registered for new documents).
async fn install_in_open_documents(tab: &Tab, page: &Page) -> Result<(), BrowserError> {
    let limit = tab.call_timeout();
    let tree = tab
        .with_timeout(
            "reading the tab's frames",
            limit,
            page.execute(GetFrameTreeParams::default()),
        )
        .await?;
    let mut frames = Vec::new();
    collect_frames(&tree.result.frame_tree, &mut frames);
    for frame in frames {
        let world = CreateIsolatedWorldParams::builder()
            .frame_id(frame)
            .world_name(WORLD_NAME)
            .build()
            .map_err(BrowserError::Script)?;
        // A frame of another process refuses: it is not followed yet.
        let Ok(created) = tab
            .with_timeout("entering a frame", limit, page.execute(world))
            .await
        else {
            continue;
        };
        let install = EvaluateParams::builder()
            .expression(RECORDER_JS)
            .context_id(created.result.execution_context_id)
            .build()
            .map_err(BrowserError::Script)?;
        if let Err(error) = tab
            .with_timeout(
                "installing the recorder in a frame",
                limit,
                page.execute(install),
            )
            .await
        {
            tracing::debug!(%error, "a frame went away while the recorder was installed");
        }
    }
    Ok(())
}

fn collect_frames(
    tree: &FrameTree,
    out: &mut Vec<chromiumoxide::cdp::browser_protocol::page::FrameId>,
) {
    out.push(tree.frame.id.clone());
    for child in tree.child_frames.iter().flatten() {
        collect_frames(child, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(index: i64, length: usize, url: &str, transition: TransitionType) -> Place {
        Place {
            index,
            length,
            url: url.into(),
            transition,
        }
    }

    #[test]
    fn history_moves_are_back_forward_or_a_typed_url_and_links_are_not_steps() {
        let a = place(1, 2, "http://x/a", TransitionType::Link);
        let back = place(0, 2, "http://x/", TransitionType::Typed);
        assert_eq!(navigation_input(&a, &back), Some(Input::Back));
        assert_eq!(navigation_input(&back, &a), Some(Input::Forward));
        let typed = place(2, 3, "http://x/b", TransitionType::Typed);
        assert_eq!(
            navigation_input(&a, &typed),
            Some(Input::Navigate {
                url: "http://x/b".into()
            })
        );
        let linked = place(2, 3, "http://x/b", TransitionType::Link);
        assert_eq!(navigation_input(&a, &linked), None);
        let sent = place(2, 3, "http://x/b", TransitionType::FormSubmit);
        assert_eq!(navigation_input(&a, &sent), None);
    }

    #[test]
    fn a_password_fill_carries_no_value_and_a_malformed_payload_is_no_input() {
        let fill =
            Input::from_payload(r#"{"kind":"fill","secret":true,"value":"x","facts":{"id":"pw"}}"#);
        assert_eq!(
            fill,
            Some(Input::Fill {
                facts: serde_json::json!({"id": "pw"}),
                value: None
            })
        );
        assert_eq!(Input::from_payload(r#"{"kind":"click"}"#), None);
        assert_eq!(Input::from_payload("not json"), None);
        assert_eq!(Input::from_payload(r#"{"kind":"launch"}"#), None);
    }
}
