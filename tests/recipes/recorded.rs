//! A person's demonstration recorded into a recipe: trusted input (CDP's
//! `Input.dispatchMouseEvent`, `dispatchKeyEvent`, `insertText`, as a
//! person's mouse and keyboard reach the page) on pages this test serves,
//! recorded by the real in-page recorder, and the recipe replayed by
//! `webagent recipe run` on a second origin. The page's own listeners must
//! see exactly the same events with the recorder as without it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::dom::SetFileInputFilesParams;
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType,
    InsertTextParams, MouseButton,
};
use chromiumoxide::cdp::browser_protocol::page::HandleJavaScriptDialogParams;
use webagent::browser::record::{Input, Recorder};
use webagent::browser::Tab;
use webagent::script::{PickedElement, Recording};
use webagent::serve::{PageServer, Response};

use super::support::chromium::shared;
use super::support::cli::said;
use super::support::pages::page;
use super::support::tab::in_front;
use super::{output, scratch, webagent_in, ws};

/// A form with every kind of field, a same-origin frame whose field is
/// copied into the form, and a button inside a shadow root that marks the
/// form. It is sent to `/done` with GET, so the server sees every value.
fn form_page() -> String {
    page(
        "Sign up",
        r#"<form id="f" action="/done" method="get">
<label>Email <input name="email" id="email"></label>
<label>Password <input type="password" name="pw" id="pw"></label>
<label for="plan">Plan</label> <select name="plan" id="plan"><option>Basic</option><option>Pro</option></select>
<label><input type="checkbox" name="terms" id="terms"> I agree</label>
<input type="file" name="attachment" id="attachment">
<input type="hidden" name="note" id="note-copy"><input type="hidden" name="shadow" id="shadow-mark">
<button id="go">Sign up</button>
</form>
<iframe id="notes" src="/inner" style="height:60px"></iframe>
<div id="host"></div>
<script>
const root = document.getElementById('host').attachShadow({ mode: 'open' });
root.innerHTML = '<button type="button">Mark</button>';
root.querySelector('button').addEventListener('click', () => { document.getElementById('shadow-mark').value = 'yes'; });
</script>"#,
    )
}

fn inner_page() -> String {
    page(
        "Notes",
        r#"<label>Note <input id="note"></label>
<script>document.getElementById('note').addEventListener('input', (e) => {
  parent.document.getElementById('note-copy').value = e.target.value;
});</script>"#,
    )
}

/// An app on its own origin: the form, its frame, and `/done`, whose
/// queries it keeps.
struct FormApp {
    server: PageServer,
    done: Arc<Mutex<Vec<String>>>,
}

impl FormApp {
    async fn start() -> FormApp {
        let server = PageServer::start().await.expect("a page server");
        server.html("/form", form_page());
        server.html("/inner", inner_page());
        let done = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&done);
        server.handle("/done", move |request| {
            seen.lock()
                .expect("a lock no test thread poisoned")
                .push(request.query.clone());
            Response::html(page("Done", "<h1>Thanks</h1>"))
        });
        FormApp { server, done }
    }

    fn done(&self) -> Vec<String> {
        self.done
            .lock()
            .expect("a lock no test thread poisoned")
            .clone()
    }
}

/// The centre of the element `expression` gives, in the tab's viewport,
/// across same-origin frames.
async fn centre(tab: &Tab, expression: &str) -> (f64, f64) {
    let script = format!(
        "(() => {{ const el = {expression}; const r = el.getBoundingClientRect();
          let x = r.x + r.width / 2, y = r.y + r.height / 2;
          let w = el.ownerDocument.defaultView;
          while (w.frameElement) {{ const f = w.frameElement.getBoundingClientRect();
            x += f.x + w.frameElement.clientLeft; y += f.y + w.frameElement.clientTop; w = w.parent; }}
          return [x, y]; }})()"
    );
    let point: Vec<f64> = tab
        .page()
        .evaluate(script)
        .await
        .expect("the element's box")
        .into_value()
        .expect("two numbers");
    (point[0], point[1])
}

pub(super) async fn mouse(tab: &Tab, kind: DispatchMouseEventType, (x, y): (f64, f64)) {
    let mut event = DispatchMouseEventParams::new(kind, x, y);
    event.button = Some(MouseButton::Left);
    event.click_count = Some(1);
    tab.page().execute(event).await.expect("a mouse event");
}

/// A person's click on what `expression` gives.
async fn click(tab: &Tab, expression: &str) {
    let at = centre(tab, expression).await;
    mouse(tab, DispatchMouseEventType::MouseMoved, at).await;
    mouse(tab, DispatchMouseEventType::MousePressed, at).await;
    mouse(tab, DispatchMouseEventType::MouseReleased, at).await;
}

/// Text typed into whatever has the focus.
pub(super) async fn type_text(tab: &Tab, text: &str) {
    tab.page()
        .execute(InsertTextParams::new(text))
        .await
        .expect("typing");
}

/// A key pressed and released (`ArrowDown`, 40).
async fn press(tab: &Tab, key: &str, code: i64) {
    for kind in [
        DispatchKeyEventType::RawKeyDown,
        DispatchKeyEventType::KeyUp,
    ] {
        let event = DispatchKeyEventParams::builder()
            .r#type(kind)
            .key(key)
            .code(key)
            .windows_virtual_key_code(code)
            .native_virtual_key_code(code)
            .build()
            .expect("a key event");
        tab.page().execute(event).await.expect("a key press");
    }
}

