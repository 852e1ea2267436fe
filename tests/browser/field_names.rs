//! Names taken from the right text: a field is never named by a control
//! beside it, a name the browser would not give is written as a guess, a
//! field in a table takes its column's header, and pictures' alt text
//! (a column of yes / no icons) is read in the listing and the page text.

use webagent::dom::PageState;

use crate::listed::{find, line_of};
use crate::support::pages::bare_page;
use crate::support::tab::{observe, with_page};

/// The listed field whose `name` attribute is `name`.
fn field<'a>(state: &'a PageState, name: &str) -> &'a webagent::dom::InteractiveElement {
    line_of(state, |e| e.attribute("name") == Some(name))
}

#[test]
fn a_field_is_never_named_by_the_words_of_a_control_beside_it() {
    let html = bare_page(
        r#"<div class="search"><input type="text" id="tt"><button>Submit</button></div>
        <div>Quantity <input type="number" name="qty"> <button>Add to cart</button></div>
        <p><input type="text" name="city"> <a href="/help">Help</a></p>"#,
    );
    with_page("/beside-a-button", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let tt = line_of(&state, |e| {
            e.tag == "input" && e.attribute("type") == Some("text") && e.attribute("name").is_none()
        });
        assert!(
            tt.attributes.iter().all(|(_, v)| !v.contains("Submit")),
            "the button's words name the field:\n{}",
            state.listing
        );
        // The browser gives it no name, so neither does the listing.
        assert_eq!(tt.attribute("label"), None, "{}", state.listing);
        assert!(find(&state, "Submit").is_some(), "{}", state.listing);
        // Words of its row that are not a control's are a guess.
        let qty = field(&state, "qty");
        assert_eq!(
            qty.attribute("name~"),
            Some("Quantity"),
            "{}",
            state.listing
        );
        assert_eq!(qty.attribute("label"), None, "{}", state.listing);
        let city = field(&state, "city");
        assert!(
            city.attributes.iter().all(|(_, v)| !v.contains("Help")),
            "{}",
            state.listing
        );
    });
}

#[test]
fn a_field_in_a_table_takes_its_columns_header() {
    let mut rows = String::new();
    for i in 0..2 {
        rows.push_str(&format!(
            r##"<tr class="form-row">
              <td class="field-choice"><input type="text" name="choice_set-{i}-choice" class="vTextField"></td>
              <td class="field-pub_date"><input type="text" name="choice_set-{i}-pub_date" class="vDateField" size="10"><span class="datetimeshortcuts">&nbsp;<a href="#">Today</a>&nbsp;|&nbsp;<a href="#" id="calendarlink{i}"><span class="date-icon" title="Choose a Date" style="display:inline-block;width:16px;height:16px;background:#888"></span></a></span></td>
              <td class="delete"><input type="checkbox" name="choice_set-{i}-DELETE"></td>
            </tr>"##
        ));
    }
    let html = bare_page(&format!(
        r#"<table><thead><tr><th>Choice</th><th>Date published</th><th>Delete?</th></tr></thead>
        <tbody>{rows}</tbody></table>
        <table><tr><td>Email:</td><td><input name="email"></td></tr></table>"#
    ));
    with_page("/inline-rows", &html, |tab, _| async move {
        let state = observe(&tab).await;
        for i in 0..2 {
            let choice = field(&state, &format!("choice_set-{i}-choice"));
            assert_eq!(
                choice.attribute("name~"),
                Some("Choice"),
                "{}",
                state.listing
            );
            let date = field(&state, &format!("choice_set-{i}-pub_date"));
            assert_eq!(
                date.attribute("name~"),
                Some("Date published"),
                "{}",
                state.listing
            );
            assert!(
                date.attributes.iter().all(|(_, v)| !v.contains("Today")),
                "the shortcut link names the date field:\n{}",
                state.listing
            );
            let delete = field(&state, &format!("choice_set-{i}-DELETE"));
            assert_eq!(
                delete.attribute("name~"),
                Some("Delete?"),
                "{}",
                state.listing
            );
        }
        // A table that only lays a form out has no header: its row names.
        assert_eq!(
            field(&state, "email").attribute("name~"),
            Some("Email:"),
            "{}",
            state.listing
        );
    });
}

#[test]
fn a_column_of_yes_no_icons_reads_by_their_alt_text() {
    let icon = |colour: &str| {
        format!("data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='13' height='13'%3E%3Ccircle cx='6' cy='6' r='6' fill='{colour}'/%3E%3C/svg%3E")
    };
    let mut rows = String::new();
    for (n, name, active) in [(1, "ann", true), (2, "bob", false), (3, "cyd", true)] {
        let (alt, colour) = if active {
            ("True", "green")
        } else {
            ("False", "red")
        };
        rows.push_str(&format!(
            r#"<tr><td><input type="checkbox" name="_selected_action" value="{n}" class="action-select"></td>
            <th><a href="/users/{n}/">{name}</a></th>
            <td><img src="{}" alt="{alt}" width="13" height="13"></td></tr>"#,
            icon(colour)
        ));
    }
    let html = bare_page(&format!(
        r#"<table id="result_list"><thead><tr>
          <th><input type="checkbox" id="action-toggle" aria-label="Select all"></th>
          <th><a href="?o=1">Username</a></th><th>Active</th></tr></thead>
        <tbody>{rows}</tbody></table>"#
    ));
    with_page("/yes-no", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let text = &state.page_text.text;
        for row in ["ann [icon: True]", "bob [icon: False]", "cyd [icon: True]"] {
            assert!(
                text.contains(row),
                "{row:?} is not in the page text:\n{text}"
            );
            // Each row's check box says which row it selects, icon and all.
            line_of(&state, |e| {
                e.attribute("name") == Some("_selected_action") && e.attribute("in") == Some(row)
            });
        }
    });
}
