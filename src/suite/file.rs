//! Suite files: YAML, read whole and checked before any browser starts.
//!
//! Everything that can be known from the files is checked while they are
//! read, so a mistake points at its own line and column: unknown keys and
//! wrong types (serde), a case name used twice, a recipe file that is
//! missing or does not declare the recipe named, a selector outside the
//! restricted grammar, a Rhai check that does not compile. These checks run
//! inside the deserializer (see [`Reading`]) because only there does the
//! YAML parser still know where it is; a later pass would have lost the
//! position.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::actions::Selector;
use crate::config::SecretSource;
use crate::script::params::resolve_params;
use crate::script::pick_recipe;
use crate::script::{RecipeDef, Scripts};
use crate::yaml::YamlError;

/// How long a case may run when neither it nor the suite's defaults say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a check on the page waits for it to hold, unless the suite's
/// `defaults: {expect_timeout}` says otherwise: a recipe's last click may
/// still be rendering its answer when the run ends.
pub const DEFAULT_EXPECT_WAIT: Duration = Duration::from_secs(5);

/// Why a suite cannot run.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The file could not be read.
    #[error("could not read the suite {}: {message}", path.display())]
    Read {
        /// The suite file.
        path: PathBuf,
        /// What the operating system said.
        message: String,
    },
    /// The file is not a valid suite, at a place in it.
    #[error("{0}")]
    Invalid(YamlError),
    /// Two suites given together name the same case.
    #[error("{}: the case `{name}` is also in {}; case names must be unique across the suites run together", second.display(), first.display())]
    DuplicateAcross {
        /// The case name.
        name: String,
        /// The suite that named it first.
        first: PathBuf,
        /// The suite that named it again.
        second: PathBuf,
    },
}

/// A suite: its cases and the settings they share.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// The file it was read from.
    pub path: PathBuf,
    /// The origin relative case URLs are taken against, unless
    /// `--app-url` says otherwise.
    pub base_url: Option<String>,
    /// Sitemap files or directories (relative to the suite file).
    pub sitemaps: Vec<PathBuf>,
    /// Rhai files or directories whose custom actions every case can use.
    pub recipes: Vec<PathBuf>,
    /// Secrets the cases may type, as in the config.
    pub secrets: BTreeMap<String, SecretSource>,
    /// A dotenv file of secrets, as in the config.
    pub secrets_file: Option<PathBuf>,
    /// The cases, in file order.
    pub cases: Vec<Case>,
}

/// One case of a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Its name, unique in the suite.
    pub name: String,
    /// Where it starts: a path (taken against the base URL) or a full URL.
    pub url: String,
    /// What it runs.
    pub run: CaseRun,
    /// The checks after the run.
    pub expect: Vec<Expect>,
    /// Its tags (`--tag` selects by them), the suite's defaults included.
    pub tags: Vec<String>,
    /// How long one attempt may run.
    pub timeout: Duration,
    /// How often a failed attempt is tried again (`--retries` may raise
    /// it).
    pub retries: u32,
    /// How long a check on the page waits for it to hold.
    pub expect_wait: Duration,
}

/// What a case runs.
#[derive(Debug, Clone, PartialEq)]
pub enum CaseRun {
    /// A task in plain words, for the agent.
    Task(String),
    /// A recipe of a Rhai file.
    Recipe(RecipeCall),
}

/// A recipe to run, with its parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct RecipeCall {
    /// The Rhai file (relative paths are taken from the suite's folder).
    pub file: PathBuf,
    /// The recipe's name.
    pub name: String,
    /// Values for the recipe's parameters.
    pub params: Map<String, Value>,
}

