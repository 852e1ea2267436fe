//! `webagent bench prompt`: how big each part of a step's request is, and
//! whether the part before the page stays the same from step to step (so a
//! server's prefix cache can reuse it).
//!
//! The pages are real observations (the Acme demo's pages, and a list of
//! 20,000 items) made by Chromium; the history is a run of 20 plausible
//! steps on the same page, written by this benchmark, so the figures do
//! not depend on a model.

use std::time::Duration;

use crate::actions::Catalog;
use crate::agent::{agent_tool, system_prompt, user_prompt, HistoryEntry, StepPrompt};
use crate::browser::{BrowserSession, LaunchOptions, ObserveOptions};
use crate::demo::{DemoSite, DEMO_EMAIL, DEMO_PASSWORD};
use crate::dom::PageState;
use crate::events::Reflection;
use crate::llm::estimate_tokens;
use crate::serve::PageServer;
use crate::sitemap::Sitemap;

/// The later of the two steps measured.
pub const LATE_STEP: usize = 20;

/// The sizes of one page's requests.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PromptFigures {
    /// Which page.
    pub page: String,
    /// Characters of the tool and the system prompt.
    pub fixed_chars: usize,
    /// Characters of the page part (position in the site map and page) at
    /// step 1 (it is the same page at step 20).
    pub page_chars: usize,
    /// Characters of the history at step 1.
    pub history_chars_first: usize,
    /// Characters of the history at step 20.
    pub history_chars_late: usize,
    /// Characters of the whole request at step 1 and step 20.
    pub total_chars: (usize, usize),
    /// Steps whose request did not begin with the previous request's part
    /// before the page (empty: the prefix held at every step).
    pub prefix_breaks: Vec<usize>,
}

impl PromptFigures {
    /// Whether every request began with everything before the page of the
    /// one before it.
    pub fn prefix_identical(&self) -> bool {
        self.prefix_breaks.is_empty()
    }
}

/// Measures the requests of steps 1 to [`LATE_STEP`] on `page`.
pub fn measure(name: &str, page: &PageState, sitemap: Option<&Sitemap>) -> PromptFigures {
    let tool = agent_tool(&Catalog::builtin()).to_json().to_string();
    let system = system_prompt(&crate::secrets::Secrets::new());
    let fixed_chars = tool.chars().count() + system.chars().count();
    let task = "Find the newest unpaid order, ship it, and tell me its number.";
    let mut history: Vec<HistoryEntry> = Vec::new();
    let mut previous_stable: Option<String> = None;
    let mut figures = PromptFigures {
        page: name.to_string(),
        fixed_chars,
        page_chars: 0,
        history_chars_first: 0,
        history_chars_late: 0,
        total_chars: (0, 0),
        prefix_breaks: Vec::new(),
    };
    for step in 1..=LATE_STEP {
        let user = user_prompt(&StepPrompt {
            task,
            step,
            max_steps: 40,
            history: &history,
            page,
            sitemap,
            sitemaps_elsewhere: false,
        });
        let history_chars = section_chars(&user, "<history>", "</history>");
        let stable_end = user.find("<step>").unwrap_or(user.len());
        let page_start = user
            .find("<site_position>")
            .or_else(|| user.find("<page>"))
            .unwrap_or(user.len());
        if let Some(stable) = &previous_stable {
            if !user.starts_with(stable.as_str()) {
                figures.prefix_breaks.push(step);
            }
        }
        // What the next request must begin with: this one up to the end of
        // its history (the next one adds a step there).
        let stable = user[..stable_end].trim_end_matches("</history>\n\n");
        previous_stable = Some(stable.to_string());
        let total = fixed_chars + user.chars().count();
        if step == 1 {
            figures.page_chars = user[page_start..].chars().count();
            figures.history_chars_first = history_chars;
            figures.total_chars.0 = total;
        }
        if step == LATE_STEP {
            figures.history_chars_late = history_chars;
            figures.total_chars.1 = total;
        }
        history.push(sample_step(step, &page.url));
    }
    figures
}

/// Characters between the two tags, tags included.
fn section_chars(text: &str, open: &str, close: &str) -> usize {
    match (text.find(open), text.find(close)) {
        (Some(start), Some(end)) => text[start..end + close.len()].chars().count(),
        _ => 0,
    }
}

/// A step as a model typically writes it: a sentence of evaluation, a
/// growing memory, a goal, one action and a short result.
fn sample_step(step: usize, url: &str) -> HistoryEntry {
    HistoryEntry {
        step,
        reflection: Reflection {
            evaluation_previous_goal: format!(
                "Success: the orders list shows the filter applied at step {step}."
            ),
            memory: format!(
                "Checked {step} orders so far; unpaid ones seen: #1004, #1011. Still looking for the newest."
            ),
            next_goal: "Open the next unpaid order to compare its date.".to_string(),
        },
        action: format!("click {{\"index\":{}}}", 10 + step),
        result: "ok".to_string(),
        url: url.to_string(),
    }
}

