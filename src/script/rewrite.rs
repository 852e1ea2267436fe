//! Writing a healed recipe back: each healed step's line changes in place
//! (its list of locators, or the lines of the actions that replaced it),
//! under a comment saying what changed, so the next replay needs no model.

use super::export::{locators_literal, rhai_string};
use super::host::{HealedStep, Replacement};

/// `source` with every healed step rewritten. Lines are those of the
/// source the recipe ran from; anything else in the file stays as it was.
pub fn rewrite_source(source: &str, healed: &[HealedStep]) -> String {
    let mut lines: Vec<String> = source.lines().map(str::to_string).collect();
    // From the bottom up, so inserted lines do not move the ones still to
    // change; a line healed twice (a loop) changes once.
    let mut edits: Vec<Edit> = Vec::new();
    for step in healed {
        if step.line > 0 && !edits.iter().any(|e| e.line == step.line) {
            edits.push(Edit {
                line: step.line,
                kind: EditKind::Step(step),
            });
        }
        if let Some((line, goal, pattern)) = &step.page {
            if *line > 0 && !edits.iter().any(|e| e.line == *line) {
                edits.push(Edit {
                    line: *line,
                    kind: EditKind::Page {
                        number: step.step,
                        goal,
                        pattern,
                    },
                });
            }
        }
    }
    edits.sort_by_key(|e| std::cmp::Reverse(e.line));
    for edit in edits {
        let at = edit.line - 1;
        let Some(original) = lines.get(at).cloned() else {
            continue;
        };
        let indent: String = original.chars().take_while(|c| c.is_whitespace()).collect();
        let replaced: Vec<String> = match edit.kind {
            EditKind::Step(step) => {
                let comment = format!("{indent}// healed step {}: {}", step.step, step.change);
                match &step.replacement {
                    Replacement::Locators(locators) => {
                        match replace_first_list(&original, &locators_literal(locators)) {
                            Some(line) => vec![comment, line],
                            None => vec![comment, original.clone()],
                        }
                    }
                    Replacement::Lines(new) if new.is_empty() => vec![format!(
                        "{comment} (no longer needed; was: {})",
                        original.trim()
                    )],
                    Replacement::Lines(new) => std::iter::once(comment)
                        .chain(new.iter().map(|l| format!("{indent}{l}")))
                        .collect(),
                }
            }
            EditKind::Page {
                number,
                goal,
                pattern,
            } => vec![
                format!("{indent}// healed step {number}: the step now runs on {pattern}"),
                format!(
                    "{indent}step({number}, {}, {});",
                    rhai_string(goal),
                    rhai_string(pattern)
                ),
            ],
        };
        lines.splice(at..=at, replaced);
    }
    let mut out = lines.join("\n");
    if source.ends_with('\n') {
        out.push('\n');
    }
    out
}

struct Edit<'a> {
    line: usize,
    kind: EditKind<'a>,
}

enum EditKind<'a> {
    Step(&'a HealedStep),
    Page {
        number: usize,
        goal: &'a str,
        pattern: &'a str,
    },
}

/// `line` with its first `[…]` list (outside strings) replaced by `list`.
fn replace_first_list(line: &str, list: &str) -> Option<String> {
    let mut depth = 0usize;
    let mut start = None;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '/' if line[i..].starts_with("//") => return None,
            '[' => {
                if depth == 0 {
                    start = Some(i);
                }
                depth += 1;
            }
            ']' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    let start = start?;
                    return Some(format!("{}{list}{}", &line[..start], &line[i + 1..]));
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::Locator;

    const RECIPE: &str = "fn replay(params) {\n    step(1, \"sign in\", \"/login\");\n    fill([\"id:email\", \"css:#f > input\"], params.email); // typed\n    step(2, \"go\", \"/orders\");\n    click([\"id:go\", \"text:Go [now]\"]);\n}\n";

    #[test]
    fn a_healed_list_changes_in_place_under_a_comment() {
        let healed = vec![HealedStep {
            step: 1,
            line: 3,
            replacement: Replacement::Locators(vec![
                Locator::Label("Email".into()),
                Locator::Css("#email-2".into()),
            ]),
            change: "id:email → label:Email".into(),
            page: None,
        }];
        let out = rewrite_source(RECIPE, &healed);
        assert!(out.contains(
            "    // healed step 1: id:email → label:Email\n    fill([\"label:Email\", \"css:#email-2\"], params.email); // typed\n"
        ), "{out}");
        assert!(out.ends_with("}\n"));
    }

    #[test]
    fn other_actions_replace_the_line_and_a_moved_page_changes_its_check() {
        let healed = vec![HealedStep {
            step: 2,
            line: 5,
            replacement: Replacement::Lines(vec![
                "click([\"text:Menu\"]);".into(),
                "click([\"text:Go\"]);".into(),
            ]),
            change: "id:go → text:Menu".into(),
            page: Some((4, "go".into(), "/orders/all".into())),
        }];
        let out = rewrite_source(RECIPE, &healed);
        assert!(
            out.contains(
                "    // healed step 2: the step now runs on /orders/all\n    step(2, \"go\", \"/orders/all\");\n    // healed step 2: id:go → text:Menu\n    click([\"text:Menu\"]);\n    click([\"text:Go\"]);\n}"
            ),
            "{out}"
        );
    }

    #[test]
    fn lists_inside_strings_and_comments_are_left_alone() {
        assert_eq!(
            replace_first_list("click([\"text:a [b]\"]); // [x]", "[\"id:y\"]").as_deref(),
            Some("click([\"id:y\"]); // [x]")
        );
        assert_eq!(replace_first_list("// click([\"a\"])", "[]"), None);
    }
}
