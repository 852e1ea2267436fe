//! The event loop fed keys and fake service events, run until idle: a
//! typed task and the mode, agent events in the panes, quitting, errors
//! that keep the last good tree or theme, huge listings, resizing, and
//! terminals tiny and huge.

use std::sync::mpsc::channel;

use crossterm::event::KeyCode;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use tokio::sync::oneshot;
use webagent::bench::tui::{bench_draw, synthetic_page};
use webagent::environment::{ApprovalDecision, ApprovalMode};
use webagent::events::{Event, ObservationSummary, TokenUsage};
use webagent::tui::app::{LoadState, Outcome, RunStatus};
use webagent::tui::{AppEvent, Effect, Pane, Theme};

use crate::bench::{approval_request, feed_step, orders_page, sitemaps, sizes, Bench};
use crate::support::scratch::scratch_dir;

#[test]
fn a_typed_task_starts_a_run_and_the_mode_cycles() {
    let mut bench = Bench::on_orders(80, 24);
    bench.key(KeyCode::Char('a'));
    bench.key(KeyCode::Char('t'));
    bench.type_text("ship order 1042");
    bench.key(KeyCode::Enter);
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::SetApprovalMode(ApprovalMode::Always), Effect::StartRun { task, approval, .. }] => {
            assert_eq!(task, "ship order 1042");
            assert_eq!(*approval, ApprovalMode::Always);
        }
        other => panic!("expected mode then run, got {other:?}"),
    }
    assert_eq!(bench.state().status.run, RunStatus::Running);
    // The field that started the task keeps the focus; Esc leads to the
    // run's keys.
    assert_eq!(bench.state().focus, Pane::Task);
    assert!(bench.screen().contains("ask always"));
    // Pause, resume and stop reach the run.
    bench.effects.clear();
    bench.key(KeyCode::Esc);
    bench.key(KeyCode::Char('p'));
    bench.key(KeyCode::Char('p'));
    bench.key(KeyCode::Char('s'));
    bench.idle();
    assert!(
        matches!(
            bench.effects.as_slice(),
            [
                Effect::SetPaused(true),
                Effect::SetPaused(false),
                Effect::StopRun
            ]
        ),
        "{:?}",
        bench.effects
    );
    assert_eq!(bench.state().status.run, RunStatus::Stopping);
}

#[test]
fn agent_events_fill_reflection_log_tokens_and_status() {
    let mut bench = Bench::on_orders(80, 24);
    feed_step(&bench);
    bench.send(AppEvent::agent(Event::Done {
        success: true,
        text: "order 1042 shipped".into(),
        reason: webagent::events::EndReason::Done,
        steps: 2,
        usage: TokenUsage::default(),
    }));
    bench.idle();
    let state = bench.state();
    assert_eq!(state.reflection.next_goal, "Ship the order");
    assert_eq!(state.log.len(), 1);
    assert_eq!(state.log[0].step, Some(2));
    assert_eq!(state.log[0].outcome, Outcome::Ok);
    assert!(
        state.log[0].target.contains("Ship"),
        "{}",
        state.log[0].target
    );
    assert!(state.log[0]
        .raw_response
        .contains("next goal: Ship the order"));
    assert_eq!(state.status.tokens.total_tokens, 2495);
    assert_eq!(state.status.run, RunStatus::Finished { success: true });
    let screen = bench.screen();
    assert!(screen.contains("DONE"), "{screen}");
    assert!(screen.contains("2.5k tok"), "{screen}");
    assert!(screen.contains("done: order 1042 shipped"), "{screen}");
}

#[test]
fn the_reflection_fills_while_it_streams() {
    let mut bench = Bench::on_orders(80, 24);
    bench.send(AppEvent::agent(Event::Observation(ObservationSummary {
        step: 1,
        url: "http://127.0.0.1:8080/orders/1042".into(),
        title: "Order".into(),
        elements: 6,
        new_elements: 0,
        listing_chars: 10,
    })));
    bench.send(AppEvent::agent(Event::Text {
        content: "evaluation: Start\nmemory: nothing ye".into(),
    }));
    bench.idle();
    let screen = bench.screen();
    assert!(screen.contains("nothing ye"), "{screen}");
    assert!(screen.contains("step 1 …"), "streaming marker:\n{screen}");
}

