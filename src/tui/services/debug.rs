//! The services' side of the recipe debugger (`:debug`): a debugged run
//! handed to the browser actor, its file watched while it runs, and the
//! person's commands passed to the stopped recipe.

use std::sync::{Arc, PoisonError};

use crate::environment::ApprovalMode;
use crate::script::{DebugCommand, ScriptEvent, ScriptWatcher};
use crate::tui::event::AppEvent;
use crate::tui::state::DebugStart;

use super::browser::{BrowserCommand, DebugTarget};
use super::Services;

impl Services {
    /// Runs a recipe under the debugger, and watches its file: each save
    /// reloads it into the scripts (a restart runs it) and sends its text
    /// to the source pane.
    pub(super) fn start_debug(&mut self, start: DebugStart, approval: ApprovalMode) {
        let run = self.new_run(approval);
        *self
            .debug_commands
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
        self.debug_watch = None;
        let (tx, file) = (self.tx.clone(), start.file.clone());
        let watched = ScriptWatcher::start(
            self.scripts.clone(),
            std::slice::from_ref(&start.file),
            move |event| {
                let sent = match event {
                    ScriptEvent::Loaded { .. } => match std::fs::read_to_string(&file) {
                        Ok(text) => AppEvent::DebugSource(text),
                        Err(error) => AppEvent::Notice {
                            error: true,
                            text: format!("{}: {error}", file.display()),
                        },
                    },
                    ScriptEvent::Removed { file } => AppEvent::Notice {
                        error: true,
                        text: format!(
                            "{} was removed; the run goes on with its code",
                            file.display()
                        ),
                    },
                    ScriptEvent::Error { error, .. } => AppEvent::Notice {
                        error: true,
                        text: format!("{error} (a restart runs the last good version)"),
                    },
                };
                let _ = tx.send(sent);
            },
        );
        match watched {
            Ok(watcher) => self.debug_watch = Some(watcher),
            Err(error) => {
                let _ = self.tx.send(AppEvent::Notice {
                    error: true,
                    text: format!("the recipe's file is not watched: {error}"),
                });
            }
        }
        let command = BrowserCommand::Recipe {
            name: start.name,
            params: start.params,
            with_model: self.model.is_ok(),
            run,
            debug: Some(DebugTarget {
                file: start.file,
                commands: Arc::clone(&self.debug_commands),
            }),
        };
        self.send_run(command);
    }

    /// Hands a command to the debugged recipe, or says none listens.
    pub(super) fn debug(&mut self, command: DebugCommand) {
        let sent = self
            .debug_commands
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(|commands| commands.send(command));
        if !matches!(sent, Some(Ok(()))) {
            let _ = self.tx.send(AppEvent::Notice {
                error: true,
                text: "no recipe is being debugged".into(),
            });
        }
    }
}
