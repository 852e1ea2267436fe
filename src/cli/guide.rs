//! The user guide (README.md and every page under docs/) checked against the
//! command line it describes. Every `webagent …` command a page shows, in a
//! code block or in inline code, must walk the real clap definition: each
//! subcommand must exist and each `--flag` must be one of that subcommand's
//! own, so a page cannot drift from the binary. A flag named on its own in
//! inline code must exist on some command. Placeholders (`URL`, `FILE`,
//! `NAME`) stand for values; anything the parser cannot read as one command
//! (alternatives in brackets) is refused, so each form is written out.
//!
//! The README must link every page, and every relative link of every page
//! must reach a file (and a heading, when it names one).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::CommandFactory as _;

use crate::cli::Cli;

/// A place in the guide, for error messages: `docs/suites.md:12`.
#[derive(Debug, Clone)]
struct Place {
    file: String,
    line: usize,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// What a page holds that the binary must agree with.
#[derive(Debug, Default)]
struct Page {
    /// Command lines from code blocks and inline code, with where they are.
    commands: Vec<(Place, String)>,
    /// Inline code that is a flag on its own (`--workers N`).
    flags: Vec<(Place, String)>,
    /// Relative link targets (`docs/suites.md#ci`, `#exit-codes`).
    links: Vec<(Place, String)>,
    /// The anchors of its headings, as GitHub makes them.
    anchors: BTreeSet<String>,
    /// Markdown the reader cannot take apart (an unclosed code span).
    broken: Vec<String>,
}

/// The guide's pages: README.md, then docs/*.md by name.
fn guide_files(root: &Path) -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("the docs folder")
        .map(|entry| entry.expect("a docs entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages.insert(0, root.join("README.md"));
    pages
}

/// Reads a page: fenced code blocks give command lines (a trailing `\`
/// joins the next line), other text gives inline code spans, links and
/// headings.
fn read_page(file: &str, text: &str) -> Page {
    let mut page = Page::default();
    let mut fence: Option<&str> = None;
    let mut pending: Option<(Place, String)> = None;
    let mut paragraph: Vec<(usize, &str)> = Vec::new();
    let mut slugs: Vec<String> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let place = Place {
            file: file.to_string(),
            line: n + 1,
        };
        let trimmed = line.trim_start();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
                continue;
            }
            let (start, mut joined) = pending.take().unwrap_or((place, String::new()));
            joined.push_str(line.trim());
            match joined.strip_suffix('\\') {
                Some(head) => pending = Some((start, format!("{head} "))),
                None => page.commands.extend(commands_in(&start, &joined)),
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            read_paragraph(file, &std::mem::take(&mut paragraph), &mut page);
            fence = Some(&trimmed[..3]);
            continue;
        }
        if let Some(heading) = trimmed
            .strip_prefix('#')
            .map(|h| h.trim_start_matches('#'))
            .filter(|h| h.starts_with(' '))
        {
            read_paragraph(file, &std::mem::take(&mut paragraph), &mut page);
            let slug = slug(heading);
            // GitHub numbers a repeated heading's anchor: `x`, `x-1`, …
            let seen = slugs.iter().filter(|s| **s == slug).count();
            slugs.push(slug.clone());
            page.anchors.insert(match seen {
                0 => slug,
                n => format!("{slug}-{n}"),
            });
            continue;
        }
        if trimmed.is_empty() {
            read_paragraph(file, &std::mem::take(&mut paragraph), &mut page);
        } else {
            paragraph.push((n + 1, line));
        }
    }
    read_paragraph(file, &paragraph, &mut page);
    if fence.is_some() {
        page.broken
            .push(format!("{file}: a code block is never closed"));
    }
    page
}

