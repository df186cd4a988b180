//! The fonts: egui's own, with a subset of Noto Sans SC after them for Chinese.

use std::sync::Arc;

/// Adds the bundled Noto Sans SC subset as a fallback after egui's own fonts, so Latin text keeps
/// egui's look and Chinese text renders instead of boxes.
pub fn install_fonts(ctx: &egui::Context) {
    let mut fonts = egui::FontDefinitions::default();
    fonts.font_data.insert(
        "noto-sans-sc".to_owned(),
        Arc::new(egui::FontData::from_static(include_bytes!(
            "../../assets/fonts/NotoSansSC-Subset.otf"
        ))),
    );
    for family in [egui::FontFamily::Proportional, egui::FontFamily::Monospace] {
        fonts
            .families
            .entry(family)
            .or_default()
            .push("noto-sans-sc".to_owned());
    }
    ctx.set_fonts(fonts);
}
