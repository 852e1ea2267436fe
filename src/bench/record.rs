//! `webagent bench record`: what the recorder costs the page, and what a
//! recorded recipe costs to replay.
//!
//! 1. **Per input event.** A 500-field form logs how long each event took
//!    from its first listener on the page (the window's, in the capture)
//!    to its last (the document's, in the bubbling). Trusted input (CDP
//!    mouse clicks and typed text, as a person's reach the page) goes to
//!    the same fields with the recorder and without it, in alternating
//!    rounds on fresh documents; the recorder is put into each loaded
//!    document, so its listeners run between the page's two. Both ways see the same events in the same order, so
//!    each event with the recorder is paired with the same event without
//!    it (the k-th of its kind in the same round), and the difference is
//!    what the recorder added to that event; the figures are the median
//!    and the 95th percentile of those differences, and each kind's own.
//!    (The difference of the two overall medians is no event's cost: it
//!    moves with the mix of kinds, whose own times differ tenfold.)
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
    /// Input events timed both ways and paired.
    pub events: usize,
    /// Median time from an event's first listener on the page to its
    /// last, without the recorder, ms.
    pub without_median_ms: f64,
    /// The same with the recorder, ms.
    pub with_median_ms: f64,
    /// What the recorder adds to an input event, at the median of the
    /// events, ms (goal ≤ 0.5).
    pub added_median_ms: f64,
    /// What it adds at the 95th percentile of the events, ms.
    pub added_p95_ms: f64,
    /// Each kind of event: how many were paired, and the median of what
    /// the recorder added to them, ms.
    pub by_kind: Vec<KindFigures>,
    /// Median replay of the hand-written recipe, ms.
    pub by_hand_ms: f64,
    /// Median replay of the recorded recipe, ms.
    pub recorded_ms: f64,
    /// Recorded over hand-written (goal ≤ 1.1).
    pub replay_ratio: f64,
}

/// What the recorder adds to one kind of event.
#[derive(Debug, Serialize)]
pub struct KindFigures {
    /// `click`, `input`, …
    pub kind: String,
    /// Events paired.
    pub events: usize,
    /// The median of what the recorder added to them, ms.
    pub added_median_ms: f64,
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

/// A form of 500 fields that times every trusted event's way from its
/// first listener on the page (on the window, as the capture starts) to
/// its last (on the document, as the bubbling ends). The recorder, put
/// into the page once it has loaded, listens in between; the time before
/// the first listener (the event waiting for its frame, up to 16 ms for a
/// pointer's move) is left out, as it is no part of what the recorder does.
fn timed_page() -> String {
    let (_, form) = super::observe::bench_pages()
        .into_iter()
        .find(|(name, _)| name == "form-500")
        .unwrap_or_default();
    let types = TIMED.map(|t| format!("'{t}'")).join(",");
    let logger = format!(
        "<script>window.__took = [];\
         for (const type of [{types}]) {{\
           window.addEventListener(type, (event) => {{\
             if (event.isTrusted) event.__start = performance.now();\
           }}, true);\
           document.addEventListener(type, (event) => {{\
             if (event.isTrusted) window.__took.push([type, performance.now() - event.__start]);\
           }});\
         }}</script>"
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
        "the recorder, per input event ({} trusted events, each timed with it and without it; form of 500 fields)",
        f.events
    );
    println!(
        "  from the page's first listener to its last: {:.3} ms without it, {:.3} ms with it (medians)",
        f.without_median_ms, f.with_median_ms
    );
    println!(
        "  it adds {:.3} ms to an event at the median (goal ≤ 0.5 ms) and {:.3} ms at the 95th percentile",
        f.added_median_ms, f.added_p95_ms
    );
    let kinds: Vec<String> = f
        .by_kind
        .iter()
        .map(|k| format!("{} {:+.2} ({})", k.kind, k.added_median_ms, k.events))
        .collect();
    println!("  by kind, median ms (events): {}", kinds.join(", "));
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
    let mut added: Vec<(String, f64)> = Vec::new();
    for round in 0..rounds {
        let mut this_round: [Vec<Timed>; 2] = [Vec::new(), Vec::new()];
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
                true => with.extend(took.iter().map(|(_, ms)| *ms)),
                false => without.extend(took.iter().map(|(_, ms)| *ms)),
            }
            this_round[usize::from(recording)] = took;
        }
        let [plain, recorded] = this_round;
        added.extend(paired(&plain, &recorded));
    }
    for times in [&mut without, &mut with] {
        times.sort_by(f64::total_cmp);
    }
    let mut all: Vec<f64> = added.iter().map(|(_, ms)| *ms).collect();
    all.sort_by(f64::total_cmp);
    let events = all.len();
    let by_kind = TIMED
        .iter()
        .map(|kind| {
            let mut times: Vec<f64> = added
                .iter()
                .filter(|(k, _)| k == kind)
                .map(|(_, ms)| *ms)
                .collect();
            times.sort_by(f64::total_cmp);
            KindFigures {
                kind: kind.to_string(),
                events: times.len(),
                added_median_ms: round2(median(&times)),
            }
        })
        .filter(|k| k.events > 0)
        .collect();

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
        added_median_ms: round2(median(&all)),
        added_p95_ms: round2(percentile(&all, 95.0)),
        by_kind,
        by_hand_ms: round2(hand),
        recorded_ms: round2(recorded),
        replay_ratio: round2(recorded / hand.max(1e-9)),
    })
}

