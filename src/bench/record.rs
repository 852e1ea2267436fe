//! `webagent bench record`: what the recorder costs the page, and what a
//! recorded recipe costs to replay.
//!
//! 1. **Per input event.** A 500-field form logs, in its own listener at
//!    the end of each event's path, how long after the event was created
//!    it got there (`performance.now() − event.timeStamp`). Trusted input
//!    (CDP mouse clicks and typed text, as a person's reach the page) goes
//!    to the same fields with the recorder and without it, in alternating
//!    rounds on fresh documents; the recorder's listeners run before the
//!    page's last one, so the difference is what it adds to each event.
//! 2. **Replay.** A sign-up form is filled by trusted input and recorded
//!    into a recipe (locator lists, parameters), and the same steps are
//!    written by hand with CSS selectors. Both run on the same session,
//!    alternately, with no model; the figure is the recorded recipe's
//!    median over the hand-written one's.

use std::time::Instant;

use serde::Serialize;
use serde_json::json;
use tokio::sync::mpsc;

use super::{median, ms_since, percentile, round2};
use crate::actions::Catalog;
use crate::actions::KeyChord;
use crate::browser::record::{Input, PaneInput, Recorder};
use crate::browser::{LaunchOptions, Tab};
use crate::config::Config;
use crate::environment::{ApprovalMode, Environment};
use crate::script::Recording;
use crate::serve::PageServer;
use crate::session::{Bare, Prepared, RecipeChoice, ReplayOptions, Session};

/// Flags of `webagent bench record`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Rounds of each measurement (each way).
    #[arg(long, default_value_t = 10)]
    pub rounds: usize,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// The browser to use.
    #[command(flatten)]
    pub browser: crate::config::BrowserOpts,
}

/// The benchmark's figures.
#[derive(Debug, Serialize)]
pub struct RecordFigures {
    /// Input events timed each way.
    pub events: usize,
    /// Median time from an event's creation to the page's last listener
    /// without the recorder, ms.
    pub without_median_ms: f64,
    /// The same with the recorder, ms.
    pub with_median_ms: f64,
    /// What the recorder adds at the median, ms (goal ≤ 0.5).
    pub added_median_ms: f64,
    /// What it adds at the 95th percentile, ms.
    pub added_p95_ms: f64,
    /// Median replay of the hand-written recipe, ms.
    pub by_hand_ms: f64,
    /// Median replay of the recorded recipe, ms.
    pub recorded_ms: f64,
    /// Recorded over hand-written (goal ≤ 1.1).
    pub replay_ratio: f64,
}

/// The kinds of event the page times; the recorder listens to each (the
/// pointer's moves too: a hover that shows a menu and the element an
/// assertion is picked on are read from them).
const TIMED: [&str; 7] = [
    "click",
    "input",
    "change",
    "focusout",
    "keydown",
    "mouseover",
    "mousemove",
];

/// A form of 500 fields that times every trusted event's trip to its last
/// listener.
fn timed_page() -> String {
    let (_, form) = super::observe::bench_pages()
        .into_iter()
        .find(|(name, _)| name == "form-500")
        .unwrap_or_default();
    let types = TIMED.map(|t| format!("'{t}'")).join(",");
    let logger = format!(
        "<script>window.__took = [];\
         for (const type of [{types}]) document.addEventListener(type, (event) => {{\
           if (event.isTrusted) window.__took.push(performance.now() - event.timeStamp);\
         }});</script>"
    );
    form.replacen("<body>", &format!("<body>{logger}"), 1)
}

/// The sign-up form of the replay, sent to `/done`.
const SIGN_UP: &str = r#"<!doctype html><title>Sign up</title>
<form action="/done">
<p><label>Email <input id="email" name="email"></label></p>
<p><label>Name <input id="name" name="name"></label></p>
<p><label>Plan <select id="plan" name="plan"><option>Free</option><option>Pro</option></select></label></p>
<p><label><input type="checkbox" id="terms" name="terms"> I agree</label></p>
<p><button id="go">Sign up</button></p>
</form>"#;

/// The same steps as the recording, written by hand.
const BY_HAND: &str = r##"recipe("by_hand", "Signs up, written by hand");
fn by_hand() {
    start_at("/sign-up");
    fill("#email", "ada@example.test");
    fill("#name", "Ada");
    select("#plan", "Pro");
    click("#terms");
    click("#go");
}
"##;

