//! Recording a recipe in a real terminal: `webagent record` opens the
//! workbench recording on a served page, actions typed on the `:` line act
//! on the page as a person's input does and land in the recipe pane as
//! steps, a step gets its goal, and `:record stop` writes the file; on the
//! page pane, a click and typing reach the page and are recorded, and an
//! assertion picked on the element list lands in the recipe.

use crate::conversation_in_terminal::start_workbench;
use crate::support::llm_server;
use crate::support::scratch::scratch_dir;
use crate::support::tmux::{
    require_tmux_and_chromium, settled_screen_where, tmux_keys, tmux_paste, tmux_text,
    wait_for_screen, TmuxSession,
};

const FORM: &str = r#"<!doctype html><title>Sign in</title>
<form action="/done"><label>Email <input name="email" id="email"></label>
<label><input type="checkbox" id="terms" name="terms"> I agree</label>
<button id="go">Sign in</button></form>"#;

/// Types `line` on the `:` line and runs it.
fn command(session: &str, line: &str) {
    tmux_keys(session, &[":"]);
    tmux_text(session, line);
    tmux_keys(session, &["Enter"]);
}

/// `webagent record` on `html` (served at `/page`) into the recipe `name`,
/// in a tmux session named after the test, once its recording pane shows.
/// The page server, model and folder live as long as the result.
struct Recording {
    session: TmuxSession,
    dir: std::path::PathBuf,
    _pages: webagent::serve::PageServer,
    _llm: llm_server::LlmServer,
}

async fn recording(test: &str, html: &str, name: &str) -> Recording {
    require_tmux_and_chromium();
    let pages = webagent::serve::PageServer::start()
        .await
        .expect("serve pages");
    pages.html("/page", html.to_string());
    let llm = llm_server::LlmServer::start(Vec::new()).await;
    let dir = scratch_dir(test);
    let session = TmuxSession(format!("webagent-{test}-{}", std::process::id()));
    start_workbench(
        &session.0,
        &dir,
        &llm,
        &format!(
            "record {} --name {name} --sessions-dir sessions",
            pages.url("/page")
        ),
    );
    wait_for_screen(&session.0, &format!("Recording {name} · 0 steps")).await;
    Recording {
        session,
        dir,
        _pages: pages,
        _llm: llm,
    }
}

