//! The model's side of a run: the marked viewport with vision on, a
//! server that refuses pictures, a rate limit, a rejected key and a stream
//! cut off midway.

use serde_json::json;
use webagent::agent::VisionSettings;
use webagent::agent::AGENT_TOOL_NAME;
use webagent::events::{EndReason, Event};
use webagent::vision::VisionMode;

use crate::answers::{done, reply, step_args};
use crate::run::{run_agent, Run, Setup};
use crate::support::chromium::shared;
use crate::support::llm_server::{error_body, rechunk, tool_call_events, Reply, StreamEnd};
use crate::support::pages::page;

#[test]
fn a_rate_limit_is_waited_out_and_the_step_goes_on() {
    let s = shared();
    s.server
        .html("/rate", page("Rate", "<button id=go>Go</button>"));
    let replies = vec![
        Reply::json(
            429,
            error_body("slow down", "rate_limit_exceeded").to_string(),
        )
        .header("Retry-After", "0"),
        done("all good", true),
    ];
    let run = run_agent(&s.server.url("/rate"), "Finish", replies, Setup::default());
    assert!(run.outcome.success, "{:?}", run.outcome);
    assert_eq!(run.requests.len(), 2);
    let errors = run.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].0.contains("HTTP 429") && errors[0].0.contains("attempt 2 of 4"));
    assert!(!errors[0].1, "a retried rate limit is not fatal");
}

/// The pictures of request `i`'s user message, decoded from their data
/// URLs; `None` when the message is plain text.
fn pictures(run: &Run, i: usize) -> Option<Vec<image::RgbImage>> {
    use base64::Engine as _;
    let body = run.requests[i].json();
    let parts = body["messages"][1]["content"].as_array()?.clone();
    assert_eq!(parts[0]["type"], "text", "the text comes first");
    Some(
        parts[1..]
            .iter()
            .map(|part| {
                assert_eq!(part["type"], "image_url");
                let url = part["image_url"]["url"].as_str().expect("a URL");
                let data = url
                    .strip_prefix("data:image/jpeg;base64,")
                    .expect("a JPEG data URL");
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .expect("base64");
                image::load_from_memory(&bytes).expect("an image").to_rgb8()
            })
            .collect(),
    )
}

fn always() -> VisionSettings {
    VisionSettings {
        mode: VisionMode::Always,
        width: 800,
    }
}

#[test]
fn with_vision_each_step_carries_the_marked_viewport_and_older_pictures_are_not_resent() {
    let s = shared();
    s.server.html(
        "/see",
        page(
            "See",
            r#"<button id=go onclick="document.title='Clicked'">Go</button>
            <div id=chart style="width:300px;height:150px;background:#c00">chart</div>"#,
        ),
    );
    let replies = vec![
        reply("press go", json!({"click": {"index": 0}})),
        reply(
            "look at the chart",
            json!({"screenshot": {"selector": "#chart"}}),
        ),
        done("seen", true),
    ];
    let run = run_agent(
        &s.server.url("/see"),
        "Press Go",
        replies,
        Setup {
            vision: always(),
            ..Setup::default()
        },
    );
    assert!(run.outcome.success, "{:?}", run.outcome);
    assert_eq!(run.requests.len(), 3);
    for i in 0..3 {
        let body = run.requests[i].json();
        assert_eq!(
            body["messages"].as_array().map(Vec::len),
            Some(2),
            "history is text; no earlier picture comes back"
        );
        let shown = pictures(&run, i).expect("a picture with every step");
        // 1280×800 scaled to the configured 800 pixels.
        assert_eq!((shown[0].width(), shown[0].height()), (800, 500));
        let text = body["messages"][1]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(
            text.contains("Attached: a screenshot of the viewport"),
            "{text}"
        );
    }
    assert_eq!(pictures(&run, 0).map(|p| p.len()), Some(1));
    // The step after `screenshot` also carries what it asked for: the
    // chart alone, at its own size, red.
    let third = pictures(&run, 2).expect("pictures");
    assert_eq!(third.len(), 2, "the viewport and the requested picture");
    assert_eq!((third[1].width(), third[1].height()), (300, 150));
    let middle = third[1].get_pixel(150, 100).0;
    assert!(middle[0] > 150 && middle[1] < 80, "{middle:?}");
    // Each picture is an event (the trace stores it, the workbench draws
    // it) that names its marks.
    let shots: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Screenshot(shot) => Some(shot),
            _ => None,
        })
        .collect();
    assert_eq!(shots.len(), 4, "{shots:?}");
    assert_eq!(
        shots[0].marks.len(),
        1,
        "the button is the one listed element"
    );
    assert!(shots[0].image.is_some());
    assert_eq!(shots[3].purpose, "requested");
    // The budget counts the picture.
    let step = &run.steps()[0];
    assert!(
        step.prompt.contains("[picture attached, counted as"),
        "{}",
        step.prompt
    );

    // Without vision, and with `auto` for a model not known to read
    // images, the prompt stays plain text.
    for vision in [
        VisionSettings::default(),
        VisionSettings {
            mode: VisionMode::Auto,
            width: 800,
        },
    ] {
        let run = run_agent(
            &s.server.url("/see"),
            "Press Go",
            vec![done("seen", true)],
            Setup {
                vision,
                ..Setup::default()
            },
        );
        assert!(run.outcome.success);
        assert!(pictures(&run, 0).is_none(), "{vision:?}");
        assert!(run.prompt(0).contains("Press Go"));
        assert!(!run.events.iter().any(|e| matches!(e, Event::Screenshot(_))));
    }
}

