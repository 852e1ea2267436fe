//! The catalog's tests: every built-in parses with its defaults and
//! checks, wrong input is explained, and custom actions join under the
//! same rules.

use super::*;
use crate::actions::{
    InjectPosition, KeyChord, OptionChoice, Risk, ScrollDirection, Selector, Target, WaitCondition,
};
use serde_json::json;

fn parse(value: Value) -> Action {
    Catalog::builtin()
        .parse(&value)
        .unwrap_or_else(|e| panic!("{value} should parse: {e}"))
}

fn error(value: Value) -> String {
    match Catalog::builtin().parse(&value) {
        Ok(action) => panic!("{value} should fail, got {action:?}"),
        Err(err) => err.to_string(),
    }
}

fn index(n: u32) -> Target {
    Target::Index {
        index: crate::dom::ElementIndex(n as usize),
    }
}

fn selector(text: &str) -> Target {
    Target::Selector {
        selector: Selector::parse(text).unwrap(),
    }
}

#[test]
fn every_design_action_is_in_the_catalog() {
    let catalog = Catalog::builtin();
    for name in [
        "navigate",
        "back",
        "forward",
        "reload",
        "goto_page",
        "wait",
        "wait_for",
        "click",
        "input_text",
        "select_option",
        "select_text",
        "submit_form",
        "clear_input",
        "set_text",
        "press_keys",
        "hover",
        "scroll",
        "scroll_to",
        "drag_and_drop",
        "upload_file",
        "highlight",
        "border",
        "spotlight",
        "inject",
        "clear_overlays",
        "show_subtitle",
        "extract",
        "read_page",
        "screenshot",
        "ask_user",
        "hand_over",
        "think",
        "done",
        "read_file",
        "switch_tab",
        "answer_dialogs",
        "close_tab",
        "execute_javascript",
    ] {
        let spec = catalog
            .get(name)
            .unwrap_or_else(|| panic!("{name} missing"));
        assert!(
            spec.description.len() > 20,
            "{name} needs a real description"
        );
        assert!(
            schema::check_schema(&spec.schema).is_ok(),
            "{name}: {:?}",
            schema::check_schema(&spec.schema)
        );
    }
    assert_eq!(catalog.specs().len(), 38);
}

#[test]
fn static_risk_in_the_catalog_matches_the_parsed_action() {
    let catalog = Catalog::builtin();
    assert_eq!(
        catalog.get("execute_javascript").unwrap().risk,
        Risk::Dangerous
    );
    assert_eq!(catalog.get("submit_form").unwrap().risk, Risk::Commit);
    assert_eq!(catalog.get("read_page").unwrap().risk, Risk::Read);
    for (name, params) in [
        ("click", json!({"index": 1})),
        ("submit_form", json!({"index": 1})),
        ("read_page", json!({})),
        ("scroll", json!({"direction": "down"})),
        ("screenshot", json!({})),
        ("execute_javascript", json!({"script": "1"})),
    ] {
        let action = catalog.parse_call(name, params).unwrap();
        assert_eq!(action.risk(), catalog.get(name).unwrap().risk, "{name}");
    }
}

#[test]
fn parameterless_actions_parse_from_empty_or_null() {
    assert_eq!(parse(json!({"back": {}})), Action::Back {});
    assert_eq!(parse(json!({"forward": null})), Action::Forward {});
    assert_eq!(parse(json!({"reload": {}})), Action::Reload {});
    assert_eq!(
        parse(json!({"clear_overlays": {}})),
        Action::ClearOverlays {}
    );
    assert!(error(json!({"back": {"steps": 2}})).contains("back.steps: unknown parameter"));
}

#[test]
fn read_page_starts_at_the_top_or_where_the_last_part_ended() {
    assert_eq!(
        parse(json!({"read_page": {}})),
        Action::ReadPage { offset: 0 }
    );
    assert_eq!(
        parse(json!({"read_page": null})),
        Action::ReadPage { offset: 0 }
    );
    assert_eq!(
        parse(json!({"read_page": {"offset": 2987}})),
        Action::ReadPage { offset: 2987 }
    );
    assert!(error(json!({"read_page": {"offset": -1}})).contains("read_page.offset"));
}

