//! The browser flags every command that opens a page shares (and the
//! benchmarks that start a browser of their own).

use std::path::PathBuf;

use crate::browser::LaunchOptions;

/// Which browser to use: flatten into any command that needs one.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct BrowserOpts {
    /// Chromium executable (default: `WEBAGENT_CHROME`, then chromium,
    /// chromium-browser or google-chrome on PATH, then /usr/bin/chromium).
    #[arg(long, value_name = "PATH")]
    pub chrome: Option<PathBuf>,
    /// Show the browser window instead of running headless.
    #[arg(long)]
    pub headed: bool,
    /// Attach to a running browser (`ws://…` DevTools address, or
    /// `http://host:port`) instead of launching one.
    #[arg(long, value_name = "URL")]
    pub connect: Option<String>,
    /// Seconds attaching to --connect may take (default: config
    /// `browser.connect_timeout`, 15); a browser pool that queues sessions
    /// needs at least its longest queue wait.
    #[arg(long, value_name = "SECS")]
    pub connect_timeout: Option<u64>,
    /// Allow navigation only to URLs matching PATTERN (repeatable): a host
    /// glob like `*.example.com` (https, plus http for loopback hosts), or
    /// with scheme and port like `http://127.0.0.1:*`; `data:`, `blob:`,
    /// `javascript:`, `file:` must be named to be allowed.
    #[arg(long = "allow-domain", value_name = "PATTERN")]
    pub allow_domains: Vec<String>,
    /// A persistent Chromium profile directory: sign-ins last across runs
    /// (default: config `browser.profile`; created when missing, never
    /// deleted).
    #[arg(long, value_name = "DIR")]
    pub profile: Option<PathBuf>,
    /// A state file of cookies and local storage loaded at start (default:
    /// config `browser.state`); `webagent state save FILE` writes one.
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
}

impl BrowserOpts {
    /// The launch options these flags describe, for a benchmark that starts
    /// a browser of its own (commands go through the whole configuration):
    /// `--chrome`, else `WEBAGENT_CHROME`, else Chromium on `PATH`.
    pub fn launch_options(&self) -> LaunchOptions {
        let from_env = std::env::var_os(super::load::CHROME_VAR)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        LaunchOptions {
            chrome: self.chrome.clone().or(from_env),
            headed: self.headed,
            connect: self.connect.clone(),
            connect_timeout: self
                .connect_timeout
                .map_or(LaunchOptions::default().connect_timeout, |s| {
                    std::time::Duration::from_secs(s.max(1))
                }),
            allowed_domains: self.allow_domains.clone(),
            profile: self.profile.clone(),
            state: self.state.clone(),
            ..LaunchOptions::default()
        }
    }
}
