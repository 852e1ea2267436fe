//! Real sites on the first day: sign-ins that last (a persistent profile, a
//! state file, a killed Chromium), downloads, tabs a click opens, and
//! cross-origin frames, against a real Chromium and pages this test serves
//! on 127.0.0.1.
//!
//! Tests of sign-ins start their own browsers (two runs each, or one that
//! gets killed); the rest share one browser for the binary.

mod support;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::chromium::{self, runtime, start};
use support::scratch::scratch_dir;
use support::tab::{action, driver, with_page_on};
use support::wait::eventually;
use webagent::actions::ActionResult;
use webagent::browser::act::ExecOptions;
use webagent::browser::Driver;
use webagent::browser::{BrowserError, BrowserSession, DownloadOptions, LaunchOptions, Tab};
use webagent::dom::PageState;
use webagent::serve::{PageServer, Response};

/// The runtime and the sign-in site; each test starts its own browsers.
struct Site {
    runtime: &'static tokio::runtime::Runtime,
    server: PageServer,
}

static SITE: OnceLock<Site> = OnceLock::new();

/// `/signin` sets a lasting cookie and a local storage token; `/home` says
/// who is signed in (from the cookie) and shows the token (from local
/// storage).
fn site() -> &'static Site {
    SITE.get_or_init(|| {
        let runtime = runtime();
        let server = runtime
            .block_on(PageServer::start())
            .expect("a page server");
        server.handle("/signin", |_| {
            Response::html(
                "<!doctype html><title>Signed in</title>\
                 <script>localStorage.setItem('token', 'tok-ada')</script><p>welcome</p>",
            )
            .with_header(
                "Set-Cookie",
                "sid=ada-s3ss10n-9Zq; Max-Age=3600; Path=/; HttpOnly",
            )
        });
        server.handle("/home", |request| {
            let cookie = request.headers.get("cookie").cloned().unwrap_or_default();
            let who = if cookie.split(';').any(|c| c.trim() == "sid=ada-s3ss10n-9Zq") {
                "Signed in as ada"
            } else {
                "Signed out"
            };
            Response::html(format!(
                "<!doctype html><title>Home</title><h1 id=who>{who}</h1>\
                 <p id=token></p><script>document.getElementById('token').textContent = \
                 'token: ' + (localStorage.getItem('token') || 'none')</script>"
            ))
        });
        Site { runtime, server }
    })
}

/// The page's `#who` and `#token` texts.
async fn who(tab: &Tab) -> (String, String) {
    let value = tab
        .eval("[document.getElementById('who')?.textContent, document.getElementById('token')?.textContent]")
        .await
        .expect("reading the page");
    let text = |i: usize| value[i].as_str().unwrap_or_default().to_string();
    (text(0), text(1))
}

/// No Chromium runs on a persistent profile any more.
async fn released(profile: &Path) -> bool {
    eventually(|| chromium_on(profile).is_none()).await
}

#[test]
fn a_sign_in_lasts_across_two_runs_on_a_persistent_profile() {
    let s = site();
    let profile = scratch_dir("profile").join("profile");
    let options = LaunchOptions {
        profile: Some(profile.clone()),
        ..LaunchOptions::default()
    };
    s.runtime.block_on(async {
        let first = start(options.clone()).await;
        assert!(profile.is_dir(), "the profile directory was created");
        let tab = first
            .new_tab(&s.server.url("/signin"))
            .await
            .expect("signing in");
        tab.navigate(&s.server.url("/home"), Duration::from_secs(10))
            .await
            .expect("home");
        assert_eq!(who(&tab).await.0, "Signed in as ada");

        // A second Chromium on the same profile is refused at once, naming
        // the directory, instead of handing over to the first and hanging.
        let error = BrowserSession::start(options.clone())
            .await
            .expect_err("the profile is locked");
        assert!(
            matches!(error, BrowserError::ProfileInUse { .. }),
            "{error}"
        );
        assert!(error.to_string().contains("profile"), "{error}");

        drop(tab);
        first.close().await;
        assert!(
            released(&profile).await,
            "the first Chromium let go of the profile"
        );
        assert!(profile.is_dir(), "the profile is kept after the run");

        let second = start(options.clone()).await;
        let tab = second.new_tab(&s.server.url("/home")).await.expect("home");
        assert_eq!(
            who(&tab).await,
            ("Signed in as ada".to_string(), "token: tok-ada".to_string()),
            "the second run is still signed in"
        );
        drop(tab);
        second.close().await;
    });
    let _ = std::fs::remove_dir_all(profile.parent().expect("the test dir"));
}