#[test]
fn navigation_actions() {
    assert_eq!(
        parse(json!({"navigate": {"url": "/orders"}})),
        Action::Navigate {
            url: "/orders".into()
        }
    );
    assert_eq!(
        parse(json!({"goto_page": {"name": "billing"}})),
        Action::GotoPage {
            name: "billing".into()
        }
    );
    assert_eq!(
        error(json!({"navigate": {}})),
        "navigate.url: missing required field"
    );
    assert_eq!(
        error(json!({"navigate": {"url": ""}})),
        "navigate.url: must not be empty"
    );
    assert!(error(json!({"navigate": {"url": "example.com/a"}})).contains("https://example.com/a"));
    assert!(error(json!({"navigate": {"url": "localhost:8080/x"}})).contains("no scheme"));
    assert!(error(json!({"navigate": {"url": "/a b"}})).contains("whitespace"));
    // Relative paths and file-like names stay paths.
    parse(json!({"navigate": {"url": "orders/5"}}));
    parse(json!({"navigate": {"url": "report.html"}}));
    parse(json!({"navigate": {"url": "about:blank"}}));
}

#[test]
fn waits_are_bounded_and_defaulted() {
    assert_eq!(
        parse(json!({"wait": {"seconds": 2}})),
        Action::Wait { seconds: 2.0 }
    );
    assert_eq!(
        error(json!({"wait": {"seconds": 0.05}})),
        "wait.seconds: must be at least 0.1, got 0.05"
    );
    assert_eq!(
        error(json!({"wait": {"seconds": 30}})),
        "wait.seconds: must be at most 10, got 30"
    );
    assert_eq!(
        parse(json!({"wait_for": {"selector": ".toast"}})),
        Action::WaitFor {
            condition: WaitCondition::Selector {
                selector: Selector::parse(".toast").unwrap()
            },
            timeout_ms: 5000
        }
    );
    assert_eq!(
        parse(json!({"wait_for": {"text": "Saved", "timeout_ms": 800}})),
        Action::WaitFor {
            condition: WaitCondition::Text {
                text: "Saved".into()
            },
            timeout_ms: 800
        }
    );
    assert_eq!(
        error(json!({"wait_for": {}})),
        "wait_for: give exactly one of `selector` or `text`"
    );
    assert!(error(json!({"wait_for": {"text": "a", "selector": "b"}})).contains("only one of"));
}

#[test]
fn targeted_actions_take_index_or_selector() {
    assert_eq!(
        parse(json!({"click": {"index": 3}})),
        Action::Click { target: index(3) }
    );
    assert_eq!(
        parse(json!({"hover": {"selector": "nav > a"}})),
        Action::Hover {
            target: selector("nav > a")
        }
    );
    assert_eq!(
        parse(json!({"submit_form": {"index": 0}})),
        Action::SubmitForm { target: index(0) }
    );
    assert_eq!(
        parse(json!({"clear_input": {"index": 1}})),
        Action::ClearInput { target: index(1) }
    );
    assert_eq!(
        parse(json!({"scroll_to": {"index": 2}})),
        Action::ScrollTo { target: index(2) }
    );
    assert_eq!(
        parse(json!({"spotlight": {"index": 2}})),
        Action::Spotlight { target: index(2) }
    );
    assert_eq!(
        error(json!({"click": {}})),
        "click: give exactly one of `index` or `selector`"
    );
    assert_eq!(
        error(json!({"click": {"index": 1, "selector": "a"}})),
        "click: give only one of `index` or `selector`, not several"
    );
    assert_eq!(
        error(json!({"click": {"index": -1}})),
        "click.index: must be at least 0, got -1"
    );
    assert_eq!(
        error(json!({"click": {"index": "3"}})),
        "click.index: expected an integer, got the string \"3\""
    );
    let forbidden = error(json!({"click": {"selector": "div > *"}}));
    assert!(
        forbidden.starts_with("click.selector: invalid selector `div > *` at column 7"),
        "{forbidden}"
    );
}