/// Runs `webagent bench record`.
pub fn bench(args: BenchArgs) -> anyhow::Result<std::process::ExitCode> {
    let runtime = crate::session::runtime()?;
    let figures = runtime.block_on(measure(args.browser.launch_options(), args.rounds.max(1)))?;
    if args.json {
        println!("{}", serde_json::to_string(&figures)?);
    } else {
        print(&figures, args.rounds.max(1));
    }
    Ok(std::process::ExitCode::SUCCESS)
}

fn print(f: &RecordFigures, rounds: usize) {
    println!(
        "the recorder, per input event ({} trusted events each way, form of 500 fields)",
        f.events
    );
    println!(
        "  event to the page's last listener: {:.3} ms without it, {:.3} ms with it (medians)",
        f.without_median_ms, f.with_median_ms
    );
    println!(
        "  it adds {:.3} ms at the median (goal ≤ 0.5 ms) and {:.3} ms at the 95th percentile",
        f.added_median_ms, f.added_p95_ms
    );
    println!("replay with no model ({rounds} runs each, alternating, medians)");
    println!(
        "  written by hand {:.1} ms, recorded {:.1} ms: {:.2}× (goal ≤ 1.1×)",
        f.by_hand_ms, f.recorded_ms, f.replay_ratio
    );
}

/// Starts a session of its own and takes both measurements.
pub async fn measure(launch: LaunchOptions, rounds: usize) -> anyhow::Result<RecordFigures> {
    let server = PageServer::start().await?;
    server.html("/timed", timed_page());
    server.html("/sign-up", SIGN_UP.to_string());
    server.html("/done", "<!doctype html><title>Done</title><p>Signed up");
    let mut config = Config::builtin();
    config.browser.executable = launch.chrome.clone();
    config.browser.connect = launch.connect.clone();
    config.paths.sitemaps = Vec::new();
    config.agent.approve = ApprovalMode::Never;
    let prepared =
        Prepared::new(config, &Default::default(), &[], &[]).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (events, mut drained) = mpsc::unbounded_channel();
    tokio::spawn(async move { while drained.recv().await.is_some() {} });
    let mut session = prepared
        .start(Some(&server.url("/timed")), events)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let dir = std::env::temp_dir().join(format!("webagent-bench-record-{}", std::process::id()));
    let measured = measure_on(&mut session, &server, &dir, rounds).await;
    session.close().await;
    let _ = std::fs::remove_dir_all(&dir);
    measured
}

async fn measure_on(
    session: &mut Session,
    server: &PageServer,
    dir: &std::path::Path,
    rounds: usize,
) -> anyhow::Result<RecordFigures> {
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Which goes first alternates, so a warming browser favours
        // neither.
        for recording in [round % 2 == 0, round % 2 == 1] {
            open(session, &server.url("/timed")).await?;
            let tab = session.environment.inner().inner().tab();
            let recorder = match recording {
                true => Some(Recorder::start(tab).await?),
                false => None,
            };
            let took = act_on_the_form(tab).await?;
            if let Some(recorder) = recorder {
                recorder.stop(tab).await;
            }
            match recording {
                true => with.extend(took),
                false => without.extend(took),
            }
        }
    }
    for times in [&mut without, &mut with] {
        times.sort_by(f64::total_cmp);
    }
    let events = without.len().min(with.len());

    let recorded = record_the_sign_up(session, server).await?;
    // The comparison means something only if the recording holds every
    // step, each with its locator list.
    for call in ["fill([", "select([", "click(["] {
        anyhow::ensure!(
            recorded.matches(call).count() >= if call == "select([" { 1 } else { 2 },
            "the recorded recipe lacks its `{call}` steps:\n{recorded}"
        );
    }
    std::fs::create_dir_all(dir)?;
    let files = [("by_hand", BY_HAND.to_string()), ("sign_up", recorded)];
    for (name, source) in &files {
        std::fs::write(dir.join(format!("{name}.rhai")), source)?;
    }
    let (mut by_hand, mut by_recording) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let order = match round % 2 {
            0 => [0, 1],
            _ => [1, 0],
        };
        for which in order {
            let (name, _) = &files[which];
            let file = dir.join(format!("{name}.rhai"));
            open(session, &server.url("/sign-up")).await?;
            let mut options = ReplayOptions::headless(true);
            options.heal = false;
            options.rewrite = None;
            let started = Instant::now();
            let outcome = session
                .run_recipe(
                    RecipeChoice::InFile {
                        file: &file,
                        name: None,
                    },
                    Default::default(),
                    options,
                    &Bare,
                )
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let took = ms_since(started);
            anyhow::ensure!(
                outcome.success,
                "the {name} recipe should replay: {outcome:?}"
            );
            let here = session.environment.current_url().await.unwrap_or_default();
            anyhow::ensure!(
                here.contains("/done") && here.contains("plan=Pro"),
                "the {name} recipe should send the form, not end on {here}"
            );
            match which {
                0 => by_hand.push(took),
                _ => by_recording.push(took),
            }
        }
    }
    for times in [&mut by_hand, &mut by_recording] {
        times.sort_by(f64::total_cmp);
    }
    let (hand, recorded) = (median(&by_hand), median(&by_recording));
    Ok(RecordFigures {
        events,
        without_median_ms: round2(median(&without)),
        with_median_ms: round2(median(&with)),
        added_median_ms: round2(median(&with) - median(&without)),
        added_p95_ms: round2(percentile(&with, 95.0) - percentile(&without, 95.0)),
        by_hand_ms: round2(hand),
        recorded_ms: round2(recorded),
        replay_ratio: round2(recorded / hand.max(1e-9)),
    })
}

