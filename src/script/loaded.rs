//! What loaded files declare: custom actions ([`ActionDef`]) and recipes
//! ([`RecipeDef`]), each file's share ([`LoadedFile`]), and the
//! [`Snapshot`] of them a call runs against. The engine reaches custom
//! actions through the snapshot and the library keeps the files, so these
//! stand below both.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rhai::{CallFnOptions, Dynamic, Engine, Scope, AST};
use serde_json::Value;

use super::bounds;
use super::error::{script_error, ScriptError};
use super::params::RecipeParam;
use crate::actions::{ActionResult, ActionSpec};

/// A custom action a script declared.
#[derive(Clone)]
pub struct ActionDef {
    /// Its catalog entry.
    pub spec: ActionSpec,
    /// The file that declared it.
    pub file: String,
    /// The function that runs it.
    pub(super) handler: String,
    /// Whether that function takes the parameters (as one map).
    pub(super) takes_params: bool,
    /// The compiled file it is in.
    pub(super) ast: Arc<AST>,
    /// The engine it runs in.
    pub(super) engine: Arc<Engine>,
}

impl std::fmt::Debug for ActionDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionDef")
            .field("name", &self.spec.name)
            .field("file", &self.file)
            .field("handler", &self.handler)
            .finish()
    }
}

impl ActionDef {
    /// Runs the handler on the current (script) thread. A script error
    /// becomes `unknown` with the script's file, line and column.
    pub(crate) fn invoke(&self, params: Value) -> ActionResult {
        let mut scope = Scope::new();
        let options = CallFnOptions::new().eval_ast(false).rewind_scope(true);
        let outcome = if self.takes_params {
            let arg = rhai::serde::to_dynamic(&params).unwrap_or(Dynamic::UNIT);
            self.engine.call_fn_with_options::<Dynamic>(
                options,
                &mut scope,
                &self.ast,
                &self.handler,
                (arg,),
            )
        } else {
            self.engine.call_fn_with_options::<Dynamic>(
                options,
                &mut scope,
                &self.ast,
                &self.handler,
                (),
            )
        };
        match outcome {
            Ok(value) => handler_result(&value, &self.file),
            Err(error) => match script_error(&error, &self.file) {
                error @ ScriptError::TimedOut(_) => ActionResult::timeout(error.to_string()),
                error => ActionResult::unknown(error.to_string()),
            },
        }
    }
}

/// A handler's return value as an action result: a map with `ok` is taken
/// as a result, anything else is success data (nothing for `()`).
fn handler_result(value: &Dynamic, file: &str) -> ActionResult {
    if value.is_unit() {
        return ActionResult::ok();
    }
    if let Err(message) = bounds::check_depth(value, "the value the action returned") {
        return ActionResult::unknown(format!("{}: {message}", bounds::here(file)));
    }
    let json = match rhai::serde::from_dynamic::<Value>(value) {
        Ok(json) => json,
        Err(error) => {
            return ActionResult::unknown(format!(
                "the action returned a value that is not JSON: {error}"
            ))
        }
    };
    if json.get("ok").is_some_and(Value::is_boolean) {
        if let Ok(result) = serde_json::from_value::<ActionResult>(json.clone()) {
            return result;
        }
    }
    ActionResult::ok_with(json)
}

/// A recipe a script declared.
#[derive(Debug, Clone, PartialEq)]
pub struct RecipeDef {
    /// Its name (and the name of the function that runs it).
    pub name: String,
    /// What it does.
    pub description: String,
    /// The file that declared it.
    pub file: String,
    /// The parameters it declared (`recipe(name, description, #{…})`); its
    /// function takes them as one map, `fn name(params)`.
    pub params: Vec<RecipeParam>,
}

/// Why no recipe of a file could be picked; `file` is the file as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecipeChoiceError {
    /// The file declares no recipe of the name asked for.
    #[error("{} declares no recipe named `{name}`; it declares: {}", file.display(), names_or_none(declared))]
    NoSuchRecipe {
        /// The file.
        file: PathBuf,
        /// The name asked for.
        name: String,
        /// The recipes it declares.
        declared: Vec<String>,
    },
    /// The file declares no recipe at all.
    #[error("{} declares no recipe", file.display())]
    NoRecipe {
        /// The file.
        file: PathBuf,
    },
    /// No name was given and the file declares several.
    #[error("{} declares several recipes ({}); {how}", file.display(), names_or_none(declared))]
    Several {
        /// The file.
        file: PathBuf,
        /// The recipes it declares.
        declared: Vec<String>,
        /// How the person names one (`pick one with --recipe NAME`).
        how: String,
    },
}

