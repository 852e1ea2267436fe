//! The terminal workbench without a terminal: whole-screen renders of every
//! pane and modal at 80×24 and 160×48 compared with snapshot files, and the
//! event loop fed keys and fake service events, run until idle with no
//! sleeps.
//!
//! Snapshots live in tests/snapshots/tui/. A missing snapshot is written and
//! the test fails so the new screen gets looked at; `UPDATE_SNAPSHOTS=1`
//! rewrites them all after an intended change.

mod support;

use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Sender};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::Terminal;
use serde_json::json;
use tokio::sync::oneshot;

use webagent::actions::{ActionResult, Catalog, Risk};
use webagent::dom::{
    ElementIndex, InteractiveElement, LeftOut, PageState, PageText, ScrollPosition,
};
use webagent::environment::{ApprovalDecision, ApprovalMode, ApprovalRequest};
use webagent::events::{
    Event, ObservationSummary, Reflection, StepRecord, StepTimings, TokenUsage,
};
use webagent::sitemap::{Sitemap, SitemapSet};
use webagent::tui::app::{LoadState, Modal, Outcome, RunStatus};
use webagent::tui::event_loop::{bench_draw, synthetic_page};
use webagent::tui::{App, AppEvent, AppState, Effect, Pane, Theme};

use support::scratch::scratch_dir;
use support::tmux::{
    capture, require_tmux_and_chromium, settled_screen, settled_screen_where, tmux_keys,
    tmux_start, tmux_text, wait_for_screen, TmuxSession,
};
use support::{listing, llm_server, tmux};

const SITEMAP: &str = r#"
origin: http://127.0.0.1:8080
title: Acme
children:
  login:
    title: Sign in
  orders:
    title: Orders
    requiresAuth: true
    children:
      ":id":
        title: Order detail
        requiresAuth: true
  settings:
    title: Settings
    requiresAuth: true
"#;

fn element(index: usize, tag: &str, text: &str, depth: usize, is_new: bool) -> InteractiveElement {
    InteractiveElement {
        index: ElementIndex(index),
        tag: tag.into(),
        attributes: if tag == "a" {
            vec![("href".into(), format!("/orders/{index}"))]
        } else {
            Vec::new()
        },
        text: text.into(),
        is_new,
        depth,
        parent: None,
        in_shadow_root: false,
        frame: None,
        cross_origin_frame: false,
        node: None,
    }
}

fn orders_page() -> PageState {
    PageState {
        observation: 3,
        url: "http://127.0.0.1:8080/orders/1042".into(),
        title: "Order 1042".into(),
        tabs: Vec::new(),
        scroll: ScrollPosition::default(),
        elements: vec![
            element(1, "a", "Dashboard", 0, false),
            element(2, "a", "Orders", 0, false),
            element(3, "button", "Ship", 1, false),
            element(4, "button", "Refund", 1, true),
            element(5, "button", "Cancel order", 1, true),
            element(6, "input", "", 2, false),
        ],
        left_out: LeftOut::default(),
        full_page: true,
        listing: String::new(),
        page_text: PageText::default(),
        extract_ms: 0.0,
    }
}

fn sitemaps() -> SitemapSet {
    let mut set = SitemapSet::new();
    set.insert(Sitemap::from_yaml_str(SITEMAP).expect("test sitemap is valid"));
    set
}

struct Bench {
    app: App,
    tx: Sender<AppEvent>,
    terminal: Terminal<TestBackend>,
    effects: Vec<Effect>,
}

impl Bench {
    fn new(columns: u16, rows: u16) -> Bench {
        let (tx, rx) = channel();
        let mut state = AppState::new((columns, rows));
        state.status.model = "gpt-4o-mini".into();
        let app = App::new(state, rx);
        let terminal = Terminal::new(TestBackend::new(columns, rows)).expect("test backend");
        Bench {
            app,
            tx,
            terminal,
            effects: Vec::new(),
        }
    }

    /// A workbench on the order page with a sitemap, as after start-up.
    fn on_orders(columns: u16, rows: u16) -> Bench {
        let mut bench = Bench::new(columns, rows);
        bench.send(AppEvent::BrowserReady {
            url: "http://127.0.0.1:8080/orders/1042".into(),
        });
        bench.send(AppEvent::Sitemaps {
            sitemaps: sitemaps(),
            error: None,
        });
        bench.send(AppEvent::Page(Box::new(orders_page())));
        bench.idle();
        bench
    }

    fn send(&self, event: AppEvent) {
        self.tx.send(event).expect("the app holds the receiver");
    }

    fn key(&self, code: KeyCode) {
        self.send(AppEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    }

    fn ctrl(&self, c: char) {
        self.send(AppEvent::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::CONTROL,
        )));
    }

    fn type_text(&self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    fn idle(&mut self) -> bool {
        self.app
            .run_until_idle(&mut self.terminal, &mut self.effects)
            .expect("drawing to the test backend")
    }

    fn buffer(&self) -> &Buffer {
        self.terminal.backend().buffer()
    }

    fn screen(&self) -> String {
        screen_text(self.buffer())
    }

    fn state(&self) -> &AppState {
        &self.app.state
    }
}

fn screen_text(buffer: &Buffer) -> String {
    let area = buffer.area;
    let mut out = String::new();
    for y in 0..area.height {
        let mut line = String::new();
        for x in 0..area.width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn snapshot_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots/tui")
        .join(format!("{name}.txt"))
}

/// Compares the screen with its snapshot file.
fn assert_snapshot(name: &str, screen: &str) {
    let path = snapshot_path(name);
    let update = std::env::var_os("UPDATE_SNAPSHOTS").is_some();
    match std::fs::read_to_string(&path) {
        Ok(expected) if !update => {
            assert!(
                expected == screen,
                "screen {name} differs from {}:\n--- expected\n{expected}\n--- got\n{screen}",
                path.display()
            );
        }
        _ => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).expect("creating the snapshot directory");
            }
            std::fs::write(&path, screen).expect("writing the snapshot");
            assert!(
                update,
                "new snapshot {} written; look at it and run again",
                path.display()
            );
        }
    }
}

fn sizes() -> [(u16, u16); 2] {
    [(80, 24), (160, 48)]
}

fn approval_request() -> ApprovalRequest {
    let action = Catalog::builtin()
        .parse(&json!({"click": {"index": 5}}))
        .expect("valid click");
    ApprovalRequest {
        step: 3,
        action,
        risk: Risk::Commit,
        url: "http://127.0.0.1:8080/orders/1042".into(),
        element: Some("[5]<button>Cancel order</button>".into()),
        next_goal: "Cancel order 1042 as asked".into(),
    }
}

/// A prompt as the agent records it: messages headed by their role, a
/// long system line that must wrap, and a listing long enough to scroll.
fn step_prompt() -> String {
    let mut prompt = String::from(
        "## system\nYou operate a web browser for a person. Each step you judge the previous \
         action, note what to remember, state the next goal, and choose exactly one action \
         from the catalog; never invent an element index the listing does not show.\n\n\
         ## user\nTask: ship order 1042\nCurrent page: http://127.0.0.1:8080/orders/1042\n\
         Interactive elements:\n",
    );
    for i in 1..=40 {
        prompt.push_str(&format!(
            "[{i}]<button>Row {i} of the order table</button>\n"
        ));
    }
    prompt.push_str("Answer by calling agent_step. END OF PROMPT");
    prompt
}

/// The server's body as received: one long JSON line.
const RAW_RESPONSE: &str = r#"{"id":"chatcmpl-7","choices":[{"finish_reason":"tool_calls","message":{"tool_calls":[{"function":{"name":"agent_step","arguments":"{\"evaluation_previous_goal\":\"The order page opened\",\"memory\":\"Order 1042 is paid, not shipped\",\"next_goal\":\"Ship the order\",\"action\":{\"click\":{\"index\":3}}}"}}]}}],"usage":{"prompt_tokens":2400,"completion_tokens":95,"total_tokens":2495}}"#;

fn step_record() -> StepRecord {
    StepRecord {
        index: 2,
        reflection: Reflection {
            evaluation_previous_goal: "The order page opened".into(),
            memory: "Order 1042 is paid, not shipped".into(),
            next_goal: "Ship the order".into(),
        },
        action: json!({"click": {"index": 3}}),
        result: ActionResult::ok(),
        repairs: vec!["arguments were encoded twice; decoded them".into()],
        timings: StepTimings {
            observe_ms: 41,
            llm_ms: 1830,
            act_ms: 212,
            wait_ms: 0,
        },
        usage: Some(TokenUsage {
            prompt_tokens: 2400,
            completion_tokens: 95,
            total_tokens: 2495,
            ..TokenUsage::default()
        }),
        prompt_chars: step_prompt().chars().count(),
        prompt: step_prompt(),
        raw_response: RAW_RESPONSE.into(),
    }
}

