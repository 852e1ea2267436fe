//! One Chromium and one page server per test binary, shared by its tests.
//!
//! Each test opens its own tab on the shared browser, so a binary pays for
//! one launch. Without Chromium the first test to ask fails with the error,
//! which names the command that installs it; nothing is skipped.

use std::sync::OnceLock;

use webagent::browser::{BrowserSession, LaunchOptions};
use webagent::serve::PageServer;

/// What the tests of one binary share.
pub struct Shared {
    /// The runtime the browser's CDP handler and the server run on.
    pub runtime: tokio::runtime::Runtime,
    /// The one browser.
    pub session: BrowserSession,
    /// Serves the pages the tests register, on 127.0.0.1.
    pub server: PageServer,
}

static SHARED: OnceLock<Result<Shared, String>> = OnceLock::new();

/// The binary's browser and page server, started by the first caller.
pub fn shared() -> &'static Shared {
    let shared = SHARED.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let (session, server) = runtime.block_on(async {
            let server = PageServer::start().await.map_err(|e| e.to_string())?;
            let session = BrowserSession::start(LaunchOptions::default())
                .await
                .map_err(|e| e.to_string())?;
            Ok::<_, String>((session, server))
        })?;
        Ok(Shared {
            runtime,
            session,
            server,
        })
    });
    match shared {
        Ok(s) => s,
        Err(e) => panic!("these tests need Chromium: {e}"),
    }
}