#[test]
fn input_text_defaults_clear_to_true() {
    assert_eq!(
        parse(json!({"input_text": {"selector": "#name", "text": "Ann"}})),
        Action::InputText {
            target: selector("#name"),
            text: "Ann".into(),
            clear: true
        }
    );
    assert_eq!(
        parse(json!({"input_text": {"index": 4, "text": "", "clear": false}})),
        Action::InputText {
            target: index(4),
            text: String::new(),
            clear: false
        }
    );
    assert_eq!(
        error(json!({"input_text": {"selector": "#name"}})),
        "input_text.text: missing required field"
    );
    assert_eq!(
        error(json!({"input_text": {"index": 1, "text": 5}})),
        "input_text.text: expected a string, got the number 5"
    );
    assert_eq!(
        error(json!({"input_text": {"index": 1, "text": "a", "clear": "yes"}})),
        "input_text.clear: expected a boolean, got the string \"yes\""
    );
}

#[test]
fn set_text_and_select_option() {
    assert_eq!(
        parse(json!({"set_text": {"index": 7, "text": "Hello"}})),
        Action::SetText {
            target: index(7),
            text: "Hello".into()
        }
    );
    assert_eq!(
        parse(json!({"select_option": {"index": 2, "value": "us"}})),
        Action::SelectOption {
            target: index(2),
            choice: OptionChoice::Value { value: "us".into() }
        }
    );
    assert_eq!(
        parse(json!({"select_option": {"selector": "#country", "text": "United States"}})),
        Action::SelectOption {
            target: selector("#country"),
            choice: OptionChoice::Text {
                text: "United States".into()
            }
        }
    );
    assert_eq!(
        error(json!({"select_option": {"index": 2}})),
        "select_option: give exactly one of `value` or `text`"
    );
    assert_eq!(
        error(json!({"select_option": {"value": "us"}})),
        "select_option: give exactly one of `index` or `selector`"
    );
    assert!(
        error(json!({"select_option": {"index": 2, "value": "a", "text": "b"}}))
            .contains("only one of `value` or `text`")
    );
}

#[test]
fn press_keys_defaults_repeat_and_checks_keys() {
    assert_eq!(
        parse(json!({"press_keys": {"keys": "Control+A"}})),
        Action::PressKeys {
            keys: KeyChord::parse("Control+A").unwrap(),
            repeat: 1
        }
    );
    assert_eq!(
        parse(json!({"press_keys": {"keys": "Tab", "repeat": 3}})).params(),
        json!({"keys": "Tab", "repeat": 3})
    );
    assert_eq!(
        error(json!({"press_keys": {"keys": "Tab", "repeat": 0}})),
        "press_keys.repeat: must be at least 1, got 0"
    );
    let unknown = error(json!({"press_keys": {"keys": "Shift+Tabb"}}));
    assert!(
        unknown.starts_with("press_keys.keys: unknown key `Tabb`"),
        "{unknown}"
    );
}

#[test]
fn scroll_defaults_pages_and_takes_an_optional_target() {
    assert_eq!(
        parse(json!({"scroll": {"direction": "down"}})),
        Action::Scroll {
            direction: ScrollDirection::Down,
            pages: 1.0,
            target: None
        }
    );
    assert_eq!(
        parse(json!({"scroll": {"direction": "left", "pages": 0.5, "index": 9}})),
        Action::Scroll {
            direction: ScrollDirection::Left,
            pages: 0.5,
            target: Some(index(9))
        }
    );
    assert_eq!(
        error(json!({"scroll": {"direction": "down", "pages": 0}})),
        "scroll.pages: must be greater than 0, got 0"
    );
    assert_eq!(
        error(json!({"scroll": {"pages": 1}})),
        "scroll.direction: missing required field"
    );
    assert!(error(json!({"scroll": {"direction": "diagonal"}}))
        .starts_with("scroll.direction: expected one of \"up\", \"down\", \"left\", \"right\""));
    assert!(
        error(json!({"scroll": {"direction": "up", "index": 1, "selector": "div"}}))
            .contains("only one of")
    );
}

