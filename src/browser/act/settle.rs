//! Waiting for a page to settle after an action: a navigation's load event
//! when one started, then a short quiet period without DOM mutations or
//! requests in flight, and without what the action set going (timers and
//! animation frames its input asked for, CSS transitions and animations,
//! Web Animations; see `domQuiet` in the action helper's `settle.js`).
//! Never a fixed sleep: a page that reacts at once is done after one quiet
//! period, and what is waited for is capped by [`SettleOptions::max`].

use std::collections::HashSet;
use std::pin::Pin;
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, ResourceType,
};
use chromiumoxide::cdp::browser_protocol::page::{
    EventFrameNavigated, EventFrameRequestedNavigation, EventFrameStartedLoading,
    EventFrameStoppedLoading, EventLoadEventFired, EventNavigatedWithinDocument,
};
use futures_util::stream::{select_all, Stream, StreamExt};
use futures_util::FutureExt;

use crate::browser::scripts::ACT_JS;
use crate::browser::tab::Tab;

/// One page event the settle logic cares about.
#[derive(Debug)]
enum PageEvent {
    /// A navigation of some frame was requested or started loading.
    NavigationStarted(String),
    /// A frame committed a new document.
    Committed(String),
    /// The URL changed without a new document (history API, fragment).
    SameDocument(String),
    /// The top document's load event fired.
    Loaded,
    /// A frame stopped loading (also ends a navigation that never commits,
    /// such as a download or a 204).
    Stopped(String),
    /// A request started.
    RequestStarted(String),
    /// A request finished or failed.
    RequestEnded(String),
}

impl PageEvent {
    /// Where the event falls in a navigation: requested, committed, loaded;
    /// a request's start before its end.
    fn phase(&self) -> u8 {
        match self {
            PageEvent::NavigationStarted(_) => 0,
            PageEvent::Committed(_) | PageEvent::SameDocument(_) => 1,
            PageEvent::RequestStarted(_) => 2,
            PageEvent::RequestEnded(_) => 3,
            PageEvent::Loaded | PageEvent::Stopped(_) => 4,
        }
    }
}

type EventStreamBox = Pin<Box<dyn Stream<Item = PageEvent> + Send>>;

/// How long settling may take and what counts as quiet.
#[derive(Debug, Clone, PartialEq)]
pub struct SettleOptions {
    /// How long the DOM must stay unchanged (and the network idle).
    pub quiet: Duration,
    /// The longest settling may take without a navigation.
    pub max: Duration,
    /// The longest a navigation started by the action may take to load.
    pub navigation: Duration,
}

impl Default for SettleOptions {
    fn default() -> Self {
        SettleOptions {
            quiet: Duration::from_millis(20),
            max: Duration::from_secs(1),
            navigation: Duration::from_secs(20),
        }
    }
}

/// What settling saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settled {
    /// Time spent settling.
    pub settle_ms: f64,
    /// The top document was replaced (or the URL changed in place).
    pub navigated: bool,
    /// A navigation started but did not finish loading in time.
    pub load_timed_out: bool,
    /// Requests still in flight when settling gave up waiting on them.
    pub pending_requests: usize,
}

/// Page events from before an action until after it: subscribe first, act,
/// then [`NavWatch::settle`].
pub(crate) struct NavWatch {
    events: futures_util::stream::SelectAll<EventStreamBox>,
    main_frame: Option<String>,
    in_flight: HashSet<String>,
    /// Requests that ended before their start was seen: the events come
    /// over separate streams, whose order between them is not kept, so a
    /// fast request's end can arrive first.
    ended_early: HashSet<String>,
    navigating: bool,
    navigated: bool,
    /// A navigation of the top frame stopped before any document came: a
    /// download, a 204, a cancelled load.
    stopped_without_document: bool,
    /// When the watch began, just before the action: animations that
    /// started earlier are not the action's.
    began: Instant,
    /// The page's events ended: its tab was closed (a popup that closed
    /// itself) or the browser went away. Nothing more is coming to wait for.
    ended: bool,
}

fn boxed<T, S, F>(stream: S, map: F) -> EventStreamBox
where
    S: Stream<Item = std::sync::Arc<T>> + Send + 'static,
    F: Fn(&T) -> Option<PageEvent> + Send + 'static,
    T: Send + Sync + 'static,
{
    Box::pin(stream.filter_map(move |e| futures_util::future::ready(map(&e))))
}

