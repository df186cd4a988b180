//! The app, split as rerun's viewer is:
//! - [`state`]: what the window shows ([`AppState`]);
//! - `logic`: eframe's per-frame hook — take in the workers' events and the jobs' reports,
//!   read the keyboard;
//! - `ui`: draw the panels from the state, collecting what the user asked for;
//! - `commands`: carry the commands out, in one place;
//! - `jobs`, `workers`: the background work (training workers, loading, comparing formats);
//! - `flows`: the whole-app tests (the panels' own tests sit in their files).
//!
//! One frame: `logic()`, then `ui()`, then the commands `ui()` returned.

mod calibration;
mod commands;
mod flows;
mod flows_chinese;
mod flows_lessons;
mod flows_presenter;
mod flows_runs;
mod jobs;
mod lessons;
mod logic;
#[cfg(not(target_arch = "wasm32"))]
pub mod native;
pub mod restore;
mod screenshot;
mod serving;
mod session;
pub mod session_file;
pub mod state;
mod tabs;
mod ui;
mod weights;
mod workers;

use std::sync::Arc;
use std::time::Duration;
use web_time::Instant;

pub use crate::backend::GpuChoice;
use crate::data::formats::LoadOptions;
use crate::data::source::DataSource;
use crate::i18n::Lang;
use crate::train::Session;
use crate::ui::column::ColumnPanel;
use crate::ui::journey::JourneyPanel;
use crate::ui::memory::MemoryPanel;
use crate::ui::open::FileOpener;
use crate::ui::precision::PrecisionPanel;
use crate::ui::preview::PreviewPanel;
use crate::ui::setup::SetupPanel;
use jobs::{AfterLoad, Jobs};
pub use restore::{HISTORY_KEY, SAVED_KEY, Saved};
pub use state::AppState;

/// Start-up options.
#[expect(
    clippy::struct_excessive_bools,
    reason = "command-line flags and test switches, each independent of the others"
)]
#[derive(Clone, Debug)]
pub struct AppOptions {
    /// UI language.
    pub lang: Lang,
    /// Whether the language was given on the command line (it then wins over the saved one).
    pub lang_given: bool,
    /// Where the GPU comes from.
    pub gpu: GpuChoice,
    /// CPU kernel threads (0 = one per core).
    pub cpu_threads: usize,
    /// Press Run as soon as the devices are up.
    pub autorun: bool,
    /// Close the window after this long, printing what each column did (window tests).
    pub exit_after: Option<Duration>,
    /// A data set to open and train on at start (`batchscope PATH`).
    pub open: Option<std::path::PathBuf>,
    /// Start the training workers on the first frame (tests that feed the app events of their
    /// own turn it off, and run no threads).
    pub start_workers: bool,
    /// Seconds each probe of the Simulator tab's calibration is timed for (tests shorten it).
    pub calibration_seconds: f64,
    /// Where the GPU's tuned kernel choice is kept ([`tuning_cache_path`]); `None` in tests.
    pub tuning_cache: Option<std::path::PathBuf>,
    /// A lesson to open at start, by id (`batchscope --lesson ID`).
    pub lesson: Option<String>,
    /// How long a lesson's probes measure (tests shorten it).
    pub lesson_plan: crate::lesson::Plan,
    /// Start in presenter mode (`batchscope --presenter`).
    pub presenter: bool,
}

/// The file in the user's data directory where the matrix-product kernel timed fastest on each
/// GPU adapter is kept (`batchscope tune` redoes it).
pub fn tuning_cache_path() -> Option<std::path::PathBuf> {
    crate::platform::storage_dir("BatchScope").map(|dir| dir.join("gpu-kernels.json"))
}

impl Default for AppOptions {
    fn default() -> Self {
        Self {
            lang: Lang::En,
            lang_given: false,
            gpu: GpuChoice::Auto,
            cpu_threads: 0,
            autorun: false,
            exit_after: None,
            open: None,
            start_workers: true,
            calibration_seconds: 0.05,
            tuning_cache: None,
            lesson: None,
            lesson_plan: crate::lesson::Plan::standard(),
            presenter: false,
        }
    }
}

/// The panels' own view state (what they show comes from [`AppState`]).
#[derive(Default)]
pub struct Panels {
    /// The setup panel.
    pub setup: SetupPanel,
    /// The CPU column, then the GPU column.
    pub columns: [ColumnPanel; 2],
    /// The batch journey view.
    pub journey: JourneyPanel,
    /// The memory view.
    pub memory: MemoryPanel,
    /// The precision view.
    pub precision: PrecisionPanel,
    /// The data preview.
    pub preview: PreviewPanel,
    /// The Experiments tab.
    pub experiments: crate::ui::experiments::ExperimentsPanel,
    /// The History tab.
    pub history: crate::ui::history::HistoryPanel,
    /// The Simulator tab.
    pub roofline: crate::ui::roofline::RooflinePanel,
    /// Open…: the dialog's job, or the in-app browser.
    pub opener: FileOpener,
}