#[test]
fn a_state_file_carries_a_sign_in_into_a_fresh_profile_and_only_its_owner_reads_it() {
    let s = site();
    let dir = scratch_dir("state");
    let state = dir.join("state.json");
    let options = LaunchOptions {
        state: Some(state.clone()),
        ..LaunchOptions::default()
    };
    s.runtime.block_on(async {
        // No file yet: a first run starts empty.
        let first = start(options.clone()).await;
        let tab = first.new_tab(&s.server.url("/home")).await.expect("home");
        assert_eq!(who(&tab).await.0, "Signed out");
        tab.navigate(&s.server.url("/signin"), Duration::from_secs(10))
            .await
            .expect("signing in");
        let saved = tab.save_state(&state).await.expect("saving the state");
        assert!(saved.cookies.iter().any(|c| c.name == "sid"), "{saved:?}");
        drop(tab);
        drop(first);

        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&state)
                .expect("the file")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "owner-only");
        }
        let text = std::fs::read_to_string(&state).expect("the file");
        assert!(text.contains("tok-ada"), "local storage saved");

        // A fresh profile, the same state file: signed in, token back.
        let second = start(options.clone()).await;
        let tab = second.new_tab(&s.server.url("/home")).await.expect("home");
        assert_eq!(
            who(&tab).await,
            ("Signed in as ada".to_string(), "token: tok-ada".to_string())
        );

        // Without the file, the same browser setup is signed out.
        let bare = start(LaunchOptions::default()).await;
        let tab = bare.new_tab(&s.server.url("/home")).await.expect("home");
        assert_eq!(who(&tab).await.0, "Signed out");
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_broken_state_file_stops_the_start_with_its_name_and_place() {
    let s = site();
    let dir = scratch_dir("bad-state");
    let state = dir.join("state.json");
    std::fs::write(&state, "{\"cookies\": 3}").expect("writing");
    s.runtime.block_on(async {
        let error = BrowserSession::start(LaunchOptions {
            state: Some(state.clone()),
            ..LaunchOptions::default()
        })
        .await
        .expect_err("a broken file");
        let text = error.to_string();
        assert!(
            text.contains("state.json") && text.contains("line 1"),
            "{text}"
        );
    });
}

/// The main Chromium process running on `profile`.
fn chromium_on(profile: &Path) -> Option<u32> {
    let flag = format!("--user-data-dir={}", profile.display());
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            // The guardian shell carries the same flags; only Chromium counts.
            let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
            if !name.starts_with("chrom") {
                return None;
            }
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            let browser =
                args.contains(&flag.as_bytes()) && !args.iter().any(|a| a.starts_with(b"--type="));
            browser.then_some(pid)
        })
}

fn kill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("running kill");
    assert!(status.success(), "killed Chromium {pid}");
}

