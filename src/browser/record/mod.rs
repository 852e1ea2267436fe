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
//! A tab a click opens is followed too (its switch is a step), and the
//! dialogs of every recorded tab wait for the person, whose answer is a
//! step. Frames of another origin, which run in targets of their own, get
//! the recorder through sessions of their own (`frames`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, CreateIsolatedWorldParams, EventFrameNavigated,
    EventJavascriptDialogClosed, EventJavascriptDialogOpening, FrameTree, GetFrameTreeParams,
    GetNavigationHistoryParams, HandleJavaScriptDialogParams,
    RemoveScriptToEvaluateOnNewDocumentParams, ScriptIdentifier, TransitionType,
};
use chromiumoxide::cdp::browser_protocol::target::EventTargetCreated;
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
use super::frames::{place_in_frame, within, CdpTarget};
use super::scripts::RECORDER_JS;
use super::tab::{DialogHold, WORLD_NAME};
use super::Tab;
use crate::actions::KeyChord;

mod frames;

use frames::FarFrames;

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
    /// The pointer rested on an element that revealed the one clicked
    /// next (a menu that opens on hover).
    Hover {
        /// The element hovered.
        facts: Value,
    },
    /// A click opened a tab, and the person went on there.
    SwitchTab {
        /// The new tab's page.
        url: String,
    },
    /// The page opened a dialog, which waits for the person's answer
    /// (in the window, or [`crate::browser::Tab::answer_dialog`]). Not a
    /// step: the answer is.
    DialogOpened {
        /// `alert`, `confirm`, `prompt` or `beforeunload`.
        kind: String,
        /// The text the page showed.
        message: String,
    },
    /// The person answered the page's dialog.
    Dialog {
        /// `alert`, `confirm`, `prompt` or `beforeunload`.
        kind: String,
        /// Accepted (rather than dismissed).
        accepted: bool,
        /// What a prompt was answered with.
        text: Option<String>,
    },
    /// An element picked to assert on (Alt+Shift+A with the pointer over
    /// it, in a headed window): no step of its own; the workbench opens
    /// its assertion picker, and a recording without one checks that it
    /// is visible.
    Pick {
        /// The element under the pointer.
        facts: Value,
    },
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
            "pick" => Input::Pick { facts: facts()? },
            "drag" => Input::Drag {
                from: value.get("from").cloned().filter(Value::is_object)?,
                to: value.get("to").cloned().filter(Value::is_object)?,
            },
            "hover" => Input::Hover { facts: facts()? },
            _ => return None,
        })
    }
}

impl Input {
    /// Puts right the facts a recorder in a frame of another origin
    /// reported: its CSS path gets `path` (the way to the frame's
    /// `<iframe>` from the tab's top document) in front, or is dropped
    /// when that way is unknown, and the address is the tab's `url`.
    fn place_in_frame(&mut self, path: Option<&str>, url: &str) {
        let facts: Vec<&mut Value> = match self {
            Input::Click { facts }
            | Input::Fill { facts, .. }
            | Input::Select { facts, .. }
            | Input::Upload { facts, .. }
            | Input::Hover { facts }
            | Input::Pick { facts } => vec![facts],
            Input::Drag { from, to } => vec![from, to],
            _ => Vec::new(),
        };
        for facts in facts {
            place_in_frame(facts, path, Some(url));
        }
    }
}

/// A recording in progress on one tab and the tabs its clicks open;
/// dropping it stops reporting, and [`Recorder::stop`] also takes the
/// recorder out of the documents to come.
pub struct Recorder {
    inputs: mpsc::UnboundedReceiver<Input>,
    /// The tasks that watch the pages, those of tabs opened later too.
    tasks: Tasks,
    /// Each page recorded, with its recorder script for new documents.
    /// Tabs opened later are added by the watching task.
    pages: Arc<Mutex<Vec<(Page, ScriptIdentifier)>>>,
    /// The dialogs left to the person, of each tab webagent drove while
    /// recording; answered again once the recorder is gone.
    holds: Vec<DialogHold>,
    /// The page whose dialog waits for the person's answer.
    waiting: Waiting,
    /// The frames of another origin in the recorded tabs.
    far: Option<Arc<FarFrames>>,
}

/// The page whose dialog is open, if one is.
type Waiting = Arc<Mutex<Option<Page>>>;

/// The recorder's tasks, which the recorder ends when it goes.
type Tasks = Arc<Mutex<Vec<JoinHandle<()>>>>;