/// Waits until `expression` is true in the page, for up to ten seconds.
pub(super) async fn until(tab: &Tab, expression: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let now = tab
            .page()
            .evaluate(expression)
            .await
            .ok()
            .and_then(|v| v.into_value::<bool>().ok());
        if now == Some(true) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "`{expression}` never became true"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What a person does on the form page: every kind of field, the frame,
/// the shadow root, a file, and the submit button.
async fn fill_in_the_form(tab: &Tab, file: &str) {
    until(
        tab,
        "!!document.getElementById('notes').contentDocument?.getElementById('note')",
    )
    .await;
    click(tab, "document.getElementById('email')").await;
    type_text(tab, "ada@example.test").await;
    click(tab, "document.getElementById('pw')").await;
    type_text(tab, "hunter2").await;
    click(tab, "document.querySelector('label[for=plan]')").await;
    press(tab, "ArrowDown", 40).await;
    click(tab, "document.getElementById('terms')").await;
    click(
        tab,
        "document.getElementById('notes').contentDocument.getElementById('note')",
    )
    .await;
    type_text(tab, "hello").await;
    click(
        tab,
        "document.getElementById('host').shadowRoot.querySelector('button')",
    )
    .await;
    let input = tab
        .page()
        .find_element("#attachment")
        .await
        .expect("the file input");
    let choose = SetFileInputFilesParams::builder()
        .files(vec![file.to_string()])
        .backend_node_id(input.backend_node_id)
        .build()
        .expect("a file choice");
    tab.page().execute(choose).await.expect("choosing a file");
    until(
        tab,
        "document.getElementById('attachment').files.length === 1",
    )
    .await;
    click(tab, "document.getElementById('go')").await;
}

/// Every input the recorder reported until `count` arrived (ten seconds
/// at most).
pub(super) async fn inputs(recorder: &mut Recorder, count: usize) -> Vec<Input> {
    let mut got = Vec::new();
    while got.len() < count {
        match tokio::time::timeout(Duration::from_secs(10), recorder.next()).await {
            Ok(Some(input)) => got.push(input),
            _ => panic!(
                "only {} of {count} inputs were recorded: {got:#?}",
                got.len()
            ),
        }
    }
    got
}

#[test]
fn a_recording_made_with_trusted_input_replays_on_a_second_origin_without_the_password() {
    let s = shared();
    let dir = scratch("recorded-form");
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let file = dir.join("notes.txt");
    std::fs::write(&file, "some notes").expect("a file to upload");
    let (first, second) = s
        .runtime
        .block_on(async { (FormApp::start().await, FormApp::start().await) });

    let source = {
        let _turn = in_front();
        s.runtime.block_on(async {
            let url = first.server.url("/form");
            let tab = s.session.new_tab(&url).await.expect("a tab");
            let mut recorder = Recorder::start(&tab).await.expect("the recorder starts");
            fill_in_the_form(&tab, &file.display().to_string()).await;
            let got = inputs(&mut recorder, 8).await;
            until(&tab, "location.pathname === '/done'").await;
            let mut recording = Recording::new("sign_up", &url);
            for input in got {
                recording.push(input, &url);
            }
            let _ = tab.close().await;
            recording.source(None).expect("a recipe")
        })
    };
    assert_eq!(first.done().len(), 1, "the recording sent the form once");
    assert!(first.done()[0].contains("pw=hunter2"), "{:?}", first.done());
    assert!(
        !source.contains("hunter2"),
        "the password is in the recipe:\n{source}"
    );
    for line in [
        "fill([\"id:email\", \"role:textbox:Email\", \"label:Email\", \"name:email\", \"css:#email\"], params.email);",
        "fill([\"id:pw\", \"role:textbox:Password\", \"label:Password\", \"name:pw\", \"css:#pw\"], \"<secret>pw</secret>\");",
        "select([\"id:plan\", \"role:combobox:Plan\", \"label:Plan\", \"name:plan\", \"css:#plan\"], params.plan);",
        "click([\"id:terms\", \"role:checkbox:I agree\", \"label:I agree\", \"name:terms\", \"css:#terms\"]);",
        "step(5, \"\");\n    fill([\"id:note\", \"role:textbox:Note\", \"label:Note\", \"css:#notes >>> #note\"], params.note);",
        "click([\"role:button:Mark\", \"text:Mark\", \"css:#host >>> button\"]);",
        "run_action(\"upload_file\", #{ locators: [\"id:attachment\", \"name:attachment\", \"css:#attachment\"], path: params.attachment });",
        "click([\"id:go\", \"role:button:Sign up\", \"text:Sign up\", \"css:#go\"]);",
    ] {
        assert!(source.contains(line), "no `{line}` in:\n{source}");
    }
    std::fs::write(dir.join("sign_up.rhai"), &source).expect("the recipe written");

    let mut command = webagent_in(&dir);
    command
        .args(["recipe", "run", "sign_up.rhai", "--yes", "--connect", &ws()])
        .args(["--url", &second.server.url("/form")])
        .args(["--param", "email=grace@example.test"])
        .args(["--param", &format!("attachment={}", file.display())])
        .args(["--secret", "pw"])
        .env("pw", "s3cret");
    let out = output(command);
    assert_eq!(out.status.code(), Some(0), "{}\n{source}", said(&out));
    let sent = second.done();
    assert_eq!(sent.len(), 1, "the replay sent the form once: {sent:?}");
    let field = |name: &str| {
        url::form_urlencoded::parse(sent[0].as_bytes())
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    assert_eq!(field("email"), "grace@example.test", "{sent:?}");
    assert_eq!(field("pw"), "s3cret", "{sent:?}");
    assert_eq!(field("plan"), "Pro", "{sent:?}");
    assert_eq!(field("terms"), "on", "{sent:?}");
    assert_eq!(field("note"), "hello", "{sent:?}");
    assert_eq!(field("shadow"), "yes", "{sent:?}");
    assert_eq!(field("attachment"), "notes.txt", "{sent:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A page that logs every event its own listeners see, in order, with
/// `defaultPrevented` as the last listener sees it.
fn logged_page() -> String {
    page(
        "Logged",
        r#"<form id="f" onsubmit="return false"><label>Name <input id="name"></label>
<select id="pick"><option>A</option><option>B</option></select>
<label><input type="checkbox" id="box"> Box</label><button id="b">Go</button></form>
<style>.sub{display:none}.menu:hover .sub{display:block}</style>
<div class="menu"><span id="m">Menu</span><div class="sub"><button type="button" id="item" onclick="window.picked = true">Item</button></div></div>
<script>
window.seen = [];
const types = ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click', 'focusin', 'focusout',
  'keydown', 'keyup', 'beforeinput', 'input', 'change', 'submit', 'mouseover', 'mouseout'];
for (const type of types) {
  window.addEventListener(type, (e) => {
    const t = e.composedPath()[0];
    window.seen.push([type, t.id || t.localName || 'window', e.defaultPrevented, e.isTrusted].join(' '));
  });
}
document.getElementById('b').addEventListener('click', (e) => e.preventDefault());
</script>"#,
    )
}

async fn act_on_logged_page(tab: &Tab) {
    click(tab, "document.getElementById('name')").await;
    type_text(tab, "Ada").await;
    press(tab, "Enter", 13).await;
    click(tab, "document.getElementById('box')").await;
    click(tab, "document.getElementById('b')").await;
    // A menu shown on hover, and a link in it.
    let menu = centre(tab, "document.getElementById('m')").await;
    mouse(tab, DispatchMouseEventType::MouseMoved, menu).await;
    until(tab, "document.getElementById('item').checkVisibility()").await;
    click(tab, "document.getElementById('item')").await;
    until(tab, "window.picked === true").await;
}

#[test]
fn the_page_sees_the_same_events_with_the_recorder_as_without_it() {
    let s = shared();
    let _turn = in_front();
    s.runtime.block_on(async {
        s.server.html("/logged", logged_page());
        let url = s.server.url("/logged");
        let mut seen = Vec::new();
        for recording in [false, true] {
            let tab = s.session.new_tab(&url).await.expect("a tab");
            let mut recorder = match recording {
                true => Some(Recorder::start(&tab).await.expect("the recorder starts")),
                false => None,
            };
            act_on_logged_page(&tab).await;
            if let Some(recorder) = recorder.as_mut() {
                // The fill, Enter, the checkbox, the button, the hover and
                // the link: the recorder was there and working.
                let got = inputs(recorder, 6).await;
                assert!(matches!(got[0], Input::Fill { .. }), "{got:#?}");
                assert!(matches!(got[4], Input::Hover { .. }), "{got:#?}");
            }
            let log: Vec<String> = tab
                .page()
                .evaluate("window.seen")
                .await
                .expect("the page's log")
                .into_value()
                .expect("a list");
            let dom: String = tab
                .page()
                .evaluate("document.documentElement.outerHTML")
                .await
                .expect("the page's markup")
                .into_value()
                .expect("text");
            seen.push((log, dom));
            drop(recorder);
            let _ = tab.close().await;
        }
        assert!(
            seen[0].0.len() > 10,
            "the page saw too little: {:?}",
            seen[0].0
        );
        assert_eq!(
            seen[0].0, seen[1].0,
            "the page's events differ with the recorder"
        );
        assert_eq!(
            seen[0].1, seen[1].1,
            "the recorder changed the page's markup"
        );
    });
}

/// The next line `lines` gives that contains `wanted`, within twenty
/// seconds; the lines read before it are kept in `seen` for the message.
fn line_with(
    lines: &std::sync::mpsc::Receiver<String>,
    wanted: &str,
    seen: &mut Vec<String>,
) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => {
                seen.push(line.clone());
                if line.contains(wanted) {
                    return line;
                }
            }
            Err(_) => panic!("no line with {wanted:?}; it printed:\n{}", seen.join("\n")),
        }
    }
}

