//! Whole-screen renders compared with snapshot files at 80x24 and
//! 160x48: start-up, the listing with the sitemap, reflection and log,
//! colours of new and selected rows, the approval modal and its editor,
//! ask-user, the step inspector, help, the command line, and themes.

use std::path::Path;

use crossterm::event::KeyCode;
use tokio::sync::oneshot;
use webagent::events::Event;
use webagent::tui::app::Modal;
use webagent::tui::{AppEvent, Effect, Theme};

use crate::bench::{
    approval_request, assert_snapshot, feed_step, screen_text, sizes, step_record, Bench,
};

/// While the model keeps a step waiting, the status line says for how
/// long and which attempt; the step's record ends the wait.
#[test]
fn a_wait_for_the_model_shows_its_time_and_attempt_in_the_status_line() {
    for (w, h) in sizes() {
        let mut bench = Bench::on_orders(w, h);
        bench.send(AppEvent::agent(Event::ModelWaiting {
            attempt: 2,
            max_attempts: 2,
            seconds: 37,
            limit: 180,
        }));
        bench.idle();
        let screen = bench.screen();
        let want = if w < 120 {
            "model 37s 2/2"
        } else {
            "model 37 s, attempt 2 of 2"
        };
        assert!(screen.contains(want), "{w}x{h}:\n{screen}");
        feed_step(&bench);
        bench.idle();
        let screen = bench.screen();
        assert!(!screen.contains("model 37"), "{w}x{h}:\n{screen}");
    }
}

/// The task cache's report reaches the status line and the log.
#[test]
fn a_cache_report_shows_in_the_status_line_and_the_log() {
    let mut bench = Bench::on_orders(160, 48);
    feed_step(&bench);
    bench.send(AppEvent::agent(Event::Cache(
        webagent::events::CacheRecord {
            state: webagent::events::CacheState::Hit,
            key: "a856caa5f6419a0e".into(),
            task: "ship order 1042".into(),
            route: "/orders/:id".into(),
            recipe: ".webagent/cache/a856caa5f6419a0e.rhai".into(),
            model_calls: 0,
            usage: webagent::events::TokenUsage::default(),
            success: true,
            note: None,
        },
    )));
    bench.idle();
    let screen = bench.screen();
    assert!(screen.contains("cache hit"), "the status line:\n{screen}");
    assert!(
        screen.contains("cache            hit: 0 model calls, 0 tokens"),
        "the log:\n{screen}"
    );
    // A new run clears the state until its own report.
    feed_step(&bench);
    bench.idle();
    assert!(!bench.screen().contains("cache hit"));
}

#[test]
fn render_startup_before_the_browser_is_up() {
    for (w, h) in sizes() {
        let mut bench = Bench::new(w, h);
        bench.idle();
        let screen = bench.screen();
        assert!(
            screen.contains("waiting for the first observation"),
            "{screen}"
        );
        assert!(screen.contains("STARTING"), "{screen}");
        assert!(
            screen.contains("approve risky") || screen.contains("ask risky"),
            "{screen}"
        );
        assert_snapshot(&format!("startup_{w}x{h}"), &screen);
    }
}

#[test]
fn render_listing_sitemap_reflection_and_log() {
    for (w, h) in sizes() {
        let mut bench = Bench::on_orders(w, h);
        feed_step(&bench);
        bench.idle();
        let screen = bench.screen();
        assert!(screen.contains("*[4]<button>Refund</button>"), "{screen}");
        assert!(screen.contains("Elements 6 (2 new)"), "{screen}");
        assert!(
            screen.contains("▶"),
            "current sitemap page marked:\n{screen}"
        );
        assert!(screen.contains("Ship the order"), "{screen}");
        assert!(screen.contains("step 2/40"), "{screen}");
        assert!(screen.contains("212ms"), "{screen}");
        assert_snapshot(&format!("main_{w}x{h}"), &screen);
    }
}