/// Feeds one whole agent step as the agent emits it.
fn feed_step(bench: &Bench) {
    bench.send(AppEvent::agent(Event::RunStarted {
        task: "ship order 1042".into(),
        url: "http://127.0.0.1:8080/orders/1042".into(),
        model: "gpt-4o-mini".into(),
        max_steps: 40,
    }));
    bench.send(AppEvent::agent(Event::Observation(ObservationSummary {
        step: 2,
        url: "http://127.0.0.1:8080/orders/1042".into(),
        title: "Order 1042".into(),
        elements: 6,
        new_elements: 2,
        listing_chars: 300,
    })));
    bench.send(AppEvent::agent(Event::Text {
        content: "evaluation: The order page opened\nmemory: Order 1042".into(),
    }));
    bench.send(AppEvent::agent(Event::Text {
        content: " is paid, not shipped\nnext goal: Ship the order".into(),
    }));
    bench.send(AppEvent::agent(Event::ToolCall {
        name: "click".into(),
        parameters: json!({"index": 3}),
    }));
    bench.send(AppEvent::agent(Event::ToolResult {
        name: "click".into(),
        result: ActionResult::ok(),
    }));
    bench.send(AppEvent::agent(Event::Step(step_record())));
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

// ---------------------------------------------------------------- renders

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
            .expect_err("blurple is no colour")
            .to_string();
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

// ------------------------------------------------------------- the loop

#[test]
fn a_command_line_action_runs_and_lands_in_the_log() {
    let mut bench = Bench::on_orders(80, 24);
    bench.key(KeyCode::Char(':'));
    bench.type_text("click 4");
    bench.key(KeyCode::Enter);
    bench.idle();
    let id = match bench.effects.as_slice() {
        [Effect::RunAction { id, action }] => {
            assert_eq!(action.to_json(), json!({"click": {"index": 4}}));
            *id
        }
        other => panic!("expected one action, got {other:?}"),
    };
    assert_eq!(bench.state().log[0].outcome, Outcome::Pending);
    assert!(bench.state().command_line.is_none());
    bench.send(AppEvent::ActionFinished {
        id,
        result: ActionResult::ok(),
        ms: 87,
    });
    bench.idle();
    let screen = bench.screen();
    let row = screen
        .lines()
        .find(|l| l.contains("click") && l.contains("87ms"))
        .unwrap_or_else(|| panic!("log row:\n{screen}"));
    assert!(row.contains("Refund"), "target text in the row: {row}");
    assert!(row.contains(" ok "), "{row}");
}

#[test]
fn state_save_on_the_command_line_asks_the_browser_to_save_and_shows_the_outcome() {
    let mut bench = Bench::on_orders(200, 48);
    bench.app.state.status.sign_in = Some("state .webagent/state.json".into());
    bench.key(KeyCode::Char(':'));
    bench.type_text("state save signed-in.json");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(
        matches!(
            bench.effects.as_slice(),
            [Effect::SaveState(Some(path))] if path == &PathBuf::from("signed-in.json")
        ),
        "{:?}",
        bench.effects
    );
    assert!(bench.state().command_line.is_none());
    bench.send(AppEvent::Notice {
        error: false,
        text: "saved 2 cookies and the local storage of 1 origins to signed-in.json".into(),
    });
    bench.idle();
    let screen = bench.screen();
    assert!(screen.contains("saved 2 cookies"), "{screen}");
    // The status line says what keeps the sign-ins.
    assert!(screen.contains("state .webagent/state.json"), "{screen}");

    // A wrong form keeps the line open and shows the usage.
    bench.effects.clear();
    bench.key(KeyCode::Char(':'));
    bench.type_text("state load x");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    let notice = bench.state().status.notice.clone().expect("a notice");
    assert!(
        notice.error && notice.text.contains("state save"),
        "{notice:?}"
    );
}

#[test]
fn a_download_and_a_tab_an_action_caused_show_in_the_log_and_status() {
    let mut bench = Bench::on_orders(120, 30);
    bench.send(AppEvent::ActionFinished {
        id: 41,
        result: ActionResult::ok_with(json!({
            "downloads": [{
                "file": ".webagent/downloads/orders.csv",
                "name": "orders.csv",
                "size": 31,
                "type": "text/csv",
                "state": "completed",
                "url": "http://127.0.0.1:8080/orders.csv"
            }],
            "new_tab": {"url": "http://127.0.0.1:8080/report", "title": "Report", "switched": true}
        })),
        ms: 12,
    });
    bench.idle();
    let screen = bench.screen();
    let row = screen
        .lines()
        .find(|l| l.contains("download"))
        .unwrap_or_else(|| panic!("a download row:\n{screen}"));
    assert!(row.contains("orders.csv"), "{row}");
    assert!(
        screen.contains("a tab opened: http://127.0.0.1:8080/report"),
        "{screen}"
    );
}

#[test]
fn a_bad_command_keeps_the_line_open_and_says_why() {
    let mut bench = Bench::on_orders(80, 24);
    bench.key(KeyCode::Char(':'));
    bench.type_text("clik 4");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    assert!(bench.state().command_line.is_some());
    let notice = bench
        .state()
        .status
        .notice
        .clone()
        .expect("an error notice");
    assert!(notice.error);
    assert!(notice.text.contains("clik"), "{}", notice.text);
}

#[test]
fn approving_sends_the_decision_to_the_waiting_agent() {
    let mut bench = Bench::on_orders(80, 24);
    let (reply, mut answer) = oneshot::channel();
    bench.send(AppEvent::ApprovalRequested {
        request: Box::new(approval_request()),
        reply,
    });
    bench.key(KeyCode::Char('y'));
    bench.idle();
    assert!(bench.state().modal.is_none());
    let decision = match bench.effects.pop() {
        Some(Effect::Decide { reply, decision }) => {
            reply.send(decision.clone()).expect("receiver alive");
            decision
        }
        other => panic!("expected a decision, got {other:?}"),
    };
    assert_eq!(decision, ApprovalDecision::Approve { note: None });
    assert_eq!(answer.try_recv().ok(), Some(decision));
}

#[test]
fn edited_parameters_are_validated_before_use() {
    let mut bench = Bench::on_orders(80, 24);
    let (reply, _rx) = oneshot::channel();
    bench.send(AppEvent::ApprovalRequested {
        request: Box::new(approval_request()),
        reply,
    });
    bench.key(KeyCode::Char('e'));
    // The editor holds {"click": {"index": 5}} pretty-printed; change 5 to 7.
    bench.key(KeyCode::Down);
    bench.key(KeyCode::Down);
    bench.key(KeyCode::End);
    bench.key(KeyCode::Backspace);
    bench.type_text("7");
    bench.ctrl('s');
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::Decide {
            decision: ApprovalDecision::Edit(action),
            ..
        }] => assert_eq!(action.to_json(), json!({"click": {"index": 7}})),
        other => panic!("expected an edit, got {other:?}"),
    }
}

#[test]
fn an_invalid_edit_is_refused_with_the_catalogs_reason() {
    let mut bench = Bench::on_orders(80, 24);
    let (reply, _rx) = oneshot::channel();
    bench.send(AppEvent::ApprovalRequested {
        request: Box::new(approval_request()),
        reply,
    });
    bench.key(KeyCode::Char('e'));
    bench.key(KeyCode::Down);
    bench.key(KeyCode::Down);
    bench.key(KeyCode::End);
    bench.key(KeyCode::Backspace);
    bench.type_text("\"x\"");
    bench.ctrl('s');
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    match &bench.state().modal {
        Some(Modal::Approval(m)) => {
            let error = m.error.clone().expect("a reason");
            assert!(error.contains("index"), "{error}");
        }
        other => panic!("approval still open, got {other:?}"),
    }
}

#[test]
fn picking_another_element_retargets_the_action() {
    let mut bench = Bench::on_orders(80, 24);
    let (reply, _rx) = oneshot::channel();
    bench.send(AppEvent::ApprovalRequested {
        request: Box::new(approval_request()),
        reply,
    });
    bench.key(KeyCode::Char('p'));
    // The cursor starts on [5], the model's choice; one up is [4].
    bench.key(KeyCode::Char('k'));
    bench.key(KeyCode::Enter);
    bench.idle();
    match bench.effects.last() {
        Some(Effect::Decide {
            decision: ApprovalDecision::Edit(action),
            ..
        }) => assert_eq!(action.to_json(), json!({"click": {"index": 4}})),
        other => panic!("expected an edit, got {other:?}"),
    }
}

#[test]
fn skip_and_stop_answer_the_agent() {
    for (key, expect_stop) in [('n', false), ('x', true)] {
        let mut bench = Bench::on_orders(80, 24);
        let (reply, _rx) = oneshot::channel();
        bench.send(AppEvent::ApprovalRequested {
            request: Box::new(approval_request()),
            reply,
        });
        bench.key(KeyCode::Char(key));
        bench.idle();
        match bench.effects.as_slice() {
            [Effect::Decide { decision, .. }] => {
                if expect_stop {
                    assert_eq!(*decision, ApprovalDecision::Stop);
                } else {
                    assert!(
                        matches!(decision, ApprovalDecision::Deny { reason } if reason.contains("skipped"))
                    );
                }
            }
            other => panic!("expected a decision, got {other:?}"),
        }
    }
}

#[test]
fn the_answer_to_ask_user_goes_back_to_the_model() {
    let mut bench = Bench::on_orders(80, 24);
    let (reply, _rx) = oneshot::channel();
    bench.send(AppEvent::AskUser {
        question: "Which warehouse?".into(),
        reply,
    });
    bench.type_text("Berlin");
    bench.key(KeyCode::Enter);
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::Answer { answer, .. }] => assert_eq!(answer.as_deref(), Some("Berlin")),
        other => panic!("expected an answer, got {other:?}"),
    }
    assert!(bench.state().modal.is_none());
}

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
    assert_eq!(bench.state().focus, Pane::Elements);
    assert!(bench.screen().contains("ask always"));
    // Pause, resume and stop reach the run.
    bench.effects.clear();
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
        let _ = tx.send(result.map_err(|e| e.to_string()));
    })
    .expect("watching the theme");
    // A broken save: reported with its position.
    std::fs::write(&path, "colors:\n  error: blurple\n").expect("writing");
    let reported = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the broken save is reported");
    let error = reported.expect_err("blurple is refused");
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
    bench.send(AppEvent::ThemeReloaded(Err(error)));
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

// ------------------------------------------------------- end to end