impl NavWatch {
    /// Subscribes to the events of `tab`. Failing to subscribe only costs
    /// navigation detection, so errors leave that stream out.
    pub(crate) async fn start(tab: &Tab) -> NavWatch {
        let began = Instant::now();
        let page = tab.page();
        let mut streams: Vec<EventStreamBox> = Vec::new();
        if let Ok(s) = page.event_listener::<EventFrameRequestedNavigation>().await {
            streams.push(boxed(s, |e| {
                Some(PageEvent::NavigationStarted(e.frame_id.inner().clone()))
            }));
        }
        if let Ok(s) = page.event_listener::<EventFrameStartedLoading>().await {
            streams.push(boxed(s, |e| {
                Some(PageEvent::NavigationStarted(e.frame_id.inner().clone()))
            }));
        }
        if let Ok(s) = page.event_listener::<EventFrameNavigated>().await {
            streams.push(boxed(s, |e| {
                e.frame
                    .parent_id
                    .is_none()
                    .then(|| PageEvent::Committed(e.frame.id.inner().clone()))
            }));
        }
        if let Ok(s) = page.event_listener::<EventNavigatedWithinDocument>().await {
            streams.push(boxed(s, |e| {
                Some(PageEvent::SameDocument(e.frame_id.inner().clone()))
            }));
        }
        if let Ok(s) = page.event_listener::<EventLoadEventFired>().await {
            streams.push(boxed(s, |_| Some(PageEvent::Loaded)));
        }
        if let Ok(s) = page.event_listener::<EventFrameStoppedLoading>().await {
            streams.push(boxed(s, |e| {
                Some(PageEvent::Stopped(e.frame_id.inner().clone()))
            }));
        }
        if let Ok(s) = page.event_listener::<EventRequestWillBeSent>().await {
            streams.push(boxed(s, |e| {
                // Long-lived channels never finish; waiting on them would
                // always hit the cap.
                let long_lived = matches!(
                    e.r#type,
                    Some(ResourceType::EventSource) | Some(ResourceType::WebSocket)
                );
                (!long_lived).then(|| PageEvent::RequestStarted(e.request_id.inner().clone()))
            }));
        }
        if let Ok(s) = page.event_listener::<EventLoadingFinished>().await {
            streams.push(boxed(s, |e| {
                Some(PageEvent::RequestEnded(e.request_id.inner().clone()))
            }));
        }
        if let Ok(s) = page.event_listener::<EventLoadingFailed>().await {
            streams.push(boxed(s, |e| {
                Some(PageEvent::RequestEnded(e.request_id.inner().clone()))
            }));
        }
        let main_frame = match tab
            .with_timeout(
                "finding the main frame",
                tab.call_timeout(),
                page.mainframe(),
            )
            .await
        {
            Ok(frame) => frame.map(|f| f.inner().clone()),
            Err(err) => {
                tracing::debug!(%err, "no main frame id; any frame's navigation counts");
                None
            }
        };
        NavWatch {
            events: select_all(streams),
            main_frame,
            in_flight: HashSet::new(),
            ended_early: HashSet::new(),
            navigating: false,
            navigated: false,
            stopped_without_document: false,
            began,
            ended: false,
        }
    }

    /// Marks a navigation as started (the caller knows it asked for one).
    pub(crate) fn expect_navigation(&mut self) {
        self.navigating = true;
    }

    fn is_main(&self, frame: &str) -> bool {
        self.main_frame.as_deref().is_none_or(|m| m == frame)
    }

    fn apply(&mut self, event: PageEvent) {
        match event {
            PageEvent::NavigationStarted(frame) if self.is_main(&frame) => {
                self.navigating = true;
            }
            PageEvent::Committed(frame) => {
                // The main frame keeps its id across same-process
                // navigations, but a cross-process one may change it.
                self.main_frame = Some(frame);
                self.navigating = true;
                self.navigated = true;
            }
            PageEvent::SameDocument(frame) if self.is_main(&frame) => self.navigated = true,
            PageEvent::Loaded if self.navigating => self.navigating = false,
            PageEvent::Stopped(frame) if self.navigating && self.is_main(&frame) => {
                self.navigating = false;
                self.stopped_without_document |= !self.navigated;
            }
            // The guards do the bookkeeping: a start whose end came first
            // (or an end whose start came first) only clears its note.
            PageEvent::RequestStarted(id) if !self.ended_early.remove(&id) => {
                self.in_flight.insert(id);
            }
            PageEvent::RequestEnded(id) if !self.in_flight.remove(&id) => {
                self.ended_early.insert(id);
            }
            _ => {}
        }
    }

