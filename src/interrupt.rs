//! Ctrl-C, SIGTERM and SIGHUP, one way for every command that stops
//! cleanly on them: a service manager, `timeout`, a CI runner or `kill`
//! sends SIGTERM where a person presses Ctrl-C, a terminal that closes
//! sends SIGHUP, and each must end a run the same way (the step in flight
//! ends, Chromium is closed, the trace gets its end), never by the default
//! action that kills the process on the spot and leaves the browser and
//! its profile behind.

/// SIGINT and (on Unix) SIGTERM and SIGHUP, registered as soon as it is
/// created: a signal that arrives before [`Interrupt::wait`] is polled is
/// kept.
pub struct Interrupt {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hangup: tokio::signal::unix::Signal,
}

impl Interrupt {
    /// Installs the handlers; call inside the runtime.
    pub fn listen() -> std::io::Result<Interrupt> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(Interrupt {
                interrupt: signal(SignalKind::interrupt())?,
                terminate: signal(SignalKind::terminate())?,
                hangup: signal(SignalKind::hangup())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Interrupt {})
        }
    }

    /// Waits for the first of the signals.
    pub async fn wait(mut self) {
        self.next().await;
    }

    /// Waits for the next of the signals, listening on afterwards: a
    /// command that stops gracefully on the first can quit at once on the
    /// second.
    pub async fn next(&mut self) {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => tracing::info!("stopping: interrupted (SIGINT)"),
                _ = self.terminate.recv() => tracing::info!("stopping: asked to terminate (SIGTERM)"),
                _ = self.hangup.recv() => tracing::info!("stopping: the terminal went away (SIGHUP)"),
            }
        }
        #[cfg(not(unix))]
        {
            // Windows registers the handler on first poll; good enough there.
            let _ = tokio::signal::ctrl_c().await;
        }
    }

    /// Runs `then` on a task of its own once a signal arrives; abort the
    /// handle when the work it guards is over.
    pub fn spawn_then(self, then: impl FnOnce() + Send + 'static) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            self.wait().await;
            then();
        })
    }
}
