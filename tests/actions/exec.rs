//! The `exec` command (one JSON line per action, the exit code by
//! outcome) and `goto_page`, which finds a page in the sitemap.

use serde_json::{json, Value};
use webagent::actions::{Catalog, FailureReason};
use webagent::browser::act::Executor;

use crate::support::chromium::shared;
use crate::support::cli::run_webagent;
use crate::support::pages::seen_page;
use crate::support::tab::{assert_ok, observe, quick_options, with_page_in_front};

#[test]
fn exec_prints_one_json_line_per_action_and_exits_by_outcome() {
    let s = shared();
    s.server.html(
        "/exec",
        seen_page(
            r#"<button onclick="document.title = 'pressed'">Press</button><input id="name">"#,
        ),
    );
    let url = s.server.url("/exec");
    let out = run_webagent(&[
        "exec",
        &url,
        r#"{"click":{"index":0}}"#,
        r##"{"input_text":{"selector":"#name","text":"Ann"}}"##,
        "--json",
        "--observe",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert_eq!(lines[0]["action"], json!("click"));
    assert_eq!(lines[0]["params"], json!({"index": 0}));
    assert_eq!(lines[0]["result"]["ok"], json!(true));
    assert_eq!(lines[0]["url"], json!(url));
    assert!(lines[0]["ms"].as_f64().is_some());
    assert_eq!(lines[1]["params"]["text"], json!("Ann"));
    assert_eq!(lines[2]["type"], json!("observation"));
    assert_eq!(lines[2]["title"], json!("pressed"));
    assert!(
        lines[2]["listing"].as_str().unwrap_or("").contains("Ann"),
        "{}",
        lines[2]
    );

    let out = run_webagent(&[
        "exec",
        &url,
        r##"{"click":{"selector":"#missing"}}"##,
        r#"{"click":{"index":0}}"#,
        "--json",
        // Long enough for the click on a busy machine (its fresh browser
        // shares two cores with the other tests); the missing element
        // fails when it runs out.
        "--timeout-ms",
        "2000",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(
        lines.len(),
        2,
        "a failure must not stop the later actions: {stdout}"
    );
    assert_eq!(lines[0]["result"]["reason"], json!("not_found"));
    assert_eq!(lines[1]["result"]["ok"], json!(true), "{stdout}");
}

#[test]
fn exec_goto_page_uses_the_sitemap_given_by_flag() {
    let s = shared();
    s.server
        .html("/exec-site/billing", seen_page("<h1>Billing settings</h1>"));
    s.server.html("/exec-site", seen_page("<h1>Start</h1>"));
    let dir = std::env::temp_dir().join(format!("webagent-exec-sitemap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    std::fs::write(
        dir.join("site.yaml"),
        "title: Home\nchildren:\n  exec-site:\n    title: Site\n    children:\n      billing:\n        title: Billing\n        keywords: [invoices]\n",
    )
    .expect("writing the sitemap");
    let url = s.server.url("/exec-site");
    let with_sitemap = run_webagent(&[
        "exec",
        &url,
        "goto_page invoices",
        "--json",
        "--sitemap",
        dir.to_str().expect("a UTF-8 temp path"),
    ]);
    let stdout = String::from_utf8_lossy(&with_sitemap.stdout);
    assert_eq!(with_sitemap.status.code(), Some(0), "{stdout}");
    let line: Value = serde_json::from_str(stdout.trim()).expect("a JSON line");
    assert_eq!(line["url"], json!(s.server.url("/exec-site/billing")));

    // A broken sitemap is a configuration error naming the file, not a run
    // without it.
    std::fs::write(dir.join("site.yaml"), "title: [unclosed\n").expect("writing");
    let broken = run_webagent(&[
        "exec",
        &url,
        "read_page",
        "--sitemap",
        dir.to_str().unwrap_or_default(),
    ]);
    assert_eq!(broken.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&broken.stderr).contains("site.yaml"),
        "{}",
        String::from_utf8_lossy(&broken.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn goto_page_searches_the_sitemap_and_navigates() {
    use webagent::sitemap::{Sitemap, SitemapSet};
    let s = shared();
    s.server
        .html("/settings/billing", seen_page("<h1>Billing settings</h1>"));
    let yaml = format!(
        "origin: {}\ntitle: Home\nchildren:\n  settings:\n    title: Settings\n    children:\n      billing:\n        title: Billing\n        keywords: [invoices, payment]\n  orders:\n    title: Orders\n    children:\n      ':id':\n        title: Order detail\n",
        s.server.origin()
    );
    let sitemap = Sitemap::from_yaml_str(&yaml).expect("the sitemap parses");
    let mut set = SitemapSet::new();
    set.insert(sitemap);
    with_page_in_front("/home", &seen_page("<p>home</p>"), |tab, _| async move {
        let state = observe(&tab).await;
        let executor = Executor::new(&tab, quick_options()).with_sitemaps(&set);
        let action = Catalog::builtin()
            .parse(&json!({"goto_page": {"name": "invoices"}}))
            .expect("parsing");
        let result = executor.execute(&action, Some(&state)).await;
        assert_ok(&result);
        assert!(tab.url().await.expect("url").ends_with("/settings/billing"));
        assert_eq!(
            result.data().expect("data")["page"]["title"],
            json!("Billing")
        );
        let action = Catalog::builtin()
            .parse(&json!({"goto_page": {"name": "order detail"}}))
            .expect("parsing");
        let result = executor.execute(&action, Some(&state)).await;
        assert_eq!(
            result.reason(),
            Some(FailureReason::InvalidParams),
            "{result:?}"
        );
    });
}
