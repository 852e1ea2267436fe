//! The browser: launching or attaching to Chromium, the CDP session, and
//! observing a page as an indexed listing of interactive elements.
//!
//! # The pieces
//!
//! - [`BrowserSession`] owns one Chromium (launched with a fresh temporary
//!   profile, or attached with `--connect`). Its CDP handler runs in a task
//!   of its own that logs and skips messages it cannot decode; when the
//!   browser dies or the connection drops, [`BrowserSession::status`] turns
//!   to [`SessionStatus::Disconnected`] (and
//!   [`BrowserSession::disconnected`] resolves), every later call fails with
//!   [`BrowserError::Disconnected`] instead of hanging, and
//!   [`BrowserSession::relaunch`] starts over.
//! - [`guard`] enforces allowed domains ([`LaunchOptions::allowed_domains`]):
//!   document requests of every tab and popup are intercepted and refused
//!   ones fail; each [`Tab::guard`] logs what it refused.
//! - [`Tab`] is one page. [`Tab::observe`] returns a [`crate::dom::PageState`]:
//!   URL, title, tabs, scroll position, the element listing and page text.
//!
//! # How an observation works
//!
//! For each document webagent creates an isolated world
//! (`Page.createIsolatedWorld`) and installs the observer there once (its
//! parts are in `scripts/observer/`). The page's scripts cannot see that
//! world's variables or patch the functions it calls. One
//! `Runtime.evaluate` walks the flat tree (open shadow roots and
//! same-origin iframes included) and returns one JSON string; the listing is
//! then rendered in Rust ([`crate::dom::render_listing`]). Outside the
//! viewport plus a margin, subtrees are skipped by their box alone, so the
//! default observation costs what the visible part of the page costs;
//! [`ObserveOptions::full_page`] walks everything.
//!
//! What counts, and its limits:
//! - Click listeners are seen through a small hook
//!   (`scripts/listeners.js`) that each tab installs in the page's main
//!   world before page scripts run (DevTools' `getEventListeners` only
//!   reports its own world's listeners). Listeners added before webagent
//!   opened the tab (a browser attached with `--connect`) are not seen;
//!   cursor, role and tag still are.
//! - Covered: an element sharing area with a positioned box (fixed, sticky,
//!   absolute, z-indexed) is hit-tested at up to five points and listed only
//!   if one of them reaches it. A fixed layer over the whole viewport (a
//!   modal backdrop) covers everything outside it, also off screen.
//!   Elements in normal flow are not hit-tested: hit tests cost time in
//!   proportion to the page on long lists.
//! - Cross-origin iframes run in another process; they are listed as such,
//!   their contents are not.
//!
//! # Acting on an element (for action execution)
//!
//! The world keeps `index → element` for the latest observation (and a
//! `WeakMap` element → stable id that marks new elements with `*`). An index
//! therefore always means the exact node that was listed:
//!
//! ```no_run
//! # async fn demo(tab: &webagent::browser::Tab) -> Result<(), webagent::browser::BrowserError> {
//! use webagent::dom::ElementIndex;
//! let state = tab.observe(&Default::default()).await?;
//! // Runs in the same isolated world, on exactly the listed node. The
//! // function gets (element, args, helpers); helpers.topRect(el) is the box
//! // in top-level viewport coordinates (iframe offsets added), ready for
//! // Input.dispatchMouseEvent.
//! let box_ = tab
//!     .eval_on_index(state.observation, ElementIndex(3),
//!         "(el, args, h) => { el.scrollIntoView({block: 'center'}); return h.topRect(el); }",
//!         serde_json::json!({}))
//!     .await?;
//! # let _ = box_; Ok(()) }
//! ```
//!
//! If the node was removed or replaced since, the call fails with
//! [`BrowserError::ElementGone`]; if a newer observation exists, with
//! [`BrowserError::StaleObservation`]; after a navigation, with
//! [`BrowserError::ElementGone`] too (the world and its map are gone). It
//! never reaches another element that took the old one's place.
//! [`Tab::eval_on_selector`] does the same for CSS selectors (the caller
//! checks the restricted syntax), [`Tab::eval`] runs an expression in the
//! world, and [`Tab::page`] gives the raw chromiumoxide page for CDP
//! commands such as `Input.dispatchMouseEvent` (wrap them in
//! [`Tab::with_timeout`] so they cannot hang).

pub mod act;
mod connection;
pub mod download;
pub mod driver;
mod error;
mod frames;
pub mod guard;
mod launch;
pub mod record;
mod scripts;
mod session;
pub mod shot;
pub mod state;
mod tab;

pub use connection::SessionStatus;
pub use download::{Download, DownloadOptions, DownloadState, Downloads};
pub use driver::{Driver, DriverError, MAX_RELAUNCHES};
pub use error::{BrowserError, INSTALL_HINT};
pub(crate) use frames::place_in_frame;
pub use guard::{BlockedNavigation, DomainPolicy, GuardError, NavigationGuard, Verdict};
pub(crate) use launch::shared_flags;
pub use launch::{find_chrome, LaunchOptions};
pub(crate) use scripts::LOCATE_JS;
pub use session::{BrowserSession, IsolatedContext};
pub use state::StorageState;
pub use tab::{AnsweredDialog, ObserveOptions, Tab};