/// One check after a case's run.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// The page text contains this.
    Text(String),
    /// The final URL matches this glob: a path pattern (`/orders/*`)
    /// against the URL's path, or a full URL pattern against the URL
    /// without its query and fragment. `*` stands for any run of
    /// characters other than `/`, `**` for any run at all.
    Url(String),
    /// An element matches this selector.
    Selector(String),
    /// The run reported success (`true`) or failure (`false`): the
    /// agent's `done`, or a recipe finishing without an error.
    Done(bool),
    /// A Rhai expression over the page (`text()`, `url()`, `page()`) is
    /// true.
    Rhai(String),
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expect::Text(text) => write!(f, "text: {text:?}"),
            Expect::Url(pattern) => write!(f, "url: {pattern:?}"),
            Expect::Selector(selector) => write!(f, "selector: {selector:?}"),
            Expect::Done(true) => write!(f, "done: success"),
            Expect::Done(false) => write!(f, "done: failure"),
            Expect::Rhai(code) => write!(f, "rhai: {code:?}"),
        }
    }
}

impl Suite {
    /// Reads and checks the suite at `path`.
    pub fn load(path: &Path) -> Result<Suite, SuiteError> {
        let text = crate::yaml::read_text(path).map_err(|e| match e {
            crate::yaml::ReadError::NotText(problem) => SuiteError::Invalid(problem),
            crate::yaml::ReadError::Io { source, .. } => SuiteError::Read {
                path: path.to_path_buf(),
                message: source.to_string(),
            },
            too_big @ crate::yaml::ReadError::TooBig { .. } => SuiteError::Read {
                path: path.to_path_buf(),
                message: too_big.to_string(),
            },
        })?;
        Suite::parse(path, &text)
    }

    /// Reads and checks suite text as if it were the file at `path`
    /// (relative paths in it are taken from `path`'s folder).
    pub fn parse(path: &Path, text: &str) -> Result<Suite, SuiteError> {
        let folder = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let read = Reading::during(folder.clone(), || serde_yaml::from_str::<SuiteFile>(text));
        let file =
            read.map_err(|e| SuiteError::Invalid(YamlError::parsing_text(path, &e, text, (1, 1))))?;
        let Some(cases) = file.cases else {
            return Err(SuiteError::Invalid(YamlError::at(
                path,
                (1, 1),
                "the suite has no `cases:` list",
            )));
        };
        let defaults = file.defaults.unwrap_or_default();
        let cases = cases
            .into_iter()
            .map(|case| {
                let mut tags = defaults.tags.clone();
                tags.extend(case.tags.into_iter().filter(|t| !defaults.tags.contains(t)));
                Case {
                    name: case.name.0,
                    url: case.url,
                    run: case.run,
                    expect: case.expect,
                    tags,
                    timeout: case
                        .timeout
                        .or(defaults.timeout)
                        .map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64),
                    retries: case.retries.or(defaults.retries).unwrap_or(0),
                    expect_wait: defaults
                        .expect_timeout
                        .map_or(DEFAULT_EXPECT_WAIT, Duration::from_secs_f64),
                }
            })
            .collect();
        let relative = |p: PathBuf| if p.is_absolute() { p } else { folder.join(p) };
        Ok(Suite {
            path: path.to_path_buf(),
            base_url: file.base_url,
            sitemaps: file.sitemaps.into_iter().map(relative).collect(),
            recipes: file.recipes.into_iter().map(relative).collect(),
            secrets: file
                .secrets
                .into_iter()
                .map(|(name, source)| (name, source.0))
                .collect(),
            secrets_file: file.secrets_file.map(relative),
            cases,
        })
    }

    /// Every Rhai file the cases run a recipe of, once each.
    pub fn recipe_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = Vec::new();
        for case in &self.cases {
            if let CaseRun::Recipe(call) = &case.run {
                if !files.contains(&call.file) {
                    files.push(call.file.clone());
                }
            }
        }
        files
    }
}

/// Reads several suites, refusing a case name that two of them share (the
/// reports name cases by name).
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<Suite>, SuiteError> {
    let mut suites: Vec<Suite> = Vec::new();
    for path in paths {
        let suite = Suite::load(path)?;
        for case in &suite.cases {
            if let Some(first) = suites
                .iter()
                .find(|s| s.cases.iter().any(|c| c.name == case.name))
            {
                return Err(SuiteError::DuplicateAcross {
                    name: case.name.clone(),
                    first: first.path.clone(),
                    second: suite.path.clone(),
                });
            }
        }
        suites.push(suite);
    }
    Ok(suites)
}

