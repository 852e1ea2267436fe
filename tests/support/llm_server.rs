//! A scripted chat-completions server for tests.
//!
//! It is a real HTTP/1.1 server on 127.0.0.1 (port chosen by the OS) that
//! writes raw bytes, so a test decides exactly what goes over the wire:
//! plain JSON, an SSE stream in pieces with delays, an error status with
//! headers, a connection cut mid-stream, or no answer at all. Replies are
//! taken from a queue in order; every request is recorded (method, path,
//! headers, body) for assertions. Dropping the server stops it and closes
//! every connection it holds.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use webagent::agent::AGENT_TOOL_NAME;
use webagent::llm::{LlmClient, LlmConfig, RetryPolicy};

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// `POST`, normally.
    pub method: String,
    /// The request target, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Headers with lower-case names, in the order sent.
    pub headers: Vec<(String, String)>,
    /// The body as text.
    pub body: String,
}

impl RecordedRequest {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON (`Value::Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// A piece of a streamed body, written after `delay`.
#[derive(Debug, Clone)]
pub struct Piece {
    /// Wait before writing it.
    pub delay: Duration,
    /// The bytes, sent as one HTTP chunk.
    pub bytes: Vec<u8>,
}

/// How a streamed reply ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// The terminating empty chunk: a clean end of body.
    Finish,
    /// The connection is closed without it: the body is incomplete.
    Cut,
    /// Nothing more is sent and the connection stays open.
    Hang,
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A complete body with a status and extra headers.
    Body {
        /// HTTP status.
        status: u16,
        /// Extra headers (`Retry-After`, …).
        headers: Vec<(String, String)>,
        /// `Content-Type` of the body.
        content_type: String,
        /// The body.
        body: String,
    },
    /// A chunked `text/event-stream` body written piece by piece.
    Stream {
        /// HTTP status.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// The pieces, in order.
        pieces: Vec<Piece>,
        /// How the body ends.
        end: StreamEnd,
    },
    /// Read the request and never answer.
    Hang,
    /// Exactly these bytes, then close.
    Raw(Vec<u8>),
    /// The inner reply, once the test opens the gate
    /// (`gate.notify_one()`): the model is answering for exactly as long
    /// as the test needs, with no clock involved.
    Held(Arc<tokio::sync::Notify>, Box<Reply>),
}

impl Reply {
    /// `reply`, held until `gate` is opened.
    pub fn held(gate: &Arc<tokio::sync::Notify>, reply: Reply) -> Self {
        Reply::Held(Arc::clone(gate), Box::new(reply))
    }

    /// A JSON body with this status.
    pub fn json(status: u16, body: impl Into<String>) -> Self {
        Reply::Body {
            status,
            headers: Vec::new(),
            content_type: "application/json".into(),
            body: body.into(),
        }
    }

    /// A body with any content type (HTML from a proxy, say).
    pub fn text(status: u16, content_type: &str, body: impl Into<String>) -> Self {
        Reply::Body {
            status,
            headers: Vec::new(),
            content_type: content_type.into(),
            body: body.into(),
        }
    }

    /// A 200 stream with one piece per SSE event text, ending cleanly.
    pub fn sse(events: Vec<String>) -> Self {
        Reply::sse_pieces(
            events
                .into_iter()
                .map(|text| Piece {
                    delay: Duration::ZERO,
                    bytes: text.into_bytes(),
                })
                .collect(),
        )
    }

    /// A 200 stream of these exact pieces, ending cleanly.
    pub fn sse_pieces(pieces: Vec<Piece>) -> Self {
        Reply::Stream {
            status: 200,
            headers: Vec::new(),
            pieces,
            end: StreamEnd::Finish,
        }
    }

    /// The same reply with an extra header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match &mut self {
            Reply::Body { headers, .. } | Reply::Stream { headers, .. } => {
                headers.push((name.to_owned(), value.to_owned()))
            }
            Reply::Hang | Reply::Raw(_) | Reply::Held(..) => {}
        }
        self
    }

    /// The same stream ending differently.
    pub fn ending(mut self, how: StreamEnd) -> Self {
        if let Reply::Stream { end, .. } = &mut self {
            *end = how;
        }
        self
    }

    /// The same stream with `delay` before every piece but the first.
    pub fn paced(mut self, delay: Duration) -> Self {
        if let Reply::Stream { pieces, .. } = &mut self {
            for piece in pieces.iter_mut().skip(1) {
                piece.delay = delay;
            }
        }
        self
    }
}

struct Shared {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<RecordedRequest>>,
    received: watch::Sender<usize>,
    /// Connections the client closed before the reply was over (a hanging
    /// reply, or a write that failed): how a cancelled request looks from
    /// here.
    abandoned: watch::Sender<usize>,
}

/// The running server; stops when dropped.
pub struct LlmServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: watch::Sender<bool>,
    accept: JoinHandle<()>,
}

impl LlmServer {
    /// A client of this server for `test-model` that never retries, so
    /// each scripted reply answers exactly one request.
    pub fn client(&self) -> Arc<LlmClient> {
        let config = LlmConfig::default()
            .with_base_url(self.base_url())
            .with_model("test-model")
            .with_retry(RetryPolicy {
                max_retries: 0,
                base_delay: Duration::from_millis(10),
                max_delay: Duration::from_millis(10),
                max_retry_after: Duration::from_millis(10),
            });
        Arc::new(LlmClient::new(config).expect("client"))
    }

    /// Starts a server that answers with `replies`, in order. Requests
    /// beyond the script get a 500 saying so.
    pub async fn start(replies: Vec<Reply>) -> LlmServer {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a port on 127.0.0.1");
        let addr = listener.local_addr().expect("listener has an address");
        let (received, _) = watch::channel(0usize);
        let (abandoned, _) = watch::channel(0usize);
        let shared = Arc::new(Shared {
            script: Mutex::new(replies.into()),
            requests: Mutex::new(Vec::new()),
            received,
            abandoned,
        });
        let (shutdown, _) = watch::channel(false);
        let accept = tokio::spawn(accept_loop(listener, shared.clone(), shutdown.subscribe()));
        LlmServer {
            addr,
            shared,
            shutdown,
            accept,
        }
    }

    /// The base URL to configure the client with (`http://127.0.0.1:N/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Adds replies to the end of the script.
    pub fn push(&self, reply: Reply) {
        self.shared
            .script
            .lock()
            .expect("a lock no test thread poisoned")
            .push_back(reply);
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared
            .requests
            .lock()
            .expect("a lock no test thread poisoned")
            .clone()
    }

    /// How many requests were received.
    pub fn request_count(&self) -> usize {
        self.shared
            .requests
            .lock()
            .expect("a lock no test thread poisoned")
            .len()
    }

    /// Waits until at least `n` requests have arrived.
    pub async fn wait_for_requests(&self, n: usize) {
        let mut rx = self.shared.received.subscribe();
        rx.wait_for(|count| *count >= n)
            .await
            .expect("the server state lives as long as the server");
    }
}

impl LlmServer {
    /// Waits until clients have closed `n` connections before their reply
    /// was over (e.g. left hanging by `Reply::Hang`): proof that a
    /// cancelled call really dropped its request.
    pub async fn wait_for_abandoned(&self, n: usize) {
        let mut rx = self.shared.abandoned.subscribe();
        rx.wait_for(|count| *count >= n)
            .await
            .expect("the server state lives as long as the server");
    }
}

impl Drop for LlmServer {
    fn drop(&mut self) {
        self.shutdown.send_replace(true);
        self.accept.abort();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, shutdown: watch::Receiver<bool>) {
    let mut stopped = shutdown.clone();
    loop {
        tokio::select! {
            _ = stopped.wait_for(|stop| *stop) => return,
            accepted = listener.accept() => {
                let Ok((socket, _)) = accepted else { continue };
                let shared = shared.clone();
                let mut stop = shutdown.clone();
                tokio::spawn(async move {
                    tokio::select! {
                        _ = stop.wait_for(|stop| *stop) => {}
                        _ = serve_connection(socket, shared) => {}
                    }
                });
            }
        }
    }
}

async fn serve_connection(mut socket: TcpStream, shared: Arc<Shared>) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    let reply = shared
        .script
        .lock()
        .expect("a lock no test thread poisoned")
        .pop_front();
    shared
        .requests
        .lock()
        .expect("a lock no test thread poisoned")
        .push(request);
    shared.received.send_modify(|count| *count += 1);
    let reply = reply.unwrap_or_else(|| {
        Reply::json(
            500,
            error_body("the test script has no more replies", "server_error").to_string(),
        )
    });
    // A write error means the client went away (cancelled, timed out)
    // before the reply was complete.
    if write_reply(&mut socket, reply, &shared).await.is_err() {
        shared.abandoned.send_modify(|count| *count += 1);
    }
}

async fn read_request(socket: &mut TcpStream) -> Option<RecordedRequest> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(pos) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(RecordedRequest {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn status_line(status: u16) -> String {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    };
    format!("HTTP/1.1 {status} {reason}\r\n")
}

fn extra_headers(headers: &[(String, String)]) -> String {
    headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect()
}

/// Keeps a connection open without answering until the client closes it.
async fn hang(socket: &mut TcpStream, shared: &Shared) -> std::io::Result<()> {
    let mut scratch = [0u8; 1024];
    // Reading returns 0 (or fails) once the client closed its side.
    while matches!(socket.read(&mut scratch).await, Ok(n) if n > 0) {}
    shared.abandoned.send_modify(|count| *count += 1);
    Ok(())
}

async fn write_reply(socket: &mut TcpStream, reply: Reply, shared: &Shared) -> std::io::Result<()> {
    match reply {
        Reply::Held(gate, inner) => {
            gate.notified().await;
            Box::pin(write_reply(socket, *inner, shared)).await
        }
        Reply::Body {
            status,
            headers,
            content_type,
            body,
        } => {
            let head = format!(
                "{}content-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n{}\r\n",
                status_line(status),
                body.len(),
                extra_headers(&headers)
            );
            socket.write_all(head.as_bytes()).await?;
            socket.write_all(body.as_bytes()).await?;
            socket.shutdown().await
        }
        Reply::Stream {
            status,
            headers,
            pieces,
            end,
        } => {
            let head = format!(
                "{}content-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n{}\r\n",
                status_line(status),
                extra_headers(&headers)
            );
            socket.write_all(head.as_bytes()).await?;
            socket.flush().await?;
            for piece in pieces {
                if !piece.delay.is_zero() {
                    tokio::time::sleep(piece.delay).await;
                }
                if piece.bytes.is_empty() {
                    continue;
                }
                let mut frame = format!("{:x}\r\n", piece.bytes.len()).into_bytes();
                frame.extend_from_slice(&piece.bytes);
                frame.extend_from_slice(b"\r\n");
                socket.write_all(&frame).await?;
                socket.flush().await?;
            }
            match end {
                StreamEnd::Finish => {
                    socket.write_all(b"0\r\n\r\n").await?;
                    socket.shutdown().await
                }
                StreamEnd::Cut => Ok(()),
                StreamEnd::Hang => hang(socket, shared).await,
            }
        }
        Reply::Hang => hang(socket, shared).await,
        Reply::Raw(bytes) => {
            socket.write_all(&bytes).await?;
            socket.shutdown().await
        }
    }
}

/// An OpenAI-style error object.
pub fn error_body(message: &str, kind: &str) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": kind}})
}

/// A non-streamed answer that calls `name` with `arguments`.
pub fn tool_call_completion(name: &str, arguments: &Value) -> String {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "test-model",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [{
                    "id": "call_test_1",
                    "type": "function",
                    "function": {"name": name, "arguments": arguments.to_string()},
                }],
            },
            "finish_reason": "tool_calls",
        }],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
    })
    .to_string()
}