#[test]
fn drag_and_drop_takes_two_target_objects() {
    assert_eq!(
        parse(json!({"drag_and_drop": {"from": {"index": 3}, "to": {"selector": "#trash"}}})),
        Action::DragAndDrop {
            from: index(3),
            to: selector("#trash")
        }
    );
    assert_eq!(
        error(json!({"drag_and_drop": {"from": {"index": 3}}})),
        "drag_and_drop.to: missing required field"
    );
    assert_eq!(
        error(json!({"drag_and_drop": {"from": {}, "to": {"index": 1}}})),
        "drag_and_drop.from: give exactly one of `index` or `selector`"
    );
    assert_eq!(
        error(json!({"drag_and_drop": {"from": {"index": -2}, "to": {"index": 1}}})),
        "drag_and_drop.from.index: must be at least 0, got -2"
    );
    assert_eq!(
        error(json!({"drag_and_drop": {"from": 3, "to": {"index": 1}}})),
        "drag_and_drop.from: expected an object, got the number 3"
    );
}

#[test]
fn select_text_takes_a_target_a_passage_or_both() {
    assert_eq!(
        parse(json!({"select_text": {"selector": "article p:nth-child(2)"}})),
        Action::SelectText {
            target: Some(selector("article p:nth-child(2)")),
            text: None
        }
    );
    assert_eq!(
        parse(json!({"select_text": {"text": "Sed tristique…euismod."}})),
        Action::SelectText {
            target: None,
            text: Some("Sed tristique…euismod.".into())
        }
    );
    let both = parse(json!({"select_text": {"index": 4, "text": "nunc"}}));
    assert_eq!(both.target(), Some(&index(4)));
    assert_eq!(both.risk(), Risk::Interact);
    assert_eq!(
        error(json!({"select_text": {}})),
        "select_text: give a target (index or selector), the text to select, or both"
    );
    assert_eq!(
        error(json!({"select_text": {"text": ""}})),
        "select_text.text: must not be empty"
    );
    let catalog = Catalog::builtin();
    assert_eq!(
        catalog
            .parse_command("select_text 7 tristique nunc")
            .unwrap(),
        Action::SelectText {
            target: Some(index(7)),
            text: Some("tristique nunc".into())
        }
    );
    assert_eq!(
        catalog.get("select_text").unwrap().usage(),
        "select_text [target] [text]"
    );
}

#[test]
fn upload_and_overlays() {
    assert_eq!(
        parse(json!({"upload_file": {"index": 5, "path": "/tmp/invoice.pdf"}})),
        Action::UploadFile {
            target: index(5),
            path: "/tmp/invoice.pdf".into()
        }
    );
    assert_eq!(
        error(json!({"upload_file": {"index": 5}})),
        "upload_file.path: missing required field"
    );
    assert_eq!(
        parse(json!({"highlight": {"index": 1}})),
        Action::Highlight {
            target: index(1),
            color: None,
            label: None
        }
    );
    assert_eq!(
        parse(json!({"border": {"index": 1, "color": "#ff0000", "label": "Total"}})),
        Action::Border {
            target: index(1),
            color: Some("#ff0000".into()),
            label: Some("Total".into())
        }
    );
    assert!(
        error(json!({"highlight": {"index": 1, "color": "red;position:fixed"}}))
            .starts_with("highlight.color:")
    );
    assert_eq!(
        parse(json!({"inject": {"index": 1, "text": "Check this"}})),
        Action::Inject {
            target: index(1),
            text: "Check this".into(),
            position: InjectPosition::After
        }
    );
    assert!(
        error(json!({"inject": {"index": 1, "text": "x", "position": "inside"}}))
            .starts_with("inject.position:")
    );
    assert_eq!(
        parse(json!({"show_subtitle": {"text": "Filling the form"}})),
        Action::ShowSubtitle {
            text: "Filling the form".into()
        }
    );
}

