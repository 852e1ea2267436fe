//! `webagent bench sitemap`.

use crate::sitemap::Sitemap;
use anyhow::Context;
use clap::Args;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use super::fmt_duration;

/// Flags of `webagent bench sitemap`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Pages in the generated sitemap.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub pages: usize,
    /// Timed repetitions of each query and path.
    #[arg(long, default_value_t = 200, value_name = "K")]
    pub iterations: usize,
}

/// Runs `webagent bench sitemap`: generates a sitemap, then times loading,
/// resolve and search against naive baselines measured in the same run.
pub fn bench(args: BenchArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(args.pages >= 10, "--pages must be at least 10");
    anyhow::ensure!(args.iterations >= 1, "--iterations must be at least 1");
    let yaml = bench_support::generate_yaml(args.pages);
    let mut load_times = Vec::new();
    let mut sitemap = None;
    for _ in 0..3 {
        let start = Instant::now();
        sitemap = Some(Sitemap::from_yaml_str(&yaml)?);
        load_times.push(start.elapsed());
    }
    let sitemap = sitemap.context("no sitemap was generated")?;
    let naive = bench_support::NaiveSitemap::new(&sitemap);

    println!(
        "sitemap bench: {} pages, {} KiB of YAML, {} iterations per case{}",
        sitemap.page_count(),
        yaml.len() / 1024,
        args.iterations,
        if cfg!(debug_assertions) {
            " (debug build: use --release for real figures)"
        } else {
            ""
        }
    );
    println!(
        "load (parse + validate + index): median {}",
        fmt_duration(median(&mut load_times))
    );
    println!();
    println!(
        "{:<24} {:>11} {:>11} {:>13} {:>8}  input",
        "case", "median", "p95", "baseline med", "speedup"
    );

    let mid = args.pages / 2;
    let sample = sitemap
        .pages()
        .nth(mid)
        .map(|p| p.node.title.clone())
        .unwrap_or_default();
    let searches = [
        ("search exact title", sample.clone()),
        ("search CJK keyword", "退款".to_string()),
        ("search CJK sentence", "我要看退款".to_string()),
        ("search typo", "shipmnets".to_string()),
        ("search miss", "zzqxv".to_string()),
    ];
    for (name, query) in &searches {
        let ours = time_runs(args.iterations, || sitemap.search(query, 10).len());
        let base = time_runs(args.iterations.min(50), || naive.search(query, 10).len());
        // Same top result, or the comparison would be meaningless.
        let top = sitemap.search(query, 1).first().map(|m| m.path.to_string());
        let naive_top = naive.search(query, 1).first().cloned();
        let note = if top == naive_top {
            ""
        } else {
            "  (top result differs)"
        };
        report(name, query, ours, base, note);
    }

    let deep = bench_support::sample_paths(&sitemap);
    for (name, path) in &deep {
        let ours = time_runs(args.iterations, || sitemap.resolve(path).is_some());
        let base = time_runs(args.iterations, || naive.resolve(path).is_some());
        report(&format!("resolve {name}"), path, ours, base, "");
    }
    Ok(ExitCode::SUCCESS)
}

fn report(name: &str, input: &str, mut ours: Vec<Duration>, mut base: Vec<Duration>, note: &str) {
    let med = median(&mut ours);
    let p95 = percentile(&mut ours, 95);
    let base_med = median(&mut base);
    let ratio = base_med.as_secs_f64() / med.as_secs_f64().max(1e-9);
    println!(
        "{:<24} {:>11} {:>11} {:>13} {:>7.1}x  {input:?}{note}",
        name,
        fmt_duration(med),
        fmt_duration(p95),
        fmt_duration(base_med),
        ratio
    );
}

fn time_runs<T>(iterations: usize, mut f: impl FnMut() -> T) -> Vec<Duration> {
    // One untimed run warms caches and lazy allocations.
    std::hint::black_box(f());
    (0..iterations)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f());
            start.elapsed()
        })
        .collect()
}

fn median(samples: &mut [Duration]) -> Duration {
    percentile(samples, 50)
}

fn percentile(samples: &mut [Duration], pct: usize) -> Duration {
    samples.sort();
    if samples.is_empty() {
        return Duration::ZERO;
    }
    let rank = (samples.len() * pct).div_ceil(100).clamp(1, samples.len());
    samples[rank - 1]
}

/// The generated site and the naive baselines the bench compares against.
mod bench_support {
    use crate::sitemap::Sitemap;

    const NOUNS: &[&str] = &[
        "orders",
        "invoices",
        "customers",
        "products",
        "reports",
        "shipments",
        "coupons",
        "reviews",
        "payments",
        "refunds",
        "warehouses",
        "suppliers",
        "campaigns",
        "returns",
        "tickets",
        "contracts",
    ];
    const NOUNS_ZH: &[&str] = &[
        "訂單",
        "發票",
        "客戶",
        "產品",
        "報表",
        "出貨",
        "優惠券",
        "評論",
        "付款",
        "退款",
        "倉庫",
        "供應商",
        "活動",
        "退貨",
        "工單",
        "合約",
    ];