/// Opens `url` in the session's tab as a navigation.
async fn open(session: &mut Session, url: &str) -> anyhow::Result<()> {
    let action = Catalog::builtin().parse(&json!({"navigate": {"url": url}}))?;
    let result = session.environment.execute(&action).await;
    anyhow::ensure!(result.is_ok(), "opening {url}: {result:?}");
    Ok(())
}

/// A person's work on the timed form: ten text fields clicked and typed
/// into (each click leaves the last field, so its fill is sent), ten
/// checkboxes and ten buttons clicked. Gives the page's timings.
async fn act_on_the_form(tab: &Tab) -> anyhow::Result<Vec<f64>> {
    for i in 0..10 {
        person_click(tab, &format!("[name=f{}]", i * 5)).await?;
        PaneInput::Type("abc".into()).send(tab).await?;
        person_click(tab, &format!("[name=f{}]", i * 5 + 1)).await?;
        person_click(tab, &format!("[name=f{}]", i * 5 + 4)).await?;
    }
    let took: Vec<f64> = tab
        .page()
        .evaluate("window.__took")
        .await?
        .into_value()
        .map_err(|e| anyhow::anyhow!("the page's timings: {e}"))?;
    Ok(took)
}

/// A left click at the middle of `selector`'s element, scrolled into view
/// first (the scroll is not an input event).
async fn person_click(tab: &Tab, selector: &str) -> anyhow::Result<()> {
    let script = format!(
        "(() => {{ const el = document.querySelector({selector:?});\
           el.scrollIntoView({{block: 'center'}});\
           const r = el.getBoundingClientRect();\
           return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
    );
    let point: Vec<f64> = tab
        .page()
        .evaluate(script)
        .await?
        .into_value()
        .map_err(|e| anyhow::anyhow!("where {selector} is: {e}"))?;
    let (x, y) = (point[0], point[1]);
    PaneInput::Click { x, y }.send(tab).await?;
    Ok(())
}

/// Fills the sign-up form by trusted input with the recorder on, and
/// gives the recipe it makes.
async fn record_the_sign_up(session: &mut Session, server: &PageServer) -> anyhow::Result<String> {
    let url = server.url("/sign-up");
    open(session, &url).await?;
    let tab = session.environment.inner().inner().tab();
    let mut recorder = Recorder::start(tab).await?;
    person_click(tab, "#email").await?;
    PaneInput::Type("ada@example.test".into()).send(tab).await?;
    person_click(tab, "#name").await?;
    PaneInput::Type("Ada".into()).send(tab).await?;
    // A person chooses with the keyboard here: the label's click moves the
    // focus to the select, and ArrowDown picks the next option.
    person_click(tab, "label:has(#plan)").await?;
    let down = KeyChord::parse("ArrowDown").map_err(|e| anyhow::anyhow!("{e}"))?;
    PaneInput::Press(down).send(tab).await?;
    person_click(tab, "#terms").await?;
    person_click(tab, "#go").await?;
    let mut inputs = Vec::new();
    let deadline = Instant::now() + std::time::Duration::from_secs(10);
    while inputs.len() < 5 && Instant::now() < deadline {
        match tokio::time::timeout_at(deadline.into(), recorder.next()).await {
            Ok(Some(input)) => inputs.push(input),
            _ => break,
        }
    }
    inputs.extend(recorder.stop(tab).await);
    let mut recording = Recording::new("sign_up", &url);
    for input in inputs {
        if !matches!(input, Input::Navigate { .. }) {
            recording.push(input, &url);
        }
    }
    recording
        .source(None)
        .ok_or_else(|| anyhow::anyhow!("the recording made no recipe"))
}
