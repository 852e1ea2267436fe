//! `webagent observe`: print what the model would see on a page.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use super::flags::parse_page_url;
use super::output::Output;
use crate::bench::{median, round2};
use crate::browser::ObserveOptions;
use crate::config::BrowserOpts;
use crate::daemon::Request;
use crate::dom::PageState;
use crate::environment::{Environment, EnvironmentError};
use crate::mcp::{ClientView, PageUpdate};
use crate::session::{Prepared, Session};
use crate::vision::ShotError;

/// Flags of `webagent observe`.
#[derive(Debug, clap::Args)]
pub struct ObserveArgs {
    /// The page to open.
    #[arg(value_parser = parse_page_url, required_unless_present = "session_name")]
    pub url: Option<String>,
    /// Print the page of the named session (`webagent session start`)
    /// instead of opening one, in the session's numbering; `exec
    /// --session` acts on this listing (exit 4 when there is no such
    /// session, 5 when it is gone).
    #[arg(long = "session", value_name = "NAME", conflicts_with_all = ["url", "repeat", "full_page", "margin"])]
    pub session_name: Option<String>,
    /// With --session: print only what changed since the session's last
    /// listing (the delta MCP clients get), or the whole page when it is
    /// a new document.
    #[arg(long, requires = "session_name")]
    pub delta: bool,
    /// List the whole page, not just the viewport plus a margin.
    #[arg(long)]
    pub full_page: bool,
    /// Print one JSON object instead of the listing.
    #[arg(long)]
    pub json: bool,
    /// Observe N times and print timing figures instead.
    #[arg(long, value_name = "N")]
    pub repeat: Option<usize>,
    /// Margin around the viewport in CSS pixels (default: half a viewport).
    #[arg(long, value_name = "PX")]
    pub margin: Option<f64>,
    /// Also write the screenshot the model would get (the viewport with
    /// each listed element's box and index drawn on it, secrets blanked)
    /// to FILE: PNG when it ends in .png, JPEG otherwise.
    #[arg(long, value_name = "FILE")]
    pub screenshot: Option<PathBuf>,
    /// The browser to use.
    #[command(flatten)]
    pub browser: BrowserOpts,
}

/// Runs `webagent observe`.
pub fn run(mut args: ObserveArgs) -> anyhow::Result<ExitCode> {
    if let Some(name) = &args.session_name {
        let request = Request::Observe {
            json: args.json,
            delta: args.delta,
            screenshot: args
                .screenshot
                .as_deref()
                .map(super::session_client::absolute),
        };
        return Ok(super::session_client::forward(name, &request));
    }
    let flags = super::flags::SessionFlags {
        browser: args.browser.clone(),
        ..Default::default()
    }
    .overrides(Default::default());
    let loaded = match super::flags::load(None, &flags) {
        Ok(loaded) => loaded,
        Err(code) => return Ok(code),
    };
    args.full_page |= loaded.config.agent.listing == crate::config::ListingMode::FullPage;
    // The page is observed in a session like any command's, so the
    // allowed domains and secrets hold here too.
    let prepared = match Prepared::new(loaded.config, &loaded.env, &[], &[]) {
        Ok(prepared) => prepared,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(super::exit::EXIT_USAGE));
        }
    };
    let runtime = super::runtime()?;
    runtime.block_on(observe_command(args, prepared))
}

fn observe_options(args: &ObserveArgs) -> ObserveOptions {
    ObserveOptions {
        full_page: args.full_page,
        margin_px: args.margin,
        ..ObserveOptions::default()
    }
}

async fn observe_command(args: ObserveArgs, mut prepared: Prepared) -> anyhow::Result<ExitCode> {
    prepared.observe = observe_options(&args);
    let (events, _reports) = tokio::sync::mpsc::unbounded_channel();
    let url = args.url.clone().unwrap_or_default();
    let mut session = prepared.start(Some(&url), events).await?;
    if let Err(error) = &session.opened {
        anyhow::bail!("{error}");
    }
    if let Some(n) = args.repeat {
        // Timing only: no page content is printed, so the tab is observed
        // directly, without the boundary's masking in the figures.
        let tab = session.environment.inner().inner().tab();
        let opts = observe_options(&args);
        let n = n.max(1);
        let mut times = Vec::with_capacity(n);
        let mut last = None;
        for _ in 0..n {
            let state = tab.observe(&opts).await?;
            times.push(state.extract_ms);
            last = Some(state);
        }
        session.close().await;
        times.sort_by(f64::total_cmp);
        let (elements, chars) = last
            .map(|s| (s.elements.len(), s.listing.chars().count()))
            .unwrap_or_default();
        let summary = serde_json::json!({
            "extract_ms": {
                "min": round2(times[0]),
                "median": round2(median(&times)),
                "max": round2(times[times.len() - 1]),
            },
            "elements": elements,
            "chars": chars,
        });
        println!("{summary}");
        return Ok(ExitCode::SUCCESS);
    }
    // Through the session's environment, like every command: what it
    // returns is masked, and its pictures cover fields holding a secret.
    let observed = session.environment.observe().await;
    let state = match observed {
        Ok(state) => state,
        Err(error) => {
            session.close().await;
            anyhow::bail!("observing {url}: {error}");
        }
    };
    if let Some(file) = &args.screenshot {
        let written = write_screenshot(
            &mut session.environment,
            file,
            session.config.llm.image_width,
            HashMap::new(),
        )
        .await;
        if let Err(error) = written {
            session.close().await;
            anyhow::bail!("{error}");
        }
    }
    session.close().await;
    print_observation(&state, args.json, &mut Output::Console);
    Ok(ExitCode::SUCCESS)
}