/// The pane of a tmux session, as text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_pane_draws_the_marked_picture_in_half_blocks_in_tmux() {
    require_tmux_and_chromium();
    let dir = scratch_dir("page-pane");
    let session = TmuxSession(format!("webagent-tui-page-{}", std::process::id()));
    let command = format!(
        "cd {root} && {bin} --log-file {log} demo",
        root = env!("CARGO_MANIFEST_DIR"),
        bin = env!("CARGO_BIN_EXE_webagent"),
        log = dir.join("log").display(),
    );
    tmux_start(&session.0, &command);
    let screen = wait_for_screen(&session.0, "<button type=\"submit\">Sign in</button>").await;
    assert!(!screen.contains("Page 1024"), "hidden until asked for");

    // v shows the pane: the sign-in page's picture, its three listed
    // elements marked, the one under the cursor outlined.
    tmux_keys(&session.0, &["v"]);
    let screen = wait_for_screen(&session.0, "Page 1024×640 · 3 marks · [0] outlined").await;
    let picture_rows = screen
        .lines()
        .filter(|line| line.matches('▀').count() >= 30)
        .count();
    assert!(picture_rows >= 8, "half-blocks fill the pane:\n{screen}");
    // In colour: the page's white, the form's blue, the marks.
    let out = tmux::tmux(&session.0)
        .args(["capture-pane", "-e", "-p", "-t", &session.0])
        .output()
        .expect("capturing with colours");
    let coloured = String::from_utf8_lossy(&out.stdout).into_owned();
    let colours: std::collections::HashSet<&str> = coloured
        .split("\u{1b}[")
        .filter(|code| code.starts_with("48;2;") || code.starts_with("38;2;"))
        .filter_map(|code| code.split('m').next())
        .collect();
    assert!(
        colours.len() > 10,
        "a picture, not a flat fill: {colours:?}"
    );

    // The cursor moves on: the outline follows it.
    tmux_keys(&session.0, &["j"]);
    wait_for_screen(&session.0, "· [1] outlined").await;
    // v again gives the sitemap its place back.
    tmux_keys(&session.0, &["v"]);
    let screen = wait_for_screen(&session.0, "Sitemap acme.yaml").await;
    assert!(!screen.contains("Page 1024"), "{screen}");
    tmux_keys(&session.0, &["q"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn end_to_end_demo_in_tmux_with_a_scripted_model() {
    use llm_server::{tool_call_completion, LlmServer, Reply};
    use webagent::agent::AGENT_TOOL_NAME;

    require_tmux_and_chromium();
    let step = |goal: &str, action: serde_json::Value| {
        Reply::json(
            200,
            tool_call_completion(
                AGENT_TOOL_NAME,
                &json!({
                    "evaluation_previous_goal": "the sign-in page is open",
                    "memory": "signing in as the demo admin",
                    "next_goal": goal,
                    "action": action,
                }),
            ),
        )
    };
    let server = LlmServer::start(vec![
        // Typing is an interact action: risky mode does not ask.
        step(
            "fill in the email",
            json!({"input_text": {"index": 0, "text": "admin@acme.test"}}),
        ),
        // Submitting the sign-in form is a commit action: risky mode asks.
        step("submit the sign-in form", json!({"click": {"index": 2}})),
        step(
            "report",
            json!({"done": {"text": "signed in", "success": true}}),
        ),
    ])
    .await;
    let dir = scratch_dir("e2e");
    let exit_file = dir.join("exit");
    // The run's trace goes to a directory of this test's own.
    let sessions = dir.join("sessions");
    let config = dir.join("webagent.yaml");
    std::fs::write(
        &config,
        format!("paths:\n  sessions: {}\n", sessions.display()),
    )
    .expect("writing the test's config");
    let session = TmuxSession(format!("webagent-tui-e2e-{}", std::process::id()));
    let command = format!(
        "cd {root} && WEBAGENT_CONFIG={config} OPENAI_BASE_URL={base} OPENAI_API_KEY=test \
         WEBAGENT_MODEL=scripted {bin} --log-file {log} demo; echo $? > {exit}",
        root = env!("CARGO_MANIFEST_DIR"),
        config = config.display(),
        base = server.base_url(),
        bin = env!("CARGO_BIN_EXE_webagent"),
        log = dir.join("log").display(),
        exit = exit_file.display(),
    );
    tmux_start(&session.0, &command);

    // The listing of the sign-in page shows.
    wait_for_screen(&session.0, "<button type=\"submit\">Sign in</button>").await;
    // A command-line action runs and lands in the log.
    tmux_keys(&session.0, &[":"]);
    tmux_text(&session.0, "input_text 0 \"admin@acme.test\"");
    tmux_keys(&session.0, &["Enter"]);
    let screen = wait_for_screen(&session.0, "m input_text").await;
    assert!(screen.contains("Action log 1"), "{screen}");
    tmux_keys(&session.0, &[":"]);
    tmux_text(&session.0, "input_text 1 \"demo\"");
    tmux_keys(&session.0, &["Enter"]);
    wait_for_screen(&session.0, "Action log 2").await;
    // A task with the scripted model: the commit action waits for approval.
    tmux_keys(&session.0, &["t"]);
    tmux_text(&session.0, "sign in");
    tmux_keys(&session.0, &["Enter"]);
    let screen = wait_for_screen(&session.0, "Approve step 2?").await;
    assert!(screen.contains("commit action"), "{screen}");
    assert!(
        screen.contains("Sign in</button>"),
        "target shown:\n{screen}"
    );
    tmux_keys(&session.0, &["y"]);
    let screen = wait_for_screen(&session.0, "done: signed in").await;
    assert!(
        screen.contains("/dashboard"),
        "the click signed in:\n{screen}"
    );
    // The inspector of step 2 shows what the model was sent and answered.
    for _ in 0..3 {
        tmux_keys(&session.0, &["Tab"]);
    }
    tmux_keys(&session.0, &["Home", "Down", "Down", "Down", "Enter"]);
    let screen = wait_for_screen(&session.0, "Step 2 · rows 1–").await;
    assert!(
        screen.contains("raw response, as received:"),
        "the raw answer is shown:\n{screen}"
    );
    assert!(
        screen.contains("submit the sign-in form"),
        "the raw answer is the scripted one:\n{screen}"
    );
    wait_for_screen(&session.0, "## system").await;
    // Page on through the system message to the user message.
    let mut pages = 0;
    let mut screen = settled_screen(&session.0).await;
    while !screen.contains("## user") {
        assert!(pages < 20, "no user message:\n{screen}");
        tmux_keys(&session.0, &["PageDown"]);
        pages += 1;
        // The page has turned once the screen changed and settled again.
        let before = screen.clone();
        screen = settled_screen_where(&session.0, |now| now != before)
            .await
            .unwrap_or_else(|screen| panic!("PageDown changed nothing:\n{screen}"));
    }
    tmux_keys(&session.0, &["Escape"]);
    wait_for_screen(&session.0, "Action log").await;
    // A custom action from recipes/acme.rhai runs from the command line
    // (refunding ships the order first when needed).
    tmux_keys(&session.0, &[":"]);
    tmux_text(&session.0, "refund_order 1003");
    tmux_keys(&session.0, &["Enter"]);
    let screen = wait_for_screen(&session.0, "/orders/1003").await;
    let row = screen
        .lines()
        .find(|l| l.contains("refund_order"))
        .unwrap_or_else(|| panic!("no refund_order row:\n{screen}"));
    assert!(row.contains(" ok "), "{row}\n{screen}");
    // Quitting leaves the terminal clean: the workbench screen is gone.
    tmux_keys(&session.0, &["q"]);
    for _ in 0..300 {
        if exit_file.exists() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let code = std::fs::read_to_string(&exit_file).unwrap_or_default();
    assert_eq!(code.trim(), "0", "exit code");
    let screen = capture(&session.0);
    assert!(
        !screen.contains("Elements"),
        "alternate screen left:\n{screen}"
    );
    assert_eq!(server.request_count(), 3);
    // Only the step the person was asked about carries an approval record:
    // the workbench's mode decided, once, that typing needs no yes.
    let approvals: Vec<serde_json::Value> = std::fs::read_dir(&sessions)
        .expect("the run left a trace")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .flat_map(|e| {
            std::fs::read_to_string(e.path())
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter(|v| v["type"] == "approval")
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(approvals.len(), 1, "{approvals:#?}");
    assert_eq!(approvals[0]["step"], 2, "{approvals:#?}");
    assert_eq!(approvals[0]["decision"], "approved", "{approvals:#?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_second_run_logs_its_steps_apart_from_the_first() {
    let mut bench = Bench::on_orders(160, 48);
    feed_step(&bench);
    feed_step(&bench);
    bench.idle();
    let steps: Vec<Option<usize>> = bench.state().log.iter().map(|e| e.step).collect();
    assert_eq!(steps, [Some(2), Some(2)], "one row per run's step 2");
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
fn tab_completes_action_names_and_shows_their_usage() {
    let mut bench = Bench::on_orders(160, 48);
    bench.key(KeyCode::Char(':'));
    bench.type_text("inp");
    bench.key(KeyCode::Tab);
    bench.idle();
    let line = bench
        .state()
        .command_line
        .as_ref()
        .map(|f| f.lines().join(""));
    assert_eq!(line.as_deref(), Some("input_text "));
    let usage = bench
        .state()
        .status
        .notice
        .clone()
        .expect("usage shown")
        .text;
    assert!(usage.starts_with("input_text <target> <text>"), "{usage}");
    // Typing goes on after the completion, and the action runs.
    bench.type_text("4 \"hello\"");
    bench.key(KeyCode::Enter);
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::RunAction { action, .. }] => assert_eq!(
            action.to_json(),
            json!({"input_text": {"index": 4, "text": "hello", "clear": true}})
        ),
        other => panic!("expected the action, got {other:?}"),
    }
    // Several candidates are listed.
    bench.key(KeyCode::Char(':'));
    bench.type_text("s");
    bench.key(KeyCode::Tab);
    bench.idle();
    let listed = bench
        .state()
        .status
        .notice
        .clone()
        .expect("candidates")
        .text;
    assert!(
        listed.contains("scroll") && listed.contains("screenshot"),
        "{listed}"
    );
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

/// The scripts of the Acme demo, loaded as `webagent demo` loads them.
fn acme_scripts() -> webagent::script::Scripts {
    let scripts = webagent::script::Scripts::default();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes");
    for loaded in scripts.load_dir(&dir) {
        loaded.expect("the shipped recipes compile");
    }
    scripts
}

/// A workbench that has been told the Acme scripts are loaded.
fn with_acme_scripts(bench: &mut Bench) {
    let scripts = acme_scripts();
    bench.send(AppEvent::ScriptsLoaded {
        catalog: Box::new(
            scripts
                .catalog()
                .expect("the custom actions fit the catalog"),
        ),
        recipes: scripts.recipes(),
    });
    bench.idle();
}

fn command_line_text(bench: &Bench) -> Option<String> {
    bench
        .state()
        .command_line
        .as_ref()
        .map(|f| f.lines().join(""))
}

#[test]
fn custom_actions_from_the_scripts_run_and_complete_on_the_command_line() {
    let mut bench = Bench::on_orders(160, 48);
    // Before the scripts load, the name is unknown and the line says so.
    bench.key(KeyCode::Char(':'));
    bench.type_text("refund_order 1003");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    bench.key(KeyCode::Esc);
    with_acme_scripts(&mut bench);

    bench.key(KeyCode::Char(':'));
    bench.type_text("refu");
    bench.key(KeyCode::Tab);
    bench.idle();
    assert_eq!(command_line_text(&bench).as_deref(), Some("refund_order "));
    let usage = bench.state().status.notice.clone().expect("usage").text;
    assert!(usage.starts_with("refund_order"), "{usage}");
    bench.type_text("1003");
    bench.key(KeyCode::Enter);
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::RunAction { action, .. }] => {
            assert_eq!(action.to_json(), json!({"refund_order": {"id": 1003}}))
        }
        other => panic!("expected the custom action, got {other:?}"),
    }
    assert_eq!(bench.state().log[0].action, "refund_order");

    // A script running for a hand-typed action is cancelled by the stop key.
    bench.effects.clear();
    bench.key(KeyCode::Char('s'));
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::CancelScript]),
        "{:?}",
        bench.effects
    );

    // A reload that drops the file takes its actions off the line again.
    bench.effects.clear();
    bench.send(AppEvent::ScriptsLoaded {
        catalog: Box::new(Catalog::builtin()),
        recipes: Vec::new(),
    });
    bench.key(KeyCode::Char(':'));
    bench.type_text("sign_in");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    let notice = bench.state().status.notice.clone().expect("refused");
    assert!(
        notice.error && notice.text.contains("sign_in"),
        "{notice:?}"
    );
}

#[test]
fn a_recipe_runs_from_the_command_line_with_its_steps_in_the_log() {
    let mut bench = Bench::on_orders(160, 48);
    with_acme_scripts(&mut bench);
    // R opens the line on `recipe ` and lists what is loaded.
    bench.key(KeyCode::Char('R'));
    bench.idle();
    assert_eq!(command_line_text(&bench).as_deref(), Some("recipe "));
    let listed = bench.state().status.notice.clone().expect("listed").text;
    assert!(
        listed.contains("new_order_refunded") && listed.contains("orders_overview"),
        "{listed}"
    );
    // An unknown name is refused with what exists; Tab completes.
    bench.type_text("nosuch");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    let refused = bench.state().status.notice.clone().expect("refused");
    assert!(
        refused.error && refused.text.contains("orders_overview"),
        "{refused:?}"
    );
    bench.key(KeyCode::Esc);
    bench.key(KeyCode::Char(':'));
    bench.type_text("recipe orders_o");
    bench.key(KeyCode::Tab);
    bench.idle();
    assert_eq!(
        command_line_text(&bench).as_deref(),
        Some("recipe orders_overview")
    );
    bench.key(KeyCode::Enter);
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::RunRecipe {
            name,
            params,
            approval,
        }] => {
            assert_eq!(name, "orders_overview");
            assert!(params.is_empty(), "it takes none: {params:?}");
            assert_eq!(*approval, ApprovalMode::Risky);
        }
        other => panic!("expected the recipe to start, got {other:?}"),
    }
    assert_eq!(bench.state().status.run, RunStatus::Running);
    assert!(bench.state().command_line.is_none());
    let model = bench.state().status.model.clone();

    // Its steps arrive as agent-like events without observations.
    bench.send(AppEvent::agent(Event::RunStarted {
        task: "recipe orders_overview".into(),
        url: "http://127.0.0.1:8080/".into(),
        model: "none (recipe)".into(),
        max_steps: 0,
    }));
    bench.send(AppEvent::agent(Event::ToolCall {
        name: "navigate".into(),
        parameters: json!({"url": "/orders"}),
    }));
    bench.send(AppEvent::agent(Event::ToolResult {
        name: "navigate".into(),
        result: ActionResult::ok(),
    }));
    bench.send(AppEvent::agent(Event::ToolCall {
        name: "click".into(),
        parameters: json!({"selector": "#filter"}),
    }));
    bench.idle();
    let steps: Vec<(Option<usize>, String)> = bench
        .state()
        .log
        .iter()
        .map(|e| (e.step, e.action.clone()))
        .collect();
    assert_eq!(
        steps,
        [
            (Some(1), "navigate".to_string()),
            (Some(2), "click".to_string())
        ]
    );
    assert_eq!(bench.state().log[0].outcome, Outcome::Ok);
    assert_eq!(bench.state().log[1].target, "#filter");
    assert_eq!(
        bench.state().status.model,
        model,
        "the configured model stays"
    );

    // The stop key stops the recipe like a run.
    bench.effects.clear();
    bench.key(KeyCode::Char('s'));
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::StopRun]),
        "{:?}",
        bench.effects
    );
    bench.send(AppEvent::agent(Event::Done {
        success: false,
        text: "stopped by the person".into(),
        reason: webagent::events::EndReason::Stopped,
        steps: 2,
        usage: TokenUsage::default(),
    }));
    bench.send(AppEvent::RunEnded { error: None });
    bench.idle();
    assert_eq!(
        bench.state().status.run,
        RunStatus::Finished { success: false }
    );
    assert!(bench.state().recipe.is_none());
    assert!(bench.screen().contains("stopped by the person"));
}