#[test]
fn new_elements_and_the_selected_row_have_their_own_colours() {
    let mut bench = Bench::on_orders(80, 24);
    let theme = Theme::builtin();
    let buffer = bench.buffer().clone();
    let text = screen_text(&buffer);
    let row_of = |needle: &str| {
        text.lines()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle} on screen:\n{text}")) as u16
    };
    let col_of = |needle: &str| {
        let line = text
            .lines()
            .nth(row_of(needle) as usize)
            .unwrap_or_default();
        line.chars()
            .take_while(|_| true)
            .collect::<String>()
            .find(needle)
            .map(|b| line[..b].chars().count() as u16)
            .unwrap_or(0)
    };
    let refund = (col_of("*[4]"), row_of("*[4]"));
    assert_eq!(buffer[refund].fg, theme.palette.new_element);
    let first = (col_of("[1]<a"), row_of("[1]<a"));
    assert_eq!(buffer[first].bg, theme.palette.selection, "cursor row");
    // Moving the cursor moves the selection and asks for a highlight.
    bench.key(KeyCode::Char('j'));
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::Highlight(2)]),
        "{:?}",
        bench.effects
    );
    let buffer = bench.buffer().clone();
    assert_ne!(buffer[first].bg, theme.palette.selection);
}

#[test]
fn render_approval_modal() {
    for (w, h) in sizes() {
        let mut bench = Bench::on_orders(w, h);
        let (reply, _rx) = oneshot::channel();
        bench.send(AppEvent::ApprovalRequested {
            request: Box::new(approval_request()),
            reply,
        });
        bench.idle();
        let screen = bench.screen();
        assert!(
            screen.contains("Approve step 3? (commit action)"),
            "{screen}"
        );
        assert!(
            screen.contains("[5]<button>Cancel order</button>"),
            "{screen}"
        );
        assert!(screen.contains("y/Enter approve"), "{screen}");
        assert_snapshot(&format!("approval_{w}x{h}"), &screen);
    }
}

#[test]
fn render_approval_editor_with_a_refused_edit() {
    for (w, h) in sizes() {
        let mut bench = Bench::on_orders(w, h);
        let (reply, _rx) = oneshot::channel();
        bench.send(AppEvent::ApprovalRequested {
            request: Box::new(approval_request()),
            reply,
        });
        bench.key(KeyCode::Char('e'));
        bench.type_text("x");
        bench.ctrl('s');
        bench.idle();
        let screen = bench.screen();
        assert!(screen.contains("Edit the action (JSON)"), "{screen}");
        assert!(screen.contains("not JSON"), "{screen}");
        assert_snapshot(&format!("approval_edit_{w}x{h}"), &screen);
    }
}

#[test]
fn render_ask_user_modal() {
    for (w, h) in sizes() {
        let mut bench = Bench::on_orders(w, h);
        let (reply, _rx) = oneshot::channel();
        bench.send(AppEvent::AskUser {
            question: "Which warehouse should ship order 1042?".into(),
            reply,
        });
        bench.type_text("Berlin");
        bench.idle();
        let screen = bench.screen();
        assert!(screen.contains("Which warehouse"), "{screen}");
        assert!(screen.contains("Berlin"), "{screen}");
        assert_snapshot(&format!("ask_user_{w}x{h}"), &screen);
    }
}

