//! `webagent bench tui`: frame draw time over a huge listing, and the
//! sessions view over a thousand traces (opening it, and a frame while it
//! is shown), each against a baseline measured in the same run.
//!
//! The measuring lives here, out of the workbench's loop: it drives the
//! loop's own [`App`] (`draw_now` is its hook) over a synthetic page.

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant, SystemTime};

use ratatui::backend::TestBackend;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::{Frame, Terminal};
use serde_json::json;

use crate::actions::ActionResult;
use crate::dom::{ElementIndex, InteractiveElement, LeftOut, PageState, PageText, ScrollPosition};
use crate::events::{
    EndReason, Event, ListingRecord, ObservationSummary, Reflection, RunSettings, StepRecord,
    StepTimings, TokenUsage,
};
use crate::tui::draw::draw;
use crate::tui::elements;
use crate::tui::layout::areas;
use crate::tui::widgets::{pane_block, row_style};
use crate::tui::{App, AppEvent, AppState, Effect, Pane};

use super::fmt_duration;

/// Flags of `webagent bench tui`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Elements in the synthetic listing.
    #[arg(long, default_value_t = 20_000, value_name = "N")]
    pub elements: usize,
    /// Elements in the small-listing baseline.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub small: usize,
    /// Frames drawn per case.
    #[arg(long, default_value_t = 300, value_name = "K")]
    pub frames: usize,
    /// Synthetic traces the sessions view is opened over.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub traces: usize,
    /// Times the sessions view is opened (the figures are over these).
    #[arg(long, default_value_t = 10, value_name = "K")]
    pub opens: usize,
}

fn ratio(ours: Duration, baseline: Duration) -> String {
    if ours.is_zero() {
        return "-".into();
    }
    format!("{:.2}×", baseline.as_secs_f64() / ours.as_secs_f64())
}

/// Runs `webagent bench tui`: frame draw time of the workbench over a large
/// listing, against the same frame drawn without windowing and against a
/// small listing, at 80×24 and 160×48.
pub fn bench(args: BenchArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(args.elements >= 1, "--elements must be at least 1");
    anyhow::ensure!(args.small >= 1, "--small must be at least 1");
    anyhow::ensure!(args.frames >= 1, "--frames must be at least 1");
    println!(
        "tui draw bench: {} frames per case, the cursor jumping through the listing{}",
        args.frames,
        if cfg!(debug_assertions) {
            " (debug build: use --release for real figures)"
        } else {
            ""
        }
    );
    println!();
    println!(
        "{:<8} {:<34} {:>10} {:>10} {:>10} {:>10}",
        "size", "case", "mean", "median", "p95", "max"
    );
    for (columns, rows) in [(80u16, 24u16), (160, 48)] {
        let size = format!("{columns}x{rows}");
        let windowed = bench_draw_with(
            ListingDraw::Windowed,
            args.elements,
            args.frames,
            columns,
            rows,
        );
        let small = bench_draw_with(
            ListingDraw::Windowed,
            args.small,
            args.frames,
            columns,
            rows,
        );
        let unwindowed = bench_draw_with(
            ListingDraw::Unwindowed,
            args.elements,
            args.frames,
            columns,
            rows,
        );
        let cases = [
            (format!("windowed, {} elements", args.elements), windowed),
            (format!("windowed, {} elements", args.small), small),
            (
                format!("unwindowed baseline, {} elements", args.elements),
                unwindowed,
            ),
        ];
        for (name, figures) in &cases {
            println!(
                "{size:<8} {name:<34} {:>10} {:>10} {:>10} {:>10}",
                fmt_duration(figures.mean),
                fmt_duration(figures.median),
                fmt_duration(figures.p95),
                fmt_duration(figures.max),
            );
        }
        println!(
            "{size:<8} the unwindowed baseline's median is {} the windowed one; {} elements take {} the time of {}",
            ratio(windowed.median, unwindowed.median),
            args.elements,
            ratio(small.median, windowed.median),
            args.small,
        );
        println!();
    }
    sessions_bench(&args)?;
    Ok(ExitCode::SUCCESS)
}