/// Prints a page as `observe` does: one JSON object, or the URL, title,
/// listing and page text.
fn print_observation(state: &PageState, json: bool, out: &mut Output) {
    if json {
        out.line(&observation_json(state).to_string());
    } else {
        out.line(&state.url);
        out.line(&state.title);
        out.out(&state.listing);
        if !state.page_text.text.is_empty() {
            out.line(&format!(
                "\n--- page text ---\n{}",
                state.page_text.for_model()
            ));
        }
    }
}

/// What `observe --session` asks of a session's page.
#[derive(Debug)]
pub struct SessionObserve<'a> {
    /// One JSON object instead of the listing.
    pub json: bool,
    /// Only what changed since the session's last listing.
    pub delta: bool,
    /// Where to write the model's screenshot.
    pub screenshot: Option<&'a std::path::Path>,
}

/// `observe` on a session's page: the page in the session's numbering
/// (`view`), or with `delta` what changed since its last listing, as an
/// MCP client gets it. `last` becomes the page observed. Gives the exit
/// code, and the browser's error when it is gone for good.
pub async fn observe_in_session(
    asked: &SessionObserve<'_>,
    session: &mut Session,
    view: &mut ClientView,
    last: &mut Option<PageState>,
    out: &mut Output,
) -> Result<u8, EnvironmentError> {
    let page = match session.environment.observe().await {
        Ok(page) => page,
        Err(error) if error.fatal => return Err(error),
        Err(error) => {
            out.err(&format!(
                "error: observing the page failed: {}",
                error.message
            ));
            return Ok(1);
        }
    };
    if let Some(file) = asked.screenshot {
        let width = session.config.llm.image_width;
        // Marked in the numbering the listing below is printed in.
        view.number(&page);
        let labels = view.labels();
        if let Err(error) = write_screenshot(&mut session.environment, file, width, labels).await {
            out.err(&format!("error: {error}"));
            return Ok(1);
        }
    }
    if asked.delta {
        let body = match view.update(&page) {
            PageUpdate::Same => serde_json::json!({"same": true}),
            PageUpdate::Delta(delta) => serde_json::json!({"page_delta": delta}),
            PageUpdate::Whole(text) => serde_json::json!({"page": text}),
        };
        if asked.json {
            out.line(&body.to_string());
        } else {
            out.out(&delta_text(&body));
        }
    } else {
        let shown = view.shown(&page);
        print_observation(&shown, asked.json, out);
    }
    *last = Some(page);
    Ok(0)
}

/// A delta body (`same`, `page_delta` or `page`, as MCP sends them) for a
/// person or a shell: `- [3]` for a line gone, `~ [5] …` for a line that
/// reads differently, `+ [7] …` after the line it follows.
fn delta_text(body: &serde_json::Value) -> String {
    if let Some(page) = body.get("page").and_then(|p| p.as_str()) {
        return format!("{page}\n");
    }
    let Some(delta) = body.get("page_delta") else {
        return "(no change since the last listing)\n".to_string();
    };
    let text_of = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    let mut text = format!("{}\n{}\n", text_of(&delta["url"]), text_of(&delta["title"]));
    for index in delta["removed"].as_array().into_iter().flatten() {
        text.push_str(&format!("- [{index}]\n"));
    }
    for pair in delta["changed"].as_array().into_iter().flatten() {
        text.push_str(&format!("~ {}\n", text_of(&pair[1]).trim_start()));
    }
    for run in delta["inserted"].as_array().into_iter().flatten() {
        let after = match run[0].as_u64() {
            Some(index) => format!("after [{index}]"),
            None => "at the top".to_string(),
        };
        text.push_str(&format!("+ {after}:\n"));
        for pair in run[1].as_array().into_iter().flatten() {
            text.push_str(&format!("+ {}\n", text_of(&pair[1])));
        }
    }
    if let Some(splice) = delta.get("text") {
        text.push_str(&format!(
            "--- page text, from line {} ({} lines replaced) ---\n",
            splice["at"], splice["remove"]
        ));
        for line in splice["insert"].as_array().into_iter().flatten() {
            text.push_str(&format!("{}\n", text_of(line)));
        }
    }
    text
}