/// Kills the environment's Chromium and observes until the relaunched
/// browser shows the page again.
async fn kill_and_recover(env: &mut Driver, session: &BrowserSession) -> PageState {
    let profile = session
        .profile_dir()
        .expect("a launched browser")
        .to_path_buf();
    let pid = chromium_on(&profile).expect("the session's Chromium");
    kill(pid);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut relaunched = false;
    loop {
        match env.observe().await {
            Ok(state) if relaunched => return state,
            Ok(_) => {}
            Err(error) => {
                assert!(!error.fatal, "{}", error.message);
                // The driver says "started a new one" since attached
                // browsers are "attached again" instead.
                relaunched |= error.message.contains("started a new one");
            }
        }
        assert!(Instant::now() < deadline, "the browser came back");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[test]
fn a_killed_chromium_comes_back_signed_in_from_the_state_file() {
    let s = site();
    let dir = scratch_dir("killed-state");
    let state = dir.join("state.json");
    s.runtime.block_on(async {
        let session = start(LaunchOptions {
            state: Some(state.clone()),
            ..LaunchOptions::default()
        })
        .await;
        let tab = session
            .new_tab(&s.server.url("/signin"))
            .await
            .expect("signing in");
        tab.save_state(&state).await.expect("saving");
        tab.navigate(&s.server.url("/home"), Duration::from_secs(10))
            .await
            .expect("home");
        let mut env = driver(tab, ExecOptions::default());
        assert_eq!(env.observe().await.expect("observing").title, "Home");
        let page = kill_and_recover(&mut env, &session).await;
        assert!(
            page.page_text.text.contains("Signed in as ada"),
            "{}",
            page.page_text.text
        );
        assert!(
            page.page_text.text.contains("token: tok-ada"),
            "{}",
            page.page_text.text
        );
    });
}

#[test]
fn a_killed_chromium_comes_back_signed_in_on_its_persistent_profile() {
    let s = site();
    let profile = scratch_dir("killed-profile").join("profile");
    s.runtime.block_on(async {
        let session = start(LaunchOptions {
            profile: Some(profile.clone()),
            ..LaunchOptions::default()
        })
        .await;
        let tab = session
            .new_tab(&s.server.url("/signin"))
            .await
            .expect("signing in");
        tab.navigate(&s.server.url("/home"), Duration::from_secs(10))
            .await
            .expect("home");
        let mut env = driver(tab, ExecOptions::default());
        assert_eq!(env.observe().await.expect("observing").title, "Home");
        let page = kill_and_recover(&mut env, &session).await;
        assert!(
            page.page_text.text.contains("Signed in as ada"),
            "{}",
            page.page_text.text
        );
    });
}

fn ok_data(result: &ActionResult) -> Value {
    match result {
        ActionResult::Success { data } => data.clone().unwrap_or(json!(null)),
        other => panic!("expected success, got {other:?}"),
    }
}

#[test]
fn webagent_state_save_writes_the_file_and_no_log_or_output_holds_its_values() {
    let s = site();
    let dir = scratch_dir("cli-state");
    let state = dir.join("state.json");
    let log = dir.join("webagent.log");
    let webagent = |args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
            .current_dir(&dir)
            .arg("--log-file")
            .arg(&log)
            .args(args)
            .output()
            .expect("webagent runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output.status.code(), text)
    };
    let signin = s.server.url("/signin");
    let home = s.server.url("/home");
    let state_arg = state.display().to_string();
    let (code, saved) = webagent(&["state", "save", &state_arg, "--url", &signin]);
    assert_eq!(code, Some(0), "{saved}");
    assert!(saved.contains("cookies"), "{saved}");
    let (code, listed) = webagent(&["exec", &home, "read_page", "--state", &state_arg]);
    assert_eq!(code, Some(0), "{listed}");
    assert!(listed.contains("Signed in as ada"), "{listed}");

    let file = std::fs::read_to_string(&state).expect("the state file");
    assert!(file.contains("ada-s3ss10n-9Zq") && file.contains("tok-ada"));
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    // The cookie is HttpOnly: no page shows it, so only a leak could.
    assert!(!saved.contains("s3ss10n-9Zq") && !listed.contains("s3ss10n-9Zq"));
    for value in ["s3ss10n-9Zq", "tok-ada"] {
        assert!(!logged.contains(value), "{value} logged:\n{logged}");
    }
    let (code, broken) = {
        std::fs::write(dir.join("broken.json"), "{\"origins\": 5}").expect("writing");
        webagent(&["exec", &home, "read_page", "--state", "broken.json"])
    };
    assert_eq!(
        code,
        Some(2),
        "a broken state file is the person's to fix: {broken}"
    );
    assert!(broken.contains("broken.json"), "{broken}");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------
// Downloads and tabs: one shared browser that keeps downloads.

/// The binary's shared browser (see `support::chromium`), launched to keep
/// downloads, and where it keeps them.
struct Shared {
    session: BrowserSession,
    server: PageServer,
    downloads: PathBuf,
}

/// The largest download the shared browser keeps.
const MAX_DOWNLOAD: u64 = 64 * 1024;

fn shared() -> &'static Shared {
    static SHARED: OnceLock<Result<Shared, String>> = OnceLock::new();
    let shared = SHARED.get_or_init(|| {
        let downloads = scratch_dir("downloads");
        let chromium::Shared {
            session, server, ..
        } = chromium::Shared::start(|_| LaunchOptions {
            downloads: Some(DownloadOptions {
                dir: downloads.clone(),
                max_bytes: MAX_DOWNLOAD,
            }),
            ..LaunchOptions::default()
        })?;
        Ok(Shared {
            session,
            server,
            downloads: downloads.canonicalize().expect("the downloads dir"),
        })
    });
    chromium::started(shared.as_ref())
}

/// Serves `html` at `path`, opens it and runs `body` on an environment
/// that follows the tabs a click opens and keeps downloads.
fn with_env<F, Fut>(path: &str, html: &str, body: F)
where
    F: FnOnce(Driver) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let s = shared();
    with_page_on(&s.session, &s.server, path, html, |tab, _| async move {
        let mut env = driver(tab, ExecOptions::default()).with_tab_and_download_policy(true, false);
        env.observe().await.expect("observing");
        body(env).await;
    });
}

#[test]
fn a_csv_export_is_downloaded_named_in_the_result_and_read() {
    let s = shared();
    s.server.handle("/orders.csv", |_| {
        Response::new("text/csv", "id,total\n1001,42.50\n1002,17.00\n")
            .with_header("Content-Disposition", "attachment; filename=\"orders.csv\"")
    });
    s.server.handle("/huge.bin", |_| {
        Response::new(
            "application/octet-stream",
            vec![b'x'; (MAX_DOWNLOAD * 4) as usize],
        )
        .with_header("Content-Disposition", "attachment; filename=\"huge.bin\"")
    });
    let html = "<!doctype html><title>Admin</title>\
        <a id=export href=\"/orders.csv\">Export CSV</a> \
        <a id=huge href=\"/huge.bin\">Export everything</a>";
    with_env("/admin", html, |mut env| async move {
        let result = env
            .execute(&action(json!({"click": {"selector": "#export"}})))
            .await;
        let data = ok_data(&result);
        let download = &data["downloads"][0];
        assert_eq!(download["name"], "orders.csv", "{data}");
        assert_eq!(download["type"], "text/csv", "{data}");
        assert_eq!(download["state"], "completed", "{data}");
        let file = PathBuf::from(download["file"].as_str().expect("a file"));
        assert!(file.starts_with(&s.downloads), "{}", file.display());
        assert_eq!(
            download["size"],
            std::fs::metadata(&file).expect("saved").len()
        );

        let read = env
            .execute(&action(json!({"read_file": {"path": "orders.csv"}})))
            .await;
        let read = ok_data(&read);
        assert!(
            read["text"]
                .as_str()
                .unwrap_or_default()
                .contains("1001,42.50"),
            "{read}"
        );

        // The same export again keeps both files.
        let again = ok_data(
            &env.execute(&action(json!({"click": {"selector": "#export"}})))
                .await,
        );
        let second = again["downloads"][0]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            second.starts_with("orders (") && second.ends_with(").csv"),
            "{again}"
        );
        assert!(file.exists(), "the first file is kept");

        // Larger than the limit: cancelled, and nothing is left under a name.
        let huge = ok_data(
            &env.execute(&action(json!({"click": {"selector": "#huge"}})))
                .await,
        );
        assert_eq!(huge["downloads"][0]["state"], "too_large", "{huge}");
        assert!(!s.downloads.join("huge.bin").exists());

        // Only the downloads directory can be read.
        let outside = env
            .execute(&action(json!({"read_file": {"path": "../../etc/passwd"}})))
            .await;
        assert!(!outside.is_ok(), "{outside:?}");
        let missing = env
            .execute(&action(json!({"read_file": {"path": "nope.csv"}})))
            .await;
        match missing {
            ActionResult::Failure { message, .. } => {
                assert!(message.contains("orders.csv"), "{message}")
            }
            other => panic!("expected a failure naming the files, got {other:?}"),
        }
    });
}

