//! Words as webagent reads and writes them: counts the way people read
//! them (`1 step`, `2 steps`), and the snake_case words that name actions
//! and recipes.

/// Whether `text` is a snake_case word: lowercase letters, digits and
/// `_`, starting with a letter, at most 64 characters (an action's or a
/// recipe's name, which is also its Rhai function's).
pub fn is_snake_case(text: &str) -> bool {
    text.len() <= 64
        && text.starts_with(|c: char| c.is_ascii_lowercase())
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// `n` followed by `one` or `many` as `n` asks (`counted(1, "step",
/// "steps")` is `1 step`).
pub fn counted(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_noun_agrees_with_its_number() {
        assert_eq!(counted(0, "step", "steps"), "0 steps");
        assert_eq!(counted(1, "step", "steps"), "1 step");
        assert_eq!(counted(2, "follow-up", "follow-ups"), "2 follow-ups");
    }
}
