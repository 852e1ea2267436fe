//! How elements are named and read: icon-only controls, controls drawn
//! by CSS, a lone checkbox by its row, numbered sortable items, long
//! option lists, an icon inside a sentence, long field values, and the
//! page text's spacing.

use crate::listed::{find, line_of};
use crate::support::chromium::shared;
use crate::support::pages::bare_page;
use crate::support::tab::{act_ok, observe, read_whole_page, with_page};

#[test]
fn icon_only_controls_get_names_a_model_can_tell_apart() {
    let html = bare_page(
        r##"<style>.ico{display:inline-block;width:16px;height:16px;cursor:pointer;background:#c00} .tb button{width:28px;height:28px}</style>
        <div class="row" style="display:flex;gap:8px"><span>Ann Lee: lunch on Friday?</span>
          <span class="trash ico" onclick="this.parentNode.remove()"></span>
          <span class="star ico css-1x2y3z" onclick="this.classList.toggle('on')"></span></div>
        <div class="tb">
          <button type="button" class="ql-bold"></button><button type="button" class="ql-italic"></button>
          <button type="button" class="ql-underline"></button>
          <button type="button"><i class="fa fa-reply"></i></button>
          <button type="button"><svg width="16" height="16"><use href="#icon-archive"></use></svg></button>
          <button type="button"><svg width="16" height="16"><title>Print</title><rect width="16" height="16"></rect></svg></button>
          <span id="send-label">Send now</span><button type="button" aria-labelledby="send-label"></button>
        </div>
        <a href="/std/index.html"><img src="/static/rust-logo.svg" alt="logo" width="40" height="40"></a>
        <a href="/home"><img src="/static/home-page.png" width="40" height="40"></a>"##,
    );
    with_page("/icons", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let named = |attr: &str, value: &str| {
            state
                .elements
                .iter()
                .any(|e| e.attribute(attr) == Some(value))
        };
        for guess in [
            "trash",
            "star",
            "bold",
            "italic",
            "underline",
            "reply",
            "archive",
            "home page",
        ] {
            assert!(
                named("name~", guess),
                "no name~={guess:?} in\n{}",
                state.listing
            );
        }
        for label in ["Print", "Send now", "logo"] {
            assert!(
                named("label", label),
                "no label={label:?} in\n{}",
                state.listing
            );
        }
        // Framework noise is dropped from guesses.
        assert!(!state.listing.contains("css"), "{}", state.listing);
    });
}

#[test]
fn a_lone_checkbox_is_named_by_its_row_and_sortable_items_are_numbered() {
    let html = bare_page(
        r#"<ul class="todo-list">
          <li><div class="view"><input class="toggle" type="checkbox" checked><label>Buy milk</label><button class="destroy"></button></div></li>
          <li><div class="view"><input class="toggle" type="checkbox"><label>Walk the dog</label><button class="destroy"></button></div></li>
        </ul>
        <p id="hint">Pay by card</p><input type="radio" name="pay" aria-describedby="hint">
        <ol id="sortable"><li>First</li><li>Second</li></ol>
        <script>sortable.addEventListener('mousedown', () => {});</script>"#,
    );
    with_page("/todo", &html, |tab, _| async move {
        let state = observe(&tab).await;
        // A <label> that points at nothing is no name a browser gives:
        // its row's words are a guess.
        let milk = line_of(&state, |e| e.attribute("name~") == Some("Buy milk"));
        assert_eq!(milk.tag, "input");
        assert_eq!(milk.attribute("checked"), Some(""));
        assert_eq!(milk.attribute("label"), None, "{}", state.listing);
        let dog = line_of(&state, |e| e.attribute("name~") == Some("Walk the dog"));
        assert_eq!(dog.attribute("checked"), None);
        line_of(&state, |e| {
            e.tag == "input" && e.attribute("label") == Some("Pay by card")
        });
        assert_eq!(line_of(&state, |e| e.text == "First").tag, "li");
        assert_eq!(line_of(&state, |e| e.text == "Second").tag, "li");
    });
}

#[test]
fn page_text_spacing_editable_regions_and_unscrollable_pages_read_right() {
    let html = bare_page(
        r##"<p>Click <span>Marcella</span>. Then <b>save</b>, please.</p>
        <button>Send <i>now</i>!</button>
        <div contenteditable="true" style="min-height:30px">Notes</div>
        <a href="#main" style="position:absolute;left:-9999px;top:0">Skip to content</a>"##,
    );
    with_page("/text", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let text = &state.page_text.text;
        assert!(
            text.contains("Click Marcella. Then save, please."),
            "{text}"
        );
        assert!(find(&state, "Send now!").is_some(), "{}", state.listing);
        let notes = find(&state, "Notes").expect("the editable div");
        assert_eq!(notes.attribute("contenteditable"), Some(""));
        assert!(
            state.listing.ends_with("[end of page]\n"),
            "{}",
            state.listing
        );
    });
}