#[test]
fn a_popup_a_click_opens_is_followed_and_closed() {
    let s = shared();
    s.server.html(
        "/popup-target",
        "<!doctype html><title>Report</title><p>the report</p><button>Print</button>",
    );
    let html = "<!doctype html><title>Opener</title>\
        <a id=open href=\"/popup-target\" target=\"_blank\">Open report</a><button>Stay</button>";
    with_env("/popup-home", html, |mut env| async move {
        let home = env.tab().target_id().to_string();
        let result = env
            .execute(&action(json!({"click": {"selector": "#open"}})))
            .await;
        let data = ok_data(&result);
        let opened = &data["new_tab"];
        assert!(
            opened["url"]
                .as_str()
                .unwrap_or_default()
                .ends_with("/popup-target"),
            "{data}"
        );
        assert_eq!(opened["title"], "Report", "{data}");
        assert_eq!(opened["switched"], true, "{data}");

        let page = env.observe().await.expect("observing the popup");
        assert!(page.url.ends_with("/popup-target"), "{}", page.url);
        assert!(page.tabs.len() >= 2, "{:?}", page.tabs);

        // Back to the opener by number, then close the popup from there.
        let opener = page
            .tabs
            .iter()
            .position(|t| t.id == home)
            .expect("the opener is listed") as u32;
        let popup_id = page
            .tabs
            .iter()
            .find(|t| t.current)
            .expect("the current tab")
            .id
            .clone();
        ok_data(
            &env.execute(&action(json!({"switch_tab": {"tab": opener}})))
                .await,
        );
        let page = env.observe().await.expect("observing");
        assert!(page.url.ends_with("/popup-home"));
        // Numbered in the latest listing: tabs other tests of this browser
        // open and close meanwhile move the numbers.
        let popup = page
            .tabs
            .iter()
            .position(|t| t.id == popup_id)
            .expect("the popup is listed") as u32;
        ok_data(
            &env.execute(&action(json!({"switch_tab": {"tab": popup}})))
                .await,
        );
        let page = env.observe().await.expect("observing");
        assert!(page.url.ends_with("/popup-target"), "{}", page.url);

        // Closing the current tab goes back to the opener.
        ok_data(&env.execute(&action(json!({"close_tab": {}}))).await);
        let page = env.observe().await.expect("observing");
        assert!(page.url.ends_with("/popup-home"), "{}", page.url);
        assert!(
            page.tabs.iter().all(|t| !t.url.ends_with("/popup-target")),
            "{:?}",
            page.tabs
        );

        // A tab number that is not listed is a clear error.
        let bad = env
            .execute(&action(json!({"switch_tab": {"tab": 99}})))
            .await;
        match bad {
            ActionResult::Failure { message, .. } => {
                assert!(message.contains("no tab 99"), "{message}")
            }
            other => panic!("expected a failure, got {other:?}"),
        }
    });
}

