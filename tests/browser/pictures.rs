//! The model's pictures: marks drawn at the listed boxes in the listing's
//! colours, in frames of another origin too, and typed secrets blanked.

use std::time::Duration;

use webagent::browser::Tab;
use webagent::dom::PageState;

use crate::listed::find;
use crate::support::chromium::shared;
use crate::support::pages::bare_page;
use crate::support::tab::{observe, with_page};

/// A screenshot as the model gets it, written to a file and decoded from
/// there, as a person or a test reads a saved picture.
async fn saved_picture(
    tab: &Tab,
    state: &PageState,
    secrets: Vec<String>,
    name: &str,
) -> (webagent::vision::Screenshot, image::RgbImage) {
    let mut request = webagent::vision::ShotRequest::step(1024);
    request.secrets = secrets
        .into_iter()
        .map(webagent::secrets::SecretValue::from)
        .collect();
    let shot = webagent::browser::shot::capture(
        tab,
        Some(state),
        &request,
        &webagent::browser::shot::MarkColors::default(),
    )
    .await
    .expect("a screenshot");
    let file = std::env::temp_dir().join(format!("webagent-{name}-{}.jpg", std::process::id()));
    std::fs::write(&file, &shot.image).expect("writing the picture");
    let decoded = image::load_from_memory(&std::fs::read(&file).expect("reading it back"))
        .expect("a JPEG")
        .to_rgb8();
    let _ = std::fs::remove_file(&file);
    (shot, decoded)
}

/// Whether a pixel is within JPEG's error of `#rrggbb`.
fn near(pixel: &image::Rgb<u8>, hex: &str) -> bool {
    let want: Vec<i32> = (0..3)
        .map(|i| i32::from_str_radix(&hex[1 + 2 * i..3 + 2 * i], 16).unwrap_or(0))
        .collect();
    pixel
        .0
        .iter()
        .zip(want)
        .all(|(got, want)| (i32::from(*got) - want).abs() <= 40)
}