/// Inline code and links of one paragraph (a code span may run over a line
/// break, so the paragraph is read as a whole).
fn read_paragraph(file: &str, lines: &[(usize, &str)], page: &mut Page) {
    let Some(&(first, _)) = lines.first() else {
        return;
    };
    let mut code = false;
    let mut span = String::new();
    let mut span_start = first;
    let mut prose = String::new();
    for &(n, line) in lines {
        for c in line.chars() {
            match (c, code) {
                ('`', false) => {
                    code = true;
                    span_start = n;
                }
                ('`', true) => {
                    code = false;
                    let place = Place {
                        file: file.to_string(),
                        line: span_start,
                    };
                    let text = std::mem::take(&mut span);
                    let text = text.trim();
                    if text.starts_with("--") {
                        page.flags.push((place, text.to_string()));
                    } else {
                        page.commands.extend(commands_in(&place, text));
                    }
                    prose.push_str("CODE");
                }
                (c, true) => span.push(c),
                (c, false) => prose.push(c),
            }
        }
        if code {
            span.push(' ');
        }
        for target in links_in(&prose) {
            page.links.push((
                Place {
                    file: file.to_string(),
                    line: n,
                },
                target,
            ));
        }
        prose.clear();
    }
    if code {
        page.broken
            .push(format!("{file}:{span_start}: a code span is never closed"));
    }
}

/// The targets of Markdown links and images in prose: `[text](target)`.
fn links_in(prose: &str) -> Vec<String> {
    prose
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(target, _)| target.to_string()))
        .collect()
}

/// A heading's anchor as GitHub makes it: lower case, letters, digits,
/// `-` and `_` kept, spaces made `-`, everything else dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The words of a shell line: quotes group, a backslash takes the next
/// character as it is, `#` at a word's start begins a comment.
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (c, quote) {
            (q, None) if q == '\'' || q == '"' => {
                quote = Some(q);
                word.get_or_insert_with(String::new);
            }
            (q, Some(open)) if q == open => quote = None,
            ('\\', q) if q != Some('\'') => {
                if let Some(next) = chars.next() {
                    word.get_or_insert_with(String::new).push(next);
                }
            }
            ('#', None) if word.is_none() => break,
            (c, None) if c.is_whitespace() => words.extend(word.take()),
            (c, _) => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// The `webagent` commands of one line: each starts at a word `webagent`
/// (or a path ending in `/webagent`, or after `cargo run … --`) and ends at
/// the end of the line or a shell operator.
fn commands_in(place: &Place, line: &str) -> Vec<(Place, String)> {
    let words = words(line);
    let mut commands = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = words[i].as_str();
        let start = if word == "webagent" || word.ends_with("/webagent") {
            Some(i + 1)
        } else if word == "cargo" && words.get(i + 1).is_some_and(|w| w == "run") {
            words[i..]
                .iter()
                .position(|w| w == "--")
                .map(|at| i + at + 1)
        } else {
            None
        };
        let Some(start) = start else {
            i += 1;
            continue;
        };
        let end = words[start..]
            .iter()
            .position(|w| is_operator(w))
            .map_or(words.len(), |at| start + at);
        commands.push((place.clone(), words[start..end].join("\u{1f}")));
        i = end.max(start);
    }
    commands
}

/// A word that ends a command on a shell line.
fn is_operator(word: &str) -> bool {
    matches!(word, "|" | "||" | "&&" | ";" | "&") || word.starts_with('>') || word.starts_with("2>")
}

