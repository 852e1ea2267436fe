//! What the next observation holds: the first look at a new document
//! (what the page renders right after its load, across sites), and what
//! arrives late after an action (a submenu, suggestions, an accordion).

use std::time::Duration;

use serde_json::json;
use webagent::browser::act::ExecOptions;
use webagent::browser::{ObserveOptions, Tab};
use webagent::dom::PageState;

use crate::readback::{index_of, seen};
use crate::support::chromium::shared;
use crate::support::pages::seen_page;
use crate::support::tab::{
    act, act_on, act_with, assert_ok, observe, quick_options, with_page_in_front,
};

#[test]
fn a_submenu_that_opens_late_after_hover_is_in_the_next_listing() {
    let html = seen_page(
        r#"<nav><div id="file" tabindex="0" role="menuitem" aria-haspopup="true">File</div>
        <ul id="sub" role="menu" style="display:none"><li role="menuitem">Export as PDF</li><li role="menuitem">Print</li></ul></nav>
        <script>
          file.addEventListener('mouseenter', () => setTimeout(() => { sub.style.display = 'block'; }, 300));
        </script>"#,
    );
    with_page_in_front("/late-menu", &html, |tab, _| async move {
        let before = observe(&tab).await;
        assert!(find_text(&before, "Export as PDF").is_none());
        let result = act_on(
            &tab,
            &before,
            json!({"hover": {"index": index_of(&before, "File")}}),
            quick_options(),
        )
        .await;
        assert_ok(&result);
        let after = observe(&tab).await;
        assert!(
            find_text(&after, "Export as PDF").is_some(),
            "{}",
            after.listing
        );
    });
}

#[test]
fn suggestions_that_arrive_late_after_typing_are_in_the_next_listing() {
    let html = seen_page(
        r#"<input id="q" role="combobox" placeholder="City" autocomplete="off"><ul id="hints" role="listbox"></ul>
        <script>
          let timer = 0;
          q.addEventListener('input', () => {
            clearTimeout(timer);
            timer = setTimeout(() => {
              hints.innerHTML = '';
              for (const city of ['Paris', 'Parma', 'Pavia'].filter((c) => c.toLowerCase().startsWith(q.value.toLowerCase()))) {
                const li = document.createElement('li');
                li.setAttribute('role', 'option');
                li.textContent = city;
                hints.appendChild(li);
              }
            }, 300);
          });
        </script>"#,
    );
    with_page_in_front("/late-hints", &html, |tab, _| async move {
        let result = act(
            &tab,
            json!({"input_text": {"selector": "#q", "text": "par"}}),
        )
        .await;
        assert_ok(&result);
        let after = observe(&tab).await;
        assert!(find_text(&after, "Parma").is_some(), "{}", after.listing);
        assert!(find_text(&after, "Pavia").is_none(), "{}", after.listing);
    });
}

fn find_text<'a>(
    state: &'a PageState,
    text: &str,
) -> Option<&'a webagent::dom::InteractiveElement> {
    state.elements.iter().find(|e| e.text == text)
}

/// Navigates with the action a driver runs (its first look on) and
/// observes as the driver does right after.
async fn navigate_and_observe(tab: &Tab, url: &str) -> PageState {
    let opts = ExecOptions {
        first_look: Some(ObserveOptions::default()),
        ..quick_options()
    };
    let result = act_with(tab, json!({"navigate": {"url": url}}), opts).await;
    assert_ok(&result);
    observe(tab).await
}