#[test]
fn marks_are_drawn_at_the_listed_boxes_in_the_listing_colours_and_leave_no_trace() {
    // Boxes at known places on a white page, far enough apart that no
    // label lands on another box.
    let html = bare_page(
        r#"<div style="background:#fff;height:800px">
        <button id=a style="position:absolute;left:100px;top:100px;width:200px;height:60px;border:0;background:#fff">Alpha</button>
        <a href="/x" style="position:absolute;left:500px;top:300px;width:160px;height:40px;display:block;color:#000">Beta</a>
        <input id=c style="position:absolute;left:800px;top:500px;width:300px;height:40px;border:1px solid #ddd;box-sizing:border-box">
        </div>"#,
    );
    with_page("/marks", &html, |tab, _| async move {
        let before = tab
            .eval("[document.documentElement.scrollWidth, document.documentElement.scrollHeight, document.body.getBoundingClientRect().height]")
            .await
            .expect("layout");
        let state = observe(&tab).await;
        assert_eq!(state.elements.len(), 3, "{}", state.listing);
        let (shot, img) = saved_picture(&tab, &state, Vec::new(), "marks").await;
        // 1280 CSS pixels scaled to 1024.
        assert_eq!((shot.width, shot.height), (1024, 640));
        assert_eq!((img.width(), img.height()), (1024, 640));
        assert_eq!(shot.marks.len(), 3, "{:?}", shot.marks);
        let scale = 1024.0 / 1280.0;
        let listed = webagent::browser::shot::MarkColors::default().listed;
        for (mark, (left, top, width, height)) in shot.marks.iter().zip([
            (100.0, 100.0, 200.0, 60.0),
            (500.0, 300.0, 160.0, 40.0),
            (800.0, 500.0, 300.0, 40.0),
        ]) {
            let at = |v: f64| (v * scale).round() as u32;
            assert_eq!(
                (mark.x, mark.y, mark.width, mark.height),
                (at(left), at(top), at(width), at(height)),
                "mark {} sits on its element's box",
                mark.index
            );
            assert!(!mark.new, "nothing is new on a first look");
            // Inside each corner of the box, by one pixel: the outline.
            let right = mark.x + mark.width - 2;
            let bottom = mark.y + mark.height - 2;
            for (x, y) in [
                (mark.x + 1, mark.y + 1),
                (right, mark.y + 1),
                (mark.x + 1, bottom),
                (right, bottom),
            ] {
                let pixel = img.get_pixel(x, y);
                assert!(
                    near(pixel, &listed),
                    "mark {} at ({x}, {y}) is {pixel:?}, not {listed}",
                    mark.index
                );
            }
            // The middle of the box is the page's own.
            let middle = img.get_pixel(mark.x + mark.width / 2, mark.y + mark.height - 8);
            assert!(
                !near(middle, &listed),
                "mark {} is an outline, not a fill",
                mark.index
            );
        }
        // Nothing but the marks: the page's white where no box is.
        let stray = (0..640)
            .flat_map(|y| (0..70).map(move |x| (x, y)))
            .filter(|&(x, y)| !near(img.get_pixel(x, y), "#ffffff"))
            .count();
        assert_eq!(stray, 0, "the layer draws nothing beside the boxes");
        // Gone before anything else happens, and the layout never moved.
        let left = tab
            .eval("document.querySelectorAll('webagent-marks').length")
            .await
            .expect("eval");
        assert_eq!(left, 0);
        let after = tab
            .eval("[document.documentElement.scrollWidth, document.documentElement.scrollHeight, document.body.getBoundingClientRect().height]")
            .await
            .expect("layout");
        assert_eq!(before, after);

        // An element new since the last look is marked in the listing's
        // colour for new elements.
        tab.eval("(() => { const b = document.createElement('button'); b.textContent = 'Gamma'; b.style.cssText = 'position:absolute;left:100px;top:400px;width:120px;height:50px;border:0;background:#fff'; document.body.appendChild(b); return 1; })()")
            .await
            .expect("adding a button");
        let state = observe(&tab).await;
        let gamma = find(&state, "Gamma").expect("listed");
        assert!(gamma.is_new);
        let (shot, img) = saved_picture(&tab, &state, Vec::new(), "marks-new").await;
        let mark = shot
            .marks
            .iter()
            .find(|m| m.index == gamma.index.0)
            .expect("a mark for the new button");
        assert!(mark.new);
        let fresh = webagent::browser::shot::MarkColors::default().fresh;
        let pixel = img.get_pixel(mark.x + mark.width - 2, mark.y + mark.height - 2);
        assert!(near(pixel, &fresh), "{pixel:?} is not {fresh}");
    });
}

#[test]
fn marks_carry_the_labels_a_viewer_numbers_the_elements_by() {
    // A named session's workbench numbers the elements its own way: the
    // marks are drawn and given back with its indices, and an element new
    // since the last look is still marked new under its label.
    let html = bare_page(
        r#"<button style="position:absolute;left:100px;top:100px;width:200px;height:60px">One</button>
        <button style="position:absolute;left:500px;top:100px;width:200px;height:60px">Two</button>"#,
    );
    with_page("/labels", &html, |tab, _| async move {
        observe(&tab).await;
        tab.eval("(() => { const b = document.createElement('button'); b.textContent = 'Three'; b.style.cssText = 'position:absolute;left:100px;top:400px;width:200px;height:60px'; document.body.appendChild(b); return 1; })()")
            .await
            .expect("adding a button");
        let state = observe(&tab).await;
        let index = |text: &str| find(&state, text).expect("listed").index.0;
        let (one, two, three) = (index("One"), index("Two"), index("Three"));
        let mut request = webagent::vision::ShotRequest::step(1024);
        request.labels = [(one, 4), (two, 9), (three, 12)].into_iter().collect();
        let shot = webagent::browser::shot::capture(
            &tab,
            Some(&state),
            &request,
            &webagent::browser::shot::MarkColors::default(),
        )
        .await
        .expect("a screenshot");
        let mut labels: Vec<(usize, bool)> = shot.marks.iter().map(|m| (m.index, m.new)).collect();
        labels.sort_unstable();
        assert_eq!(
            labels,
            vec![(4, false), (9, false), (12, true)],
            "{:?}",
            shot.marks
        );
    });
}