/// `webagent record URL --no-tui --name NAME --out NAME.rhai` started in
/// `dir` on the shared browser, once it says it records: the process, its
/// input, the lines it prints (read on a thread) and those read so far.
fn record_command(
    dir: &std::path::Path,
    url: &str,
    name: &str,
) -> (
    std::process::Child,
    std::process::ChildStdin,
    std::sync::mpsc::Receiver<String>,
    Vec<String>,
) {
    use std::io::BufRead as _;
    let mut command = webagent_in(dir);
    command
        .args(["record", url, "--no-tui", "--connect", &ws()])
        .args(["--name", name, "--out", &format!("{name}.rhai")])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = command.spawn().expect("webagent record starts");
    let stdin = child.stdin.take().expect("its input");
    let stdout = child.stdout.take().expect("its output");
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut seen = Vec::new();
    line_with(&lines, &format!("recording {url}"), &mut seen);
    (child, stdin, lines, seen)
}

/// The browser's tab at `url` (one a command opened), taken over by this
/// test to act on as a person would.
async fn tab_at(url: &str) -> Tab {
    let helper = shared()
        .session
        .new_tab("about:blank")
        .await
        .expect("a tab");
    let targets = helper
        .page()
        .execute(chromiumoxide::cdp::browser_protocol::target::GetTargetsParams::default())
        .await
        .expect("the browser's tabs");
    let id = targets
        .result
        .target_infos
        .iter()
        .find(|t| t.r#type == "page" && t.url == url)
        .map(|t| t.target_id.inner().clone())
        .expect("the recording's tab");
    let tab = helper.adopt(&id).await.expect("the recording's tab");
    let _ = helper.close().await;
    tab
}

#[test]
fn webagent_record_prints_each_step_takes_edits_and_writes_the_recipe_when_its_input_ends() {
    use std::io::Write as _;
    let s = shared();
    let dir = scratch("record-command");
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let app = s.runtime.block_on(FormApp::start());
    let url = app.server.url("/form");
    let (mut child, mut stdin, lines, mut seen) = record_command(&dir, &url, "sign_up");

    let _turn = in_front();
    s.runtime.block_on(async {
        // The test acts on the tab the command opened, as a person would.
        let tab = tab_at(&url).await;
        tab.page().bring_to_front().await.expect("the tab in front");
        click(&tab, "document.getElementById('email')").await;
        type_text(&tab, "ada@example.test").await;
        click(&tab, "document.getElementById('terms')").await;
        line_with(&lines, "  1  fill([\"id:email\"", &mut seen);
        line_with(&lines, "  2  click([\"id:terms\"", &mut seen);
        writeln!(stdin, "goal 1 give the email").expect("an edit");
        line_with(&lines, "step 1: goal \"give the email\"", &mut seen);
        writeln!(stdin, "undo").expect("an edit");
        line_with(&lines, "undone; 1 step(s) left", &mut seen);
        click(&tab, "document.getElementById('go')").await;
        line_with(&lines, "  2  click([\"id:go\"", &mut seen);
    });
    drop(stdin);
    line_with(&lines, "wrote sign_up.rhai (2 step(s))", &mut seen);
    let status = child.wait().expect("the command ends");
    assert!(status.success(), "{}", seen.join("\n"));
    let source = std::fs::read_to_string(dir.join("sign_up.rhai")).expect("the recipe");
    assert!(
        source.contains("step(1, \"give the email\", \"/form\");"),
        "{source}"
    );
    assert!(
        !source.contains("id:terms"),
        "the undone step is in the recipe:\n{source}"
    );
    assert!(source.contains("click([\"id:go\""), "{source}");

    // A second recording never replaces the file.
    let mut again = webagent_in(&dir);
    again.args(["record", &url, "--no-tui", "--out", "sign_up.rhai"]);
    let out = output(again);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(
        said(&out).contains("sign_up.rhai already exists"),
        "{}",
        said(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_recorded_recipe_heals_a_renamed_button_like_an_exported_one() {
    let s = shared();
    let app = s.runtime.block_on(super::App::start());
    let source = {
        let _turn = in_front();
        s.runtime.block_on(async {
            let url = app.url("/login");
            let tab = s.session.new_tab(&url).await.expect("a tab");
            let mut recorder = Recorder::start(&tab).await.expect("the recorder starts");
            click(&tab, "document.querySelector('[name=email]')").await;
            type_text(&tab, "ann@example.test").await;
            click(&tab, "document.querySelector('[name=days]')").await;
            type_text(&tab, "7").await;
            click(&tab, "document.getElementById('login')").await;
            let got = inputs(&mut recorder, 3).await;
            until(&tab, "location.pathname === '/welcome'").await;
            let mut recording = Recording::new("replay", &url);
            for input in got {
                recording.push(input, &url);
            }
            recording.set_goal(3, "sign in");
            let _ = tab.close().await;
            recording.source(None).expect("a recipe")
        })
    };
    let dir = scratch("recorded-heal");
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    std::fs::write(dir.join("login.rhai"), &source).expect("the recipe written");
    let renamed = app.url("/login?v=renamed");
    let button = s
        .runtime
        .block_on(super::index_on(&renamed, |e| e.text == "Continue"));
    let llm = s.runtime.block_on(super::LlmServer::start(vec![
        super::step_reply(
            "press the button that signs in",
            serde_json::json!({"click": {"index": button}}),
        ),
        super::done_reply("signed in"),
    ]));
    let mut command = webagent_in(&dir);
    command
        .args([
            "recipe",
            "run",
            "login.rhai",
            "--json",
            "--yes",
            "--connect",
            &ws(),
        ])
        .args(["--url", &renamed, "--base-url", &llm.base_url()])
        .args(["--sessions-dir", "sessions"]);
    let out = output(command);
    assert_eq!(out.status.code(), Some(0), "{}\n{source}", said(&out));
    let events = super::json_lines(&out);
    let healed = events
        .iter()
        .find(|e| e["type"] == "healed")
        .unwrap_or_else(|| panic!("a healed event: {}", said(&out)));
    assert_eq!(healed["step"], 3, "{healed}");
    assert_eq!(healed["success"], true, "{healed}");
    assert_eq!(healed["new"], "id:next", "{healed}");
    let sub_goal = healed["sub_goal"].as_str().unwrap_or_default();
    assert!(sub_goal.contains("sign in"), "{sub_goal}");
    assert_eq!(
        app.welcomes().last().map(String::as_str),
        Some("user=ann%40example.test&days=7"),
        "the healed replay signed in"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_locator_picker_checks_each_locator_on_the_page_and_writes_the_line() {
    let s = shared();
    s.runtime.block_on(async {
        s.server.html(
            "/picker",
            page(
                "Picker",
                r#"<form><button type="button" id="save" name="go">Save</button>
<button type="button">Save</button>
<label>Email <input name="email" id="email"></label></form>"#,
            ),
        );
        let tab = s
            .session
            .new_tab(&s.server.url("/picker"))
            .await
            .expect("a tab");
        let state = super::support::tab::observe(&tab).await;
        let find = |text: &str| {
            let index = state
                .elements
                .iter()
                .find(|e| e.text == text || e.attribute("name") == Some(text))
                .unwrap_or_else(|| panic!("no {text} in:\n{}", state.listing))
                .index;
            PickedElement::Target(webagent::actions::Target::Index { index })
        };
        let report = webagent::script::locator_report(&tab, &find("Save"), Some(&state))
            .await
            .expect("a report");
        let shown: Vec<(String, usize)> = report
            .locators
            .iter()
            .map(|(l, n)| (l.to_string(), *n))
            .collect();
        assert_eq!(
            shown,
            [
                ("id:save".to_string(), 1),
                ("role:button:Save".to_string(), 2),
                ("name:go".to_string(), 1),
                ("text:Save".to_string(), 2),
                ("css:#save".to_string(), 1),
            ]
        );
        assert_eq!(
            report.line,
            r#"click(["id:save", "role:button:Save", "name:go", "text:Save", "css:#save"]);"#
        );
        let field = webagent::script::locator_report(&tab, &find("email"), Some(&state))
            .await
            .expect("a report");
        assert!(
            field.line.starts_with("fill([\"id:email\""),
            "{}",
            field.line
        );
        assert!(field.line.ends_with("], \"\");"), "{}", field.line);
        let _ = tab.close().await;
    });
}

/// An order form whose Save button says what it saved; `broken`, it says
/// it failed, as a regression would.
fn order_page(broken: bool) -> String {
    let said = if broken {
        "'Not saved'"
    } else {
        "'Saved ' + document.getElementById('customer').value"
    };
    page(
        "Order",
        &format!(
            r##"<label>Customer <input id="customer"></label>
<label><input type="checkbox" id="rush"> Rush</label>
<ul id="items"><li><a href="#apple">Apple</a></li><li><a href="#pear">Pear</a></li><li><a href="#plum">Plum</a></li></ul>
<button type="button" id="save">Save</button>
<a id="status" href="/order"></a>
<script>document.getElementById('save').addEventListener('click', () => {{
  document.getElementById('status').textContent = {said};
}});</script>"##
        ),
    )
}

/// The report the locator picker (and the workbench's assertion chooser)
/// reads for the listed element with this text or label on `tab`'s page.
async fn report_on(tab: &Tab, text: &str) -> webagent::script::LocatorReport {
    let state = super::support::tab::observe(tab).await;
    let found = state
        .elements
        .iter()
        .find(|e| e.text == text || e.attribute("label") == Some(text))
        .unwrap_or_else(|| panic!("no {text} in:\n{}", state.listing))
        .index;
    let element = PickedElement::Target(webagent::actions::Target::Index { index: found });
    webagent::script::locator_report(tab, &element, Some(&state))
        .await
        .expect("a report")
}

#[test]
fn a_recording_with_picked_assertions_replays_and_fails_with_expected_and_actual_when_one_no_longer_holds(
) {
    use webagent::script::Expectation;
    let s = shared();
    let (good, broken) = s.runtime.block_on(async {
        let good = PageServer::start().await.expect("a page server");
        good.html("/order", order_page(false));
        let broken = PageServer::start().await.expect("a page server");
        broken.html("/order", order_page(true));
        (good, broken)
    });
    let source = {
        let _turn = in_front();
        s.runtime.block_on(async {
            s.server.html("/order", order_page(false));
            let url = s.server.url("/order");
            let tab = s.session.new_tab(&url).await.expect("a tab");
            let mut recorder = Recorder::start(&tab).await.expect("the recorder starts");
            click(&tab, "document.getElementById('customer')").await;
            type_text(&tab, "Ada").await;
            click(&tab, "document.getElementById('rush')").await;
            click(&tab, "document.getElementById('save')").await;
            let got = inputs(&mut recorder, 3).await;
            until(
                &tab,
                "document.getElementById('status').textContent === 'Saved Ada'",
            )
            .await;
            let mut recording = Recording::new("order", &url);
            for input in got {
                recording.push(input, &url);
            }
            // What the chooser offers, prefilled from the page.
            let status = report_on(&tab, "Saved Ada").await;
            let shown = status.state.clone().expect("the status's state");
            assert_eq!((shown.text.as_str(), shown.visible), ("Saved Ada", true));
            recording.push_assertion(
                &Expectation::Text(shown.text),
                Some(status.facts),
                &[],
                &url,
            );
            let customer = report_on(&tab, "Customer").await;
            let value = customer.state.and_then(|s| s.value).expect("a value");
            recording.push_assertion(&Expectation::Value(value), Some(customer.facts), &[], &url);
            let rush = report_on(&tab, "Rush").await;
            let checked = rush.state.and_then(|s| s.checked).expect("checkable");
            recording.push_assertion(&Expectation::Checked(checked), Some(rush.facts), &[], &url);
            let item = report_on(&tab, "Pear").await;
            let (like, count) = item.count.expect("a count");
            recording.push_assertion(&Expectation::Count(count), None, &[like], &url);
            recording.push_assertion(&Expectation::Url("/order".into()), None, &[], &url);
            let _ = tab.close().await;
            recording.source(None).expect("a recipe")
        })
    };
    for line in [
        "expect_text([\"id:status\", \"role:link:Saved Ada\", \"text:Saved Ada\", \"css:#status\"], \"Saved Ada\");",
        "expect_value([\"id:customer\", \"role:textbox:Customer\", \"label:Customer\", \"css:#customer\"], \"Ada\");",
        "expect_checked([\"id:rush\", \"role:checkbox:Rush\", \"label:Rush\", \"css:#rush\"], true);",
        "expect_count([\"css:#items > li > a\"], 3);",
        "expect_url(\"/order\");",
    ] {
        assert!(source.contains(line), "no `{line}` in:\n{source}");
    }
    let dir = scratch("recorded-assertions");
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    std::fs::write(dir.join("order.rhai"), &source).expect("the recipe written");
    let run_on = |server: &PageServer| {
        let mut command = webagent_in(&dir);
        command
            .args(["recipe", "run", "order.rhai", "--yes", "--connect", &ws()])
            .args(["--url", &server.url("/order")]);
        output(command)
    };
    let held = run_on(&good);
    assert_eq!(held.status.code(), Some(0), "{}\n{source}", said(&held));
    let failed = run_on(&broken);
    assert_ne!(failed.status.code(), Some(0), "{}", said(&failed));
    let line = 1 + source
        .lines()
        .position(|l| l.trim_start().starts_with("expect_text("))
        .expect("the text assertion's line");
    let expected = format!(
        "not done: order.rhai:{line}:5: assertion failed: \
         expect_text([\"id:status\", \"role:link:Saved Ada\", \"text:Saved Ada\", \"css:#status\"], \"Saved Ada\"): \
         expected the text \"Saved Ada\", but it is \"Not saved\" (<a id=status>Not saved</a>, found by id:status)"
    );
    let stdout = String::from_utf8_lossy(&failed.stdout);
    assert!(
        stdout.lines().any(|l| l == expected),
        "no line `{expected}` in:\n{}",
        said(&failed)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A shop whose orders hide behind a hover menu, whose cancel button asks
/// a confirm dialog, and whose receipt opens in a tab of its own, where
/// a button mails it (`/mailed`, which the server counts).
struct Shop {
    server: PageServer,
    mailed: Arc<Mutex<Vec<String>>>,
}

impl Shop {
    async fn start() -> Shop {
        let server = PageServer::start().await.expect("a page server");
        server.html(
            "/shop",
            page(
                "Shop",
                r#"<style>.sub{display:none}.menu:hover .sub{display:block}</style>
<div class="menu"><button type="button" id="account">Account</button>
<div class="sub"><a href="/orders">Orders</a></div></div>
<div style="height:200px"></div>"#,
            ),
        );
        server.html(
            "/orders",
            page(
                "Orders",
                r#"<p>Order 1003</p><button id="cancel">Cancel order</button>
<p id="status"></p><a id="receipt" href="/receipt/1003" target="_blank" hidden>Receipt</a>
<script>document.getElementById('cancel').addEventListener('click', () => {
  if (confirm('Cancel order 1003?')) {
    document.getElementById('status').textContent = 'Cancelled';
    document.getElementById('receipt').hidden = false;
  }
});</script>"#,
            ),
        );
        server.html(
            "/receipt/1003",
            page(
                "Receipt 1003",
                r#"<h1>Receipt 1003</h1><form action="/mailed"><button id="mail">Mail it</button></form>"#,
            ),
        );
        let mailed = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&mailed);
        server.handle("/mailed", move |request| {
            seen.lock()
                .expect("a lock no test thread poisoned")
                .push(request.path.clone());
            Response::html(page("Mailed", "<p>Mailed</p>"))
        });
        Shop { server, mailed }
    }

    fn mailed(&self) -> usize {
        self.mailed
            .lock()
            .expect("a lock no test thread poisoned")
            .len()
    }
}

/// The next input that is a step, answering nothing.
async fn next_input(recorder: &mut Recorder) -> Input {
    match tokio::time::timeout(Duration::from_secs(10), recorder.next()).await {
        Ok(Some(input)) => input,
        _ => panic!("the recorder reported nothing more"),
    }
}

#[test]
fn a_recording_follows_a_hover_menu_a_confirm_dialog_and_a_tab_a_click_opens() {
    let s = shared();
    let (first, second) = s
        .runtime
        .block_on(async { (Shop::start().await, Shop::start().await) });
    let source = {
        let _turn = in_front();
        s.runtime.block_on(async {
            let url = first.server.url("/shop");
            let tab = s.session.new_tab(&url).await.expect("a tab");
            let mut recorder = Recorder::start(&tab).await.expect("the recorder starts");
            let mut recording = Recording::new("cancel_order", &url);
            // The menu opens under the pointer; the link in it is clicked.
            let account = centre(&tab, "document.getElementById('account')").await;
            mouse(&tab, DispatchMouseEventType::MouseMoved, account).await;
            until(&tab, "document.querySelector('.sub a').checkVisibility()").await;
            click(&tab, "document.querySelector('.sub a')").await;
            until(&tab, "location.pathname === '/orders'").await;
            // The confirm dialog waits for the person, who accepts it in
            // the window (the click is not over until then).
            let mut got = Vec::new();
            let answering = async {
                loop {
                    match next_input(&mut recorder).await {
                        Input::DialogOpened { kind, message } => {
                            assert_eq!(kind, "confirm");
                            assert_eq!(message, "Cancel order 1003?");
                            break;
                        }
                        input => got.push(input),
                    }
                }
                tab.page()
                    .execute(HandleJavaScriptDialogParams::new(true))
                    .await
                    .expect("the person accepts the dialog");
            };
            tokio::join!(click(&tab, "document.getElementById('cancel')"), answering);
            until(&tab, "!document.getElementById('receipt').hidden").await;
            click(&tab, "document.getElementById('receipt')").await;
            // The receipt opens in a tab of its own, where the person goes
            // on.
            let switched = loop {
                match next_input(&mut recorder).await {
                    Input::SwitchTab { url } => break url,
                    input => got.push(input),
                }
            };
            assert_eq!(switched, first.server.url("/receipt/1003"));
            got.push(Input::SwitchTab { url: switched });
            let opened = tab
                .open_tabs()
                .await
                .expect("the tabs")
                .into_iter()
                .find(|t| t.url.ends_with("/receipt/1003"))
                .expect("the receipt's tab");
            let receipt = tab.adopt(&opened.id).await.expect("the receipt's tab");
            click(&receipt, "document.getElementById('mail')").await;
            until(&receipt, "location.pathname === '/mailed'").await;
            while got.len() < 7 {
                got.push(next_input(&mut recorder).await);
            }
            for input in got {
                recording.push(input, &url);
            }
            let _ = receipt.close().await;
            let _ = tab.close().await;
            recording.source(None).expect("a recipe")
        })
    };
    assert_eq!(first.mailed(), 1, "the recording mailed the receipt once");
    let lines: Vec<&str> = source
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty()
                && *l != "}"
                && !l.starts_with('"')
                && !l.starts_with("//")
                && !l.starts_with("step(")
        })
        .skip_while(|l| !l.starts_with("run_action(\"hover\""))
        .collect();
    // Each step's line (the link's CSS path is the page's structure).
    let expected = [
        r#"run_action("hover", #{ "locators": ["id:account", "role:button:Account", "text:Account", "css:#account"] });"#,
        r#"click(["role:link:Orders", "text:Orders", "css:"#,
        r#"run_action("answer_dialogs", #{ "accept": true });"#,
        r#"click(["id:cancel", "role:button:Cancel order", "text:Cancel order", "css:#cancel"]);"#,
        r#"click(["id:receipt", "role:link:Receipt", "text:Receipt", "css:#receipt"]);"#,
        r#"run_action("switch_tab", #{ "url": "/receipt/*" });"#,
        r#"click(["id:mail", "role:button:Mail it", "text:Mail it", "css:#mail"]);"#,
    ];
    assert_eq!(lines.len(), expected.len(), "{source}");
    for (line, start) in lines.iter().zip(expected) {
        assert!(
            line.starts_with(start),
            "`{line}` is not `{start}…` in:\n{source}"
        );
    }

    let dir = scratch("recorded-shop");
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    std::fs::write(dir.join("cancel_order.rhai"), &source).expect("the recipe written");
    let mut command = webagent_in(&dir);
    command
        .args([
            "recipe",
            "run",
            "cancel_order.rhai",
            "--yes",
            "--connect",
            &ws(),
        ])
        .args(["--url", &second.server.url("/shop")]);
    let out = output(command);
    assert_eq!(out.status.code(), Some(0), "{}\n{source}", said(&out));
    assert_eq!(second.mailed(), 1, "the replay mailed the receipt once");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn webagent_record_asks_for_a_dialog_s_answer_and_records_it_before_the_click_that_opened_it() {
    use std::io::Write as _;
    let s = shared();
    let dir = scratch("record-dialog");
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let shop = s.runtime.block_on(Shop::start());
    let url = shop.server.url("/orders");
    let (mut child, mut stdin, lines, mut seen) = record_command(&dir, &url, "cancel");

    let _turn = in_front();
    let (lines, mut seen) = s.runtime.block_on(async {
        let tab = tab_at(&url).await;
        // This test's own hold on the tab leaves its dialogs alone too.
        let _hold = tab.hold_dialogs();
        // The click is not over until the dialog is answered, which the
        // person does on the command's input once it asks.
        let answering = tokio::task::spawn_blocking(move || {
            line_with(&lines, "the page opened a confirm dialog", &mut seen);
            writeln!(stdin, "accept").expect("the answer");
            line_with(
                &lines,
                "  1  run_action(\"answer_dialogs\", #{ \"accept\": true });",
                &mut seen,
            );
            drop(stdin);
            (lines, seen)
        });
        click(&tab, "document.getElementById('cancel')").await;
        answering.await.expect("the answer given")
    });
    line_with(&lines, "wrote cancel.rhai (2 step(s))", &mut seen);
    let status = child.wait().expect("the command ends");
    assert!(status.success(), "{}", seen.join("\n"));
    let source = std::fs::read_to_string(dir.join("cancel.rhai")).expect("the recipe");
    let answer = source
        .find("answer_dialogs")
        .expect("the answer in the recipe");
    let click = source
        .find("click([\"id:cancel\"")
        .expect("the click in the recipe");
    assert!(answer < click, "{source}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A page with a heading no listing names, a button, and a log of the
/// keys the page itself sees and whether anyone prevented them.
fn heading_page() -> String {
    page(
        "Orders",
        r#"<h1 id="title">Orders</h1>
<button type="button" id="ship">Ship</button>
<script>window.seen = [];
addEventListener('keydown', (e) => window.seen.push(e.key + (e.defaultPrevented ? ' prevented' : '')));</script>"#,
    )
}

#[test]
fn alt_shift_a_over_an_element_reports_a_pick_with_its_facts_and_records_no_keys() {
    let s = shared();
    let _turn = in_front();
    s.runtime.block_on(async {
        s.server.html("/heading", heading_page());
        let tab = s
            .session
            .new_tab(&s.server.url("/heading"))
            .await
            .expect("a tab");
        let elements = "document.querySelectorAll('*').length";
        let before: usize = tab
            .page()
            .evaluate(elements)
            .await
            .expect("a count")
            .into_value()
            .expect("a number");
        let mut recorder = Recorder::start(&tab).await.expect("the recorder starts");
        let at = centre(&tab, "document.getElementById('title')").await;
        mouse(&tab, DispatchMouseEventType::MouseMoved, at).await;
        // Alt+Shift+A, by the key's place as a person's keyboard sends it.
        for kind in [
            DispatchKeyEventType::RawKeyDown,
            DispatchKeyEventType::KeyUp,
        ] {
            let event = DispatchKeyEventParams::builder()
                .r#type(kind)
                .key("A")
                .code("KeyA")
                .modifiers(1 | 8)
                .windows_virtual_key_code(65)
                .native_virtual_key_code(65)
                .build()
                .expect("a key event");
            tab.page().execute(event).await.expect("a key press");
        }
        // Enter after it: a keys step, so every earlier input has arrived
        // when it does.
        press(&tab, "Enter", 13).await;
        let got = inputs(&mut recorder, 2).await;
        match got.as_slice() {
            [Input::Pick { facts }, Input::Keys { keys }] => {
                assert_eq!(keys, "Enter");
                assert_eq!(facts["tag"], "h1", "{facts}");
                assert_eq!(facts["id"], "title", "{facts}");
                assert_eq!(facts["text"], "Orders", "{facts}");
                assert_eq!(facts["role"], "heading", "{facts}");
            }
            other => panic!("expected the pick and then Enter, got {other:#?}"),
        }
        let seen: Vec<String> = tab
            .page()
            .evaluate("window.seen")
            .await
            .expect("the page's log")
            .into_value()
            .expect("strings");
        assert_eq!(seen, ["A", "Enter"], "the page saw the keys, unprevented");
        let after: usize = tab
            .page()
            .evaluate(elements)
            .await
            .expect("a count")
            .into_value()
            .expect("a number");
        assert_eq!(before, after, "nothing was added to the page");
        drop(recorder);
        let _ = tab.close().await;
    });
}

#[test]
fn the_picker_reads_the_element_at_a_point_and_the_facts_a_step_kept() {
    let s = shared();
    s.runtime.block_on(async {
        s.server.html("/heading", heading_page());
        let tab = s
            .session
            .new_tab(&s.server.url("/heading"))
            .await
            .expect("a tab");
        let (x, y) = centre(&tab, "document.getElementById('title')").await;
        let at = webagent::script::locator_report(&tab, &PickedElement::Point { x, y }, None)
            .await
            .expect("a report");
        let shown: Vec<(String, usize)> = at
            .locators
            .iter()
            .map(|(l, n)| (l.to_string(), *n))
            .collect();
        // A text locator names controls only (locate.js), so on a
        // heading it names none; the others find it.
        assert_eq!(
            shown,
            [
                ("id:title".to_string(), 1),
                ("role:heading:Orders".to_string(), 1),
                ("text:Orders".to_string(), 0),
                ("css:#title".to_string(), 1),
            ]
        );
        assert_eq!(
            at.state.as_ref().map(|s| s.text.as_str()),
            Some("Orders"),
            "what an assertion is prefilled with"
        );
        let kept =
            webagent::script::locator_report(&tab, &PickedElement::Facts(at.facts.clone()), None)
                .await
                .expect("a report");
        assert_eq!(kept.locators, at.locators);
        assert_eq!(kept.line, at.line);
        let nothing = webagent::script::locator_report(
            &tab,
            &PickedElement::Point { x: -10.0, y: -10.0 },
            None,
        )
        .await;
        assert_eq!(
            nothing,
            Err("no element is at (-10, -10) on the page".to_string())
        );
        let _ = tab.close().await;
    });
}
