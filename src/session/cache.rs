//! The task cache: the second run of an unchanged task makes no model
//! call.
//!
//! A task's first run (`webagent run TASK --url URL --cache`) records as
//! usual and stores its recipe under a key made of the task text and the
//! start page's route (its sitemap route, else its path with ids left
//! open; never its origin, so a cache filled on a developer's machine
//! serves staging too). A later run of the same task on the same route
//! replays the stored recipe without the model; a step that no longer
//! runs is healed (and the stored recipe repaired); when healing fails,
//! the agent does the task anew and its run replaces the stored one.
//!
//! On disk, each entry is two files in the cache directory: `KEY.rhai`,
//! the recipe (readable, and runnable with `webagent recipe run`), and
//! `KEY.json`, what it is for and what it cost.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha1::{Digest, Sha1};

use crate::actions::Catalog;
use crate::agent::RunOutcome;
use crate::environment::Environment;
use crate::events::{CacheRecord, CacheState, EndReason, Event, TokenUsage};
use crate::llm::StopSignal;
use crate::script::{recipe_from_events_with, CancelFlag, ExportOptions, Scripts};
use crate::sitemap::SitemapSet;

use super::assemble::SessionError;
use super::run::{calls_and_actions, write_replacing};
use super::run::{
    recipe_outcome, run_recipe_with, AgentSetup, ApproverFactory, RecipeOutcome, RecipeRun,
    RewriteTarget,
};

/// Where `--cache` alone keeps the cache.
pub const DEFAULT_CACHE_DIR: &str = ".webagent/cache";

/// What went wrong reading or writing the cache.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// A file of the cache could not be read or written.
    #[error("the task cache at {}: {message}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        message: String,
    },
    /// No entry matches what `cache show` was given.
    #[error("no cached task matches {0:?}; `webagent cache list` shows them")]
    NoEntry(String),
}

/// What the cache keeps about one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheEntry {
    /// The key: the task and route, hashed.
    pub key: String,
    /// The task as it was given.
    pub task: String,
    /// The start page's route.
    pub route: String,
    /// When it was recorded (UTC, `2026-11-25T10:31:02Z`).
    pub recorded: String,
    /// When it was last used.
    pub used: String,
    /// Replays served (hits and heals).
    pub replays: u64,
    /// Model calls the recording took.
    pub model_calls: usize,
    /// Tokens the recording took.
    pub tokens: u64,
    /// The run's final words when it was recorded.
    pub text: String,
}

/// A task cache in a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskCache {
    dir: PathBuf,
}

