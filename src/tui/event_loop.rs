//! The loop: one receiver, drain then draw, at most one frame per
//! interval. Keys arrive on the same channel as service events, so tests
//! send keys and fake service events and run until idle, with no terminal
//! and no sleeps.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use ratatui::backend::Backend;
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

    /// Every effect of one event was handed over: a handler that weighs
    /// an effect by the ones after it (a decision followed by leaving)
    /// acts now.
    fn settled(&mut self) {}
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
        effects.settled();
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
