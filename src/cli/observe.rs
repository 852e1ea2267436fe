//! `webagent observe`: print what the model would see on a page.

use std::path::PathBuf;
use std::process::ExitCode;

use super::flags::parse_page_url;
use crate::bench::{median, round2};
use crate::browser::ObserveOptions;
use crate::config::BrowserOpts;
use crate::dom::PageState;
use crate::environment::Environment;
use crate::session::Prepared;
use crate::vision::ShotError;

/// Flags of `webagent observe`.
#[derive(Debug, clap::Args)]
pub struct ObserveArgs {
    /// The page to open.
    #[arg(value_parser = parse_page_url)]
    pub url: String,
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
    let mut session = prepared.start(Some(&args.url), events).await?;
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
            anyhow::bail!("observing {}: {error}", args.url);
        }
    };
    if let Some(file) = &args.screenshot {
        let written = write_screenshot(
            &mut session.environment,
            file,
            session.config.llm.image_width,
        )
        .await;
        if let Err(error) = written {
            session.close().await;
            anyhow::bail!("{error}");
        }
    }
    session.close().await;
    if args.json {
        println!("{}", observation_json(&state));
    } else {
        println!("{}", state.url);
        println!("{}", state.title);
        print!("{}", state.listing);
        if !state.page_text.text.is_empty() {
            println!("\n--- page text ---\n{}", state.page_text.for_model());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the model's picture of the page as last observed in
/// `environment` (marked, secrets blanked, `width` wide) to `file`, PNG
/// when its name ends in `.png`, and says so on stderr. The error names
/// the file.
pub async fn write_screenshot<E: Environment>(
    environment: &mut E,
    file: &std::path::Path,
    width: u32,
) -> anyhow::Result<crate::vision::Screenshot> {
    let mut request = crate::vision::ShotRequest::step(width);
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
