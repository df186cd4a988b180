//! The app's state: everything the window shows that is not a panel's own view state. The UI
//! thread owns it; `logic()` folds the workers' and jobs' reports into it, the panels read it, and
//! commands change it.

use super::restore::RestoreNote;
use crate::data::formats::display_name;
use crate::data::source::{DataSource, Loaded};
use crate::device::Device;
use crate::i18n::{Lang, Said};
use crate::train::compare::Comparison;
use crate::train::{DeviceRun, SessionError, TrainConfig};
use crate::ui::Tab;

/// The settings being edited and those of the run in progress.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// What the setup's widgets show; applied on Reset.
    pub config: TrainConfig,
    /// Which devices the setup trains on, CPU then GPU.
    pub enabled: [bool; 2],
    /// The settings of the run in progress.
    pub applied: TrainConfig,
    /// The devices of the run in progress.
    pub applied_enabled: [bool; 2],
    /// Why the last Reset was refused, if it was (the run went on with `applied`).
    pub error: Option<SessionError>,
}

impl Default for Settings {
    fn default() -> Self {
        let config = TrainConfig::default();
        Self {
            applied: config.clone(),
            config,
            enabled: [true, true],
            applied_enabled: [true, true],
            error: None,
        }
    }
}

impl Settings {
    /// Whether the setup differs from the run in progress.
    pub fn is_changed(&self) -> bool {
        self.config != self.applied || self.enabled != self.applied_enabled
    }

    /// Whether `device` takes part in the run in progress.
    pub fn applied_enabled(&self, device: Device) -> bool {
        self.applied_enabled[device as usize]
    }
}

/// The data sets the window knows of.
#[derive(Default)]
pub struct DataState {
    /// The last data set loaded from a file or the shipped sets.
    pub loaded: Option<Loaded>,
    /// Why the last load failed (the banner; the previous data set stays loaded).
    pub error: Option<Said>,
    /// What is loading now (its name, in both languages) and the share done.
    pub loading: Option<(Said, f32)>,
}

impl DataState {
    /// The name a load in progress is shown by.
    pub fn loading_name(source: &DataSource) -> Said {
        match source {
            DataSource::File { path, .. } => Said::verbatim(display_name(path)),
            DataSource::Shipped(name) => Said::new(crate::ui::labels::shipped_keys(name).0, &[]),
            DataSource::Generated => Said::default(),
        }
    }
}

/// Everything the window shows.
pub struct AppState {
    /// UI language.
    pub lang: Lang,
    /// The view of the central area.
    pub tab: Tab,
    /// The settings.
    pub settings: Settings,
    /// The data sets.
    pub data: DataState,
    /// Each device's run, CPU then GPU.
    pub runs: [DeviceRun; 2],
    /// The generation of the run in progress: each Reset starts a new one.
    pub generation: u64,
    /// The last comparison of number formats.
    pub comparison: Option<Comparison>,
    /// What the last trace export did (saved where, or why not).
    pub trace_export: Option<String>,
    /// Saved settings that were not used at start, and why (shown until dismissed).
    pub restore_notes: Vec<RestoreNote>,
    /// The last sweep of the Experiments tab, running or ended.
    pub sweep: Option<crate::bench::sweep::Results>,
    /// The last serving measurement of the Experiments tab, running or ended.
    pub serving: Option<crate::bench::infer::Serving>,
    /// What the last CSV export of the sweep did (saved where, or why not).
    pub sweep_export: Option<String>,
    /// How the devices share the machine while both train.
    pub sharing: crate::train::Sharing,
    /// Finished runs and sweeps.
    pub history: crate::bench::history::History,
    /// The hardware profiles of the Simulator tab: this machine's calibrated ones first.
    pub profiles: Vec<crate::sim::profile::Profile>,
    /// The Experiments tab's sweep predicted on the profile chosen for it, if one is.
    pub sweep_simulated: Option<crate::bench::sweep_sim::SimulatedSweep>,
    /// The id of that profile.
    pub sweep_profile: Option<String>,
    /// The software stacks of the Simulator tab's ecosystem card.
    pub stacks: Vec<crate::sim::ecosystem::Stack>,
    /// The last calibration of the Simulator tab, running or ended.
    pub calibration: Option<crate::bench::calibrate_each::CalibrationStatus>,
    /// The journey tab's device-mismatch lesson.
    pub mismatch: crate::ui::mismatch::MismatchView,
    /// The guided lessons: the shipped ones, then files the user opened.
    pub lessons: Vec<crate::lesson::Lesson>,
    /// The lesson being followed.
    pub lesson: Option<crate::lesson::Following>,
    /// The step each lesson was left at, by id.
    pub lesson_places: std::collections::BTreeMap<String, usize>,
    /// Why the last lesson file could not be opened.
    pub lesson_error: Option<crate::i18n::Said>,
    /// Presenter mode.
    pub presenter: crate::ui::presenter::Presenter,
    /// What the last screenshot did (saved where, or why not).
    pub screenshot_note: Option<String>,
    /// The plot the next screenshot is cut to (its rectangle in points); `None`: the window.
    pub screenshot_crop: Option<egui::Rect>,
}

impl AppState {
    /// The state of a window that has just opened, in `lang`.
    pub fn new(lang: Lang) -> Self {
        Self {
            lang,
            tab: Tab::Training,
            settings: Settings::default(),
            data: DataState::default(),
            runs: [DeviceRun::new(Device::Cpu), DeviceRun::new(Device::Gpu)],
            generation: 0,
            comparison: None,
            trace_export: None,
            restore_notes: Vec::new(),
            sweep: None,
            sweep_export: None,
            serving: None,
            sharing: crate::train::Sharing::default(),
            history: crate::bench::history::History::default(),
            profiles: crate::sim::profile::shipped(),
            calibration: None,
            stacks: crate::sim::ecosystem::shipped(),
            sweep_simulated: None,
            sweep_profile: None,
            mismatch: crate::ui::mismatch::MismatchView::NotRun,
            lessons: crate::lesson::shipped::lessons().0,
            lesson: None,
            lesson_places: std::collections::BTreeMap::new(),
            lesson_error: None,
            presenter: crate::ui::presenter::Presenter::default(),
            screenshot_note: None,
            screenshot_crop: None,
        }
    }

    /// Whether any device is training (or still stopping).
    pub fn is_running(&self) -> bool {
        self.runs.iter().any(DeviceRun::is_running)
    }

    /// Tells each column how it shares the machine: only when both devices are in the run and
    /// neither is unavailable (a GPU column without an adapter shares no turns with the CPU).
    pub fn show_sharing(&mut self) {
        let up = |r: &DeviceRun| !matches!(r.status, crate::train::DeviceStatus::Unavailable(_));
        let both = self.settings.applied_enabled.iter().all(|&on| on) && self.runs.iter().all(up);
        for run in &mut self.runs {
            run.sharing = both.then_some(self.sharing);
        }
    }
}