#[test]
fn reading_and_talking_actions() {
    assert_eq!(
        parse(json!({"extract": {"instruction": "order totals"}})),
        Action::Extract {
            instruction: "order totals".into(),
            schema: None
        }
    );
    let with_schema =
        parse(json!({"extract": {"instruction": "ids", "schema": {"type": "array"}}}));
    assert_eq!(with_schema.params()["schema"], json!({"type": "array"}));
    assert_eq!(
        error(json!({"extract": {"instruction": "x", "schema": "list"}})),
        "extract.schema: expected an object, got the string \"list\""
    );
    assert_eq!(
        parse(json!({"screenshot": {}})),
        Action::Screenshot {
            path: None,
            full_page: false,
            target: None
        }
    );
    assert_eq!(
        parse(json!({"screenshot": {"index": 4}})),
        Action::Screenshot {
            path: None,
            full_page: false,
            target: Some(index(4))
        }
    );
    assert_eq!(
        parse(json!({"screenshot": {"path": "a.png", "full_page": true}})),
        Action::Screenshot {
            path: Some("a.png".into()),
            full_page: true,
            target: None
        }
    );
    assert_eq!(
        parse(json!({"ask_user": {"question": "Which plan?"}})),
        Action::AskUser {
            question: "Which plan?".into()
        }
    );
    assert_eq!(
        parse(json!({"think": {"reasoning": "The form is below"}})),
        Action::Think {
            reasoning: "The form is below".into()
        }
    );
    assert_eq!(
        parse(json!({"done": {"text": "Shipped", "success": true}})),
        Action::Done {
            text: "Shipped".into(),
            success: true
        }
    );
    assert_eq!(
        error(json!({"done": {"text": "Shipped"}})),
        "done.success: missing required field"
    );
    assert_eq!(
        parse(json!({"execute_javascript": {"script": "document.title"}})),
        Action::ExecuteJavascript {
            script: "document.title".into()
        }
    );
}

#[test]
fn params_and_json_round_trip_with_defaults() {
    let catalog = Catalog::builtin();
    for value in [
        json!({"click": {"index": 3}}),
        json!({"input_text": {"selector": "#name", "text": "Ann"}}),
        json!({"scroll": {"direction": "down", "selector": ".list"}}),
        json!({"select_option": {"index": 2, "text": "Express"}}),
        json!({"drag_and_drop": {"from": {"index": 1}, "to": {"index": 2}}}),
        json!({"press_keys": {"keys": "shift+tab"}}),
        json!({"wait_for": {"text": "Done"}}),
        json!({"highlight": {"index": 1, "label": "here"}}),
    ] {
        let action = catalog.parse(&value).unwrap();
        let again = catalog.parse(&action.to_json()).unwrap();
        assert_eq!(again, action, "{value}");
    }
    let typed = catalog
        .parse(&json!({"input_text": {"selector": "#name", "text": "Ann"}}))
        .unwrap();
    assert_eq!(typed.name(), "input_text");
    assert_eq!(
        typed.params(),
        json!({"selector": "#name", "text": "Ann", "clear": true})
    );
    assert_eq!(
        typed.to_string(),
        r##"input_text {"selector":"#name","text":"Ann","clear":true}"##
    );
    assert_eq!(typed.target(), Some(&selector("#name")));
}