#[test]
fn the_export_key_reports_the_file_or_why_not() {
    let mut bench = Bench::on_orders(80, 24);
    bench.key(KeyCode::Char('E'));
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::ExportSession]),
        "{:?}",
        bench.effects
    );
    bench.send(AppEvent::Exported(Ok(PathBuf::from(
        "recipes/session-1763771000.rhai",
    ))));
    bench.idle();
    assert!(
        bench.screen().contains("recipes/session-1763771000.rhai"),
        "{}",
        bench.screen()
    );
    let row = &bench.state().log[0];
    assert_eq!(
        (row.action.as_str(), row.target.as_str()),
        ("export", "recipes/session-1763771000.rhai")
    );
    bench.send(AppEvent::Exported(Err("nothing to replay yet".into())));
    bench.idle();
    let notice = bench.state().status.notice.clone().expect("failure shown");
    assert!(notice.error, "{notice:?}");
    assert!(notice.text.contains("nothing to replay yet"), "{notice:?}");
}

#[test]
fn a_recipes_parameters_are_given_on_the_command_line_and_checked_before_it_runs() {
    let mut bench = Bench::on_orders(160, 48);
    with_acme_scripts(&mut bench);
    let run = |bench: &mut Bench, line: &str| {
        bench.key(KeyCode::Char(':'));
        bench.type_text(line);
        bench.key(KeyCode::Enter);
        bench.idle();
    };
    // A name the recipe does not declare, and a value of the wrong type,
    // are refused with what it takes; nothing starts.
    run(&mut bench, "recipe new_order quantity=many colour=red");
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    let refused = bench.state().status.notice.clone().expect("refused");
    assert!(refused.error, "{refused:?}");
    for part in [
        "unknown parameter `colour`",
        "`quantity`",
        "customer",
        "integer",
    ] {
        assert!(refused.text.contains(part), "{part}: {}", refused.text);
    }
    assert_ne!(bench.state().status.run, RunStatus::Running);
    bench.key(KeyCode::Esc);
    // Given values are read as the declared types; a quoted value keeps
    // its spaces; the rest take their defaults.
    run(
        &mut bench,
        r#"recipe new_order customer="Mary Jackson" quantity=3"#,
    );
    match bench.effects.as_slice() {
        [Effect::RunRecipe { name, params, .. }] => {
            assert_eq!(name, "new_order");
            assert_eq!(params.get("customer"), Some(&json!("Mary Jackson")));
            assert_eq!(params.get("quantity"), Some(&json!(3)));
            assert_eq!(params.get("product"), Some(&json!("Mechanical keyboard")));
        }
        other => panic!("expected the recipe to start, got {other:?}"),
    }
    assert_eq!(bench.state().status.run, RunStatus::Running);
}

#[test]
fn a_session_exports_as_a_recipe_that_compiles() {
    use webagent::tui::services::{export_session, SessionRecord};
    let dir = scratch_dir("export");
    // Nothing done yet: a clear refusal, no file.
    let empty = export_session(&[], &dir);
    assert!(
        empty
            .as_ref()
            .is_err_and(|why| why.to_string().contains("nothing to replay")),
        "{empty:?}"
    );
    let catalog = Catalog::builtin();
    let mut record = SessionRecord::default();
    let navigate = catalog
        .parse_command("navigate http://127.0.0.1:8080/login")
        .expect("navigate parses");
    record.record_manual(&navigate, &ActionResult::ok(), 40);
    let fill = catalog
        .parse_command("input_text 0 \"admin@acme.test\"")
        .expect("input_text parses");
    let located = ActionResult::ok_with(json!({"locator": {
        "id": "email", "tag": "input", "url": "http://127.0.0.1:8080/login"
    }}));
    record.record_manual(&fill, &located, 12);
    // A later run's steps follow on instead of restarting at 1.
    let base = record.base();
    let mut step = step_record();
    step.index = 1;
    step.result = ActionResult::Failure {
        reason: webagent::actions::FailureReason::NotFound,
        message: "gone".into(),
    };
    record.record(base, &Event::Step(step));
    let numbers: Vec<usize> = record
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::Step(s) => Some(s.index),
            _ => None,
        })
        .collect();
    assert_eq!(numbers, [1, 2, 3]);

    let path = export_session(record.events(), &dir).expect("exported");
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    assert!(
        name.starts_with("session-") && name.ends_with(".rhai"),
        "{name}"
    );
    let source = std::fs::read_to_string(&path).expect("the file was written");
    // Portable: the path on whatever origin the recipe runs against.
    assert!(source.contains("navigate(\"/login\")"), "{source}");
    assert!(source.contains("admin@acme.test"), "{source}");
    assert!(
        source.contains("\"id:email\""),
        "by id, not index:\n{source}"
    );
    assert!(source.contains("step 3"), "{source}");
    // The file is a recipe the script engine accepts.
    let scripts = webagent::script::Scripts::default();
    let summary = scripts.load_file(&path).expect("the export compiles");
    assert_eq!(summary.recipes, ["replay"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Waits (bounded, not timed) for the services' event `pick` accepts,
/// keeping every other event seen on the way in `seen`.
fn wait_for_event<T>(
    rx: &std::sync::mpsc::Receiver<AppEvent>,
    seen: &mut Vec<String>,
    mut pick: impl FnMut(AppEvent) -> Option<T>,
) -> T {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(event) => {
                seen.push(format!("{event:?}").chars().take(200).collect());
                if let Some(found) = pick(event) {
                    return found;
                }
            }
            Err(error) => panic!("no such event ({error}); seen:\n{}", seen.join("\n")),
        }
    }
}