    /// Applies every event already delivered, without waiting. Each kind
    /// of event comes over a stream of its own, and the streams' order
    /// between them is lost once several wait (all of a navigation's
    /// events wait while `Page.navigate` is answered), so they are applied
    /// in the order a navigation produces them.
    fn drain(&mut self) {
        let mut waiting = Vec::new();
        while let Some(Some(event)) = self.events.next().now_or_never() {
            waiting.push(event);
        }
        waiting.sort_by_key(PageEvent::phase);
        for event in waiting {
            self.apply(event);
        }
    }

    /// Waits for one event until `deadline`; false when the time ran out or
    /// the streams ended.
    async fn next_until(&mut self, deadline: Instant) -> bool {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, self.events.next()).await {
            Ok(Some(event)) => {
                self.apply(event);
                true
            }
            Ok(None) => {
                self.ended = true;
                false
            }
            Err(_) => false,
        }
    }

    /// Settled without asking the page, after a first look found the new
    /// document done loading: the load was seen and no request is in
    /// flight. `None` when that is not so, and settling must ask.
    pub(crate) fn settled_at_load(&mut self, started: Instant) -> Option<Settled> {
        self.drain();
        if self.navigating || !self.navigated || !self.in_flight.is_empty() {
            return None;
        }
        Some(Settled {
            settle_ms: started.elapsed().as_secs_f64() * 1000.0,
            navigated: true,
            load_timed_out: false,
            pending_requests: 0,
        })
    }

    /// Waits until the page has settled: DOM quiet, then any navigation's
    /// load, then requests in flight, then DOM quiet again if anything moved.
    /// A tab that closed is settled at once: its page answers nothing more.
    pub(crate) async fn settle(&mut self, tab: &Tab, opts: &SettleOptions) -> Settled {
        let started = Instant::now();
        let mut load_timed_out = false;
        let quiet_deadline = started + opts.max;
        // Round 1: whatever the action changed in place, or the document a
        // navigation loaded.
        self.drain();
        let loaded = self.navigated && !self.navigating;
        let mut closing = dom_quiet(tab, opts.quiet, opts.max, self.began.elapsed(), loaded).await;
        self.drain();
        for _round in 0..4 {
            if tab.is_closed() || self.ended {
                break;
            }
            let mut waited = false;
            if self.navigating {
                let deadline = Instant::now() + opts.navigation;
                while self.navigating {
                    if !self.next_until(deadline).await {
                        load_timed_out = self.navigating && !self.ended;
                        break;
                    }
                }
                waited = true;
            }
            if !self.in_flight.is_empty() && Instant::now() < quiet_deadline {
                // Network idle: nothing in flight for one quiet period.
                loop {
                    self.drain();
                    if self.in_flight.is_empty() || self.navigating {
                        break;
                    }
                    if !self.next_until(quiet_deadline).await {
                        break;
                    }
                }
                waited = true;
            }
            if !waited {
                break;
            }
            let left = quiet_deadline
                .saturating_duration_since(Instant::now())
                .max(opts.quiet * 2);
            let loaded = self.navigated && !self.navigating;
            closing |= dom_quiet(tab, opts.quiet, left, self.began.elapsed(), loaded).await;
            self.drain();
            if !self.navigating && self.in_flight.is_empty() {
                break;
            }
        }
        // The page closed its window (a popup handing a value to its
        // opener); the browser takes a moment to destroy the tab, and the
        // action is done when it has.
        if closing && !tab.is_closed() && !tab.closed_within(opts.max).await {
            tracing::debug!("the page asked to close its window; the tab stayed");
        }
        if self.stopped_without_document {
            tab.note_navigation_without_document();
        }
        Settled {
            settle_ms: started.elapsed().as_secs_f64() * 1000.0,
            navigated: self.navigated,
            load_timed_out,
            pending_requests: self.in_flight.len(),
        }
    }
}

