//! `webagent actions [--json]`: the action catalog, as a table for people
//! or as JSON for tools.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::actions::{ActionSpec, Catalog};

/// Flags of `webagent actions`.
#[derive(Debug, clap::Args)]
pub struct ActionsArgs {
    /// Print a JSON array of {name, description, risk, schema} instead of
    /// the table.
    #[arg(long)]
    pub json: bool,
    /// Only the built-in actions, without custom actions from scripts.
    #[arg(long)]
    pub builtin: bool,
    /// A Rhai script file or directory (repeatable; default: config
    /// `paths.recipes` when it exists) whose custom actions are listed
    /// too, with the schema the model sees.
    #[arg(long, value_name = "PATH")]
    pub recipes: Vec<PathBuf>,
    /// Read this config file instead of ./webagent.yaml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Runs `webagent actions`.
pub fn run(args: ActionsArgs) -> anyhow::Result<ExitCode> {
    let catalog = if args.builtin {
        Catalog::builtin()
    } else {
        let loaded = match super::flags::load(args.config.as_deref(), &Default::default()) {
            Ok(loaded) => loaded,
            Err(code) => return Ok(code),
        };
        let paths = crate::session::Prepared::script_paths(&loaded.config, &args.recipes);
        match crate::session::load_scripts(&paths).and_then(|scripts| {
            scripts
                .catalog()
                .map_err(|e| crate::session::SessionError::Usage(e.to_string()))
        }) {
            Ok(catalog) => catalog,
            Err(error) => {
                eprintln!("error: {error}");
                return Ok(ExitCode::from(super::exit::EXIT_USAGE));
            }
        }
    };
    let text = if args.json {
        let mut json = serde_json::to_string_pretty(catalog.specs())?;
        json.push('\n');
        json
    } else {
        render_table(catalog.specs())
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        // `webagent actions | head` closes the pipe early; that is not an
        // error worth reporting.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(err) => Err(anyhow::anyhow!("writing the catalog to stdout: {err}")),
    }
}

/// Width the descriptions are wrapped to, so the table reads at 80 columns.
const WRAP: usize = 76;

/// The readable table: one line per action with its risk and parameters,
/// the description wrapped underneath, and the command-line argument order.
pub fn render_table(specs: &[ActionSpec]) -> String {
    let name_width = specs.iter().map(|s| s.name.len()).max().unwrap_or(4).max(4);
    let mut text = format!("{:<name_width$}  {:<9}  PARAMETERS\n", "NAME", "RISK");
    for spec in specs {
        let row = format!(
            "{:<name_width$}  {:<9}  {}",
            spec.name,
            spec.risk.as_str(),
            spec.params_summary()
        );
        text.push_str(row.trim_end());
        text.push('\n');
        for line in wrap(&spec.description, WRAP) {
            text.push_str(&format!("    {line}\n"));
        }
        if !spec.positional.is_empty() {
            text.push_str(&format!("    command: {}\n", spec.usage()));
        }
    }
    text.push_str(
        "\nTargets are an element index from the listing or a CSS selector\n\
         (tag, #id, .class, [attr], [attr=value], :nth-child(); no *, :has() or :not()).\n\
         Risk: read has no side effects; interact changes the page; commit submits,\n\
         leaves the site, uploads or writes files (a click on a submit button or on a\n\
         link to another site is commit); dangerous runs code.\n",
    );
    text
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_lists_every_action_with_risk_and_parameters() {
        let catalog = Catalog::builtin();
        let table = render_table(catalog.specs());
        for spec in catalog.specs() {
            assert!(
                table.contains(&format!("\n{:<18}", spec.name)),
                "{} missing",
                spec.name
            );
        }
        let input_line = table
            .lines()
            .find(|l| l.starts_with("input_text "))
            .unwrap();
        assert!(input_line.contains("interact"), "{input_line}");
        assert!(
            input_line.contains("index|selector, text, clear=true"),
            "{input_line}"
        );
        assert!(table
            .lines()
            .any(|l| l.starts_with("execute_javascript") && l.contains("dangerous")));
        assert!(table.contains("command: scroll <direction> [pages] [target]"));
        assert!(
            table.lines().all(|l| l.chars().count() <= 80),
            "table wider than 80 columns"
        );
    }

    #[test]
    fn json_has_exactly_name_description_risk_schema() {
        let value = serde_json::to_value(Catalog::builtin().specs()).unwrap();
        let entries = value.as_array().unwrap();
        assert!(entries.len() >= 32);
        for entry in entries {
            let keys: Vec<&str> = entry
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(keys, ["name", "description", "risk", "schema"]);
            assert_eq!(entry["schema"]["type"], "object");
        }
        let click = entries.iter().find(|e| e["name"] == "click").unwrap();
        assert_eq!(click["risk"], "interact");
    }
}
