//! The session's runs: an agent's task, a recipe, and a task through the
//! task cache. Every command and the workbench start their runs here, so
//! how a run is set up (its model, step limit, approval mode, approvers,
//! sub-agent, healer and rewrite target) lives in one file; a caller only
//! says who watches over the run ([`Oversight`]) and what it wraps around
//! the session's environment ([`Layer`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::agent::{AgentError, Prior, RunOutcome, Steering};
use crate::environment::{Approver, HeadlessApprover, LiveMode};
use crate::llm::StopSignal;
use crate::script::{CancelFlag, RecipeDef};

use super::assemble::{located_text, Session, SessionError};
use super::cache::{run_cached, CachedOutcome, CachedRun, TaskCache};
use super::layer::Layer;
use super::run::{
    run_recipe_with, AgentSetup, ApproverFactory, RecipeOutcome, RecipeRun, RewriteTarget,
};

/// Who watches over a run: who approves, in which mode, how far an agent
/// may go, and how the run is stopped.
#[derive(Clone)]
pub struct Oversight {
    /// A fresh approver for each part of the run (the agent, the recipe,
    /// a healed step, an `agent("…")` sub-goal).
    pub approvers: ApproverFactory,
    /// The approval mode, read at every action (the workbench's changes as
    /// the person switches it); `None`: the configured one.
    pub approval: Option<LiveMode>,
    /// The step limit of an agent run; `None`: the configured one.
    pub max_steps: Option<usize>,
    /// Stops the agent (a task, healing, sub-goals).
    pub stop: StopSignal,
    /// Cancels the script (a recipe, a custom action).
    pub cancel: CancelFlag,
    /// The person's messages and retries for an agent run, when a person
    /// can send any.
    pub steering: Option<Steering>,
}

impl Oversight {
    /// The headless rules: asking means refusing unless `yes` (`--yes`);
    /// the configured mode and step limit; stopped by nothing until the
    /// caller sets `stop` and `cancel`.
    pub fn headless(yes: bool) -> Self {
        Oversight {
            approvers: Arc::new(move || Box::new(HeadlessApprover { yes }) as Box<dyn Approver>),
            approval: None,
            max_steps: None,
            stop: StopSignal::never(),
            cancel: CancelFlag::new(),
            steering: None,
        }
    }
}

impl std::fmt::Debug for Oversight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Oversight")
            .field("approval", &self.approval.as_ref().map(LiveMode::now))
            .field("max_steps", &self.max_steps)
            .finish_non_exhaustive()
    }
}

/// How a recipe (or a cached task's replay) runs besides its oversight.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Who approves and how it stops.
    pub oversight: Oversight,
    /// The origin the recipe's paths open on (`--url`); `None`: the
    /// page's.
    pub origin: Option<String>,
    /// Whether the model, when one is configured, answers `agent("…")`
    /// sub-goals and may heal.
    pub model: bool,
    /// Heal failed steps with the model.
    pub heal: bool,
    /// Write the repaired recipe of a healed run: `Some(false)` next to
    /// the original, `Some(true)` in place (`--update`), `None` not at all.
    pub rewrite: Option<bool>,
    /// The debugger the recipe stops for, if any.
    pub debuggee: Option<crate::script::Debuggee>,
}

impl ReplayOptions {
    /// The headless rules (`--yes` approves), the model used when there is
    /// one, healing on, a repaired recipe written next to the original.
    pub fn headless(yes: bool) -> Self {
        ReplayOptions::overseen(Oversight::headless(yes))
    }

    /// `oversight`, the model used when there is one, healing on, a
    /// repaired recipe written next to the original.
    pub fn overseen(oversight: Oversight) -> Self {
        ReplayOptions {
            oversight,
            origin: None,
            model: true,
            heal: true,
            rewrite: Some(false),
            debuggee: None,
        }
    }

    /// The same run under the recipe debugger: it stops at its first line
    /// and waits for the returned controller's commands. The workbench's
    /// `:debug` and `recipe run --debug=cli` both start here.
    pub fn debugged(mut self) -> (ReplayOptions, crate::script::DebugController) {
        let (debuggee, controller) = crate::script::debug_channel();
        self.debuggee = Some(debuggee);
        (self, controller)
    }
}

/// Which recipe a run plays.
#[derive(Debug, Clone, Copy)]
pub enum RecipeChoice<'a> {
    /// A recipe the session has loaded, by name (the workbench's
    /// `:recipe`).
    Loaded(&'a str),
    /// The recipe `name` of `file` (its only one when `name` is `None`),
    /// loaded first when the session does not hold the file.
    InFile {
        /// The recipe file.
        file: &'a Path,
        /// The recipe's name.
        name: Option<&'a str>,
    },
}

impl Session {
    /// What a run overseen by `oversight` is built from: the session's
    /// setup with its approval mode and step limit.
    pub fn setup_for(&self, oversight: &Oversight) -> AgentSetup {
        let mut setup = self.agent_setup();
        setup.cancel = oversight.cancel.clone();
        if let Some(approval) = &oversight.approval {
            setup.approval = approval.clone();
        }
        if let Some(max_steps) = oversight.max_steps {
            setup.config.max_steps = max_steps;
        }
        setup
    }

