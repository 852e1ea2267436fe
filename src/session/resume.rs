//! Resuming a run from its trace: where it picks up, on which page, with
//! which profile or state file and approval mode. `webagent resume`, the
//! workbench's `:resume` and its sessions view all read a trace through
//! here.

use std::path::{Path, PathBuf};

use crate::agent::{Conversation, ResumePoint};
use crate::environment::ApprovalMode;
use crate::events::{read_trace, TraceReadError};

/// Why a trace cannot be resumed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResumeError {
    /// The trace does not read.
    #[error(transparent)]
    Read(#[from] TraceReadError),
    /// Its last run ended: there is nothing to continue.
    #[error(
        "{}: its last run ended ({how}); there is nothing to resume; type a follow-up task \
         instead, or run the task again",
        path.display()
    )]
    Ended {
        /// The trace.
        path: PathBuf,
        /// How the run ended.
        how: String,
    },
    /// The trace has no run at all.
    #[error("{}: the trace has no run to resume", path.display())]
    Empty {
        /// The trace.
        path: PathBuf,
    },
    /// The open run is not an agent's (a recipe, an MCP client's calls).
    #[error(
        "{}: the open run is not an agent run (`{task}`); a recipe or an MCP client's calls are \
         run again, not resumed",
        path.display()
    )]
    NotAgent {
        /// The trace.
        path: PathBuf,
        /// What the run was called.
        task: String,
    },
}

/// A run that can be continued, read from its trace.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumePlan {
    /// The trace it continues.
    pub trace: PathBuf,
    /// Where it picks up.
    pub point: ResumePoint,
    /// The conversation the trace tells (a follow-up after the resumed
    /// run continues it).
    pub conversation: Conversation,
}

impl ResumePlan {
    /// The approval mode the run last had, when the trace says.
    pub fn approval(&self) -> Option<ApprovalMode> {
        self.point.approval.as_deref().and_then(|m| m.parse().ok())
    }

    /// The profile directory the run's session used.
    pub fn profile(&self) -> Option<PathBuf> {
        self.point.settings.profile.as_ref().map(PathBuf::from)
    }

    /// The state file the run's session used.
    pub fn state(&self) -> Option<PathBuf> {
        self.point.settings.state.as_ref().map(PathBuf::from)
    }
}

/// Reads the trace at `path` and finds where its open run picks up.
pub fn resume_plan(path: &Path) -> Result<ResumePlan, ResumeError> {
    let events = read_trace(path)?;
    let conversation = Conversation::from_events(&events);
    let from = path.display().to_string();
    let Some(point) = conversation.resume_point(&from) else {
        let ended = events.iter().rev().find_map(|e| match e {
            crate::events::Event::Done {
                success, reason, ..
            } => Some(format!(
                "{}, {:?}",
                if *success { "done" } else { "not done" },
                reason
            )),
            _ => None,
        });
        return Err(match ended {
            Some(how) => ResumeError::Ended {
                path: path.to_path_buf(),
                how: how.to_lowercase(),
            },
            None => ResumeError::Empty {
                path: path.to_path_buf(),
            },
        });
    };
    if point.max_steps == 0 {
        return Err(ResumeError::NotAgent {
            path: path.to_path_buf(),
            task: point.task,
        });
    }
    Ok(ResumePlan {
        trace: path.to_path_buf(),
        point,
        conversation,
    })
}
