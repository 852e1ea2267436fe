//! A small HTTP/1.1 server on 127.0.0.1 for pages that webagent serves to
//! its own browser: test fixtures, benchmark pages and the demo site.
//!
//! It is deliberately tiny: fixed routes (path → content type and body) plus
//! handlers for dynamic answers, keep-alive connections, and a lifetime tied
//! to its handle. Dropping the [`PageServer`] stops the accept loop, so a test
//! or a benchmark never leaves a server behind.
//!
//! ```no_run
//! # async fn demo() -> Result<(), webagent::serve::ServeError> {
//! use webagent::serve::{PageServer, Response};
//! let server = PageServer::start().await?;
//! server.page("/", "text/html", "<button>Go</button>");
//! server.handle("/time", |_req| Response::text("12:00"));
//! let url = server.url("/");
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, RwLock};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Binding 127.0.0.1 failed (no loopback interface, or out of ports).
    #[error("could not listen on 127.0.0.1: {0}")]
    Bind(std::io::Error),
    /// `start` was called outside a tokio runtime.
    #[error("the page server needs a running tokio runtime; start it from async code")]
    NoRuntime,
}

/// A request as the handlers see it.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path without the query string, e.g. `/orders/7`.
    pub path: String,
    /// The raw query string without `?` (empty when there is none).
    pub query: String,
    /// Header names in lower case.
    pub headers: HashMap<String, String>,
    /// The request body (from `Content-Length`).
    pub body: Vec<u8>,
}

/// An answer to one request.
#[derive(Debug, Clone)]
pub struct Response {
    /// The HTTP status code.
    pub status: u16,
    /// The `Content-Type` header.
    pub content_type: String,
    /// Extra headers, e.g. `Location` or `Set-Cookie`.
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
    /// How long to wait before answering (a slow server, for benchmarks
    /// standing in for one); zero answers at once.
    pub delay: std::time::Duration,
}

impl Response {
    /// A 200 answer with the given content type.
    pub fn new(content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Response {
            status: 200,
            content_type: content_type.to_string(),
            headers: Vec::new(),
            body: body.into(),
            delay: std::time::Duration::ZERO,
        }
    }

    /// The same answer, sent after `delay` (the connection's task waits;
    /// other connections are served meanwhile).
    pub fn after(mut self, delay: std::time::Duration) -> Self {
        self.delay = delay;
        self
    }

    /// A 200 HTML page.
    pub fn html(body: impl Into<Vec<u8>>) -> Self {
        Self::new("text/html; charset=utf-8", body)
    }

    /// A 200 plain-text answer.
    pub fn text(body: impl Into<Vec<u8>>) -> Self {
        Self::new("text/plain; charset=utf-8", body)
    }

    /// A 404 answer naming the missing path.
    pub fn not_found(path: &str) -> Self {
        Response {
            status: 404,
            ..Self::text(format!("no page at {path}"))
        }
    }

    /// The same answer with another status code.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// The same answer with one more header.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
}

/// A dynamic route: computes the answer from the request.
pub type Handler = Arc<dyn Fn(&Request) -> Response + Send + Sync>;

type RouteTable = Arc<RwLock<HashMap<String, Handler>>>;

/// A running server; it stops when this handle is dropped.
pub struct PageServer {
    addr: SocketAddr,
    routes: RouteTable,
    stop: watch::Sender<bool>,
}

impl std::fmt::Debug for PageServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageServer")
            .field("addr", &self.addr)
            .finish()
    }
}

impl PageServer {
    /// Binds 127.0.0.1 on a free port and starts serving on the current
    /// tokio runtime, with no routes yet (every path answers 404).
    pub async fn start() -> Result<PageServer, ServeError> {
        Self::start_on(0).await
    }

    /// Like [`PageServer::start`] on a chosen port (0 picks a free one).
    pub async fn start_on(port: u16) -> Result<PageServer, ServeError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(ServeError::NoRuntime);
        }
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(ServeError::Bind)?;
        let addr = listener.local_addr().map_err(ServeError::Bind)?;
        let routes: RouteTable = Arc::default();
        let (stop, stopped) = watch::channel(false);
        tokio::spawn(accept_loop(listener, routes.clone(), stopped));
        tracing::debug!(%addr, "page server listening");
        Ok(PageServer { addr, routes, stop })
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The origin, e.g. `http://127.0.0.1:41234`.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The full URL of a path on this server (`path` starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.origin(), path)
    }

    /// Serves a fixed body at `path` (replacing what was there).
    pub fn page(&self, path: &str, content_type: &str, body: impl Into<Vec<u8>>) {
        let response = Response::new(content_type, body);
        self.handle(path, move |_| response.clone());
    }

    /// Serves an HTML page at `path`.
    pub fn html(&self, path: &str, body: impl Into<Vec<u8>>) {
        self.page(path, "text/html; charset=utf-8", body);
    }

    /// Answers requests for `path` with a handler.
    pub fn handle(
        &self,
        path: &str,
        handler: impl Fn(&Request) -> Response + Send + Sync + 'static,
    ) {
        // A poisoned lock only means a handler panicked mid-insert; the map
        // itself is still usable, so keep serving.
        let mut routes = self.routes.write().unwrap_or_else(|e| e.into_inner());
        routes.insert(path.to_string(), Arc::new(handler));
    }
}

