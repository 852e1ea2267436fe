//! The binary's one runtime and one Chromium, shared by its tests.
//!
//! Each test opens its own tab on the shared browser, so a binary pays for
//! one launch. Without Chromium the first test to ask fails with the error,
//! which names the command that installs it; nothing is skipped. A binary
//! whose browser needs other launch options (allowed domains, a downloads
//! folder) keeps its own static, built with [`Shared::start`] and
//! [`started`], so it still starts one browser and fails the same way.

use std::fmt::Display;
use std::sync::OnceLock;

use tokio::runtime::Runtime;
use webagent::browser::{BrowserSession, LaunchOptions};
use webagent::serve::PageServer;

/// The runtime the browser's CDP handler, the page servers and the tests'
/// async blocks run on. It starts no browser, so a test that only serves
/// HTTP runs without Chromium.
pub fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("building the test runtime")
    })
}

/// What the tests of one binary share.
pub struct Shared {
    /// The binary's [`runtime`].
    pub runtime: &'static Runtime,
    /// The one browser.
    pub session: BrowserSession,
    /// Serves the pages the tests register, on 127.0.0.1.
    pub server: PageServer,
}

impl Shared {
    /// Starts a page server and a browser launched with the options
    /// `options` makes for that server, on the binary's runtime. Keep the
    /// result in a static and hand it to [`started`].
    pub fn start(options: impl FnOnce(&PageServer) -> LaunchOptions) -> Result<Shared, String> {
        runtime().block_on(async {
            let server = PageServer::start().await.map_err(|e| e.to_string())?;
            let session = launch(options(&server)).await?;
            Ok(Shared {
                runtime: runtime(),
                session,
                server,
            })
        })
    }
}

/// Launches a browser; the error, as text, is Chromium's own (without
/// Chromium it names the command that installs it).
pub async fn launch(options: LaunchOptions) -> Result<BrowserSession, String> {
    BrowserSession::start(options)
        .await
        .map_err(|e| e.to_string())
}

/// A browser of the test's own, for a test about launching itself (a
/// profile that lasts, a browser that gets killed); without Chromium the
/// test fails saying how to install it.
pub async fn start(options: LaunchOptions) -> BrowserSession {
    started(launch(options).await)
}

/// The binary's browser and page server, started by the first caller.
pub fn shared() -> &'static Shared {
    static SHARED: OnceLock<Result<Shared, String>> = OnceLock::new();
    started(
        SHARED
            .get_or_init(|| Shared::start(|_| LaunchOptions::default()))
            .as_ref(),
    )
}

/// What a browser start gave, or the test fails with why. Browser tests
/// fail, never skip: the message names the command that installs Chromium.
pub fn started<T, E: Display>(start: Result<T, E>) -> T {
    match start {
        Ok(started) => started,
        Err(e) => panic!("these tests need Chromium: {e}"),
    }
}
