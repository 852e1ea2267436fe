//! The loop: one receiver, drain then draw, at most one frame per
//! interval. Keys arrive on the same channel as service events, so tests
//! send keys and fake service events and run until idle, with no terminal
//! and no sleeps.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use ratatui::backend::{Backend, TestBackend};
use ratatui::Terminal;

use super::draw::draw;
use super::error::TuiError;
use super::event::{AppEvent, Effect};
use super::state::AppState;
use super::update::update;

/// Frames are at least this far apart (about 60 a second): streaming
/// tokens mark the state dirty, they do not each force a frame.
pub const FRAME_INTERVAL: Duration = Duration::from_millis(16);

/// Whoever carries out effects: the real services, or a test's list.
pub trait EffectHandler {
    /// Takes one effect; must not block.
    fn handle(&mut self, effect: Effect);
}

impl EffectHandler for Vec<Effect> {
    fn handle(&mut self, effect: Effect) {
        self.push(effect);
    }
}

/// The workbench: its state, its one event receiver, and whether a frame
/// is owed.
pub struct App {
    /// Everything drawn.
    pub state: AppState,
    events: Receiver<AppEvent>,
    dirty: bool,
    frames: u64,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("dirty", &self.dirty)
            .field("frames", &self.frames)
            .finish_non_exhaustive()
    }
}

impl App {
    /// A workbench reading `events`; services and the key reader hold the
    /// senders.
    pub fn new(state: AppState, events: Receiver<AppEvent>) -> Self {
        App {
            state,
            events,
            dirty: true,
            frames: 0,
        }
    }

    /// Frames drawn so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Applies one event and hands its effects on.
    pub fn apply(&mut self, event: AppEvent, effects: &mut dyn EffectHandler) {
        for effect in update(&mut self.state, event) {
            effects.handle(effect);
        }
        self.dirty = true;
    }

    /// Draws a frame now, dirty or not (benchmarks time exactly this).
    pub fn draw_now<B: Backend>(&mut self, terminal: &mut Terminal<B>) -> Result<(), TuiError> {
        self.draw(terminal)
    }

    /// The next event, waiting at most `timeout` (benchmarks that feed a
    /// service's answers to the loop by hand).
    pub fn next_event(&self, timeout: Duration) -> Option<AppEvent> {
        self.events.recv_timeout(timeout).ok()
    }

    fn draw<B: Backend>(&mut self, terminal: &mut Terminal<B>) -> Result<(), TuiError> {
        let state = &self.state;
        terminal.draw(|frame| draw(frame, state))?;
        self.dirty = false;
        self.frames += 1;
        Ok(())
    }

    /// Applies every event already sent, then draws once if anything
    /// changed. Returns whether the person asked to quit.
    pub fn run_until_idle<B: Backend>(
        &mut self,
        terminal: &mut Terminal<B>,
        effects: &mut dyn EffectHandler,
    ) -> Result<bool, TuiError> {
        while let Ok(event) = self.events.try_recv() {
            self.apply(event, effects);
            if self.state.quit {
                break;
            }
        }
        if self.dirty {
            self.draw(terminal)?;
        }
        Ok(self.state.quit)
    }

    /// Runs until the person quits or every sender is gone: wait for one
    /// event, drain the rest, draw if dirty and a frame interval has
    /// passed since the last frame.
    pub fn run<B: Backend>(
        &mut self,
        terminal: &mut Terminal<B>,
        effects: &mut dyn EffectHandler,
    ) -> Result<(), TuiError> {
        self.draw(terminal)?;
        let mut last_frame = Instant::now();
        loop {
            let first = if self.dirty {
                let due = (last_frame + FRAME_INTERVAL).saturating_duration_since(Instant::now());
                match self.events.recv_timeout(due) {
                    Ok(event) => Some(event),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return Ok(()),
                }
            } else {
                match self.events.recv() {
                    Ok(event) => Some(event),
                    Err(_) => return Ok(()),
                }
            };
            if let Some(event) = first {
                self.apply(event, effects);
                while let Ok(event) = self.events.try_recv() {
                    if self.state.quit {
                        break;
                    }
                    self.apply(event, effects);
                }
            }
            if self.state.quit {
                return Ok(());
            }
            if self.dirty && last_frame.elapsed() >= FRAME_INTERVAL {
                self.draw(terminal)?;
                last_frame = Instant::now();
            }
        }
    }
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
        let rows_shown = app.state.visible_rows(super::state::Pane::Elements);
        app.state.elements.move_to(target, elements, rows_shown);
        app.dirty = true;
        let started = Instant::now();
        let drawn = match mode {
            ListingDraw::Windowed => app.draw(&mut terminal).is_ok(),
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
fn draw_unwindowed_listing(frame: &mut ratatui::Frame, state: &AppState) {
    use ratatui::text::{Line, Span};
    use ratatui::widgets::Paragraph;
    let Some(page) = &state.page else {
        return;
    };
    let area = super::layout::areas(frame.area()).elements;
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
                super::elements::row_text(element),
                super::widgets::row_style(i == state.elements.cursor, theme, base),
            ))
        })
        .collect();
    let block = super::widgets::pane_block("Elements".into(), super::state::Pane::Elements, state);
    let offset = u16::try_from(state.elements.offset).unwrap_or(u16::MAX);
    frame.render_widget(Paragraph::new(lines).block(block).scroll((offset, 0)), area);
}

/// A page with `n` elements, every tenth one new, nested a few levels.
pub fn synthetic_page(n: usize) -> crate::dom::PageState {
    use crate::dom::{
        ElementIndex, InteractiveElement, LeftOut, PageState, PageText, ScrollPosition,
    };
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
