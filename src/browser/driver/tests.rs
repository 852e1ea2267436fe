//! The driver's pure parts: reading downloaded files, joining what an
//! action caused to its result, which errors end a run, and the target's
//! risk facts.

use serde_json::json;

use super::effects::with_extras;
use super::files::{read_download, READ_FILE_LIMIT};
use super::target::target_facts;
use super::{driver_error, is_error_page, is_navigation};
use crate::actions::{ActionResult, FailureReason};
use crate::browser::error::BrowserError;

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("webagent-driver-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

#[test]
fn read_file_reads_downloads_only_and_says_what_is_there() {
    let dir = scratch("read");
    std::fs::write(dir.join("orders.csv"), "id,total\n1,42\n").expect("a file");
    let read = read_download(&dir, "orders.csv");
    let data = read.data().expect("read");
    assert_eq!(data["text"], "id,total\n1,42\n");
    assert_eq!(data["type"], "text/csv");
    assert_eq!(data["clipped"], false);
    // By its absolute path too, when it lies inside.
    let absolute = dir.join("orders.csv").display().to_string();
    assert!(read_download(&dir, &absolute).is_ok());
    // Outside the directory, nothing is read, whatever the path says.
    let outside = dir
        .parent()
        .expect("a parent")
        .join(format!("outside-{}.txt", std::process::id()));
    std::fs::write(&outside, "not yours").expect("a file outside");
    let escaped = read_download(
        &dir,
        &format!(
            "../{}",
            outside
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
        ),
    );
    assert_eq!(
        escaped.reason(),
        Some(FailureReason::Blocked),
        "{escaped:?}"
    );
    let _ = std::fs::remove_file(&outside);
    // A missing file names the ones there are.
    let missing = read_download(&dir, "invoice.pdf");
    assert_eq!(missing.reason(), Some(FailureReason::NotFound));
    assert!(format!("{missing:?}").contains("orders.csv"), "{missing:?}");
    // Binary files are refused, long text is clipped.
    std::fs::write(dir.join("logo.png"), [0x89, b'P', b'N', b'G', 0, 0, 1]).expect("a file");
    assert_eq!(
        read_download(&dir, "logo.png").reason(),
        Some(FailureReason::InvalidParams)
    );
    std::fs::write(dir.join("long.txt"), "x".repeat(READ_FILE_LIMIT + 10)).expect("a file");
    let long = read_download(&dir, "long.txt");
    let data = long.data().expect("read");
    assert_eq!(data["clipped"], true);
    assert_eq!(data["text"].as_str().map(str::len), Some(READ_FILE_LIMIT));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn what_an_action_caused_joins_its_result() {
    let mut extra = serde_json::Map::new();
    extra.insert("new_tab".into(), json!({"url": "http://a.test/"}));
    let joined = with_extras(ActionResult::ok_with(json!("clicked")), extra.clone());
    assert_eq!(
        joined.data(),
        Some(&json!({"result": "clicked", "new_tab": {"url": "http://a.test/"}}))
    );
    let joined = with_extras(ActionResult::ok(), extra.clone());
    assert_eq!(
        joined.data(),
        Some(&json!({"new_tab": {"url": "http://a.test/"}}))
    );
    let failed = with_extras(ActionResult::timeout("slow"), extra);
    assert_eq!(failed.reason(), Some(FailureReason::Timeout));
    assert!(format!("{failed:?}").contains("meanwhile"), "{failed:?}");
    // Nothing caused, nothing added.
    assert_eq!(
        with_extras(ActionResult::ok(), serde_json::Map::new()),
        ActionResult::ok()
    );
}

#[test]
fn only_a_lost_browser_is_fatal_and_navigations_are_known() {
    assert!(driver_error(BrowserError::Disconnected("gone".into())).fatal);
    assert!(!driver_error(BrowserError::Script("boom".into())).fatal);
    assert!(is_error_page("chrome-error://chromewebdata/"));
    assert!(!is_error_page("http://a.test/"));
    let catalog = crate::actions::Catalog::builtin();
    let parse = |v| catalog.parse(&v).expect("valid");
    assert!(is_navigation(&parse(json!({"navigate": {"url": "/x"}}))));
    assert!(is_navigation(&parse(json!({"back": {}}))));
    assert!(!is_navigation(&parse(json!({"click": {"index": 1}}))));
}

#[test]
fn a_targets_risk_facts_are_read_from_the_helpers_answer() {
    let facts = target_facts(&json!({
        "tag": "button", "type": null, "inForm": true, "isSubmit": true,
        "href": null, "download": false
    }));
    assert!(facts.submits_form());
    assert_eq!(facts.tag, "button");
    let link = target_facts(&json!({"tag": "a", "href": "/x.csv", "download": true}));
    assert!(link.download && !link.in_form);
    assert_eq!(link.href.as_deref(), Some("/x.csv"));
}