#[test]
fn render_step_inspector() {
    for (w, h) in sizes() {
        let mut bench = Bench::on_orders(w, h);
        feed_step(&bench);
        bench.idle();
        // Focus the log (Tab order: elements, reflection, sitemap, log).
        for _ in 0..3 {
            bench.key(KeyCode::Tab);
        }
        bench.key(KeyCode::Enter);
        bench.idle();
        let screen = bench.screen();
        assert!(screen.contains("Step 2"), "{screen}");
        assert!(
            screen.contains("observe 41 ms · model 1830 ms · act 212 ms"),
            "{screen}"
        );
        assert!(
            screen.contains("2400 prompt + 95 answer = 2495"),
            "{screen}"
        );
        assert!(screen.contains("encoded twice"), "{screen}");
        // The raw answer comes first, wrapped, starting with the body.
        assert!(screen.contains("raw response, as received:"), "{screen}");
        assert!(
            screen.contains(r#"{"id":"chatcmpl-7","choices""#),
            "{screen}"
        );
        // The footer says how to scroll.
        assert!(screen.contains("PgDn page down"), "{screen}");
        assert!(screen.contains("End last"), "{screen}");
        assert_snapshot(&format!("inspector_{w}x{h}"), &screen);
    }
}

/// Opens the inspector on the one logged agent step.
fn open_inspector(w: u16, h: u16) -> Bench {
    let mut bench = Bench::on_orders(w, h);
    feed_step(&bench);
    bench.idle();
    for _ in 0..3 {
        bench.key(KeyCode::Tab);
    }
    bench.key(KeyCode::Enter);
    bench.idle();
    bench
}

fn inspector_scroll(bench: &Bench) -> usize {
    match &bench.state().modal {
        Some(Modal::Inspector { scroll, .. }) => *scroll,
        other => panic!("the inspector is not open: {other:?}"),
    }
}

#[test]
fn the_inspector_scrolls_to_the_exact_prompt_and_its_last_line() {
    for (w, h) in sizes() {
        let mut bench = open_inspector(w, h);
        assert!(!bench.screen().contains("END OF PROMPT"));

        // End shows the last page: the prompt's last line on the last
        // text row, even though long lines above it wrap.
        bench.key(KeyCode::End);
        bench.idle();
        let screen = bench.screen();
        assert!(screen.contains("END OF PROMPT"), "{screen}");
        assert!(screen.contains("[40]<button>Row 40"), "{screen}");
        let rows: Vec<&str> = screen.lines().collect();
        let last_text_row = rows
            .iter()
            .rposition(|r| r.contains("END OF PROMPT"))
            .expect("shown");
        assert!(
            rows[last_text_row + 1].contains("close") || rows[last_text_row + 1].contains("Esc"),
            "the prompt ends right above the footer:\n{screen}"
        );
        assert_snapshot(&format!("inspector_end_{w}x{h}"), &screen);
        let end = inspector_scroll(&bench);
        // Down at the end stays at the end.
        bench.key(KeyCode::Down);
        bench.idle();
        assert_eq!(inspector_scroll(&bench), end);

        // Home goes back to the top; PageDown moves a whole text page.
        bench.key(KeyCode::Home);
        bench.idle();
        assert_eq!(inspector_scroll(&bench), 0);
        assert!(
            bench.screen().contains("Step 2 · rows 1–"),
            "{}",
            bench.screen()
        );
        bench.key(KeyCode::PageDown);
        bench.idle();
        let page = inspector_scroll(&bench);
        let (_, body, _) = webagent::tui::modals::inspector_layout((w, h));
        // A page is the text rows shown, but never past the last page.
        assert_eq!(page, usize::from(body.height).min(end));
        bench.key(KeyCode::PageUp);
        bench.key(KeyCode::Down);
        bench.idle();
        assert_eq!(inspector_scroll(&bench), 1);
    }
}

#[test]
fn the_inspector_shows_every_prompt_message_by_role() {
    let mut bench = open_inspector(160, 48);
    let mut seen = String::new();
    // Page through and gather every row the person can read.
    for _ in 0..20 {
        seen.push_str(&bench.screen());
        bench.key(KeyCode::PageDown);
        bench.idle();
    }
    let record = step_record();
    assert!(
        seen.contains(&format!(
            "prompt, as sent ({} characters):",
            record.prompt_chars
        )),
        "{seen}"
    );
    assert!(seen.contains("## system"), "{seen}");
    assert!(seen.contains("## user"), "{seen}");
    assert!(seen.contains("Task: ship order 1042"), "{seen}");
    // The long system line wraps onto further rows; its last words show.
    assert!(seen.contains("does not show."), "{seen}");
    assert!(seen.contains(r#""usage":{"prompt_tokens":2400"#), "{seen}");
}

#[test]
fn render_help_generated_from_the_keymap() {
    for (w, h) in sizes() {
        let mut bench = Bench::on_orders(w, h);
        bench.key(KeyCode::Char('?'));
        bench.idle();
        let screen = bench.screen();
        assert!(screen.contains("Keys"), "{screen}");
        assert!(
            screen.contains("approval mode: never → risky → always"),
            "{screen}"
        );
        assert_snapshot(&format!("help_{w}x{h}"), &screen);
        // Every key of the keymap is in the help, once per context.
        let state = bench.state();
        for binding in state.keymap.bindings() {
            let rows = state.keymap.help_rows(binding.context);
            assert!(
                rows.iter().any(|(keys, d)| keys
                    .split('/')
                    .any(|k| k == binding.key.label() || keys.contains(&binding.key.label()))
                    && *d == binding.description),
                "{binding:?} missing from help"
            );
        }
    }
}

fn help_scroll(bench: &Bench) -> usize {
    match &bench.state().modal {
        Some(Modal::Help { scroll }) => *scroll,
        other => panic!("help is not open: {other:?}"),
    }
}

#[test]
fn help_lists_every_command_wrapped_and_ends_on_its_last_line() {
    use webagent::tui::line_commands::LINE_COMMANDS;
    for (w, h) in sizes() {
        let mut bench = Bench::on_orders(w, h);
        bench.key(KeyCode::Char('?'));
        bench.idle();
        let first = bench.screen();
        assert!(first.contains("lines 1–"), "where it is:\n{first}");
        assert!(first.contains("PgDn page down"), "how to scroll:\n{first}");
        // Page through and gather every row a person can read.
        let mut seen = first;
        let mut last = 0;
        loop {
            bench.key(KeyCode::PageDown);
            bench.idle();
            seen.push_str(&bench.screen());
            let now = help_scroll(&bench);
            if now == last {
                break;
            }
            last = now;
        }
        let mut wanted: Vec<String> = LINE_COMMANDS
            .iter()
            .map(|c| format!(":{}", c.usage()))
            .collect();
        wanted.extend(
            bench
                .state()
                .catalog
                .specs()
                .iter()
                .map(|s| format!(":{}", s.usage())),
        );
        for usage in wanted {
            // A usage wider than the dialog wraps: its first words show.
            let head: String = usage.chars().take(40).collect();
            assert!(seen.contains(head.trim_end()), "{usage} at {w}x{h}");
        }
        // A description longer than the dialog wraps instead of being cut.
        assert!(seen.contains("(:sessions)"), "{w}x{h}:\n{seen}");
        // End shows the last page: the last line right above the footer.
        bench.key(KeyCode::Char('G'));
        bench.idle();
        let end = help_scroll(&bench);
        assert_eq!(end, last, "G and paging agree");
        let screen = bench.screen();
        let rows: Vec<&str> = screen.lines().collect();
        // The dialog's footer (the screen's hint line below says the same).
        let footer = rows
            .iter()
            .position(|r| r.contains("Esc/q/? close"))
            .expect("the footer");
        let (_, body, _) = webagent::tui::layout::help_layout((w, h));
        let lines = webagent::tui::modals::help_lines(bench.state(), body.width);
        let last_line = lines.last().expect("help has lines").to_string();
        let last_words = last_line.trim();
        assert!(
            rows[footer - 1].contains(last_words),
            "the help ends right above its footer ({last_words}):\n{screen}"
        );
        bench.key(KeyCode::Down);
        bench.idle();
        assert_eq!(help_scroll(&bench), end, "no scrolling past the end");
    }
}

#[test]
fn render_command_line_and_picking() {
    for (w, h) in sizes() {
        let mut bench = Bench::on_orders(w, h);
        bench.key(KeyCode::Char(':'));
        bench.type_text("click 4");
        bench.idle();
        let screen = bench.screen();
        assert!(
            screen.lines().any(|l| l.starts_with(":click 4")),
            "{screen}"
        );
        assert_snapshot(&format!("command_line_{w}x{h}"), &screen);
        bench.key(KeyCode::Esc);
        let (reply, _rx) = oneshot::channel();
        bench.send(AppEvent::ApprovalRequested {
            request: Box::new(approval_request()),
            reply,
        });
        bench.key(KeyCode::Char('p'));
        bench.idle();
        let screen = bench.screen();
        assert!(screen.contains("Pick an element"), "{screen}");
        assert_snapshot(&format!("picking_{w}x{h}"), &screen);
    }
}

#[test]
fn render_a_broken_theme_in_the_status_line() {
    for (w, h) in sizes() {
        let mut bench = Bench::on_orders(w, h);
        let before = bench.state().theme.clone();
        let error = Theme::parse("colors:\n  error: blurple\n", Path::new("themes/mine.yaml"))
            .expect_err("blurple is no colour");
        bench.send(AppEvent::ThemeReloaded(Err(error)));
        bench.idle();
        let screen = bench.screen();
        assert!(
            screen.contains("thm ERROR") || screen.contains("theme ERROR"),
            "{screen}"
        );
        assert!(screen.contains("themes/mine.yaml:2:10:"), "{screen}");
        assert_eq!(bench.state().theme, before, "the last good theme stays");
        assert_snapshot(&format!("theme_error_{w}x{h}"), &screen);
    }
}

#[test]
fn a_light_theme_recolours_the_screen() {
    let mut bench = Bench::on_orders(80, 24);
    bench.send(AppEvent::ThemeReloaded(Ok(Theme::light())));
    bench.idle();
    let light = Theme::light();
    assert_eq!(bench.buffer()[(0, 0)].fg, light.palette.border_focus);
    assert_eq!(bench.state().status.theme_error, None);
    assert!(bench.screen().contains(" light"));
}

#[test]
fn i_on_an_element_shows_its_whole_line_attributes_and_locators() {
    for (w, h) in sizes() {
        let mut bench = Bench::on_orders(w, h);
        let mut page = crate::bench::orders_page();
        let mut field = crate::bench::element(7, "input", "", 0, false);
        field.attributes = vec![
            ("type".into(), "email".into()),
            ("name".into(), "billing_contact_email".into()),
            (
                "placeholder".into(),
                "the address invoices and payment reminders go to".into(),
            ),
            ("label".into(), "Billing contact".into()),
            ("required".into(), String::new()),
        ];
        page.elements.push(field);
        bench.send(AppEvent::Page(Box::new(page)));
        bench.key(KeyCode::Char('G'));
        bench.idle();
        let pane = bench.screen();
        assert!(
            !pane.contains("payment reminders go to\" label"),
            "the pane cuts the line at {w}x{h}:\n{pane}"
        );
        assert!(pane.contains("i element in full"), "the hint:\n{pane}");
        bench.key(KeyCode::Char('i'));
        bench.idle();
        let screen = bench.screen();
        assert!(screen.contains("Element [7] in full"), "{screen}");
        // The whole line, even where it wraps.
        let flat: String = screen
            .lines()
            .map(|l| l.trim_matches(|c: char| c == '┃' || c == '│' || c.is_whitespace()))
            .collect();
        assert!(
            flat.contains("label=\"Billing contact\" required />"),
            "the line's end:\n{screen}"
        );
        for row in [
            "name            billing_contact_email",
            "required        (set)",
        ] {
            assert!(screen.contains(row), "{row} at {w}x{h}:\n{screen}");
        }
        assert_snapshot(&format!("element_detail_{w}x{h}"), &screen);
        // The end shows the locators, the last row right above the footer,
        // and it scrolls no further.
        bench.key(KeyCode::End);
        bench.key(KeyCode::Down);
        bench.idle();
        let end = bench.screen();
        for row in [
            "role:textbox:Billing contact",
            "label:Billing contact",
            "placeholder:the address invoices",
            "name:billing_contact_email",
        ] {
            assert!(end.contains(row), "{row} at {w}x{h}:\n{end}");
        }
        let rows: Vec<&str> = end.lines().collect();
        let footer = rows
            .iter()
            .position(|r| r.contains("Esc/q close"))
            .expect("the footer");
        let note = rows
            .iter()
            .position(|r| r.contains("CSS path"))
            .expect("the last row");
        let inside =
            |r: &str| -> String { r.split('┃').nth(1).unwrap_or_default().trim().to_string() };
        assert!(
            rows[note + 1..footer].iter().all(|r| inside(r).is_empty()),
            "the last row shows with nothing cut below it:\n{end}"
        );
        bench.key(KeyCode::Esc);
        bench.idle();
        assert!(bench.state().modal.is_none());
    }
}