#[test]
fn the_real_services_cancel_a_looping_script_and_report_refused_navigations() {
    use webagent::serve::PageServer;
    use webagent::tui::services::{Services, WorkbenchOptions};
    use webagent::tui::EffectHandler;

    let runtime = tokio::runtime::Runtime::new().expect("a runtime for the page server");
    let server = runtime
        .block_on(PageServer::start())
        .expect("the page server starts");
    // The page sends itself off-site while the workbench is still opening
    // it: the allowed-domains guard refuses, and the refusal is reported
    // although no driver existed yet when it happened.
    server.html(
        "/",
        "<html><body><button id=stay>Stay</button><script>\
         location.href = 'http://blocked.invalid/away';\
         </script></body></html>",
    );
    let dir = scratch_dir("services");
    server.html(
        "/calm",
        "<html><body><button id=stay>Stay</button></body></html>",
    );
    let script = r##"
action("spin", #{ description: "Spins until cancelled", params: #{}, risk: "read" });
fn spin(p) { let n = 0; loop { n += 1; } }
recipe("tap", "Clicks Stay on a calm page");
fn tap() { navigate("CALM"); click("#stay"); "tapped" }
"##
    .replace("CALM", &server.url("/calm"));
    std::fs::write(dir.join("spin.rhai"), script).expect("writing the script");
    let mut config = webagent::config::Config::builtin();
    config.paths.sessions = dir.join("sessions");
    config.paths.sitemaps = Vec::new();
    config.allowed_domains = vec!["127.0.0.1".into()];
    // No API key in this environment: the model is not configured.
    let prepared = webagent::session::Prepared::new(
        config,
        &Default::default(),
        std::slice::from_ref(&dir),
        &[],
    )
    .expect("the session prepares");
    let options = WorkbenchOptions::new(server.url("/"), prepared);
    let (tx, rx) = channel();
    let mut services = Services::start(&options, tx).expect("the services start");
    let mut seen = Vec::new();

    // The custom action reaches the loop's catalog.
    let catalog = wait_for_event(&rx, &mut seen, |event| match event {
        AppEvent::ScriptsLoaded { catalog, .. } if catalog.get("spin").is_some() => {
            Some(catalog.clone())
        }
        _ => None,
    });
    wait_for_event(&rx, &mut seen, |event| {
        matches!(event, AppEvent::BrowserReady { .. }).then_some(())
    });
    let spin = catalog.parse_command("spin").expect("`spin` parses");
    services.handle(Effect::RunAction {
        id: 7,
        action: spin,
    });
    // Give the script time to be inside its loop (this is not measured).
    std::thread::sleep(std::time::Duration::from_millis(300));
    services.handle(Effect::CancelScript);
    let mut blocked = false;
    let result = wait_for_event(&rx, &mut seen, |event| match event {
        AppEvent::ActionFinished { id: 7, result, .. } => Some(result.clone()),
        AppEvent::Agent(e) => {
            if let Event::Error { error, .. } = e.as_ref() {
                blocked |= error.contains("blocked a navigation to http://blocked.invalid/away");
            }
            None
        }
        _ => None,
    });
    match &result {
        ActionResult::Failure { message, .. } => {
            assert!(message.contains("cancelled"), "{message}")
        }
        other => panic!("the loop was not cancelled: {other:?}"),
    }
    // The refusal reaches the UI (reported at the latest by the next
    // observation, which follows every hand-run action).
    if !blocked {
        wait_for_event(&rx, &mut seen, |event| match event {
            AppEvent::Agent(e) => match e.as_ref() {
                Event::Error { error, .. } if error.contains("blocked.invalid") => Some(()),
                _ => None,
            },
            _ => None,
        });
    }
    // A recipe's step waits at the approval gate, then runs and is logged.
    services.handle(Effect::RunRecipe {
        name: "tap".into(),
        params: Default::default(),
        approval: ApprovalMode::Always,
    });
    let mut asked = Vec::new();
    let mut logged = Vec::new();
    let done = wait_for_event(&rx, &mut seen, |event| match event {
        AppEvent::ApprovalRequested { request, reply } => {
            asked.push(request.action.name().to_string());
            services.handle(Effect::Decide {
                reply,
                decision: ApprovalDecision::Approve { note: None },
            });
            None
        }
        AppEvent::Agent(e) => match *e {
            Event::Step(step) => {
                logged.push((step.index, step.action.clone(), step.result.is_ok()));
                None
            }
            Event::Done { success, text, .. } => Some((success, text)),
            _ => None,
        },
        _ => None,
    });
    assert_eq!(
        done,
        (true, "tapped".to_string()),
        "seen:\n{}",
        seen.join("\n")
    );
    assert_eq!(asked, ["navigate", "click"], "every step was asked about");
    let numbers: Vec<usize> = logged.iter().map(|l| l.0).collect();
    // The panes number the recipe's own steps (the export record follows
    // on from the hand-run action).
    assert_eq!(numbers, [1, 2], "{logged:?}");
    assert!(logged.iter().all(|l| l.2), "{logged:?}");
    wait_for_event(&rx, &mut seen, |event| {
        matches!(event, AppEvent::RunEnded { error: None }).then_some(())
    });
    // The session (hand-run action and recipe) exports; the cancelled
    // action is not a step to replay, the click is.
    services.handle(Effect::ExportSession);
    let exported = wait_for_event(&rx, &mut seen, |event| match event {
        AppEvent::Exported(result) => Some(result),
        _ => None,
    });
    let path = exported.expect("the session exports");
    assert!(
        path.starts_with(&dir),
        "written to the recipes directory: {path:?}"
    );
    let source = std::fs::read_to_string(&path).expect("the export is readable");
    assert!(source.contains("#stay"), "{source}");
    services.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_recipes_sub_goal_gets_its_own_rows_and_the_recipe_goes_on() {
    let mut bench = Bench::on_orders(160, 48);
    with_acme_scripts(&mut bench);
    bench.key(KeyCode::Char(':'));
    bench.type_text("recipe orders_overview");
    bench.key(KeyCode::Enter);
    let call = |name: &str, parameters: serde_json::Value| {
        AppEvent::agent(Event::ToolCall {
            name: name.into(),
            parameters,
        })
    };
    let done = |success: bool, text: &str| {
        AppEvent::agent(Event::Done {
            success,
            text: text.into(),
            reason: webagent::events::EndReason::Done,
            steps: 1,
            usage: TokenUsage::default(),
        })
    };
    bench.send(AppEvent::agent(Event::RunStarted {
        task: "recipe orders_overview".into(),
        url: "http://127.0.0.1:8080/".into(),
        model: "none (recipe)".into(),
        max_steps: 0,
    }));
    bench.send(call("navigate", json!({"url": "/orders"})));
    // agent("…") hands a sub-goal to the model.
    bench.send(AppEvent::agent(Event::RunStarted {
        task: "count the shipped orders".into(),
        url: "http://127.0.0.1:8080/orders".into(),
        model: "gpt-4o-mini".into(),
        max_steps: 5,
    }));
    bench.send(AppEvent::agent(Event::Observation(ObservationSummary {
        step: 1,
        url: "http://127.0.0.1:8080/orders".into(),
        title: "Orders".into(),
        elements: 6,
        new_elements: 0,
        listing_chars: 10,
    })));
    bench.send(call("extract", json!({"query": "shipped"})));
    bench.send(done(true, "4 shipped"));
    bench.idle();
    assert_eq!(bench.state().status.run, RunStatus::Running);
    let notice = bench
        .state()
        .status
        .notice
        .clone()
        .expect("sub-goal result");
    assert!(notice.text.contains("4 shipped"), "{notice:?}");
    // The recipe's next step follows its own count.
    bench.send(call("click", json!({"selector": "#next"})));
    bench.send(done(true, "recipe finished"));
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
            (Some(1), "navigate".to_string()),
            (Some(1), "extract".to_string()),
            (Some(2), "click".to_string()),
        ]
    );
    assert_eq!(
        bench.state().status.run,
        RunStatus::Finished { success: true }
    );
    assert_eq!(bench.state().status.model, "gpt-4o-mini");
}