/// Frame draw times for a listing of `elements` elements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DrawFigures {
    /// Frames drawn.
    pub frames: usize,
    /// Mean time per frame.
    pub mean: Duration,
    /// The middle frame time.
    pub median: Duration,
    /// 95 % of frames took at most this long.
    pub p95: Duration,
    /// The slowest frame.
    pub max: Duration,
}

impl DrawFigures {
    /// The figures of these frame times.
    pub fn from_samples(mut samples: Vec<Duration>) -> Self {
        samples.sort_unstable();
        let frames = samples.len();
        let at = |fraction_percent: usize| {
            samples
                .get((frames * fraction_percent / 100).min(frames.saturating_sub(1)))
                .copied()
                .unwrap_or_default()
        };
        let total: Duration = samples.iter().sum();
        DrawFigures {
            frames,
            mean: total / u32::try_from(frames.max(1)).unwrap_or(u32::MAX),
            median: at(50),
            p95: at(95),
            max: samples.last().copied().unwrap_or_default(),
        }
    }
}

/// How a benchmark frame draws the element listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListingDraw {
    /// The workbench as it is: only the visible rows are formatted.
    Windowed,
    /// The baseline: the same frame, plus every row of the listing
    /// formatted and handed to ratatui to scroll, as a listing drawn
    /// without windowing would be.
    Unwindowed,
}

/// Measures drawing a `columns`×`rows` frame over a synthetic listing of
/// `elements` elements while the cursor moves down through it, one jump
/// per frame (`webagent bench tui`).
pub fn bench_draw(elements: usize, frames: usize, columns: u16, rows: u16) -> DrawFigures {
    bench_draw_with(ListingDraw::Windowed, elements, frames, columns, rows)
}

/// [`bench_draw`], drawing the listing the way `mode` says.
pub fn bench_draw_with(
    mode: ListingDraw,
    elements: usize,
    frames: usize,
    columns: u16,
    rows: u16,
) -> DrawFigures {
    let (_tx, rx) = std::sync::mpsc::channel();
    let mut state = AppState::new((columns, rows));
    state.page = Some(synthetic_page(elements));
    let mut app = App::new(state, rx);
    let mut terminal = match Terminal::new(TestBackend::new(columns, rows)) {
        Ok(t) => t,
        // ok: the test backend never fails to start.
        Err(_) => return DrawFigures::from_samples(Vec::new()),
    };
    let mut samples = Vec::with_capacity(frames);
    let step = (elements / frames.max(1)).max(1);
    for i in 0..frames {
        let target = (i * step).min(elements.saturating_sub(1));
        let rows_shown = app.state.visible_rows(Pane::Elements);
        app.state.elements.move_to(target, elements, rows_shown);
        let started = Instant::now();
        let drawn = match mode {
            ListingDraw::Windowed => app.draw_now(&mut terminal).is_ok(),
            ListingDraw::Unwindowed => {
                let state = &app.state;
                terminal
                    .draw(|frame| {
                        draw(frame, state);
                        draw_unwindowed_listing(frame, state);
                    })
                    .is_ok()
            }
        };
        samples.push(started.elapsed());
        if !drawn {
            break;
        }
    }
    DrawFigures::from_samples(samples)
}

/// The baseline listing: every row formatted, ratatui skipping to the
/// offset, over the windowed pane's area.
fn draw_unwindowed_listing(frame: &mut Frame, state: &AppState) {
    let Some(page) = &state.page else {
        return;
    };
    let area = areas(frame.area()).elements;
    let theme = &state.theme;
    let lines: Vec<Line> = page
        .elements
        .iter()
        .enumerate()
        .map(|(i, element)| {
            let base = theme.fg(if element.is_new {
                theme.palette.new_element
            } else {
                theme.palette.text
            });
            Line::from(Span::styled(
                elements::row_text(element),
                row_style(i == state.elements.cursor, theme, base),
            ))
        })
        .collect();
    let block = pane_block("Elements".into(), Pane::Elements, state);
    let offset = u16::try_from(state.elements.offset).unwrap_or(u16::MAX);
    frame.render_widget(Paragraph::new(lines).block(block).scroll((offset, 0)), area);
}