#[test]
fn quitting_with_a_pending_approval_stops_the_agent_first() {
    let mut bench = Bench::on_orders(80, 24);
    let (reply, _rx) = oneshot::channel();
    bench.send(AppEvent::ApprovalRequested {
        request: Box::new(approval_request()),
        reply,
    });
    bench.ctrl('c');
    assert!(bench.idle(), "quit reported");
    match bench.effects.as_slice() {
        [Effect::Decide {
            decision: ApprovalDecision::Stop,
            ..
        }, Effect::Quit] => {}
        other => panic!("expected stop then quit, got {other:?}"),
    }
}

#[test]
fn sitemap_and_script_errors_show_and_the_last_good_tree_stays() {
    let mut bench = Bench::on_orders(160, 48);
    bench.send(AppEvent::Sitemaps {
        sitemaps: sitemaps(),
        error: Some("sitemaps/acme.yaml:7:3: unknown key `titel`".into()),
    });
    bench.idle();
    let screen = bench.screen();
    assert!(screen.contains("sitemaps ERROR"), "{screen}");
    assert!(screen.contains("sitemaps/acme.yaml:7:3"), "{screen}");
    assert!(screen.contains("Order detail"), "tree kept:\n{screen}");
    assert!(matches!(
        bench.state().status.sitemaps,
        LoadState::Failed(_)
    ));
}

#[test]
fn a_huge_listing_scrolls_to_the_end_and_draws_fast() {
    let mut bench = Bench::new(80, 24);
    bench.send(AppEvent::Page(Box::new(synthetic_page(20_000))));
    bench.key(KeyCode::Char('G'));
    bench.idle();
    let screen = bench.screen();
    assert!(screen.contains("[20000]<button>Item 20000"), "{screen}");
    assert!(screen.contains("20000/20000"), "{screen}");
    bench.key(KeyCode::PageUp);
    bench.idle();
    assert!(bench.state().elements.cursor < 19_999);
    for (w, h) in sizes() {
        let figures = bench_draw(20_000, 200, w, h);
        // Every frame is counted and the order statistics are consistent;
        // the times themselves are printed, not asserted.
        assert_eq!(figures.frames, 200);
        assert!(figures.median <= figures.p95 && figures.p95 <= figures.max);
        println!(
            "frame draw, 20,000 elements at {w}x{h}: mean {:?}, median {:?}, p95 {:?}, max {:?} over {} frames",
            figures.mean, figures.median, figures.p95, figures.max, figures.frames
        );
    }
}

#[test]
fn resizing_keeps_the_cursor_visible() {
    let mut bench = Bench::new(160, 48);
    bench.send(AppEvent::Page(Box::new(synthetic_page(500))));
    for _ in 0..30 {
        bench.key(KeyCode::Char('j'));
    }
    bench.send(AppEvent::Resize(80, 24));
    bench.idle();
    // Swap the test terminal for one of the new size, as a real resize would.
    bench.terminal = Terminal::new(TestBackend::new(80, 24)).expect("backend");
    bench.send(AppEvent::Resize(80, 24));
    bench.idle();
    let screen = bench.screen();
    assert!(screen.contains("[31]<"), "cursor row visible:\n{screen}");
    assert!(screen.contains("31/500"), "{screen}");
}

#[test]
fn without_a_model_a_task_is_refused_and_kept() {
    let mut bench = Bench::on_orders(80, 24);
    bench.app.state.status.model.clear();
    bench.key(KeyCode::Char('t'));
    bench.type_text("ship order 1042");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    assert_eq!(bench.state().task.lines(), ["ship order 1042"]);
    let notice = bench.state().status.notice.clone().expect("a reason");
    assert!(
        notice.text.contains("no model is configured"),
        "{}",
        notice.text
    );
    assert_eq!(bench.state().status.run, RunStatus::Idle);
}