/// A 16×16 PNG of one colour, for pictures a stylesheet draws.
fn png(rgb: [u8; 3]) -> Vec<u8> {
    let picture = image::RgbImage::from_pixel(16, 16, image::Rgb(rgb));
    let mut bytes = std::io::Cursor::new(Vec::new());
    picture
        .write_to(&mut bytes, image::ImageFormat::Png)
        .expect("encoding a PNG");
    bytes.into_inner()
}

#[test]
fn controls_drawn_by_css_are_named_and_each_says_its_row() {
    let s = shared();
    for (name, rgb) in [
        ("reply", [200, 0, 0]),
        ("retweet", [0, 160, 0]),
        ("like", [0, 0, 200]),
        ("more", [90, 90, 90]),
    ] {
        s.server
            .page(&format!("/img/{name}.png"), "image/png", png(rgb));
    }
    // A feed whose classes are generated (they name nothing): each control
    // is known only by the picture its rule draws, in four ways CSS draws
    // one. Then a table whose per-row control is named by its class.
    let posts = [
        ("Jane Doe", "@jane", "Lunch at noon?"),
        ("Omar Quist", "@omar", "Shipping the release today"),
        ("Li Wei", "@liwei", "Who has the projector key?"),
    ];
    let mut feed = String::new();
    for (name, handle, body) in posts {
        feed.push_str(&format!(
            "<div class=\"css-8f2k1x\"><div><b>{name}</b> <span>{handle}</span></div><p>{body}</p>\
             <div class=\"css-a0b1c2\"><span class=\"css-r3p1y0\"></span><span class=\"css-rt9w33\"></span>\
             <span class=\"css-l1k3e7\"></span><span class=\"css-m0r3e1\"></span></div></div>"
        ));
    }
    let html = bare_page(&format!(
        r#"<style>
        .css-a0b1c2 span{{display:inline-block;width:16px;height:16px;margin-right:8px;cursor:pointer}}
        .css-r3p1y0{{content:url(/img/reply.png)}}
        .css-rt9w33{{background-image:url("/img/retweet.png")}}
        .css-l1k3e7::before{{content:url(/img/like.png)}}
        .css-m0r3e1{{mask-image:url(/img/more.png);background:#555}}
        .trash-can{{display:inline-block;width:16px;height:16px;background:#c00}}
        </style>
        <nav><a href="/settings">Settings</a> <button>Help</button></nav>
        <button>Compose</button>
        <div class="feed">{feed}</div>
        <footer><a href="/settings">Settings</a> <button>Help</button></footer>
        <table><tr><td>#1041</td><td>Alice Moss</td><td><span class="trash-can" onclick="1"></span></td></tr>
        <tr><td>#1042</td><td>Bob Lane</td><td><span class="trash-can" onclick="1"></span></td></tr></table>"#
    ));
    with_page("/feed", &html, |tab, _| async move {
        let state = observe(&tab).await;
        for (_, handle, _) in posts {
            for control in ["reply", "retweet", "like", "more"] {
                let found = state.elements.iter().find(|e| {
                    e.attribute("name~") == Some(control)
                        && e.attribute("in").is_some_and(|row| row.contains(handle))
                });
                assert!(
                    found.is_some(),
                    "no {control} control tied to {handle}'s post in\n{}",
                    state.listing
                );
            }
        }
        for (order, customer) in [("#1041", "Alice Moss"), ("#1042", "Bob Lane")] {
            let row = format!("{order} {customer}");
            line_of(&state, |e| {
                e.attribute("name~") == Some("trash can") && e.attribute("in") == Some(row.as_str())
            });
        }
        // A control that appears once needs no row; nor do two links to
        // one address, nor a control repeated in two unlike regions.
        for plain in ["Compose", "Settings", "Help"] {
            for e in state.elements.iter().filter(|e| e.text == plain) {
                assert_eq!(e.attribute("in"), None, "{}", state.listing);
            }
        }
    });
}

#[test]
fn long_option_lists_are_listed_up_to_the_limit_and_the_rest_counted() {
    let options: String = (0..150)
        .map(|i| format!("<option>Country {i:03}</option>"))
        .collect();
    let chosen: String = (0..20)
        .map(|i| {
            let picked = if i == 3 || i == 17 { " selected" } else { "" };
            format!("<option{picked}>Land {i:02}</option>")
        })
        .collect();
    let roles: String = (0..30)
        .map(|i| format!("<li role=\"option\">Colour {i:02}</li>"))
        .collect();
    let html = bare_page(&format!(
        "<select name=\"country\">{options}</select>\
         <select name=\"lands\" multiple size=\"4\">{chosen}</select>\
         <ul role=\"listbox\" aria-label=\"Colours\" style=\"height:60px;overflow-y:auto;margin:0\">{roles}</ul>"
    ));
    with_page("/options", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let country = line_of(&state, |e| e.attribute("name") == Some("country"));
        let names: Vec<&str> = country.text.split(" | ").collect();
        assert_eq!(names.len(), 100, "{}", country.text);
        for (i, name) in names.iter().enumerate() {
            let expected = format!("Country {i:03}");
            let name = name.split(" (+").next().unwrap_or(name);
            assert_eq!(name, expected, "{}", country.text);
        }
        assert!(
            country
                .text
                .ends_with("Country 099 (+50 more; select_option takes any option's visible text)"),
            "{}",
            country.text
        );
        let lands = line_of(&state, |e| e.attribute("name") == Some("lands"));
        assert!(lands.text.contains("Land 19"), "{}", lands.text);
        assert_eq!(lands.attribute("value"), Some("Land 03 | Land 17"));
        // The listbox names the options scrolled out of its box.
        let colours = line_of(&state, |e| e.attribute("aria-label") == Some("Colours"));
        assert!(
            colours.text.starts_with("options not listed: ") && colours.text.contains("Colour 29"),
            "{}",
            state.listing
        );
        assert!(find(&state, "Colour 00").is_some(), "{}", state.listing);
        assert!(!colours.text.contains("Colour 00"), "{}", colours.text);
    });
}

#[test]
fn an_icon_inside_a_sentence_is_named_where_the_text_is_read() {
    let html = bare_page(
        r#"<style>.ui-icon{display:inline-block;width:16px;height:16px;background:#333;text-indent:-9999px;overflow:hidden}</style>
        <p id="task">Find and click on the item with the <span class="ui-icon ui-icon-disk"></span> icon.</p>
        <ul role="menu">
          <li role="menuitem"><span class="ui-icon ui-icon-disk"></span>Keep</li>
          <li role="menuitem"><span class="ui-icon ui-icon-trash"></span>Drop</li>
        </ul>
        <button><i class="ui-icon fa-print"></i> Print</button>
        <button class="ui-icon-gear"></button>"#,
    );
    with_page("/icon-text", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let text = &state.page_text.text;
        assert!(
            text.contains("Find and click on the item with the [icon: disk] icon."),
            "{text}"
        );
        // The same name in an element's text in the listing.
        line_of(&state, |e| e.text == "[icon: disk] Keep");
        line_of(&state, |e| e.text == "[icon: trash] Drop");
        // An icon that says what its words say adds nothing; an icon
        // button alone keeps its guessed name as an attribute.
        assert!(find(&state, "Print").is_some(), "{}", state.listing);
        line_of(&state, |e| {
            e.attribute("name~") == Some("gear") && e.text.is_empty()
        });
    });
}

#[test]
fn a_long_field_value_is_shown_and_read_back_exactly() {
    // 2,000 characters with quotes, a line break, runs of spaces and a
    // trailing space: everything a squeeze or a clip would lose.
    let mut value = String::from("Dear \"team\",\n  ");
    while value.chars().count() < 1_999 {
        value.push_str("we ship  on Friday. ");
    }
    let value: String = value.chars().take(1_999).collect::<String>() + " ";
    assert_eq!(value.chars().count(), 2_000);
    let longer: String = "x".repeat(2_100);
    let html = bare_page(&format!(
        "<label>Notes <textarea name=\"notes\" rows=\"3\" cols=\"60\">\n{value}</textarea></label>\
         <input name=\"code\" value=\"{longer}\"><p>After the form</p>"
    ));
    with_page("/long-value", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let notes = line_of(&state, |e| e.attribute("name") == Some("notes"));
        assert_eq!(notes.attribute("value"), Some(value.as_str()));
        assert_eq!(notes.attribute("value+"), None);
        let quoted = serde_json::to_string(&value).expect("a JSON string");
        assert!(
            state.listing.contains(&format!(" value={quoted}")),
            "{}",
            state.listing
        );
        let code = line_of(&state, |e| e.attribute("name") == Some("code"));
        assert_eq!(code.attribute("value").map(str::len), Some(2_000));
        assert!(
            state.listing.contains(&format!(
                "value=\"{}\" (+100 more characters)",
                "x".repeat(2_000)
            )),
            "{}",
            state.listing
        );
        // read_page carries the fields' values the same way, and leaves the
        // listing's indices valid.
        let text = read_whole_page(&tab, &state).await;
        assert!(
            text.contains(&format!("Notes [textarea: {quoted}]")),
            "{text}"
        );
        assert!(text.contains("(+100 more characters)]"), "{text}");
        assert!(text.contains("After the form"), "{text}");
        act_ok(
            &tab,
            Some(&state),
            serde_json::json!({"click": {"index": notes.index.0}}),
        )
        .await;
    });
}
