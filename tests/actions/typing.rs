//! Typing and choosing: text into controlled fields, contenteditables,
//! frames and shadow roots and key-by-key terminals, options, keys, dates
//! written as people write them, and selecting text with a real drag.

use serde_json::json;
use webagent::actions::FailureReason;

use crate::readback::{index_of, page_js, seen};
use crate::support::chromium::shared;
use crate::support::pages::seen_page;
use crate::support::tab::{
    act, act_on, assert_ok, failure, observe, quick_options, with_page_in_front,
};

#[test]
fn input_text_reaches_a_react_style_controlled_field() {
    // React keeps the last value it knows in a tracker set through the
    // instance's value setter, and only reports a change when the DOM value
    // differs from it. Setting `.value` from script therefore goes unseen;
    // real typing is seen.
    let html = seen_page(
        r#"<input id="name"><p id="state"></p>
        <script>
          const el = document.getElementById('name');
          const proto = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value');
          let tracked = '';
          Object.defineProperty(el, 'value', {
            get() { return proto.get.call(this); },
            set(v) { tracked = String(v); proto.set.call(this, v); },
          });
          window.appState = { name: '' };
          el.addEventListener('input', () => {
            const now = el.value;
            if (now !== tracked) { tracked = now; appState.name = now; state.textContent = now; }
          });
          // Controlled: render the state back into the field.
          el.addEventListener('input', () => { el.value = appState.name; });
        </script>"#,
    );
    with_page_in_front("/react", &html, |tab, _| async move {
        page_js(
            &tab,
            "document.getElementById('name').value = 'old'; appState.name = 'old'; 1",
        )
        .await;
        let result = act(
            &tab,
            json!({"input_text": {"selector": "#name", "text": "Ann Lee"}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(result.data().expect("data")["repaired"], json!(false));
        assert_eq!(page_js(&tab, "appState.name").await, json!("Ann Lee"));
        assert_eq!(
            page_js(&tab, "document.getElementById('name').value").await,
            json!("Ann Lee")
        );
    });
}

#[test]
fn input_text_without_clear_appends() {
    let html = seen_page(r#"<input id="q" value="hello">"#);
    with_page_in_front("/append", &html, |tab, _| async move {
        let result = act(
            &tab,
            json!({"input_text": {"selector": "#q", "text": " world", "clear": false}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(page_js(&tab, "q.value").await, json!("hello world"));
    });
}

#[test]
fn input_text_fires_input_and_change_like_a_vue_v_model() {
    let html = seen_page(
        r#"<textarea id="t">x</textarea>
        <script>
          t.addEventListener('input', (e) => seen.push('input:' + e.isTrusted));
          t.addEventListener('change', () => seen.push('change:' + t.value));
        </script>"#,
    );
    with_page_in_front("/vue", &html, |tab, _| async move {
        assert_ok(
            &act(
                &tab,
                json!({"input_text": {"selector": "#t", "text": "line"}}),
            )
            .await,
        );
        let log = seen(&tab).await;
        assert!(log.contains(&"input:true".to_string()), "{log:?}");
        assert!(log.contains(&"change:line".to_string()), "{log:?}");
    });
}

#[test]
fn input_text_on_a_read_only_field_is_not_interactive() {
    let html = seen_page(r#"<input id="r" readonly value="fixed">"#);
    with_page_in_front("/readonly", &html, |tab, _| async move {
        let (reason, message) =
            failure(&act(&tab, json!({"input_text": {"selector": "#r", "text": "x"}})).await);
        assert_eq!(reason, FailureReason::NotInteractive);
        assert!(message.contains("read-only"), "{message}");
        assert_eq!(page_js(&tab, "r.value").await, json!("fixed"));
    });
}

#[test]
fn set_text_replaces_a_contenteditable() {
    let html = seen_page(
        r#"<div id="ed" contenteditable="true" style="min-height:40px">old <b>text</b></div>
        <script>ed.addEventListener('input', () => seen.push('input'));</script>"#,
    );
    with_page_in_front("/editable", &html, |tab, _| async move {
        assert_ok(
            &act(
                &tab,
                json!({"set_text": {"selector": "#ed", "text": "brand new"}}),
            )
            .await,
        );
        assert_eq!(
            page_js(&tab, "ed.innerText.trim()").await,
            json!("brand new")
        );
        assert!(seen(&tab).await.contains(&"input".to_string()));
    });
}

#[test]
fn clear_input_empties_the_field_and_tells_the_page() {
    let html = seen_page(
        r#"<input id="q" value="something">
        <script>q.addEventListener('input', () => seen.push('input:' + q.value));</script>"#,
    );
    with_page_in_front("/clear", &html, |tab, _| async move {
        assert_ok(&act(&tab, json!({"clear_input": {"selector": "#q"}})).await);
        assert_eq!(page_js(&tab, "q.value").await, json!(""));
        assert_eq!(seen(&tab).await, vec!["input:"]);
    });
}

#[test]
fn select_option_by_value_and_by_visible_text() {
    let html = seen_page(
        r#"<select id="s"><option value="a">Apple</option><option value="b">Banana</option><option value="c">Cherry pie</option></select>
        <script>s.addEventListener('change', () => seen.push('change:' + s.value));
        s.addEventListener('input', () => seen.push('input'));</script>"#,
    );
    with_page_in_front("/select", &html, |tab, _| async move {
        assert_ok(
            &act(
                &tab,
                json!({"select_option": {"selector": "#s", "value": "b"}}),
            )
            .await,
        );
        assert_eq!(page_js(&tab, "s.value").await, json!("b"));
        assert_ok(
            &act(
                &tab,
                json!({"select_option": {"selector": "#s", "text": "Cherry pie"}}),
            )
            .await,
        );
        assert_eq!(page_js(&tab, "s.value").await, json!("c"));
        assert_eq!(
            seen(&tab).await,
            vec!["input", "change:b", "input", "change:c"]
        );
        let (reason, message) = failure(
            &act(
                &tab,
                json!({"select_option": {"selector": "#s", "text": "Durian"}}),
            )
            .await,
        );
        assert_eq!(reason, FailureReason::InvalidParams);
        assert!(message.contains("Banana"), "{message}");
    });
}

#[test]
fn control_a_then_typing_replaces_and_enter_submits() {
    let html = seen_page(
        r#"<form id="f" onsubmit="event.preventDefault(); seen.push('submit:' + q.value)">
          <input id="q" value="old words"></form>"#,
    );
    with_page_in_front("/keys", &html, |tab, _| async move {
        page_js(&tab, "q.focus(); 1").await;
        assert_ok(&act(&tab, json!({"press_keys": {"keys": "Control+A"}})).await);
        assert_ok(
            &act(
                &tab,
                json!({"input_text": {"selector": "#q", "text": "new", "clear": false}}),
            )
            .await,
        );
        // input_text without clear appends at the end, so select again and
        // type over the selection with keys.
        assert_eq!(page_js(&tab, "q.value").await, json!("old wordsnew"));
        page_js(&tab, "q.focus(); 1").await;
        assert_ok(&act(&tab, json!({"press_keys": {"keys": "Control+A"}})).await);
        assert_ok(&act(&tab, json!({"press_keys": {"keys": "x"}})).await);
        assert_eq!(page_js(&tab, "q.value").await, json!("x"));
        assert_ok(
            &act(
                &tab,
                json!({"press_keys": {"keys": "Backspace", "repeat": 1}}),
            )
            .await,
        );
        assert_ok(&act(&tab, json!({"press_keys": {"keys": "z", "repeat": 3}})).await);
        assert_eq!(page_js(&tab, "q.value").await, json!("zzz"));
        assert_ok(&act(&tab, json!({"press_keys": {"keys": "Enter"}})).await);
        assert_eq!(seen(&tab).await, vec!["submit:zzz"]);
    });
}

#[test]
fn input_text_reaches_fields_in_a_frame_and_a_shadow_root() {
    let s = shared();
    s.server.html(
        "/inner-form",
        "<!doctype html><body><input id='inner' placeholder='Framed field'></body>",
    );
    let html = seen_page(
        r#"<iframe id="fr" src="/inner-form" style="width:300px;height:80px"></iframe>
        <div id="host"></div>
        <script>
          host.attachShadow({mode: 'open'}).innerHTML = '<input placeholder="Shadow field">';
        </script>"#,
    );
    with_page_in_front("/frame-form", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let find = |placeholder: &str| {
            state
                .elements
                .iter()
                .find(|e| e.attribute("placeholder") == Some(placeholder))
                .map(|e| e.index.0 as u32)
                .unwrap_or_else(|| panic!("no {placeholder} in\n{}", state.listing))
        };
        let (framed, shadowed) = (find("Framed field"), find("Shadow field"));
        let result = act_on(
            &tab,
            &state,
            json!({"input_text": {"index": framed, "text": "in the frame"}}),
            quick_options(),
        )
        .await;
        assert_ok(&result);
        assert_eq!(result.data().expect("data")["repaired"], json!(false));
        let state = observe(&tab).await;
        let result = act_on(
            &tab,
            &state,
            json!({"input_text": {"index": shadowed, "text": "in the shadow"}}),
            quick_options(),
        )
        .await;
        assert_ok(&result);
        // Typed, not patched in through the value setter afterwards.
        assert_eq!(result.data().expect("data")["repaired"], json!(false));
        assert_eq!(
            page_js(&tab, "fr.contentDocument.getElementById('inner').value").await,
            json!("in the frame")
        );
        assert_eq!(
            page_js(&tab, "host.shadowRoot.querySelector('input').value").await,
            json!("in the shadow")
        );
    });
}

#[test]
fn dates_and_times_written_as_people_write_them_land_in_the_field() {
    let html = seen_page(
        r#"<input id="d" type="date"><input id="t" type="time"><input id="dt" type="datetime-local">
        <input id="m" type="month"><input id="w" type="week"><input id="c" type="color"><input id="r" type="range" min="0" max="10">
        <script>for (const el of document.querySelectorAll('input')) el.addEventListener('change', () => seen.push(el.id + '=' + el.value));</script>"#,
    );
    with_page_in_front("/dates", &html, |tab, _| async move {
        let cases = [
            ("#d", "10/11/2011", "2011-10-11"),
            ("#d", "11.10.2011", "2011-10-11"),
            ("#d", "October 11, 2011", "2011-10-11"),
            ("#d", "2012-02-29", "2012-02-29"),
            ("#t", "8:04 PM", "20:04"),
            ("#t", "20:04", "20:04"),
            ("#t", "12:15 am", "00:15"),
            ("#dt", "10/11/2011 8:04 PM", "2011-10-11T20:04"),
            ("#dt", "2011-10-11T08:30", "2011-10-11T08:30"),
            ("#m", "October 2011", "2011-10"),
            ("#w", "2011-10-11", "2011-W41"),
            ("#c", "#F80", "#ff8800"),
            ("#c", "rebeccapurple", "#663399"),
            ("#r", "7", "7"),
        ];
        for (selector, written, stored) in cases {
            let result = act(
                &tab,
                json!({"input_text": {"selector": selector, "text": written}}),
            )
            .await;
            assert_ok(&result);
            assert_eq!(
                result.data().expect("data")["value"],
                json!(stored),
                "{written}"
            );
            let id = &selector[1..];
            let log = seen(&tab).await;
            assert_eq!(
                log.last().map(String::as_str),
                Some(format!("{id}={stored}").as_str()),
                "{written}: {log:?}"
            );
        }
        // Unreadable text fails, names the format, and leaves the field.
        let result = act(
            &tab,
            json!({"input_text": {"selector": "#d", "text": "next tuesday-ish"}}),
        )
        .await;
        let (reason, message) = failure(&result);
        assert_eq!(reason, FailureReason::InvalidParams);
        assert!(message.contains("YYYY-MM-DD"), "{message}");
        assert_eq!(page_js(&tab, "d.value").await, json!("2012-02-29"));
        // A value the field refuses (out of range) is a failure too.
        let result = act(
            &tab,
            json!({"input_text": {"selector": "#r", "text": "50"}}),
        )
        .await;
        let (reason, message) = failure(&result);
        assert_eq!(reason, FailureReason::InvalidParams);
        assert!(message.contains("max 10"), "{message}");
    });
}

#[test]
fn select_text_highlights_a_paragraph_with_a_real_drag_the_page_sees() {
    let html = seen_page(
        r#"<main><h1>Notes</h1>
        <p>First paragraph, about nothing in particular.</p>
        <p>Second paragraph: lorem ipsum dolor sit amet, <b>consectetur</b> adipiscing elit, sed tristique nunc.</p>
        <p>Third paragraph ends with tristique cursus euismod.</p></main>
        <p><a href="/elsewhere">A link that must not be followed</a></p>
        <script>
          let last = '';
          document.addEventListener('selectionchange', () => { last = String(getSelection()); });
          document.addEventListener('mouseup', (e) => {
            seen.push((e.isTrusted ? 'trusted ' : 'synthetic ') + 'mouseup: ' + String(getSelection()));
          });
          window.lastSelection = () => last;
        </script>"#,
    );
    with_page_in_front("/select-text", &html, |tab, url| async move {
        // A paragraph that is no listed element, by selector: its whole text.
        let result = act(
            &tab,
            json!({"select_text": {"selector": "main > p:nth-child(3)"}}),
        )
        .await;
        assert_ok(&result);
        let second = "Second paragraph: lorem ipsum dolor sit amet, consectetur adipiscing elit, sed tristique nunc.";
        let data = result.data().cloned().unwrap_or_default();
        assert_eq!(data["selected"], second, "{data}");
        assert!(
            data.get("drag_selected").is_none(),
            "the drag itself selected it: {data}"
        );
        assert_eq!(
            seen(&tab).await,
            vec![format!("trusted mouseup: {second}")],
            "the page's own mouseup saw the drag and the selection"
        );
        assert_eq!(page_js(&tab, "window.lastSelection()").await, second);
        // A passage quoted by its start and end, anywhere on the page.
        page_js(&tab, "seen.length = 0").await;
        let result = act(
            &tab,
            json!({"select_text": {"text": "lorem ipsum…adipiscing elit"}}),
        )
        .await;
        assert_ok(&result);
        let passage = "lorem ipsum dolor sit amet, consectetur adipiscing elit";
        assert_eq!(result.data().unwrap()["selected"], passage);
        assert!(result.data().unwrap().get("drag_selected").is_none());
        assert_eq!(
            seen(&tab).await,
            vec![format!("trusted mouseup: {passage}")]
        );
        // Words within a target: the third paragraph's, not the second's.
        let result = act(
            &tab,
            json!({"select_text": {"selector": "main > p:nth-child(4)", "text": "tristique cursus"}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(result.data().unwrap()["selected"], "tristique cursus");
        let range_in_third = page_js(
            &tab,
            "getSelection().anchorNode.parentElement === document.querySelector('main > p:nth-child(4)')",
        )
        .await;
        assert_eq!(range_in_third, true);
        // A link's text is selected without following it.
        let state = observe(&tab).await;
        let link = index_of(&state, "A link that must not be followed");
        let result = act_on(
            &tab,
            &state,
            json!({"select_text": {"index": link}}),
            quick_options(),
        )
        .await;
        assert_ok(&result);
        assert_eq!(
            result.data().unwrap()["selected"],
            "A link that must not be followed",
            "{result:?}"
        );
        assert!(
            result.data().unwrap().get("drag_selected").is_none(),
            "a drag from beside the link selected it: {result:?}"
        );
        assert_eq!(page_js(&tab, "location.href").await, url);
        // Nothing to select, or text the page does not show.
        let (reason, message) = failure(&act(&tab, json!({"select_text": {}})).await);
        assert_eq!(reason, FailureReason::InvalidParams, "{message}");
        let (reason, message) = failure(
            &act(
                &tab,
                json!({"select_text": {"text": "words nowhere on the page"}}),
            )
            .await,
        );
        assert_eq!(reason, FailureReason::NotFound, "{message}");
        assert!(message.contains("words nowhere on the page"), "{message}");
    });
}

#[test]
fn select_text_reaches_text_inside_a_components_shadow_root() {
    let html = seen_page(
        r#"<main><p>Page text before the card.</p>
        <x-card id="card"><span slot="title">Slotted title words</span></x-card></main>
        <script>
          const root = card.attachShadow({mode: 'open'});
          root.innerHTML = '<h2><slot name="title"></slot></h2><p>First inner paragraph.</p>' +
            '<p id="two">Second inner paragraph with tristique words.</p>';
          document.addEventListener('mouseup', (e) => {
            seen.push((e.isTrusted ? 'trusted ' : 'synthetic ') + 'mouseup: ' + String(getSelection()));
          });
        </script>"#,
    );
    with_page_in_front("/select-shadow", &html, |tab, _| async move {
        // Quoted: the component's own paragraph, by a real drag.
        let inner = "Second inner paragraph with tristique words.";
        let result = act(&tab, json!({"select_text": {"text": inner}})).await;
        assert_ok(&result);
        let data = result.data().cloned().unwrap_or_default();
        assert_eq!(data["selected"], inner, "{data}");
        assert!(data.get("drag_selected").is_none(), "{data}");
        assert_eq!(seen(&tab).await, vec![format!("trusted mouseup: {inner}")]);
        // Within a target reached through the shadow root.
        let result = act(
            &tab,
            json!({"select_text": {"selector": "#card >>> #two", "text": "tristique"}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(result.data().unwrap()["selected"], "tristique");
        // The page's own text where the component's slot shows it.
        let result = act(
            &tab,
            json!({"select_text": {"text": "Slotted title words"}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(result.data().unwrap()["selected"], "Slotted title words");
        // One range cannot run from the page into the component.
        let (reason, message) = failure(
            &act(
                &tab,
                json!({"select_text": {"text": "before the card…First inner"}}),
            )
            .await,
        );
        assert_eq!(reason, FailureReason::InvalidParams, "{message}");
        assert!(message.contains("shadow root"), "{message}");
    });
}

#[test]
fn input_text_types_into_a_keydown_terminal_key_by_key() {
    let html = seen_page(
        r#"<div id="term" tabindex="0" style="font:14px monospace;background:#111;color:#eee;height:200px">
          <pre id="out"></pre><span id="line"></span></div>
        <div id="label">Not focusable</div>
        <script>
          let line = '';
          term.addEventListener('keydown', (e) => {
            if (!e.isTrusted) return;
            if (e.key === 'Enter') {
              out.textContent += '$ ' + line + '\n' + (line.startsWith('echo ') ? line.slice(5) : 'unknown: ' + line) + '\n';
              seen.push(line);
              line = '';
            } else if (e.key.length === 1) {
              line += e.key;
            }
            document.getElementById('line').textContent = line;
            e.preventDefault();
          });
        </script>"#,
    );
    with_page_in_front("/terminal", &html, |tab, _| async move {
        let result = act(
            &tab,
            json!({"input_text": {"selector": "#term", "text": "echo Hello, World!\necho two\n"}}),
        )
        .await;
        assert_ok(&result);
        let data = result.data().cloned().unwrap_or_default();
        assert_eq!(data["typed"], "keystrokes", "{data}");
        assert_eq!(data["keystrokes"], 28, "{data}");
        assert_eq!(seen(&tab).await, vec!["echo Hello, World!", "echo two"]);
        let after = observe(&tab).await;
        assert!(
            after.page_text.text.contains("Hello, World!"),
            "{}",
            after.page_text.text
        );
        // Only an element that cannot take focus is refused, and says so.
        let (reason, message) = failure(
            &act(
                &tab,
                json!({"input_text": {"selector": "#label", "text": "x"}}),
            )
            .await,
        );
        assert_eq!(reason, FailureReason::NotInteractive, "{message}");
        assert!(message.contains("cannot take focus"), "{message}");
    });
}

/// A page that counts the key and input events of its fields (trusted
/// ones only) in `counts`, and notes each key in `seen`. `change` counts
/// of either kind: a browser fires its own only once the focus leaves the
/// field, and typing keeps the focus there (an autocomplete's suggestions,
/// opened by the keys, close when it leaves), so the one `change` after
/// typing is the action's.
const KEY_COUNTER: &str = r#"<input id="q"><textarea id="t"></textarea>
    <script>
      window.counts = {};
      for (const type of ['keydown', 'keypress', 'input', 'keyup', 'change']) {
        document.addEventListener(type, (e) => {
          if (!e.isTrusted && type !== 'change') return;
          counts[type] = (counts[type] || 0) + 1;
          if (type.startsWith('key')) seen.push(type + ' ' + e.key);
        }, true);
      }
      window.lastKeyup = '';
      q.addEventListener('keyup', () => { lastKeyup = q.value; });
    </script>"#;

#[test]
fn input_text_presses_a_key_for_each_character_as_a_keyboard_does() {
    let html = seen_page(KEY_COUNTER);
    with_page_in_front("/key-counter", &html, |tab, _| async move {
        let result = act(
            &tab,
            json!({"input_text": {"selector": "#q", "text": "Ab 1!"}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(result.data().expect("data")["repaired"], json!(false));
        assert_eq!(page_js(&tab, "q.value").await, json!("Ab 1!"));
        assert_eq!(
            page_js(&tab, "counts").await,
            json!({"keydown": 5, "keypress": 5, "input": 5, "keyup": 5, "change": 1})
        );
        assert_eq!(
            page_js(&tab, "document.activeElement === q").await,
            json!(true),
            "the field keeps the focus, as after a person's typing"
        );
        let mut expected = Vec::new();
        for key in ["A", "b", " ", "1", "!"] {
            for kind in ["keydown", "keypress", "keyup"] {
                expected.push(format!("{kind} {key}"));
            }
        }
        assert_eq!(seen(&tab).await, expected);
        // Characters beyond a US keyboard, and a line break in a text
        // area, arrive exactly as written.
        let text = "naïve café: 中文, emoji 😀\nsecond line";
        assert_ok(
            &act(
                &tab,
                json!({"input_text": {"selector": "#t", "text": text}}),
            )
            .await,
        );
        assert_eq!(page_js(&tab, "t.value").await, json!(text));
    });
}

#[test]
fn a_long_value_lands_whole_and_ends_with_the_keys_a_listener_waits_for() {
    let html = seen_page(KEY_COUNTER);
    with_page_in_front("/key-counter-long", &html, |tab, _| async move {
        let text: String = "The quick brown fox jumps over the lazy dog. "
            .repeat(40)
            .trim_end()
            .to_string();
        let result = act(
            &tab,
            json!({"input_text": {"selector": "#q", "text": text}}),
        )
        .await;
        assert_ok(&result);
        assert_eq!(result.data().expect("data")["repaired"], json!(false));
        assert_eq!(page_js(&tab, "q.value").await, json!(text));
        // The last key's release comes after the whole value is in.
        assert_eq!(page_js(&tab, "lastKeyup").await, json!(text));
        let counts = page_js(&tab, "counts").await;
        let count = |kind: &str| counts[kind].as_u64().unwrap_or(0);
        assert!(count("keydown") >= 8, "{counts}");
        assert_eq!(count("keydown"), count("keypress"), "{counts}");
        assert_eq!(count("keydown"), count("keyup"), "{counts}");
        assert_eq!(count("change"), 1, "{counts}");
    });
}

#[test]
fn a_filter_that_listens_for_keyup_shows_its_matches_after_one_input_text() {
    let html = seen_page(
        r#"<input id="filter" placeholder="Filter fruit">
        <ul id="list"><li>Apple</li><li>Apricot</li><li>Banana</li><li>Blueberry</li><li>Cherry</li></ul>
        <script>
          filter.addEventListener('keyup', () => {
            const q = filter.value.toLowerCase();
            for (const li of list.children) li.hidden = !li.textContent.toLowerCase().includes(q);
          });
        </script>"#,
    );
    with_page_in_front("/keyup-filter", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let filter = state
            .elements
            .iter()
            .find(|e| e.attribute("placeholder") == Some("Filter fruit"))
            .map(|e| e.index.0 as u32)
            .unwrap_or_else(|| panic!("no filter in\n{}", state.listing));
        let result = act_on(
            &tab,
            &state,
            json!({"input_text": {"index": filter, "text": "ap"}}),
            quick_options(),
        )
        .await;
        assert_ok(&result);
        let text = observe(&tab).await.page_text.text;
        assert!(text.contains("Apple") && text.contains("Apricot"), "{text}");
        for gone in ["Banana", "Blueberry", "Cherry"] {
            assert!(!text.contains(gone), "{gone} is filtered out: {text}");
        }
    });
}

#[test]
fn a_terminal_that_reads_keys_on_the_document_takes_input_text_after_a_click() {
    // Drawn with divs: nothing in it takes focus, and the page reads the
    // keys on the document once the terminal was clicked.
    let html = seen_page(
        r#"<div id="term" style="font:14px monospace;background:#111;color:#eee;height:200px;cursor:text">
          <pre id="out"></pre><div>$ <span id="line"></span></div></div>
        <script>
          let active = false, line = '';
          term.addEventListener('click', () => { active = true; });
          document.addEventListener('keydown', (e) => {
            if (!active || !e.isTrusted) return;
            if (e.key === 'Enter') {
              out.textContent += '$ ' + line + '\n' + (line.startsWith('echo ') ? line.slice(5) : 'unknown: ' + line) + '\n';
              seen.push(line);
              line = '';
            } else if (e.key.length === 1) {
              line += e.key;
            }
            document.getElementById('line').textContent = line;
            e.preventDefault();
          });
        </script>"#,
    );
    with_page_in_front("/document-terminal", &html, |tab, _| async move {
        assert_ok(&act(&tab, json!({"click": {"selector": "#term"}})).await);
        let result = act(
            &tab,
            json!({"input_text": {"selector": "#term", "text": "echo Hello, World!\necho two\n"}}),
        )
        .await;
        assert_ok(&result);
        let data = result.data().cloned().unwrap_or_default();
        assert_eq!(data["typed"], "keystrokes", "{data}");
        assert_eq!(data["keystrokes"], 28, "{data}");
        assert_eq!(seen(&tab).await, vec!["echo Hello, World!", "echo two"]);
        let after = observe(&tab).await;
        assert!(
            after.page_text.text.contains("Hello, World!"),
            "{}",
            after.page_text.text
        );
    });
}