/// The app: its state, its panels, its background work.
pub struct BatchScopeApp {
    /// What the window shows.
    pub state: AppState,
    /// The panels' view state.
    pub panels: Panels,
    jobs: Jobs,
    /// The data set and settings of the run in progress.
    session: Option<Arc<Session>>,
    /// A load asked for before the window existed (nothing to wake it up yet).
    queued_load: Option<(DataSource, AfterLoad)>,
    options: AppOptions,
    ctx: Option<egui::Context>,
    started: Option<Instant>,
    fonts_installed: bool,
    autorun_pending: bool,
    /// A lesson to open on the first frame (`--lesson ID`).
    lesson_pending: Option<String>,
    /// A session file to open on the first frame (`batchscope FILE.batchscope`).
    session_pending: Option<std::path::PathBuf>,
    summary_printed: bool,
}

impl BatchScopeApp {
    /// A new app; its workers start on the first frame, when a context exists to wake the UI.
    pub fn new(options: AppOptions) -> Self {
        // A session file opens as a session, anything else as a data set.
        let (session_path, data_path) = match options.open.clone() {
            Some(path) if session_file::is_session(&path) => (Some(path), None),
            other => (None, other),
        };
        let queued_load = data_path.map(|path| {
            (
                DataSource::File {
                    path,
                    options: LoadOptions::default(),
                },
                AfterLoad::ApplyAndPreview,
            )
        });
        let mut app = Self {
            state: AppState::new(options.lang),
            panels: Panels::default(),
            jobs: Jobs::default(),
            session: None,
            queued_load,
            autorun_pending: options.autorun,
            lesson_pending: options.lesson.clone(),
            session_pending: session_path,
            options,
            ctx: None,
            started: None,
            fonts_installed: false,
            summary_printed: false,
        };
        if let Ok(session) = Session::new(app.state.settings.config.clone()) {
            app.session = Some(Arc::new(session));
        }
        if app.options.presenter {
            app.apply(crate::ui::UiCommand::SetPresenter(true));
        }
        app
    }

    /// A new app with remembered settings, which the command line's language overrides.
    pub fn with_saved(options: AppOptions, saved: Option<Saved>) -> Self {
        Self::with_restored(options, saved, Vec::new())
    }

    /// A new app with remembered settings, each already checked by [`restore::restore`], and
    /// the notes of those that were not used (the window shows them).
    pub fn with_restored(
        options: AppOptions,
        saved: Option<Saved>,
        notes: Vec<restore::RestoreNote>,
    ) -> Self {
        let lang_given = options.lang_given;
        let mut app = Self::new(options);
        app.state.restore_notes = notes;
        let Some(mut saved) = saved else {
            return app;
        };
        if !lang_given {
            app.state.lang = saved.lang;
        }
        app.state.sharing = saved.sharing;
        // Also for settings saved before `saved` cleared it.
        saved.config.pipeline.keep_graphs = false;
        let restore = |app: &mut Self| {
            let settings = &mut app.state.settings;
            settings.config = saved.config.clone();
            settings.applied = saved.config.clone();
            settings.enabled = saved.enabled;
            settings.applied_enabled = saved.enabled;
        };
        if saved.config.source == DataSource::Generated {
            match Session::new(saved.config.clone()) {
                Ok(session) => {
                    restore(&mut app);
                    app.session = Some(Arc::new(session));
                }
                // Settings that do not make a run together (the host's memory, an older
                // version's limits): the defaults, and a note.
                Err(why) => app
                    .state
                    .restore_notes
                    .push(restore::RestoreNote::DidNotFit {
                        data: saved.config.data.kind.as_str().to_owned(),
                        why,
                    }),
            }
        } else if app.queued_load.is_none() {
            // A file is read on the loader thread once the window is up; training starts on it
            // when it is in memory (or the generator takes over if it is gone).
            restore(&mut app);
            app.session = None;
            app.queued_load = Some((saved.config.source.clone(), AfterLoad::Apply));
        }
        app
    }

