//! The examples each main command's `--help` ends with. Every line that
//! starts with `webagent` is parsed by the command line's own parser in
//! the tests below, so an example cannot name a flag that is gone.

/// `webagent observe --help`.
pub const OBSERVE: &str = "\
Examples:
  webagent observe https://example.com/
  webagent observe localhost:8080/orders --full-page --json
  webagent observe https://example.com/ --screenshot page.png";

/// `webagent exec --help`.
pub const EXEC: &str = r#"Examples:
  webagent exec https://example.com/ 'click 3'
  webagent exec https://example.com/login '{"input_text":{"index":1,"text":"ann"}}' 'click 4' --json"#;

/// `webagent run --help`.
pub const RUN: &str = "\
Examples:
  webagent run 'Find the price of the Pro plan' --url https://example.com/
  webagent run 'Refund order 1002' --url http://127.0.0.1:8080/ --yes --json
  webagent run 'Export the orders of this month' --url http://127.0.0.1:8080/ --cache
The model: OPENAI_API_KEY, OPENAI_BASE_URL and WEBAGENT_MODEL, or --base-url and --model.";

/// `webagent resume --help`.
pub const RESUME: &str = "\
Examples:
  webagent resume .webagent/sessions/2026-11-28T10-00-00Z.jsonl
  webagent resume .webagent/sessions/2026-11-28T10-00-00Z.jsonl --headless --yes";

/// `webagent demo --help`.
pub const DEMO: &str = "\
Examples:
  webagent demo
  webagent demo --serve-only --port 8080
  webagent demo --write my-demo";

/// `webagent tui --help`.
pub const TUI: &str = "\
Examples:
  webagent tui --url https://example.com/
  webagent tui --url http://127.0.0.1:8080/ --task 'Open the newest order' --theme light";

/// `webagent recipe --help`.
pub const RECIPE: &str = "\
Examples:
  webagent recipe check recipes/
  webagent recipe run recipes/acme.rhai --recipe orders_overview --url http://127.0.0.1:8080/
  webagent recipe run recipes/acme.rhai --recipe new_order --param quantity=3 --url http://127.0.0.1:8080/";

/// `webagent export --help`.
pub const EXPORT: &str = "\
Examples:
  webagent export .webagent/sessions/2026-11-28T10-00-00Z.jsonl --recipe recipes/refund.rhai";

/// `webagent record --help`.
pub const RECORD: &str = "\
Examples:
  webagent record http://127.0.0.1:8080/login --no-tui --headed --name sign_in
  webagent record localhost:8080/orders --no-tui --out recipes/refund.rhai
While it records, type `undo` or `goal N TEXT` and Enter; Ctrl-C or the end of
input writes the recipe.";

/// `webagent mcp --help`.
pub const MCP: &str = "\
Examples:
  webagent mcp --url https://example.com/ --allow-domain example.com
  webagent mcp --workbench --url http://127.0.0.1:8080/
  webagent mcp --http 0";

/// `webagent test --help`.
pub const TEST: &str = "\
Examples:
  webagent test recipes/acme.suite.yaml --demo
  webagent test suites/ --app-url http://127.0.0.1:8080/ --workers 2 --junit junit.xml --report report
  webagent test suites/smoke.yaml --shard 1/3 --json";

/// `webagent session --help`.
pub const SESSION: &str = "\
Examples:
  webagent session start shop http://127.0.0.1:8080/
  webagent observe --session shop
  webagent exec --session shop 'click 3' --json
  webagent observe --session shop --delta
  webagent session list
  webagent session stop shop
Exit codes of --session commands: 1 an action failed, 2 usage, 3 refused by policy or person,
4 no such session, 5 the session's process or browser is gone.";

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::Cli;

    /// The words of a shell line: single quotes group, nothing else is
    /// special in these examples.
    fn words(line: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut word = String::new();
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '\'' => quoted = !quoted,
                ' ' if !quoted => {
                    if !word.is_empty() {
                        words.push(std::mem::take(&mut word));
                    }
                }
                _ => word.push(c),
            }
        }
        if !word.is_empty() {
            words.push(word);
        }
        words
    }

    #[test]
    fn every_example_parses_as_the_command_line_it_shows() {
        let all = [
            OBSERVE, EXEC, RUN, RESUME, DEMO, TUI, RECIPE, EXPORT, RECORD, MCP, TEST, SESSION,
        ];
        let mut seen = 0;
        for block in all {
            assert!(block.starts_with("Examples:"), "{block}");
            for line in block
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with("webagent "))
            {
                if let Err(error) = Cli::try_parse_from(words(line)) {
                    panic!("`{line}` does not parse:\n{error}");
                }
                seen += 1;
            }
        }
        assert!(seen >= 20, "{seen} examples");
    }
}
