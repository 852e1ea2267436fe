//! Exit codes the commands share, apart from any one command so each file
//! that returns one can name it without importing another command.

use std::process::ExitCode;

use crate::events::EndReason;

/// Exit code for what the person must fix: bad usage, a flag, a setting
/// or a file that cannot be used.
pub const EXIT_USAGE: u8 = 2;

/// Exit code of a run the model handed to a person (`hand_over`): a
/// CAPTCHA, a one-time code, a sign-in only they can get past. The trace
/// resumes with `webagent resume TRACE` once they can act.
pub const EXIT_HAND_OVER: u8 = 6;

/// Exit code of a suite the person stopped (Ctrl-C, SIGTERM): what
/// finished is reported, the rest is marked not run. 130 is what shells
/// give a command ended by Ctrl-C, so scripts read it as that.
pub const EXIT_INTERRUPTED: u8 = 130;

/// The exit code of an agent run that ended for `reason`: 0 done with
/// `success`, 6 handed over to a person, 1 otherwise.
pub fn run_exit(reason: EndReason, success: bool) -> ExitCode {
    ExitCode::from(run_exit_code(reason, success))
}

/// [`run_exit`] as a number (what a session's reply carries).
pub fn run_exit_code(reason: EndReason, success: bool) -> u8 {
    match reason {
        EndReason::Done if success => 0,
        EndReason::HandOver => EXIT_HAND_OVER,
        _ => 1,
    }
}

/// Exit code of a session command whose action was refused, by the
/// policy (allowed domains, a secret's sites) or at the approval.
pub const EXIT_REFUSED: u8 = 3;

/// Exit code of a `--session NAME` command when there is no session of
/// that name.
pub const EXIT_NO_SESSION: u8 = 4;

/// Exit code of a `--session NAME` command when the session's process or
/// its browser is gone (killed, crashed); the error names its trace.
pub const EXIT_SESSION_GONE: u8 = 5;