/// What is known while one suite file is read: its folder (relative paths
/// start there), the case names seen so far, and the recipe files compiled
/// so far. Kept for the duration of one `serde_yaml::from_str` on this
/// thread, so the fields' own deserializers can check what needs context
/// and fail at their own position.
struct Reading {
    folder: PathBuf,
    names: HashSet<String>,
    recipes: BTreeMap<PathBuf, Result<Vec<RecipeDef>, String>>,
}

thread_local! {
    static READING: RefCell<Option<Reading>> = const { RefCell::new(None) };
}

impl Reading {
    /// Runs `parse` with a fresh reading context for `folder`.
    fn during<T>(folder: PathBuf, parse: impl FnOnce() -> T) -> T {
        READING.with(|r| {
            *r.borrow_mut() = Some(Reading {
                folder,
                names: HashSet::new(),
                recipes: BTreeMap::new(),
            })
        });
        let parsed = parse();
        READING.with(|r| r.borrow_mut().take());
        parsed
    }

    /// Applies `f` to the context (none outside [`Reading::during`]: a
    /// suite value deserialized on its own is checked without it).
    fn with<T>(f: impl FnOnce(&mut Reading) -> T) -> Option<T> {
        READING.with(|r| r.borrow_mut().as_mut().map(f))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    #[serde(default)]
    base_url: Option<String>,
    #[serde(default)]
    defaults: Option<Defaults>,
    #[serde(default)]
    sitemaps: Vec<PathBuf>,
    #[serde(default)]
    recipes: Vec<PathBuf>,
    #[serde(default)]
    secrets: BTreeMap<String, SecretRef>,
    #[serde(default)]
    secrets_file: Option<PathBuf>,
    cases: Option<Vec<CaseFile>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Defaults {
    #[serde(default, deserialize_with = "seconds")]
    timeout: Option<f64>,
    #[serde(default)]
    retries: Option<u32>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default, deserialize_with = "seconds")]
    expect_timeout: Option<f64>,
}

/// One case as written: `task` and `recipe` are told apart (exactly one
/// must be there) when the case's map ends.
struct CaseFile {
    name: CaseName,
    url: String,
    run: CaseRun,
    expect: Vec<Expect>,
    tags: Vec<String>,
    timeout: Option<f64>,
    retries: Option<u32>,
}

impl<'de> Deserialize<'de> for CaseFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(CaseVisitor)
    }
}

struct CaseVisitor;

const CASE_KEYS: &[&str] = &[
    "name", "url", "task", "recipe", "expect", "tags", "timeout", "retries",
];

impl<'de> Visitor<'de> for CaseVisitor {
    type Value = CaseFile;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a case: name, url, task or recipe, expect, tags, timeout, retries")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CaseFile, A::Error> {
        // Keys are read as `CaseKey`, so an unknown one fails at its own
        // position.
        let mut name: Option<CaseName> = None;
        let mut url: Option<String> = None;
        let mut task: Option<String> = None;
        let mut recipe: Option<RecipeCall> = None;
        let mut expect: Vec<Expect> = Vec::new();
        let mut tags: Vec<String> = Vec::new();
        let mut timeout: Option<f64> = None;
        let mut retries: Option<u32> = None;
        while let Some(CaseKey(key)) = map.next_key::<CaseKey>()? {
            match key {
                "name" => name = Some(map.next_value()?),
                "url" => url = Some(map.next_value()?),
                "task" => task = Some(map.next_value::<TaskText>()?.0),
                "recipe" => recipe = Some(map.next_value::<RecipeCallFile>()?.0),
                "expect" => {
                    expect = map
                        .next_value::<Vec<ExpectFile>>()?
                        .into_iter()
                        .map(|e| e.0)
                        .collect()
                }
                "tags" => tags = map.next_value()?,
                "timeout" => timeout = Some(map.next_value::<Seconds>()?.0),
                _ => retries = Some(map.next_value()?),
            }
        }
        let name = name.ok_or_else(|| de::Error::missing_field("name"))?;
        let url = url.ok_or_else(|| {
            de::Error::custom(format!(
                "the case `{}` has no `url`: a path like /login (taken against --app-url) or a full URL",
                name.0
            ))
        })?;
        let run = match (task, recipe) {
            (Some(task), None) => CaseRun::Task(task),
            (None, Some(recipe)) => CaseRun::Recipe(recipe),
            (Some(_), Some(_)) => {
                return Err(de::Error::custom(format!(
                    "the case `{}` has both `task` and `recipe`; give one",
                    name.0
                )))
            }
            (None, None) => {
                return Err(de::Error::custom(format!(
                    "the case `{}` has neither `task` nor `recipe`; give one",
                    name.0
                )))
            }
        };
        Ok(CaseFile {
            name,
            url,
            run,
            expect,
            tags,
            timeout,
            retries,
        })
    }
}