    /// What [`BatchScopeApp::with_saved`] takes back next time.
    pub fn saved(&self) -> Saved {
        let mut config = self.state.settings.applied.clone();
        // The leak is a lesson to switch on, not a setting to wake up to: the next start must
        // not begin by filling the memory.
        config.pipeline.keep_graphs = false;
        Saved {
            lang: self.state.lang,
            config,
            enabled: self.state.settings.applied_enabled,
            sharing: self.state.sharing,
        }
    }

    /// The history as stored, the run in progress last (it finishes when the window closes).
    pub fn history_json(&self) -> String {
        self.state.history.to_json(self.current_entry().as_ref())
    }

    /// The run in progress as a history entry, if it has trained.
    pub(crate) fn current_entry(&self) -> Option<crate::bench::history::Entry> {
        let session = self.session.as_ref()?;
        let settings = &self.state.settings;
        crate::bench::history::Entry::run(
            &session.config,
            &session.data.name,
            settings.applied_enabled,
            &self.state.runs,
            self.state.sharing,
        )
    }

    /// The data set and settings of the run in progress.
    pub fn session(&self) -> Option<&Session> {
        self.session.as_deref()
    }

    /// Whether any device is training (or still stopping).
    pub fn is_running(&self) -> bool {
        self.state.is_running()
    }

    /// Whether a data set is loading.
    pub fn is_loading(&self) -> bool {
        self.jobs.loading.is_some() || self.queued_load.is_some()
    }

    /// One whole frame, as eframe runs it: `logic()`, `ui()`, then the commands (the tests'
    /// harness draws the app through this).
    pub fn frame(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        self.logic(&ctx);
        let commands = self.ui(ui);
        self.run_commands(commands);
    }
}

impl eframe::App for BatchScopeApp {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        BatchScopeApp::logic(self, ctx);
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let commands = BatchScopeApp::ui(self, ui);
        self.run_commands(commands);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if self.options.exit_after.is_none() {
            eframe::set_value(storage, SAVED_KEY, &self.saved());
            storage.set_string(HISTORY_KEY, self.history_json());
            storage.set_string(restore::LOCAL_PROFILES_KEY, self.local_profiles_toml());
            let memory = restore::LessonMemory {
                places: self.state.lesson_places.clone(),
                presenter_scale: Some(self.state.presenter.scale),
                zoom_outside: self.state.presenter.zoom_before,
            };
            if let Ok(text) = serde_json::to_string(&memory) {
                storage.set_string(restore::LESSONS_KEY, text);
            }
        }
    }
}

/// The app as it starts in a window whose storage is `cc`'s: the saved settings, history,
/// profiles and lesson places read back (unless `remember` is off: window tests start from the
/// defaults), with the notes of what could not be read. `moved` says the settings file was
/// set aside (see [`restore::storage_guard`]), whose notes are `guard_notes`.
pub fn create_app(
    cc: &eframe::CreationContext<'_>,
    options: AppOptions,
    (remember, moved): (bool, bool),
    guard_notes: Vec<restore::RestoreNote>,
) -> BatchScopeApp {
    let (saved, notes) = match cc.storage.filter(|_| remember) {
        Some(storage) => match storage.get_string(SAVED_KEY) {
            Some(text) => {
                let (saved, notes) = restore::restore(&text);
                (Some(saved), notes)
            }
            None if moved => (None, Vec::new()),
            None => (None, restore::unreadable_storage("BatchScope")),
        },
        None => (None, Vec::new()),
    };
    let notes = guard_notes.into_iter().chain(notes).collect();
    let (history, history_notes) = match cc.storage.filter(|_| remember) {
        Some(storage) => restore::history(storage.get_string(HISTORY_KEY).as_deref()),
        None => Default::default(),
    };
    let (profiles, profiles_note) = match cc.storage.filter(|_| remember) {
        Some(storage) => restore::restore_local_profiles(
            storage.get_string(restore::LOCAL_PROFILES_KEY).as_deref(),
        ),
        None => Default::default(),
    };
    let memory = cc
        .storage
        .filter(|_| remember)
        .map(|s| restore::LessonMemory::read(s.get_string(restore::LESSONS_KEY).as_deref()))
        .unwrap_or_default();
    let mut app = BatchScopeApp::with_restored(options, saved, notes);
    app.state.lesson_places = memory.places;
    if let Some(scale) = memory.presenter_scale {
        app.state.presenter.scale = scale;
    }
    if let Some(zoom) = memory.zoom_outside {
        cc.egui_ctx.set_zoom_factor(zoom);
    }
    app.state.history = history;
    app.state.restore_notes.extend(history_notes);
    app.state.restore_notes.extend(profiles_note);
    for profile in profiles {
        app.state.add_local_profile(profile);
    }
    app
}
