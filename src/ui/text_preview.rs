//! The Data preview of a text: how many characters and of how many kinds, the windows the
//! context length cuts it into, and its first lines as they are.

use egui::RichText;

use crate::data::Table;
use crate::i18n::{Key, Lang};
use crate::train::TrainConfig;

/// Characters of the text's beginning the preview shows.
const SHOWN_CHARS: usize = 600;

/// Draws the summary and the first characters of the text `table`.
pub fn text_preview_ui(ui: &mut egui::Ui, lang: Lang, table: &Table, config: &TrainConfig) {
    let context = config.data.context.max(1);
    let windows = table.rows.saturating_sub(1) / context;
    let validation = ((windows as f32 * config.data.test_fraction).round() as usize)
        .min(windows.saturating_sub(1));
    egui::Grid::new("text-summary")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            ui.label(lang.tr(Key::TextCharacters));
            ui.label(lang.fmt(
                Key::TextCharactersCount,
                &[("n", &table.rows), ("kinds", &table.class_names.len())],
            ));
            ui.end_row();
            ui.label(lang.tr(Key::TextWindows));
            ui.label(lang.fmt(
                Key::TextWindowsCount,
                &[
                    ("n", &windows),
                    ("t", &context),
                    ("train", &(windows - validation)),
                    ("val", &validation),
                ],
            ))
            .on_hover_text(lang.tr(Key::TextWindowsTip));
            ui.end_row();
        });
    let text: String = table
        .x
        .iter()
        .take(SHOWN_CHARS)
        .map(|&i| {
            table
                .class_names
                .get(i as usize)
                .map_or("\u{fffd}", String::as_str)
        })
        .collect();
    ui.label(lang.tr(Key::TextBeginning));
    egui::ScrollArea::vertical()
        .max_height(ui.available_height() * 0.7)
        .show(ui, |ui| {
            egui::Frame::group(ui.style()).show(ui, |ui| {
                ui.label(RichText::new(text).monospace());
            });
        });
}
