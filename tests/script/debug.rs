//! `recipe run --debug=cli` driven the way a coding agent drives it: JSON
//! commands on standard input, events read back one at a time from
//! standard output, against a page this binary serves, in a child
//! `webagent` with its own Chromium.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::{json, Value};

use super::shared;
use crate::support::cli::webagent;
use crate::support::pages::page;
use crate::support::scratch::scratch_dir;

/// Adding to the cart writes how many items it holds; the pay button
/// appears once the terms are accepted; there is no checkout button.
const SHOP: &str = r#"<input id="q" placeholder="Product">
<button id="add" onclick="document.getElementById('cart').textContent='1 item in the cart'">Add to cart</button>
<p id="cart">The cart is empty</p>
<button id="terms" onclick="this.insertAdjacentHTML('afterend', '<button id=pay>Pay</button>')">Accept the terms</button>"#;

const RECIPE: &str = r##"recipe("buy", "Adds a product to the cart and checks out");

fn buy() {
    let item = "apples";
    fill("#q", item);
    click("#add");
    let cart = text();
    log(`added ${item}`);
    click("#pay");
    click("#checkout");
    "bought"
}
"##;

/// The debugger's two streams: commands in, events out (read on a thread
/// of their own, so a silent debugger fails the test instead of hanging
/// it).
struct Debugger {
    stdin: ChildStdin,
    events: Receiver<Value>,
}

impl Debugger {
    fn send(&mut self, command: Value) {
        writeln!(self.stdin, "{command}").expect("the debugger reads its input");
    }

    /// The next event; the bound only ends a failing test (a failed
    /// click waits for its element about 5 s first).
    fn event(&self) -> Value {
        match self.events.recv_timeout(Duration::from_secs(60)) {
            Ok(event) => event,
            Err(RecvTimeoutError::Timeout) => panic!("no event from the debugger in 60 s"),
            Err(RecvTimeoutError::Disconnected) => panic!("the debugger's output ended"),
        }
    }

    /// Sends `command` and returns the event it answers with.
    fn ask(&mut self, command: Value) -> Value {
        self.send(command);
        self.event()
    }
}

fn stopped(line: u64, reason: &str, source: &str, error: Value) -> Value {
    json!({
        "event": "stopped", "file": "buy.rhai", "line": line, "column": 5,
        "reason": reason, "source": source, "error": error,
    })
}

#[test]
fn a_program_steps_through_a_recipe_over_json_lines() {
    let s = shared();
    s.server.html("/debug-shop", page("Shop", SHOP));
    let dir = scratch_dir("debug-cli");
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    std::fs::write(dir.join("buy.rhai"), RECIPE).expect("the recipe is written");
    let mut child = webagent()
        .current_dir(&dir)
        .args(["recipe", "run", "buy.rhai", "--debug=cli", "--url"])
        .arg(s.server.url("/debug-shop"))
        .arg("--sessions-dir")
        .arg(dir.join("sessions"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("webagent runs");
    let stdout = child.stdout.take().expect("piped");
    let (tx, events) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let event = serde_json::from_str(&line)
                .unwrap_or_else(|_| panic!("a line that is not JSON: {line}"));
            if tx.send(event).is_err() {
                break;
            }
        }
    });
    let mut d = Debugger {
        stdin: child.stdin.take().expect("piped"),
        events,
    };

    // It starts stopped on the first line of the recipe's function.
    assert_eq!(
        d.event(),
        stopped(4, "entry", r#"    let item = "apples";"#, Value::Null)
    );
    // A command it does not know is answered, and the session goes on.
    assert_eq!(
        d.ask(json!({"cmd": "jump", "line": 2})),
        json!({"event": "error", "error": "unknown command \"jump\"; the commands are break, clear, step, next, out, continue, vars, listing, act, retry, skip, quit"})
    );
    d.send(json!({"cmd": "break", "line": 8}));
    assert_eq!(
        d.ask(json!({"cmd": "continue"})),
        stopped(8, "breakpoint", "    log(`added ${item}`);", Value::Null)
    );
    // The variables as the recipe holds them: the page's text read after
    // the click shows the cart it filled.
    let vars = d.ask(json!({"cmd": "vars"}));
    assert_eq!(vars["event"], "vars");
    assert_eq!(vars["vars"]["item"], "apples");
    let cart = vars["vars"]["cart"].as_str().expect("text() is a string");
    assert!(cart.contains("1 item in the cart"), "{vars}");
    assert!(!cart.contains("The cart is empty"), "{vars}");
    // The listing the model would see, fenced as it would see it, with
    // the field as the recipe filled it.
    let listing = d.ask(json!({"cmd": "listing"}));
    let text = listing["text"].as_str().expect("the listing is text");
    assert!(text.starts_with("<untrusted_page_content>\n"), "{text}");
    assert!(
        text.contains(r#"<input placeholder="Product" value="apples" />"#),
        "{text}"
    );
    assert!(text.contains("<button>Add to cart</button>"), "{text}");
    // Over the log line: its line comes first, then the stop after it.
    assert_eq!(
        d.ask(json!({"cmd": "next"})),
        json!({"event": "log", "text": "added apples"})
    );
    assert_eq!(
        d.event(),
        stopped(9, "step", r##"    click("#pay");"##, Value::Null)
    );
    // No pay button until the terms are accepted: the recipe stops on the
    // click with its error instead of ending.
    let failure = d.ask(json!({"cmd": "continue"}));
    let error = failure["error"].as_str().unwrap_or_default().to_string();
    assert!(
        error.starts_with("click #pay failed (not_found): "),
        "{failure}"
    );
    assert_eq!(
        failure,
        stopped(9, "failure", r##"    click("#pay");"##, json!(error))
    );
    // An action by hand puts the page right, and the click runs again.
    let acted = d.ask(json!({"cmd": "act", "action": {"click": {"selector": "#terms"}}}));
    assert_eq!(
        (&acted["event"], &acted["result"]["ok"]),
        (&json!("acted"), &json!(true)),
        "{acted}"
    );
    // The retried click passes; the next one finds no checkout button.
    let failure = d.ask(json!({"cmd": "retry"}));
    let error = failure["error"].as_str().unwrap_or_default().to_string();
    assert!(
        error.starts_with("click #checkout failed (not_found): "),
        "{failure}"
    );
    assert_eq!(
        failure,
        stopped(10, "failure", r##"    click("#checkout");"##, json!(error))
    );
    // Skipped, the click returns as if it succeeded and the recipe runs
    // to its end.
    assert_eq!(
        d.ask(json!({"cmd": "skip"})),
        json!({"event": "ended", "ok": true, "error": null})
    );
    drop(d);
    let status = child.wait().expect("webagent ends");
    assert!(status.success(), "exit {status:?}");
}
