//! The page pane: the latest screenshot of the page with the listed
//! elements' marks, the element selected in the listing outlined, drawn
//! with the best graphics the terminal speaks (kitty, iTerm2, sixel) or
//! Unicode half-blocks.
//!
//! Drawing never decodes or scales: a service turns each picture into a
//! terminal protocol for the pane's size on a thread of its own
//! ([`PictureJob`] in, [`RenderedPicture`] back), and the frame only
//! copies the finished cells.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;
use ratatui_image::Image;

use crate::vision::Mark;

use super::state::{AppState, PictureJob, RenderedPicture};
use super::widgets::titled_block;

/// Draws the pane.
pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let view = &state.picture;
    let mut title = "Page".to_string();
    // First, where the pane cuts the title last: the keys go to the page.
    if view.keyboard {
        title.push_str(" · typing (Ctrl+O leaves)");
    }
    if let Some(shot) = &view.shot {
        title.push_str(&format!(
            " {}×{} · {} marks",
            shot.width,
            shot.height,
            shot.marks.len()
        ));
    }
    if let Some(index) = view.rendered.as_ref().and_then(|r| r.key.outline) {
        title.push_str(&format!(" · [{index}] outlined"));
    }

    let block = titled_block(title, false, &state.theme);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    match (&view.rendered, &view.shot) {
        (Some(rendered), _) => frame.render_widget(Image::new(&rendered.protocol), inner),
        (None, Some(_)) => frame.render_widget(
            Paragraph::new(Line::from(Span::styled("drawing…", state.theme.muted()))),
            inner,
        ),
        (None, None) => frame.render_widget(
            Paragraph::new(Line::from(Span::styled(
                "no picture yet: one comes with the next observation",
                state.theme.muted(),
            ))),
            inner,
        ),
    }
}

/// The picture with the job's outline drawn, fitted into its cells in
/// `picker`'s protocol. Runs on the picture service's thread.
pub fn render(
    picker: &ratatui_image::picker::Picker,
    decoded: &image::RgbImage,
    job: &PictureJob,
) -> Result<RenderedPicture, String> {
    let mut img = decoded.clone();
    if let Some((mark, color)) = job.outline {
        // Thick enough to survive the scaling to a few dozen cells.
        let (w, h) = img.dimensions();
        let across = w / u32::from(job.key.columns.max(1));
        let down = h / (2 * u32::from(job.key.rows.max(1)));
        outline(&mut img, &mark, image::Rgb(color), across.max(down).max(3));
    }
    let area = Rect::new(0, 0, job.key.columns, job.key.rows);
    let protocol = picker
        .new_protocol(
            image::DynamicImage::ImageRgb8(img),
            area,
            ratatui_image::Resize::Fit(None),
        )
        .map_err(|e| e.to_string())?;
    Ok(RenderedPicture {
        key: job.key,
        protocol,
    })
}

/// Draws a rectangle `thickness` pixels wide around `mark`, just outside
/// its box so the page's own mark stays visible.
fn outline(img: &mut image::RgbImage, mark: &Mark, color: image::Rgb<u8>, thickness: u32) {
    let (w, h) = img.dimensions();
    if w == 0 || h == 0 {
        return;
    }
    let x0 = mark.x.saturating_sub(thickness + 1);
    let y0 = mark.y.saturating_sub(thickness + 1);
    let x1 = (mark.x + mark.width + thickness).min(w - 1);
    let y1 = (mark.y + mark.height + thickness).min(h - 1);
    for t in 0..thickness {
        for x in x0..=x1 {
            for y in [y0 + t, y1.saturating_sub(t)] {
                if y < h {
                    img.put_pixel(x, y, color);
                }
            }
        }
        for y in y0..=y1 {
            for x in [x0 + t, x1.saturating_sub(t)] {
                if x < w {
                    img.put_pixel(x, y, color);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    use crate::tui::state::{AppState, PictureJob, PictureJobKey};
    use crate::vision::{Mark, Screenshot};

    use super::{draw, render};

    fn shot() -> Arc<Screenshot> {
        let mut img = image::RgbImage::from_pixel(200, 100, image::Rgb([255, 255, 255]));
        for x in 0..100 {
            for y in 0..100 {
                img.put_pixel(x, y, image::Rgb([200, 0, 0]));
            }
        }
        let mut png = Vec::new();
        image::DynamicImage::ImageRgb8(img)
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        Arc::new(Screenshot {
            image: Arc::from(png),
            mime: "image/png",
            width: 200,
            height: 100,
            scale: 1.0,
            marks: vec![Mark {
                index: 0,
                x: 120,
                y: 20,
                width: 40,
                height: 40,
                new: false,
            }],
            masked: 0,
            capture_ms: 1.0,
        })
    }

    #[test]
    fn a_picture_fills_the_pane_with_half_blocks_in_its_colours() {
        let picker = ratatui_image::picker::Picker::from_fontsize((10, 20));
        let shot = shot();
        let decoded = image::load_from_memory(&shot.image).unwrap().to_rgb8();
        let job = PictureJob {
            key: PictureJobKey {
                picture: 1,
                columns: 20,
                rows: 5,
                outline: Some(0),
            },
            shot: Arc::clone(&shot),
            outline: Some((shot.marks[0], [0, 255, 0])),
        };
        let rendered = render(&picker, &decoded, &job).unwrap();
        let mut state = AppState::new((40, 10));
        state.picture.visible = true;
        state.picture.shot = Some(shot);
        state.picture.rendered = Some(rendered);
        let mut terminal = Terminal::new(TestBackend::new(22, 7)).unwrap();
        terminal
            .draw(|frame| draw(frame, frame.area(), &state))
            .unwrap();
        let buffer = terminal.backend().buffer();
        let cells: Vec<_> = (1..6)
            .flat_map(|y| (1..21).map(move |x| (x, y)))
            .map(|(x, y)| buffer[(x, y)].clone())
            .collect();
        assert!(
            cells.iter().all(|c| c.symbol() == "▀"),
            "half-blocks fill the picture's cells"
        );
        // The red half on the left, the green outline on the right.
        let left = &buffer[(3, 3)];
        assert_eq!(left.fg, ratatui::style::Color::Rgb(200, 0, 0));
        let green = |c: ratatui::style::Color| matches!(c, ratatui::style::Color::Rgb(r, g, b) if g > 150 && r < 120 && b < 120);
        let greens = cells.iter().filter(|c| green(c.fg) || green(c.bg)).count();
        assert!(greens > 0, "the selected element is outlined");
        let title: String = (0..22)
            .map(|x| buffer[(x, 0)].symbol().to_string())
            .collect();
        assert!(title.contains("Page 200×100"), "{title}");
    }
}