/// Reads a string and checks it inside the parser's own visit of the
/// value: only an error raised there carries the value's position (one
/// raised after the value was read is placed at the enclosing map).
fn checked_str<'de, D: Deserializer<'de>, T>(
    d: D,
    expecting: &'static str,
    check: impl FnOnce(&str) -> Result<T, String>,
) -> Result<T, D::Error> {
    struct Checking<F>(&'static str, F);
    impl<T, F: FnOnce(&str) -> Result<T, String>> Visitor<'_> for Checking<F> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(self.0)
        }

        fn visit_str<E: de::Error>(self, text: &str) -> Result<T, E> {
            (self.1)(text).map_err(E::custom)
        }
    }
    d.deserialize_str(Checking(expecting, check))
}

/// A key of a case's map, one of [`CASE_KEYS`].
struct CaseKey(&'static str);

impl<'de> Deserialize<'de> for CaseKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        checked_str(d, "a case's key", |key| {
            CASE_KEYS
                .iter()
                .find(|k| **k == key)
                .map(|k| CaseKey(k))
                .ok_or_else(|| {
                    format!(
                        "unknown field `{key}`, expected one of {}",
                        quoted_list(CASE_KEYS)
                    )
                })
        })
    }
}

fn quoted_list(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A case name, unique in its suite.
struct CaseName(String);

impl<'de> Deserialize<'de> for CaseName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        checked_str(d, "a case name", |name| {
            if name.trim().is_empty() {
                return Err("a case name may not be empty".to_string());
            }
            let fresh = Reading::with(|r| r.names.insert(name.to_string())).unwrap_or(true);
            if !fresh {
                return Err(format!(
                    "a case named `{name}` is already in this suite; case names must be unique"
                ));
            }
            Ok(CaseName(name.to_string()))
        })
    }
}

/// A task in plain words, not empty.
struct TaskText(String);

impl<'de> Deserialize<'de> for TaskText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        checked_str(d, "a task in plain words", |task| {
            if task.trim().is_empty() {
                Err("the task is empty; say what the agent should do".to_string())
            } else {
                Ok(TaskText(task.to_string()))
            }
        })
    }
}

/// A secret's source (`env:NAME`, `file:PATH`), checked where written.
struct SecretRef(SecretSource);

impl<'de> Deserialize<'de> for SecretRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        checked_str(d, "env:NAME or file:PATH", |text| {
            text.parse().map(SecretRef)
        })
    }
}

/// Seconds, whole or not, above zero.
struct Seconds(f64);

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Positive;
        impl Visitor<'_> for Positive {
            type Value = Seconds;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number of seconds above 0")
            }

            fn visit_f64<E: de::Error>(self, value: f64) -> Result<Seconds, E> {
                if value > 0.0 && value.is_finite() {
                    Ok(Seconds(value))
                } else {
                    Err(E::custom(format!(
                        "a time is a number of seconds above 0, not {value}"
                    )))
                }
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<Seconds, E> {
                self.visit_f64(value as f64)
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Seconds, E> {
                self.visit_f64(value as f64)
            }
        }
        d.deserialize_any(Positive)
    }
}