/// The MCP client on the process's stdio, the workbench on its terminal:
/// a client's risky call waits in the approval modal, and the person's
/// edit is what runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_clients_risky_call_is_approved_and_edited_in_the_workbench() {
    use rmcp::model::CallToolRequestParams;
    use rmcp::ServiceExt;
    use webagent::serve::PageServer;

    require_tmux_and_chromium();
    let pages = PageServer::start().await.expect("serve pages");
    pages.html(
        "/desk",
        "<!doctype html><html><head><title>Desk</title></head><body>\
         <form action=/sent-a><button type=submit>Send A</button></form>\
         <form action=/sent-b><button type=submit>Send B</button></form></body></html>",
    );
    pages.html(
        "/sent-a",
        "<html><head><title>Sent A</title></head><body>A went</body></html>",
    );
    pages.html(
        "/sent-b",
        "<html><head><title>Sent B</title></head><body>B went</body></html>",
    );
    let dir = scratch_dir("mcp-workbench");
    let (to_server, from_server) = (dir.join("in"), dir.join("out"));
    for fifo in [&to_server, &from_server] {
        let made = std::process::Command::new("mkfifo")
            .arg(fifo)
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
    }
    let session = TmuxSession(format!("webagent-mcp-wb-{}", std::process::id()));
    let command = format!(
        "cd {dir} && {bin} --log-file log mcp --workbench --sessions-dir sessions --url {url} \
         < {input} > {output} 2> err",
        dir = dir.display(),
        bin = env!("CARGO_BIN_EXE_webagent"),
        url = pages.url("/desk"),
        input = to_server.display(),
        output = from_server.display(),
    );
    tmux_start(&session.0, &command);
    // Opening a FIFO waits for its other end: the shell opens both as it
    // starts the server.
    let (writer, reader) = tokio::task::spawn_blocking(move || {
        let writer = std::fs::OpenOptions::new().write(true).open(&to_server);
        let reader = std::fs::File::open(&from_server);
        (writer, reader)
    })
    .await
    .expect("joined");
    let writer = tokio::fs::File::from_std(writer.expect("the server's stdin"));
    let reader = tokio::fs::File::from_std(reader.expect("the server's stdout"));
    // The client names itself in `initialize`; the workbench says so.
    let named = rmcp::model::ClientConfig::new(
        rmcp::model::ClientCapabilities::default(),
        rmcp::model::Implementation::new("desk-agent", "1.0"),
    );
    let client = named
        .serve((reader, writer))
        .await
        .expect("the MCP handshake");
    wait_for_screen(&session.0, "Send B</button>").await;

    let call = |name: &str, arguments: serde_json::Value| {
        let serde_json::Value::Object(arguments) = arguments else {
            panic!("arguments are an object");
        };
        CallToolRequestParams::new(name.to_string()).with_arguments(arguments)
    };
    let observed = client
        .call_tool(call("observe", json!({})))
        .await
        .expect("observe");
    let page = observed.structured_content.expect("a body")["page"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let (a, b) = (
        listing::index_of(&page, "Send A"),
        listing::index_of(&page, "Send B"),
    );
    // The client asks to send A: a commit, so the person is asked.
    let pending = tokio::spawn(async move {
        let result = client
            .call_tool(call("click", json!({"index": a})))
            .await
            .expect("click answers");
        (client, result)
    });
    let screen = wait_for_screen(&session.0, "Approve step").await;
    assert!(screen.contains("Send A"), "the target is shown:\n{screen}");
    assert!(
        screen.contains("Approve step 1?"),
        "calls are numbered like steps, from 1:\n{screen}"
    );
    assert!(
        screen.contains("MCP client desk-agent asks: click"),
        "the call is the client's, by its name:\n{screen}"
    );
    // The person retargets it to B in the editor.
    tmux_keys(&session.0, &["e"]);
    wait_for_screen(&session.0, "Edit the action (JSON)").await;
    tmux_keys(&session.0, &["Down", "Down", "End"]);
    for _ in 0..a.to_string().len() {
        tmux_keys(&session.0, &["BSpace"]);
    }
    tmux_text(&session.0, &b.to_string());
    tmux_keys(&session.0, &["C-s"]);
    let (client, result) = tokio::time::timeout(std::time::Duration::from_secs(60), pending)
        .await
        .expect("the call is answered")
        .expect("joined");
    let body = result.structured_content.expect("a body");
    assert_eq!(body["result"]["ok"], true, "{body}");
    let page = body["page"].as_str().unwrap_or_default();
    assert!(
        page.contains("/sent-b"),
        "the edit ran, not the request:\n{page}"
    );
    // The workbench followed the call: its status line is on the page B
    // led to, and the log numbers the call 1.
    let screen = wait_for_screen(&session.0, "/sent-b").await;
    assert!(
        screen.lines().any(|l| l.contains("  1 click")),
        "the first call is step 1:\n{screen}"
    );
    assert!(!screen.lines().any(|l| l.contains("  0 click")), "{screen}");
    client.cancel().await.expect("the client closes");
    tmux_keys(&session.0, &["q"]);
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------- the session as a conversation

/// A step record of `action` at `index`, its own time and the person's
/// wait apart.
fn list_step(index: usize, action: serde_json::Value, act_ms: u64, wait_ms: u64) -> StepRecord {
    StepRecord {
        index,
        action,
        timings: StepTimings {
            observe_ms: 5,
            llm_ms: 700,
            act_ms,
            wait_ms,
        },
        usage: None,
        ..step_record()
    }
}

fn feed_run_start(bench: &Bench, step: usize) {
    bench.send(AppEvent::agent(Event::RunStarted {
        task: "sign in".into(),
        url: "http://127.0.0.1:8080/login".into(),
        model: "gpt-4o-mini".into(),
        max_steps: 40,
    }));
    bench.send(AppEvent::agent(Event::Observation(ObservationSummary {
        step,
        url: "http://127.0.0.1:8080/login".into(),
        title: "Sign in".into(),
        elements: 3,
        new_elements: 0,
        listing_chars: 90,
    })));
}

fn feed_action(bench: &Bench, record: StepRecord) {
    let (name, parameters) = record
        .action
        .as_object()
        .and_then(|o| o.iter().next())
        .map(|(k, v)| (k.clone(), v.clone()))
        .expect("an action");
    bench.send(AppEvent::agent(Event::ToolCall {
        name: name.clone(),
        parameters,
    }));
    bench.send(AppEvent::agent(Event::ToolResult {
        name,
        result: record.result.clone(),
    }));
    bench.send(AppEvent::agent(Event::Step(record)));
}

#[test]
fn every_action_of_a_list_is_its_own_log_row_with_its_own_result_and_time() {
    let mut bench = Bench::on_orders(120, 30);
    feed_run_start(&bench, 1);
    feed_action(
        &bench,
        list_step(
            1,
            json!({"input_text": {"selector": "#user", "text": "ann"}}),
            31,
            0,
        ),
    );
    feed_action(
        &bench,
        list_step(
            1,
            json!({"input_text": {"selector": "#pass", "text": "pw"}}),
            27,
            0,
        ),
    );
    feed_action(
        &bench,
        list_step(1, json!({"click": {"selector": "#login"}}), 84, 4873),
    );
    bench.idle();
    type Row = (Option<usize>, String, Option<u64>, Option<u64>);
    let rows: Vec<Row> = bench
        .state()
        .log
        .iter()
        .map(|e| (e.step, e.action.clone(), e.ms, e.wait_ms))
        .collect();
    assert_eq!(
        rows,
        vec![
            (Some(1), "input_text".to_string(), Some(31), None),
            (Some(1), "input_text".to_string(), Some(27), None),
            (Some(1), "click".to_string(), Some(84), Some(4873)),
        ]
    );
    let screen = bench.screen();
    let click = screen
        .lines()
        .find(|l| l.contains("#login") && l.contains("  1 click"))
        .unwrap_or_else(|| panic!("no click row:\n{screen}"));
    assert!(click.contains("84ms +you 4.9s"), "the wait apart: {click}");
    assert!(screen.contains("#pass"), "{screen}");
}

#[test]
fn the_task_field_talks_to_a_running_agent_and_marks_the_message_once_read() {
    let mut bench = Bench::on_orders(120, 30);
    bench.key(KeyCode::Char('t'));
    bench.type_text("export the orders");
    bench.key(KeyCode::Enter);
    feed_run_start(&bench, 1);
    bench.idle();
    bench.effects.clear();
    bench.key(KeyCode::Char('t'));
    bench.type_text("the export button is in the ⋯ menu");
    bench.key(KeyCode::Enter);
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::Steer(text)] => assert_eq!(text, "the export button is in the ⋯ menu"),
        other => panic!("expected the message for the agent, got {other:?}"),
    }
    let screen = bench.screen();
    let row = screen
        .lines()
        .find(|l| l.contains("you say"))
        .unwrap_or_else(|| panic!("the message is in the log:\n{screen}"));
    assert!(row.contains("waiting"), "{row}");
    assert!(screen.contains("Message to the agent"), "{screen}");
    // The agent's next request carried it.
    bench.send(AppEvent::agent(Event::PersonMessage {
        step: 2,
        text: "the export button is in the ⋯ menu".into(),
    }));
    bench.idle();
    let message = bench
        .state()
        .log
        .iter()
        .find(|e| e.action == "you say")
        .expect("the row");
    assert_eq!((message.step, &message.outcome), (Some(2), &Outcome::Ok));
    assert_eq!(bench.state().log.len(), 1, "one row, not two");
    assert!(bench.screen().contains("sent"), "{}", bench.screen());
}

#[test]
fn r_asks_again_for_a_failed_step_and_for_another_proposal_at_the_approval() {
    let mut bench = Bench::on_orders(120, 30);
    bench.key(KeyCode::Char('t'));
    bench.type_text("pay");
    bench.key(KeyCode::Enter);
    feed_run_start(&bench, 2);
    feed_action(
        &bench,
        StepRecord {
            result: ActionResult::not_found("no element matches #pay-now"),
            ..list_step(2, json!({"click": {"selector": "#pay-now"}}), 5, 0)
        },
    );
    bench.idle();
    bench.effects.clear();
    bench.key(KeyCode::Char('r'));
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::RetryStep(2)]),
        "{:?}",
        bench.effects
    );
    // Asked again, step 2 ran: nothing failed to ask again for.
    feed_action(&bench, list_step(2, json!({"click": {"index": 3}}), 5, 0));
    bench.idle();
    bench.effects.clear();
    bench.key(KeyCode::Char('r'));
    bench.idle();
    assert!(bench.effects.is_empty(), "{:?}", bench.effects);
    let notice = bench.state().status.notice.clone().expect("why not");
    assert!(notice.text.contains("did not fail"), "{notice:?}");
    // At the approval, r answers the agent: ask the model again.
    let (reply, _answer) = oneshot::channel();
    bench.send(AppEvent::ApprovalRequested {
        request: Box::new(approval_request()),
        reply,
    });
    bench.key(KeyCode::Char('r'));
    bench.idle();
    match bench.effects.as_slice() {
        [Effect::Decide { decision, .. }] => assert_eq!(*decision, ApprovalDecision::Retry),
        other => panic!("expected the retry decision, got {other:?}"),
    }
    let rows: Vec<&str> = bench
        .state()
        .log
        .iter()
        .map(|e| e.action.as_str())
        .collect();
    assert_eq!(rows, ["click", "click"], "the failed attempt stays");
}

#[test]
fn a_finished_task_is_followed_up_until_n_starts_fresh() {
    let mut bench = Bench::on_orders(120, 30);
    bench.key(KeyCode::Char('t'));
    bench.type_text("ship order 1003");
    bench.key(KeyCode::Enter);
    feed_run_start(&bench, 1);
    bench.send(AppEvent::agent(Event::Done {
        success: true,
        text: "shipped".into(),
        reason: webagent::events::EndReason::Done,
        steps: 1,
        usage: TokenUsage::default(),
    }));
    bench.idle();
    assert!(
        bench.screen().contains("follows up on 1 earlier task"),
        "{}",
        bench.screen()
    );
    bench.effects.clear();
    bench.key(KeyCode::Char('N'));
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::NewConversation]),
        "{:?}",
        bench.effects
    );
    assert!(!bench.screen().contains("follows up"), "{}", bench.screen());
    // `:new` says the same through the command line.
    bench.effects.clear();
    bench.key(KeyCode::Char(':'));
    bench.type_text("new");
    bench.key(KeyCode::Enter);
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::NewConversation]),
        "{:?}",
        bench.effects
    );
}

#[test]
fn an_mcp_clients_calls_are_numbered_like_steps_from_one() {
    let mut bench = Bench::on_orders(120, 30);
    bench.app.state.mcp = true;
    for n in 1..=2 {
        feed_action(
            &bench,
            StepRecord {
                reflection: Reflection {
                    next_goal: "MCP client claude-code asks: click 3".into(),
                    ..Reflection::default()
                },
                ..list_step(n, json!({"click": {"index": 3}}), 9, 0)
            },
        );
    }
    bench.idle();
    let steps: Vec<Option<usize>> = bench.state().log.iter().map(|e| e.step).collect();
    assert_eq!(steps, [Some(1), Some(2)]);
    assert!(
        bench.screen().contains("MCP client claude-code"),
        "{}",
        bench.screen()
    );
}