#[test]
fn an_edited_theme_reloads_and_a_broken_one_keeps_the_last_good() {
    use std::time::Duration;
    use webagent::tui::theme::ThemeWatcher;

    let dir = scratch_dir("theme");
    let path = dir.join("mine.yaml");
    std::fs::write(&path, "colors:\n  error: \"#ff0000\"\n").expect("writing the theme");
    let (tx, rx) = channel();
    let _watcher = ThemeWatcher::start(&path, move |result| {
        let _ = tx.send(result);
    })
    .expect("watching the theme");
    // A broken save: reported with its position.
    std::fs::write(&path, "colors:\n  error: blurple\n").expect("writing");
    let reported = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the broken save is reported");
    let broken = reported.expect_err("blurple is refused");
    let error = broken.to_string();
    assert!(error.contains("mine.yaml:2:10:"), "{error}");
    // Saved by writing a new file and renaming it over the old one.
    let temp = dir.join(".mine.yaml.tmp");
    std::fs::write(&temp, "colors:\n  error: \"#00ff00\"\n").expect("writing");
    std::fs::rename(&temp, &path).expect("renaming");
    let theme = loop {
        let next = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the good save is reported");
        if let Ok(theme) = next {
            break theme;
        }
    };
    assert_eq!(theme.palette.error, ratatui::style::Color::Rgb(0, 255, 0));
    // Through the loop: the broken file's error shows, the good one applies.
    let mut bench = Bench::on_orders(80, 24);
    bench.send(AppEvent::ThemeReloaded(Err(broken)));
    bench.send(AppEvent::ThemeReloaded(Ok(theme.clone())));
    bench.idle();
    assert_eq!(bench.state().theme, theme);
    assert_eq!(bench.state().status.theme_error, None);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn themes_are_found_by_name_and_unknown_names_say_what_exists() {
    assert_eq!(Theme::find("light").expect("shipped").name, "light");
    assert_eq!(Theme::find("dark").expect("shipped").name, "dark");
    let error = Theme::find("no-such-theme")
        .expect_err("unknown")
        .to_string();
    assert!(error.contains("dark, light"), "{error}");
}

#[test]
fn the_status_line_counts_script_files_and_a_removed_file_is_no_failure() {
    let mut bench = Bench::on_orders(160, 48);
    bench.send(AppEvent::ScriptsLoaded {
        catalog: Box::new(webagent::actions::Catalog::builtin()),
        recipes: Vec::new(),
        files: 2,
    });
    bench.idle();
    let screen = bench.screen();
    assert!(
        screen.contains("scripts 2"),
        "both files counted:\n{screen}"
    );
    bench.send(AppEvent::ScriptsLoaded {
        catalog: Box::new(webagent::actions::Catalog::builtin()),
        recipes: Vec::new(),
        files: 1,
    });
    bench.send(AppEvent::agent(Event::ScriptReloaded {
        file: "recipes/old.rhai".into(),
        error: None,
        removed: true,
    }));
    bench.idle();
    let screen = bench.screen();
    assert!(screen.contains("scripts 1"), "{screen}");
    assert!(
        screen.contains("recipes/old.rhai was removed: its actions and recipes are gone"),
        "{screen}"
    );
    assert!(
        !screen.contains("failed"),
        "a removal is no failure:\n{screen}"
    );
}

#[test]
fn a_scripts_log_lines_stay_in_the_action_log() {
    let mut bench = Bench::on_orders(160, 48);
    for line in ["signing in", "3 orders to refund"] {
        bench.send(AppEvent::agent(Event::ScriptLog { line: line.into() }));
    }
    bench.idle();
    let screen = bench.screen();
    assert!(screen.contains("» log              signing in"), "{screen}");
    assert!(
        screen.contains("» log              3 orders to refund"),
        "{screen}"
    );
}

#[test]
fn the_sitemap_pane_shows_the_flags_the_model_reads() {
    let mut bench = Bench::on_orders(160, 48);
    let mut set = webagent::sitemap::SitemapSet::new();
    set.insert(
        webagent::sitemap::Sitemap::from_yaml_str(
            "title: Acme\nchildren:\n  billing:\n    title: Billing\n    requiresAuth: true\n    requiresAdmin: true\n",
        )
        .expect("a valid sitemap"),
    );
    let prompt = set.iter().next().expect("one sitemap").serialize();
    assert!(prompt.contains("Billing [auth,admin]"), "{prompt}");
    bench.send(AppEvent::Sitemaps {
        sitemaps: set,
        error: None,
    });
    bench.idle();
    let screen = bench.screen();
    assert!(screen.contains("Billing [auth,admin]"), "{screen}");
}

#[test]
fn a_second_run_logs_its_steps_apart_from_the_first() {
    let mut bench = Bench::on_orders(160, 48);
    feed_step(&bench);
    feed_step(&bench);
    bench.idle();
    let rows: Vec<(Option<usize>, String)> = bench
        .state()
        .log
        .iter()
        .map(|e| (e.step, e.action.clone()))
        .collect();
    assert_eq!(
        rows,
        [
            (Some(2), "click".to_string()),
            (None, "task".to_string()),
            (Some(2), "click".to_string())
        ],
        "one row per run's step 2, the second run's opened by its task"
    );
    assert!(bench.state().log.iter().all(|e| e.outcome == Outcome::Ok));
}

#[test]
fn the_last_reflection_stays_while_the_next_step_thinks() {
    let mut bench = Bench::on_orders(160, 48);
    feed_step(&bench);
    bench.send(AppEvent::agent(Event::Observation(ObservationSummary {
        step: 3,
        url: "http://127.0.0.1:8080/orders/1042".into(),
        title: "Order".into(),
        elements: 6,
        new_elements: 0,
        listing_chars: 10,
    })));
    bench.idle();
    let screen = bench.screen();
    assert!(
        screen.contains("Reflection · step 2 (step 3 thinking)"),
        "{screen}"
    );
    assert!(screen.contains("Ship the order"), "{screen}");
    // The first streamed text of step 3 replaces it.
    bench.send(AppEvent::agent(Event::Text {
        content: "evaluation: shipped".into(),
    }));
    bench.idle();
    let screen = bench.screen();
    assert!(!screen.contains("Ship the order"), "{screen}");
    assert!(screen.contains("shipped"), "{screen}");
    assert!(screen.contains("Reflection · step 3"), "{screen}");
}

#[test]
fn tiny_and_huge_terminals_draw_without_panicking() {
    for (w, h) in [(1, 1), (20, 6), (40, 10), (1000, 60)] {
        let mut bench = Bench::on_orders(w, h);
        feed_step(&bench);
        let (reply, _rx) = oneshot::channel();
        bench.send(AppEvent::ApprovalRequested {
            request: Box::new(approval_request()),
            reply,
        });
        bench.key(KeyCode::Char('e'));
        bench.idle();
        bench.key(KeyCode::Esc);
        bench.key(KeyCode::Char('n'));
        bench.key(KeyCode::Char('?'));
        bench.idle();
        assert!(bench.app.frames() >= 2, "{w}x{h} drew");
    }
}

#[test]
fn a_new_page_starts_at_the_top_of_its_listing() {
    let mut bench = Bench::new(80, 24);
    bench.send(AppEvent::Page(Box::new(synthetic_page(300))));
    bench.key(KeyCode::Char('G'));
    bench.idle();
    assert_eq!(bench.state().elements.cursor, 299);
    // The same page observed again keeps the cursor.
    bench.send(AppEvent::Page(Box::new(synthetic_page(300))));
    bench.idle();
    assert_eq!(bench.state().elements.cursor, 299);
    bench.send(AppEvent::Page(Box::new(orders_page())));
    bench.idle();
    assert_eq!(bench.state().elements.cursor, 0);
    assert!(bench.screen().contains("1/6"));
}
