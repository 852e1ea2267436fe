//! Which loaded recipe a `:recipe` or `:debug` line names, with its
//! parameters checked: one place below both commands.

use crate::script::params::{parse_assignment, resolve_params};
use crate::script::RecipeDef;
use crate::tui::state::AppState;

/// The loaded recipes with their descriptions, for the status line.
pub(super) fn recipe_list(state: &AppState) -> String {
    if state.recipes.is_empty() {
        return "no recipes are loaded: put .rhai files in the recipes directory (--recipes)"
            .into();
    }
    let names: Vec<String> = state
        .recipes
        .iter()
        .map(|r| format!("{}: {}", r.name, r.description))
        .collect();
    format!("recipes · {}", names.join(" · "))
}

/// The loaded recipe a `:recipe` or `:debug` line names (`rest`: `NAME
/// [PARAM=VALUE]…`, a value with spaces in quotes) and its parameters,
/// checked against what it declares. `None`, with the reason on the status
/// line, when the name or a parameter is wrong.
pub(super) fn named_recipe(
    state: &mut AppState,
    rest: &str,
) -> Option<(RecipeDef, serde_json::Map<String, serde_json::Value>)> {
    let mut words = crate::actions::command_words(rest).into_iter();
    let name = words.next().unwrap_or_default();
    if name.is_empty() {
        let listed = recipe_list(state);
        state.notice(true, format!("which recipe? {listed}"));
        return None;
    }
    let Some(recipe) = state.recipes.iter().find(|r| r.name == name) else {
        let available: Vec<&str> = state.recipes.iter().map(|r| r.name.as_str()).collect();
        let available = if available.is_empty() {
            "none".to_string()
        } else {
            available.join(", ")
        };
        state.notice(
            true,
            format!("no recipe named `{name}` is loaded; available: {available}"),
        );
        return None;
    };
    let mut given = serde_json::Map::new();
    for word in words {
        match parse_assignment(&word) {
            Ok((key, value)) => {
                given.insert(key, value);
            }
            Err(_) => {
                state.notice(true, format!("`{word}`: write a parameter as NAME=VALUE"));
                return None;
            }
        }
    }
    let params = match resolve_params(&recipe.name, &recipe.params, &given) {
        Ok(params) => params,
        Err(why) => {
            state.notice(true, why.to_string());
            return None;
        }
    };
    Some((recipe.clone(), params))
}