/// Walks one command's words (joined by U+001F) through the command line's
/// definition; the error says which word does not belong and why.
fn check_command(root: &clap::Command, command: &str) -> Result<(), String> {
    let words: Vec<&str> = command.split('\u{1f}').filter(|w| !w.is_empty()).collect();
    let mut current = root;
    let mut path = String::from("webagent");
    let mut positionals = 0;
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        i += 1;
        if word.starts_with('[') {
            return Err(format!(
                "`{word}` in `{path}`: write each form as a command of its own"
            ));
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            };
            let Some(arg) = current.get_arguments().find(|a| a.get_long() == Some(name)) else {
                return Err(format!("`{path}` has no flag `--{name}`"));
            };
            if !value && takes_next_word(arg) {
                i += 1;
                // A flag of many values (`--workers 1 2 4`) takes words up
                // to the next flag.
                while takes_many(arg) && words.get(i).is_some_and(|w| !w.starts_with('-')) {
                    i += 1;
                }
            }
            continue;
        }
        if let Some(short) = word.strip_prefix('-').filter(|s| !s.is_empty()) {
            let mut letters = short.chars();
            let (Some(letter), None) = (letters.next(), letters.next()) else {
                return Err(format!("`{word}` in `{path}` is no flag"));
            };
            let Some(arg) = current
                .get_arguments()
                .find(|a| a.get_short() == Some(letter))
            else {
                return Err(format!("`{path}` has no flag `-{letter}`"));
            };
            if takes_next_word(arg) {
                i += 1;
            }
            continue;
        }
        if current.has_subcommands() && positionals == 0 {
            let Some(sub) = current.find_subcommand(word) else {
                let names: Vec<&str> = current.get_subcommands().map(|s| s.get_name()).collect();
                return Err(format!(
                    "`{path}` has no subcommand `{word}` (it has {})",
                    names.join(", ")
                ));
            };
            current = sub;
            path = format!("{path} {word}");
            continue;
        }
        let slots: Vec<&clap::Arg> = current.get_positionals().collect();
        let fits = match slots.get(positionals) {
            Some(_) => true,
            None => slots.last().is_some_and(|last| takes_many(last)),
        };
        if !fits {
            return Err(format!(
                "`{path}` takes {} value(s) without a flag; `{word}` is one too many",
                slots.len()
            ));
        }
        positionals += 1;
    }
    Ok(())
}

/// Whether a flag written without `=` takes the next word as its value.
fn takes_next_word(arg: &clap::Arg) -> bool {
    arg.get_num_args().is_some_and(|n| n.min_values() > 0) && !arg.is_require_equals_set()
}

/// Whether a positional takes any number of values (`<SUITE>...`).
fn takes_many(arg: &clap::Arg) -> bool {
    arg.get_num_args().is_some_and(|n| n.max_values() > 1)
}

/// Every long flag of every command, for a flag named on its own.
fn all_long_flags(command: &clap::Command, into: &mut BTreeSet<String>) {
    into.extend(
        command
            .get_arguments()
            .filter_map(|a| a.get_long().map(str::to_string)),
    );
    for sub in command.get_subcommands() {
        all_long_flags(sub, into);
    }
}

/// The command line's definition, built so that global flags and `--help`
/// appear on every subcommand.
fn cli() -> clap::Command {
    let mut command = Cli::command();
    command.build();
    command
}

/// Checks a page's commands and lone flags; one message per fault.
fn command_faults(root: &clap::Command, page: &Page) -> Vec<String> {
    let mut flags = BTreeSet::new();
    all_long_flags(root, &mut flags);
    let mut faults = page.broken.clone();
    for (place, command) in &page.commands {
        if let Err(error) = check_command(root, command) {
            faults.push(format!("{place}: {error}"));
        }
    }
    for (place, text) in &page.flags {
        let name: String = text[2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if !flags.contains(&name) {
            faults.push(format!("{place}: no command has a flag `--{name}`"));
        }
    }
    faults
}

#[test]
fn every_command_the_guide_shows_names_subcommands_and_flags_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cli = cli();
    let mut faults = Vec::new();
    let mut commands = 0;
    for path in guide_files(root) {
        let file = path.strip_prefix(root).expect("inside the crate");
        let text = std::fs::read_to_string(&path).expect("a guide page");
        let page = read_page(&file.display().to_string(), &text);
        commands += page.commands.len();
        faults.extend(command_faults(&cli, &page));
    }
    assert!(
        faults.is_empty(),
        "the guide disagrees with the command line:\n{}",
        faults.join("\n")
    );
    assert!(
        commands >= 100,
        "only {commands} commands found in the guide"
    );
}