/// Observes the demo's pages and a 20,000-item list in a browser launched
/// with `launch`, and measures each.
pub async fn run(launch: LaunchOptions) -> anyhow::Result<Vec<PromptFigures>> {
    let demo = DemoSite::start().await?;
    let list = PageServer::start().await?;
    let items = super::observe::bench_pages()
        .into_iter()
        .find(|(name, _)| name == "items-20000")
        .map(|(_, html)| html)
        .ok_or_else(|| anyhow::anyhow!("the 20,000-item benchmark page is missing"))?;
    list.html("/items-20000", items);
    let sitemap = Sitemap::from_yaml_str(include_str!("../../sitemaps/acme.yaml"))?;
    let session = BrowserSession::start(launch).await?;
    let tab = session.new_tab("about:blank").await?;
    let limit = Duration::from_secs(30);
    let options = ObserveOptions::default();
    let mut figures = Vec::new();
    tab.navigate(&demo.url("/login"), limit).await?;
    figures.push(measure(
        "demo /login",
        &tab.observe(&options).await?,
        Some(&sitemap),
    ));
    // Sign in as the demo's form would, so the other pages show.
    let sign_in = format!(
        "fetch('/login', {{method: 'POST', headers: {{'Content-Type': 'application/x-www-form-urlencoded'}}, body: 'email={}&password={}', credentials: 'same-origin'}}).then(r => r.status)",
        DEMO_EMAIL.replace('@', "%40"),
        DEMO_PASSWORD
    );
    tab.eval(&sign_in).await?;
    for path in ["/dashboard", "/orders", "/orders/new", "/settings/team"] {
        tab.navigate(&demo.url(path), limit).await?;
        let page = tab.observe(&options).await?;
        if page.url.contains("/login") {
            anyhow::bail!("signing in to the demo failed; {path} showed the sign-in page");
        }
        figures.push(measure(&format!("demo {path}"), &page, Some(&sitemap)));
    }
    tab.navigate(&list.url("/items-20000"), limit).await?;
    figures.push(measure("items-20000", &tab.observe(&options).await?, None));
    Ok(figures)
}

/// The figures as a table, tokens estimated as everywhere else in
/// webagent ([`estimate_tokens`]).
pub fn table(figures: &[PromptFigures]) -> String {
    let mut out = format!(
        "{:<20} {:>14} {:>14} {:>14} {:>14} {:>16} {:>7}\n",
        "page", "fixed", "page part", "history @1", "history @20", "total @1 / @20", "prefix"
    );
    let both = |chars: usize| format!("{chars}c/{}t", estimate_tokens(chars));
    for f in figures {
        out.push_str(&format!(
            "{:<20} {:>14} {:>14} {:>14} {:>14} {:>16} {:>7}\n",
            f.page,
            both(f.fixed_chars),
            both(f.page_chars),
            both(f.history_chars_first),
            both(f.history_chars_late),
            format!(
                "{}t/{}t",
                estimate_tokens(f.total_chars.0),
                estimate_tokens(f.total_chars.1)
            ),
            if f.prefix_identical() {
                "same".to_string()
            } else {
                format!("broke {:?}", f.prefix_breaks)
            },
        ));
    }
    out.push_str("c = characters, t = estimated tokens (3.5 characters a token)\n");
    if let Some(first) = figures.first() {
        let limit = crate::agent::FIXED_PART_LIMIT;
        out.push_str(&format!(
            "fixed part (step tool as serialized JSON + system prompt): {} characters; goal <= {limit}: {}\n",
            first.fixed_chars,
            if first.fixed_chars <= limit { "met" } else { "MISSED" }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_page_keeps_its_prefix_and_the_fixed_part_is_counted_once() {
        let page = PageState {
            observation: 1,
            url: "http://127.0.0.1:1/orders".into(),
            title: "Orders".into(),
            tabs: Vec::new(),
            scroll: Default::default(),
            elements: Vec::new(),
            left_out: Default::default(),
            full_page: false,
            listing: "[1]<a>Orders</a>\n".into(),
            page_text: Default::default(),
            extract_ms: 0.0,
        };
        let figures = measure("t", &page, None);
        assert!(figures.prefix_identical(), "{figures:?}");
        assert!(
            figures.fixed_chars <= crate::agent::FIXED_PART_LIMIT,
            "{}",
            figures.fixed_chars
        );
        assert!(figures.history_chars_late > figures.history_chars_first);
        assert!(figures.page_chars > 0);
        assert!(table(&[figures]).contains("same"));
    }
}
