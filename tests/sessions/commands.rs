//! Commands on a session: each a process of its own, all on one page.

use std::time::Duration;

use serde_json::Value;
use webagent::serve::Response;

use crate::support::cli::said;
use crate::support::listing::index_of;
use crate::support::pages::page;
use crate::{finished, server, until, Sessions};

#[test]
fn two_sessions_at_once_keep_their_cookies_apart() {
    let server = server();
    server.html(
        "/cookie",
        page(
            "Cookie",
            "<p id=c></p>\
             <button onclick=\"document.cookie='who=one; path=/'; show()\">Set</button>\
             <script>function show(){document.getElementById('c').textContent=\
             'cookie: '+(document.cookie||'none')} show()</script>",
        ),
    );
    let url = server.url("/cookie");
    let s = Sessions::new("cookies");
    s.start("one", &url, &[]);
    s.start("two", &url, &[]);
    let listing = s.ok(&["observe", "--session", "one"]);
    let set = index_of(&listing, "Set").to_string();
    s.ok(&["exec", "--session", "one", &format!("click {set}")]);
    // Both open the page again, so each reads its own cookie jar.
    for name in ["one", "two"] {
        s.ok(&["exec", "--session", name, &format!("navigate {url}")]);
    }
    let one = s.ok(&["observe", "--session", "one"]);
    let two = s.ok(&["observe", "--session", "two"]);
    assert!(one.contains("cookie: who=one"), "{one}");
    assert!(two.contains("cookie: none"), "{two}");
}

#[test]
fn a_sign_in_over_three_commands_leaves_the_third_on_the_signed_in_page() {
    let server = server();
    server.html(
        "/signin",
        page(
            "Sign in",
            "<label>Name <input id=name></label>\
             <button onclick=\"document.cookie='user='+encodeURIComponent(\
             document.getElementById('name').value)+'; path=/'; location.href='/account'\">\
             Sign in</button>",
        ),
    );
    server.handle("/account", |request| {
        let user = request
            .headers
            .get("cookie")
            .and_then(|c| c.split("; ").find_map(|kv| kv.strip_prefix("user=")))
            .map(str::to_owned);
        Response::html(match user {
            Some(user) => format!("<h1>Signed in as {user}</h1><a href=/signin>Sign out</a>"),
            None => "<h1>Not signed in</h1>".to_string(),
        })
    });
    let s = Sessions::new("signin");
    s.start("app", &server.url("/signin"), &[]);
    let listing = s.ok(&["observe", "--session", "app"]);
    let field = index_of(&listing, "<input");
    let button = index_of(&listing, "Sign in</button>");
    // Three commands, three processes: type, click, look.
    s.ok(&[
        "exec",
        "--session",
        "app",
        &format!("input_text {field} \"ann\""),
    ]);
    s.ok(&["exec", "--session", "app", &format!("click {button}")]);
    let after = s.ok(&["observe", "--session", "app"]);
    assert!(after.contains("/account"), "{after}");
    assert!(after.contains("Signed in as ann"), "{after}");
}

/// A page whose button adds one more button; twenty others keep the whole
/// page larger than what one new line changes.
fn growing_page() -> String {
    let keep: String = (1..=20)
        .map(|n| format!("<button>Keep {n}</button>"))
        .collect();
    page(
        "Grow",
        &format!(
            "<button onclick=\"var b=document.createElement('button');\
             b.textContent='Added '+(++window.added);document.body.appendChild(b)\">Add</button>\
             {keep}<script>window.added=0</script>"
        ),
    )
}

