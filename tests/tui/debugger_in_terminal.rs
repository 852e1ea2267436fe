//! The recipe debugger in a real terminal: `recipe run FILE --debug` opens
//! the workbench stopped on the recipe's first line, on a served page. A
//! breakpoint set in the source pane is run to and shows the variables;
//! two steps over show the element list changed by a click; a step that
//! fails stops on its error, a `:` action puts the page right and the
//! step is retried; a saved edit is restarted from the top and runs to the
//! end; `:debug NAME` starts the loaded recipe again.

use crate::conversation_in_terminal::start_workbench;
use crate::support::llm_server;
use crate::support::scratch::scratch_dir;
use crate::support::tmux::{
    require_tmux_and_chromium, tmux_keys, tmux_text, wait_for_screen, TmuxSession,
};

/// A panel opened by a button, and a button that adds the `#late`
/// button the recipe clicks last.
const PAGE: &str = r#"<!doctype html><title>Walk</title>
<button id="open" onclick="document.getElementById('panel').hidden=false">Open panel</button>
<div id="panel" hidden>Panel open <button id="close">Close panel</button></div>
<button id="add" onclick="if(!document.getElementById('late')){const b=document.createElement('button');b.id='late';b.textContent='Late button';document.body.append(b)}">Add late</button>"#;

const RECIPE: &str = r##"recipe("walk", "opens the panel and clicks the late button");
fn walk() {
    let greeting = "hello";
    click("#open");
    let opened = text().contains("Panel open");
    log(`panel open: ${opened}`);
    click("#late");
    log("walked");
}
"##;

/// Types `line` on the `:` line and runs it.
fn command(session: &str, line: &str) {
    tmux_keys(session, &[":"]);
    tmux_text(session, line);
    tmux_keys(session, &["Enter"]);
}

#[test]
fn a_recipe_is_stepped_through_fixed_by_hand_edited_and_restarted() {
    crate::support::chromium::runtime().block_on(async {
        require_tmux_and_chromium();
        let pages = webagent::serve::PageServer::start()
            .await
            .expect("serve pages");
        pages.html("/page", PAGE.to_string());
        let llm = llm_server::LlmServer::start(Vec::new()).await;
        let dir = scratch_dir("debugger-in-terminal");
        std::fs::write(dir.join("walk.rhai"), RECIPE).expect("the recipe is written");
        let session = TmuxSession(format!("webagent-debugger-{}", std::process::id()));
        start_workbench(
            &session.0,
            &dir,
            &llm,
            &format!(
                "recipe run walk.rhai --debug --url {} --sessions-dir sessions",
                pages.url("/page")
            ),
        );
        let s = &session.0;
        let screen = wait_for_screen(s, "stopped at line 3 (entry)").await;
        assert!(screen.contains("Debug walk · line 3 · entry"), "{screen}");
        assert!(
            screen.contains("▶  3     let greeting = \"hello\";"),
            "{screen}"
        );

        // The source cursor starts on the stop; one down is the click.
        tmux_keys(s, &["j", "b"]);
        let screen = wait_for_screen(s, "breakpoint on line 4").await;
        assert!(screen.contains("●   4     click(\"#open\");"), "{screen}");
        // And one on the last line, to stop there after the retry.
        tmux_keys(s, &["j", "j", "j", "j", "b"]);
        wait_for_screen(s, "breakpoint on line 8").await;

        tmux_keys(s, &["c"]);
        let screen = wait_for_screen(s, "stopped at line 4 (breakpoint)").await;
        let screen = if screen.contains("greeting = \"hello\"") {
            screen
        } else {
            wait_for_screen(s, "greeting = \"hello\"").await
        };
        assert!(!screen.contains("Close panel"), "{screen}");

        // Over the click: the listing at the stop shows the open panel.
        tmux_keys(s, &["n"]);
        wait_for_screen(s, "stopped at line 5 (step)").await;
        wait_for_screen(s, "<button>Close panel</button>").await;
        tmux_keys(s, &["n"]);
        wait_for_screen(s, "stopped at line 6 (step)").await;
        wait_for_screen(s, "opened = true").await;

        // The click on a button that is not there stops on its error.
        tmux_keys(s, &["c"]);
        let screen = wait_for_screen(s, "Debug walk · line 7 · failed").await;
        assert!(
            screen.contains("» log              panel open: true"),
            "{screen}"
        );
        assert!(screen.contains("failed: "), "{screen}");

        // A `:` action at the stop adds the button; the retry clicks it.
        let add = screen
            .lines()
            .find_map(|l| {
                let at = l.find("<button>Add late</button>")?;
                let open = l[..at].rfind('[')?;
                Some(l[open + 1..at].trim_end_matches(']').to_string())
            })
            .unwrap_or_else(|| panic!("no Add late button listed:\n{screen}"));
        command(s, &format!("click {add}"));
        wait_for_screen(s, "<button>Late button</button>").await;
        tmux_keys(s, &["r"]);
        wait_for_screen(s, "stopped at line 8 (breakpoint)").await;

        // A saved edit waits for the choice; R restarts from the top with
        // it, keeping the breakpoints.
        std::fs::write(
            dir.join("walk.rhai"),
            RECIPE.replace("\"walked\"", "\"edited\""),
        )
        .expect("the recipe is saved");
        wait_for_screen(s, "walk.rhai was saved: R restarts from the top").await;
        tmux_keys(s, &["R"]);
        wait_for_screen(s, "stopped at line 3 (entry)").await;
        let screen = wait_for_screen(s, "log(\"edited\");").await;
        assert!(screen.contains("●   8     log(\"edited\");"), "{screen}");
        tmux_keys(s, &["c"]);
        wait_for_screen(s, "stopped at line 4 (breakpoint)").await;
        tmux_keys(s, &["c"]);
        wait_for_screen(s, "stopped at line 8 (breakpoint)").await;
        tmux_keys(s, &["c"]);
        let screen = wait_for_screen(s, "recipe walk").await;
        let screen = if screen.contains("edited") && !screen.contains("Debug walk") {
            screen
        } else {
            crate::support::tmux::settled_screen_where(s, |screen| {
                screen.contains("edited") && !screen.contains("Debug walk")
            })
            .await
            .unwrap_or_else(|screen| panic!("the run did not end:\n{screen}"))
        };
        assert!(!screen.contains("Variables"), "{screen}");

        // `:debug NAME` starts the loaded recipe again.
        command(s, "debug walk");
        wait_for_screen(s, "stopped at line 3 (entry)").await;
        let _ = std::fs::remove_dir_all(&dir);
    });
}