    /// A sitemap of about `pages` pages: sections of list pages, each list
    /// page with a dynamic detail page, like a large admin app.
    pub(super) fn generate_yaml(pages: usize) -> String {
        let mut out = String::from(
            "title: Generated admin\ndescription: Synthetic site for the benchmark\nchildren:\n",
        );
        let mut count = 1;
        let mut section = 0;
        while count < pages {
            let noun = NOUNS[section % NOUNS.len()];
            let zh = NOUNS_ZH[section % NOUNS.len()];
            out.push_str(&format!(
                "  area-{section}:\n    title: Area {section} {noun}\n    requiresAuth: true\n    keywords: [{noun}, {zh}]\n    children:\n"
            ));
            count += 1;
            let mut item = 0;
            while item < 48 && count < pages {
                let noun = NOUNS[(section + item) % NOUNS.len()];
                let zh = NOUNS_ZH[(section + item) % NOUNS.len()];
                out.push_str(&format!(
                    "      {noun}-{item}:\n        title: {} {section}-{item}\n        description: Manage {noun} of area {section}\n        actions: [view, filter, export]\n        keywords: [{noun}{item}, {zh}{item}]\n",
                    capitalize(noun)
                ));
                count += 1;
                if count < pages {
                    out.push_str(&format!(
                        "        children:\n          \":id\":\n            title: {} detail {section}-{item}\n            actions: [view, edit, delete]\n",
                        capitalize(noun)
                    ));
                    count += 1;
                }
                item += 1;
            }
            section += 1;
        }
        out
    }

    fn capitalize(word: &str) -> String {
        let mut chars = word.chars();
        match chars.next() {
            Some(first) => first.to_uppercase().chain(chars).collect(),
            None => String::new(),
        }
    }

    /// Concrete paths to resolve: deep dynamic, static list page, miss.
    pub(super) fn sample_paths(sitemap: &Sitemap) -> Vec<(&'static str, String)> {
        let patterns: Vec<&str> = sitemap.pages().map(|p| p.pattern).collect();
        let dynamic = patterns
            .iter()
            .rev()
            .find(|p| p.ends_with(":id"))
            .map(|p| p.replace(":id", "98765"))
            .unwrap_or_else(|| "/".into());
        let list = patterns
            .iter()
            .skip(patterns.len() * 3 / 4)
            .find(|p| !p.contains(':'))
            .map(|p| p.to_string())
            .unwrap_or_else(|| "/".into());
        vec![
            ("dynamic", dynamic),
            ("static", list),
            ("miss", "/no/such/page".into()),
        ]
    }

    /// A sitemap without indices: what a straightforward implementation
    /// does per call.
    pub(super) struct NaiveSitemap<'a> {
        sitemap: &'a Sitemap,
        patterns: Vec<String>,
    }

    impl<'a> NaiveSitemap<'a> {
        pub(super) fn new(sitemap: &'a Sitemap) -> Self {
            NaiveSitemap {
                sitemap,
                patterns: sitemap.pages().map(|p| p.pattern.to_string()).collect(),
            }
        }

        /// Compares the path with every pattern, segment by segment;
        /// among matches the one with the most static segments wins.
        pub(super) fn resolve(&self, path: &str) -> Option<&str> {
            let path = path.split(['?', '#']).next().unwrap_or("");
            let wanted: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
            let mut best: Option<(usize, &str)> = None;
            for pattern in &self.patterns {
                let segments: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
                if segments.len() != wanted.len() {
                    continue;
                }
                let mut statics = 0;
                let ok = segments.iter().zip(&wanted).all(|(p, w)| {
                    if p.starts_with(':') {
                        true
                    } else {
                        statics += 1;
                        p == w
                    }
                });
                if ok && best.is_none_or(|(s, _)| statics > s) {
                    best = Some((statics, pattern));
                }
            }
            best.map(|(_, p)| p)
        }

        /// Lowercases every page's text on each call and compares every
        /// word, with the same kinds of match and weights as the index.
        pub(super) fn search(&self, query: &str, limit: usize) -> Vec<String> {
            let query = query.to_lowercase();
            let terms: Vec<String> = crate::sitemap::search_words(&query);
            let mut scored: Vec<(f64, usize, String)> = Vec::new();
            for page in self.sitemap.pages() {
                let node = page.node;
                let mut fields: Vec<(f64, String)> = vec![(10.0, node.title.to_lowercase())];
                fields.extend(node.keywords.iter().map(|k| (9.0, k.to_lowercase())));
                fields.extend(node.actions.iter().map(|a| (6.0, a.to_lowercase())));
                if let Some(d) = &node.description {
                    fields.push((4.0, d.to_lowercase()));
                }
                fields.push((
                    8.0,
                    page.pattern.rsplit('/').next().unwrap_or("").to_lowercase(),
                ));
                let mut total = 0.0;
                for term in &terms {
                    let mut best: f64 = 0.0;
                    for (weight, text) in &fields {
                        for word in crate::sitemap::search_words(text) {
                            let q = crate::sitemap::match_quality(term, &word);
                            best = best.max(q * weight);
                        }
                    }
                    total += best;
                }
                if total > 0.0 {
                    scored.push((total, page.depth, page.pattern.to_string()));
                }
            }
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            scored.into_iter().take(limit).map(|(_, _, p)| p).collect()
        }
    }
}