#[test]
fn observe_delta_after_a_click_lists_only_the_new_element() {
    let server = server();
    server.html("/grow", growing_page());
    let s = Sessions::new("delta");
    s.start("g", &server.url("/grow"), &[]);
    let listing = s.ok(&["observe", "--session", "g"]);
    let add = index_of(&listing, ">Add<");
    s.ok(&["exec", "--session", "g", &format!("click {add}")]);
    let printed = s.ok(&["observe", "--session", "g", "--delta", "--json"]);
    let body: Value = serde_json::from_str(printed.trim()).expect("one JSON object");
    let delta = &body["page_delta"];
    assert!(delta.is_object(), "not a delta: {body}");
    assert!(delta.get("removed").is_none(), "{delta}");
    assert!(delta.get("changed").is_none(), "{delta}");
    let inserted: Vec<&str> = delta["inserted"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|run| run[1].as_array().into_iter().flatten())
        .filter_map(|line| line[1].as_str())
        .collect();
    assert_eq!(inserted.len(), 1, "{delta}");
    assert!(inserted[0].contains("Added 1"), "{delta}");
    // Nothing changed since that delta: the next one says so.
    let again = s.ok(&["observe", "--session", "g", "--delta"]);
    assert!(
        again.contains("no change since the last listing"),
        "{again}"
    );
}

#[test]
fn an_index_the_session_listing_no_longer_has_is_refused() {
    let server = server();
    server.html(
        "/remove",
        page(
            "Remove",
            "<button onclick=\"this.remove()\">Remove me</button><button>Stay</button>",
        ),
    );
    let s = Sessions::new("stale");
    s.start("r", &server.url("/remove"), &[]);
    let listing = s.ok(&["observe", "--session", "r"]);
    let gone = format!("click {}", index_of(&listing, "Remove me"));
    s.ok(&["exec", "--session", "r", &gone]);
    let output = s.run(&["exec", "--session", "r", &gone, "--json"]);
    assert_eq!(output.status.code(), Some(1), "{}", said(&output));
    let line: Value = serde_json::from_slice(&output.stdout).expect("one JSON line");
    assert_eq!(line["result"]["reason"], "not_found", "{line}");
    let message = line["result"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("not on the page any more"), "{line}");
}

#[test]
fn two_commands_sent_at_once_run_one_after_the_other_in_order() {
    let server = server();
    server.html(
        "/order",
        page(
            "Order",
            "<button onclick=\"log('A')\">First</button><button onclick=\"log('B')\">Second</button>\
             <p id=out>log:</p><script>function log(x){document.getElementById('out')\
             .textContent+=x}</script>",
        ),
    );
    let s = Sessions::new("order");
    s.start("o", &server.url("/order"), &[]);
    let listing = s.ok(&["observe", "--session", "o"]);
    let first = format!("click {}", index_of(&listing, "First"));
    let second = format!("click {}", index_of(&listing, "Second"));
    // The first command clicks, waits, clicks again; the second is sent
    // while it runs, and must not land between its two clicks.
    let long = s.command(&["exec", "--session", "o", &first, "wait 1.5", &first]);
    let long = std::thread::spawn(move || finished(long, Duration::from_secs(60)));
    let busy = until(Duration::from_secs(30), || {
        s.ok(&["session", "list", "--json"])
            .contains("\"busy\":true")
    });
    assert!(busy, "the first command never showed as running");
    s.ok(&["exec", "--session", "o", &second]);
    let long = long
        .join()
        .expect("joined")
        .expect("the first command ended");
    assert!(long.status.success(), "{}", said(&long));
    let page = s.ok(&["observe", "--session", "o"]);
    assert!(page.contains("log:AAB"), "{page}");
}

#[test]
fn a_commit_action_is_refused_with_exit_3_unless_the_session_was_started_with_yes() {
    let server = server();
    server.html(
        "/send",
        page(
            "Send",
            "<form action=\"/sent\"><button type=submit>Send</button></form>",
        ),
    );
    server.html("/sent", page("Sent", "<p>Sent.</p>"));
    let s = Sessions::new("approve");
    s.start("asks", &server.url("/send"), &[]);
    s.start("yes", &server.url("/send"), &["--yes"]);
    let listing = s.ok(&["observe", "--session", "asks"]);
    let send = format!("click {}", index_of(&listing, ">Send<"));
    let refused = s.run(&["exec", "--session", "asks", &send]);
    assert_eq!(refused.status.code(), Some(3), "{}", said(&refused));
    assert!(String::from_utf8_lossy(&refused.stdout).contains("denied"));
    s.ok(&["observe", "--session", "yes"]);
    s.ok(&["exec", "--session", "yes", &send]);
    let after = s.ok(&["observe", "--session", "yes"]);
    assert!(after.contains("Sent."), "{after}");
}
