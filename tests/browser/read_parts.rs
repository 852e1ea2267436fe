//! `read_page` on a long page: the whole text, read in order in parts
//! that each fit what a model reads of a step's result, every part saying
//! how much is left and where the next one starts.

use serde_json::{json, Value};
use webagent::actions::FailureReason;

use crate::support::pages::bare_page;
use crate::support::tab::{act, act_ok, failure, observe, with_page};

#[test]
fn read_page_reads_a_long_page_to_its_end_in_parts() {
    // 400 lines of 50 characters: 20,400 characters of text.
    let lines: Vec<String> = (0..400)
        .map(|i| {
            format!(
                "Entry {i:03} of the ledger: \"paid\" in full on day {:02}.",
                i % 28 + 1
            )
        })
        .collect();
    assert!(lines.iter().all(|l| l.chars().count() == 50));
    let body: String = lines.iter().map(|l| format!("<p>{l}</p>")).collect();
    let html = bare_page(&body);
    with_page("/ledger", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let mut read = String::new();
        let mut offset = 0u64;
        let mut parts = 0;
        let mut left_before = u64::MAX;
        loop {
            let part: Value =
                act_ok(&tab, Some(&state), json!({"read_page": {"offset": offset}})).await;
            parts += 1;
            let text = part["text"].as_str().expect("a part's text");
            // A part fits in what the model reads of a result (4,000
            // characters), figures and quoting included.
            let written = part.to_string().chars().count();
            assert!(written < 3_600, "part {parts} is {written} characters");
            assert_eq!(part["offset"], json!(offset));
            assert!(part["chars"].as_u64().expect("the text's length") > 20_000);
            let left = part["chars_left"].as_u64().expect("what is left");
            assert!(left < left_before, "{part}");
            left_before = left;
            read.push_str(text);
            match part["next_offset"].as_u64() {
                Some(next) => {
                    // Parts end at a line's end.
                    assert!(text.ends_with('\n'), "part {parts} ends inside a line");
                    assert_eq!(left, part["chars"].as_u64().unwrap_or_default() - next);
                    offset = next;
                }
                None => {
                    assert_eq!(left, 0, "{part}");
                    break;
                }
            }
            assert!(parts < 20, "reading never ends");
        }
        assert!(parts >= 7, "{parts} parts");
        assert_eq!(
            read,
            lines.join("\n"),
            "the parts joined are the page's text"
        );
        // Past the end, the model is told where the text ends.
        let past = act(&tab, json!({"read_page": {"offset": 30_000}})).await;
        let (reason, message) = failure(&past);
        assert_eq!(reason, FailureReason::InvalidParams);
        assert!(message.contains("past the end"), "{message}");
    });
}