#[test]
fn malformed_wrappers_are_explained() {
    assert!(error(json!("click")).contains("expected an object like"));
    assert!(error(json!({})).contains("the object is empty"));
    assert!(error(json!({"click": {"index": 1}, "done": {}}))
        .contains("one action per object, got 2 keys (click, done)"));
    assert_eq!(
        error(json!({"click": 3})),
        "click: parameters must be an object, got a number"
    );
}

#[test]
fn unknown_names_list_close_ones() {
    let err = Catalog::builtin()
        .parse(&json!({"clik": {"index": 1}}))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown action `clik`; did you mean: click?"
    );
    assert!(error(json!({"Click": {"index": 1}})).contains("did you mean: click"));
    assert!(error(json!({"type": {"index": 1}})).contains("did you mean: input_text"));
    assert!(error(json!({"scrol": {}})).contains("scroll"));
    let far = error(json!({"teleport": {}}));
    assert!(far.contains("available actions: navigate, back"), "{far}");
    assert_eq!(
        err.to_result().reason(),
        Some(crate::actions::FailureReason::InvalidParams)
    );
}

#[test]
fn errors_become_invalid_params_results() {
    let err = Catalog::builtin()
        .parse(&json!({"input_text": {"index": 1}}))
        .unwrap_err();
    let result = serde_json::to_value(err.to_result()).unwrap();
    assert_eq!(
        result,
        json!({"ok": false, "reason": "invalid_params", "message": "input_text.text: missing required field"})
    );
}

fn chat_spec() -> ActionSpec {
    ActionSpec::custom(
        "open_chat_panel",
        "Open the support chat panel on the right.",
        json!({
            "type": "object",
            "properties": {
                "message": {"type": "string", "maxLength": 200},
                "priority": {"type": "integer", "minimum": 1, "maximum": 3, "default": 2}
            },
            "additionalProperties": false
        }),
        Risk::Interact,
        Some("recipes/acme.rhai".into()),
    )
}

#[test]
fn custom_actions_join_and_get_the_same_checks() {
    let mut catalog = Catalog::builtin();
    catalog.register(chat_spec()).unwrap();
    assert_eq!(catalog.specs().last().unwrap().name, "open_chat_panel");
    let action = catalog
        .parse(&json!({"open_chat_panel": {"message": "hi"}}))
        .unwrap();
    match &action {
        Action::Custom(custom) => {
            assert_eq!(custom.params, json!({"message": "hi", "priority": 2}));
            assert_eq!(custom.risk, Risk::Interact);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        action.to_json(),
        json!({"open_chat_panel": {"message": "hi", "priority": 2}})
    );
    assert_eq!(action.name(), "open_chat_panel");
    let err = catalog
        .parse(&json!({"open_chat_panel": {"priority": 7}}))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "open_chat_panel.priority: must be at most 3, got 7"
    );
    let typo = catalog.parse(&json!({"open_chat_pannel": {}})).unwrap_err();
    assert!(typo.to_string().contains("did you mean: open_chat_panel"));
}

#[test]
fn custom_registration_is_checked() {
    let mut catalog = Catalog::builtin();
    let mut clash = chat_spec();
    clash.name = "click".into();
    assert!(catalog
        .register(clash)
        .unwrap_err()
        .to_string()
        .contains("built-in action has this name"));
    let mut bad_name = chat_spec();
    bad_name.name = "Open Chat".into();
    assert!(catalog
        .register(bad_name)
        .unwrap_err()
        .to_string()
        .contains("snake_case"));
    let mut bad_schema = chat_spec();
    bad_schema.schema =
        json!({"type": "object", "properties": {"q": {"type": "string", "pattern": "x"}}});
    assert!(catalog
        .register(bad_schema)
        .unwrap_err()
        .to_string()
        .contains("`pattern` is not supported"));
    let mut no_description = chat_spec();
    no_description.description = " ".into();
    assert!(catalog.register(no_description).is_err());
    catalog.register(chat_spec()).unwrap();
    assert!(catalog
        .register(chat_spec())
        .unwrap_err()
        .to_string()
        .contains("already registered"));
}

