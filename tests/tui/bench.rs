//! The workbench on a bench: the app fed events and keys and drawn on a
//! `TestBackend` until idle, the pages, sitemaps, steps and approvals it
//! is fed, and whole screens compared with the snapshot files under
//! tests/snapshots/tui/.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Sender};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::Terminal;
use serde_json::json;
use webagent::actions::{ActionResult, Catalog, Risk};
use webagent::dom::{
    ElementIndex, InteractiveElement, LeftOut, PageState, PageText, ScrollPosition,
};
use webagent::environment::ApprovalRequest;
use webagent::events::{
    Event, ObservationSummary, Reflection, StepRecord, StepTimings, TokenUsage,
};
use webagent::sitemap::{Sitemap, SitemapSet};
use webagent::tui::{App, AppEvent, AppState, Effect};

/// A small Acme sitemap with gated pages.
pub(crate) const SITEMAP: &str = r#"
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

/// A listed element as the observer reports one.
pub(crate) fn element(
    index: usize,
    tag: &str,
    text: &str,
    depth: usize,
    is_new: bool,
) -> InteractiveElement {
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

/// The orders page of Acme as observed.
pub(crate) fn orders_page() -> PageState {
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

/// [`SITEMAP`] as the loaded set.
pub(crate) fn sitemaps() -> SitemapSet {
    let mut set = SitemapSet::new();
    set.insert(Sitemap::from_yaml_str(SITEMAP).expect("test sitemap is valid"));
    set
}

/// The app, its event channel and a `TestBackend` terminal, driven until
/// idle.
pub(crate) struct Bench {
    pub(crate) app: App,
    pub(crate) tx: Sender<AppEvent>,
    pub(crate) terminal: Terminal<TestBackend>,
    pub(crate) effects: Vec<Effect>,
}

impl Bench {
    pub(crate) fn new(columns: u16, rows: u16) -> Bench {
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
    pub(crate) fn on_orders(columns: u16, rows: u16) -> Bench {
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

    pub(crate) fn send(&self, event: AppEvent) {
        self.tx.send(event).expect("the app holds the receiver");
    }

    pub(crate) fn key(&self, code: KeyCode) {
        self.send(AppEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    }

    pub(crate) fn ctrl(&self, c: char) {
        self.send(AppEvent::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::CONTROL,
        )));
    }

    pub(crate) fn type_text(&self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    pub(crate) fn idle(&mut self) -> bool {
        self.app
            .run_until_idle(&mut self.terminal, &mut self.effects)
            .expect("drawing to the test backend")
    }

    pub(crate) fn buffer(&self) -> &Buffer {
        self.terminal.backend().buffer()
    }

    pub(crate) fn screen(&self) -> String {
        screen_text(self.buffer())
    }

    pub(crate) fn state(&self) -> &AppState {
        &self.app.state
    }
}

/// The buffer as text, one line a row.
pub(crate) fn screen_text(buffer: &Buffer) -> String {
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

/// Where the snapshot `name` lives.
pub(crate) fn snapshot_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots/tui")
        .join(format!("{name}.txt"))
}

/// Compares the screen with its snapshot file.
pub(crate) fn assert_snapshot(name: &str, screen: &str) {
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

/// The terminal sizes every render is compared at.
pub(crate) fn sizes() -> [(u16, u16); 2] {
    [(80, 24), (160, 48)]
}

/// An approval the agent asks for.
pub(crate) fn approval_request() -> ApprovalRequest {
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
pub(crate) fn step_prompt() -> String {
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
pub(crate) const RAW_RESPONSE: &str = r#"{"id":"chatcmpl-7","choices":[{"finish_reason":"tool_calls","message":{"tool_calls":[{"function":{"name":"agent_step","arguments":"{\"evaluation_previous_goal\":\"The order page opened\",\"memory\":\"Order 1042 is paid, not shipped\",\"next_goal\":\"Ship the order\",\"action\":{\"click\":{\"index\":3}}}"}}]}}],"usage":{"prompt_tokens":2400,"completion_tokens":95,"total_tokens":2495}}"#;

/// A finished step as the agent reports it.
pub(crate) fn step_record() -> StepRecord {
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
        within: None,
        person: None,
    }
}

/// Feeds one whole agent step as the agent emits it.
pub(crate) fn feed_step(bench: &Bench) {
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

/// The scripts of the Acme demo, loaded as `webagent demo` loads them.
pub(crate) fn acme_scripts() -> webagent::script::Scripts {
    let scripts = webagent::script::Scripts::default();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes");
    for loaded in scripts.load_dir(&dir) {
        loaded.expect("the shipped recipes compile");
    }
    scripts
}

/// A workbench that has been told the Acme scripts are loaded.
pub(crate) fn with_acme_scripts(bench: &mut Bench) {
    let scripts = acme_scripts();
    bench.send(AppEvent::ScriptsLoaded {
        catalog: Box::new(
            scripts
                .catalog()
                .expect("the custom actions fit the catalog"),
        ),
        recipes: scripts.recipes(),
        files: scripts.file_count(),
    });
    bench.idle();
}