#[test]
fn the_sessions_view_lists_searches_and_replays_a_trace_read_only() {
    use webagent::bench::tui::{synthetic_task, write_synthetic_traces};
    use webagent::tui::replay::ReplayData;
    let dir = scratch_dir("sessions-view");
    write_synthetic_traces(&dir, 30).expect("traces written");
    std::fs::write(
        dir.join("20990101T000000Z-1.jsonl"),
        "{\"type\":\"run_started\",\"task\":\"t\",\"url\":\"u\",\"model\":\"m\",\"max_steps\":1}\nnot json\n",
    )
    .expect("a broken trace");
    let mut bench = Bench::on_orders(120, 40);
    bench.key(KeyCode::Char('S'));
    bench.idle();
    let generation = match bench.effects.as_slice() {
        [Effect::ListSessions { generation }] => *generation,
        other => panic!("expected the listing asked for, got {other:?}"),
    };
    webagent::tui::services::read_sessions(
        &dir,
        generation,
        &std::sync::atomic::AtomicU64::new(generation),
        &bench.tx,
    );
    bench.idle();
    let screen = bench.screen();
    assert!(screen.contains("Past sessions 31"), "{screen}");
    let rows: Vec<&str> = screen.lines().filter(|l| l.contains("2026-")).collect();
    assert!(
        rows[0].contains(&synthetic_task(29, 30)),
        "newest first:\n{screen}"
    );
    assert!(
        screen.contains("does not read: line 2:"),
        "the broken one says why:\n{screen}"
    );
    bench.key(KeyCode::Char('/'));
    bench.type_text("blender");
    bench.idle();
    assert!(bench.screen().contains("· 1 match"), "{}", bench.screen());
    bench.key(KeyCode::Enter);
    bench.key(KeyCode::Enter);
    bench.idle();
    let path = match bench.effects.last() {
        Some(Effect::OpenTrace(path)) => path.clone(),
        other => panic!("expected the trace opened, got {other:?}"),
    };
    let events = webagent::events::read_trace(&path).expect("it reads");
    bench.send(AppEvent::TraceOpened(Ok(Box::new(
        ReplayData::from_events(&path, &events),
    ))));
    bench.idle();
    let screen = bench.screen();
    assert!(screen.contains("REPLAY"), "{screen}");
    assert!(screen.contains("goal of step 1 of trace 15"), "{screen}");
    assert!(
        screen.contains("Elements as recorded at step 1"),
        "{screen}"
    );
    bench.key(KeyCode::Char('j'));
    bench.idle();
    let screen = bench.screen();
    assert!(screen.contains("goal of step 2 of trace 15"), "{screen}");
    assert!(
        screen.contains("Elements as recorded at step 2"),
        "{screen}"
    );
    assert!(
        screen.contains("[3]<button>Ship order</button>"),
        "{screen}"
    );
    bench.effects.clear();
    bench.key(KeyCode::Char('E'));
    bench.idle();
    assert!(
        matches!(bench.effects.as_slice(), [Effect::ExportTrace(p)] if *p == path),
        "{:?}",
        bench.effects
    );
    // Esc goes back to the list, again to the live panes as they were.
    bench.key(KeyCode::Esc);
    bench.idle();
    assert!(
        bench.screen().contains("Past sessions 31"),
        "{}",
        bench.screen()
    );
    bench.key(KeyCode::Esc);
    bench.idle();
    let screen = bench.screen();
    assert!(!screen.contains("REPLAY"), "{screen}");
    assert!(
        screen.contains("Refund</button>"),
        "the live listing is back:\n{screen}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------ the conversation in a real terminal

/// A till: the Count button tells the test each time it is clicked (the
/// page fetches /count), the Pay button submits a form (a commit action).
fn till(pages: &webagent::serve::PageServer) -> std::sync::Arc<std::sync::atomic::AtomicUsize> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use webagent::serve::Response;
    let clicks = Arc::new(AtomicUsize::new(0));
    pages.html(
        "/till",
        "<!doctype html><html><head><title>Till</title></head><body>\
         <button id=count type=button onclick=\"fetch('/count')\">Count</button>\
         <form action=/paid><button id=pay type=submit>Pay</button></form></body></html>",
    );
    pages.html(
        "/paid",
        "<html><head><title>Paid</title></head><body>Paid.</body></html>",
    );
    let counted = Arc::clone(&clicks);
    pages.handle("/count", move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
        Response::text("counted")
    });
    clicks
}

/// One scripted answer of the model: its reflection and `action`.
fn model_step(goal: &str, action: serde_json::Value) -> llm_server::Reply {
    llm_server::agent_step("as planned", "on the till", goal, action)
}

fn model_done(text: &str) -> llm_server::Reply {
    model_step("report", json!({"done": {"text": text, "success": true}}))
}

/// The user message of a recorded request: the prompt the model read.
fn user_message(request: &llm_server::RecordedRequest) -> String {
    let body = request.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap_or_default();
    match &user["content"] {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Whether `needle` shows in `prompt` outside every page fence.
fn outside_the_fence(prompt: &str, needle: &str) -> bool {
    let Some(at) = prompt.find(needle) else {
        return false;
    };
    let mut from = 0;
    while let Some(open) = prompt[from..].find("<untrusted_page_content>") {
        let open = from + open;
        let close = prompt[open..]
            .find("</untrusted_page_content>")
            .map_or(prompt.len(), |c| open + c);
        if at > open && at < close {
            return false;
        }
        from = close.min(prompt.len() - 1) + 1;
        if from >= prompt.len() {
            break;
        }
    }
    true
}

/// Starts the workbench in tmux on `url` with the scripted model, its
/// traces in `dir/sessions`; the process id goes to `dir/pid` (the shell
/// execs the workbench, so it is the workbench's).
fn start_workbench(session: &str, dir: &Path, llm: &llm_server::LlmServer, args: &str) {
    let command = format!(
        "cd {dir} && echo $$ > pid && exec env OPENAI_BASE_URL={base} OPENAI_API_KEY=test \
         WEBAGENT_MODEL=scripted {bin} --log-file log {args}",
        dir = dir.display(),
        base = llm.base_url(),
        bin = env!("CARGO_BIN_EXE_webagent"),
    );
    tmux_start(session, &command);
}

/// The traces in `dir`, oldest first.
fn traces_in(dir: &Path) -> Vec<PathBuf> {
    let mut traces: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .collect()
        })
        .unwrap_or_default();
    traces.sort();
    traces
}