impl Drop for PageServer {
    fn drop(&mut self) {
        // Receivers may already be gone when the runtime shut down first.
        let _ = self.stop.send(true);
    }
}

async fn accept_loop(
    listener: TcpListener,
    routes: RouteTable,
    mut stopped: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            _ = stopped.changed() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let routes = routes.clone();
                    let stopped = stopped.clone();
                    tokio::spawn(async move {
                        if let Err(err) = serve_connection(stream, routes, stopped).await {
                            tracing::debug!(%err, "page server connection ended");
                        }
                    });
                }
                Err(err) => tracing::warn!(%err, "page server accept failed"),
            },
        }
    }
    tracing::debug!("page server stopped");
}

/// The most a request head may take; anything larger is refused.
const MAX_HEAD: usize = 64 * 1024;
/// The most a request body may take.
const MAX_BODY: usize = 16 * 1024 * 1024;

async fn serve_connection(
    mut stream: TcpStream,
    routes: RouteTable,
    mut stopped: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    loop {
        let head_end = loop {
            if let Some(pos) = find_head_end(&buf) {
                break pos;
            }
            if buf.len() > MAX_HEAD {
                write_response(
                    &mut stream,
                    &Response::text("request head too large").with_status(431),
                    false,
                )
                .await?;
                return Ok(());
            }
            let mut chunk = [0u8; 8192];
            let n = tokio::select! {
                _ = stopped.changed() => return Ok(()),
                n = stream.read(&mut chunk) => n?,
            };
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let mut request = match parse_head(&head) {
            Some(r) => r,
            None => {
                write_response(
                    &mut stream,
                    &Response::text("bad request").with_status(400),
                    false,
                )
                .await?;
                return Ok(());
            }
        };
        let body_len: usize = request
            .headers
            .get("content-length")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        if body_len > MAX_BODY {
            write_response(
                &mut stream,
                &Response::text("body too large").with_status(413),
                false,
            )
            .await?;
            return Ok(());
        }
        let body_start = head_end + 4;
        while buf.len() < body_start + body_len {
            let mut chunk = [0u8; 8192];
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        request.body = buf[body_start..body_start + body_len].to_vec();
        buf.drain(..body_start + body_len);

        let handler = {
            let routes = routes.read().unwrap_or_else(|e| e.into_inner());
            routes.get(&request.path).cloned()
        };
        let response = match handler {
            Some(handler) => handler(&request),
            None => Response::not_found(&request.path),
        };
        if !response.delay.is_zero() {
            tokio::time::sleep(response.delay).await;
        }
        let keep_alive = !request
            .headers
            .get("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let head_only = request.method == "HEAD";
        if head_only {
            let mut r = response.clone();
            r.body.clear();
            write_response(&mut stream, &r, keep_alive).await?;
        } else {
            write_response(&mut stream, &response, keep_alive).await?;
        }
        if !keep_alive {
            return Ok(());
        }
    }
}

fn find_head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n")
}

fn parse_head(head: &str) -> Option<Request> {
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split_whitespace();
    let method = first.next()?.to_string();
    let target = first.next()?;
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (target.to_string(), String::new()),
    };
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Some(Request {
        method,
        path,
        query,
        headers,
        body: Vec::new(),
    })
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        _ => "Status",
    }
}

async fn write_response(
    stream: &mut TcpStream,
    response: &Response,
    keep_alive: bool,
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: {}\r\n",
        response.status,
        reason_phrase(response.status),
        response.content_type,
        response.body.len(),
        if keep_alive { "keep-alive" } else { "close" },
    );
    for (name, value) in &response.headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(&response.body).await?;
    stream.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(url_path: &str, server: &PageServer) -> String {
        let mut stream = TcpStream::connect(server.addr()).await.unwrap();
        let req = format!("GET {url_path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        stream.write_all(req.as_bytes()).await.unwrap();
        let mut out = String::new();
        stream.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn serves_fixed_and_dynamic_routes_and_404s_the_rest() {
        let server = PageServer::start().await.unwrap();
        server.html("/", "<p>hello</p>");
        server.handle("/echo", |req| Response::text(format!("q={}", req.query)));
        let page = get("/", &server).await;
        assert!(page.starts_with("HTTP/1.1 200 OK"), "{page}");
        assert!(page.ends_with("<p>hello</p>"), "{page}");
        let echo = get("/echo?a=1", &server).await;
        assert!(echo.ends_with("q=a=1"), "{echo}");
        let missing = get("/nope", &server).await;
        assert!(missing.starts_with("HTTP/1.1 404"), "{missing}");
    }

    #[tokio::test]
    async fn stops_accepting_once_dropped() {
        let server = PageServer::start().await.unwrap();
        let addr = server.addr();
        drop(server);
        // The accept loop notices the stop signal on its next poll.
        tokio::task::yield_now().await;
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(TcpStream::connect(addr).await.is_err());
    }
}
