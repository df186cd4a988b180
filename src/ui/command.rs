//! What the user can ask for: the views of the central area, and the commands panels return for
//! the app to carry out after drawing.

use std::path::PathBuf;

use super::open::OpenKind;
use crate::data::source::DataSource;
use crate::i18n::Lang;
use crate::train::Pipeline;

/// The views of the central area.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
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
    /// Sweeps: where the GPU overtakes the CPU.
    Experiments,
    /// Finished runs and sweeps.
    History,
    /// The step on simulated hardware: the roofline.
    Simulator,
}

impl Tab {
    /// Every tab, in the tab bar's order.
    pub const ALL: [Tab; 8] = [
        Tab::Training,
        Tab::Journey,
        Tab::Memory,
        Tab::Precision,
        Tab::Experiments,
        Tab::History,
        Tab::Simulator,
        Tab::Data,
    ];
}

/// What the lesson panel and the Lessons menu ask for.
#[derive(Clone, Debug, PartialEq)]
pub enum LessonCommand {
    /// Open the lesson with this id (where it was left).
    Open(String),
    /// Ask for a lesson file of the user's own.
    OpenFile,
    /// Read and open this lesson file.
    OpenPath(std::path::PathBuf),
    /// Close the lesson.
    Close,
    /// Show the next step.
    Next,
    /// What the next-step key does: on a Try step whose change has not been measured, make
    /// the change and measure it; otherwise show the next step. A presenter's clicker reaches
    /// every action of a lesson this way.
    Advance,
    /// Show the previous step.
    Back,
    /// Choose this answer of the prediction shown.
    Choose(usize),
    /// Apply the preset and run the lesson's probes (again).
    Measure,
    /// Stop the probes.
    CancelMeasure,
    /// Put the Try step's change into the setup and reset.
    MakeChange,
    /// Measure the Try step's change.
    MeasureChange,
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
    Open(OpenKind),
    /// Load this file or folder and preview it (what Open…, a drop and the command line do).
    OpenPath(PathBuf),
    /// Load this source and preview it (a shipped set, or a file read with other options).
    Load(DataSource),
    /// Stop the load in progress.
    CancelLoad,
    /// Forget the last data error.
    DismissDataError,
    /// Hide the notes on saved settings that were not used.
    DismissRestoreNotes,
    /// Train on the previewed data set: apply the settings with it, and show the columns.
    UseLoaded,
    /// Run one op with the model on the GPU and the batch on the CPU, then with the batch moved.
    DemonstrateMismatch,
    /// Show a view of the central area.
    ShowTab(Tab),
    /// Run with new loader, sync, upload and recording settings from the next step on.
    SetPipeline(Pipeline),
    /// Ask where to save the recorded steps as Chrome trace JSON.
    ExportTrace,
    /// Save the recorded steps as Chrome trace JSON here.
    SaveTrace(PathBuf),
    /// Give the GPU pool's cached blocks back.
    ReleaseCached,
    /// Train the applied settings in every format on the CPU and overlay the losses.
    ComparePrecisions,
    /// Stop that comparison.
    CancelComparison,
    /// Measure a sweep on the devices of the run, one device at a time (training pauses).
    RunSweep(crate::bench::sweep::Sweep),
    /// Stop the sweep.
    CancelSweep,
    /// Ask where to save the sweep's points as CSV.
    ExportSweep,
    /// Save the sweep's points as CSV here.
    SaveSweep(PathBuf),
    /// Share the machine between the devices this way while both train.
    SetSharing(crate::train::Sharing),
    /// Put the history entry with this number into the setup and start a run of it.
    RestoreEntry(u64),
    /// Delete the history entry with this number.
    DeleteEntry(u64),
    /// Time predictions one request at a time and in batches on each device (training pauses).
    TimeRequests,
    /// Stop that measurement.
    CancelRequests,
    /// Predict the sweep on this profile beside the measured lines (none: no simulated line).
    SimulateSweepOn(Option<String>),
    /// Calibrate this machine's devices (the Simulator tab).
    Calibrate,
    /// Stop the calibration.
    CancelCalibration,
    /// Something of the guided lessons.
    Lesson(LessonCommand),
    /// Turn presenter mode on or off.
    SetPresenter(bool),
    /// Blank the screen, or show it again.
    ToggleBlank,
    /// Open or close the speaker notes' window.
    ToggleSpeakerNotes,
    /// Enter or leave full screen.
    ToggleFullscreen,
    /// Ask where to save a screenshot of the window.
    ExportScreenshot,
    /// Ask where to save a picture of one plot (its rectangle in points).
    ExportPlotScreenshot(egui::Rect),
    /// Save a screenshot of the window's next frame here, as PNG.
    SaveScreenshot(PathBuf),
    /// Ask for a session file to open (`save`: where to save the session).
    AskSession {
        /// Save rather than open.
        save: bool,
    },
    /// Save the session here.
    SaveSession(PathBuf),
    /// Open this session file.
    OpenSession(PathBuf),
    /// Save the model's weights here as safetensors, and its layers beside them as TOML.
    SaveModel(PathBuf),
    /// Load the weights of this safetensors file into the model.
    LoadModel(PathBuf),
}

impl UiCommand {
    /// What to do with a path chosen in a dialog opened for `kind`.
    pub fn chosen((kind, path): (OpenKind, PathBuf)) -> Self {
        match kind {
            OpenKind::SaveTrace => UiCommand::SaveTrace(path),
            OpenKind::SaveSweep => UiCommand::SaveSweep(path),
            OpenKind::SaveScreenshot => UiCommand::SaveScreenshot(path),
            OpenKind::Session => UiCommand::OpenSession(path),
            OpenKind::SaveSession => UiCommand::SaveSession(path),
            OpenKind::SaveModel => UiCommand::SaveModel(path),
            OpenKind::LoadModel => UiCommand::LoadModel(path),
            OpenKind::File | OpenKind::Folder => UiCommand::OpenPath(path),
            OpenKind::Lesson => UiCommand::Lesson(LessonCommand::OpenPath(path)),
        }
    }
}