/// A page with `n` elements, every tenth one new, nested a few levels.
pub fn synthetic_page(n: usize) -> PageState {
    let elements = (0..n)
        .map(|i| InteractiveElement {
            index: ElementIndex(i + 1),
            tag: if i % 3 == 0 { "a" } else { "button" }.to_string(),
            attributes: if i % 3 == 0 {
                vec![("href".to_string(), format!("/orders/{}", 1000 + i))]
            } else {
                Vec::new()
            },
            text: format!("Item {} action", i + 1),
            is_new: i % 10 == 0,
            depth: i % 4,
            parent: None,
            in_shadow_root: false,
            frame: None,
            cross_origin_frame: false,
            node: None,
        })
        .collect();
    PageState {
        observation: 1,
        url: "http://127.0.0.1:8080/orders".into(),
        title: "Orders".into(),
        tabs: Vec::new(),
        scroll: ScrollPosition::default(),
        elements,
        left_out: LeftOut::default(),
        full_page: true,
        listing: String::new(),
        page_text: PageText::default(),
        extract_ms: 0.0,
    }
}

/// The task of synthetic trace `i`; one in the middle is easy to find.
pub fn synthetic_task(i: usize, n: usize) -> String {
    if i == n / 2 {
        format!("Refund the damaged blender on order {}", 1000 + i)
    } else {
        format!("Ship order {} and note the tracking number", 1000 + i)
    }
}

/// Writes `n` traces of three steps each into `dir`, one a minute from
/// 2026-01-01 (trace `n - 1` is the newest), as runs leave them: run
/// settings, observations, listings, steps with their reflections and
/// token counts, the end. `synthetic_task` names each one's task.
pub fn write_synthetic_traces(dir: &Path, n: usize) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600);
    let listing = "[top of page]\n[1]<a href=\"/orders\">Orders</a>\n\t[2]<input name=\"q\" placeholder=\"Search orders\" />\n\t*[3]<button>Ship order</button>\n[end of page]\n";
    for i in 0..n {
        let at = start + Duration::from_secs(60 * i as u64);
        let name = format!("{}-{}.jsonl", crate::clock::utc_stamp(at), 100_000 + i);
        let url = format!("http://127.0.0.1:8080/orders/{}", 1000 + i);
        let mut events = vec![
            Event::RunStarted {
                task: synthetic_task(i, n),
                url: url.clone(),
                model: if i % 2 == 0 {
                    "gpt-4o-mini"
                } else {
                    "qwen2.5-7b"
                }
                .into(),
                max_steps: 40,
            },
            Event::RunSettings(RunSettings {
                approval: "risky".into(),
                follow_up: true,
                ..RunSettings::default()
            }),
        ];
        let actions = [
            json!({"input_text": {"index": 2, "text": format!("{}", 1000 + i)}}),
            json!({"click": {"index": 3}}),
            json!({"done": {"text": format!("order {} shipped", 1000 + i), "success": true}}),
        ];
        for (s, action) in actions.into_iter().enumerate() {
            let step = s + 1;
            events.push(Event::Observation(ObservationSummary {
                step,
                url: url.clone(),
                title: format!("Order {}", 1000 + i),
                elements: 3,
                new_elements: 1,
                listing_chars: listing.len(),
            }));
            events.push(Event::Listing(ListingRecord {
                step,
                url: url.clone(),
                title: format!("Order {}", 1000 + i),
                listing: listing.to_string(),
            }));
            events.push(Event::Step(StepRecord {
                index: step,
                reflection: Reflection {
                    evaluation_previous_goal: format!("step {} went as planned", step.max(2) - 1),
                    memory: format!("working on order {}", 1000 + i),
                    next_goal: format!("goal of step {step} of trace {i}"),
                },
                action,
                result: ActionResult::ok(),
                repairs: Vec::new(),
                timings: StepTimings {
                    observe_ms: 40,
                    llm_ms: 900,
                    act_ms: 120,
                    wait_ms: 0,
                },
                usage: Some(TokenUsage {
                    prompt_tokens: 2000,
                    completion_tokens: 100,
                    total_tokens: 2100,
                    ..TokenUsage::default()
                }),
                prompt_chars: 6000,
                prompt: String::new(),
                raw_response: String::new(),
                within: None,
                person: None,
            }));
            events.push(Event::StepEnded { step });
        }
        events.push(Event::Done {
            success: i % 7 != 0,
            text: format!("order {} shipped", 1000 + i),
            reason: EndReason::Done,
            steps: 3,
            usage: TokenUsage {
                prompt_tokens: 6000,
                completion_tokens: 300,
                total_tokens: 6300,
                ..TokenUsage::default()
            },
        });
        let mut text = String::new();
        for event in &events {
            text.push_str(&event.to_json_line().map_err(std::io::Error::other)?);
            text.push('\n');
        }
        std::fs::write(dir.join(name), text)?;
    }
    Ok(())
}