/// A form whose "Look up" link opens `popup` in a popup window, as admin
/// sites open their lookup and "add another" windows; `script` goes after
/// the form.
fn opener_form(popup: &str, script: &str) -> String {
    format!(
        "<!doctype html><title>Change order</title>\
         <form><label>Notes <input id=notes></label> <label>Owner <input id=owner></label>\
         <a id=lookup href=\"{popup}\" onclick=\"window.open(this.href, 'lookup', \
         'width=500,height=400'); return false\">Look up owner</a></form>{script}"
    )
}

/// Fills the opener's form half, opens the lookup popup, and checks the
/// session followed it there.
async fn open_lookup(env: &mut Driver) {
    let page = env.observe().await.expect("observing the form");
    let notes = index_of(&page, "Notes");
    ok_data(
        &env.execute(&action(
            json!({"input_text": {"index": notes, "text": "half-filled"}}),
        ))
        .await,
    );
    let opened = ok_data(
        &env.execute(&action(json!({"click": {"selector": "#lookup"}})))
            .await,
    );
    assert_eq!(opened["new_tab"]["switched"], true, "{opened}");
    let popup = env.observe().await.expect("observing the popup");
    assert!(popup.url.contains("/lookup"), "{}", popup.url);
}

/// The step after a popup closed itself: back on the opener (the same
/// tab, no browser started anew), with the value the popup handed over
/// and the half-filled field both there.
async fn back_on_the_opener(
    env: &mut Driver,
    opener: &str,
    popup: &str,
    closed: &Value,
    took: Duration,
) {
    // The settle waits up to 10 s for an answer a closed page never sends.
    assert!(
        took < Duration::from_secs(3),
        "the click took {took:?}: it waited for the closed page"
    );
    assert!(
        closed["url"].as_str().unwrap_or_default().contains(popup),
        "the result names the popup that closed: {closed}"
    );
    assert!(
        closed["now_on"]
            .as_str()
            .unwrap_or_default()
            .contains("/change-order"),
        "the result says where the session is now: {closed}"
    );
    let page = env
        .observe()
        .await
        .unwrap_or_else(|e| panic!("the next step observes the opener: {}", e.message));
    assert_eq!(env.tab().target_id(), opener, "the opener's own tab");
    assert!(page.url.contains("/change-order"), "{}", page.url);
    assert!(page.listing.contains("Ada Lovelace"), "{}", page.listing);
    assert!(page.listing.contains("half-filled"), "{}", page.listing);
    assert!(
        page.tabs.iter().all(|t| !t.url.contains(popup)),
        "{:?}",
        page.tabs
    );
}