    /// Enters a run overseen by `oversight`: what the run is built from,
    /// and the session's environment wrapped in `layer` (custom actions
    /// started from it are cancelled with the run). Every run of the
    /// session starts here; an MCP client's call too.
    pub fn enter<'a, L: Layer>(
        &'a mut self,
        oversight: &Oversight,
        layer: &'a L,
    ) -> (AgentSetup, L::Wrapped<'a>) {
        let setup = self.setup_for(oversight);
        self.environment
            .inner_mut()
            .set_cancel(oversight.cancel.clone());
        (setup, layer.wrap(&mut self.environment))
    }

    /// Runs the agent on `task` from `prior` (a follow-up's conversation,
    /// a resumed run's steps, or [`Prior::fresh`]), on the session's
    /// environment wrapped in `layer`.
    pub async fn run_agent<L: Layer>(
        &mut self,
        task: &str,
        prior: Prior,
        oversight: Oversight,
        layer: &L,
    ) -> Result<RunOutcome, AgentError> {
        let (setup, environment) = self.enter(&oversight, layer);
        let mut agent = setup.agent(environment, (oversight.approvers)(), oversight.stop);
        if let Some(steering) = oversight.steering {
            agent = agent.with_steering(steering);
        }
        agent.run_with(task, prior).await
    }

    /// Runs the recipe `choice` with `params` (text values are read as the
    /// declared types; unknown names and wrong types are refused before
    /// anything runs) on the session's environment wrapped in `layer`.
    /// With a model configured and `options.model`, the model answers its
    /// `agent("…")` sub-goals and, with `options.heal`, heals a step that
    /// no longer runs as recorded; the repaired recipe is written as
    /// `options.rewrite` says once approved.
    pub async fn run_recipe<L: Layer>(
        &mut self,
        choice: RecipeChoice<'_>,
        params: Map<String, Value>,
        options: ReplayOptions,
        layer: &L,
    ) -> Result<RecipeOutcome, SessionError> {
        let (recipe, label) = match choice {
            RecipeChoice::Loaded(name) => (self.loaded_recipe(name)?, format!("recipe {name}")),
            RecipeChoice::InFile { file, name } => {
                let recipe = self.recipe_of(file, name)?;
                let label = format!("recipe {} ({})", recipe.name, file.display());
                (recipe, label)
            }
        };
        crate::script::params::resolve_params(&recipe.name, &recipe.params, &params)
            .map_err(|e| SessionError::Usage(e.to_string()))?;
        let ReplayOptions {
            oversight,
            origin,
            model,
            heal,
            rewrite,
            debuggee,
        } = options;
        let model = model && self.model().is_ok();
        let (setup, environment) = self.enter(&oversight, layer);
        let mut run = RecipeRun::new(recipe.name.clone(), label);
        run.params = params;
        run.origin = origin;
        if model {
            run = run.with_sub_agent(&setup, &oversight.approvers, &oversight.stop);
        }
        if model && heal {
            run = run.with_healer(&setup, &oversight.approvers, &oversight.stop);
        }
        run.rewrite =
            rewrite.map(|update| RewriteTarget::for_file(Path::new(&recipe.file), update));
        run.debuggee = debuggee;
        Ok(run_recipe_with(
            &setup,
            environment,
            run,
            (oversight.approvers)(),
            &oversight.cancel,
        )
        .await)
    }

    /// Runs `task` through the task cache in `cache`, on the session's
    /// environment wrapped in `layer`: a stored recipe replays with no
    /// model call (healing a step that no longer runs), else the agent
    /// does it and its run is stored.
    pub async fn run_task_cached<L: Layer>(
        &mut self,
        task: &str,
        cache: &TaskCache,
        oversight: Oversight,
        layer: &L,
    ) -> CachedOutcome {
        let model = self.model().is_ok();
        let (setup, mut environment) = self.enter(&oversight, layer);
        let run = CachedRun {
            cache,
            approvers: oversight.approvers,
            stop: oversight.stop,
            cancel: oversight.cancel,
            model,
        };
        run_cached(&setup, &mut environment, task, run).await
    }

    /// The loaded recipe called `name`.
    fn loaded_recipe(&self, name: &str) -> Result<RecipeDef, SessionError> {
        self.scripts
            .recipes()
            .into_iter()
            .find(|r| r.name == name)
            .ok_or_else(|| SessionError::Usage(format!("no recipe named `{name}` is loaded")))
    }

    /// The recipe `name` declared in `file`, loading the file first when
    /// the session does not hold it.
    fn recipe_of(&self, file: &Path, name: Option<&str>) -> Result<RecipeDef, SessionError> {
        let own = |scripts: &crate::script::Scripts| -> Vec<RecipeDef> {
            scripts
                .recipes()
                .into_iter()
                .filter(|r| same_file(&r.file, file))
                .collect()
        };
        if own(&self.scripts).is_empty() {
            self.scripts
                .load_file(file)
                .map_err(|e| SessionError::Usage(located_text(file, &e)))?;
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
    let recorded = PathBuf::from(recorded);
    recorded == path
        || matches!(
            (recorded.canonicalize(), path.canonicalize()),
            (Ok(a), Ok(b)) if a == b
        )
}
