//! Reading the page out: its text and a screenshot, and `extract`, where
//! the model answers from the page with the schema asked for.

use serde_json::json;
use webagent::actions::Catalog;
use webagent::browser::act::Executor;

use crate::support::llm_server;
use crate::support::pages::seen_page;
use crate::support::tab::{act, assert_ok, observe, quick_options, with_page_in_front};

#[test]
fn read_page_and_screenshot() {
    let html = seen_page("<h1>Report</h1><p>Revenue grew by 12 percent.</p>");
    with_page_in_front("/read", &html, |tab, _| async move {
        let result = act(&tab, json!({"read_page": {}})).await;
        assert_ok(&result);
        let text = result.data().expect("data")["text"]
            .as_str()
            .unwrap_or("")
            .to_string();
        assert!(text.contains("Revenue grew by 12 percent."), "{text}");
        let file = std::env::temp_dir().join(format!("webagent-shot-{}.png", std::process::id()));
        let path = file.to_string_lossy().to_string();
        assert_ok(
            &act(
                &tab,
                json!({"screenshot": {"path": path, "full_page": true}}),
            )
            .await,
        );
        let bytes = std::fs::read(&file).expect("the screenshot file");
        assert_eq!(&bytes[1..4], b"PNG");
    });
}

#[test]
fn extract_reads_the_page_and_the_model_answers_from_it_with_the_schema() {
    use llm_server::{tool_call_completion, LlmServer, Reply};
    use std::sync::Arc;
    use webagent::agent::ModelExtractor;
    use webagent::environment::Extractor;
    use webagent::llm::{LlmClient, LlmConfig};
    let html = seen_page("<h1>Plans</h1><p>Basic costs 9 dollars. Pro costs 29 dollars.</p>");
    with_page_in_front("/extract", &html, |tab, _| async move {
        let answer =
            json!({"plans": [{"name": "Basic", "price": 9}, {"name": "Pro", "price": 29}]});
        let server = LlmServer::start(vec![Reply::json(
            200,
            tool_call_completion("extract_result", &answer),
        )])
        .await;
        let client = LlmClient::new(LlmConfig {
            base_url: server.base_url(),
            streaming: false,
            ..LlmConfig::default()
        })
        .expect("a client");
        let state = observe(&tab).await;
        let schema = json!({"type": "object", "properties": {"plans": {"type": "array"}}});
        let action = Catalog::builtin()
            .parse(
                &json!({"extract": {"instruction": "list the plans and prices", "schema": schema}}),
            )
            .expect("parsing");
        // The browser reads the page; the model's side answers from it.
        let read = Executor::new(&tab, quick_options())
            .execute(&action, Some(&state))
            .await;
        let page = read.data().expect("the page text").clone();
        assert!(
            page["text"]
                .as_str()
                .unwrap_or_default()
                .contains("Pro costs 29"),
            "{page}"
        );
        let extractor = ModelExtractor::new(Arc::new(client), Default::default());
        let result = extractor
            .extract("list the plans and prices", Some(&schema), &page)
            .await;
        assert_eq!(result.data(), Some(&answer), "{result:?}");
        let sent = server.requests()[0].json();
        let text = sent.to_string();
        assert!(text.contains("Pro costs 29 dollars"), "{text}");
        assert!(text.contains("list the plans and prices"), "{text}");
        assert_eq!(sent["tools"][0]["function"]["parameters"], schema);
    });
}
