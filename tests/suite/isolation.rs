//! Cases apart from each other: no cookies or storage shared between cases
//! running at once, downloads into each case's own folder, and shards
//! that run every case exactly once.

use std::sync::{Arc, Mutex};

use webagent::serve::Response;

use crate::cases::{finished, numbered_cases, serve_outcome_pages, webagent_test, RECIPES};
use crate::support::chromium::shared;
use crate::support::cli::{json_lines, said};
use crate::support::scratch::scratch_dir;

#[test]
fn cases_running_at_once_share_no_cookies_or_storage() {
    let server = &shared().server;
    let arrived: Arc<Mutex<Vec<String>>> = Arc::default();
    let noted = Arc::clone(&arrived);
    server.handle("/arrive", move |request| {
        if let Ok(mut arrived) = noted.lock() {
            arrived.push(request.query.clone());
        }
        Response::text("noted")
    });
    let counted = Arc::clone(&arrived);
    server.handle("/both", move |_| {
        let both = counted.lock().map(|a| a.len() >= 2).unwrap_or(false);
        Response::text(if both { "yes" } else { "no" })
    });
    // Each case writes a cookie and local storage, waits until the other
    // case has written its own, then shows what its page can read.
    server.html(
        "/iso",
        "<!doctype html><title>Iso</title><p id=out>waiting</p><script>\
         const who = new URLSearchParams(location.search).get('who');\
         document.cookie = 'who=' + who + '; path=/';\
         localStorage.setItem('who', who);\
         fetch('/arrive?' + who).then(async () => {\
           while ((await (await fetch('/both')).text()) !== 'yes') await new Promise(r => setTimeout(r, 50));\
           out.textContent = 'both here; cookie [' + document.cookie + '] storage [' + localStorage.getItem('who') + ']';\
         });</script>",
    );
    let dir = scratch_dir("isolation");
    std::fs::write(dir.join("steps.rhai"), RECIPES).expect("recipes");
    std::fs::write(
        dir.join("suite.yaml"),
        "cases:\n\
         \x20 - name: case a\n\
         \x20   url: /iso?who=a\n\
         \x20   recipe: {file: steps.rhai, name: together}\n\
         \x20   expect:\n\
         \x20     - text: \"cookie [who=a] storage [a]\"\n\
         \x20 - name: case b\n\
         \x20   url: /iso?who=b\n\
         \x20   recipe: {file: steps.rhai, name: together}\n\
         \x20   expect:\n\
         \x20     - text: \"cookie [who=b] storage [b]\"\n",
    )
    .expect("a suite");
    let origin = server.origin();
    let output = webagent_test(
        &dir,
        &[
            "suite.yaml",
            "--app-url",
            &origin,
            "--workers",
            "2",
            "--json",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", said(&output));
    let statuses = finished(&json_lines(&output));
    assert_eq!(statuses["case a"], "passed", "{}", said(&output));
    assert_eq!(statuses["case b"], "passed", "{}", said(&output));
    assert_eq!(arrived.lock().map(|a| a.len()).unwrap_or(0), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_case_in_its_own_context_downloads_into_the_download_folder() {
    let server = &shared().server;
    server.page("/export.csv", "text/csv", "id,total\n1002,59.00\n");
    server.html(
        "/export",
        "<!doctype html><title>Export</title><a id=get href=/export.csv download>Export CSV</a>",
    );
    let dir = scratch_dir("download");
    std::fs::write(
        dir.join("get.rhai"),
        "recipe(\"get\", \"downloads the export\");\n\
         fn get() { let r = run_action(\"click\", #{ selector: \"#get\" }); r.data.downloads[0].state }\n",
    )
    .expect("a recipe");
    std::fs::write(
        dir.join("suite.yaml"),
        "cases:\n  - {name: exports, url: /export, recipe: {file: get.rhai, name: get}}\n",
    )
    .expect("a suite");
    let origin = server.origin();
    let output = webagent_test(
        &dir,
        &["suite.yaml", "--app-url", &origin, "--json", "--yes"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", said(&output));
    let seen = json_lines(&output);
    let case = seen
        .iter()
        .find(|e| e["type"] == "case_finished")
        .expect("the case finished");
    assert_eq!(case["attempts"][0]["outcome"], "completed", "{case}");
    let file = dir.join(".webagent/downloads/export.csv");
    assert_eq!(
        std::fs::read_to_string(&file).expect("the download"),
        "id,total\n1002,59.00\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shards_run_every_case_exactly_once() {
    serve_outcome_pages();
    let dir = scratch_dir("shards");
    numbered_cases(
        &dir,
        7,
        "url: /hello, recipe: {file: steps.rhai, name: noop}",
    );
    let origin = shared().server.origin();
    for count in 1..=4 {
        let mut ran: Vec<String> = Vec::new();
        for index in 1..=count {
            let shard = format!("{index}/{count}");
            let output = webagent_test(
                &dir,
                &[
                    "suite.yaml",
                    "--app-url",
                    &origin,
                    "--shard",
                    &shard,
                    "--json",
                ],
            );
            assert_eq!(output.status.code(), Some(0), "{shard}: {}", said(&output));
            ran.extend(finished(&json_lines(&output)).into_keys());
        }
        ran.sort();
        let every: Vec<String> = {
            let mut all: Vec<String> = (1..=7).map(|n| format!("case {n}")).collect();
            all.sort();
            all
        };
        assert_eq!(ran, every, "N = {count}: each case exactly once");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
