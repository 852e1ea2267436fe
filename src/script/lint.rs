//! What `recipe check` finds in a file that compiles and loads but would
//! fail or mislead when it runs: a call to a function that neither the
//! file nor the host defines, and a recipe parameter the recipe never
//! reads. Both come from walking the compiled AST, so strings and
//! comments never count.

use std::collections::BTreeSet;

use rhai::{ASTNode, Engine, Expr, Position, Stmt, AST};

use super::api;
use super::error::Located;
use super::loaded::LoadedFile;

/// Functions Rhai runs itself, which no module lists.
const SYNTACTIC: &[&str] = &[
    "print",
    "debug",
    "type_of",
    "Fn",
    "call",
    "curry",
    "is_shared",
    "is_def_fn",
    "is_def_var",
];

/// The problems of a loaded file, in the order they appear.
pub(crate) fn lint(engine: &Engine, file: &LoadedFile) -> Vec<Located> {
    let mut found = undefined_calls(engine, &file.ast, &file.file);
    for recipe in &file.recipes {
        for param in &recipe.params {
            if !reads_param(&file.ast, &recipe.name, &param.name) {
                found.push(Located::at(
                    &file.file,
                    declaration(&file.ast, &recipe.name),
                    format!(
                        "the recipe {} declares the parameter {} but never reads it \
                         (as params.{} or params[\"{}\"])",
                        recipe.name, param.name, param.name, param.name
                    ),
                ));
            }
        }
    }
    for located in &mut found {
        located.fill_source(&file.source);
    }
    found.sort_by_key(|l| (l.line, l.column));
    found
}

/// Calls to names that no script function, host function, standard
/// package function or variable (a closure) stands for.
fn undefined_calls(engine: &Engine, ast: &AST, file: &str) -> Vec<Located> {
    let mut known: BTreeSet<String> = engine
        .gen_fn_signatures(true)
        .iter()
        .filter_map(|sig| sig.split_once('(').map(|(name, _)| name.trim().to_string()))
        .collect();
    known.extend(SYNTACTIC.iter().map(|s| s.to_string()));
    let mut scripted: Vec<String> = Vec::new();
    for function in ast.iter_functions() {
        scripted.push(function.name.to_string());
        known.extend(function.params.iter().map(|p| p.to_string()));
    }
    known.extend(scripted.iter().cloned());
    let mut calls: Vec<(String, Position)> = Vec::new();
    ast.walk(&mut |path: &[ASTNode]| {
        match path.last() {
            Some(ASTNode::Stmt(Stmt::Var(var, ..))) => {
                known.insert(var.0.name.to_string());
            }
            Some(ASTNode::Stmt(Stmt::FnCall(call, pos)))
            | Some(ASTNode::Expr(Expr::FnCall(call, pos)))
                if call.op_token.is_none() && !call.is_qualified() =>
            {
                calls.push((call.name.to_string(), *pos));
            }
            _ => {}
        }
        true
    });
    let mut candidates: Vec<&str> = api::host_names();
    candidates.extend(scripted.iter().map(String::as_str));
    calls
        .into_iter()
        .filter(|(name, _)| !known.contains(name))
        .map(|(name, pos)| {
            let hint = crate::spelling::closest(&name, &candidates)
                .map(|near| format!("; did you mean {near}?"))
                .unwrap_or_default();
            Located::at(
                file,
                pos,
                format!("{name} is not a function of this script or of the host{hint}"),
            )
        })
        .collect()
}

/// Whether the file reads `param` (`params.NAME`, `params["NAME"]`), or
/// hands the recipe's parameters on whole, where any reading is out of
/// sight.
fn reads_param(ast: &AST, recipe: &str, param: &str) -> bool {
    let Some(own) = ast
        .iter_functions()
        .find(|f| f.name == recipe && f.params.len() == 1)
        .map(|f| f.params[0].to_string())
    else {
        // A recipe whose function takes no map cannot read any.
        return false;
    };
    let mut read = false;
    ast.walk(&mut |path: &[ASTNode]| {
        read = match path.last() {
            Some(ASTNode::Expr(Expr::Property(property, _))) => property.2 == param,
            Some(ASTNode::Expr(Expr::Index(index, ..))) => {
                matches!(&index.rhs, Expr::StringConstant(key, _) if key == param)
            }
            Some(ASTNode::Expr(Expr::FnCall(call, _)) | ASTNode::Stmt(Stmt::FnCall(call, _))) => {
                call.args
                    .iter()
                    .any(|arg| matches!(arg, Expr::Variable(var, ..) if var.1 == own))
            }
            _ => false,
        };
        !read
    });
    read
}

/// Where `recipe(NAME, …)` declares the recipe `name`.
fn declaration(ast: &AST, name: &str) -> Position {
    let mut at = Position::NONE;
    ast.walk(&mut |path: &[ASTNode]| {
        if let Some(
            ASTNode::Stmt(Stmt::FnCall(call, pos)) | ASTNode::Expr(Expr::FnCall(call, pos)),
        ) = path.last()
        {
            if call.name == "recipe"
                && matches!(call.args.first(), Some(Expr::StringConstant(n, _)) if n == name)
            {
                at = *pos;
                return false;
            }
        }
        true
    });
    at
}