impl TaskCache {
    /// The cache in `dir` (made when something is first stored).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        TaskCache { dir: dir.into() }
    }

    /// Its directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of `task` started on `route`: the same words (spacing and
    /// case aside) on the same route share one.
    pub fn key(task: &str, route: &str) -> String {
        let task = task
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase();
        let digest = Sha1::digest(format!("{task}\n{route}").as_bytes());
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }

    /// The route of a start page: its sitemap route when one matches
    /// (`/orders/:id`), else its path with ids left open; never the origin.
    pub fn route_of(url: &str, sitemaps: &SitemapSet) -> String {
        let origin = crate::script::export::origin_of(url);
        match crate::script::export::page_pattern(url, origin.as_deref(), Some(sitemaps)) {
            route if route.is_empty() => url.to_string(),
            route => route,
        }
    }

    /// The recipe file of `key`.
    pub fn recipe_path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.rhai"))
    }

    fn entry_path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The entry of `key`, when one is stored (with its recipe).
    pub fn entry(&self, key: &str) -> Option<CacheEntry> {
        if !self.recipe_path(key).is_file() {
            return None;
        }
        let text = std::fs::read_to_string(self.entry_path(key)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Every entry, most recently used first.
    pub fn list(&self) -> Result<Vec<CacheEntry>, CacheError> {
        let read = match std::fs::read_dir(&self.dir) {
            Ok(read) => read,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(self.io(&self.dir, error)),
        };
        let mut entries: Vec<CacheEntry> = read
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let path = e.path();
                let key = path.file_stem()?.to_str()?.to_string();
                (path.extension()? == "json").then_some(key)
            })
            .filter_map(|key| self.entry(&key))
            .collect();
        entries.sort_by(|a, b| b.used.cmp(&a.used));
        Ok(entries)
    }

    /// The entry whose key starts with `wanted`, or whose task is it.
    pub fn find(&self, wanted: &str) -> Result<CacheEntry, CacheError> {
        let entries = self.list()?;
        entries
            .iter()
            .find(|e| e.key.starts_with(wanted.trim()) && !wanted.trim().is_empty())
            .or_else(|| {
                entries
                    .iter()
                    .find(|e| e.task.trim().eq_ignore_ascii_case(wanted.trim()))
            })
            .cloned()
            .ok_or_else(|| CacheError::NoEntry(wanted.to_string()))
    }

    /// Removes every entry; how many there were.
    pub fn clear(&self) -> Result<usize, CacheError> {
        let entries = self.list()?;
        for entry in &entries {
            for path in [self.recipe_path(&entry.key), self.entry_path(&entry.key)] {
                match std::fs::remove_file(&path) {
                    Ok(()) => {}
                    Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                    Err(error) => return Err(self.io(&path, error)),
                }
            }
        }
        Ok(entries.len())
    }

    /// Stores `recipe` for `task` on `route`, replacing what was there.
    pub fn store(
        &self,
        task: &str,
        route: &str,
        recipe: &str,
        model_calls: usize,
        usage: TokenUsage,
        text: &str,
    ) -> Result<CacheEntry, CacheError> {
        std::fs::create_dir_all(&self.dir).map_err(|e| self.io(&self.dir, e))?;
        let key = Self::key(task, route);
        let now = crate::clock::utc_stamp(std::time::SystemTime::now());
        let entry = CacheEntry {
            key: key.clone(),
            task: task.to_string(),
            route: route.to_string(),
            recorded: now.clone(),
            used: now,
            replays: 0,
            model_calls,
            tokens: usage.total_tokens,
            text: text.to_string(),
        };
        let recipe_path = self.recipe_path(&key);
        write_replacing(&recipe_path, recipe).map_err(|e| self.io(&recipe_path, e))?;
        self.save(&entry)?;
        Ok(entry)
    }

    fn save(&self, entry: &CacheEntry) -> Result<(), CacheError> {
        let path = self.entry_path(&entry.key);
        let text = serde_json::to_string_pretty(entry).unwrap_or_default();
        write_replacing(&path, &text).map_err(|e| self.io(&path, e))
    }

    fn io(&self, path: &Path, error: std::io::Error) -> CacheError {
        CacheError::Io {
            path: path.to_path_buf(),
            message: error.to_string(),
        }
    }
}

/// How a cached run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedOutcome {
    /// What the cache did.
    pub state: CacheState,
    /// Whether the task was done.
    pub success: bool,
    /// The final words (for a replay, the recorded run's, marked so).
    pub text: String,
    /// Why it ended.
    pub reason: EndReason,
    /// Model calls made (0 for a hit).
    pub model_calls: usize,
    /// Tokens they used.
    pub usage: TokenUsage,
    /// The stored recipe.
    pub recipe: PathBuf,
}

/// What a cached run needs besides the task.
pub struct CachedRun<'a> {
    /// The cache.
    pub cache: &'a TaskCache,
    /// A fresh approver for each part of the run (the replay, a healed
    /// step, the agent).
    pub approvers: ApproverFactory,
    /// Stops the agent.
    pub stop: StopSignal,
    /// Cancels the replay.
    pub cancel: CancelFlag,
    /// Whether a model may be asked (a miss, healing, a refresh).
    pub model: bool,
}

