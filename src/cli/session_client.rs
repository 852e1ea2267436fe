//! The client side of a named session: what a command given `--session
//! NAME` sends the session process, and how its answer or its absence
//! becomes the command's output and exit code. The commands use this room
//! and `session` (the process itself) uses theirs, so neither imports the
//! other back.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::exit::{EXIT_NO_SESSION, EXIT_SESSION_GONE, EXIT_USAGE};
use crate::daemon::{call, valid_name, Request, SessionFiles, Unreachable};

/// `path` made absolute against the working folder, so a session process
/// started elsewhere writes where the command meant.
pub fn absolute(path: &Path) -> PathBuf {
    std::env::current_dir()
        .map(|dir| dir.join(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// The trace of session `name`, from its metadata; when there is none,
/// the reason is printed and the exit code given (2 for a bad name, 4 for
/// no such session).
pub fn trace_of(name: &str) -> Result<PathBuf, ExitCode> {
    if let Err(error) = valid_name(name) {
        eprintln!("error: {error}");
        return Err(ExitCode::from(EXIT_USAGE));
    }
    match SessionFiles::named(name).read_meta() {
        Some(meta) => Ok(meta.trace),
        None => {
            eprintln!(
                "error: {}",
                Unreachable::NoSession {
                    name: name.to_string()
                }
            );
            Err(ExitCode::from(EXIT_NO_SESSION))
        }
    }
}

/// Sends `request` to session `name`, prints its reply and gives its exit
/// code: 4 when there is no such session, 5 when it is gone.
pub fn forward(name: &str, request: &Request) -> ExitCode {
    if let Err(error) = valid_name(name) {
        eprintln!("error: {error}");
        return ExitCode::from(EXIT_USAGE);
    }
    match call(&SessionFiles::named(name), request) {
        Ok(reply) => {
            print!("{}", reply.stdout);
            eprint!("{}", reply.stderr);
            ExitCode::from(reply.code)
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(unreachable_code(&error))
        }
    }
}

pub(super) fn unreachable_code(error: &Unreachable) -> u8 {
    match error {
        Unreachable::NoSession { .. } => EXIT_NO_SESSION,
        Unreachable::Gone { .. } => EXIT_SESSION_GONE,
    }
}
