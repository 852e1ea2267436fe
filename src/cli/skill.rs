//! `webagent skill`: the skill file (SKILL.md) that teaches a coding agent
//! to drive a browser through webagent's named sessions. The action list
//! is generated from the catalog, so the file never drifts from the
//! binary that prints it.

use std::path::PathBuf;
use std::process::ExitCode;

use super::exit::EXIT_USAGE;
use crate::actions::Catalog;

/// Flags of `webagent skill`.
#[derive(Debug, clap::Args)]
pub struct SkillArgs {
    /// Write the skill to DIR/webagent/SKILL.md instead of printing it
    /// (e.g. `~/.claude/skills`).
    #[arg(long, value_name = "DIR")]
    pub install: Option<PathBuf>,
    /// With --install: replace a SKILL.md that differs from this one.
    #[arg(long, requires = "install")]
    pub force: bool,
}

/// Runs `webagent skill`.
pub fn run(args: SkillArgs) -> anyhow::Result<ExitCode> {
    let text = skill_text(&Catalog::builtin());
    let Some(dir) = args.install else {
        print!("{text}");
        return Ok(ExitCode::SUCCESS);
    };
    let folder = dir.join("webagent");
    let file = folder.join("SKILL.md");
    match std::fs::read_to_string(&file) {
        Ok(existing) if existing == text => {
            println!("{} is already this skill", file.display());
            return Ok(ExitCode::SUCCESS);
        }
        Ok(_) if !args.force => {
            eprintln!(
                "error: {} exists and differs from this skill; run again with --force to replace it",
                file.display()
            );
            return Ok(ExitCode::from(EXIT_USAGE));
        }
        Ok(_) => eprintln!("replacing {}, which differed", file.display()),
        Err(_) => {}
    }
    std::fs::create_dir_all(&folder)
        .map_err(|e| anyhow::anyhow!("creating {}: {e}", folder.display()))?;
    std::fs::write(&file, text).map_err(|e| anyhow::anyhow!("writing {}: {e}", file.display()))?;
    println!("wrote {}", file.display());
    Ok(ExitCode::SUCCESS)
}

/// The instructions before the action list.
const INSTRUCTIONS: &str = r#"---
name: webagent
description: Drive a real Chromium from the shell with webagent sessions - open a web app, read its indexed element listing, click and type by index, see what changed, save sign-ins and run recipes, with secrets you never see and a person who approves risky actions. Use it to explore, test or script a web app.
---

# webagent: a browser that stays open between your commands

A session keeps one Chromium tab alive across commands, so you can look,
think, then act on the same page.

## Start, look, act, stop

```sh
webagent session start app http://127.0.0.1:8080/   # prints the trace path
webagent observe --session app                       # the page as an indexed listing
webagent exec --session app 'click 3'                # act by index
webagent observe --session app --delta               # only what changed since the last listing
webagent session list                                # name, page, age, idle time, trace
webagent session stop app                            # closes the browser, removes its profile
```

- Add `--json` to `observe` and `exec` for machine-readable output (one
  JSON object per line).
- The listing shows one interactive element per line, `[N]<tag …>text`,
  indented under its parent. Act with the number N. Indices stay the same
  for an element as long as the document lives; a new element gets a new
  number.
- An index refers to the session's last listing. If the element is gone
  the action fails with `not_found` and says to look again: run
  `observe --session NAME` and use the new listing.
- Several actions in one `exec` run in order, e.g.
  `webagent exec --session app 'input_text 2 "ann@example.com"' 'click 5'`.
- An action is either the one-line form (`click 3`, `scroll down`) or JSON
  (`'{"click":{"index":3}}'`).
- Commands sent to one session run one after the other, in order. Use one
  session name per independent browser (cookies are not shared).
- A session stops by itself after `session.idle_timeout` seconds without a
  command (default 1800).

## Secrets

Never type a password yourself. Start the session with
`--secret NAME` (the value comes from the environment variable NAME, or
`--secrets-file FILE`) and write `<secret>NAME</secret>` where the value
goes: `webagent exec --session app 'input_text 4 "<secret>pw</secret>"'`.
You never see the value; it is filled in only on the sites it belongs to.

## Saving sign-ins and recipes

- `webagent state save FILE --session app` writes the session's cookies
  and local storage; `webagent session start app2 URL --state FILE`
  starts signed in.
- Recipes are Rhai scripts that replay without a model:
  `webagent recipe check recipes/` and
  `webagent recipe run recipes/app.rhai --recipe NAME --url URL`.
  `webagent actions` lists every action with its parameters.

## Approval by a person

Risky actions (`commit`: submitting, leaving the site, uploading;
`dangerous`: running JavaScript) need approval. A session started with
`--approve risky` (the default) refuses them with exit code 3 unless it was
started with `--yes`. To have a person decide, ask them to run
`webagent tui --attach NAME` in a terminal: while they watch, a risky
action your command asks for waits for their decision, then runs (exit 0)
or is refused (exit 3, with their reason). When a command is refused, stop
and ask the person whether to go on; do not try to get around the
refusal.

## Exit codes

- 0: every action succeeded
- 1: an action failed (the output says why: not_found, timeout, …)
- 2: usage: a wrong flag, name or action
- 3: refused by the policy (allowed domains, a secret's sites) or by the person
- 4: no such session (start it first)
- 5: the session's process or browser is gone; the error names its trace.
  Start a new session.

## Actions

"#;

/// SKILL.md: the instructions, then every action of `catalog` with its
/// risk, its one-line form and what it does.
pub fn skill_text(catalog: &Catalog) -> String {
    let mut text = INSTRUCTIONS.to_string();
    for spec in catalog.specs() {
        let usage = if spec.positional.is_empty() {
            spec.name.clone()
        } else {
            spec.usage()
        };
        let description = spec.description.split_whitespace().collect::<Vec<_>>();
        text.push_str(&format!(
            "- `{usage}` ({}): {}\n",
            spec.risk.as_str(),
            description.join(" ")
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skill_has_front_matter_and_every_action() {
        let catalog = Catalog::builtin();
        let text = skill_text(&catalog);
        assert!(text.starts_with("---\nname: webagent\ndescription: "));
        for spec in catalog.specs() {
            assert!(
                text.contains(&format!("- `{}", spec.name)),
                "{} is missing",
                spec.name
            );
        }
    }
}