/// One event the page timed: its kind, and how long after its creation it
/// reached the page's last listener, ms.
type Timed = (String, f64);

/// What the recorder added to each event of a round: the k-th event of a
/// kind with the recorder against the k-th of that kind without it (both
/// ways saw the same input; a kind seen a different number of times, as a
/// pointer's moves may be, is paired as far as both go).
fn paired(plain: &[Timed], recorded: &[Timed]) -> Vec<Timed> {
    let mut out = Vec::new();
    for kind in TIMED {
        let of = |times: &[Timed]| -> Vec<f64> {
            times
                .iter()
                .filter(|(k, _)| k == kind)
                .map(|(_, ms)| *ms)
                .collect()
        };
        let (before, after) = (of(plain), of(recorded));
        out.extend(
            before
                .iter()
                .zip(&after)
                .map(|(b, a)| (kind.to_string(), a - b)),
        );
    }
    out
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
async fn act_on_the_form(tab: &Tab) -> anyhow::Result<Vec<Timed>> {
    for i in 0..10 {
        person_click(tab, &format!("[name=f{}]", i * 5)).await?;
        PaneInput::Type("abc".into()).send(tab).await?;
        person_click(tab, &format!("[name=f{}]", i * 5 + 1)).await?;
        person_click(tab, &format!("[name=f{}]", i * 5 + 4)).await?;
    }
    let took: Vec<Timed> = tab
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

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(events: &[(&str, f64)]) -> Vec<Timed> {
        events.iter().map(|(k, ms)| (k.to_string(), *ms)).collect()
    }

    #[test]
    fn each_event_is_paired_with_the_same_kind_s_event_of_the_other_run() {
        let plain = timed(&[
            ("mousemove", 5.0),
            ("click", 1.0),
            ("mousemove", 6.0),
            ("input", 0.5),
        ]);
        // One more pointer move with the recorder: paired as far as both go.
        let recorded = timed(&[
            ("mousemove", 5.5),
            ("click", 2.0),
            ("mousemove", 6.0),
            ("mousemove", 9.0),
            ("input", 0.75),
        ]);
        let added = paired(&plain, &recorded);
        assert_eq!(
            added,
            timed(&[
                ("click", 1.0),
                ("input", 0.25),
                ("mousemove", 0.5),
                ("mousemove", 0.0)
            ])
        );
    }
}