#[test]
fn marks_of_a_frame_of_another_origin_sit_on_its_elements_and_keep_their_indices() {
    let s = shared();
    s.server.html(
        "/mark-frame-inner",
        bare_page(r#"<button style="position:absolute;left:20px;top:10px;width:100px;height:40px">Inside</button>"#),
    );
    let other = format!(
        "http://localhost:{}/mark-frame-inner",
        s.server.addr().port()
    );
    let html = bare_page(&format!(
        r#"<button style="position:absolute;left:40px;top:40px;width:120px;height:40px">Before</button>
        <iframe src="{other}" style="position:absolute;left:400px;top:100px;width:300px;height:200px;border:0"></iframe>
        <button style="position:absolute;left:40px;top:400px;width:120px;height:40px">After</button>"#
    ));
    with_page("/mark-frame", &html, |tab, _| async move {
        let mut state = observe(&tab).await;
        for _ in 0..50 {
            if find(&state, "Inside").is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            state = observe(&tab).await;
        }
        let inside = find(&state, "Inside")
            .expect("the frame's button is listed")
            .index
            .0;
        let after = find(&state, "After").expect("listed").index.0;
        assert!(inside < after, "{}", state.listing);
        let (shot, _) = saved_picture(&tab, &state, Vec::new(), "marks-frame").await;
        let scale = 1024.0 / 1280.0;
        let at = |v: f64| (v * scale).round() as u32;
        let mark = |index: usize| {
            *shot
                .marks
                .iter()
                .find(|m| m.index == index)
                .unwrap_or_else(|| panic!("no mark {index}: {:?}", shot.marks))
        };
        let m = mark(inside);
        assert_eq!(
            (m.x, m.y, m.width, m.height),
            (at(420.0), at(110.0), at(100.0), at(40.0))
        );
        let m = mark(after);
        assert_eq!(
            (m.x, m.y, m.width, m.height),
            (at(40.0), at(400.0), at(120.0), at(40.0))
        );
    });
}

#[test]
fn a_secret_typed_into_a_text_field_is_blanked_in_the_picture() {
    let secret = "hunter2-SECRET";
    let html = bare_page(&format!(
        r#"<input id=key value="{secret}" style="position:absolute;left:100px;top:100px;width:600px;height:80px;font:bold 48px monospace;color:#000;background:#fff;border:1px solid #ccc;padding:0 8px">
        <input id=other value="plain text" style="position:absolute;left:100px;top:300px;width:600px;height:80px;font:bold 48px monospace;color:#000;background:#fff;border:1px solid #ccc;padding:0 8px">"#
    ));
    with_page("/secret-field", &html, |tab, _| async move {
        let state = observe(&tab).await;
        // Dark pixels inside a field's box (its text), in image pixels.
        let dark = |img: &image::RgbImage, top: f64| {
            let scale = 1024.0 / 1280.0;
            let (x0, y0) = ((110.0 * scale) as u32, ((top + 10.0) * scale) as u32);
            let (x1, y1) = ((690.0 * scale) as u32, ((top + 70.0) * scale) as u32);
            let mut n = 0;
            for y in y0..y1 {
                for x in x0..x1 {
                    let p = img.get_pixel(x, y).0;
                    if u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2]) < 200 {
                        n += 1;
                    }
                }
            }
            n
        };
        // Without the secret known, the field shows it: the check can fail.
        let (_, shown) = saved_picture(&tab, &state, Vec::new(), "secret-shown").await;
        assert!(dark(&shown, 100.0) > 200, "the test page shows its text");
        let (shot, masked) =
            saved_picture(&tab, &state, vec![secret.to_string()], "secret-masked").await;
        assert_eq!(shot.masked, 1);
        assert_eq!(
            dark(&masked, 100.0),
            0,
            "no text of the secret field is left"
        );
        assert!(dark(&masked, 300.0) > 200, "other fields are left alone");
        // The field itself was never touched.
        let value = tab
            .eval("document.getElementById('key').value")
            .await
            .expect("eval");
        assert_eq!(value, secret);
    });
}

