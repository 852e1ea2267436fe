//! How far a word is from another, for the "did you mean" hints of every
//! kind of input: action and parameter names, sitemap fields, config keys,
//! and the typo-tolerant sitemap search.

/// Optimal-string-alignment distance (insertions, deletions, substitutions
/// and swaps of neighbours each cost 1), or `None` when above `max`.
pub fn edit_distance(a: &str, b: &str, max: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let width = b.len() + 1;
    let mut prev2 = vec![0usize; width];
    let mut prev: Vec<usize> = (0..width).collect();
    let mut cur = vec![0usize; width];
    for i in 1..=a.len() {
        cur[0] = i;
        let mut row_min = cur[0];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
            row_min = row_min.min(d);
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[b.len()];
    (d <= max).then_some(d)
}

/// How many edits still count as a typo of `name`.
pub fn typo_budget(name: &str) -> usize {
    (name.chars().count() / 3).clamp(1, 3)
}

/// Whether `short` reads as an abbreviation of `long`: same first letter
/// and its letters appear in order (`idx` for `index`, `btn` for `button`).
pub fn abbreviates(short: &str, long: &str) -> bool {
    if short.chars().count() < 2 || short.chars().next() != long.chars().next() {
        return false;
    }
    let mut rest = long.chars();
    short.chars().all(|c| rest.any(|l| l == c))
}

/// The candidate closest to `word` (ignoring case), if close enough to be
/// a likely typo or an abbreviation of it.
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let lower = word.to_lowercase();
    candidates
        .iter()
        .filter_map(|c| {
            let candidate = c.to_lowercase();
            match edit_distance(&lower, &candidate, typo_budget(c)) {
                Some(d) => Some((d, *c)),
                None => abbreviates(&lower, &candidate).then_some((usize::MAX, *c)),
            }
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_swaps_as_one() {
        assert_eq!(edit_distance("ordres", "orders", 2), Some(1));
        assert_eq!(edit_distance("biling", "billing", 2), Some(1));
        assert_eq!(edit_distance("kitten", "sitting", 2), None);
        assert_eq!(edit_distance("kitten", "sitting", 3), Some(3));
        assert_eq!(edit_distance("clik", "click", 3), Some(1));
    }

    #[test]
    fn the_closest_candidate_is_a_typo_or_an_abbreviation() {
        assert_eq!(closest("clik", &["click", "hover"]), Some("click"));
        assert_eq!(closest("idx", &["index", "text"]), Some("index"));
        assert_eq!(
            closest("max_step", &["max_steps", "approve"]),
            Some("max_steps")
        );
        assert_eq!(closest("zzz", &["click", "hover"]), None);
    }
}
