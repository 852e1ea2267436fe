//! A stand-in for a browser pool such as browserless, speaking its
//! protocol as a client meets it: a DevTools websocket at `/?token=…`
//! (the token checked: 401 without it, 400 for a request line that is not
//! a path), at most `limit` sessions at once with the rest queued (a
//! queued client waits with no answer), and a Chromium of its own per
//! connection, stopped when the client goes. `restart` stops every
//! browser and refuses connections for a while, as a pool that restarts.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};
use tokio::sync::Semaphore;

/// The running stand-in.
#[derive(Clone)]
pub struct Pool {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Sessions it gave a browser, over its life.
    pub served: Arc<AtomicUsize>,
    /// The most sessions it held at once.
    pub most_at_once: Arc<AtomicUsize>,
    at_once: Arc<AtomicUsize>,
    waiting: Arc<AtomicUsize>,
    down_until: Arc<Mutex<Option<Instant>>>,
    browsers: Arc<Mutex<Vec<(usize, Child)>>>,
    generation: Arc<AtomicUsize>,
}

const TOKEN: &str = "s3cret";

impl Pool {
    /// Starts listening; serves until the runtime ends.
    pub async fn start(limit: usize) -> Pool {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let port = listener.local_addr().expect("an address").port();
        let pool = Pool {
            port,
            served: Arc::default(),
            most_at_once: Arc::default(),
            at_once: Arc::default(),
            waiting: Arc::default(),
            down_until: Arc::default(),
            browsers: Arc::default(),
            generation: Arc::default(),
        };
        let slots = Arc::new(Semaphore::new(limit));
        let serving = pool.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let pool = serving.clone();
                let slots = Arc::clone(&slots);
                tokio::spawn(async move { pool.session(client, slots).await });
            }
        });
        pool
    }

    /// The address a client is told to use, as pools document it (no
    /// path before the query).
    pub fn address(&self) -> String {
        format!("ws://127.0.0.1:{}?token={TOKEN}", self.port)
    }

    /// Stops every browser now and refuses connections for `down`.
    pub fn restart(&self, down: Duration) {
        if let Ok(mut until) = self.down_until.lock() {
            *until = Some(Instant::now() + down);
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
        // Each session then waits for its browser to exit and removes
        // its profile.
        if let Ok(mut browsers) = self.browsers.lock() {
            for (_, browser) in browsers.iter_mut() {
                let _ = browser.start_kill();
            }
        }
    }

    /// Waits until every session has ended and its browser is
    /// stopped, then stops whatever is left, so no Chromium outlives
    /// the test.
    pub fn close(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.at_once.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Ok(mut browsers) = self.browsers.lock() {
            for (_, browser) in browsers.iter_mut() {
                let _ = browser.start_kill();
            }
            browsers.clear();
        }
    }

    /// Clients waiting in the queue now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    fn down(&self) -> bool {
        self.down_until
            .lock()
            .map(|u| u.is_some_and(|until| Instant::now() < until))
            .unwrap_or(false)
    }

    async fn session(&self, mut client: TcpStream, slots: Arc<Semaphore>) {
        if self.down() {
            return; // the connection closes unanswered
        }
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match client.read(&mut byte).await {
                Ok(1) => head.push(byte[0]),
                _ => return,
            }
        }
        let head = String::from_utf8_lossy(&head).into_owned();
        let target = head.split(' ').nth(1).unwrap_or_default().to_string();
        let refuse = |status: &str| {
            format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        };
        if !target.starts_with('/') {
            let _ = client.write_all(refuse("400 Bad Request").as_bytes()).await;
            return;
        }
        if !target.contains(&format!("token={TOKEN}")) {
            let _ = client
                .write_all(refuse("401 Unauthorized").as_bytes())
                .await;
            return;
        }
        // The queue: wait, unanswered, for a free slot.
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let slot = slots.acquire_owned().await;
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        let Ok(_slot) = slot else { return };
        let now = self.at_once.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_at_once.fetch_max(now, Ordering::SeqCst);
        let generation = self.generation.load(Ordering::SeqCst);
        if let Some((id, child, ws, profile)) = self.launch().await {
            self.served.fetch_add(1, Ordering::SeqCst);
            let path = ws
                .splitn(4, '/')
                .nth(3)
                .map(|p| format!("/{p}"))
                .unwrap_or_default();
            let port = ws
                .split(':')
                .nth(2)
                .and_then(|p| p.split('/').next())
                .unwrap_or_default()
                .to_string();
            let rest = head.split_once("\r\n").map(|(_, r)| r).unwrap_or_default();
            let rest: String = rest
                .lines()
                .filter(|l| !l.to_ascii_lowercase().starts_with("host:"))
                .map(|l| format!("{l}\r\n"))
                .collect();
            let forwarded = format!(
                "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{}",
                rest.trim_end_matches("\r\n").to_string() + "\r\n\r\n"
            );
            if let Ok(mut browsers) = self.browsers.lock() {
                browsers.push((id, child));
            }
            if let Ok(mut upstream) = TcpStream::connect(format!("127.0.0.1:{port}")).await {
                if generation == self.generation.load(Ordering::SeqCst)
                    && upstream.write_all(forwarded.as_bytes()).await.is_ok()
                {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                }
            }
            // The client left: its browser goes, as in a pool.
            let finished = self
                .browsers
                .lock()
                .ok()
                .and_then(|mut b| b.iter().position(|(i, _)| *i == id).map(|at| b.remove(at)));
            if let Some((_, mut child)) = finished {
                let _ = child.kill().await;
            }
            let _ = std::fs::remove_dir_all(profile);
        }
        self.at_once.fetch_sub(1, Ordering::SeqCst);
    }

    /// A Chromium of the session's own: its number, the process, its
    /// DevTools address and its profile.
    async fn launch(&self) -> Option<(usize, Child, String, std::path::PathBuf)> {
        let chrome = webagent::browser::find_chrome(None).ok()?;
        // Every browser of every pool in this process gets a profile
        // of its own.
        static LAUNCHED: AtomicUsize = AtomicUsize::new(0);
        let id = LAUNCHED.fetch_add(1, Ordering::SeqCst);
        let profile =
            std::env::temp_dir().join(format!("webagent-pool-{}-{id}", std::process::id(),));
        let mut command = Command::new(chrome);
        command
            .args([
                "--headless",
                "--disable-gpu",
                "--no-sandbox",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stderr(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true);
        let mut child = command.spawn().ok()?;
        let mut lines = BufReader::new(child.stderr.take()?).lines();
        let ws = tokio::time::timeout(Duration::from_secs(30), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(at) = line.find("ws://") {
                    return Some(line[at..].trim().to_string());
                }
            }
            None
        })
        .await
        .ok()??;
        // Chromium keeps writing to stderr; keep reading so it never
        // blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Some((id, child, ws, profile))
    }
}