fn seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(Some(Seconds::deserialize(d)?.0))
}

/// `recipe: {file, name, params}`, the file read and compiled where it is
/// named, so a missing file or recipe points at the case.
struct RecipeCallFile(RecipeCall);

impl<'de> Deserialize<'de> for RecipeCallFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(RecipeCallVisitor)
    }
}

/// What `recipe:` says, before its file is looked at.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecipeWritten {
    file: PathBuf,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    params: Map<String, Value>,
}

struct RecipeCallVisitor;

impl<'de> Visitor<'de> for RecipeCallVisitor {
    type Value = RecipeCallFile;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a recipe: {file, name, params}")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RecipeCallFile, A::Error> {
        // Checked here, inside the map's visit, so a missing file or
        // recipe is placed at the `recipe:` it concerns.
        let written = RecipeWritten::deserialize(de::value::MapAccessDeserializer::new(map))?;
        let checked = Reading::with(|r| {
            let file = if written.file.is_absolute() {
                written.file.clone()
            } else {
                r.folder.join(&written.file)
            };
            let declared = r
                .recipes
                .entry(file.clone())
                .or_insert_with(|| declared_recipes(&file))
                .clone();
            (file, declared)
        });
        let Some((file, declared)) = checked else {
            return Err(de::Error::custom(
                "a recipe case is read only as part of a suite file",
            ));
        };
        let declared = declared.map_err(de::Error::custom)?;
        let recipe = pick_recipe(
            &declared,
            &file,
            written.name.as_deref(),
            "say which with `name:`",
        )
        .map_err(de::Error::custom)?;
        // The parameters are checked as `recipe run --param` checks them:
        // an unknown name or a wrong type stops the suite before anything
        // runs, with what the recipe takes.
        resolve_params(&recipe.name, &recipe.params, &written.params).map_err(de::Error::custom)?;
        let name = recipe.name.clone();
        Ok(RecipeCallFile(RecipeCall {
            file,
            name,
            params: written.params,
        }))
    }
}

/// The recipes `file` declares, with their parameters, or why it cannot
/// be used.
fn declared_recipes(file: &Path) -> Result<Vec<RecipeDef>, String> {
    if !file.is_file() {
        return Err(format!("the recipe file {} does not exist", file.display()));
    }
    let scripts = Scripts::default();
    scripts
        .load_file(file)
        .map_err(|e| format!("the recipe file does not load: {e}"))?;
    Ok(scripts.recipes())
}

/// One `expect:` entry: a map with exactly one check.
struct ExpectFile(Expect);

const EXPECT_KEYS: &[&str] = &["text", "url", "selector", "done", "rhai"];

impl<'de> Deserialize<'de> for ExpectFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(ExpectVisitor)
    }
}

struct ExpectVisitor;

/// The kind of a check, one of [`EXPECT_KEYS`] (an unknown one fails at
/// its own position).
struct ExpectKey(&'static str);

impl<'de> Deserialize<'de> for ExpectKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        checked_str(d, "a check's kind", |key| {
            EXPECT_KEYS
                .iter()
                .find(|k| **k == key)
                .map(|k| ExpectKey(k))
                .ok_or_else(|| {
                    format!(
                        "unknown check `{key}`, expected one of {}",
                        quoted_list(EXPECT_KEYS)
                    )
                })
        })
    }
}

