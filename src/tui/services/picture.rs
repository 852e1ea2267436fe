//! The picture service: decodes each screenshot once, draws the selected
//! element's outline and fits it into the page pane's cells in the
//! terminal's graphics protocol, on a thread of its own, so the loop only
//! ever copies finished cells. Newest wins: jobs a newer one replaced
//! before they started are dropped.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

use ratatui_image::picker::Picker;

use crate::tui::event::AppEvent;
use crate::tui::page::render;
use crate::tui::state::PictureJob;
use crate::vision::Screenshot;

/// Where the loop sends rendering jobs.
#[derive(Debug, Clone)]
pub struct PictureService {
    jobs: Sender<PictureJob>,
}

impl PictureService {
    /// Starts the thread; results go to `events`.
    pub fn start(picker: Picker, events: Sender<AppEvent>) -> std::io::Result<Self> {
        let (jobs, rx) = channel();
        std::thread::Builder::new()
            .name("tui-picture".into())
            .spawn(move || serve(picker, rx, events))?;
        Ok(PictureService { jobs })
    }

    /// Queues a job; never blocks.
    pub fn render(&self, job: PictureJob) {
        if self.jobs.send(job).is_err() {
            tracing::debug!("the picture service has stopped");
        }
    }
}

/// The terminal's graphics as far as can be learned: asked of the terminal
/// when the workbench draws on stdout (kitty, iTerm2 and sixel answer;
/// others get half-blocks), half-blocks when it draws on `/dev/tty`
/// beside an MCP client (whose stdin the question would read).
///
/// Inside tmux or screen the terminal is not asked: the question would be
/// passed through to an outer terminal that may not exist (a detached
/// session), and the library's reader would then keep reading keys after
/// its timeout. There the outer terminal is guessed from the environment
/// (kitty, iTerm2, WezTerm leave their marks), half-blocks otherwise.
pub fn picker(query_terminal: bool) -> Picker {
    let multiplexed = std::env::var_os("TMUX").is_some()
        || std::env::var("TERM").is_ok_and(|t| t.starts_with("tmux") || t.starts_with("screen"));
    if query_terminal && !multiplexed {
        match Picker::from_query_stdio() {
            Ok(picker) => return picker,
            Err(error) => {
                tracing::info!(%error, "the terminal did not say its graphics; using half-blocks")
            }
        }
    }
    Picker::from_fontsize((10, 20))
}

fn serve(picker: Picker, jobs: Receiver<PictureJob>, events: Sender<AppEvent>) {
    let mut decoded: Option<(Arc<Screenshot>, image::RgbImage)> = None;
    while let Ok(mut job) = jobs.recv() {
        while let Ok(newer) = jobs.try_recv() {
            job = newer;
        }
        let fresh = !matches!(&decoded, Some((shot, _)) if Arc::ptr_eq(shot, &job.shot));
        if fresh {
            match image::load_from_memory(&job.shot.image) {
                Ok(img) => decoded = Some((Arc::clone(&job.shot), img.to_rgb8())),
                Err(error) => {
                    tracing::warn!(%error, "decoding the page picture");
                    continue;
                }
            }
        }
        let Some((_, img)) = &decoded else { continue };
        match render(&picker, img, &job) {
            Ok(rendered) => {
                if events
                    .send(AppEvent::PictureRendered(Box::new(rendered)))
                    .is_err()
                {
                    return;
                }
            }
            Err(error) => tracing::warn!(%error, "drawing the page picture"),
        }
    }
}