fn trace_kinds(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// A workbench on the till, the scripted model answering `replies`, with
/// `task` typed in and started.
struct TillRun {
    session: TmuxSession,
    llm: llm_server::LlmServer,
    clicks: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    dir: PathBuf,
    _pages: webagent::serve::PageServer,
}

async fn till_run(name: &str, replies: Vec<llm_server::Reply>, task: &str) -> TillRun {
    require_tmux_and_chromium();
    let pages = webagent::serve::PageServer::start()
        .await
        .expect("serve pages");
    let clicks = till(&pages);
    let llm = llm_server::LlmServer::start(replies).await;
    let dir = scratch_dir(name);
    let session = TmuxSession(format!("webagent-{name}-{}", std::process::id()));
    start_workbench(
        &session.0,
        &dir,
        &llm,
        &format!("tui --sessions-dir sessions --url {}", pages.url("/till")),
    );
    wait_for_screen(&session.0, "Count</button>").await;
    tmux_keys(&session.0, &["t"]);
    tmux_text(&session.0, task);
    tmux_keys(&session.0, &["Enter"]);
    TillRun {
        session,
        llm,
        clicks,
        dir,
        _pages: pages,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recipe_run_in_the_workbench_heals_a_changed_step_and_writes_the_repair_beside_it() {
    use std::sync::atomic::Ordering;
    require_tmux_and_chromium();
    let pages = webagent::serve::PageServer::start()
        .await
        .expect("serve pages");
    let clicks = till(&pages);
    // The recipe was recorded when the button was `#tally`; the till's is
    // `#count` now.
    let dir = scratch_dir("heal-in-workbench");
    std::fs::write(
        dir.join("till.rhai"),
        "recipe(\"tally\", \"Counts one visitor\");\n\
         fn tally() {\n    step(1, \"count one visitor\", \"/till\");\n    click([\"id:tally\", \"role:button:Tally\", \"text:Tally\"]);\n    \"counted\"\n}\n",
    )
    .expect("the recipe is written");
    let llm = llm_server::LlmServer::start(vec![
        model_step(
            "count one visitor",
            json!({"click": {"selector": "#count"}}),
        ),
        model_done("counted one visitor"),
    ])
    .await;
    let session = TmuxSession(format!("webagent-heal-{}", std::process::id()));
    start_workbench(
        &session.0,
        &dir,
        &llm,
        &format!(
            "tui --sessions-dir sessions --approve never --recipes till.rhai --url {}",
            pages.url("/till")
        ),
    );
    wait_for_screen(&session.0, "Count</button>").await;
    tmux_keys(&session.0, &[":"]);
    tmux_text(&session.0, "recipe tally");
    tmux_keys(&session.0, &["Enter"]);
    let screen = wait_for_screen(&session.0, "done: counted").await;
    // The log has the heal's own row: what changed and what it cost.
    let row = screen
        .lines()
        .find(|l| l.contains("healed"))
        .unwrap_or_else(|| panic!("a healed row:\n{screen}"));
    assert!(row.contains("id:tally → "), "{row}");
    assert_eq!(llm.requests().len(), 2, "the heal took two model calls");
    assert_eq!(
        clicks.load(Ordering::SeqCst),
        1,
        "counted once, by the heal"
    );
    let repaired = dir.join("till.healed.rhai");
    let text = std::fs::read_to_string(&repaired)
        .unwrap_or_else(|e| panic!("{}: {e}\n{screen}", repaired.display()));
    assert!(text.contains("\"id:count\""), "the new locator: {text}");
    assert!(text.contains("healed step 1"), "{text}");
    // The original is left as it was.
    let original = std::fs::read_to_string(dir.join("till.rhai")).expect("the original");
    assert!(original.contains("\"id:tally\""), "{original}");
    tmux_keys(&session.0, &["q"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follow_up_task_tells_the_model_the_earlier_task_and_how_it_ended() {
    let TillRun {
        session,
        llm,
        clicks: _clicks,
        dir,
        _pages,
    } = till_run(
        "follow-up",
        vec![
            model_step("count once", json!({"click": {"selector": "#count"}})),
            model_done("counted once: the total is 1"),
            model_done("it was the Count button"),
        ],
        "Click the Count button once",
    )
    .await;
    let screen = wait_for_screen(&session.0, "done: counted once").await;
    assert!(screen.contains("follows up on 1 earlier task"), "{screen}");
    tmux_keys(&session.0, &["t"]);
    tmux_text(&session.0, "Which button did you click?");
    tmux_keys(&session.0, &["Enter"]);
    wait_for_screen(&session.0, "done: it was the Count button").await;
    let requests = llm.requests();
    assert_eq!(requests.len(), 3);
    let first = user_message(&requests[0]);
    assert!(!first.contains("<earlier_tasks>"), "{first}");
    let follow_up = user_message(&requests[2]);
    assert!(follow_up.contains("<earlier_tasks>"), "{follow_up}");
    assert!(
        follow_up.contains("Click the Count button once"),
        "the earlier task:\n{follow_up}"
    );
    assert!(
        follow_up.contains("counted once: the total is 1"),
        "how it ended:\n{follow_up}"
    );
    assert!(follow_up.contains("<task>\nWhich button did you click?\n</task>"));
    // Both runs went into the one trace.
    let traces = traces_in(&dir.join("sessions"));
    assert_eq!(traces.len(), 1, "{traces:?}");
    let starts = trace_kinds(&traces[0])
        .iter()
        .filter(|e| e["type"] == "run_started")
        .count();
    assert_eq!(starts, 2);
    tmux_keys(&session.0, &["q"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_while_the_model_answers_goes_with_the_next_request() {
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    let TillRun {
        session,
        llm,
        clicks: _clicks,
        dir,
        _pages,
    } = till_run(
        "steer",
        vec![
            llm_server::Reply::held(
                &gate,
                model_step("count", json!({"click": {"selector": "#count"}})),
            ),
            model_done("counted"),
        ],
        "Count the visitors",
    )
    .await;
    // The model is answering the first step (the reply is held).
    tokio::time::timeout(std::time::Duration::from_secs(60), llm.wait_for_requests(1))
        .await
        .expect("the first request");
    tmux_keys(&session.0, &["t"]);
    tmux_text(&session.0, "count only the adults");
    tmux_keys(&session.0, &["Enter"]);
    let screen = wait_for_screen(&session.0, "waiting").await;
    assert!(screen.contains("you say"), "{screen}");
    gate.notify_one();
    let screen = wait_for_screen(&session.0, "done: counted").await;
    let row = screen
        .lines()
        .find(|l| l.contains("you say"))
        .unwrap_or_else(|| panic!("the message row:\n{screen}"));
    assert!(row.contains("sent"), "{row}");
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    assert!(!user_message(&requests[0]).contains("count only the adults"));
    let next = user_message(&requests[1]);
    assert!(
        next.contains("- before step 2: count only the adults"),
        "{next}"
    );
    assert!(
        outside_the_fence(&next, "count only the adults"),
        "the person's words are not page content:\n{next}"
    );
    let trace = traces_in(&dir.join("sessions")).remove(0);
    let said: Vec<serde_json::Value> = trace_kinds(&trace)
        .into_iter()
        .filter(|e| e["type"] == "person_message")
        .collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(said[0]["text"], "count only the adults");
    tmux_keys(&session.0, &["q"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_is_asked_again_at_the_approval_and_after_it_failed() {
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    let TillRun {
        session,
        llm,
        clicks,
        dir,
        _pages,
    } = till_run(
        "retry",
        vec![
            // Step 1: paying needs approval; the person asks for another idea.
            model_step("pay", json!({"click": {"selector": "#pay"}})),
            model_step("count instead", json!({"click": {"selector": "#count"}})),
            // Step 2 fails; step 3's answer is held while the person asks
            // for step 2 again.
            model_step(
                "press a button that is not there",
                json!({"click": {"selector": "#gone"}}),
            ),
            llm_server::Reply::held(&gate, model_done("never used")),
            model_done("counted once"),
        ],
        "Settle the till",
    )
    .await;
    let screen = wait_for_screen(&session.0, "Approve step 1?").await;
    assert!(
        screen.contains("target  [1]<button type=\"submit\">Pay</button>"),
        "a selector's target shows what it matched:\n{screen}"
    );
    tmux_keys(&session.0, &["r"]);
    tokio::time::timeout(std::time::Duration::from_secs(60), llm.wait_for_requests(4))
        .await
        .expect("the run reaches step 3");
    // Step 2 failed and step 3's answer is awaited: ask for step 2 again.
    wait_for_screen(&session.0, "not_found").await;
    tmux_keys(&session.0, &["r"]);
    wait_for_screen(&session.0, "done: counted once").await;
    let requests = llm.requests();
    assert_eq!(requests.len(), 5);
    let again_1 = user_message(&requests[1]);
    assert!(again_1.contains("Step 1 of"), "{again_1}");
    assert!(
        again_1.contains("the person asked you for another answer"),
        "{again_1}"
    );
    let again_2 = user_message(&requests[4]);
    assert!(again_2.contains("Step 2 of"), "{again_2}");
    assert!(
        again_2.contains("the person asked for this step again"),
        "{again_2}"
    );
    assert_eq!(clicks.load(std::sync::atomic::Ordering::SeqCst), 1);
    // The failed attempts stay, in the log and the trace.
    let screen = settled_screen(&session.0).await;
    assert!(screen.contains("denied"), "{screen}");
    assert!(screen.contains("not_found"), "{screen}");
    let trace = traces_in(&dir.join("sessions")).remove(0);
    let events = trace_kinds(&trace);
    let retried: Vec<u64> = events
        .iter()
        .filter(|e| e["type"] == "step_retried")
        .filter_map(|e| e["step"].as_u64())
        .collect();
    assert_eq!(retried, [1, 2]);
    let steps = events.iter().filter(|e| e["type"] == "step").count();
    assert_eq!(
        steps, 4,
        "both failed attempts are recorded, and the answers after"
    );
    tmux_keys(&session.0, &["q"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_mid_step_resumes_without_repeating_an_action() {
    let TillRun {
        session,
        llm,
        clicks,
        dir,
        _pages,
    } = till_run(
        "resume",
        vec![
            model_step("count once", json!({"click": {"selector": "#count"}})),
            // A list: the count runs, the payment waits for approval, and the
            // workbench is killed there.
            model_step(
                "count again, then pay",
                json!([{"click": {"selector": "#count"}}, {"click": {"selector": "#pay"}}]),
            ),
            model_done("counted twice, not paid"),
        ],
        "Count twice and pay",
    )
    .await;
    wait_for_screen(&session.0, "Approve step 2?").await;
    let count_before = clicks.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(count_before, 2);
    let pid = std::fs::read_to_string(dir.join("pid")).expect("the pid");
    let killed = std::process::Command::new("kill")
        .args(["-KILL", pid.trim()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    drop(session);
    let old = traces_in(&dir.join("sessions"));
    assert_eq!(old.len(), 1);
    assert!(
        !trace_kinds(&old[0]).iter().any(|e| e["type"] == "done"),
        "the killed run never ended"
    );

    let session = TmuxSession(format!("webagent-resumed-{}", std::process::id()));
    start_workbench(
        &session.0,
        &dir,
        &llm,
        &format!("resume --sessions-dir sessions {}", old[0].display()),
    );
    let screen = wait_for_screen(&session.0, "done: counted twice, not paid").await;
    assert!(screen.contains("resumed"), "{screen}");
    assert_eq!(
        clicks.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "nothing that ran before the kill ran again"
    );
    let requests = llm.requests();
    assert_eq!(requests.len(), 3);
    let resumed = user_message(&requests[2]);
    assert!(
        resumed.contains("<task>\nCount twice and pay\n</task>"),
        "{resumed}"
    );
    assert!(
        resumed.contains("Step 2 of"),
        "the step that did not finish:\n{resumed}"
    );
    assert!(resumed.contains("Step 1:"), "{resumed}");
    assert!(
        resumed.contains("not run: the run was interrupted"),
        "{resumed}"
    );
    assert!(resumed.contains("/till"), "{resumed}");
    let traces = traces_in(&dir.join("sessions"));
    assert_eq!(traces.len(), 2);
    let new = traces.iter().find(|t| **t != old[0]).expect("a new trace");
    let record = trace_kinds(new)
        .into_iter()
        .find(|e| e["type"] == "resumed")
        .expect("the new trace says what it continues");
    assert_eq!(record["from"], old[0].display().to_string());
    assert_eq!(record["step"], 2);
    tmux_keys(&session.0, &["q"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sessions_view_over_a_thousand_traces_searches_replays_and_exports() {
    use webagent::bench::tui::write_synthetic_traces;
    require_tmux_and_chromium();
    let dir = scratch_dir("sessions-1000");
    let sessions = dir.join("sessions");
    write_synthetic_traces(&sessions, 1000).expect("traces written");
    std::fs::create_dir_all(dir.join("recipes")).expect("a recipes directory");
    let session = TmuxSession(format!("webagent-sessions-{}", std::process::id()));
    let command = format!(
        "cd {dir} && {bin} --log-file log tui --sessions-dir sessions --recipes recipes",
        dir = dir.display(),
        bin = env!("CARGO_BIN_EXE_webagent"),
    );
    tmux_start(&session.0, &command);
    wait_for_screen(&session.0, "READY").await;
    tmux_keys(&session.0, &["S"]);
    let screen = settled_screen_where(&session.0, |s| {
        s.contains("Past sessions 1000") && !s.contains("reading")
    })
    .await
    .unwrap_or_else(|s| panic!("the list never filled:\n{s}"));
    let first = screen
        .lines()
        .find(|l| l.contains("2026-"))
        .unwrap_or_else(|| panic!("no rows:\n{screen}"));
    assert!(first.contains("Ship order 1999"), "newest first: {first}");
    tmux_keys(&session.0, &["/"]);
    tmux_text(&session.0, "blender");
    tmux_keys(&session.0, &["Enter"]);
    let screen = wait_for_screen(&session.0, "· 1 match").await;
    assert!(
        screen.contains("Refund the damaged blender on order 1500"),
        "{screen}"
    );
    tmux_keys(&session.0, &["Enter"]);
    let screen = wait_for_screen(&session.0, "REPLAY").await;
    assert!(screen.contains("goal of step 1 of trace 500"), "{screen}");
    tmux_keys(&session.0, &["j"]);
    let screen = wait_for_screen(&session.0, "goal of step 2 of trace 500").await;
    assert!(
        screen.contains("Elements as recorded at step 2"),
        "{screen}"
    );
    tmux_keys(&session.0, &["E"]);
    // The export is a log row (the notice gives way to the reload of the
    // new file at once).
    let screen = wait_for_screen(&session.0, "export           recipes/session-").await;
    let recipes: Vec<PathBuf> = std::fs::read_dir(dir.join("recipes"))
        .expect("the recipes directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "rhai"))
        .collect();
    assert_eq!(recipes.len(), 1, "{screen}");
    let recipe = std::fs::read_to_string(&recipes[0]).expect("the recipe");
    assert!(
        recipe.contains("1500"),
        "the typed value is in it:\n{recipe}"
    );
    tmux_keys(&session.0, &["Escape"]);
    wait_for_screen(&session.0, "Past sessions 1000").await;
    tmux_keys(&session.0, &["Escape", "q"]);
    let _ = std::fs::remove_dir_all(&dir);
}