/// Waits in the page until no DOM mutation happened for `quiet`, and what
/// the action started (timers, animation frames, animations begun since
/// `since_ago`) is over, for at most `max`. `loaded`: a navigation loaded
/// the document, so the quiet counts from its load event. A document
/// replaced meanwhile (the world's context destroyed) ends the wait: the
/// caller's events say what happened. True when the page asked to close
/// its window.
async fn dom_quiet(
    tab: &Tab,
    quiet: Duration,
    max: Duration,
    since_ago: Duration,
    loaded: bool,
) -> bool {
    let expression = format!(
        "globalThis.__webagentAct ? globalThis.__webagentAct.domQuiet({}, {}, {}, {loaded}) : 'missing'",
        quiet.as_millis(),
        max.as_millis(),
        since_ago.as_millis()
    );
    for _ in 0..2 {
        match tab.eval(&expression).await {
            Ok(serde_json::Value::String(s)) if s == "missing" => {
                // A new document: its world has the observer but not yet
                // the action helper.
                if let Err(err) = tab.eval(ACT_JS).await {
                    tracing::debug!(%err, "installing the action helper");
                    return false;
                }
            }
            Ok(quiet) => return quiet.get("closing") == Some(&serde_json::Value::Bool(true)),
            Err(err) => {
                tracing::debug!(%err, "DOM quiet wait ended early");
                return false;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A watch over events already delivered, in the order given.
    fn watch_over(events: Vec<PageEvent>) -> NavWatch {
        let stream: EventStreamBox = Box::pin(futures_util::stream::iter(events));
        NavWatch {
            events: select_all(vec![stream]),
            main_frame: Some("main".into()),
            in_flight: HashSet::new(),
            ended_early: HashSet::new(),
            navigating: false,
            navigated: false,
            stopped_without_document: false,
            began: Instant::now(),
            ended: false,
        }
    }

    #[test]
    fn events_that_waited_are_applied_in_a_navigations_order() {
        // All of a navigation's events wait while Page.navigate is
        // answered, and come out of their separate streams in any order.
        let mut watch = watch_over(vec![
            PageEvent::Loaded,
            PageEvent::RequestEnded("frame".into()),
            PageEvent::Stopped("main".into()),
            PageEvent::Committed("main".into()),
            PageEvent::RequestStarted("frame".into()),
            PageEvent::NavigationStarted("main".into()),
        ]);
        watch.expect_navigation();
        watch.drain();
        assert!(watch.navigated);
        assert!(!watch.navigating, "the load was seen");
        assert!(watch.in_flight.is_empty(), "{:?}", watch.in_flight);
    }

    #[test]
    fn a_navigation_that_stops_before_a_document_is_told_from_one_that_loads() {
        // A link to a download starts a navigation that never commits.
        let mut watch = watch_over(vec![
            PageEvent::NavigationStarted("main".into()),
            PageEvent::Stopped("main".into()),
        ]);
        watch.drain();
        assert!(watch.stopped_without_document && !watch.navigated);
        let mut watch = watch_over(vec![
            PageEvent::NavigationStarted("main".into()),
            PageEvent::Committed("main".into()),
            PageEvent::Stopped("main".into()),
        ]);
        watch.drain();
        assert!(!watch.stopped_without_document && watch.navigated);
        // A frame's load stopping says nothing of the top frame.
        let mut watch = watch_over(vec![
            PageEvent::NavigationStarted("main".into()),
            PageEvent::Stopped("child".into()),
        ]);
        watch.drain();
        assert!(!watch.stopped_without_document && watch.navigating);
    }

    #[test]
    fn a_first_look_settles_a_loaded_page_only_with_nothing_in_flight() {
        let loaded = || {
            vec![
                PageEvent::NavigationStarted("main".into()),
                PageEvent::Committed("main".into()),
                PageEvent::Loaded,
            ]
        };
        let mut watch = watch_over(loaded());
        watch.expect_navigation();
        let settled = watch
            .settled_at_load(Instant::now())
            .expect("settled at load");
        assert!(settled.navigated && !settled.load_timed_out);
        // A request the page started after its load may still change it.
        let mut events = loaded();
        events.push(PageEvent::RequestStarted("data".into()));
        let mut watch = watch_over(events);
        watch.expect_navigation();
        assert_eq!(watch.settled_at_load(Instant::now()), None);
        // No load seen yet.
        let mut watch = watch_over(vec![PageEvent::Committed("main".into())]);
        watch.expect_navigation();
        assert_eq!(watch.settled_at_load(Instant::now()), None);
    }

    #[test]
    fn a_request_whose_end_came_first_is_not_waited_for() {
        let mut watch = watch_over(Vec::new());
        watch.apply(PageEvent::RequestEnded("fast".into()));
        watch.apply(PageEvent::RequestStarted("fast".into()));
        watch.apply(PageEvent::RequestStarted("slow".into()));
        assert_eq!(watch.in_flight, HashSet::from(["slow".to_string()]));
        watch.apply(PageEvent::RequestEnded("slow".into()));
        assert!(watch.in_flight.is_empty() && watch.ended_early.is_empty());
    }
}