/// Runs `task` on `environment` through the cache (see the module's
/// documentation). A `cache` event reports what happened.
pub async fn run_cached<E: Environment>(
    setup: &AgentSetup,
    environment: &mut E,
    task: &str,
    run: CachedRun<'_>,
) -> CachedOutcome {
    let start = environment.current_url().await.unwrap_or_default();
    let sitemaps = setup
        .sitemaps
        .read()
        .map(|s| s.clone())
        .unwrap_or_else(|e| e.into_inner().clone());
    let route = TaskCache::route_of(&start, &sitemaps);
    let key = TaskCache::key(task, &route);
    let recipe = run.cache.recipe_path(&key);
    let report = |state: CacheState, outcome: &CachedOutcome, note: Option<String>| {
        setup.events.send(Event::Cache(CacheRecord {
            state,
            key: key.clone(),
            task: task.to_string(),
            route: route.clone(),
            recipe: recipe.display().to_string(),
            model_calls: outcome.model_calls,
            usage: outcome.usage,
            success: outcome.success,
            note,
        }));
    };

    let mut spent = (0, TokenUsage::default());
    let stored = run.cache.entry(&key);
    let had_entry = stored.is_some();
    if let Some(mut entry) = stored {
        let replayed = replay(setup, environment, task, &recipe, &run).await;
        spent = (replayed.model_calls, replayed.usage);
        if replayed.success {
            let state = if replayed.healed.is_empty() {
                CacheState::Hit
            } else {
                CacheState::Healed
            };
            entry.replays += 1;
            entry.used = crate::clock::utc_stamp(std::time::SystemTime::now());
            let note = run.cache.save(&entry).err().map(|e| e.to_string());
            let outcome = CachedOutcome {
                state,
                success: true,
                text: format!("{} (replayed from the cache)", entry.text),
                reason: EndReason::Done,
                model_calls: replayed.model_calls,
                usage: replayed.usage,
                recipe: recipe.clone(),
            };
            report(state, &outcome, note);
            return outcome;
        }
        if !run.model || replayed.reason == EndReason::Stopped {
            let outcome = CachedOutcome {
                state: CacheState::Hit,
                success: false,
                text: replayed.text.clone(),
                reason: replayed.reason,
                model_calls: replayed.model_calls,
                usage: replayed.usage,
                recipe: recipe.clone(),
            };
            let note = (!run.model).then(|| {
                "the stored recipe failed and no model is configured to heal it or redo the task"
                    .to_string()
            });
            report(CacheState::Hit, &outcome, note);
            return outcome;
        }
        // Healing did not save the replay: back to the start page, and the
        // agent does the task anew.
        if let Ok(navigate) =
            Catalog::builtin().parse(&serde_json::json!({"navigate": {"url": start}}))
        {
            let _ = environment.execute(&navigate).await;
        }
    } else if !run.model {
        let outcome = CachedOutcome {
            state: CacheState::Miss,
            success: false,
            text: format!(
                "{}; nothing is cached for this task on {route} yet",
                SessionError::NoModel
            ),
            reason: EndReason::Fatal,
            model_calls: 0,
            usage: TokenUsage::default(),
            recipe: recipe.clone(),
        };
        setup.events.send(Event::Error {
            error: outcome.text.clone(),
            fatal: true,
        });
        report(CacheState::Miss, &outcome, None);
        return outcome;
    }

    let (recorded, ran) = record(setup, environment, task, &run).await;
    let (model_calls, _) = calls_and_actions(&recorded);
    let mut usage = spent.1;
    let (success, text, reason) = match &ran {
        Some(outcome) => {
            usage.add(outcome.usage);
            (outcome.success, outcome.text.clone(), outcome.reason)
        }
        None => (
            false,
            "the agent could not start".to_string(),
            EndReason::Fatal,
        ),
    };
    let state = if had_entry {
        CacheState::Refreshed
    } else {
        CacheState::Miss
    };
    let mut outcome = CachedOutcome {
        state,
        success,
        text: text.clone(),
        reason,
        model_calls: spent.0 + model_calls,
        usage,
        recipe: recipe.clone(),
    };
    let note = if success && reason == EndReason::Done {
        store(
            run.cache,
            task,
            &route,
            &recorded,
            &sitemaps,
            model_calls,
            usage,
            &text,
        )
    } else {
        Some("not stored: the run did not end done".to_string())
    };
    if note.is_some() {
        outcome.recipe = PathBuf::new();
    }
    report(state, &outcome, note);
    outcome
}

/// Replays the stored recipe, healing with the model when there is one;
/// a repaired recipe replaces the stored one (once approved).
async fn replay<E: Environment>(
    setup: &AgentSetup,
    environment: &mut E,
    task: &str,
    recipe: &Path,
    run: &CachedRun<'_>,
) -> RecipeOutcome {
    // The stored recipe runs on scripts of its own: it is no recipe of the
    // session's to list or watch.
    let scripts = Scripts::default();
    let mut replaying = setup.clone();
    replaying.scripts = scripts.clone();
    if let Err(error) = scripts.load_file(recipe) {
        let text = format!("the stored recipe does not load: {error}");
        setup.events.send(Event::Error {
            error: text.clone(),
            fatal: false,
        });
        return recipe_outcome("replay", Err(error), false, 0);
    }
    let name = scripts
        .recipes()
        .first()
        .map(|r| r.name.clone())
        .unwrap_or_else(|| "replay".into());
    let mut recipe_run = RecipeRun::new(name, format!("cache: {task}"));
    if run.model {
        recipe_run = recipe_run.with_healer(setup, &run.approvers, &run.stop);
    }
    recipe_run.rewrite = Some(RewriteTarget {
        source: recipe.to_path_buf(),
        write_to: recipe.to_path_buf(),
    });
    let approver = (run.approvers)();
    run_recipe_with(&replaying, environment, recipe_run, approver, &run.cancel).await
}