#[test]
fn a_popup_that_fills_its_opener_and_closes_itself_hands_the_session_back() {
    let s = shared();
    s.server.html(
        "/lookup-pick",
        "<!doctype html><title>Lookup</title><p>Pick an owner</p>\
         <button id=pick onclick=\"window.opener.document.getElementById('owner').value = \
         'Ada Lovelace'; window.close()\">Ada Lovelace</button>",
    );
    let html = opener_form("/lookup-pick", "");
    with_env("/change-order", &html, |mut env| async move {
        let opener = env.tab().target_id().to_string();
        open_lookup(&mut env).await;
        let started = Instant::now();
        let picked = ok_data(
            &env.execute(&action(json!({"click": {"selector": "#pick"}})))
                .await,
        );
        let took = started.elapsed();
        back_on_the_opener(
            &mut env,
            &opener,
            "/lookup-pick",
            &picked["tab_closed"],
            took,
        )
        .await;
    });
}

#[test]
fn a_popup_whose_saved_form_answers_with_a_page_that_closes_it_hands_the_session_back() {
    // The "add another" popup of admin sites: Save posts the form, and the
    // answer page calls a function of the opener, which sets the field and
    // closes the popup's window itself.
    let s = shared();
    s.server.html(
        "/lookup-add",
        "<!doctype html><title>Add owner</title>\
         <form method=post action=\"/lookup-saved\"><label>Name <input name=name></label>\
         <button>Save</button></form>",
    );
    s.server.handle("/lookup-saved", |_| {
        Response::html(
            "<!doctype html><title>Saved</title><p>saved</p>\
             <script>opener.takeOwner(window, 'Ada Lovelace')</script>",
        )
    });
    let html = opener_form(
        "/lookup-add",
        "<script>function takeOwner(popup, name) { \
         document.getElementById('owner').value = name; popup.close(); }</script>",
    );
    with_env("/change-order-added", &html, |mut env| async move {
        let opener = env.tab().target_id().to_string();
        open_lookup(&mut env).await;
        let page = env.observe().await.expect("observing the popup");
        let name = index_of(&page, "Name");
        ok_data(
            &env.execute(&action(
                json!({"input_text": {"index": name, "text": "Ada Lovelace"}}),
            ))
            .await,
        );
        let page = env.observe().await.expect("observing the popup");
        let save = index_of(&page, "Save");
        let started = Instant::now();
        let saved = ok_data(
            &env.execute(&action(json!({"click": {"index": save}})))
                .await,
        );
        let took = started.elapsed();
        back_on_the_opener(&mut env, &opener, "/lookup-add", &saved["tab_closed"], took).await;
    });
}

/// The element listed with `text` (its words or an attribute value).
fn index_of(page: &PageState, text: &str) -> usize {
    page.elements
        .iter()
        .find(|e| e.text.contains(text) || e.attributes.iter().any(|(_, v)| v.contains(text)))
        .unwrap_or_else(|| panic!("no element with {text:?} in\n{}", page.listing))
        .index
        .0
}

