//! Taking over the terminal and giving it back: raw mode, the alternate
//! screen and bracketed paste, restored on quit and, first of all, on a
//! panic (so the panic message lands on a normal screen).
//!
//! The screen is stdout when stdout is a terminal, else the controlling
//! terminal itself (`/dev/tty`): with `webagent mcp --workbench`, stdout
//! carries the MCP protocol and the workbench still draws where the person
//! looks. Keys come from the terminal either way (crossterm reads
//! `/dev/tty` when stdin is not one).

use std::io::{self, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{self, DisableBracketedPaste, EnableBracketedPaste, Event as TermEvent};
use crossterm::execute;
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

use super::error::TuiError;
use super::event::AppEvent;

/// Where the workbench draws.
pub type Screen = Box<dyn Write + Send>;

/// The real terminal.
pub type Term = Terminal<CrosstermBackend<Screen>>;

/// The screen: stdout when it is a terminal, the controlling terminal
/// otherwise.
fn screen() -> io::Result<Screen> {
    if io::stdout().is_terminal() {
        Ok(Box::new(io::stdout()))
    } else {
        Ok(Box::new(
            std::fs::OpenOptions::new().write(true).open("/dev/tty")?,
        ))
    }
}

/// Puts the terminal into the workbench's mode and installs the panic
/// hook that undoes it.
pub fn enter() -> Result<Term, TuiError> {
    install_panic_hook();
    enable_raw_mode()?;
    let mut stdout = match screen() {
        Ok(screen) => screen,
        Err(error) => {
            restore();
            return Err(error.into());
        }
    };
    if let Err(error) = execute!(stdout, EnterAlternateScreen, EnableBracketedPaste) {
        restore();
        return Err(error.into());
    }
    match Terminal::new(CrosstermBackend::new(stdout)) {
        Ok(terminal) => Ok(terminal),
        Err(error) => {
            restore();
            Err(error.into())
        }
    }
}

/// Gives the terminal back: cooked mode, the main screen, a visible
/// cursor. Safe to call more than once.
pub fn restore() {
    let _ = disable_raw_mode();
    if let Ok(mut screen) = screen() {
        let _ = execute!(
            screen,
            crossterm::event::DisableMouseCapture,
            DisableBracketedPaste,
            LeaveAlternateScreen,
            crossterm::cursor::Show
        );
    }
}

fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}

/// Reads keys, resizes and pastes on a thread of its own and sends them to
/// the loop, until `stop` is set or the loop is gone.
pub fn spawn_input_reader(tx: Sender<AppEvent>, stop: Arc<AtomicBool>) {
    let spawned = std::thread::Builder::new()
        .name("tui-input".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                // Polling with a timeout lets the thread notice `stop`.
                match event::poll(Duration::from_millis(100)) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(error) => {
                        tracing::warn!(%error, "reading the terminal");
                        return;
                    }
                }
                let event = match event::read() {
                    Ok(TermEvent::Key(key)) => AppEvent::Key(key),
                    Ok(TermEvent::Resize(columns, rows)) => AppEvent::Resize(columns, rows),
                    Ok(TermEvent::Paste(text)) => AppEvent::Paste(text),
                    Ok(TermEvent::Mouse(mouse)) => AppEvent::Mouse(mouse),
                    Ok(_) => continue,
                    Err(error) => {
                        tracing::warn!(%error, "reading the terminal");
                        return;
                    }
                };
                if tx.send(event).is_err() {
                    return;
                }
            }
        });
    if let Err(error) = spawned {
        tracing::error!(%error, "could not start the key reader");
    }
}

/// Puts `text` on the clipboard of the terminal the workbench runs in,
/// even over SSH: the OSC 52 escape, which terminals that allow it (most
/// do, tmux with `set-clipboard on`) turn into a copy. A terminal that
/// does not ignores it.
pub fn copy_to_clipboard(text: &str) -> io::Result<()> {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    let mut out = screen()?;
    write!(out, "\x1b]52;c;{encoded}\x07")?;
    out.flush()
}

/// Has the terminal report the mouse (while the page pane is shown, whose
/// picture takes clicks and the wheel), or stop; the person's own text
/// selection needs Shift meanwhile.
pub fn capture_mouse(on: bool) -> io::Result<()> {
    let mut out = screen()?;
    match on {
        true => execute!(out, crossterm::event::EnableMouseCapture),
        false => execute!(out, crossterm::event::DisableMouseCapture),
    }
}
