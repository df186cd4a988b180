//! Panels. Each is a plain struct holding its state with a `ui` method that draws it and
//! returns what the user asked for as [`UiCommand`]s, which the app applies after drawing.

pub mod column;
pub mod journey;
pub mod memory;
pub mod open;
pub mod precision;
pub mod preview;
pub mod setup;

use std::path::PathBuf;

use crate::data::source::DataSource;
use crate::i18n::Lang;

/// The views of the central area.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tab {
    /// Both devices' columns.
    #[default]
    Training,
    /// The loaded data set's preview.
    Data,
    /// The batch journey: timeline, breakdown, advice, hardware diagram.
    Journey,
    /// Where the memory goes.
    Memory,
    /// What 16-bit formats do to the values.
    Precision,
}

/// What the user asked for this frame.
#[derive(Clone, Debug, PartialEq)]
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
    /// Show the file dialog (system or in-app) for a file or an image folder.
    Open(open::OpenKind),
    /// Load this file or folder and preview it (what Open…, a drop and the command line do).
    OpenPath(PathBuf),
    /// Load this source and preview it (a shipped set, or a file read with other options).
    Load(DataSource),
    /// Stop the load in progress.
    CancelLoad,
    /// Forget the last data error.
    DismissDataError,
    /// Train on the previewed data set: apply the settings with it, and show the columns.
    UseLoaded,
    /// Show a view of the central area.
    ShowTab(Tab),
    /// Run with new loader, sync, upload and recording settings from the next step on.
    SetPipeline(crate::train::Pipeline),
    /// Ask where to save the recorded steps as Chrome trace JSON.
    ExportTrace,
    /// Give the GPU pool's cached blocks back.
    ReleaseCached,
    /// Train the applied settings in every format on the CPU and overlay the losses.
    ComparePrecisions,
    /// Stop that comparison.
    CancelComparison,
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
