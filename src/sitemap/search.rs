//! Ranked search over a sitemap's pages.
//!
//! Everything a query is compared with is lowercased and split into words
//! once, when the sitemap loads. The distinct words form a vocabulary with,
//! for each word, the pages and fields it occurs in; a query scans the
//! vocabulary (far smaller than the pages' total text on generated or
//! repetitive sites) and scores pages through those postings.
//!
//! Scoring, per query word and page, keeps the best of: an exact word, a
//! partial word (prefix or substring; for CJK, either text containing the
//! other, since CJK is written without spaces) and, for Latin words, a small
//! typo (edit distance 1 for words of 4–6 letters, 2 from 7). Each kind is
//! weighted by the field it hit. A query equal to a whole title or keyword
//! gets a bonus, so exact beats partial beats fuzzy.

use std::collections::HashMap;

use super::node::{SitemapNode, SitemapPage};
use crate::spelling::edit_distance;

/// One ranked search result.
#[derive(Debug, Clone)]
pub struct SearchMatch<'a> {
    /// The page's path pattern, e.g. `/settings/billing`.
    pub path: &'a str,
    /// The page's title.
    pub title: &'a str,
    /// Relevance; higher is better, only meaningful within one query.
    pub score: f64,
    /// The page itself.
    pub node: &'a SitemapNode,
}

/// Where in a page a word was found; earlier fields weigh more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    Title,
    Keyword,
    /// The page's own path segment.
    Segment,
    Action,
    Description,
    /// A segment of an ancestor page, so "settings billing" finds
    /// `/settings/billing`.
    ParentSegment,
}

impl Field {
    fn weight(self) -> f64 {
        match self {
            Field::Title => 10.0,
            Field::Keyword => 9.0,
            Field::Segment => 8.0,
            Field::Action => 6.0,
            Field::Description => 4.0,
            Field::ParentSegment => 2.0,
        }
    }
}

const EXACT: f64 = 1.0;
const PREFIX: f64 = 0.75;
const CJK_PART: f64 = 0.7;
const SUBSTRING: f64 = 0.5;
const TYPO_ONE: f64 = 0.45;
const TYPO_TWO: f64 = 0.3;
const WHOLE_TITLE_BONUS: f64 = 15.0;
const WHOLE_KEYWORD_BONUS: f64 = 12.0;

/// A distinct lowercased word and where it occurs.
#[derive(Debug, Clone)]
struct Word {
    text: String,
    cjk: bool,
    char_len: usize,
    postings: Vec<(u32, Field)>,
}

/// The precomputed search data of one sitemap. It knows pages by their
/// position in tree order; the sitemap turns positions back into pages.
#[derive(Debug, Clone, Default)]
pub(crate) struct SearchIndex {
    words: Vec<Word>,
    word_ids: HashMap<String, usize>,
    /// Whole lowercased titles and keywords, for the exact-phrase bonus.
    whole: HashMap<String, Vec<(u32, Field)>>,
    /// Each page's depth, so a tie goes to the page nearer the root.
    depths: Vec<usize>,
}

