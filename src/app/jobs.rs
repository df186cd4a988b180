//! The app's background work, every piece a [`crate::job::Job`] polled from `logic()`: one
//! training worker per device, the data set loading, the comparison of number formats and the
//! Experiments tab's sweep.
//! Dropping the app drops them: the workers are told to stop and joined, the others cancelled.

use crate::data::source::LoadJob;
use crate::job::Job;
use crate::train::compare;
use crate::train::handle::Worker;

/// The background work in progress.
#[derive(Default)]
pub(super) struct Jobs {
    /// One per device that has a thread.
    pub workers: Vec<Worker>,
    /// The data set loading, and what to do once it is in.
    pub loading: Option<(LoadJob, AfterLoad)>,
    /// The comparison of number formats running.
    pub comparison: Option<Job<compare::Progress>>,
    /// The sweep of the Experiments tab running.
    pub sweep: Option<Job<crate::bench::sweep::Report>>,
    /// A sweep asked for, waiting for training to pause before it starts.
    pub pending_sweep: Option<crate::bench::sweep::Sweep>,
    /// The serving measurement of the Experiments tab running.
    pub serving: Option<Job<crate::bench::infer::ServingNews>>,
    /// A serving measurement asked for, waiting for training to pause before it starts.
    pub pending_serving: bool,
    /// The Simulator tab's calibration running.
    pub calibration: Option<Job<crate::bench::calibrate_each::CalibrationNews>>,
    /// A calibration asked for, waiting for training to pause before it starts.
    pub pending_calibration: bool,
    /// The journey tab's device-mismatch lesson running.
    pub mismatch: Option<Job<Result<crate::train::mismatch::Mismatch, crate::i18n::Said>>>,
    /// The lesson's probes, or a Try step's measurement, running.
    pub lesson: Option<Job<crate::lesson::follow::LessonNews>>,
    /// A lesson's probes asked for, waiting for training to pause before they start.
    pub pending_lesson: bool,
    /// A screenshot asked of the window: what saving it said (the path, or why not).
    pub screenshot: Option<std::sync::mpsc::Receiver<Result<std::path::PathBuf, String>>>,
    /// A lesson or session file being read (never on the UI thread: a slow disk or a network
    /// share must not freeze the window).
    pub reading: Option<Job<Read>>,
    /// The turn both workers pass between them while they take turns.
    pub turns: std::sync::Arc<crate::train::Turns>,
}

/// A user's file read off the UI thread.
pub(super) enum Read {
    /// A lesson file, read and checked.
    Lesson(
        std::path::PathBuf,
        Result<crate::lesson::Lesson, crate::i18n::Said>,
    ),
    /// A session file, read field by field.
    Session(Result<super::session_file::Session, crate::i18n::Said>),
    /// A weights file, read and checked against the model.
    Weights(
        std::path::PathBuf,
        Result<crate::nn::LayerValues, crate::i18n::Said>,
    ),
}

/// What to do once a load has finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AfterLoad {
    /// Show the preview; the user chooses to train on it.
    Preview,
    /// Train on it at once (settings restored at start, or a Reset that needed the data).
    Apply,
    /// Both (`batchscope PATH`).
    ApplyAndPreview,
}
