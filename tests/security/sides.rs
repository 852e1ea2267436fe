//! The two sides of the border and the shared browser between them:
//! `home`, allowed by its exact origin, and `away`, another port that is
//! refused and counts every request it gets; a port that never answers;
//! an agent's environment on a `home` page; and the scripted model's step.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{json, Value};
use tokio::io::AsyncReadExt;
use webagent::actions::ActionResult;
use webagent::browser::act::ExecOptions;
use webagent::browser::Driver;
use webagent::browser::{BrowserSession, LaunchOptions};
use webagent::serve::{PageServer, Response};

use crate::support::chromium;
use crate::support::llm_server::{agent_step, Reply};
use crate::support::pages::page;
use crate::support::tab::{action, driver, with_page_on};

/// The binary's shared browser (see `support::chromium`), launched to
/// allow only `home`, and the other side of the border.
pub(crate) struct Shared {
    pub(crate) runtime: &'static tokio::runtime::Runtime,
    pub(crate) session: BrowserSession,
    pub(crate) home: PageServer,
    pub(crate) away: PageServer,
    /// Requests `away` received, by path.
    pub(crate) away_hits: Arc<Mutex<HashMap<String, usize>>>,
    /// A port on which connections are accepted and never answered.
    pub(crate) hanging_port: u16,
}

/// The binary's browser and both sides, started by the first caller.
pub(crate) fn shared() -> &'static Shared {
    static SHARED: OnceLock<Result<Shared, String>> = OnceLock::new();
    let shared = SHARED.get_or_init(|| {
        let chromium::Shared {
            runtime,
            session,
            server: home,
        } = chromium::Shared::start(|home| LaunchOptions {
            // `home` by its exact origin; `localhost` (any port) for the
            // hanging server; `away` matches neither.
            allowed_domains: vec![home.origin(), "http://localhost:*".into()],
            extra_args: vec![
                "--disable-background-timer-throttling".into(),
                "--disable-renderer-backgrounding".into(),
                "--disable-backgrounding-occluded-windows".into(),
            ],
            ..LaunchOptions::default()
        })?;
        let (away, hanging_port) = runtime.block_on(async {
            let away = PageServer::start().await.map_err(|e| e.to_string())?;
            Ok::<_, String>((away, start_hanging_server().await?))
        })?;
        Ok(Shared {
            runtime,
            session,
            home,
            away,
            away_hits: Arc::default(),
            hanging_port,
        })
    });
    chromium::started(shared.as_ref())
}

/// Accepts connections, reads the request, and never answers.
pub(crate) async fn start_hanging_server() -> Result<u16, String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                // Hold the socket open until the browser gives up.
                while matches!(socket.read(&mut buf).await, Ok(n) if n > 0) {}
            });
        }
    });
    Ok(port)
}

/// Serves a page on `away` that counts its requests.
pub(crate) fn away_page(path: &str) -> String {
    let s = shared();
    let hits = s.away_hits.clone();
    let key = path.to_string();
    s.away.handle(path, move |_| {
        *hits
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key.clone())
            .or_default() += 1;
        Response::html(page("Away", "<h1>You reached the blocked host</h1>"))
    });
    s.away.url(path)
}

/// How many requests `away` got for `path`.
pub(crate) fn away_hits(path: &str) -> usize {
    let hits = shared().away_hits.lock().unwrap_or_else(|e| e.into_inner());
    hits.get(path).copied().unwrap_or(0)
}

/// Opens `path` on `home` in a fresh tab and runs `body` with an agent
/// environment on it.
pub(crate) fn with_env<F, Fut>(path: &str, html: &str, body: F)
where
    F: FnOnce(Driver) -> Fut,
    Fut: Future<Output = ()>,
{
    with_env_options(path, html, ExecOptions::default(), body)
}

/// [`with_env`] with the executor's options `exec`.
pub(crate) fn with_env_options<F, Fut>(path: &str, html: &str, exec: ExecOptions, body: F)
where
    F: FnOnce(Driver) -> Fut,
    Fut: Future<Output = ()>,
{
    let s = shared();
    with_page_on(&s.session, &s.home, path, html, |tab, _| async move {
        body(driver(tab, exec)).await;
    });
}

/// Clicks the first listed element whose text contains `text`.
pub(crate) async fn click_text(env: &mut Driver, text: &str) -> ActionResult {
    let state = env.observe().await.expect("observing");
    let element = state
        .elements
        .iter()
        .find(|e| e.text.contains(text))
        .unwrap_or_else(|| panic!("no element with {text:?} in\n{}", state.listing));
    env.execute(&action(json!({"click": {"index": element.index.0}})))
        .await
}

/// Navigates to `url` and fails the test unless that works and the page
/// then shows `text`: the session is still usable.
pub(crate) async fn goes_on_to(env: &mut Driver, url: &str, text: &str) {
    let result = env
        .execute(&action(json!({"navigate": {"url": url}})))
        .await;
    assert!(result.is_ok(), "the next navigation works: {result:?}");
    let state = env.observe().await.expect("observing after");
    assert!(
        state.page_text.text.contains(text),
        "{}",
        state.page_text.text
    );
}

/// A step of the scripted model, content with the run so far.
pub(crate) fn reply(goal: &str, action: Value) -> Reply {
    agent_step("fine so far", "", goal, action)
}