#[test]
fn a_reload_replaces_custom_actions_or_keeps_the_last_good_set() {
    let mut catalog = Catalog::builtin();
    catalog.register(chat_spec()).unwrap();
    let mut broken = chat_spec();
    broken.name = "refund_order".into();
    broken.schema = json!({"type": "string"});
    let before = catalog.clone();
    assert!(catalog.replace_custom(vec![broken]).is_err());
    assert_eq!(catalog, before);
    let mut refund = chat_spec();
    refund.name = "refund_order".into();
    refund.risk = Risk::Commit;
    catalog.replace_custom(vec![refund]).unwrap();
    assert!(catalog.get("open_chat_panel").is_none());
    assert_eq!(catalog.get("refund_order").unwrap().risk, Risk::Commit);
    assert!(catalog.remove_custom("refund_order"));
    assert!(!catalog.remove_custom("click"));
    assert_eq!(catalog.specs().len(), 38);
}

#[test]
fn action_schema_has_one_branch_per_action_including_custom() {
    let mut catalog = Catalog::builtin();
    catalog.register(chat_spec()).unwrap();
    let schema = catalog.action_schema();
    let branches = schema["anyOf"].as_array().unwrap();
    // Every action but the person's own (answer_dialogs).
    assert_eq!(branches.len(), 38);
    assert!(!branches
        .iter()
        .any(|b| b["required"] == json!(["answer_dialogs"])));
    let click = branches
        .iter()
        .find(|b| b["required"] == json!(["click"]))
        .unwrap();
    assert_eq!(
        click["properties"]["click"]["properties"]["index"]["type"],
        "integer"
    );
    assert!(branches
        .iter()
        .any(|b| b["required"] == json!(["open_chat_panel"])));
}

#[test]
fn custom_spec_serializes_like_builtins() {
    let value = serde_json::to_value(chat_spec()).unwrap();
    assert_eq!(value["name"], "open_chat_panel");
    assert_eq!(value["risk"], "interact");
    assert!(value.get("positional").is_none());
    assert_eq!(chat_spec().positional, vec!["message", "priority"]);
}

#[test]
fn usage_shows_argument_order_and_named_only_parameters() {
    let catalog = Catalog::builtin();
    let usage = |name: &str| catalog.get(name).unwrap().usage();
    assert_eq!(usage("click"), "click <target>");
    assert_eq!(usage("input_text"), "input_text <target> <text> [clear=…]");
    assert_eq!(usage("scroll"), "scroll <direction> [pages] [target]");
    assert_eq!(
        usage("wait_for"),
        "wait_for <selector> [timeout_ms] [text=…]"
    );
    assert_eq!(
        usage("select_option"),
        "select_option <target> <value> [text=…]"
    );
    assert_eq!(usage("back"), "back");
    assert_eq!(usage("extract"), "extract <instruction> [schema=…]");
}

#[test]
fn custom_targets_take_one_positional_slot() {
    let spec = ActionSpec::custom(
        "flag_row",
        "Flag a table row for review.",
        json!({
            "type": "object",
            "properties": {
                "index": {"type": "integer", "minimum": 0},
                "selector": {"type": "string", "format": "selector"},
                "reason": {"type": "string"}
            },
            "required": ["reason"],
            "oneOf": [{"required": ["index"]}, {"required": ["selector"]}]
        }),
        Risk::Interact,
        None,
    );
    assert_eq!(spec.positional, vec!["target", "reason"]);
    let mut catalog = Catalog::builtin();
    catalog.register(spec).unwrap();
    let action = catalog
        .parse_command("flag_row 4 looks like a duplicate")
        .unwrap();
    assert_eq!(
        action.params(),
        json!({"index": 4, "reason": "looks like a duplicate"})
    );
    let err = catalog
        .parse_command("flag_row \"td:has(b)\" x")
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("flag_row.selector: invalid selector"),
        "{err}"
    );
}