/// Writes the model's picture of the page as last observed in
/// `environment` (marked, secrets blanked, `width` wide) to `file`, PNG
/// when its name ends in `.png`, and says so on stderr. The marks carry
/// `labels` (a session's numbering; empty: the page's own). The error
/// names the file.
pub async fn write_screenshot<E: Environment>(
    environment: &mut E,
    file: &std::path::Path,
    width: u32,
    labels: HashMap<usize, usize>,
) -> anyhow::Result<crate::vision::Screenshot> {
    let mut request = crate::vision::ShotRequest::step(width);
    request.labels = labels;
    request.png = file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    let shot = match environment.screenshot(&request).await {
        Ok(shot) => shot,
        Err(error @ ShotError::NoPictures) => anyhow::bail!("{error}"),
        Err(error) => anyhow::bail!("the screenshot failed: {error}"),
    };
    save_picture(&shot, file)?;
    Ok(shot)
}

/// Writes a picture to `file` (creating its directory) and reports it on
/// stderr, so stdout keeps its listing or JSON.
pub fn save_picture(
    shot: &crate::vision::Screenshot,
    file: &std::path::Path,
) -> anyhow::Result<()> {
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("creating {}: {e}", dir.display()))?;
    }
    std::fs::write(file, &shot.image)
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", file.display()))?;
    eprintln!(
        "screenshot: {} ({}×{}, {} marks{}, {:.0} ms)",
        file.display(),
        shot.width,
        shot.height,
        shot.marks.len(),
        if shot.masked > 0 {
            format!(", {} secret fields blanked", shot.masked)
        } else {
            String::new()
        },
        shot.capture_ms
    );
    Ok(())
}

/// The `observe --json` object: the shape other commands (`exec --observe`)
/// print too.
pub fn observation_json(state: &PageState) -> serde_json::Value {
    let elements: Vec<serde_json::Value> = state
        .elements
        .iter()
        .map(|e| {
            let attributes: serde_json::Map<String, serde_json::Value> = e
                .attributes
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                .collect();
            serde_json::json!({
                "index": e.index.0,
                "tag": e.tag,
                "text": e.text,
                "attributes": attributes,
                "is_new": e.is_new,
                "depth": e.depth,
                "parent": e.parent.map(|p| p.0),
                "in_shadow_root": e.in_shadow_root,
                "frame": e.frame.map(|f| f.0),
                "cross_origin_frame": e.cross_origin_frame,
            })
        })
        .collect();
    serde_json::json!({
        "url": state.url,
        "title": state.title,
        "observation": state.observation,
        "full_page": state.full_page,
        "tabs": state.tabs,
        "elements": elements,
        "listing": state.listing,
        "page_text": state.page_text.text,
        "page_text_clipped": state.page_text.clipped,
        "scroll": {
            "x": state.scroll.x,
            "y": state.scroll.y,
            "viewport_width": state.scroll.viewport_width,
            "viewport_height": state.scroll.viewport_height,
            "page_width": state.scroll.page_width,
            "page_height": state.scroll.page_height,
            "pages_above": round2(state.scroll.pages_above()),
            "pages_below": round2(state.scroll.pages_below()),
        },
        "left_out": {"above": state.left_out.above, "below": state.left_out.below},
        "extract_ms": round2(state.extract_ms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delta_reads_as_lines_gone_changed_and_inserted() {
        let body = serde_json::json!({"page_delta": {
            "url": "http://127.0.0.1:1/orders",
            "title": "Orders",
            "removed": [4],
            "changed": [[5, "  [5]<button>Save (2)</button>"]],
            "inserted": [[2, [[9, "[9]<a>New order</a>"]]], [null, [[10, "[10]<h1>Top</h1>"]]]],
        }});
        assert_eq!(
            delta_text(&body),
            "http://127.0.0.1:1/orders\nOrders\n- [4]\n~ [5]<button>Save (2)</button>\n\
             + after [2]:\n+ [9]<a>New order</a>\n+ at the top:\n+ [10]<h1>Top</h1>\n"
        );
        assert_eq!(
            delta_text(&serde_json::json!({"same": true})),
            "(no change since the last listing)\n"
        );
        assert_eq!(delta_text(&serde_json::json!({"page": "whole"})), "whole\n");
    }
}
