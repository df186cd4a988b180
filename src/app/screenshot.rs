//! A screenshot of the window, saved as PNG for a teacher's slides: the window's next frame is
//! asked of the integration, which hands its pixels to a callback that writes the file.

use super::BatchScopeApp;
use crate::i18n::LessonKey;

impl BatchScopeApp {
    /// Asks the window for a picture of its next frame and saves it at `path` as PNG (with the
    /// `.png` extension added where the name has none).
    pub(super) fn save_screenshot(&mut self, mut path: std::path::PathBuf) {
        let Some(ctx) = self.ctx.clone() else {
            return;
        };
        if path.extension().is_none() {
            path.set_extension("png");
        }
        let (sender, receiver) = std::sync::mpsc::channel();
        self.jobs.screenshot = Some(receiver);
        let wake = ctx.clone();
        ctx.request_screenshot(move |image| {
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
    picture
        .save_with_format(path, image::ImageFormat::Png)
        .map_err(|e| format!("{}: {e}", path.display()))
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
}
