//! Suites run on a browser pool (the stand-in in `pool`): sessions queued
//! at the pool's documented address, and a pool that restarts is joined
//! again while one that stays down ends the run.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use webagent::serve::Response;

use crate::cases::{finished, numbered_cases, serve_outcome_pages};
use crate::pool;
use crate::support::chromium::shared;
use crate::support::cli::{json_lines, said};
use crate::support::scratch::scratch_dir;

#[test]
fn a_pool_that_queues_sessions_serves_a_suite_at_its_documented_address() {
    serve_outcome_pages();
    let pool = shared().runtime.block_on(pool::Pool::start(2));
    let dir = scratch_dir("pool");
    numbered_cases(
        &dir,
        6,
        "url: /hello, recipe: {file: steps.rhai, name: greet}, expect: [{text: \"Hello, tester\"}]",
    );
    let origin = shared().server.origin();
    // Four workers against a pool of two: two wait in its queue, unanswered,
    // until the first two leave.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
        .current_dir(&dir)
        .args([
            "test",
            "suite.yaml",
            "--app-url",
            &origin,
            "--workers",
            "4",
            "--json",
        ])
        .args(["--connect", &pool.address(), "--connect-timeout", "120"])
        .output()
        .expect("the webagent binary runs");
    assert_eq!(output.status.code(), Some(0), "{}", said(&output));
    let statuses = finished(&json_lines(&output));
    assert_eq!(statuses.len(), 6, "{statuses:?}");
    assert!(statuses.values().all(|s| s == "passed"), "{statuses:?}");
    let served = pool.served.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        (2..=4).contains(&served),
        "a browser per worker connection: {served}"
    );
    assert_eq!(
        pool.most_at_once.load(std::sync::atomic::Ordering::SeqCst),
        2
    );

    // A pool whose one slot is taken keeps the next session waiting: a
    // client gives up after --connect-timeout, and one patient enough gets
    // the browser once the slot frees.
    let busy = shared().runtime.block_on(pool::Pool::start(1));
    let holder = shared().runtime.block_on(async {
        let launch = webagent::browser::LaunchOptions {
            connect: Some(busy.address()),
            ..Default::default()
        };
        webagent::browser::BrowserSession::start(launch)
            .await
            .expect("the first session gets the slot")
    });
    let (page, address, here) = (format!("{origin}/hello"), busy.address(), dir.clone());
    let observe = move |timeout: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
            .current_dir(&here)
            .args(["observe", &page, "--connect", &address])
            .args(["--connect-timeout", timeout])
            .output()
            .expect("the webagent binary runs")
    };
    let impatient = observe("1");
    let stderr = String::from_utf8_lossy(&impatient.stderr);
    assert_eq!(impatient.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no answer within 1s"), "{stderr}");
    assert!(stderr.contains("--connect-timeout"), "{stderr}");
    let patient = std::thread::spawn({
        let observe = observe.clone();
        move || observe("60")
    });
    // The slot frees once the patient one is surely queued behind it.
    let queued = std::time::Instant::now();
    while busy.waiting() == 0 && queued.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(holder);
    let patient = patient.join().expect("the patient observe ends");
    assert_eq!(patient.status.code(), Some(0), "{}", said(&patient));
    assert!(
        String::from_utf8_lossy(&patient.stdout).contains("Greet"),
        "{}",
        said(&patient)
    );

    // A wrong token is the server's answer, said as such.
    let wrong = pool.address().replace("s3cret", "wrong");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
        .current_dir(&dir)
        .args(["observe", &format!("{origin}/hello"), "--connect", &wrong])
        .output()
        .expect("the webagent binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("401"), "{stderr}");
    assert!(stderr.contains("token"), "{stderr}");
    assert!(!stderr.contains("--remote-debugging-port"), "{stderr}");
    assert_eq!(stderr.matches("401").count(), 1, "said once: {stderr}");
    assert!(
        !stderr.contains("token=wrong"),
        "a token is a credential: {stderr}"
    );
    pool.close();
    busy.close();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_pool_that_restarts_is_joined_again_and_one_that_stays_down_ends_the_run() {
    let pool = shared().runtime.block_on(pool::Pool::start(4));
    let server = &shared().server;
    let b_visits = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&b_visits);
    server.html(
        "/before",
        "<!doctype html><title>Before</title><p>before</p>",
    );
    server.handle("/after", move |_| {
        seen.fetch_add(1, Ordering::SeqCst);
        Response::html("<!doctype html><title>After</title><p>after</p>")
    });
    for (down, window, rejoins) in [
        (Duration::from_millis(1500), 20, true),
        (Duration::from_secs(30), 2, false),
    ] {
        let restarting = pool.clone();
        // Once: the page is opened again after the browser is back, which
        // must not restart the pool a second time.
        let once = Arc::new(std::sync::atomic::AtomicBool::new(false));
        server.handle("/restart", move |_| {
            // A moment after this page is served, as a pool restarting
            // between two calls.
            let pool = restarting.clone();
            if !once.swap(true, Ordering::SeqCst) {
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(300));
                    pool.restart(down);
                });
            }
            Response::html("<!doctype html><title>Restart</title><p>restarting</p>")
        });
        let dir = scratch_dir(if rejoins { "rejoin" } else { "give-up" });
        std::fs::write(
            dir.join("webagent.yaml"),
            format!("browser:\n  reconnect_window: {window}\n"),
        )
        .expect("a config");
        let before = b_visits.load(Ordering::SeqCst);
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
            .current_dir(&dir)
            .args(["exec", &server.url("/before")])
            .args([
                &format!(
                    "{{\"navigate\":{{\"url\":\"{}\"}}}}",
                    server.url("/restart")
                ),
                "{\"wait\":{\"seconds\":1}}",
                &format!("{{\"navigate\":{{\"url\":\"{}\"}}}}", server.url("/after")),
            ])
            .args(["--connect", &pool.address()])
            .output()
            .expect("the webagent binary runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        if rejoins {
            assert_eq!(output.status.code(), Some(0), "{}", said(&output));
            assert!(stderr.contains("attached to it again"), "{}", said(&output));
            assert_eq!(
                b_visits.load(Ordering::SeqCst),
                before + 1,
                "{}",
                said(&output)
            );
        } else {
            assert_eq!(output.status.code(), Some(1), "{}", said(&output));
            assert_eq!(
                b_visits.load(Ordering::SeqCst),
                before,
                "no action runs after giving up: {}",
                said(&output)
            );
            let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
            assert_eq!(errors.len(), 1, "one fatal error: {stderr}");
            assert!(errors[0].contains("reconnect_window"), "{stderr}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    pool.close();
}
