//! A screenshot of the window or of one plot, saved as PNG for a teacher's slides: the window's
//! next frame is asked of the integration, which hands its pixels to a callback that cuts out
//! the plot, if one was chosen, and writes the file.

use super::BatchScopeApp;
use crate::i18n::LessonKey;

impl BatchScopeApp {
    /// Asks the window for a picture of its next frame and saves it at `path` as PNG (with the
    /// `.png` extension added where the name has none), cut to `crop` (in points) if given.
    pub(super) fn save_screenshot(
        &mut self,
        mut path: std::path::PathBuf,
        crop: Option<egui::Rect>,
    ) {
        let Some(ctx) = self.ctx.clone() else {
            return;
        };
        if path.extension().is_none() {
            path.set_extension("png");
        }
        let (sender, receiver) = std::sync::mpsc::channel();
        self.jobs.screenshot = Some(receiver);
        let wake = ctx.clone();
        let pixels_per_point = ctx.pixels_per_point();
        ctx.request_screenshot(move |image| {
            let image = match crop {
                Some(rect) => std::sync::Arc::new(cut(&image, rect, pixels_per_point)),
                None => image,
            };
            let saved = save_png(&image, &path).map(|()| path);
            // The window may have closed meanwhile: nobody to tell.
            let _ = sender.send(saved);
            wake.request_repaint();
        });
    }

    /// Takes in what saving the screenshot said.
    pub(super) fn poll_screenshot(&mut self) {
        let Some(receiver) = &self.jobs.screenshot else {
            return;
        };
        let Ok(saved) = receiver.try_recv() else {
            return;
        };
        self.jobs.screenshot = None;
        let lang = self.state.lang;
        self.state.screenshot_note = Some(match saved {
            Ok(path) => lang.fmt(LessonKey::ScreenshotSaved, &[("path", &path.display())]),
            Err(why) => lang.fmt(LessonKey::ScreenshotFailed, &[("why", &why)]),
        });
    }
}

/// The part of `image` under `rect` (in points), kept within the image.
fn cut(image: &egui::ColorImage, rect: egui::Rect, pixels_per_point: f32) -> egui::ColorImage {
    let [width, height] = image.size;
    let to_pixel =
        |v: f32, most: usize| ((v * pixels_per_point).round().max(0.0) as usize).min(most);
    let (x0, x1) = (to_pixel(rect.min.x, width), to_pixel(rect.max.x, width));
    let (y0, y1) = (to_pixel(rect.min.y, height), to_pixel(rect.max.y, height));
    if x1 <= x0 || y1 <= y0 {
        // The plot scrolled out of the window meanwhile: the whole window rather than nothing.
        return image.clone();
    }
    image.region_by_pixels([x0, y0], [x1 - x0, y1 - y0])
}

/// Writes `image` as PNG.
fn save_png(image: &egui::ColorImage, path: &std::path::Path) -> Result<(), String> {
    let [width, height] = image.size;
    let bytes: Vec<u8> = image
        .pixels
        .iter()
        .flat_map(egui::Color32::to_srgba_unmultiplied)
        .collect();
    let picture = image::RgbaImage::from_raw(width as u32, height as u32, bytes)
        .ok_or_else(|| "the window's picture had the wrong size".to_owned())?;
    // Encoded in memory, then written whole or not at all.
    let mut png = std::io::Cursor::new(Vec::new());
    picture
        .write_to(&mut png, image::ImageFormat::Png)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    crate::files::write_atomic(path, png.get_ref()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_screenshot_is_written_as_png_pixel_for_pixel() {
        let mut image = egui::ColorImage::filled([3, 2], egui::Color32::from_rgb(10, 20, 30));
        image.pixels[4] = egui::Color32::from_rgb(200, 100, 0);
        let path = std::env::temp_dir().join(format!("batchscope-shot-{}.png", std::process::id()));
        super::save_png(&image, &path).expect("saved");
        let back = image::open(&path).expect("a PNG").to_rgba8();
        assert_eq!(back.dimensions(), (3, 2));
        assert_eq!(back.get_pixel(1, 1).0, [200, 100, 0, 255]);
        assert_eq!(back.get_pixel(0, 0).0, [10, 20, 30, 255]);
        let _ = std::fs::remove_file(&path);
        // A folder where a file should be: the reason, not a panic.
        let error = super::save_png(&image, &std::env::temp_dir()).expect_err("a folder");
        assert!(!error.is_empty());
    }

    #[test]
    fn a_plots_picture_is_cut_from_the_window_at_the_screens_scale() {
        let mut image = egui::ColorImage::filled([20, 10], egui::Color32::BLACK);
        // The plot at (2, 1)–(6, 4) in points is (4, 2)–(12, 8) in pixels at a scale of 2.
        for y in 2..8 {
            for x in 4..12 {
                image.pixels[y * 20 + x] = egui::Color32::WHITE;
            }
        }
        let rect = egui::Rect::from_min_max(egui::pos2(2.0, 1.0), egui::pos2(6.0, 4.0));
        let plot = super::cut(&image, rect, 2.0);
        assert_eq!(plot.size, [8, 6]);
        assert!(plot.pixels.iter().all(|&p| p == egui::Color32::WHITE));
        // Partly outside the window: cut to what is inside; wholly outside: the whole window.
        let edge = egui::Rect::from_min_max(egui::pos2(8.0, 3.0), egui::pos2(30.0, 30.0));
        assert_eq!(super::cut(&image, edge, 2.0).size, [4, 4]);
        let gone = egui::Rect::from_min_max(egui::pos2(40.0, 40.0), egui::pos2(50.0, 50.0));
        assert_eq!(super::cut(&image, gone, 2.0).size, [20, 10]);
    }
}
