//! The session's entry points for running recipes and cached tasks: what
//! `recipe run`, `run --cache`, the workbench and a test suite call.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::environment::{Approver, HeadlessApprover};
use crate::llm::StopSignal;
use crate::script::CancelFlag;

use super::cache::{run_cached, CachedOutcome, CachedRun, TaskCache};
use super::run::{run_recipe_with, ApproverFactory, RecipeRun};
use super::{RecipeOutcome, RewriteTarget, Session, SessionError};

/// How a recipe (or a cached task) runs on a session besides its steps.
pub struct ReplayOptions {
    /// A fresh approver for each part of the run (the recipe, a healed
    /// step, an `agent("…")` sub-goal).
    pub approvers: ApproverFactory,
    /// The origin the recipe's paths open on (`--url`); `None`: the
    /// page's.
    pub origin: Option<String>,
    /// Heal failed steps with the model, when one is configured.
    pub heal: bool,
    /// Write the repaired recipe of a healed run: `Some(false)` next to
    /// the original, `Some(true)` in place (`--update`), `None` not at all.
    pub rewrite: Option<bool>,
    /// Stops the agent (healing, sub-goals, a cached task's run).
    pub stop: StopSignal,
    /// Cancels the script.
    pub cancel: CancelFlag,
}

impl ReplayOptions {
    /// The headless rules (`--yes` approves), healing on, a repaired
    /// recipe written next to the original.
    pub fn headless(yes: bool) -> Self {
        ReplayOptions {
            approvers: Arc::new(move || Box::new(HeadlessApprover { yes }) as Box<dyn Approver>),
            origin: None,
            heal: true,
            rewrite: Some(false),
            stop: StopSignal::never(),
            cancel: CancelFlag::new(),
        }
    }
}

impl Session {
    /// Runs the recipe `name` of `file` (its only one when `name` is
    /// `None`) on this session with `params` (text values are read as the
    /// declared types; unknown names and wrong types are refused before
    /// anything runs). The file is loaded when the session does not hold
    /// it yet.
    pub async fn run_recipe_file(
        &mut self,
        file: &Path,
        name: Option<&str>,
        params: Map<String, Value>,
        options: ReplayOptions,
    ) -> Result<RecipeOutcome, SessionError> {
        let recipe = self.recipe_of(file, name)?;
        crate::script::params::resolve_params(&recipe.name, &recipe.params, &params)
            .map_err(|e| SessionError::Usage(e.to_string()))?;
        let setup = self.agent_setup();
        let model = self.model().is_ok();
        let mut run = RecipeRun::new(
            recipe.name.clone(),
            format!("recipe {} ({})", recipe.name, file.display()),
        );
        run.params = params;
        run.origin = options.origin.clone();
        if model {
            run = run.with_sub_agent(&setup, &options.approvers, &options.stop);
        }
        if model && options.heal {
            run = run.with_healer(&setup, &options.approvers, &options.stop);
        }
        run.rewrite = options
            .rewrite
            .map(|update| RewriteTarget::for_file(Path::new(&recipe.file), update));
        let approver = (options.approvers)();
        Ok(run_recipe_with(
            &setup,
            &mut self.environment,
            run,
            approver,
            &options.cancel,
        )
        .await)
    }

    /// Runs `task` through the task cache in `cache`: a stored recipe
    /// replays with no model call (healing a step that no longer runs),
    /// else the agent does it and its run is stored.
    pub async fn run_task_cached(
        &mut self,
        task: &str,
        cache: &TaskCache,
        options: ReplayOptions,
    ) -> CachedOutcome {
        let setup = self.agent_setup();
        let run = CachedRun {
            cache,
            approvers: options.approvers,
            stop: options.stop,
            cancel: options.cancel,
            model: self.model().is_ok(),
        };
        run_cached(&setup, &mut self.environment, task, run).await
    }

    /// The recipe `name` declared in `file`, loading the file first when
    /// the session does not hold it.
    fn recipe_of(
        &self,
        file: &Path,
        name: Option<&str>,
    ) -> Result<crate::script::RecipeDef, SessionError> {
        let own = |scripts: &crate::script::Scripts| -> Vec<crate::script::RecipeDef> {
            scripts
                .recipes()
                .into_iter()
                .filter(|r| same_file(&r.file, file))
                .collect()
        };
        if own(&self.scripts).is_empty() {
            self.scripts
                .load_file(file)
                .map_err(|e| SessionError::Usage(super::located_text(file, &e)))?;
        }
        let declared = own(&self.scripts);
        crate::script::pick_recipe(&declared, file, name, "pick one with --recipe NAME")
            .cloned()
            .map_err(|e| SessionError::Usage(e.to_string()))
    }
}

/// Whether a recipe's recorded file is `path` (as given, or the same file
/// under another spelling).
pub fn same_file(recorded: &str, path: &Path) -> bool {
    let recorded = Path::new(recorded);
    recorded == path
        || matches!(
            (recorded.canonicalize(), path.canonicalize()),
            (Ok(a), Ok(b)) if a == b
        )
}