impl<'de> Visitor<'de> for ExpectVisitor {
    type Value = ExpectFile;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("one check: text, url, selector, done or rhai")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ExpectFile, A::Error> {
        let Some(ExpectKey(key)) = map.next_key::<ExpectKey>()? else {
            return Err(de::Error::custom(
                "an empty check; write one of text, url, selector, done, rhai",
            ));
        };
        let expect = match key {
            "text" => Expect::Text(non_empty(map.next_value()?, "text")?),
            "url" => Expect::Url(non_empty(map.next_value()?, "url")?),
            "selector" => {
                let selector: String = map.next_value()?;
                Selector::parse(&selector)
                    .map_err(|e| de::Error::custom(format!("selector {selector:?}: {e}")))?;
                Expect::Selector(selector)
            }
            "done" => {
                let said: String = map.next_value()?;
                match said.as_str() {
                    "success" => Expect::Done(true),
                    "failure" => Expect::Done(false),
                    other => {
                        return Err(de::Error::custom(format!(
                            "done is `success` or `failure`, not `{other}`"
                        )))
                    }
                }
            }
            _ => {
                let code: String = map.next_value()?;
                check_rhai(&code).map_err(de::Error::custom)?;
                Expect::Rhai(code)
            }
        };
        if let Some(extra) = map.next_key::<String>()? {
            return Err(de::Error::custom(format!(
                "one check per entry: `{extra}` goes into an entry of its own (`- {extra}: …`)"
            )));
        }
        Ok(ExpectFile(expect))
    }
}

fn non_empty<E: de::Error>(text: String, what: &str) -> Result<String, E> {
    if text.is_empty() {
        Err(E::custom(format!("`{what}` needs a value")))
    } else {
        Ok(text)
    }
}

/// The Rhai source a check runs as: a recipe returning the expression.
pub(crate) fn rhai_check_source(name: &str, code: &str) -> String {
    format!("recipe({name:?}, \"a suite check\");\nfn {name}() {{\n{code}\n}}\n")
}

