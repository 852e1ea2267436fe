//! A fresh demo site for each test, and a tiny HTTP client that meets it
//! as a browser without script does: cookies kept, redirects not followed,
//! forms posted.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};

use webagent::demo::{DemoSite, DEMO_PASSWORD};

use crate::support::chromium::runtime;

/// A demo site of this test's own, so the orders it ships are no other
/// test's.
pub(crate) fn site() -> DemoSite {
    runtime()
        .block_on(DemoSite::start())
        .expect("starting the demo site")
}

// A tiny HTTP client: the site as a browser without script meets it.

/// One HTTP answer.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn location(&self) -> &str {
        self.header("location").unwrap_or("")
    }

    /// The `data-status` of the order on a detail page (the badge in the title).
    pub(crate) fn order_status(&self) -> &str {
        let title = self
            .body
            .split(r#"data-testid="order-title""#)
            .nth(1)
            .unwrap_or("");
        title
            .split(r#"data-status=""#)
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or("")
    }

    /// The order numbers of the rows on an orders list.
    pub(crate) fn order_ids(&self) -> Vec<u32> {
        self.body
            .split(r#"data-order-id=""#)
            .skip(1)
            .filter_map(|rest| rest.split('"').next()?.parse().ok())
            .collect()
    }
}

/// A browser-like client: keeps the session cookie, does not follow
/// redirects (tests look at them).
pub(crate) struct Client {
    pub(crate) addr: SocketAddr,
    pub(crate) cookie_name: String,
    pub(crate) cookie: Option<String>,
}

impl Client {
    pub(crate) fn new(site: &DemoSite) -> Client {
        Client {
            addr: site.addr(),
            cookie_name: site.session_cookie(),
            cookie: None,
        }
    }

    pub(crate) fn send(&mut self, method: &str, path: &str, body: &str) -> Reply {
        let mut stream = TcpStream::connect(self.addr).expect("connecting to the demo");
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            self.addr
        );
        if let Some(cookie) = &self.cookie {
            head.push_str(&format!("Cookie: {}={cookie}\r\n", self.cookie_name));
        }
        if method == "POST" {
            head.push_str("Content-Type: application/x-www-form-urlencoded\r\n");
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).expect("sending");
        stream.write_all(body.as_bytes()).expect("sending");
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).expect("reading");
        let raw = String::from_utf8(raw).expect("the demo answers UTF-8");
        let (head, body) = raw.split_once("\r\n\r\n").expect("a complete answer");
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|s| s.parse().ok())
            .expect("a status line");
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect();
        let reply = Reply {
            status,
            headers,
            body: body.to_string(),
        };
        if let Some(set) = reply.header("set-cookie") {
            let value = set
                .split(';')
                .next()
                .and_then(|p| p.split_once('='))
                .map(|(_, v)| v.to_string())
                .unwrap_or_default();
            self.cookie = (!value.is_empty()).then_some(value);
        }
        reply
    }

    pub(crate) fn get(&mut self, path: &str) -> Reply {
        self.send("GET", path, "")
    }

    pub(crate) fn post(&mut self, path: &str, fields: &[(&str, &str)]) -> Reply {
        let body: String = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(fields)
            .finish();
        self.send("POST", path, &body)
    }

    pub(crate) fn sign_in(&mut self, email: &str) -> &mut Client {
        let reply = self.post(
            "/login",
            &[("email", email), ("password", DEMO_PASSWORD), ("next", "")],
        );
        assert_eq!(reply.status, 303, "sign-in failed: {}", reply.body);
        assert!(self.cookie.is_some(), "no session cookie: {reply:?}");
        self
    }

    /// Creates an order and returns its number.
    pub(crate) fn create_order(&mut self, customer: &str) -> u32 {
        let reply = self.post(
            "/orders/new",
            &[
                ("customer", customer),
                ("product", "KB-01"),
                ("quantity", "2"),
                ("notes", "Leave at the door"),
            ],
        );
        assert_eq!(reply.status, 303, "{}", reply.body);
        reply
            .location()
            .strip_prefix("/orders/")
            .and_then(|rest| rest.split('?').next())
            .and_then(|id| id.parse().ok())
            .unwrap_or_else(|| panic!("not an order URL: {}", reply.location()))
    }
}

/// A file of the repository, by its path from the top.
pub(crate) fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}