#[test]
fn observe_and_exec_write_the_models_pictures_with_typed_secrets_blanked() {
    let s = shared();
    s.server.html(
        "/cli-shot",
        bare_page(
            r#"<button style="position:absolute;left:40px;top:40px;width:200px;height:50px">Ship</button>
            <input id=key style="position:absolute;left:100px;top:200px;width:600px;height:80px;font:bold 48px monospace;color:#000;background:#fff;border:1px solid #ccc;box-sizing:border-box">"#,
        ),
    );
    let ws = s
        .session
        .websocket_url()
        .expect("launched session has an address");
    let dir = std::env::temp_dir().join(format!("webagent-cli-shot-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let webagent = || {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_webagent"));
        command
            .current_dir(std::env::temp_dir())
            .env("WEBAGENT_CONFIG", "/dev/null")
            .args(["--log-file", "/dev/null"]);
        command
    };
    let png = dir.join("observed.png");
    let out = webagent()
        .args(["observe", "--connect", &ws, "--screenshot"])
        .arg(&png)
        .arg(s.server.url("/cli-shot"))
        .output()
        .expect("running webagent observe");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&png).expect("the picture was written");
    assert!(bytes.starts_with(b"\x89PNG"), "a .png name gets a PNG");
    let picture = image::load_from_memory(&bytes).expect("decodes").to_rgb8();
    assert_eq!(picture.dimensions(), (1024, 640));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("2 marks"), "{stderr}");

    // exec: one picture per action, the typed secret not in it. A
    // screenshot written to a path of one's choosing is a commit, which
    // exec runs only with --yes.
    let shots = dir.join("steps");
    let out = webagent()
        .env("SHOT_PW", "hunter2-SECRET")
        .args([
            "exec",
            "--yes",
            "--json",
            "--connect",
            &ws,
            "--secret",
            "SHOT_PW",
            "--screenshot",
        ])
        .arg(&shots)
        .arg(s.server.url("/cli-shot"))
        .arg(r##"{"input_text": {"selector": "#key", "text": "<secret>SHOT_PW</secret>"}}"##)
        .arg(
            serde_json::json!({"screenshot": {"selector": "#key", "path": dir.join("key.png")}})
                .to_string(),
        )
        .output()
        .expect("running webagent exec");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    assert_eq!(lines.len(), 2);
    let first = lines[0]["screenshot"]
        .as_str()
        .expect("a picture per action");
    assert!(first.ends_with("01-input_text.jpg"), "{first}");
    assert!(lines[1]["screenshot"]
        .as_str()
        .is_some_and(|f| f.ends_with("02-screenshot.jpg")));
    let typed = image::open(first).expect("decodes").to_rgb8();
    // The field's inside, in image pixels: no dark text left.
    let scale = 1024.0 / 1280.0;
    let dark = (((210.0 * scale) as u32)..((270.0 * scale) as u32))
        .flat_map(|y| (((110.0 * scale) as u32)..((690.0 * scale) as u32)).map(move |x| (x, y)))
        .filter(|&(x, y)| {
            let p = typed.get_pixel(x, y).0;
            u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2]) < 200
        })
        .count();
    assert_eq!(dark, 0, "the secret's characters are not in the picture");
    // The action's own PNG of the field: its size, the secret covered too.
    let field = image::open(dir.join("key.png"))
        .expect("the action's PNG")
        .to_rgb8();
    assert_eq!(field.dimensions(), (600, 80));
    let dark = (10..70)
        .flat_map(|y| (10..590).map(move |x| (x, y)))
        .filter(|&(x, y)| {
            let p = field.get_pixel(x, y).0;
            u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2]) < 200
        })
        .count();
    assert_eq!(dark, 0, "the field's own picture does not show the secret");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("1 secret fields blanked"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