/// Whether `code` compiles as a check.
fn check_rhai(code: &str) -> Result<(), String> {
    Scripts::default()
        .load_source("<check>", &rhai_check_source("check", code))
        .map(|_| ())
        .map_err(|e| match e.located() {
            // The check's own line 1 is the source's line 3.
            Some(at) => format!(
                "the Rhai check does not compile: {} (line {} of the check)",
                at.message,
                at.line.saturating_sub(2).max(1)
            ),
            None => format!("the Rhai check does not compile: {e}"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Suite, SuiteError> {
        Suite::parse(Path::new("suite.yaml"), text)
    }

    fn problem(text: &str) -> YamlError {
        match parse(text) {
            Err(SuiteError::Invalid(problem)) => problem,
            other => panic!("expected a located problem, got {other:?}"),
        }
    }

    #[test]
    fn a_case_reads_with_defaults_applied() {
        let suite = parse(
            "defaults: {timeout: 30, retries: 2, tags: [ui]}\n\
             cases:\n\
             \x20 - name: refunds an order\n\
             \x20   url: /orders/1002\n\
             \x20   task: Refund this order\n\
             \x20   expect:\n\
             \x20     - done: success\n\
             \x20     - url: \"/orders/*\"\n\
             \x20     - selector: \"#status\"\n\
             \x20     - text: refunded\n\
             \x20     - rhai: 'text().contains(\"refunded\")'\n\
             \x20   tags: [slow]\n\
             \x20   retries: 1\n",
        )
        .expect("a valid suite");
        let case = &suite.cases[0];
        assert_eq!(case.run, CaseRun::Task("Refund this order".into()));
        assert_eq!(case.timeout, Duration::from_secs(30));
        assert_eq!(case.retries, 1);
        assert_eq!(case.tags, vec!["ui".to_string(), "slow".to_string()]);
        assert_eq!(case.expect.len(), 5);
        assert_eq!(case.expect[0], Expect::Done(true));
    }

    #[test]
    fn mistakes_point_at_their_line_and_column() {
        let unknown = problem("cases:\n  - name: a\n    url: /\n    task: t\n    retry: 1\n");
        assert_eq!((unknown.line, unknown.column), (5, 5), "{unknown}");
        assert!(unknown.message.contains("retry"), "{unknown}");

        let twice = problem(
            "cases:\n  - name: a\n    url: /\n    task: t\n  - name: a\n    url: /x\n    task: u\n",
        );
        assert_eq!(twice.line, 5, "{twice}");
        assert!(twice.message.contains("already"), "{twice}");

        let missing =
            problem("cases:\n  - name: a\n    url: /\n    recipe: {file: nowhere.rhai, name: x}\n");
        assert_eq!(missing.line, 4, "{missing}");
        assert!(missing.message.contains("does not exist"), "{missing}");

        let selector = problem(
            "cases:\n  - name: a\n    url: /\n    task: t\n    expect:\n      - selector: \"div:has(p)\"\n",
        );
        assert_eq!(selector.line, 6, "{selector}");

        let rhai = problem(
            "cases:\n  - name: a\n    url: /\n    task: t\n    expect:\n      - rhai: \"text(.contains\"\n",
        );
        assert_eq!(rhai.line, 6, "{rhai}");
        assert!(rhai.message.contains("does not compile"), "{rhai}");

        let neither = problem("cases:\n  - name: a\n    url: /\n");
        assert!(neither.message.contains("neither"), "{neither}");

        let two_checks = problem(
            "cases:\n  - name: a\n    url: /\n    task: t\n    expect:\n      - text: a\n        url: /b\n",
        );
        assert!(
            two_checks.message.contains("one check per entry"),
            "{two_checks}"
        );
    }

    #[test]
    fn a_recipe_is_found_in_its_file_or_named_among_those_declared() {
        let dir = std::env::temp_dir().join(format!("webagent-suite-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        std::fs::write(
            dir.join("two.rhai"),
            "recipe(\"a\", \"first\");\nfn a() { 1 }\nrecipe(\"b\", \"second\");\nfn b() { 2 }\n",
        )
        .expect("a script");
        let path = dir.join("suite.yaml");
        let wrong = Suite::parse(
            &path,
            "cases:\n  - name: x\n    url: /\n    recipe: {file: two.rhai, name: c}\n",
        );
        let Err(SuiteError::Invalid(wrong)) = wrong else {
            panic!("an unknown recipe is refused: {wrong:?}");
        };
        assert!(wrong.message.contains("a, b"), "{wrong}");
        let unnamed = Suite::parse(
            &path,
            "cases:\n  - name: x\n    url: /\n    recipe: {file: two.rhai}\n",
        );
        assert!(
            matches!(unnamed, Err(SuiteError::Invalid(_))),
            "{unnamed:?}"
        );
        let both = Suite::parse(
            &path,
            "cases:\n  - name: x\n    url: /\n    task: t\n    recipe: {file: two.rhai, name: a}\n",
        );
        let Err(SuiteError::Invalid(both)) = both else {
            panic!("a task and a recipe are refused together: {both:?}");
        };
        assert!(both.message.contains("both"), "{both}");
        let named = Suite::parse(
            &path,
            "cases:\n  - name: x\n    url: /\n    recipe: {file: two.rhai, name: b}\n",
        )
        .expect("a named recipe");
        let CaseRun::Recipe(call) = &named.cases[0].run else {
            panic!("a recipe case");
        };
        assert_eq!(call.file, dir.join("two.rhai"));
        std::fs::write(
            dir.join("typed.rhai"),
            "recipe(\"order\", \"orders\", #{ qty: #{ type: \"integer\", \"default\": 1 } });\nfn order(params) { params.qty }\n",
        )
        .expect("a script");
        let typed = Suite::parse(
            &path,
            "cases:\n  - name: x\n    url: /\n    recipe: {file: typed.rhai, params: {qty: 3}}\n",
        )
        .expect("a parameter of the declared type");
        assert!(matches!(&typed.cases[0].run, CaseRun::Recipe(c) if c.params["qty"] == 3));
        for wrong in ["{qty: many}", "{quantity: 3}"] {
            let refused = Suite::parse(
                &path,
                &format!("cases:\n  - name: x\n    url: /\n    recipe: {{file: typed.rhai, params: {wrong}}}\n"),
            );
            let Err(SuiteError::Invalid(refused)) = refused else {
                panic!("{wrong} is refused before anything runs: {refused:?}");
            };
            assert_eq!(refused.line, 4, "{refused}");
            assert!(
                refused.message.contains("qty"),
                "says what the recipe takes: {refused}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