/// One opening of the sessions view over `dir`, through the workbench's
/// own update and the service's own reading: from the key to the first
/// frame with every trace read. Returns (until the list shows, until
/// every row is read and drawn).
fn open_sessions_once(dir: &Path, columns: u16, rows: u16) -> (Duration, Duration, App) {
    let (tx, rx) = std::sync::mpsc::channel();
    let mut app = App::new(AppState::new((columns, rows)), rx);
    let mut terminal = match Terminal::new(TestBackend::new(columns, rows)) {
        Ok(terminal) => terminal,
        // ok: the test backend never fails to start.
        Err(_) => return (Duration::ZERO, Duration::ZERO, app),
    };
    let started = Instant::now();
    let mut effects: Vec<Effect> = Vec::new();
    app.apply(
        AppEvent::Key(crossterm::event::KeyEvent::from(
            crossterm::event::KeyCode::Char('S'),
        )),
        &mut effects,
    );
    let generation = effects.iter().find_map(|e| match e {
        Effect::ListSessions { generation } => Some(*generation),
        _ => None,
    });
    let Some(generation) = generation else {
        return (Duration::ZERO, Duration::ZERO, app);
    };
    // The service reads on a thread of its own, as in the workbench.
    let reader = {
        let (dir, tx) = (dir.to_path_buf(), tx.clone());
        std::thread::spawn(move || {
            let current = AtomicU64::new(generation);
            crate::tui::services::read_sessions(&dir, generation, &current, &tx);
        })
    };
    drop(tx);
    let mut listed = None;
    let all_read = |app: &App| {
        app.state
            .sessions
            .as_ref()
            .is_some_and(|v| !v.listing && v.read == v.rows.len())
    };
    let mut sink: Vec<Effect> = Vec::new();
    while !all_read(&app) {
        if app.run_until_idle(&mut terminal, &mut sink).is_err() {
            break;
        }
        if listed.is_none() && app.state.sessions.as_ref().is_some_and(|v| !v.listing) {
            listed = Some(started.elapsed());
        }
        if all_read(&app) {
            break;
        }
        match app.next_event(Duration::from_secs(10)) {
            Some(event) => app.apply(event, &mut sink),
            None => break,
        }
    }
    let _ = app.run_until_idle(&mut terminal, &mut sink);
    let done = started.elapsed();
    let _ = reader.join();
    (listed.unwrap_or(done), done, app)
}