/// Runs the agent on the task with its events recorded.
async fn record<E: Environment>(
    setup: &AgentSetup,
    environment: &mut E,
    task: &str,
    run: &CachedRun<'_>,
) -> (Vec<crate::events::Event>, Option<RunOutcome>) {
    let mut recording_setup = setup.clone();
    let (events, recording) = setup.events.recording();
    recording_setup.events = events;
    let approver = (run.approvers)();
    let mut agent = recording_setup.agent(environment, approver, run.stop.clone());
    let ran = agent.run(task).await.ok();
    drop(agent);
    (recording.take(), ran)
}

/// Stores the recorded run's recipe; a note saying why not when it is not
/// stored.
#[allow(clippy::too_many_arguments)]
fn store(
    cache: &TaskCache,
    task: &str,
    route: &str,
    recorded: &[Event],
    sitemaps: &SitemapSet,
    model_calls: usize,
    usage: TokenUsage,
    text: &str,
) -> Option<String> {
    let needs_model = recorded.iter().any(|e| {
        matches!(e, Event::Step(step) if step.result.is_ok()
            && step.action.as_object().is_some_and(|o| o.contains_key("extract") || o.contains_key("ask_user")))
    });
    if needs_model {
        return Some(
            "not stored: the run used extract or ask_user, whose answers a replay cannot give"
                .into(),
        );
    }
    let options = ExportOptions {
        sitemaps: Some(sitemaps),
        no_params: false,
        name: None,
        header: None,
    };
    let Some(source) =
        recipe_from_events_with(recorded, &format!("the task cache ({task})"), options)
    else {
        return Some("not stored: the run changed nothing on the page to replay".into());
    };
    if let Err(error) = Scripts::default().load_source("<cache>", &source) {
        return Some(format!(
            "not stored: the recorded recipe does not compile ({error})"
        ));
    }
    cache
        .store(task, route, &source, model_calls, usage, text)
        .err()
        .map(|e| format!("not stored: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_ignore_spacing_and_case_but_not_the_route() {
        let a = TaskCache::key("Create an order for  Bob", "/orders/new");
        assert_eq!(a, TaskCache::key("create an order for bob", "/orders/new"));
        assert_ne!(a, TaskCache::key("create an order for bob", "/orders"));
        assert_eq!(a.len(), 16);
    }

    #[test]
    fn the_route_is_the_path_or_sitemap_route_never_the_origin() {
        let set = SitemapSet::new();
        assert_eq!(
            TaskCache::route_of("http://127.0.0.1:39011/login?next=/x", &set),
            "/login"
        );
        assert_eq!(
            TaskCache::route_of("http://staging.test/orders/1024", &set),
            "/orders/*"
        );
    }

    #[test]
    fn entries_are_stored_listed_found_and_cleared() {
        let dir = std::env::temp_dir().join(format!(
            "webagent-cache-unit-{}-{}",
            std::process::id(),
            crate::totp::now()
        ));
        let cache = TaskCache::new(&dir);
        assert!(
            cache.list().unwrap().is_empty(),
            "a missing directory is empty"
        );
        let stored = cache
            .store(
                "Sign in",
                "/login",
                "recipe(\"replay\", \"x\");\nfn replay() {}\n",
                3,
                TokenUsage::default(),
                "signed in",
            )
            .unwrap();
        assert_eq!(cache.entry(&stored.key).unwrap().task, "Sign in");
        assert_eq!(cache.find(&stored.key[..6]).unwrap().key, stored.key);
        assert_eq!(cache.find("sign in").unwrap().key, stored.key);
        assert!(cache.find("nothing").is_err());
        assert_eq!(cache.clear().unwrap(), 1);
        assert!(cache.entry(&stored.key).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
