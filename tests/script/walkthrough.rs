//! The first-recipe walkthrough of docs/recipes.md, run for real: its
//! recipe and its suite case are taken from the page and run against the
//! demo with the page's own commands, so the page cannot drift from what
//! works.

use crate::support::chromium::runtime;
use crate::support::cli::{output_of, said, webagent};
use crate::support::scratch::scratch_dir;

/// The fenced block of `lang` that follows `heading` on the page.
fn block_after(page: &str, heading: &str, lang: &str) -> String {
    let section = page
        .split(heading)
        .nth(1)
        .unwrap_or_else(|| panic!("docs/recipes.md has `{heading}`"));
    let fence = format!("```{lang}\n");
    section
        .split(&fence)
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .unwrap_or_else(|| panic!("a {lang} block after `{heading}`"))
        .to_string()
}

#[test]
fn the_first_recipe_walkthrough_runs_on_the_demo_headless_and_as_a_suite_case() {
    let page = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/recipes.md"),
    )
    .expect("docs/recipes.md");
    let dir = scratch_dir("walkthrough");
    let recipe = dir.join("first_order.rhai");
    std::fs::write(&recipe, block_after(&page, "## Your first recipe", "rhai"))
        .expect("the recipe is written");
    let suite = dir.join("first.suite.yaml");
    std::fs::write(
        &suite,
        block_after(&page, "The same recipe as a suite case", "yaml"),
    )
    .expect("the suite is written");
    let recipe = recipe.display().to_string();
    let sessions = dir.join("sessions").display().to_string();
    runtime().block_on(async {
        let site = webagent::demo::DemoSite::start()
            .await
            .expect("the demo starts");
        let mut check = webagent();
        check.args(["recipe", "check", &recipe]);
        let check = output_of(check).await;
        assert_eq!(check.status.code(), Some(0), "{}", said(&check));

        let mut run = webagent();
        run.env("ACME_PASSWORD", "demo")
            .args(["recipe", "run", &recipe, "--url", &site.url("/")])
            .args([
                "--secret",
                "ACME_PASSWORD",
                "--param",
                "customer=Grace Hopper",
                "--yes",
            ])
            .args(["--sessions-dir", &sessions]);
        let run = output_of(run).await;
        assert_eq!(run.status.code(), Some(0), "{}", said(&run));
        let out = String::from_utf8_lossy(&run.stdout);
        assert!(
            out.contains("created an order for Grace Hopper"),
            "{}",
            said(&run)
        );
        assert!(
            !out.contains("demo\n") && !out.contains("\"demo\""),
            "{}",
            said(&run)
        );

        let mut case = webagent();
        // As the page says it, from the folder the files are in.
        case.current_dir(&dir).env("ACME_PASSWORD", "demo").args([
            "test",
            "first.suite.yaml",
            "--demo",
            "--secret",
            "ACME_PASSWORD",
        ]);
        let case = output_of(case).await;
        assert_eq!(case.status.code(), Some(0), "{}", said(&case));
    });
}
