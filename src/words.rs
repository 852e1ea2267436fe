//! Counts in words the way people read them: `1 step`, `2 steps`, with
//! the noun agreeing with its number wherever a count is shown.

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
