//! The executor's pure parts: which URL change keeps the document, and
//! how the helper's replies become results.

use serde_json::json;

use super::error::ActError;
use super::page::same_document;
use super::replies::reply;
use crate::actions::{ActionResult, FailureReason};
use crate::browser::error::BrowserError;

#[test]
fn only_a_fragment_change_is_the_same_document() {
    assert!(same_document(
        "http://a.test/p?q=1",
        "http://a.test/p?q=1#s"
    ));
    assert!(same_document("http://a.test/p#x", "http://a.test/p#y"));
    assert!(!same_document("http://a.test/p", "http://a.test/p"));
    assert!(!same_document("http://a.test/p", "http://a.test/other#s"));
    assert!(!same_document("about:blank", "not a url"));
}

#[test]
fn helper_replies_become_results_with_their_reason() {
    let refused =
        reply(json!({"ok": false, "reason": "not_visible", "message": "hidden", "retry": true}));
    match refused {
        Err(ActError::Refused {
            reason,
            message,
            retry,
        }) => {
            assert_eq!(reason, FailureReason::NotVisible);
            assert_eq!(message, "hidden");
            assert!(retry);
        }
        other => panic!("unexpected {other:?}"),
    }
    let odd = reply(json!({"ok": false, "reason": "no_such_reason"}));
    assert_eq!(
        odd.map_err(|e| e.reason()).err(),
        Some(FailureReason::Unknown)
    );
    assert!(reply(json!("missing")).is_err());
    let result: ActionResult = ActError::Browser(BrowserError::ElementGone {
        index: 3,
        detail: "removed".into(),
    })
    .into();
    assert_eq!(result.reason(), Some(FailureReason::NotFound));
}
