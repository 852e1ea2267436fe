//! Which cases run here: `--grep`, `--tag` and `--shard I/N`.

use std::str::FromStr;

use super::file::Suite;

/// One CI machine's part of a suite: the `index`-th of `count` parts
/// (1-based, as `--shard 2/4` is written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which part, from 1.
    pub index: usize,
    /// How many parts.
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || format!("--shard {text:?}: write I/N, e.g. 2/4, with 1 <= I <= N");
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let index: usize = index.trim().parse().map_err(|_| bad())?;
        let count: usize = count.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What picks the cases to run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Run only cases whose name contains one of these `|`-separated
    /// words, ignoring case.
    pub grep: Option<String>,
    /// Run only cases carrying one of these tags (none: every case).
    pub tags: Vec<String>,
    /// Run only this part of what the other filters leave.
    pub shard: Option<Shard>,
}

/// A case picked to run: its suite's and its own position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Picked {
    /// Which suite, in the order given.
    pub suite: usize,
    /// Which case of it, in file order.
    pub case: usize,
}

impl Selection {
    /// The cases to run, in suite and file order. Sharding deals out the
    /// cases the other filters leave in turn (the first to part 1, the
    /// second to part 2, …), so every machine of a matrix, given the same
    /// files and filters, takes its own cases and together they run each
    /// exactly once, in parts that differ by at most one case.
    pub fn pick(&self, suites: &[Suite]) -> Vec<Picked> {
        let words: Vec<String> = self
            .grep
            .as_deref()
            .map(|g| {
                g.split('|')
                    .map(|w| w.trim().to_lowercase())
                    .filter(|w| !w.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let filtered = suites.iter().enumerate().flat_map(|(s, suite)| {
            suite
                .cases
                .iter()
                .enumerate()
                .map(move |(c, case)| (Picked { suite: s, case: c }, case))
        });
        let kept: Vec<Picked> = filtered
            .filter(|(_, case)| {
                let name = case.name.to_lowercase();
                words.is_empty() || words.iter().any(|w| name.contains(w))
            })
            .filter(|(_, case)| {
                self.tags.is_empty() || case.tags.iter().any(|t| self.tags.contains(t))
            })
            .map(|(picked, _)| picked)
            .collect();
        match self.shard {
            None => kept,
            Some(shard) => kept
                .into_iter()
                .enumerate()
                .filter(|(n, _)| n % shard.count == shard.index - 1)
                .map(|(_, picked)| picked)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn suite(cases: usize) -> Suite {
        let mut text = String::from("cases:\n");
        for n in 0..cases {
            let tag = if n % 3 == 0 { "smoke" } else { "full" };
            text.push_str(&format!(
                "  - {{name: case {n}, url: /, task: t, tags: [{tag}]}}\n"
            ));
        }
        Suite::parse(Path::new("s.yaml"), &text).expect("a suite")
    }

    #[test]
    fn shards_run_every_case_exactly_once() {
        let suites = [suite(7), suite(1), suite(4)];
        let all = Selection::default().pick(&suites);
        assert_eq!(all.len(), 12);
        for count in 1..=4 {
            let mut seen = Vec::new();
            for index in 1..=count {
                let part = Selection {
                    shard: Some(Shard { index, count }),
                    ..Selection::default()
                }
                .pick(&suites);
                assert!(
                    part.len().abs_diff(12 / count) <= 1,
                    "{index}/{count}: {part:?}"
                );
                seen.extend(part);
            }
            seen.sort_by_key(|p| (p.suite, p.case));
            assert_eq!(seen, all, "N = {count}");
        }
    }

    #[test]
    fn grep_and_tags_narrow_the_cases() {
        let suites = [suite(7)];
        let grep = Selection {
            grep: Some("CASE 1|case 5".into()),
            ..Selection::default()
        };
        assert_eq!(grep.pick(&suites).len(), 2);
        let tags = Selection {
            tags: vec!["smoke".into()],
            ..Selection::default()
        };
        assert_eq!(tags.pick(&suites).len(), 3);
    }

    #[test]
    fn a_shard_is_written_i_of_n() {
        assert_eq!("2/4".parse(), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/2", "3/2", "2", "a/b", "1/0"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