fn names_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// The recipe of `file` named `name`, or the file's only one when no name
/// is given: how `recipe run --recipe`, a suite case's `name:` and a
/// session's replay choose. `declared` is what the file declares; `how`
/// tells the person how to name one when it declares several.
pub fn pick_recipe<'a>(
    declared: &'a [RecipeDef],
    file: &Path,
    name: Option<&str>,
    how: &str,
) -> Result<&'a RecipeDef, RecipeChoiceError> {
    let names = || declared.iter().map(|r| r.name.clone()).collect();
    match (name, declared) {
        (Some(name), _) => declared.iter().find(|r| r.name == name).ok_or_else(|| {
            RecipeChoiceError::NoSuchRecipe {
                file: file.to_path_buf(),
                name: name.to_string(),
                declared: names(),
            }
        }),
        (None, [only]) => Ok(only),
        (None, []) => Err(RecipeChoiceError::NoRecipe {
            file: file.to_path_buf(),
        }),
        (None, _) => Err(RecipeChoiceError::Several {
            file: file.to_path_buf(),
            declared: names(),
            how: how.to_string(),
        }),
    }
}

/// What one file offers, for `webagent recipe check` and reload reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSummary {
    /// The file.
    pub file: String,
    /// Custom actions it declares.
    pub actions: Vec<String>,
    /// Recipes it declares.
    pub recipes: Vec<String>,
    /// What `recipe check` found wrong in a file that loads (calls to
    /// functions nothing defines, parameters never read); empty when the
    /// file was only loaded.
    pub problems: Vec<super::Located>,
}

/// One loaded file.
#[derive(Debug)]
pub(crate) struct LoadedFile {
    pub(super) actions: Vec<ActionDef>,
    pub(super) recipes: Vec<RecipeDef>,
    /// The file's `secret_sites(…)` declarations.
    pub(super) secret_sites: Vec<(String, Vec<String>)>,
    /// The compiled file.
    pub(super) ast: Arc<AST>,
    /// The file's name as loaded.
    pub(super) file: String,
    /// Its text, for the line an error points at.
    pub(super) source: Arc<str>,
}

impl LoadedFile {
    /// What the file offers.
    pub(super) fn summary(&self) -> FileSummary {
        FileSummary {
            file: self.file.clone(),
            actions: self.actions.iter().map(|a| a.spec.name.clone()).collect(),
            recipes: self.recipes.iter().map(|r| r.name.clone()).collect(),
            problems: Vec::new(),
        }
    }
}

/// The files as they were when a call started; hot reloads do not change
/// a call that is already running.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    pub(super) files: Vec<Arc<LoadedFile>>,
}

impl Snapshot {
    /// A custom action by name (the first file that declares it wins).
    pub(crate) fn action(&self, name: &str) -> Option<ActionDef> {
        self.files
            .iter()
            .flat_map(|f| f.actions.iter())
            .find(|a| a.spec.name == name)
            .cloned()
    }

    /// The text of the loaded file named `file`.
    pub(crate) fn source_of(&self, file: &str) -> Option<Arc<str>> {
        self.files
            .iter()
            .find(|f| f.file == file)
            .map(|f| f.source.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recipe_is_picked_by_name_or_as_the_files_only_one() {
        let def = |name: &str| RecipeDef {
            name: name.into(),
            description: String::new(),
            file: "orders.rhai".into(),
            params: Vec::new(),
        };
        let file = Path::new("orders.rhai");
        let two = [def("refund"), def("ship")];
        let how = "pick one with --recipe NAME";
        assert_eq!(
            pick_recipe(&two, file, Some("ship"), how).unwrap().name,
            "ship"
        );
        assert_eq!(
            pick_recipe(&two, file, Some("pay"), how)
                .unwrap_err()
                .to_string(),
            "orders.rhai declares no recipe named `pay`; it declares: refund, ship"
        );
        assert_eq!(
            pick_recipe(&two, file, None, how).unwrap_err().to_string(),
            "orders.rhai declares several recipes (refund, ship); pick one with --recipe NAME"
        );
        assert_eq!(
            pick_recipe(&two[..1], file, None, how).unwrap().name,
            "refund"
        );
        assert_eq!(
            pick_recipe(&[], file, None, how).unwrap_err().to_string(),
            "orders.rhai declares no recipe"
        );
        assert_eq!(
            pick_recipe(&[], file, Some("x"), how)
                .unwrap_err()
                .to_string(),
            "orders.rhai declares no recipe named `x`; it declares: none"
        );
    }
}