/// Frame times while the sessions view of `app` is shown, its cursor
/// moving down one row a frame.
fn sessions_frames(app: &mut App, frames: usize, columns: u16, rows: u16) -> DrawFigures {
    let mut terminal = match Terminal::new(TestBackend::new(columns, rows)) {
        Ok(terminal) => terminal,
        // ok: the test backend never fails to start.
        Err(_) => return DrawFigures::from_samples(Vec::new()),
    };
    let mut samples = Vec::with_capacity(frames);
    let mut sink: Vec<Effect> = Vec::new();
    for _ in 0..frames {
        app.apply(
            AppEvent::Key(crossterm::event::KeyEvent::from(
                crossterm::event::KeyCode::Down,
            )),
            &mut sink,
        );
        let started = Instant::now();
        let drawn = app.draw_now(&mut terminal).is_ok();
        samples.push(started.elapsed());
        if !drawn {
            break;
        }
    }
    DrawFigures::from_samples(samples)
}

/// How many times `b` fits in `a`.
fn times(a: Duration, b: Duration) -> f64 {
    if b.is_zero() {
        return 0.0;
    }
    a.as_secs_f64() / b.as_secs_f64()
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort_unstable();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

/// The sessions view over `--traces` synthetic traces: opening it (to the
/// list, and to every row read and drawn) against reading the same files'
/// bytes alone, and a frame while it is shown against the ordinary
/// workbench frame.
fn sessions_bench(args: &BenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.traces >= 1, "--traces must be at least 1");
    anyhow::ensure!(args.opens >= 1, "--opens must be at least 1");
    let dir = std::env::temp_dir().join(format!("webagent-bench-sessions-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    write_synthetic_traces(&dir, args.traces)?;
    let size: u64 = std::fs::read_dir(&dir)?
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum();
    println!(
        "sessions view: {} synthetic traces of 3 steps ({} on disk, page cache warm), opened {} times at 120x40",
        args.traces,
        crate::tui::sessions::size_text(size),
        args.opens
    );
    let (columns, rows) = (120u16, 40u16);
    let mut listed = Vec::new();
    let mut opened = Vec::new();
    let mut baseline = Vec::new();
    let mut last = None;
    for _ in 0..args.opens {
        let started = Instant::now();
        let mut bytes = 0usize;
        for entry in std::fs::read_dir(&dir)?.flatten() {
            bytes += std::fs::read(entry.path()).map(|b| b.len()).unwrap_or(0);
        }
        baseline.push(started.elapsed());
        std::hint::black_box(bytes);
        let (to_list, to_all, app) = open_sessions_once(&dir, columns, rows);
        listed.push(to_list);
        opened.push(to_all);
        last = Some(app);
    }
    let (listed, opened, baseline) = (median(listed), median(opened), median(baseline));
    println!(
        "{:<58} {:>10}",
        "open: the key to the list of files on screen (median)",
        fmt_duration(listed)
    );
    println!(
        "{:<58} {:>10}",
        "open: the key to every trace read and drawn (median)",
        fmt_duration(opened)
    );
    println!(
        "{:<58} {:>10}",
        "baseline: reading the same files' bytes, nothing else",
        fmt_duration(baseline)
    );
    println!(
        "opening takes {:.1}× the bare read (goal: under 200 ms: {})",
        times(opened, baseline),
        if opened < Duration::from_millis(200) {
            "met"
        } else {
            "NOT met"
        }
    );
    let Some(mut app) = last else {
        return Ok(());
    };
    let shown = sessions_frames(&mut app, args.frames, columns, rows);
    let plain = bench_draw_with(
        ListingDraw::Windowed,
        args.small,
        args.frames,
        columns,
        rows,
    );
    println!(
        "{:<58} {:>10} {:>10} {:>10}",
        "frame with the sessions view shown (median, p95, max)",
        fmt_duration(shown.median),
        fmt_duration(shown.p95),
        fmt_duration(shown.max)
    );
    println!(
        "{:<58} {:>10} {:>10} {:>10}",
        format!("baseline: the workbench frame, {} elements", args.small),
        fmt_duration(plain.median),
        fmt_duration(plain.p95),
        fmt_duration(plain.max)
    );
    println!(
        "a frame over the sessions view takes {:.2}× the ordinary one's median (goal: p95 under 16 ms: {})",
        times(shown.median, plain.median),
        if shown.p95 < Duration::from_millis(16) {
            "met"
        } else {
            "NOT met"
        }
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