impl Drop for Recorder {
    fn drop(&mut self) {
        for task in self.tasks.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            task.abort();
        }
    }
}

impl Recorder {
    /// Starts recording on `tab`: from now on, in the documents open and
    /// every one that loads later, and in every tab a click of a recorded
    /// tab opens. The tab's dialogs are left to the person until the
    /// recording stops: their answers are steps.
    pub async fn start(tab: &Tab) -> Result<Recorder, BrowserError> {
        let limit = tab.call_timeout();
        let (sender, inputs) = mpsc::unbounded_channel();
        let tasks = Tasks::default();
        let waiting = Waiting::default();
        let script = follow(tab.page(), limit, &sender, &waiting, &tasks).await?;
        install_in_open_documents(tab.page(), limit).await?;
        let holds = vec![tab.hold_dialogs()];
        let pages = Arc::new(Mutex::new(vec![(tab.page().clone(), script)]));
        let mut far = None;
        if let Some(browser) = tab.browser() {
            far = match FarFrames::start(&browser, limit).await {
                Ok(frames) => Some(Arc::new(frames)),
                Err(error) => {
                    tracing::debug!(%error, "frames of another origin are not recorded");
                    None
                }
            };
            let mut created = tab
                .with_timeout(
                    "watching for new tabs",
                    limit,
                    browser.event_listener::<EventTargetCreated>(),
                )
                .await?;
            // Frames open now, once new ones are heard of (a frame met
            // twice is followed once).
            if let Some(frames) = &far {
                let open = pages_of(&pages);
                frames.adopt_open(&browser, &open, &sender, &tasks).await;
            }
            let followed = Arc::clone(&pages);
            let dialogs = Arc::clone(&waiting);
            let opener = tab.target_id().to_string();
            let watching = Arc::clone(&tasks);
            let frames = far.clone();
            let watcher = tokio::spawn(async move {
                let mut recorded = vec![opener];
                while let Some(event) = created.next().await {
                    let info = &event.target_info;
                    if info.r#type == "iframe" {
                        if let Some(frames) = &frames {
                            let open = pages_of(&followed);
                            frames.adopt(info, &open, &sender, &watching).await;
                        }
                        continue;
                    }
                    let by_a_recorded_tab = info
                        .opener_id
                        .as_ref()
                        .is_some_and(|o| recorded.contains(o.inner()));
                    if info.r#type != "page" || !by_a_recorded_tab {
                        continue;
                    }
                    let Some(page) = attached(&browser, &info.target_id).await else {
                        tracing::debug!(url = %info.url, "a tab a click opened could not be reached");
                        continue;
                    };
                    match follow(&page, limit, &sender, &dialogs, &watching).await {
                        Ok(script) => {
                            if let Err(error) = install_in_open_documents(&page, limit).await {
                                tracing::debug!(%error, "the new tab's first document has no recorder");
                            }
                            recorded.push(info.target_id.inner().clone());
                            followed
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .push((page.clone(), script));
                        }
                        Err(error) => {
                            tracing::debug!(%error, "a tab a click opened is not recorded");
                            continue;
                        }
                    }
                    let url = loaded_url(&page, NEW_TAB_LOAD).await;
                    if sender.send(Input::SwitchTab { url }).is_err() {
                        break;
                    }
                }
            });
            tasks
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(watcher);
        }
        Ok(Recorder {
            inputs,
            tasks,
            pages,
            holds,
            waiting,
            far,
        })
    }

    /// Ends the recording on `tab` and returns what was still to come: a
    /// field being typed into gives its fill first. Later documents get
    /// no recorder, the binding is gone, and dialogs are answered again.
    pub async fn stop(mut self, tab: &Tab) -> Vec<Input> {
        let flush = "globalThis.__webagentRecorderFlush && globalThis.__webagentRecorderFlush()";
        let flushed = tab.eval(flush).await;
        if let Some(frames) = self.far.take() {
            frames.flush().await;
        }
        self.holds.clear();
        let mut rest = Vec::new();
        // The fill's report was sent before the evaluation answered; it
        // only has to pass the reading task.
        while let Ok(Some(input)) =
            tokio::time::timeout(std::time::Duration::from_millis(200), self.next()).await
        {
            rest.push(input);
        }
        if flushed.is_ok() {
            let limit = tab.call_timeout();
            let pages = std::mem::take(&mut *self.pages.lock().unwrap_or_else(|e| e.into_inner()));
            for (page, script) in pages {
                let script = RemoveScriptToEvaluateOnNewDocumentParams::new(script);
                let binding = RemoveBindingParams::new(BINDING);
                let removed = async {
                    page.execute(script).await?;
                    page.execute(binding).await
                };
                match tokio::time::timeout(limit, removed).await {
                    Ok(Ok(_)) => {}
                    Ok(Err(error)) => {
                        tracing::debug!(%error, "the recorder stays in the tab's next documents")
                    }
                    Err(_) => tracing::debug!("removing the recorder took too long"),
                }
            }
        }
        rest
    }

    /// Answers the dialog open on a recorded tab, as the person chose
    /// (`text` for a prompt). The answer is reported as a step like one
    /// given in the window.
    pub async fn answer_dialog(
        &self,
        accept: bool,
        text: Option<String>,
    ) -> Result<(), BrowserError> {
        let page = self
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let Some(page) = page else {
            return Err(BrowserError::Script("no dialog is open".into()));
        };
        let mut answer = HandleJavaScriptDialogParams::new(accept);
        answer.prompt_text = text;
        within(
            "answering the dialog",
            Duration::from_secs(5),
            page.execute(answer),
        )
        .await
        .map(|_| ())
    }

    /// Leaves `tab`'s dialogs to the person too while the recording runs
    /// (a tab a click opened, once webagent drives it).
    pub fn hold_dialogs_of(&mut self, tab: &Tab) {
        self.holds.push(tab.hold_dialogs());
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

/// Gives `target` (a tab, or a frame of another origin) the binding the
/// recorder reports through and the recorder for its documents to come;
/// the script's id, to take it out again.
async fn register(
    target: &impl CdpTarget,
    limit: Duration,
) -> Result<ScriptIdentifier, BrowserError> {
    let binding = AddBindingParams::builder()
        .name(BINDING)
        .execution_context_name(WORLD_NAME)
        .build()
        .map_err(BrowserError::Script)?;
    target
        .run(binding, "adding the recorder's binding", limit)
        .await?;
    let script = AddScriptToEvaluateOnNewDocumentParams::builder()
        .source(RECORDER_JS)
        .world_name(WORLD_NAME)
        .build()
        .map_err(BrowserError::Script)?;
    Ok(target
        .run(script, "installing the recorder", limit)
        .await?
        .identifier)
}

/// The pages recorded now.
fn pages_of(pages: &Mutex<Vec<(Page, ScriptIdentifier)>>) -> Vec<Page> {
    let pages = pages.lock().unwrap_or_else(|e| e.into_inner());
    pages.iter().map(|(page, _)| page.clone()).collect()
}

/// Starts recording `page`: its binding and the recorder for its new
/// documents, and tasks (added to `tasks`) that send what the person does
/// there to `sender`: the recorder's reports, history moves, and the
/// dialogs they answer. The recorder script's id, to remove it.
async fn follow(
    page: &Page,
    limit: Duration,
    sender: &mpsc::UnboundedSender<Input>,
    waiting: &Waiting,
    tasks: &Tasks,
) -> Result<ScriptIdentifier, BrowserError> {
    let (mut called, mut navigated, mut opening, mut closed) = (
        within(
            "listening to the recorder",
            limit,
            page.event_listener::<EventBindingCalled>(),
        )
        .await?,
        within(
            "following navigations",
            limit,
            page.event_listener::<EventFrameNavigated>(),
        )
        .await?,
        within(
            "watching dialogs",
            limit,
            page.event_listener::<EventJavascriptDialogOpening>(),
        )
        .await?,
        within(
            "watching dialogs",
            limit,
            page.event_listener::<EventJavascriptDialogClosed>(),
        )
        .await?,
    );
    let script = register(page, limit).await?;

    let from_page = sender.clone();
    let mut spawned = Vec::new();
    spawned.push(tokio::spawn(async move {
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
    }));

    let history = page.clone();
    let moves = sender.clone();
    let mut place = history_place(&history, limit).await;
    spawned.push(tokio::spawn(async move {
        while let Some(event) = navigated.next().await {
            if event.frame.parent_id.is_some() {
                continue;
            }
            let now = history_place(&history, limit).await;
            if let (Some(before), Some(after)) = (&place, &now) {
                if let Some(input) = navigation_input(before, after) {
                    if moves.send(input).is_err() {
                        return;
                    }
                }
            }
            place = now;
        }
    }));

    // The closing event does not say which dialog: the last one opened.
    let answers = sender.clone();
    let (waiting, on) = (Arc::clone(waiting), page.clone());
    spawned.push(tokio::spawn(async move {
        let mut open: Option<String> = None;
        loop {
            tokio::select! {
                Some(dialog) = opening.next() => {
                    let kind = dialog.r#type.as_ref().to_string();
                    open = Some(kind.clone());
                    *waiting.lock().unwrap_or_else(|e| e.into_inner()) = Some(on.clone());
                    let message = dialog.message.clone();
                    if answers.send(Input::DialogOpened { kind, message }).is_err() {
                        return;
                    }
                }
                Some(answer) = closed.next() => {
                    let kind = open.take().unwrap_or_else(|| "dialog".to_string());
                    waiting.lock().unwrap_or_else(|e| e.into_inner()).take();
                    let text = (kind == "prompt" && answer.result).then(|| answer.user_input.clone());
                    let input = Input::Dialog { kind, accepted: answer.result, text };
                    if answers.send(input).is_err() {
                        return;
                    }
                }
                else => return,
            }
        }
    }));
    tasks
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(spawned);
    Ok(script)
}

/// The page of a tab just created, once chromiumoxide has attached to it
/// (it is announced before), within two seconds.
async fn attached(
    browser: &chromiumoxide::Browser,
    id: &chromiumoxide::cdp::browser_protocol::target::TargetId,
) -> Option<Page> {
    for _ in 0..80 {
        if let Ok(page) = browser.get_page(id.clone()).await {
            return Some(page);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    None
}

/// How long a tab a click opened has to load before its switch is
/// recorded (at the URL it has by then).
const NEW_TAB_LOAD: Duration = Duration::from_secs(10);

/// The URL a new tab settles on (it opens on `about:blank` first), within
/// `limit`; the last one seen after that.
async fn loaded_url(page: &Page, limit: Duration) -> String {
    let deadline = tokio::time::Instant::now() + limit;
    let mut last = String::new();
    loop {
        let read = tokio::time::timeout(
            Duration::from_secs(2),
            page.evaluate("[location.href, document.readyState]"),
        )
        .await;
        if let Ok(Ok(value)) = read {
            if let Ok(pair) = value.into_value::<Vec<String>>() {
                last = pair.first().cloned().unwrap_or_default();
                if pair.get(1).map(String::as_str) == Some("complete") && last != "about:blank" {
                    return last;
                }
            }
        }
        if tokio::time::Instant::now() >= deadline {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
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

/// Puts the recorder into the documents already open in `target` (a tab,
/// or a frame of another origin): its own and each frame's of the same
/// process (a document that loads later gets it from the script
/// registered for new documents).
async fn install_in_open_documents(
    target: &impl CdpTarget,
    limit: Duration,
) -> Result<(), BrowserError> {
    let tree = target
        .run(
            GetFrameTreeParams::default(),
            "reading the tab's frames",
            limit,
        )
        .await?;
    let mut frames = Vec::new();
    collect_frames(&tree.frame_tree, &mut frames);
    for frame in frames {
        let world = CreateIsolatedWorldParams::builder()
            .frame_id(frame)
            .world_name(WORLD_NAME)
            .build()
            .map_err(BrowserError::Script)?;
        // A frame of another process refuses: it has a session of its own.
        let Ok(created) = target.run(world, "entering a frame", limit).await else {
            continue;
        };
        let install = EvaluateParams::builder()
            .expression(RECORDER_JS)
            .context_id(created.execution_context_id)
            .build()
            .map_err(BrowserError::Script)?;
        if target
            .run(install, "installing the recorder", limit)
            .await
            .is_err()
        {
            tracing::debug!("a frame went away while the recorder was installed");
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

    #[test]
    fn a_pick_carries_the_facts_of_the_element_under_the_pointer() {
        let pick = Input::from_payload(
            r#"{"kind":"pick","facts":{"tag":"h1","text":"Orders"},"url":"http://x/"}"#,
        );
        assert_eq!(
            pick,
            Some(Input::Pick {
                facts: serde_json::json!({"tag": "h1", "text": "Orders"})
            })
        );
        assert_eq!(Input::from_payload(r#"{"kind":"pick"}"#), None);
    }
}