#[test]
fn every_guide_page_is_linked_from_the_readme_and_every_link_reaches_its_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = guide_files(root);
    let pages: Vec<(PathBuf, Page)> = files
        .iter()
        .map(|path| {
            let file = path.strip_prefix(root).expect("inside the crate");
            let text = std::fs::read_to_string(path).expect("a guide page");
            (path.clone(), read_page(&file.display().to_string(), &text))
        })
        .collect();
    let mut faults = Vec::new();
    let mut from_readme = BTreeSet::new();
    for (path, page) in &pages {
        for (place, target) in &page.links {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (target.as_str(), None),
            };
            let to = if file.is_empty() {
                path.clone()
            } else {
                path.parent().expect("a folder").join(file)
            };
            let Ok(to) = to.canonicalize() else {
                faults.push(format!("{place}: `{target}` names no file"));
                continue;
            };
            if *path == files[0] {
                from_readme.insert(to.clone());
            }
            let Some(anchor) = anchor else { continue };
            let heading = pages
                .iter()
                .find(|(p, _)| p.canonicalize().is_ok_and(|p| p == to))
                .map(|(_, page)| page.anchors.contains(anchor));
            if heading != Some(true) {
                faults.push(format!("{place}: `{target}` names no heading of that page"));
            }
        }
    }
    for path in &files[1..] {
        let path = path.canonicalize().expect("a page");
        if !from_readme.contains(&path) {
            faults.push(format!(
                "README.md links no `{}`",
                path.strip_prefix(root.canonicalize().expect("the crate"))
                    .expect("inside the crate")
                    .display()
            ));
        }
    }
    assert!(faults.is_empty(), "broken links:\n{}", faults.join("\n"));
    assert!(files.len() >= 9, "{} guide pages", files.len());
}

#[test]
fn a_gone_flag_a_wrong_subcommand_and_a_stray_value_are_each_caught() {
    let cli = cli();
    let page = read_page(
        "docs/example.md",
        "Run `webagent run TASK --url URL --gone-flag`.\n\
         \n\
         ```sh\n\
         webagent sitemap lookup FILE\n\
         webagent observe URL EXTRA # a comment\n\
         webagent test SUITE --shard 1/2 \\\n  --removed\n\
         cargo run --release -- demo --serve-only && webagent config --json\n\
         ```\n\
         \n\
         The `--nowhere` flag, and `webagent exec URL [--json]`.\n",
    );
    let faults = command_faults(&cli, &page);
    let expected = [
        "docs/example.md:1: `webagent run` has no flag `--gone-flag`",
        "docs/example.md:4: `webagent sitemap` has no subcommand `lookup`",
        "docs/example.md:5: `webagent observe` takes 1 value(s) without a flag; `EXTRA` is one too many",
        "docs/example.md:6: `webagent test` has no flag `--removed`",
        "docs/example.md:8: `webagent config` has no flag `--json`",
        "docs/example.md:11: no command has a flag `--nowhere`",
        "docs/example.md:11: `[--json]` in `webagent exec`: write each form as a command of its own",
    ];
    for fault in expected {
        assert!(
            faults.iter().any(|f| f.starts_with(fault)),
            "missing {fault:?} in {faults:#?}"
        );
    }
    assert_eq!(faults.len(), expected.len(), "{faults:#?}");
}

#[test]
fn anchors_are_the_ones_github_makes() {
    assert_eq!(
        slug(" Test suites (`webagent test`)"),
        "test-suites-webagent-test"
    );
    assert_eq!(
        slug("Real sites: what each part covers"),
        "real-sites-what-each-part-covers"
    );
    let page = read_page("x.md", "# A\n\n## A\n");
    assert!(page.anchors.contains("a") && page.anchors.contains("a-1"));
}