/// A payment form served from `localhost` (another site than the
/// `127.0.0.1` page embedding it, so Chromium runs it in its own process)
/// whose submissions the server keeps.
fn serve_payment_frame(s: &Shared, path: &str, paid: &str) -> (String, Received) {
    let received: Received = Default::default();
    let keep = received.clone();
    let paid_path = paid.to_string();
    s.server.handle(paid, move |request| {
        keep.lock()
            .expect("a lock no test thread poisoned")
            .push(String::from_utf8_lossy(&request.body).into_owned());
        Response::html(format!(
            "<!doctype html><title>Paid</title><p>paid at {paid_path}</p>"
        ))
    });
    s.server.html(
        path,
        format!(
            "<!doctype html><title>Card</title><style>body{{margin:0;font:16px sans-serif}}</style>\
             <form method=post action={paid}>\
             <input name=card placeholder=\"Card number\">\
             <select name=plan><option>Monthly</option><option>Yearly</option></select>\
             <button>Pay now</button></form>"
        ),
    );
    (
        s.server.url(path).replace("127.0.0.1", "localhost"),
        received,
    )
}

/// The bodies of the form posts a handler received.
type Received = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

#[test]
fn a_form_in_a_cross_origin_frame_is_listed_filled_and_submitted_by_index() {
    let s = shared();
    let (frame, paid) = serve_payment_frame(s, "/card-frame", "/card-paid");
    let html = format!(
        "<!doctype html><title>Checkout</title><style>body{{margin:0}}</style>\
         <h1>Checkout</h1><button>Back</button>\
         <iframe title=Payment src=\"{frame}\" style=\"width:500px;height:200px;border:4px solid #888\"></iframe>\
         <button>Help</button>"
    );
    with_env("/checkout", &html, |mut env| async move {
        let page = env.observe().await.expect("observing");
        // The frame's controls are listed under the <iframe>, one level
        // deeper, numbered in document order with the page's own.
        let lines: Vec<&str> = page.listing.lines().collect();
        let at = |needle: &str| {
            lines
                .iter()
                .position(|l| l.contains(needle))
                .unwrap_or_else(|| panic!("no {needle:?} in\n{}", page.listing))
        };
        let (iframe, card, pay, help) =
            (at("<iframe"), at("Card number"), at("Pay now"), at("Help"));
        assert!(
            iframe < card && card < pay && pay < help,
            "{}",
            page.listing
        );
        assert!(lines[card].starts_with('\t'), "{}", page.listing);
        assert!(
            !lines[iframe].contains("contents not listed"),
            "{}",
            page.listing
        );
        let indices: Vec<usize> = page.elements.iter().map(|e| e.index.0).collect();
        assert!(indices.windows(2).all(|w| w[0] < w[1]), "{indices:?}");
        let card_el = page
            .elements
            .iter()
            .find(|e| e.attribute("placeholder") == Some("Card number"))
            .expect("card");
        assert_eq!(
            card_el.frame.map(|f| f.0),
            Some(index_of(&page, "Payment")),
            "{}",
            page.listing
        );

        let card = index_of(&page, "Card number");
        let plan = index_of(&page, "Monthly");
        let pay = index_of(&page, "Pay now");
        let typed = env
            .execute(&action(
                json!({"input_text": {"index": card, "text": "4242 4242"}}),
            ))
            .await;
        assert_eq!(ok_data(&typed)["value"], "4242 4242", "{typed:?}");
        let chosen = env
            .execute(&action(
                json!({"select_option": {"index": plan, "text": "Yearly"}}),
            ))
            .await;
        ok_data(&chosen);
        let clicked = env.execute(&action(json!({"click": {"index": pay}}))).await;
        ok_data(&clicked);
        assert!(
            eventually(|| !paid
                .lock()
                .expect("a lock no test thread poisoned")
                .is_empty())
            .await,
            "the frame's form was submitted"
        );
        let body = paid.lock().expect("a lock no test thread poisoned")[0].clone();
        assert!(
            body.contains("card=4242+4242") && body.contains("plan=Yearly"),
            "{body}"
        );
        // The page around the frame still works by index.
        let page = env.observe().await.expect("observing again");
        assert!(
            page.page_text.text.contains("paid at /card-paid"),
            "{}",
            page.page_text.text
        );
        let help = index_of(&page, "Help");
        ok_data(
            &env.execute(&action(json!({"click": {"index": help}})))
                .await,
        );
    });
}