impl SearchIndex {
    /// Indexes `pages`, given in tree order.
    pub(crate) fn build<'a>(pages: impl Iterator<Item = SitemapPage<'a>>) -> SearchIndex {
        let mut index = SearchIndex::default();
        for (i, page) in pages.enumerate() {
            let id = i as u32;
            let node = page.node;
            index.depths.push(page.depth);
            index.add_text(id, Field::Title, &node.title);
            index.add_whole(id, Field::Title, &node.title);
            for keyword in &node.keywords {
                index.add_text(id, Field::Keyword, keyword);
                index.add_whole(id, Field::Keyword, keyword);
            }
            for action in &node.actions {
                index.add_text(id, Field::Action, action);
            }
            if let Some(description) = &node.description {
                index.add_text(id, Field::Description, description);
            }
            let mut segments: Vec<&str> =
                page.pattern.split('/').filter(|s| !s.is_empty()).collect();
            if let Some(own) = segments.pop() {
                index.add_text(id, Field::Segment, own);
            }
            for parent in segments {
                index.add_text(id, Field::ParentSegment, parent);
            }
        }
        index
    }

    fn add_text(&mut self, page: u32, field: Field, text: &str) {
        for word in words(&text.to_lowercase()) {
            let id = match self.word_ids.get(word) {
                Some(&id) => id,
                None => {
                    let id = self.words.len();
                    self.words.push(Word {
                        text: word.to_string(),
                        cjk: word.chars().any(is_cjk),
                        char_len: word.chars().count(),
                        postings: Vec::new(),
                    });
                    self.word_ids.insert(word.to_string(), id);
                    id
                }
            };
            let postings = &mut self.words[id].postings;
            // Pages are indexed one after another, so a repeat of this page
            // and field can only be in the tail; scanning the whole list
            // would make common words ("view") quadratic in the page count.
            let repeated = postings
                .iter()
                .rev()
                .take_while(|(p, _)| *p == page)
                .any(|&(_, f)| f == field);
            if !repeated {
                postings.push((page, field));
            }
        }
    }

    fn add_whole(&mut self, page: u32, field: Field, text: &str) {
        let key = text.trim().to_lowercase();
        if !key.is_empty() {
            self.whole.entry(key).or_default().push((page, field));
        }
    }

    /// The positions (in tree order) of the pages matching `query` with
    /// their scores, best first, at most `limit` of them; `Sitemap::search`
    /// says how they are scored.
    pub(crate) fn rank(&self, query: &str, limit: usize) -> Vec<(usize, f64)> {
        let query = query.trim().to_lowercase();
        let terms: Vec<&str> = words(&query).collect();
        if terms.is_empty() || limit == 0 {
            return Vec::new();
        }
        // page -> (summed best score per term, number of terms matched)
        let mut scores: HashMap<u32, (f64, usize)> = HashMap::new();
        for term in &terms {
            let mut best: HashMap<u32, f64> = HashMap::new();
            let term_cjk = term.chars().any(is_cjk);
            let term_len = term.chars().count();
            let mut credit = |word: &Word, quality: f64| {
                for &(page, field) in &word.postings {
                    let s = quality * field.weight();
                    let slot = best.entry(page).or_insert(0.0);
                    if s > *slot {
                        *slot = s;
                    }
                }
            };
            if let Some(&id) = self.word_ids.get(*term) {
                credit(&self.words[id], EXACT);
            }
            for word in &self.words {
                if word.text == *term {
                    continue;
                }
                if let Some(quality) = partial_quality(term, term_len, term_cjk, word) {
                    credit(word, quality);
                }
            }
            for (page, s) in best {
                let entry = scores.entry(page).or_insert((0.0, 0));
                entry.0 += s;
                entry.1 += 1;
            }
        }
        if let Some(hits) = self.whole.get(&query) {
            for &(page, field) in hits {
                let bonus = match field {
                    Field::Title => WHOLE_TITLE_BONUS,
                    _ => WHOLE_KEYWORD_BONUS,
                };
                let entry = scores.entry(page).or_insert((0.0, terms.len()));
                entry.0 += bonus;
            }
        }
        let total = terms.len() as f64;
        let mut ranked: Vec<(u32, f64)> = scores
            .into_iter()
            .map(|(page, (sum, matched))| {
                // Pages matching every word of a multi-word query come first.
                let coverage = matched.min(terms.len()) as f64 / total;
                (page, sum * coverage * coverage)
            })
            .collect();
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| self.depths[a.0 as usize].cmp(&self.depths[b.0 as usize]))
                .then_with(|| a.0.cmp(&b.0))
        });
        ranked
            .into_iter()
            .take(limit)
            .map(|(page, score)| (page as usize, (score * 100.0).round() / 100.0))
            .collect()
    }
}

/// How well a query word matches a different vocabulary word, if at all.
fn partial_quality(term: &str, term_len: usize, term_cjk: bool, word: &Word) -> Option<f64> {
    if term_cjk || word.cjk {
        if word.text.contains(term) {
            return Some(CJK_PART);
        }
        // A sentence such as 我要看帳單 contains the keyword 帳單.
        if word.char_len >= 2 && term.contains(word.text.as_str()) {
            return Some(CJK_PART * 0.9);
        }
        return None;
    }
    if term_len >= 2 && word.text.starts_with(term) {
        return Some(PREFIX);
    }
    if term_len >= 3 && word.text.contains(term) {
        return Some(SUBSTRING);
    }
    // A different number is a different record, not a typo.
    if term.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let allowed = typo_allowance(term_len);
    if allowed == 0 || word.char_len.abs_diff(term_len) > allowed {
        return None;
    }
    match edit_distance(term, &word.text, allowed) {
        Some(1) => Some(TYPO_ONE),
        Some(2) => Some(TYPO_TWO),
        _ => None,
    }
}

/// How many edits a Latin query word of this length may contain.
fn typo_allowance(len: usize) -> usize {
    match len {
        0..=3 => 0,
        4..=6 => 1,
        _ => 2,
    }
}

/// Splits lowercased text into words: runs of letters and digits, where a
/// run of CJK characters is one word of its own.
pub(crate) fn words(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let start = rest.find(|c: char| c.is_alphanumeric())?;
        rest = &rest[start..];
        let first_cjk = rest.chars().next().is_some_and(is_cjk);
        let end = rest
            .find(|c: char| !c.is_alphanumeric() || is_cjk(c) != first_cjk)
            .unwrap_or(rest.len());
        let (word, tail) = rest.split_at(end);
        rest = tail;
        Some(word)
    })
}

/// Han, kana and Hangul: scripts written without spaces between words.
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0x20000..=0x2FA1F) // supplementary ideographs
}