#[test]
fn the_first_listing_after_a_navigation_has_what_the_page_renders_right_after_its_load() {
    // Each page adds a button once it has loaded, by a way a page queues
    // work for later: an animation frame, a timer, a message to itself
    // (React's scheduler). The first look, taken in the load task, must
    // not list the page before that. (An idle callback is waited for too,
    // but a loaded machine may hold one back past any settle limit, so it
    // is not asserted here.)
    let later = |how: &str| {
        seen_page(&format!(
            r#"<h1>Loading</h1><div id="app"></div>
            <script>
              const add = () => {{ const b = document.createElement('button'); b.textContent = 'Rendered {how}'; app.append(b); }};
              const channel = new MessageChannel();
              channel.port1.onmessage = add;
              addEventListener('load', () => {{
                const how = '{how}';
                if (how === 'by frame') requestAnimationFrame(add);
                if (how === 'by timer') setTimeout(add, 0);
                if (how === 'by message') channel.port2.postMessage(null);
              }});
            </script>"#
        ))
    };
    let s = shared();
    let mut urls = Vec::new();
    for (path, how) in [
        ("/later-frame", "by frame"),
        ("/later-timer", "by timer"),
        ("/later-message", "by message"),
    ] {
        s.server.html(path, later(how));
        urls.push((s.server.url(path), how));
    }
    s.server.html(
        "/ready",
        seen_page(r#"<h1>Ready</h1><button onclick="seen.push('pressed')">Press</button>"#),
    );
    let ready = s.server.url("/ready");
    with_page_in_front("/start", &seen_page("<p>start</p>"), |tab, _| async move {
        for (url, how) in urls {
            let state = navigate_and_observe(&tab, &url).await;
            let wanted = format!("Rendered {how}");
            assert!(
                state.elements.iter().any(|e| e.text == wanted),
                "{how}: {}",
                state.listing
            );
        }
        // A page done at its load is listed by its first look, and the
        // listing's indices reach the page: the look's world is the tab's.
        let before = tab.first_looks_used();
        let state = navigate_and_observe(&tab, &ready).await;
        assert_eq!(state.observation, 1, "the first look was listed");
        assert_eq!(
            tab.first_looks_used(),
            before + 1,
            "the first look answered"
        );
        let press = index_of(&state, "Press");
        let result = act_on(
            &tab,
            &state,
            json!({"click": {"index": press}}),
            quick_options(),
        )
        .await;
        assert_ok(&result);
        assert_eq!(seen(&tab).await, vec!["pressed"]);
    });
}

#[test]
fn a_first_look_is_used_when_it_answers_long_after_the_navigation() {
    // Chromium answers the navigation at the load event, and the look after
    // the load listeners, in the same task: a look that takes long (a big
    // table on a busy machine) answers well after the navigation. The page
    // stands in for one by holding up the look's question to its hook.
    let s = shared();
    s.server.html(
        "/slow-look",
        seen_page(
            r#"<h1>Slow</h1><button>Go on</button>
            <script>
              document.addEventListener('webagent:busy?', () => {
                const until = performance.now() + 400;
                while (performance.now() < until) {}
              });
            </script>"#,
        ),
    );
    let url = s.server.url("/slow-look");
    with_page_in_front(
        "/slow-look-start",
        &seen_page("<p>start</p>"),
        |tab, _| async move {
            let before = tab.first_looks_used();
            let state = navigate_and_observe(&tab, &url).await;
            assert!(
                state.elements.iter().any(|e| e.text == "Go on"),
                "{}",
                state.listing
            );
            assert_eq!(
                tab.first_looks_used(),
                before + 1,
                "the first look answered"
            );
        },
    );
}

#[test]
fn a_first_look_asked_after_the_page_was_shown_is_taken_only_if_nothing_changed_since_its_load() {
    // A small page can finish loading before the question reaches it. The
    // look is then taken at once if the page is still as its load left it,
    // and refused if it changed since.
    let html = seen_page(
        r#"<button>Steady</button><div id="app"></div>
        <script>
          addEventListener('load', () => {
            if (location.hash === '#changing') setTimeout(() => {
              const b = document.createElement('button'); b.textContent = 'Added'; app.append(b);
            }, 0);
          });
        </script>"#,
    );
    with_page_in_front("/shown-before-asked", &html, |tab, url| async move {
        let ask = "globalThis.__webagentAct.firstLook({fullPage: false, marginPx: -1, textLimit: 4000, listeners: true})";
        // Loaded through the tab, so the helper saw the document start.
        tab.navigate(&format!("{url}?steady"), Duration::from_secs(10))
            .await
            .expect("loading the steady page");
        let steady = tab.eval(ask).await.expect("asking for the first look");
        assert_eq!(steady["early"], json!(true), "{steady}");
        let listing = steady["observation"]
            .as_str()
            .expect("the observation's JSON");
        assert!(listing.contains("Steady"), "{listing}");

        tab.navigate(&format!("{url}?changing#changing"), Duration::from_secs(10))
            .await
            .expect("loading the changing page");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while tab
            .eval("document.querySelectorAll('button').length")
            .await
            .ok()
            != Some(json!(2))
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the page never added its button"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let changed = tab.eval(ask).await.expect("asking for the first look");
        assert_eq!(changed["early"], json!(false), "{changed}");
    });
}

#[test]
fn observations_after_navigations_between_sites_reach_the_new_document() {
    // Chromium numbers contexts per renderer process, so after a navigation
    // into another site's process the number of the old page's world can
    // name some context of the new page (its frames have several), one
    // without the observer. Every
    // observation must still reach webagent's world in the new document,
    // with or without a first look.
    let s = shared();
    s.server.html(
        "/site",
        seen_page(
            r#"<h1 id="host"></h1><button>Here</button><script>host.textContent = location.host</script>
            <iframe srcdoc="<p>one</p>"></iframe><iframe srcdoc="<p>two</p>"></iframe>"#,
        ),
    );
    let near = s.server.url("/site");
    let far = near.replacen("127.0.0.1", "localhost", 1);
    with_page_in_front(
        "/sites-start",
        &seen_page("<p>start</p>"),
        |tab, _| async move {
            for round in 0..6 {
                for (url, look) in [(&near, false), (&far, false), (&near, true), (&far, true)] {
                    let to = format!("{url}?round={round}");
                    let opts = ExecOptions {
                        first_look: look.then(ObserveOptions::default),
                        ..quick_options()
                    };
                    let result = act_with(&tab, json!({"navigate": {"url": to}}), opts).await;
                    assert_ok(&result);
                    let state = observe(&tab).await;
                    assert_eq!(state.url, to, "round {round}: {}", state.listing);
                    assert!(
                        state.elements.iter().any(|e| e.text == "Here"),
                        "{}",
                        state.listing
                    );
                }
            }
        },
    );
}

#[test]
fn an_accordion_still_opening_after_a_click_is_listed_whole_in_the_next_observation() {
    // Four panels that take 400 ms to open, each animated another way: a
    // CSS transition, CSS keyframes, the Web Animations API, and a script
    // that changes a stylesheet rule each frame (no DOM mutation at all).
    let body = |n: usize| {
        format!(
            "<p>Panel {n} opens. Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua duis. Sed tristique nunc, cursus euismod {n}.</p>\
             <p><a href=\"#a{n}\">First link {n}</a></p><p><a href=\"#b{n}\">Lower link {n}</a></p>"
        )
    };
    let html = seen_page(&format!(
        r#"<style>
          .panel {{ overflow: hidden; height: 0; }}
          #p1.open {{ height: 220px; transition: height 400ms linear; }}
          @keyframes grow {{ from {{ height: 0 }} to {{ height: 220px }} }}
          #p2.open {{ height: 220px; animation: grow 400ms linear; }}
          .inner {{ height: 220px; }}
        </style>
        <style id="rule">#p4 {{ height: 0px; }}</style>
        <button id="h1">Section 1</button><div class="panel" id="p1"><div class="inner">{}</div></div>
        <button id="h2">Section 2</button><div class="panel" id="p2"><div class="inner">{}</div></div>
        <button id="h3">Section 3</button><div class="panel" id="p3"><div class="inner">{}</div></div>
        <button id="h4">Section 4</button><div class="panel" id="p4"><div class="inner">{}</div></div>
        <script>
          h1.onclick = () => p1.classList.add('open');
          h2.onclick = () => p2.classList.add('open');
          h3.onclick = () => {{
            p3.animate([{{ height: '0px' }}, {{ height: '220px' }}], {{ duration: 400, fill: 'forwards' }});
          }};
          h4.onclick = () => {{
            const rule = document.getElementById('rule').sheet.cssRules[0];
            const start = performance.now();
            const step = (now) => {{
              const t = Math.min(1, (now - start) / 400);
              rule.style.height = (220 * t) + 'px';
              if (t < 1) requestAnimationFrame(step);
            }};
            requestAnimationFrame(step);
          }};
        </script>"#,
        body(1),
        body(2),
        body(3),
        body(4)
    ));
    with_page_in_front("/accordion", &html, |tab, _| async move {
        for n in 1..=4 {
            let before = observe(&tab).await;
            assert!(find_text(&before, &format!("Lower link {n}")).is_none());
            let result = act_on(
                &tab,
                &before,
                json!({"click": {"index": index_of(&before, &format!("Section {n}"))}}),
                quick_options(),
            )
            .await;
            assert_ok(&result);
            let after = observe(&tab).await;
            assert!(
                find_text(&after, &format!("Lower link {n}")).is_some(),
                "panel {n}: {result:?}\n{}",
                after.listing
            );
            let sentence = format!("duis. Sed tristique nunc, cursus euismod {n}.");
            assert!(
                after.page_text.text.contains(&sentence),
                "panel {n}: {result:?}\n{}",
                after.page_text.text
            );
        }
    });
}
