//! Approvals in a real terminal, on the till page: a custom action's
//! approval covers the steps it takes and its log row heads them, and a
//! person's changes and refusals reach the model as the person's.

use std::sync::atomic::Ordering;

use serde_json::json;

use crate::conversation_in_terminal::{
    model_done, model_step, start_workbench, till, traces_in, user_message,
};
use crate::support::llm_server;
use crate::support::scratch::scratch_dir;
use crate::support::tmux::{
    require_tmux_and_chromium, settled_screen_where, tmux_keys, tmux_text, wait_for_screen,
    TmuxSession,
};

/// A custom action that counts twice, and a recipe that runs it and
/// then pays.
const TILL_SCRIPT: &str = r##"
action("count_twice", #{ description: "Counts twice", params: #{}, risk: "commit" });
fn count_twice(p) { click("#count"); click("#count"); "counted twice" }

recipe("tally", "Counts twice, then pays");
fn tally() { run_action("count_twice", #{}); click("#pay"); "paid" }
"##;

/// The action log's rows on `screen`, from its title to its bottom edge.
fn log_rows(screen: &str) -> Vec<String> {
    screen
        .lines()
        .skip_while(|line| !line.contains("Action log"))
        .skip(1)
        .take_while(|line| !line.starts_with('└'))
        .map(|line| line.trim_matches(|c| c == '│' || c == ' ').to_string())
        .filter(|line| !line.is_empty())
        .collect()
}

/// A workbench on the till in `always` mode, with [`TILL_SCRIPT`] loaded
/// and the scripted model answering `replies`, once the page shows.
struct Till {
    session: TmuxSession,
    llm: llm_server::LlmServer,
    clicks: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    dir: std::path::PathBuf,
    _pages: webagent::serve::PageServer,
}

async fn till_workbench(name: &str, replies: Vec<llm_server::Reply>) -> Till {
    require_tmux_and_chromium();
    let pages = webagent::serve::PageServer::start()
        .await
        .expect("serve pages");
    let clicks = till(&pages);
    let llm = llm_server::LlmServer::start(replies).await;
    let dir = scratch_dir(name);
    std::fs::write(dir.join("till.rhai"), TILL_SCRIPT).expect("write the script");
    let session = TmuxSession(format!("webagent-{name}-{}", std::process::id()));
    start_workbench(
        &session.0,
        &dir,
        &llm,
        &format!(
            "tui --sessions-dir sessions --approve always --recipes till.rhai --url {}",
            pages.url("/till")
        ),
    );
    wait_for_screen(&session.0, "Count</button>").await;
    Till {
        session,
        llm,
        clicks,
        dir,
        _pages: pages,
    }
}

/// Each row's step and action (`2 └ click`), what its nesting shows.
fn row_starts(rows: &[String]) -> Vec<String> {
    rows.iter()
        .map(|row| row.split("  ").next().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_actions_approval_covers_its_steps_which_nest_under_its_row() {
    let Till {
        session,
        llm: _llm,
        clicks,
        dir,
        _pages,
    } = till_workbench("custom-approval", Vec::new()).await;
    tmux_keys(&session.0, &[":"]);
    tmux_text(&session.0, "recipe tally");
    tmux_keys(&session.0, &["Enter"]);
    // The modal says how far approving the custom action reaches.
    let screen = wait_for_screen(&session.0, "Approve step 1?").await;
    assert!(
        screen.contains("approving it approves the steps it takes, up to commit risk"),
        "{screen}"
    );
    tmux_keys(&session.0, &["y"]);
    // Its two clicks ran without a question each; the recipe's own next
    // step is asked about.
    wait_for_screen(&session.0, "Approve step 4?").await;
    assert_eq!(clicks.load(Ordering::SeqCst), 2, "both inner clicks ran");
    // Approving all for the run: nothing more is asked.
    tmux_keys(&session.0, &["A"]);
    let screen = wait_for_screen(&session.0, "done: paid").await;
    let rows = log_rows(&screen);
    assert_eq!(rows.len(), 4, "one row per action, none empty:\n{screen}");
    let starts = row_starts(&rows);
    assert_eq!(
        starts,
        ["1 count_twice", "2 └ click", "3 └ click", "4 click"],
        "the custom action heads its own steps:\n{screen}"
    );
    assert!(
        rows[0].contains("+you"),
        "the person's wait shows on the action they approved:\n{screen}"
    );
    assert!(!rows[1].contains("+you"), "{screen}");
    tmux_keys(&session.0, &["q"]);

    // The trace keeps the nesting, and a replay reads it in the same
    // order as the live log.
    let trace = traces_in(&dir.join("sessions"))
        .pop()
        .expect("the run's trace");
    let events = webagent::events::read_trace(&trace).expect("read the trace");
    let replay = webagent::tui::replay::ReplayData::from_events(&trace, &events);
    let replayed: Vec<(Option<usize>, String, Option<usize>)> = replay
        .log
        .iter()
        .filter(|row| row.record.is_some())
        .map(|row| (row.step, row.action.clone(), row.within))
        .collect();
    assert_eq!(
        replayed,
        [
            (Some(1), "count_twice".to_string(), None),
            (Some(2), "click".to_string(), Some(1)),
            (Some(3), "click".to_string(), Some(1)),
            (Some(4), "click".to_string(), None),
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_picked_element_and_a_refusal_note_reach_the_model_as_the_persons() {
    let Till {
        session,
        llm,
        clicks,
        dir,
        _pages,
    } = till_workbench(
        "person-changes",
        vec![
            model_step("pay", json!({"click": {"index": 1}})),
            model_step("pay now", json!({"click": {"index": 1}})),
            model_done("counted"),
        ],
    )
    .await;
    tmux_keys(&session.0, &["t"]);
    tmux_text(&session.0, "Settle the till");
    tmux_keys(&session.0, &["Enter"]);
    wait_for_screen(&session.0, "Approve step 1?").await;
    // The person aims the click at Count instead: back in the approval,
    // the change shown, and only their yes runs it.
    tmux_keys(&session.0, &["p", "k", "Enter"]);
    let screen = wait_for_screen(&session.0, "you picked another element").await;
    assert!(screen.contains("Approve step 1?"), "{screen}");
    assert_eq!(
        clicks.load(Ordering::SeqCst),
        0,
        "nothing ran before the yes"
    );
    tmux_keys(&session.0, &["y"]);
    // The second proposal is refused with a note.
    wait_for_screen(&session.0, "Approve step 2?").await;
    assert_eq!(clicks.load(Ordering::SeqCst), 1, "Count was clicked");
    tmux_keys(&session.0, &["N"]);
    wait_for_screen(&session.0, "Why skip it?").await;
    tmux_text(&session.0, "not now, the manager pays");
    tmux_keys(&session.0, &["Enter"]);
    let screen = wait_for_screen(&session.0, "done: counted").await;
    let rows = log_rows(&screen);
    assert!(
        rows.iter()
            .any(|r| r.starts_with("1 click") && r.contains("edited by you")),
        "the edited step is marked:\n{screen}"
    );
    assert!(
        rows.iter()
            .any(|r| r.starts_with("2 click") && r.contains("refused by you")),
        "the refused step is marked:\n{screen}"
    );
    let requests = llm.requests();
    assert_eq!(requests.len(), 3);
    let second = user_message(&requests[1]);
    assert!(
        second.contains(r#"(the person changed your proposal, click {"index":1}, into this)"#),
        "the model hears what it proposed and what ran:\n{second}"
    );
    let third = user_message(&requests[2]);
    assert!(
        third.contains("The person says: not now, the manager pays"),
        "the refusal's note reaches the model:\n{third}"
    );
    tmux_keys(&session.0, &["q"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_custom_action_shows_its_steps_and_exports_them_once() {
    let Till {
        session,
        llm,
        clicks,
        dir,
        _pages,
    } = till_workbench(
        "model-custom-action",
        vec![
            model_step("count twice", json!({"count_twice": {}})),
            model_done("counted"),
        ],
    )
    .await;
    tmux_keys(&session.0, &["t"]);
    tmux_text(&session.0, "Count twice");
    tmux_keys(&session.0, &["Enter"]);
    wait_for_screen(&session.0, "Approve step 1?").await;
    tmux_keys(&session.0, &["y"]);
    let screen = wait_for_screen(&session.0, "done: counted").await;
    assert_eq!(clicks.load(Ordering::SeqCst), 2, "{screen}");
    let rows = log_rows(&screen);
    let starts = row_starts(&rows);
    assert_eq!(
        starts,
        ["1 count_twice", "1 └ click", "1 └ click", "2 done"],
        "the model's custom action heads its own steps:\n{screen}"
    );
    // The model read its own action, not the clicks inside it.
    let second = user_message(&llm.requests()[1]);
    assert!(second.contains("count_twice"), "{second}");
    assert!(!second.contains(r##""#count""##), "{second}");
    tmux_keys(&session.0, &["q"]);

    // Exported, the clicks replay once each and the call is left out.
    let trace = traces_in(&dir.join("sessions"))
        .pop()
        .expect("the run's trace");
    let out = dir.join("exported.rhai");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_webagent"))
        .arg("export")
        .arg(&trace)
        .arg("--recipe")
        .arg(&out)
        .args(["--name", "count_at_the_till"])
        .current_dir(&dir)
        .status()
        .expect("run export");
    assert!(status.success());
    let recipe = std::fs::read_to_string(&out).expect("the exported recipe");
    assert!(recipe.contains("recipe(\"count_at_the_till\""), "{recipe}");
    assert_eq!(recipe.matches("click(").count(), 2, "{recipe}");
    assert!(
        !recipe.contains("run_action(\"count_twice\""),
        "the call is not replayed on top of its steps:\n{recipe}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l_at_an_approval_reads_the_targets_locators_from_the_waiting_page_and_l_on_a_past_step_again(
) {
    let Till {
        session,
        llm: _llm,
        clicks,
        dir,
        _pages,
    } = till_workbench(
        "approval-locators",
        vec![
            model_step("count", json!({"click": {"index": 0}})),
            model_done("counted"),
        ],
    )
    .await;
    tmux_keys(&session.0, &["t"]);
    tmux_text(&session.0, "Count once");
    tmux_keys(&session.0, &["Enter"]);
    wait_for_screen(&session.0, "Approve step 1?").await;
    // The run waits for the person; its page answers the picker.
    tmux_keys(&session.0, &["L"]);
    let screen = wait_for_screen(&session.0, "click([\"id:count\"").await;
    let row = screen
        .lines()
        .find(|l| l.contains("id:count") && !l.contains("click("))
        .unwrap_or_else(|| panic!("no id:count row:\n{screen}"));
    assert!(row.contains("unique"), "{screen}");
    assert_eq!(clicks.load(Ordering::SeqCst), 0, "nothing ran meanwhile");
    tmux_keys(&session.0, &["Escape"]);
    wait_for_screen(&session.0, "Approve step 1?").await;
    tmux_keys(&session.0, &["y"]);
    wait_for_screen(&session.0, "done: counted").await;
    assert_eq!(clicks.load(Ordering::SeqCst), 1, "the approval still held");
    // The step in the sessions view kept its element's locators, checked
    // again on the page open now.
    // Out of the task field first (an Esc and a key at once read as Alt).
    tmux_keys(&session.0, &["Escape"]);
    settled_screen_where(&session.0, |s| !s.contains("Esc back to the panes"))
        .await
        .unwrap_or_else(|s| panic!("the task field kept the keys:\n{s}"));
    tmux_keys(&session.0, &["S"]);
    wait_for_screen(&session.0, "Count once").await;
    tmux_keys(&session.0, &["Enter"]);
    wait_for_screen(&session.0, "REPLAY").await;
    tmux_keys(&session.0, &["L"]);
    let screen = wait_for_screen(&session.0, "step 1's element, <button>").await;
    let screen = if screen.contains("click([\"id:count\"") {
        screen
    } else {
        wait_for_screen(&session.0, "click([\"id:count\"").await
    };
    let row = screen
        .lines()
        .find(|l| l.contains("id:count") && !l.contains("click("))
        .unwrap_or_else(|| panic!("no id:count row:\n{screen}"));
    assert!(row.contains("unique"), "{screen}");
    tmux_keys(&session.0, &["q"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l_at_a_recipes_approval_reads_its_selector_targets_locators_and_says_when_there_is_none() {
    let Till {
        session,
        llm: _llm,
        clicks: _clicks,
        dir,
        _pages,
    } = till_workbench("recipe-approval-locators", Vec::new()).await;
    tmux_keys(&session.0, &[":"]);
    tmux_text(&session.0, "recipe tally");
    tmux_keys(&session.0, &["Enter"]);
    wait_for_screen(&session.0, "Approve step 1?").await;
    // The custom action names no element of its own.
    tmux_keys(&session.0, &["L"]);
    wait_for_screen(&session.0, "this action targets no element").await;
    tmux_keys(&session.0, &["y"]);
    wait_for_screen(&session.0, "Approve step 4?").await;
    tmux_keys(&session.0, &["L"]);
    let screen = wait_for_screen(&session.0, "click([\"id:pay\"").await;
    let row = screen
        .lines()
        .find(|l| l.contains("id:pay") && !l.contains("click("))
        .unwrap_or_else(|| panic!("no id:pay row:\n{screen}"));
    assert!(row.contains("unique"), "{screen}");
    tmux_keys(&session.0, &["Escape"]);
    wait_for_screen(&session.0, "Approve step 4?").await;
    tmux_keys(&session.0, &["y"]);
    wait_for_screen(&session.0, "done: paid").await;
    tmux_keys(&session.0, &["q"]);
    let _ = std::fs::remove_dir_all(&dir);
}
