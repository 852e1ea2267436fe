//! The sitemap tool as a user runs it (the real `webagent` binary) and the
//! hot-reload watcher as the TUI and agent use it (the library).

mod support;

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::Value;
use support::cli::run_webagent;
use support::scratch::scratch_dir;
use webagent::sitemap::{SitemapEvent, SitemapWatcher};

/// Long enough for a loaded CI machine; the watcher itself answers within
/// a fraction of a second, so this only bounds a failing test.
const EVENT_TIMEOUT: Duration = Duration::from_secs(10);

fn acme() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sitemaps/acme.yaml")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A fresh directory for one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let count = COUNTER.fetch_add(1, Ordering::SeqCst);
        Scratch(scratch_dir(&format!("{name}-{count}")))
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A valid sitemap with exactly `pages` pages, so the page count in an
/// event tells which save it came from.
fn site(pages: usize) -> String {
    let mut text = String::from("title: Site\nchildren:\n");
    for i in 1..pages {
        text.push_str(&format!("  page-{i}:\n    title: Page {i}\n"));
    }
    text
}

// ---------------------------------------------------------------- CLI

#[test]
fn print_shows_the_outline() {
    let out = run_webagent(&["sitemap", "print", acme().to_str().unwrap()]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.starts_with("## Site map\n/                        Acme — 電商後台\n  /login                 Sign in\n"), "{text}");
    assert!(text.contains("\n    /orders/:id          Order detail [auth]\n      actions: view, edit, cancel, refund, ship\n      note: Refund 必須先 ship 才能做\n"), "{text}");
    assert!(
        text.contains("\n    /settings/billing    Billing [auth,admin]\n"),
        "{text}"
    );
}

#[test]
fn resolve_prints_json_and_fails_on_unknown_paths() {
    let file = acme();
    let out = run_webagent(&[
        "sitemap",
        "resolve",
        file.to_str().unwrap(),
        "/orders/12345",
        "--json",
    ]);
    assert!(out.status.success());
    let value: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        value,
        serde_json::json!({"path": "/orders/12345", "pattern": "/orders/:id", "params": {"id": "12345"}, "title": "Order detail"})
    );
    // A full URL with query and fragment resolves to the same page.
    let out = run_webagent(&[
        "sitemap",
        "resolve",
        file.to_str().unwrap(),
        "http://127.0.0.1:9/orders/new/?x=1#y",
        "--json",
    ]);
    let value: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        (
            value["pattern"].as_str(),
            value["params"].as_object().map(|p| p.len())
        ),
        (Some("/orders/new"), Some(0))
    );

    let out = run_webagent(&[
        "sitemap",
        "resolve",
        file.to_str().unwrap(),
        "/no/such/page",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/page"));
}

#[test]
fn search_ranks_billing_first_for_the_chinese_word() {
    let file = acme();
    let out = run_webagent(&[
        "sitemap",
        "search",
        file.to_str().unwrap(),
        "帳單",
        "--json",
    ]);
    assert!(out.status.success());
    let value: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let results = value.as_array().unwrap();
    assert_eq!(results[0]["path"], "/settings/billing");
    assert_eq!(results[0]["title"], "Billing");
    assert!(results[0]["score"].as_f64().unwrap() > 0.0);

    let out = run_webagent(&[
        "sitemap",
        "search",
        file.to_str().unwrap(),
        "order",
        "--json",
        "--limit",
        "2",
    ]);
    let value: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let results = value.as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["path"], "/orders");
    assert!(results[0]["score"].as_f64() >= results[1]["score"].as_f64());
}