/// The words search compares, from lowercased text (exposed for the
/// benchmark's naive baseline).
#[doc(hidden)]
pub fn search_words(text: &str) -> Vec<String> {
    words(text).map(str::to_string).collect()
}

/// How well a lowercased query word matches one lowercased text word: 1 for
/// equal, less for partial and typo matches, 0 for none (exposed for the
/// benchmark's naive baseline, which must rank like the index).
#[doc(hidden)]
pub fn match_quality(term: &str, word: &str) -> f64 {
    if term == word {
        return EXACT;
    }
    let candidate = Word {
        text: word.to_string(),
        cjk: word.chars().any(is_cjk),
        char_len: word.chars().count(),
        postings: Vec::new(),
    };
    partial_quality(
        term,
        term.chars().count(),
        term.chars().any(is_cjk),
        &candidate,
    )
    .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use crate::sitemap::Sitemap;

    fn acme() -> Sitemap {
        Sitemap::from_yaml_str(include_str!("../../sitemaps/acme.yaml")).unwrap()
    }

    fn top(sitemap: &Sitemap, query: &str) -> Option<String> {
        sitemap
            .search(query, 10)
            .first()
            .map(|m| m.path.to_string())
    }

    #[test]
    fn seed_example_finds_billing_by_chinese_word() {
        let sitemap = acme();
        let matches = sitemap.search("帳單", 10);
        assert_eq!(matches[0].path, "/settings/billing");
        assert_eq!(matches[0].title, "Billing");
        assert_eq!(top(&sitemap, "账单").as_deref(), Some("/settings/billing"));
        // CJK has no spaces: a whole request still finds the keyword in it.
        assert_eq!(
            top(&sitemap, "我要看帳單").as_deref(),
            Some("/settings/billing")
        );
        assert_eq!(top(&sitemap, "订单").as_deref(), Some("/orders"));
        // …and part of a longer CJK description matches too.
        assert_eq!(top(&sitemap, "電商").as_deref(), Some("/"));
    }

    #[test]
    fn case_typos_actions_and_segments() {
        let sitemap = acme();
        assert_eq!(
            top(&sitemap, "BILLING").as_deref(),
            Some("/settings/billing")
        );
        assert_eq!(
            top(&sitemap, "biling").as_deref(),
            Some("/settings/billing")
        );
        assert_eq!(top(&sitemap, "ordres").as_deref(), Some("/orders"));
        assert_eq!(top(&sitemap, "settigns").as_deref(), Some("/settings"));
        assert_eq!(top(&sitemap, "refund").as_deref(), Some("/orders/:id"));
        assert_eq!(top(&sitemap, "login").as_deref(), Some("/login"));
        assert_eq!(
            top(&sitemap, "settings billing").as_deref(),
            Some("/settings/billing")
        );
        assert!(sitemap.search("xylophone", 10).is_empty());
        assert!(sitemap.search("  ", 10).is_empty());
        // Three-letter words are too short to guess a typo from, and a
        // different number is not a typo.
        assert!(sitemap.search("nwe", 10).is_empty());
        let numbered =
            Sitemap::from_yaml_str("title: R\nchildren:\n  a: { title: Invoice 1235 }\n").unwrap();
        assert!(numbered.search("1234", 10).is_empty());
        assert_eq!(numbered.search("invoice 1235", 10)[0].path, "/a");
    }

    #[test]
    fn exact_beats_partial_beats_fuzzy() {
        let sitemap = Sitemap::from_yaml_str(
            "title: R\nchildren:\n  a: { title: Repost }\n  b: { title: Reports archive }\n  c: { title: Report }\n",
        )
        .unwrap();
        let matches = sitemap.search("report", 10);
        let paths: Vec<&str> = matches.iter().map(|m| m.path).collect();
        assert_eq!(paths, ["/c", "/b", "/a"]);
        assert!(matches[0].score > matches[1].score && matches[1].score > matches[2].score);
    }

    #[test]
    fn limit_caps_results() {
        let sitemap = acme();
        assert_eq!(sitemap.search("view", 2).len(), 2);
        assert!(sitemap.search("view", 0).is_empty());
    }

    #[test]
    fn template_finds_pages_in_both_chinese_scripts() {
        let sitemap = Sitemap::template();
        for query in ["帳單", "账单", "billing"] {
            assert_eq!(
                top(&sitemap, query).as_deref(),
                Some("/settings/billing"),
                "{query}"
            );
        }
        for query in ["訂單", "订单"] {
            assert_eq!(top(&sitemap, query).as_deref(), Some("/orders"), "{query}");
        }
        assert_eq!(
            top(&sitemap, "api keys").as_deref(),
            Some("/settings/api-keys")
        );
        assert_eq!(top(&sitemap, "团队").as_deref(), Some("/settings/team"));
    }
}
