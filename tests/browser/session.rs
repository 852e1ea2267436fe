//! The browser session: a dropped connection reported and attached
//! again, an address with nothing behind it, the configured window as
//! the viewport, and the tabs a session lists.

use std::time::Duration;

use webagent::browser::{BrowserError, BrowserSession, LaunchOptions, SessionStatus};

use crate::listed::find;
use crate::support::chromium::shared;
use crate::support::pages::bare_page;
use crate::support::tab::observe;

/// A TCP relay to the shared browser whose connections can be cut, to see
/// what a session does when its connection drops.
struct Relay {
    port: u16,
    cut: tokio::sync::watch::Sender<u64>,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    async fn start(target: std::net::SocketAddr) -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding the relay");
        let port = listener.local_addr().expect("relay address").port();
        let (cut, cuts) = tokio::sync::watch::channel(0u64);
        let task = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let mut cuts = cuts.clone();
                cuts.borrow_and_update();
                tokio::spawn(async move {
                    let Ok(mut upstream) = tokio::net::TcpStream::connect(target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut upstream) => {}
                        _ = cuts.changed() => {}
                    }
                });
            }
        });
        Relay { port, cut, task }
    }

    fn cut_connections(&self) {
        self.cut.send_modify(|n| *n += 1);
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[test]
fn a_dropped_connection_is_reported_and_the_session_can_reattach() {
    let s = shared();
    let ws = s
        .session
        .websocket_url()
        .expect("launched session has an address");
    let rest = ws.strip_prefix("ws://").expect("ws url");
    let (authority, path) = rest.split_once('/').expect("ws path");
    let target: std::net::SocketAddr = authority.parse().expect("browser address");
    s.runtime.block_on(async {
        let relay = Relay::start(target).await;
        let through_relay = format!("ws://127.0.0.1:{}/{path}", relay.port);
        let mut session = BrowserSession::start(LaunchOptions {
            connect: Some(through_relay),
            ..LaunchOptions::default()
        })
        .await
        .expect("attaching through the relay");
        assert_eq!(session.status(), SessionStatus::Running);
        let disconnected = session.disconnected();
        relay.cut_connections();
        let reason = tokio::time::timeout(Duration::from_secs(20), disconnected)
            .await
            .expect("the drop is noticed");
        assert!(!reason.is_empty());
        assert!(matches!(session.status(), SessionStatus::Disconnected(_)));
        let err = session.new_tab("about:blank").await.unwrap_err();
        assert!(matches!(err, BrowserError::Disconnected(_)), "{err}");
        session.relaunch().await.expect("re-attaching");
        assert_eq!(session.status(), SessionStatus::Running);
        s.server.html("/again", bare_page("<button>Again</button>"));
        let tab = session
            .new_tab(&s.server.url("/again"))
            .await
            .expect("a tab after re-attaching");
        let state = observe(&tab).await;
        assert!(find(&state, "Again").is_some(), "{}", state.listing);
        tab.close().await.expect("closing");
    });
}

#[test]
fn attaching_to_nothing_fails_with_the_address() {
    let s = shared();
    let err = s
        .runtime
        .block_on(BrowserSession::start(LaunchOptions {
            connect: Some("ws://127.0.0.1:9/devtools/browser/none".into()),
            ..LaunchOptions::default()
        }))
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("ws://127.0.0.1:9/devtools/browser/none"),
        "{text}"
    );
}

#[test]
fn the_configured_window_is_the_viewport_and_no_stray_blank_tab_is_listed() {
    let s = shared();
    s.server.html("/size", bare_page("<button>Size</button>"));
    s.runtime.block_on(async {
        let session = BrowserSession::start(LaunchOptions::default())
            .await
            .expect("a second browser");
        let tab = session
            .new_tab(&s.server.url("/size"))
            .await
            .expect("opening");
        let state = observe(&tab).await;
        let (width, height) = LaunchOptions::default().window;
        assert_eq!(state.scroll.viewport_width, f64::from(width));
        assert_eq!(state.scroll.viewport_height, f64::from(height));
        assert_eq!(state.tabs.len(), 1, "{:?}", state.tabs);
        assert!(state.tabs[0].url.ends_with("/size"), "{:?}", state.tabs);
    });
}

#[test]
fn a_session_lists_only_its_own_tabs_and_none_hides_another() {
    let s = shared();
    s.server.html(
        "/family",
        bare_page("<a id=out href=/family-child target=_blank>Out</a>"),
    );
    s.server.html("/family-child", bare_page("<p>child</p>"));
    s.server.html("/stranger", bare_page("<p>stranger</p>"));
    s.runtime.block_on(async {
        // Another session on the same browser, as a person's own tabs are
        // when webagent attaches with --cdp.
        let other = BrowserSession::start(LaunchOptions {
            connect: s.session.websocket_url(),
            ..LaunchOptions::default()
        })
        .await
        .expect("attaching a second session");
        let first = s
            .session
            .new_tab(&s.server.url("/family"))
            .await
            .expect("a tab");
        let stranger = other
            .new_tab(&s.server.url("/stranger"))
            .await
            .expect("the other session's tab");
        let second = s
            .session
            .new_tab(&s.server.url("/size-of-nothing"))
            .await
            .expect("a second tab");
        // Opening a tab leaves the earlier ones painting.
        for tab in [&first, &stranger, &second] {
            let state = tab.eval("document.visibilityState").await.expect("eval");
            assert_eq!(state, "visible", "{}", tab.target_id());
        }
        // A real click (a script's click opens no tab without a gesture).
        let state = observe(&first).await;
        let click = webagent::actions::Catalog::builtin()
            .parse(&serde_json::json!({"click": {"selector": "#out"}}))
            .expect("a click");
        let done = webagent::browser::act::Executor::new(&first, Default::default())
            .execute(&click, Some(&state))
            .await;
        assert!(done.is_ok(), "{done:?}");
        let mut urls = Vec::new();
        for _ in 0..100 {
            urls = first
                .open_tabs()
                .await
                .expect("tabs")
                .into_iter()
                .map(|t| t.url)
                .collect::<Vec<_>>();
            if urls.iter().any(|u| u.ends_with("/family-child")) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            urls.iter().any(|u| u.ends_with("/family-child")),
            "a tab the page opened is the session's: {urls:?}"
        );
        assert!(
            !urls.iter().any(|u| u.ends_with("/stranger")),
            "another session's tab is not listed: {urls:?}"
        );
        let theirs = stranger.open_tabs().await.expect("tabs");
        assert_eq!(theirs.len(), 1, "{theirs:?}");
        let _ = stranger.close().await;
        let _ = first.close().await;
        let _ = second.close().await;
    });
}