#[test]
fn gated_lists_one_path_per_line() {
    let out = run_webagent(&["sitemap", "gated", acme().to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(
        stdout(&out),
        "/dashboard\n/orders\n/orders/new\n/orders/:id\n/settings\n/settings/profile\n/settings/team\n/settings/billing\n/settings/api-keys\n"
    );
}

#[test]
fn check_reports_file_line_column_for_each_bad_file() {
    let scratch = Scratch::new("check");
    let typo = scratch.path("typo.yaml");
    fs::write(
        &typo,
        "title: Shop\nchildren:\n  orders:\n    title: Orders\n    requiresAuht: true\n",
    )
    .unwrap();
    let slash = scratch.path("slash.yaml");
    fs::write(
        &slash,
        "title: Shop\nchildren:\n  /login:\n    title: Sign in\n",
    )
    .unwrap();
    let good = acme();

    let out = run_webagent(&["sitemap", "check", good.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));

    let out = run_webagent(&[
        "sitemap",
        "check",
        good.to_str().unwrap(),
        typo.to_str().unwrap(),
        slash.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with(&format!(
            "{}:5:5: unknown field `requiresAuht`",
            typo.display()
        )),
        "{text}"
    );
    assert!(
        lines[1].starts_with(&format!("{}:3:3: ", slash.display())),
        "{text}"
    );
    assert!(lines[1].contains("write `login`"), "{text}");
}

#[test]
fn template_is_accepted_by_check() {
    let scratch = Scratch::new("template");
    let out = run_webagent(&["sitemap", "template"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("billing:") && text.contains("帳單") && text.contains("账单"));
    let file = scratch.path("template.yaml");
    fs::write(&file, &text).unwrap();
    let out = run_webagent(&["sitemap", "check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let out = run_webagent(&[
        "sitemap",
        "search",
        file.to_str().unwrap(),
        "账单",
        "--json",
    ]);
    let value: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(value[0]["path"], "/settings/billing");
}

#[test]
fn watch_prints_json_lines_for_loads_reloads_and_errors() {
    let scratch = Scratch::new("cli-watch");
    let file = scratch.path("site.yaml");
    fs::write(&file, site(2)).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_webagent"))
        .args(["sitemap", "watch"])
        .arg(&scratch.0)
        .arg("--log-file")
        .arg(scratch.path("log.txt"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (sender, lines) = mpsc::channel();
    let reader = BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in reader.lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let next = || -> Value {
        let line = lines
            .recv_timeout(EVENT_TIMEOUT)
            .expect("a JSON line from watch");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    };

    let loaded = next();
    assert_eq!(loaded["type"], "sitemap_loaded");
    assert_eq!(loaded["file"], file.display().to_string());
    assert_eq!(loaded["pages"], 2);

    fs::write(&file, site(3)).unwrap();
    let reloaded = next();
    assert_eq!(reloaded["type"], "sitemap_reloaded");
    assert_eq!(reloaded["pages"], 3);

    fs::write(&file, "title: Site\nrequiresAuth: maybe\n").unwrap();
    let error = next();
    assert_eq!(error["type"], "error");
    assert_eq!(error["file"], file.display().to_string());
    assert_eq!(
        (error["line"].as_u64(), error["column"].as_u64()),
        (Some(2), Some(15))
    );
    assert!(error["error"].as_str().unwrap().contains("true or false"));

    fs::write(&file, site(4)).unwrap();
    let reloaded = next();
    assert_eq!(reloaded["type"], "sitemap_reloaded");
    assert_eq!(reloaded["pages"], 4);

    child.kill().unwrap();
    child.wait().unwrap();
}

// ------------------------------------------------------------ watcher

fn start(paths: &[PathBuf]) -> (SitemapWatcher, Receiver<SitemapEvent>) {
    let (sender, events) = mpsc::channel();
    let watcher = SitemapWatcher::start(paths, move |event| {
        let _ = sender.send(event);
    })
    .expect("the sitemaps are watched");
    (watcher, events)
}

fn next_event(events: &Receiver<SitemapEvent>) -> SitemapEvent {
    events.recv_timeout(EVENT_TIMEOUT).expect("a sitemap event")
}

/// Pages of the sitemap currently in use for `file`.
fn pages_in_use(watcher: &SitemapWatcher, file: &Path) -> Option<usize> {
    watcher.snapshot().get(file).map(|s| s.page_count())
}

#[test]
fn watcher_follows_every_kind_of_save_and_keeps_the_last_good_version() {
    let scratch = Scratch::new("saves");
    let file = scratch.path("acme.yaml");
    fs::write(&file, site(2)).unwrap();
    let (watcher, events) = start(std::slice::from_ref(&file));
    assert_eq!(
        next_event(&events),
        SitemapEvent::Loaded {
            file: file.clone(),
            pages: 2
        }
    );
    assert_eq!(pages_in_use(&watcher, &file), Some(2));

    // vim-style: write a new file, rename it over the old one.
    let temp = scratch.path("acme.yaml.tmp");
    fs::write(&temp, site(3)).unwrap();
    fs::rename(&temp, &file).unwrap();
    assert_eq!(
        next_event(&events),
        SitemapEvent::Reloaded {
            file: file.clone(),
            pages: 3
        }
    );
    assert_eq!(pages_in_use(&watcher, &file), Some(3));

    // VS Code-style: truncate, then write into the same file.
    let mut handle = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&file)
        .unwrap();
    handle.write_all(site(4).as_bytes()).unwrap();
    drop(handle);
    assert_eq!(
        next_event(&events),
        SitemapEvent::Reloaded {
            file: file.clone(),
            pages: 4
        }
    );
    assert_eq!(pages_in_use(&watcher, &file), Some(4));

    // An invalid save is reported with its position and changes nothing.
    fs::write(
        &file,
        "title: Site\nchildren:\n  orders:\n    titel: Orders\n",
    )
    .unwrap();
    match next_event(&events) {
        SitemapEvent::Error {
            file: f,
            line,
            column,
            message,
        } => {
            assert_eq!(f, file);
            assert_eq!((line, column), (4, 5));
            assert!(message.contains("did you mean `title`"), "{message}");
        }
        other => panic!("expected an error event, got {other:?}"),
    }
    assert_eq!(pages_in_use(&watcher, &file), Some(4));

    // Delete and recreate: the watch survives and picks up the new file.
    fs::remove_file(&file).unwrap();
    fs::write(&file, site(5)).unwrap();
    assert_eq!(
        next_event(&events),
        SitemapEvent::Reloaded {
            file: file.clone(),
            pages: 5
        }
    );
    assert_eq!(pages_in_use(&watcher, &file), Some(5));

    // The rename-over watch still works after all that.
    fs::write(&temp, site(6)).unwrap();
    fs::rename(&temp, &file).unwrap();
    assert_eq!(
        next_event(&events),
        SitemapEvent::Reloaded {
            file: file.clone(),
            pages: 6
        }
    );
    let in_use = watcher.sitemaps();
    let set = in_use.read().unwrap();
    assert_eq!(
        set.for_url("http://anywhere/page-5").unwrap().page_count(),
        6
    );
}

#[test]
fn watched_directory_adds_and_removes_files_and_ignores_others() {
    let scratch = Scratch::new("dir");
    let a = scratch.path("a.yaml");
    fs::write(&a, site(2)).unwrap();
    fs::write(scratch.path("notes.txt"), "not a sitemap").unwrap();
    let broken = scratch.path("broken.yml");
    fs::write(&broken, "title: \"\"\n").unwrap();
    let (watcher, events) = start(std::slice::from_ref(&scratch.0));
    // Start-up reports every file in name order.
    assert_eq!(
        next_event(&events),
        SitemapEvent::Loaded {
            file: a.clone(),
            pages: 2
        }
    );
    match next_event(&events) {
        SitemapEvent::Error {
            file, line, column, ..
        } => {
            assert_eq!(file, broken);
            assert_eq!((line, column), (1, 8));
        }
        other => panic!("expected an error for broken.yml, got {other:?}"),
    }
    assert_eq!(watcher.snapshot().len(), 1);

    let b = scratch.path("b.yaml");
    fs::write(&b, site(3)).unwrap();
    assert_eq!(
        next_event(&events),
        SitemapEvent::Loaded {
            file: b.clone(),
            pages: 3
        }
    );
    assert_eq!(watcher.snapshot().len(), 2);

    // A non-sitemap file produces no event: the next one is a.yaml's.
    fs::write(scratch.path("notes.txt"), "still not a sitemap").unwrap();
    fs::write(&a, site(4)).unwrap();
    assert_eq!(
        next_event(&events),
        SitemapEvent::Reloaded {
            file: a.clone(),
            pages: 4
        }
    );

    fs::remove_file(&b).unwrap();
    assert_eq!(
        next_event(&events),
        SitemapEvent::Removed { file: b.clone() }
    );
    assert!(pages_in_use(&watcher, &b).is_none());
    assert_eq!(pages_in_use(&watcher, &a), Some(4));
}
