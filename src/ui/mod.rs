//! Panels. Each is a plain struct holding its state with a `ui` method that draws it and
//! returns what the user asked for as [`UiCommand`]s, which the app applies after drawing.

pub mod column;
pub mod setup;

use crate::i18n::Lang;

/// What the user asked for this frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UiCommand {
    /// Train continuously.
    Run,
    /// Stop training.
    Pause,
    /// Train one batch.
    Step,
    /// Apply the settings and start from the initial weights.
    Reset,
    /// Switch the UI language.
    SetLanguage(Lang),
}

/// Colours of the classes: distinct on a dark background and at a projector.
pub const CLASS_COLORS: [egui::Color32; 10] = [
    egui::Color32::from_rgb(239, 83, 80),
    egui::Color32::from_rgb(66, 165, 245),
    egui::Color32::from_rgb(102, 187, 106),
    egui::Color32::from_rgb(255, 202, 40),
    egui::Color32::from_rgb(171, 71, 188),
    egui::Color32::from_rgb(38, 198, 218),
    egui::Color32::from_rgb(255, 112, 67),
    egui::Color32::from_rgb(141, 110, 99),
    egui::Color32::from_rgb(236, 64, 122),
    egui::Color32::from_rgb(189, 189, 189),
];

/// The colour of class `c`.
pub fn class_color(c: usize) -> egui::Color32 {
    CLASS_COLORS[c % CLASS_COLORS.len()]
}