#[test]
fn a_server_that_refuses_pictures_gets_the_step_again_without_and_the_run_reads_text_after() {
    let s = shared();
    s.server
        .html("/blind", page("Blind", "<button id=go>Go</button>"));
    let replies = vec![
        // llama-server's answer for a model started without its projector.
        Reply::json(
            500,
            error_body(
                "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
                "server_error",
            )
            .to_string(),
        ),
        reply("press go", json!({"click": {"index": 0}})),
        done("pressed", true),
    ];
    let run = run_agent(
        &s.server.url("/blind"),
        "Press Go",
        replies,
        Setup {
            vision: always(),
            ..Setup::default()
        },
    );
    assert!(run.outcome.success, "{:?}", run.outcome);
    assert_eq!(
        run.requests.len(),
        3,
        "refused once, not retried with the picture"
    );
    assert!(
        pictures(&run, 0).is_some(),
        "the first request had the picture"
    );
    assert!(pictures(&run, 1).is_none(), "the same step again, as text");
    assert!(
        pictures(&run, 2).is_none(),
        "and text for the rest of the run"
    );
    let errors = run.errors();
    assert_eq!(errors.len(), 1, "one event says so: {errors:?}");
    assert!(!errors[0].1, "not fatal");
    assert!(
        errors[0].0.contains("does not take images") && errors[0].0.contains("without screenshots"),
        "{}",
        errors[0].0
    );
    assert_eq!(run.steps().len(), 2);
}

#[test]
fn a_rejected_key_ends_the_run_at_once_with_a_clear_fatal_error() {
    let s = shared();
    s.server.html("/auth", page("Auth", "<p>hello</p>"));
    let replies = vec![
        Reply::json(
            401,
            error_body("Incorrect API key provided", "invalid_api_key").to_string(),
        ),
        done("never reached", true),
    ];
    let run = run_agent(
        &s.server.url("/auth"),
        "Anything",
        replies,
        Setup::default(),
    );
    assert!(!run.outcome.success);
    assert_eq!(run.outcome.reason, EndReason::Fatal);
    assert_eq!(run.requests.len(), 1, "a 401 is not retried");
    let errors = run.errors();
    let fatal: Vec<_> = errors.iter().filter(|(_, fatal)| *fatal).collect();
    assert_eq!(fatal.len(), 1, "{errors:?}");
    assert!(fatal[0].0.contains("HTTP 401"), "{}", fatal[0].0);
    assert!(fatal[0].0.contains("OPENAI_API_KEY"), "{}", fatal[0].0);
    assert!(matches!(
        run.events.last(),
        Some(Event::Done {
            success: false,
            reason: EndReason::Fatal,
            ..
        })
    ));
}

#[test]
fn a_stream_cut_off_midway_is_asked_again() {
    let s = shared();
    s.server.html("/cut", page("Cut", "<p>hello</p>"));
    let events = tool_call_events(
        AGENT_TOOL_NAME,
        &step_args(
            "finish",
            json!({"done": {"text": "after the cut", "success": true}}),
        ),
        6,
    );
    let half = rechunk(&events[..3], 40);
    let cut = Reply::sse_pieces(half).ending(StreamEnd::Cut);
    let replies = vec![cut, Reply::sse(events)];
    let run = run_agent(&s.server.url("/cut"), "Finish", replies, Setup::default());
    assert!(run.outcome.success, "{:?}", run.outcome);
    assert_eq!(run.outcome.text, "after the cut");
    assert_eq!(run.requests.len(), 2);
    assert!(
        run.errors()
            .iter()
            .any(|(e, fatal)| e.contains("stream cut off") && !fatal),
        "{:?}",
        run.errors()
    );
}