#[test]
fn webagent_record_shows_the_recipe_growing_and_writes_it_on_stop() {
    crate::support::chromium::runtime().block_on(async {
        let Recording {
            session,
            dir,
            _pages,
            _llm,
        } = recording("record-in-terminal", FORM, "sign_in").await;
        wait_for_screen(&session.0, "<button>Sign in</button>").await;

        command(&session.0, "input_text 0 ada@example.test");
        wait_for_screen(&session.0, "value=\"ada@example.test\"").await;
        command(&session.0, "click 1");
        // The pane keeps the newest step in view.
        let screen = wait_for_screen(&session.0, "Recording sign_in · 2 steps").await;
        assert!(screen.contains("click([\"id:terms\""), "{screen}");

        command(&session.0, "record goal 2 accept the terms");
        wait_for_screen(&session.0, "step 2's goal: accept the terms").await;
        command(&session.0, "record stop");
        wait_for_screen(&session.0, "recording saved as a recipe: recipes/sign_in.rhai").await;
        let source =
            std::fs::read_to_string(dir.join("recipes/sign_in.rhai")).expect("the recipe");
        for line in [
            "recipe(\"sign_in\"",
            "email: #{ type: \"string\", \"default\": \"ada@example.test\" },",
            "fill([\"id:email\", \"role:textbox:Email\", \"label:Email\", \"name:email\", \"css:#email\"], params.email);",
            "step(2, \"accept the terms\");",
            "click([\"id:terms\", \"role:checkbox:I agree\", \"label:I agree\", \"name:terms\", \"css:#terms\"]);",
        ] {
            assert!(source.contains(line), "no `{line}` in:\n{source}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    });
}

/// A button as big as the page, so any point of the picture is on it.
const BIG_BUTTON: &str = r#"<!doctype html><title>Big</title>
<style>body{margin:0} button{width:100vw;height:100vh;font-size:40px}</style>
<button id="go" type="button" onclick="this.textContent='clicked'">Big</button>"#;

#[test]
fn a_click_on_the_page_pane_clicks_the_page_and_is_recorded() {
    crate::support::chromium::runtime().block_on(async {
        let Recording {
            session,
            dir,
            _pages,
            _llm,
        } = recording("record-page-pane", BIG_BUTTON, "big").await;
        tmux_keys(&session.0, &["v"]);
        // The title counts the marks as soon as the screenshot arrives;
        // the outline is named once the picture is drawn, and only a
        // drawn picture takes clicks (on a busy machine the drawing takes
        // longer than one settled screen).
        let screen = wait_for_screen(&session.0, "[0] outlined").await;
        // The picture starts inside the pane's border; a cell a few rows
        // and columns in is on the button. SGR mouse reports count from 1.
        let (row, line) = screen
            .lines()
            .enumerate()
            .find(|(_, l)| l.contains("┌ Page"))
            .expect("the page pane");
        let column = line.chars().position(|c| c == '┌').expect("its corner");
        let (x, y) = (column + 6, row + 3);
        tmux_text(&session.0, &format!("\x1b[<0;{x};{y}M"));
        tmux_text(&session.0, &format!("\x1b[<0;{x};{y}m"));
        let screen = wait_for_screen(&session.0, "Recording big · 1 step").await;
        assert!(
            screen.contains("<button type=\"button\">clicked</button>"),
            "{screen}"
        );
        assert!(screen.contains("click([\"id:go\""), "{screen}");
        let _ = std::fs::remove_dir_all(&dir);
    });
}

/// A field as big as most of the page, in a form that keeps its page.
const BIG_FIELD: &str = r#"<!doctype html><title>Type</title>
<style>body{margin:0} input{width:100vw;height:80vh;font-size:40px;box-sizing:border-box}</style>
<form onsubmit="document.title = 'sent ' + this.q.value; return false">
<input id="q" name="q" aria-label="Query"></form>"#;

#[test]
fn typing_on_the_page_pane_is_recorded_and_an_assertion_picked_on_the_element_list_is_saved() {
    crate::support::chromium::runtime().block_on(async {
        let Recording {
            session,
            dir,
            _pages,
            _llm,
        } = recording("record-page-typing", BIG_FIELD, "typed").await;
        tmux_keys(&session.0, &["v"]);
        // The picture drawn, not only taken: a click lands on what is drawn.
        let screen =
            settled_screen_where(&session.0, |s| s.contains("1 marks") && s.contains("▀▀▀"))
                .await
                .unwrap_or_else(|s| panic!("the picture never showed:\n{s}"));
        let (row, line) = screen
            .lines()
            .enumerate()
            .find(|(_, l)| l.contains("┌ Page"))
            .expect("the page pane");
        let column = line.chars().position(|c| c == '┌').expect("its corner");
        let (x, y) = (column + 6, row + 3);
        // One write each, so no ESC is read alone.
        tmux_paste(&session.0, &format!("\x1b[<0;{x};{y}M"));
        tmux_paste(&session.0, &format!("\x1b[<0;{x};{y}m"));
        wait_for_screen(&session.0, "Page · typing (Ctrl+O leaves)").await;
        tmux_text(&session.0, "hello");
        wait_for_screen(&session.0, "value=\"hello\"").await;
        tmux_keys(&session.0, &["Enter"]);
        let screen = wait_for_screen(&session.0, "press_keys(\"Enter\");").await;
        assert!(screen.contains("fill([\"id:q\""), "{screen}");
        tmux_keys(&session.0, &["C-o"]);
        wait_for_screen(&session.0, "the keys are the workbench's again").await;
        tmux_keys(&session.0, &["A"]);
        wait_for_screen(&session.0, "4  value equals: \"hello\"").await;
        tmux_keys(&session.0, &["4"]);
        let screen = wait_for_screen(&session.0, "expect_value([\"id:q\"").await;
        assert!(screen.contains("Recording typed · 3 steps"), "{screen}");
        command(&session.0, "record stop");
        wait_for_screen(
            &session.0,
            "recording saved as a recipe: recipes/typed.rhai",
        )
        .await;
        let source = std::fs::read_to_string(dir.join("recipes/typed.rhai")).expect("the recipe");
        for line in [
            "q: #{ type: \"string\", \"default\": \"hello\" },",
            "fill([\"id:q\", \"role:textbox:Query\", \"name:q\", \"css:#q\"], params.q);",
            "press_keys(\"Enter\");",
            "expect_value([\"id:q\", \"role:textbox:Query\", \"name:q\", \"css:#q\"], \"hello\");",
        ] {
            assert!(source.contains(line), "no `{line}` in:\n{source}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    });
}

/// A heading no listing names, as tall as most of the page, and a small
/// button in a corner.
const BIG_HEADING: &str = r#"<!doctype html><title>Orders</title>
<style>body{margin:0} h1{height:85vh;margin:0;font-size:60px}
button{position:fixed;right:0;bottom:0}</style>
<h1 id="title">Orders</h1><button id="go" type="button" onclick="this.textContent='clicked'">Go</button>"#;

#[test]
fn an_alt_click_on_the_page_pane_picks_a_heading_to_assert_on_without_clicking() {
    crate::support::chromium::runtime().block_on(async {
        let Recording {
            session,
            dir,
            _pages,
            _llm,
        } = recording("record-page-pick", BIG_HEADING, "headed").await;
        tmux_keys(&session.0, &["v"]);
        let screen =
            settled_screen_where(&session.0, |s| s.contains("1 marks") && s.contains("▀▀▀"))
                .await
                .unwrap_or_else(|s| panic!("the picture never showed:\n{s}"));
        let (row, line) = screen
            .lines()
            .enumerate()
            .find(|(_, l)| l.contains("┌ Page"))
            .expect("the page pane");
        let column = line.chars().position(|c| c == '┌').expect("its corner");
        let (x, y) = (column + 6, row + 3);
        // Button 0 with Alt (8), as a terminal reports Alt+click.
        tmux_paste(&session.0, &format!("\x1b[<8;{x};{y}M"));
        tmux_paste(&session.0, &format!("\x1b[<8;{x};{y}m"));
        let screen = wait_for_screen(&session.0, "2  text equals: \"Orders\"").await;
        let row = screen
            .lines()
            .find(|l| l.contains("role:heading:Orders") && !l.contains('('))
            .unwrap_or_else(|| panic!("no heading locator:\n{screen}"));
        assert!(row.contains("unique"), "{screen}");
        tmux_keys(&session.0, &["2"]);
        let screen = wait_for_screen(&session.0, "Recording headed · 1 step").await;
        assert!(screen.contains("expect_text([\"id:title\""), "{screen}");
        assert!(
            !screen.contains("Page · typing"),
            "the page did not take the click:\n{screen}"
        );
        command(&session.0, "record stop");
        wait_for_screen(
            &session.0,
            "recording saved as a recipe: recipes/headed.rhai",
        )
        .await;
        let source =
            std::fs::read_to_string(dir.join("recipes/headed.rhai")).expect("the recipe");
        assert!(
            source.contains(
                "expect_text([\"id:title\", \"role:heading:Orders\", \"text:Orders\", \"css:#title\"], \"Orders\");"
            ),
            "{source}"
        );
        assert!(!source.contains("click("), "{source}");
        let _ = std::fs::remove_dir_all(&dir);
    });
}