/// A plain answer calling the agent's step tool: how the model judged
/// the last goal (`evaluation`), its `memory`, the next goal and `action`.
pub fn agent_step(evaluation: &str, memory: &str, goal: &str, action: Value) -> Reply {
    let arguments = json!({
        "evaluation_previous_goal": evaluation,
        "memory": memory,
        "next_goal": goal,
        "action": action,
    });
    Reply::json(200, tool_call_completion(AGENT_TOOL_NAME, &arguments))
}

/// An [`agent_step`] that looked at the page and remembers nothing.
pub fn step_reply(goal: &str, action: Value) -> Reply {
    agent_step("looked at the page", "", goal, action)
}

/// A non-streamed answer with text only.
pub fn text_completion(text: &str) -> String {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop",
        }],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    })
    .to_string()
}

fn chunk(choices: Value) -> Value {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "test-model",
        "choices": choices,
    })
}

/// One SSE event (`data: …` and the blank line) for a JSON value.
pub fn sse_event(value: &Value) -> String {
    format!("data: {value}\n\n")
}

/// The SSE events of a streamed forced tool call, the arguments' JSON text
/// split into `pieces` parts (at character boundaries), followed by the
/// finish chunk, a usage chunk with empty `choices`, and `[DONE]`.
pub fn tool_call_events(name: &str, arguments: &Value, pieces: usize) -> Vec<String> {
    let text: Vec<char> = arguments.to_string().chars().collect();
    let size = text.len().div_ceil(pieces.max(1)).max(1);
    let mut events = vec![sse_event(&chunk(json!([{
        "index": 0,
        "delta": {"role": "assistant", "content": null},
        "finish_reason": null,
    }])))];
    for (i, part) in text.chunks(size).enumerate() {
        let part: String = part.iter().collect();
        let mut call = json!({"index": 0, "function": {"arguments": part}});
        if i == 0 {
            call["id"] = json!("call_test_1");
            call["type"] = json!("function");
            call["function"]["name"] = json!(name);
        }
        events.push(sse_event(&chunk(json!([{
            "index": 0,
            "delta": {"tool_calls": [call]},
            "finish_reason": null,
        }]))));
    }
    events.push(sse_event(&chunk(json!([{
        "index": 0,
        "delta": {},
        "finish_reason": "tool_calls",
    }]))));
    let mut usage = chunk(json!([]));
    usage["usage"] = json!({"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150});
    events.push(sse_event(&usage));
    events.push("data: [DONE]\n\n".to_owned());
    events
}

/// The SSE events of a streamed text answer in `pieces` parts.
pub fn text_events(text: &str, pieces: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(pieces.max(1)).max(1);
    let mut events: Vec<String> = chars
        .chunks(size)
        .map(|part| {
            let part: String = part.iter().collect();
            sse_event(&chunk(
                json!([{"index": 0, "delta": {"content": part}, "finish_reason": null}]),
            ))
        })
        .collect();
    events.push(sse_event(&chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
    )));
    events.push("data: [DONE]\n\n".to_owned());
    events
}

/// The whole of `events` re-cut into pieces of `size` bytes, so event
/// boundaries, CRLF pairs and multibyte characters fall inside pieces.
pub fn rechunk(events: &[String], size: usize) -> Vec<Piece> {
    let bytes: Vec<u8> = events.concat().into_bytes();
    bytes
        .chunks(size.max(1))
        .map(|part| Piece {
            delay: Duration::ZERO,
            bytes: part.to_vec(),
        })
        .collect()
}