#[test]
fn selectors_reach_into_frames_of_any_origin_and_shadow_roots_and_upload_there() {
    let s = shared();
    let received: Received = Default::default();
    let keep = received.clone();
    s.server.handle("/nest-paid", move |request| {
        keep.lock()
            .expect("a lock no test thread poisoned")
            .push(String::from_utf8_lossy(&request.body).into_owned());
        Response::html("<!doctype html><title>Sent</title><p>sent</p>")
    });
    s.server.html(
        "/nest-b",
        "<!doctype html><title>B</title><button onclick=\"document.body.append(' deep pressed')\">Deep</button>",
    );
    let inner = s.server.url("/nest-b");
    s.server.html(
        "/nest-a",
        format!(
            "<!doctype html><title>A</title>\
             <form method=post action=/nest-paid enctype=multipart/form-data>\
             <input name=card placeholder=Card><input type=file name=doc>\
             <button type=submit>Send</button></form>\
             <iframe src=\"{inner}\" style=\"width:300px;height:80px\"></iframe>"
        ),
    );
    let outer = s.server.url("/nest-a").replace("127.0.0.1", "localhost");
    let html = format!(
        "<!doctype html><title>Nest</title>\
         <x-widget></x-widget>\
         <script>const r = document.querySelector('x-widget').attachShadow({{mode: 'open'}});\
         r.innerHTML = '<button id=inner onclick=\"document.title = \\'shadow pressed\\'\">Shadow</button>';</script>\
         <iframe src=\"{outer}\" style=\"width:600px;height:300px\"></iframe>"
    );
    let upload = scratch_dir("frame-upload").join("invoice.txt");
    std::fs::write(&upload, "invoice 42").expect("a file to upload");
    with_env("/nest", &html, |mut env| async move {
        // Nested: a 127.0.0.1 frame inside the localhost frame is listed
        // two levels under the page, and acts by index.
        let page = env.observe().await.expect("observing");
        let deep = index_of(&page, "Deep");
        let line = page
            .listing
            .lines()
            .find(|l| l.contains("Deep"))
            .expect("deep line");
        assert!(line.starts_with("\t\t"), "{}", page.listing);
        ok_data(
            &env.execute(&action(json!({"click": {"index": deep}})))
                .await,
        );
        let page = env.observe().await.expect("observing");
        assert!(
            page.page_text.text.contains("deep pressed"),
            "{}",
            page.page_text.text
        );

        // By selector: a shadow root, then a frame of another origin.
        ok_data(
            &env.execute(&action(
                json!({"click": {"selector": "x-widget >>> #inner"}}),
            ))
            .await,
        );
        let title = env.tab().eval("document.title").await.expect("title");
        assert_eq!(title, "shadow pressed");
        let typed = env
            .execute(&action(
                json!({"input_text": {"selector": "iframe >>> input[name=card]", "text": "4000 0000"}}),
            ))
            .await;
        assert_eq!(ok_data(&typed)["value"], "4000 0000", "{typed:?}");
        let uploaded = env
            .execute(&action(json!({"upload_file": {
                "selector": "iframe >>> input[type=file]",
                "path": upload.to_string_lossy(),
            }})))
            .await;
        assert_eq!(ok_data(&uploaded)["file"], "invoice.txt", "{uploaded:?}");
        // Two hops of other origins.
        ok_data(
            &env.execute(&action(
                json!({"click": {"selector": "iframe >>> iframe >>> button"}}),
            ))
            .await,
        );
        ok_data(
            &env.execute(&action(
                json!({"click": {"selector": "iframe >>> button[type=submit]"}}),
            ))
            .await,
        );
        assert!(
            eventually(|| !received
                .lock()
                .expect("a lock no test thread poisoned")
                .is_empty())
            .await,
            "the frame's form was sent"
        );
        let body = received.lock().expect("a lock no test thread poisoned")[0].clone();
        assert!(body.contains("4000 0000"), "{body}");
        assert!(
            body.contains("invoice.txt") && body.contains("invoice 42"),
            "{body}"
        );

        // A hop that does not exist is a clear failure, not a hang.
        let missing = env
            .execute(&action(
                json!({"click": {"selector": "iframe#none >>> button"}}),
            ))
            .await;
        match missing {
            ActionResult::Failure { message, .. } => {
                assert!(message.contains("iframe#none"), "{message}")
            }
            other => panic!("expected a failure, got {other:?}"),
        }
    });
}
