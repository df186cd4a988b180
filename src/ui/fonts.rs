//! The fonts and text sizes: egui's own fonts, with a subset of Noto Sans SC after them for
//! Chinese, at sizes and contrasts that read at 1280×720 without presenter mode.

use std::sync::Arc;

/// Adds the bundled Noto Sans SC subset as a fallback after egui's own fonts, so Latin text keeps
/// egui's look and Chinese text renders instead of boxes.
fn install_fonts(ctx: &egui::Context) {
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

/// Installs the fonts, the text sizes and the theme.
pub fn install_style(ctx: &egui::Context) {
    install_fonts(ctx);
    ctx.all_styles_mut(|style| style.text_styles = readable_text_styles());
    ctx.set_visuals(readable_visuals());
}

/// Text sizes that read at 1280×720 without presenter mode: body text 15 px, nothing under
/// 12 px (egui's defaults are 13 and 9).
pub fn readable_text_styles() -> std::collections::BTreeMap<egui::TextStyle, egui::FontId> {
    use egui::{FontFamily, FontId, TextStyle};
    [
        (
            TextStyle::Small,
            FontId::new(12.0, FontFamily::Proportional),
        ),
        (TextStyle::Body, FontId::new(15.0, FontFamily::Proportional)),
        (
            TextStyle::Button,
            FontId::new(15.0, FontFamily::Proportional),
        ),
        (
            TextStyle::Heading,
            FontId::new(20.0, FontFamily::Proportional),
        ),
        (
            TextStyle::Monospace,
            FontId::new(14.0, FontFamily::Monospace),
        ),
    ]
    .into()
}

/// egui's dark theme with text that stands off its background: body text light grey (about 9:1
/// against the panels) and secondary text no dimmer than about 6:1, where egui's weak text is
/// nearer 2.5:1.
pub fn readable_visuals() -> egui::Visuals {
    let mut v = egui::Visuals::dark();
    v.widgets.noninteractive.fg_stroke.color = egui::Color32::from_gray(205);
    v.weak_text_color = Some(egui::Color32::from_gray(165));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// WCAG's contrast ratio of two opaque greys.
    fn contrast(a: egui::Color32, b: egui::Color32) -> f32 {
        let luminance = |c: egui::Color32| {
            let channel = |x: u8| {
                let s = f32::from(x) / 255.0;
                if s <= 0.04045 {
                    s / 12.92
                } else {
                    ((s + 0.055) / 1.055).powf(2.4)
                }
            };
            0.2126 * channel(c.r()) + 0.7152 * channel(c.g()) + 0.0722 * channel(c.b())
        };
        let (hi, lo) = (
            luminance(a).max(luminance(b)),
            luminance(a).min(luminance(b)),
        );
        (hi + 0.05) / (lo + 0.05)
    }

    #[test]
    fn body_and_secondary_text_are_large_and_stand_off_the_panels() {
        let sizes = readable_text_styles();
        assert_eq!(sizes[&egui::TextStyle::Body].size, 15.0);
        assert!(sizes.values().all(|f| f.size >= 12.0));
        let v = readable_visuals();
        let (text, weak) = (v.text_color(), v.weak_text_color());
        assert!(
            contrast(text, v.panel_fill) >= 9.0,
            "{}",
            contrast(text, v.panel_fill)
        );
        assert!(
            contrast(weak, v.panel_fill) >= 6.0,
            "{}",
            contrast(weak, v.panel_fill)
        );
        assert!(contrast(weak, v.window_fill) >= 6.0);
    }
}
