//! The app: owns the UI state, starts one training worker per device, and turns what the
//! panels ask for into commands for the workers.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use egui::RichText;

pub use crate::backend::GpuChoice;
use crate::backend::OpenOptions;
use crate::data::formats::{DataError, LoadOptions};
use crate::data::source::{DataSource, LoadJob};
use crate::device::Device;
use crate::i18n::{Key, Lang};
use crate::train::worker::{BackendFactory, Command, Event, Worker};
use crate::train::{Session, TrainConfig};
use crate::ui::column::{ColumnStatus, DeviceColumn};
use crate::ui::journey::JourneyPanel;
use crate::ui::memory::MemoryPanel;
use crate::ui::open::{FileOpener, OpenKind};
use crate::ui::precision::{Comparison, PrecisionPanel};
use crate::ui::preview::{Loaded, PreviewPanel};
use crate::ui::setup::{DataView, SetupPanel};
use crate::ui::{Tab, UiCommand};

/// Start-up options.
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
        }
    }
}

/// What the app remembers between runs: the language and the settings.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Saved {
    /// UI language.
    pub lang: Lang,
    /// The settings of the last run.
    pub config: TrainConfig,
    /// Which devices were on.
    pub enabled: [bool; 2],
}

/// The storage key of [`Saved`].
const SAVED_KEY: &str = "batchscope-settings";

/// What to do once a load has finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AfterLoad {
    /// Show the preview; the user chooses to train on it.
    Preview,
    /// Train on it at once (settings restored at start, or a Reset that needed the data).
    Apply,
    /// Both (`batchscope PATH`).
    ApplyAndPreview,
}

/// The whole app state. The UI thread owns it; workers only see commands.
pub struct BatchScopeApp {
    /// UI language.
    pub lang: Lang,
    /// The setup panel.
    pub setup: SetupPanel,
    /// CPU column, then GPU column.
    pub columns: [DeviceColumn; 2],
    /// The view of the central area.
    pub tab: Tab,
    /// The data preview.
    pub preview: PreviewPanel,
    /// The batch journey view.
    pub journey: JourneyPanel,
    /// The memory view.
    pub memory: MemoryPanel,
    /// The precision view and its comparison.
    pub precision: PrecisionPanel,
    /// What the last trace export did (saved where, or why not).
    pub trace_export: Option<String>,
    /// The last data set loaded from a file or the shipped sets.
    pub loaded: Option<Loaded>,
    /// Why the last load failed (the banner; the previous data set stays loaded).
    pub data_error: Option<String>,
    loading: Option<(LoadJob, AfterLoad)>,
    /// A load asked for before the window existed (nothing to wake it up yet).
    queued_load: Option<(DataSource, AfterLoad)>,
    opener: FileOpener,
    ctx: Option<egui::Context>,
    session: Option<Arc<Session>>,
    workers: Vec<Worker>,
    events_tx: Sender<Event>,
    events: Receiver<Event>,
    options: AppOptions,
    started: Option<Instant>,
    fonts_installed: bool,
    autorun_pending: bool,
    summary_printed: bool,
}

impl BatchScopeApp {
    /// A new app with remembered settings, which the command line's language overrides.
    pub fn with_saved(options: AppOptions, saved: Option<Saved>) -> Self {
        let lang_given = options.lang_given;
        let mut app = Self::new(options);
        if let Some(saved) = saved {
            if !lang_given {
                app.lang = saved.lang;
            }
            let mut saved = saved;
            // Also for settings saved before `saved` cleared it.
            saved.config.pipeline.keep_graphs = false;
            let restore = |app: &mut Self| {
                app.setup.config = saved.config.clone();
                app.setup.applied = saved.config.clone();
                app.setup.enabled = saved.enabled;
                app.setup.applied_enabled = saved.enabled;
            };
            if saved.config.source == DataSource::Generated {
                // Settings that no longer validate (an older version's limits) are dropped.
                if let Ok(session) = Session::new(saved.config.clone()) {
                    restore(&mut app);
                    app.session = Some(Arc::new(session));
                }
            } else if app.queued_load.is_none() {
                // A file is read on the loader thread once the window is up; training starts
                // on it when it is in memory (or the generator takes over if it is gone).
                restore(&mut app);
                app.session = None;
                app.queued_load = Some((saved.config.source.clone(), AfterLoad::Apply));
            }
        }
        app
    }

    /// What [`BatchScopeApp::with_saved`] takes back next time.
    pub fn saved(&self) -> Saved {
        let mut config = self.setup.applied.clone();
        // The leak is a lesson to switch on, not a setting to wake up to: the next start must
        // not begin by filling the memory.
        config.pipeline.keep_graphs = false;
        Saved {
            lang: self.lang,
            config,
            enabled: self.setup.applied_enabled,
        }
    }

    /// A new app; its workers start on the first frame, when a context exists to wake the UI.
    pub fn new(options: AppOptions) -> Self {
        let (events_tx, events) = mpsc::channel();
        let queued_load = options.open.clone().map(|path| {
            (
                DataSource::File {
                    path,
                    options: LoadOptions::default(),
                },
                AfterLoad::ApplyAndPreview,
            )
        });
        let mut app = Self {
            lang: options.lang,
            setup: SetupPanel::default(),
            columns: [
                DeviceColumn::new(Device::Cpu),
                DeviceColumn::new(Device::Gpu),
            ],
            tab: Tab::Training,
            preview: PreviewPanel::default(),
            journey: JourneyPanel::default(),
            memory: MemoryPanel,
            precision: PrecisionPanel::default(),
            trace_export: None,
            loaded: None,
            data_error: None,
            loading: None,
            queued_load,
            opener: FileOpener::default(),
            ctx: None,
            session: None,
            workers: Vec::new(),
            events_tx,
            events,
            autorun_pending: options.autorun,
            options,
            started: None,
            fonts_installed: false,
            summary_printed: false,
        };
        if let Ok(session) = Session::new(app.setup.config.clone()) {
            app.session = Some(Arc::new(session));
        }
        app
    }

    /// The data set of the run in progress.
    pub fn session(&self) -> Option<&Session> {
        self.session.as_deref()
    }

    /// Whether any device is training.
    pub fn is_running(&self) -> bool {
        self.columns.iter().any(|c| c.running)
    }

    fn start_workers(&mut self, ctx: &egui::Context) {
        for device in Device::ALL {
            let options = OpenOptions {
                cpu_threads: self.options.cpu_threads,
                gpu: self.options.gpu.clone(),
                ..OpenOptions::default()
            };
            let factory: BackendFactory = Box::new(move || crate::backend::open(device, &options));
            let ctx = ctx.clone();
            let notify = Arc::new(move || ctx.request_repaint());
            match Worker::spawn(device, factory, self.events_tx.clone(), notify) {
                Ok(worker) => {
                    if let Some(session) = &self.session {
                        worker.send(Command::Configure(Arc::clone(session)));
                    }
                    self.workers.push(worker);
                }
                Err(e) => {
                    self.columns[device as usize].status =
                        ColumnStatus::Unavailable(format!("cannot start the training thread: {e}"));
                }
            }
        }
        for column in &mut self.columns {
            column.enabled = self.setup.applied_enabled(column.device);
            // The format the workers were configured with, restored settings included.
            if let Some(session) = &self.session {
                column.precision = session.config.precision;
            }
        }
    }

    fn send(&self, device: Device, command: impl Fn() -> Command) {
        if !self.setup.applied_enabled(device) {
            return;
        }
        for w in self.workers.iter().filter(|w| w.device() == device) {
            w.send(command());
        }
    }

    fn send_all(&self, command: impl Fn() -> Command) {
        for device in Device::ALL {
            self.send(device, &command);
        }
    }

    /// Applies one command from the panels or the keyboard.
    pub fn apply(&mut self, command: UiCommand) {
        match command {
            UiCommand::Run => self.send_all(|| Command::Run),
            UiCommand::Pause => self.send_all(|| Command::Pause),
            UiCommand::Step => self.send_all(|| Command::Step),
            UiCommand::SetLanguage(lang) => self.lang = lang,
            UiCommand::Reset => self.reset(),
            UiCommand::Open(kind) => {
                if let Some(ctx) = &self.ctx {
                    self.opener.start(kind, ctx, self.lang);
                }
            }
            UiCommand::OpenPath(path) => {
                // Opening the file that is loaded again keeps the way it was read.
                let options = self
                    .loaded
                    .as_ref()
                    .and_then(|l| match &l.source {
                        DataSource::File { path: p, options } if *p == path => {
                            Some(options.clone())
                        }
                        _ => None,
                    })
                    .unwrap_or_default();
                self.start_load(DataSource::File { path, options }, AfterLoad::Preview);
            }
            UiCommand::Load(source) => self.start_load(source, AfterLoad::Preview),
            UiCommand::CancelLoad => {
                if let Some((job, _)) = &self.loading {
                    job.cancel();
                }
            }
            UiCommand::DismissDataError => self.data_error = None,
            UiCommand::UseLoaded => {
                if let Some(loaded) = &self.loaded {
                    self.setup.config.source = loaded.source.clone();
                    self.reset();
                    if self.setup.error.is_none() {
                        self.tab = Tab::Training;
                    }
                }
            }
            UiCommand::ShowTab(tab) => self.tab = tab,
            UiCommand::SetPipeline(pipeline) => match pipeline.validate() {
                Ok(()) => {
                    self.setup.applied.pipeline = pipeline;
                    self.send_all(|| Command::Pipeline(pipeline));
                }
                Err(e) => self.setup.error = Some(e.into()),
            },
            UiCommand::ReleaseCached => self.send_all(|| Command::ReleaseCached),
            UiCommand::ComparePrecisions => {
                if let Some(session) = &self.session {
                    let ctx = self.ctx.clone();
                    let notify = Arc::new(move || {
                        if let Some(ctx) = &ctx {
                            ctx.request_repaint();
                        }
                    });
                    self.precision.comparison =
                        Some(Comparison::start(Arc::clone(session), notify));
                }
            }
            UiCommand::CancelComparison => {
                // Dropping it tells the thread to stop after its current step.
                self.precision.comparison = None;
            }
            UiCommand::ExportTrace => {
                if let Some(ctx) = &self.ctx {
                    self.opener.start(OpenKind::SaveTrace, ctx, self.lang);
                }
            }
        }
    }

    /// Writes the recorded steps of both devices to `path` as Chrome trace JSON.
    pub fn save_trace(&mut self, path: &std::path::Path) {
        use crate::trace::chrome::{DeviceTrace, to_chrome};
        let names: Vec<String> = self
            .columns
            .iter()
            .map(|c| match &c.status {
                ColumnStatus::Ready { name, .. } => format!("{}: {name}", c.device),
                _ => c.device.to_string(),
            })
            .collect();
        let steps: Vec<Vec<crate::trace::StepTrace>> = self
            .columns
            .iter()
            .map(|c| c.trace.steps.iter().cloned().collect())
            .collect();
        let traces: Vec<DeviceTrace<'_>> = self
            .columns
            .iter()
            .zip(&names)
            .zip(&steps)
            .filter(|((c, _), _)| !c.trace.steps.is_empty())
            .map(|((c, name), steps)| DeviceTrace {
                pid: c.device as u32 + 1,
                name,
                gpu: c.device == Device::Gpu,
                steps,
                spans: &c.trace.spans,
            })
            .collect();
        let notes = vec![
            "Recorded in the BatchScope app: the last steps of each device. Host spans come \
             from the host clock; GPU kernels from timestamp queries placed on the host axis by \
             a calibration (or host-observed upper bounds where the adapter has none)."
                .to_owned(),
        ];
        let value = to_chrome(&traces, &notes);
        let shown = path.display();
        self.trace_export = Some(match std::fs::write(path, value.to_string()) {
            Ok(()) => self.lang.fmt(Key::TraceSaved, &[("path", &shown)]),
            Err(e) => self
                .lang
                .fmt(Key::TraceSaveFailed, &[("path", &shown), ("error", &e)]),
        });
    }

    /// Loads `source` on the loader thread (replacing a load in progress), then does `after`.
    fn start_load(&mut self, source: DataSource, after: AfterLoad) {
        if let Some((job, _)) = self.loading.take() {
            job.cancel();
        }
        let Some(ctx) = self.ctx.clone() else {
            self.queued_load = Some((source, after));
            return;
        };
        let notify = Arc::new(move || ctx.request_repaint());
        match LoadJob::spawn(source, notify) {
            Ok(job) => self.loading = Some((job, after)),
            Err(e) => self.data_error = Some(format!("cannot start the loading thread: {e}")),
        }
    }

    /// Takes in a finished load: the preview and the source on success, the banner on failure.
    fn poll_load(&mut self) {
        let Some(result) = self.loading.as_ref().and_then(|(job, _)| job.poll()) else {
            return;
        };
        let Some((job, after)) = self.loading.take() else {
            return;
        };
        match result {
            Ok(table) => {
                self.data_error = None;
                let loaded = Loaded {
                    source: job.source,
                    table: Arc::new(table),
                };
                self.setup.config.source = loaded.source.clone();
                self.loaded = Some(loaded);
                // Nothing trains yet (a load at start was replaced by this one): train on it.
                if matches!(after, AfterLoad::Apply | AfterLoad::ApplyAndPreview)
                    || self.session.is_none()
                {
                    self.reset();
                }
                if matches!(after, AfterLoad::Preview | AfterLoad::ApplyAndPreview) {
                    self.tab = Tab::Data;
                }
            }
            Err(DataError::Cancelled { .. }) => {}
            Err(e) => {
                self.data_error = Some(e.to_string());
                if self.session.is_none() {
                    // Nothing was running to keep (a file restored at start has gone): train on
                    // the generator, so the app is usable at once.
                    self.setup.config.source = DataSource::Generated;
                    self.setup.applied.source = DataSource::Generated;
                    self.reset();
                } else if self.setup.config.source == job.source {
                    self.setup.config.source = self.setup.applied.source.clone();
                }
            }
        }
    }

    /// Whether a data set is loading.
    pub fn is_loading(&self) -> bool {
        self.loading.is_some() || self.queued_load.is_some()
    }

    fn reset(&mut self) {
        let config = self.setup.config.clone();
        let session = if config.source == DataSource::Generated {
            Session::new(config)
        } else if let Some(loaded) = self.loaded.as_ref().filter(|l| l.source == config.source) {
            Session::from_table(config, &loaded.table)
        } else {
            // The data is not in memory (yet): read it, and apply when it is.
            self.start_load(config.source, AfterLoad::Apply);
            return;
        };
        let session = match session {
            Ok(s) => Arc::new(s),
            Err(message) => {
                // The run in progress keeps going with its old settings.
                self.setup.error = Some(message);
                return;
            }
        };
        self.setup.error = None;
        for w in &self.workers {
            w.send(Command::Pause);
        }
        self.setup.applied = self.setup.config.clone();
        self.setup.applied_enabled = self.setup.enabled;
        for column in &mut self.columns {
            column.clear_history();
            column.enabled = self.setup.applied_enabled(column.device);
            column.precision = self.setup.applied.precision;
        }
        self.send_all(|| Command::Configure(Arc::clone(&session)));
        self.session = Some(session);
    }

    /// Takes in what the workers and the loader reported since the last frame.
    pub fn drain_events(&mut self) {
        self.poll_load();
        while let Ok(event) = self.events.try_recv() {
            let device = match &event {
                Event::Ready { device, .. }
                | Event::Unavailable { device, .. }
                | Event::Error { device, .. }
                | Event::Boundary { device, .. }
                | Event::Running { device, .. }
                | Event::Trace { device, .. }
                | Event::Values { device, .. }
                | Event::Memory { device, .. } => *device,
                Event::Log(log) => log.device,
                Event::Eval(eval) => eval.device,
            };
            self.columns[device as usize].apply(event);
        }
        if self.autorun_pending
            && self
                .columns
                .iter()
                .all(|c| c.status != ColumnStatus::Starting)
        {
            self.autorun_pending = false;
            self.apply(UiCommand::Run);
        }
    }

    fn keyboard(&self, ctx: &egui::Context, commands: &mut Vec<UiCommand>) {
        if ctx.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, egui::Key::O)) {
            commands.push(UiCommand::Open(OpenKind::File));
        }
        if ctx.egui_wants_keyboard_input() || self.opener.is_open() {
            return;
        }
        ctx.input(|i| {
            if i.key_pressed(egui::Key::Space) {
                commands.push(if self.is_running() {
                    UiCommand::Pause
                } else {
                    UiCommand::Run
                });
            }
            if i.key_pressed(egui::Key::ArrowRight) {
                commands.push(UiCommand::Step);
            }
            if i.key_pressed(egui::Key::R) {
                commands.push(UiCommand::Reset);
            }
        });
    }

    fn toolbar_ui(&self, ui: &mut egui::Ui, commands: &mut Vec<UiCommand>) {
        let lang = self.lang;
        ui.horizontal(|ui| {
            ui.heading(RichText::new(lang.tr(Key::AppTitle)).strong());
            ui.label(RichText::new(lang.tr(Key::Tagline)).weak());
        });
        ui.horizontal(|ui| {
            if self.is_running() {
                if ui
                    .button(lang.tr(Key::Pause))
                    .on_hover_text(lang.tr(Key::RunTip))
                    .clicked()
                {
                    commands.push(UiCommand::Pause);
                }
            } else if ui
                .button(lang.tr(Key::Run))
                .on_hover_text(lang.tr(Key::RunTip))
                .clicked()
            {
                commands.push(UiCommand::Run);
            }
            if ui
                .button(lang.tr(Key::Step))
                .on_hover_text(lang.tr(Key::StepTip))
                .clicked()
            {
                commands.push(UiCommand::Step);
            }
            if ui
                .button(lang.tr(Key::Reset))
                .on_hover_text(lang.tr(Key::ResetTip))
                .clicked()
            {
                commands.push(UiCommand::Reset);
            }
            ui.separator();
            ui.label(lang.tr(Key::Language));
            for l in Lang::ALL {
                if ui.selectable_label(lang == l, l.native_name()).clicked() {
                    commands.push(UiCommand::SetLanguage(l));
                }
            }
            ui.separator();
            ui.label(RichText::new(lang.tr(Key::Keys)).weak());
        });
    }

    /// Everything one frame does: take in events, draw, apply what was asked.
    pub fn ui_root(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        if !self.fonts_installed {
            install_fonts(&ctx);
            self.fonts_installed = true;
        }
        if self.started.is_none() {
            self.started = Some(Instant::now());
            self.start_workers(&ctx);
        }
        if self.ctx.is_none() {
            self.ctx = Some(ctx.clone());
            if let Some((source, after)) = self.queued_load.take() {
                self.start_load(source, after);
            }
        }
        self.drain_events();
        let mut commands = Vec::new();
        self.keyboard(&ctx, &mut commands);
        dropped_files(&ctx, self.lang, &mut commands);
        let lang = self.lang;
        egui::Panel::top("toolbar").show(ui, |ui| self.toolbar_ui(ui, &mut commands));
        egui::Panel::bottom("status").show(ui, |ui| {
            ui.label(RichText::new(lang.tr(Key::Measured)).small().weak());
        });
        let loading_name = self.loading.as_ref().map(|(job, _)| {
            let name = match &job.source {
                DataSource::File { path, .. } => crate::data::formats::display_name(path),
                DataSource::Shipped(name) => name.clone(),
                DataSource::Generated => String::new(),
            };
            (name, job.progress())
        });
        let data_view = DataView {
            loaded: self.loaded.as_ref(),
            loading: loading_name.as_ref().map(|(n, p)| (n.as_str(), *p)),
            error: self.data_error.as_deref(),
        };
        egui::Panel::left("setup")
            .resizable(true)
            .default_size(270.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .show(ui, |ui| self.setup.ui(ui, lang, data_view, &mut commands));
            });
        let data = self.session.as_ref().map(|s| Arc::clone(&s.data));
        egui::CentralPanel::default().show(ui, |ui| {
            ui.horizontal(|ui| {
                for (tab, key) in [
                    (Tab::Training, Key::TabTraining),
                    (Tab::Journey, Key::Journey),
                    (Tab::Memory, Key::MemoryTab),
                    (Tab::Precision, Key::PrecisionTab),
                    (Tab::Data, Key::TabData),
                ] {
                    if ui.selectable_label(self.tab == tab, lang.tr(key)).clicked() {
                        commands.push(UiCommand::ShowTab(tab));
                    }
                }
            });
            ui.separator();
            match self.tab {
                Tab::Training => {
                    ui.columns(2, |cols| {
                        for (column, ui) in self.columns.iter_mut().zip(cols.iter_mut()) {
                            egui::ScrollArea::vertical()
                                .id_salt(("column", column.device))
                                .show(ui, |ui| column.ui(ui, lang, data.as_deref()));
                        }
                    });
                }
                Tab::Journey => {
                    egui::ScrollArea::vertical()
                        .id_salt("journey")
                        .show(ui, |ui| {
                            if let Some(message) = &self.trace_export {
                                ui.label(RichText::new(message).weak());
                            }
                            self.journey.ui(ui, lang, &self.columns, &mut commands);
                        });
                    // The timeline follows the run: draw again when new steps come.
                    if self.is_running() {
                        ctx.request_repaint_after(Duration::from_millis(100));
                    }
                }
                Tab::Memory => {
                    egui::ScrollArea::vertical()
                        .id_salt("memory")
                        .show(ui, |ui| {
                            self.memory.ui(
                                ui,
                                lang,
                                &self.columns,
                                &self.setup.config,
                                data.as_deref(),
                                &mut commands,
                            );
                        });
                    if self.is_running() {
                        ctx.request_repaint_after(Duration::from_millis(200));
                    }
                }
                Tab::Precision => {
                    egui::ScrollArea::vertical()
                        .id_salt("precision")
                        .show(ui, |ui| {
                            self.precision.ui(
                                ui,
                                lang,
                                &self.columns,
                                &self.setup.config,
                                data.as_deref(),
                                &mut commands,
                            );
                        });
                    let comparing = self
                        .precision
                        .comparison
                        .as_ref()
                        .is_some_and(Comparison::is_running);
                    if self.is_running() || comparing {
                        ctx.request_repaint_after(Duration::from_millis(200));
                    }
                }
                Tab::Data => {
                    egui::ScrollArea::vertical()
                        .id_salt("preview")
                        .show(ui, |ui| {
                            self.preview.ui(
                                ui,
                                lang,
                                self.loaded.as_ref(),
                                &self.setup.config,
                                &self.setup.applied.source,
                                &mut commands,
                            );
                        });
                }
            }
        });
        match self.opener.show(&ctx, lang) {
            Some((OpenKind::SaveTrace, path)) => self.save_trace(&path),
            Some((_, path)) => commands.push(UiCommand::OpenPath(path)),
            None => {}
        }
        for command in commands {
            self.apply(command);
        }
        if let (Some(limit), Some(started)) = (self.options.exit_after, self.started) {
            if started.elapsed() >= limit && !self.summary_printed {
                self.summary_printed = true;
                println!("{}", self.summary_json());
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            } else {
                ctx.request_repaint_after(Duration::from_millis(200));
            }
        }
    }

    /// What each column shows, as JSON (printed by `--exit-after-secs`).
    pub fn summary_json(&self) -> String {
        let columns: Vec<serde_json::Value> = self
            .columns
            .iter()
            .map(|c| {
                serde_json::json!({
                    "device": c.device,
                    "status": match &c.status {
                        _ if !c.enabled => "disabled".to_owned(),
                        ColumnStatus::Starting => "starting".to_owned(),
                        ColumnStatus::Ready { name, .. } => format!("ready: {name}"),
                        ColumnStatus::Unavailable(r) => format!("unavailable: {r}"),
                    },
                    "steps": c.steps(),
                    "samples_per_s": c.last_log.as_ref().map(|l| l.samples_per_s),
                    "train_accuracy": c.last_eval.as_ref().and_then(|e| e.train.accuracy),
                    "has_boundary": c.boundary.is_some(),
                    "error": c.error,
                })
            })
            .collect();
        serde_json::json!({ "window": true, "columns": columns }).to_string()
    }
}

impl eframe::App for BatchScopeApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.ui_root(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if self.options.exit_after.is_none() {
            eframe::set_value(storage, SAVED_KEY, &self.saved());
        }
    }
}

/// Files dropped on the window open like Open… does; while they hover, the window says so.
fn dropped_files(ctx: &egui::Context, lang: Lang, commands: &mut Vec<UiCommand>) {
    let (hovering, dropped) = ctx.input(|i| {
        (
            !i.raw.hovered_files.is_empty(),
            i.raw.dropped_files.first().map(|f| f.path().to_path_buf()),
        )
    });
    if let Some(path) = dropped {
        commands.push(UiCommand::OpenPath(path));
    }
    if hovering {
        let painter = ctx.layer_painter(egui::LayerId::new(
            egui::Order::Foreground,
            egui::Id::unique("drop-overlay"),
        ));
        let rect = ctx.content_rect();
        painter.rect_filled(rect, 0.0, egui::Color32::from_black_alpha(160));
        painter.text(
            rect.center(),
            egui::Align2::CENTER_CENTER,
            lang.tr(Key::DropToOpen),
            egui::FontId::proportional(28.0),
            egui::Color32::WHITE,
        );
    }
}

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

/// Opens the window.
pub fn run_native(options: AppOptions) -> Result<(), String> {
    let native = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("BatchScope")
            .with_inner_size([1280.0, 860.0])
            .with_min_inner_size([800.0, 560.0]),
        ..Default::default()
    };
    // Window tests start from the defaults, not from whatever a user saved.
    let remember = options.exit_after.is_none();
    eframe::run_native(
        "BatchScope",
        native,
        Box::new(move |cc| {
            let saved = cc
                .storage
                .filter(|_| remember)
                .and_then(|s| eframe::get_value(s, SAVED_KEY));
            Ok(Box::new(BatchScopeApp::with_saved(options, saved)))
        }),
    )
    .map_err(|e| format!("cannot open the window: {e}"))
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable as _;

    use std::sync::Arc;

    use super::{AppOptions, BatchScopeApp, GpuChoice};
    use crate::backend::gpu::GpuBackend;
    use crate::data::source::DataSource;
    use crate::ui::column::ColumnStatus;
    use crate::ui::{Tab, UiCommand};

    fn harness(options: AppOptions) -> Harness<'static, BatchScopeApp> {
        let mut harness = harness_for(BatchScopeApp::new(options));
        harness.step();
        harness
    }

    /// A window-sized harness that draws `app`.
    fn harness_for(app: BatchScopeApp) -> Harness<'static, BatchScopeApp> {
        Harness::builder()
            .with_size(egui::vec2(1280.0, 900.0))
            .build_ui_state(|ui, app: &mut BatchScopeApp| app.ui_root(ui), app)
    }

    /// Steps frames (the workers run on their own threads) until `done` or the time is up.
    fn step_until(
        harness: &mut Harness<'_, BatchScopeApp>,
        limit: Duration,
        done: impl Fn(&BatchScopeApp) -> bool,
    ) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            harness.step();
            if done(harness.state()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    fn devices_settled(app: &BatchScopeApp) -> bool {
        app.columns
            .iter()
            .all(|c| c.status != ColumnStatus::Starting)
    }

    /// An app told there is no adapter (for `reason`), once both columns know their device.
    fn settled_without_gpu(reason: &str) -> Harness<'static, BatchScopeApp> {
        let mut harness = harness(AppOptions {
            gpu: GpuChoice::Unavailable(reason.into()),
            ..AppOptions::default()
        });
        assert!(
            step_until(&mut harness, Duration::from_secs(20), devices_settled),
            "devices never came up"
        );
        harness
    }

    fn gpu_expected() -> bool {
        match GpuBackend::new() {
            Ok(_) => true,
            Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
                panic!("CI=true and no GPU adapter: {}", e.reason)
            }
            Err(e) => {
                eprintln!("no GPU adapter, checking the CPU column only: {}", e.reason);
                false
            }
        }
    }

    #[test]
    fn pressing_run_advances_the_step_counters_of_both_columns() {
        let with_gpu = gpu_expected();
        let mut harness = harness(AppOptions::default());
        assert!(
            step_until(&mut harness, Duration::from_secs(20), devices_settled),
            "devices never came up"
        );
        assert_eq!(harness.state().columns[0].steps(), 0);
        harness.get_by_label("Run").click();
        let both = step_until(&mut harness, Duration::from_secs(30), |app| {
            app.columns[0].steps() > 0 && (!with_gpu || app.columns[1].steps() > 0)
        });
        assert!(
            both,
            "steps: cpu {}, gpu {}",
            harness.state().columns[0].steps(),
            harness.state().columns[1].steps()
        );
        // The counters on screen say so too, and the button became Pause.
        harness.step();
        assert!(
            harness.query_by_label("Step 0").is_none(),
            "a column still shows step 0"
        );
        assert!(harness.query_all_by_label_contains("Step ").count() > usize::from(with_gpu));
        harness.get_by_label("Pause").click();
        harness.step();
        assert!(step_until(&mut harness, Duration::from_secs(10), |app| {
            !app.is_running()
        }));
    }

    #[test]
    fn switching_language_changes_the_labels() {
        let mut harness = harness(AppOptions {
            gpu: GpuChoice::Unavailable("test".into()),
            ..AppOptions::default()
        });
        assert!(harness.query_by_label("Run").is_some());
        harness.get_by_label("简体中文").click();
        harness.step();
        harness.step();
        assert!(
            harness.query_by_label("运行").is_some(),
            "the Run button is not in Chinese"
        );
        assert!(harness.query_by_label("Run").is_none());
        assert!(harness.query_by_label("设置").is_some());
        harness.get_by_label("English").click();
        harness.step();
        harness.step();
        assert!(harness.query_by_label("Run").is_some());
    }

    #[test]
    fn without_an_adapter_the_gpu_column_explains_and_the_cpu_keeps_working() {
        let mut harness = settled_without_gpu("no adapter in this test");
        harness.step();
        assert!(harness.query_by_label("No GPU adapter").is_some());
        assert!(
            harness
                .query_by_label_contains("mesa-vulkan-drivers")
                .is_some()
        );
        assert!(harness.query_by_label("no adapter in this test").is_some());
        harness.key_press(egui::Key::Space);
        assert!(
            step_until(&mut harness, Duration::from_secs(30), |app| app.columns[0]
                .steps()
                > 0),
            "the CPU column did not train"
        );
        assert_eq!(harness.state().columns[1].steps(), 0);
    }

    #[test]
    fn saved_settings_come_back_and_a_language_on_the_command_line_wins() {
        let mut app = BatchScopeApp::new(AppOptions::default());
        app.lang = crate::i18n::Lang::Zh;
        app.setup.config.batch = 64;
        app.setup.config.hidden = vec![8];
        app.apply(crate::ui::UiCommand::Reset);
        let saved = app.saved();
        let back = BatchScopeApp::with_saved(AppOptions::default(), Some(saved.clone()));
        assert_eq!(back.lang, crate::i18n::Lang::Zh);
        assert_eq!(back.setup.applied.batch, 64);
        assert_eq!(back.setup.config.hidden, vec![8]);
        let english = AppOptions {
            lang_given: true,
            ..AppOptions::default()
        };
        assert_eq!(
            BatchScopeApp::with_saved(english, Some(saved)).lang,
            crate::i18n::Lang::En
        );
    }

    fn loaded(app: &BatchScopeApp) -> bool {
        app.loaded.is_some() && !app.is_loading()
    }

    /// A folder under the system's temporary directory, emptied first.
    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("batchscope-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    #[test]
    fn a_shipped_real_data_set_is_previewed_then_trains_from_the_setup_panel() {
        let mut harness = settled_without_gpu("test");
        harness.get_by_label("Source").click();
        // The popup opens on the frame after the click.
        harness.step();
        harness.step();
        harness.get_by_label("Iris flowers").click();
        // Read on the loader thread, then shown in the preview.
        assert!(step_until(&mut harness, Duration::from_secs(20), loaded));
        harness.step();
        assert_eq!(
            harness.state().setup.config.source,
            DataSource::Shipped("iris".into())
        );
        assert_eq!(harness.state().tab, Tab::Data);
        assert!(harness.query_by_label("setosa: 50").is_some());
        assert!(harness.query_by_label_contains("150 (train 120").is_some());
        // 4 inputs, 16, 16, 3 classes: 4·16+16 + 16·16+16 + 16·3+3.
        assert!(harness.query_by_label("Parameters: 403").is_some());
        harness.get_by_label("Train on this data set").click();
        harness.step();
        assert_eq!(harness.state().tab, Tab::Training);
        let session = harness.state().session().expect("session");
        assert_eq!((session.data.features, session.data.classes()), (4, 3));
        assert_eq!(session.data.class_names[0], "setosa");
        harness.key_press(egui::Key::Space);
        assert!(step_until(&mut harness, Duration::from_secs(30), |app| {
            app.columns[0]
                .last_eval
                .as_ref()
                .is_some_and(|e| e.step > 0)
        }));
        // Four features: the column shows the test set's confusion matrix, not a boundary.
        harness.step();
        assert!(
            harness
                .query_by_label("Confusion matrix (test set)")
                .is_some()
        );
    }

    /// What Open…, a drop and `batchscope PATH` all end in: `UiCommand::OpenPath`.
    #[test]
    fn a_csv_opened_like_open_does_is_previewed_and_trains() {
        let dir = temp_dir("open-csv");
        let path = dir.join("fruit.csv");
        let rows: Vec<String> = (0..60)
            .map(|i| {
                let (w, d, kind) = if i % 2 == 0 {
                    (150 + i, 7, "apple")
                } else {
                    (120 + i, 6, "pear")
                };
                format!("{w};{d};{kind}\n")
            })
            .collect();
        let rows = rows.concat();
        std::fs::write(&path, format!("weight;diameter;kind\n{rows}")).expect("write");
        let mut harness = settled_without_gpu("test");
        harness.state_mut().apply(UiCommand::OpenPath(path.clone()));
        assert!(step_until(&mut harness, Duration::from_secs(20), loaded));
        harness.step();
        assert_eq!(harness.state().tab, Tab::Data);
        assert!(harness.query_by_label("fruit.csv").is_some());
        assert!(harness.query_by_label("apple: 30").is_some());
        assert!(harness.query_by_label("pear: 30").is_some());
        assert!(harness.query_by_label("Scatter of two features:").is_some());
        // Until the user chooses it, the run in progress keeps its data.
        assert_eq!(
            harness.state().session().expect("session").data.name,
            "spiral"
        );
        harness.get_by_label("Train on this data set").click();
        harness.step();
        let session = harness.state().session().expect("session");
        assert_eq!(session.data.class_names, ["apple", "pear"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A file or folder dropped on the window, as eframe hands it over.
    #[derive(Debug)]
    struct Dropped(std::path::PathBuf);

    impl egui::DroppedFile for Dropped {
        fn path(&self) -> &std::path::Path {
            &self.0
        }
        fn bytes(&self) -> Result<Vec<u8>, String> {
            std::fs::read(&self.0).map_err(|e| e.to_string())
        }
    }

    #[test]
    fn a_dropped_image_folder_is_previewed_as_a_sample_grid() {
        let dir = temp_dir("drop-images");
        for (class, level) in [("dark", 30u8), ("light", 220u8)] {
            std::fs::create_dir_all(dir.join(class)).expect("class dir");
            for i in 0..6u8 {
                let image = image::GrayImage::from_pixel(12, 10, image::Luma([level + i]));
                image
                    .save(dir.join(class).join(format!("{i}.png")))
                    .expect("png");
            }
        }
        let mut harness = settled_without_gpu("test");
        harness
            .input_mut()
            .dropped_files
            .push(Arc::new(Dropped(dir.clone())));
        assert!(step_until(&mut harness, Duration::from_secs(20), loaded));
        harness.step();
        let table = &harness.state().loaded.as_ref().expect("loaded").table;
        assert_eq!((table.rows, table.features()), (12, 28 * 28));
        assert!(
            harness
                .query_by_label("The first 10 images of each class, 28×28 pixels:")
                .is_some()
        );
        assert!(harness.query_by_label("dark").is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_bad_file_shows_an_error_and_the_previous_data_stays() {
        let dir = temp_dir("bad-file");
        let path = dir.join("photo.csv");
        std::fs::write(&path, [0x47u8, 0x49, 0x46, 0x38, 0x00, 0x01, 0x02]).expect("write");
        let mut harness = settled_without_gpu("test");
        harness
            .state_mut()
            .apply(UiCommand::Load(DataSource::Shipped("wine".into())));
        assert!(step_until(&mut harness, Duration::from_secs(20), loaded));
        harness.state_mut().apply(UiCommand::OpenPath(path));
        assert!(step_until(&mut harness, Duration::from_secs(20), |app| {
            app.data_error.is_some()
        }));
        harness.step();
        let app = harness.state();
        let error = app.data_error.as_deref().unwrap_or_default();
        assert!(
            error.contains("photo.csv, byte 4") && error.contains("binary"),
            "{error}"
        );
        assert!(
            harness
                .query_by_label("Could not load the data set")
                .is_some()
        );
        assert!(
            harness
                .query_by_label_contains("previous data set stays")
                .is_some()
        );
        // The wine preview and the source chosen before are as they were.
        let app = harness.state();
        assert_eq!(app.loaded.as_ref().expect("kept").table.name, "wine");
        assert_eq!(app.setup.config.source, DataSource::Shipped("wine".into()));
        assert_eq!(app.session().expect("session").data.name, "spiral");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_regression_set_trains_and_shows_r2() {
        let mut harness = settled_without_gpu("test");
        harness
            .state_mut()
            .apply(UiCommand::Load(DataSource::Shipped("diabetes".into())));
        assert!(step_until(&mut harness, Duration::from_secs(20), loaded));
        harness.step();
        assert!(harness.query_by_label_contains("regression (").is_some());
        harness.state_mut().apply(UiCommand::UseLoaded);
        harness.key_press(egui::Key::Space);
        assert!(step_until(&mut harness, Duration::from_secs(30), |app| {
            app.columns[0]
                .last_eval
                .as_ref()
                .is_some_and(|e| e.step > 0 && e.test.r2.is_some())
        }));
        harness.step();
        assert!(
            harness.query_all_by_label("R²").count() >= 2,
            "metric and curve"
        );
        assert!(harness.query_by_label("Mean absolute error").is_some());
        assert!(
            harness
                .query_by_label_contains("Predicted vs true target")
                .is_some()
        );
    }

    #[test]
    fn a_saved_data_set_is_read_again_at_start_and_a_missing_one_falls_back() {
        let mut config = crate::train::TrainConfig {
            source: DataSource::Shipped("penguins".into()),
            ..crate::train::TrainConfig::default()
        };
        let saved = |config: &crate::train::TrainConfig| super::Saved {
            lang: crate::i18n::Lang::En,
            config: config.clone(),
            enabled: [true, false],
        };
        let options = || AppOptions {
            gpu: GpuChoice::Unavailable("test".into()),
            ..AppOptions::default()
        };
        let mut harness = harness_for(BatchScopeApp::with_saved(options(), Some(saved(&config))));
        assert!(step_until(&mut harness, Duration::from_secs(20), |app| {
            app.session().is_some_and(|s| s.data.name == "penguins")
        }));
        assert!(!harness.state().setup.is_changed());
        // A file that has gone since: the banner says so and the generator takes over.
        config.source = DataSource::File {
            path: std::env::temp_dir().join("batchscope-gone/never.csv"),
            options: crate::data::formats::LoadOptions::default(),
        };
        let mut harness = harness_for(BatchScopeApp::with_saved(options(), Some(saved(&config))));
        assert!(step_until(&mut harness, Duration::from_secs(20), |app| {
            app.session().is_some()
        }));
        let app = harness.state();
        assert_eq!(app.session().expect("session").data.name, "spiral");
        assert!(
            app.data_error
                .as_deref()
                .is_some_and(|e| e.contains("never.csv: does not exist")),
            "{:?}",
            app.data_error
        );
    }

    #[test]
    fn a_path_on_the_command_line_is_opened_trained_on_and_previewed() {
        let path = crate::data::shipped::shipped_path("wine").expect("wine");
        let mut harness = harness(AppOptions {
            gpu: GpuChoice::Unavailable("test".into()),
            open: Some(path),
            ..AppOptions::default()
        });
        assert!(step_until(&mut harness, Duration::from_secs(20), |app| {
            app.session().is_some_and(|s| s.data.name == "wine.csv")
        }));
        assert_eq!(harness.state().tab, Tab::Data);
        harness.step();
        assert!(
            harness
                .query_by_label("Training on this data set")
                .is_some()
        );
    }

    #[test]
    fn without_a_system_file_dialog_open_shows_the_in_app_browser() {
        let mut harness = settled_without_gpu("test");
        // As after a system dialog that answered "nothing" within a fraction of a second.
        harness.state_mut().opener.native_missing = true;
        harness.get_by_label("Open file…").click();
        // The command opens the browser after the frame; a new window then takes one frame to
        // measure itself before it is shown.
        harness.run_steps(3);
        assert!(harness.state().opener.is_open());
        assert!(
            harness
                .query_by_label_contains("Open a data set file")
                .is_some()
        );
        harness.get_by_label("Cancel").click();
        harness.step();
        harness.step();
        assert!(
            harness
                .query_by_label_contains("Open a data set file")
                .is_none()
        );
    }

    #[test]
    fn every_string_in_both_languages_has_its_glyphs_in_the_fonts() {
        let harness = harness(AppOptions {
            gpu: GpuChoice::Unavailable("test".into()),
            ..AppOptions::default()
        });
        let font = egui::FontId::proportional(14.0);
        harness.ctx.fonts_mut(|fonts| {
            for &key in crate::i18n::Key::ALL {
                for lang in crate::i18n::Lang::ALL {
                    let text = lang.tr(key);
                    assert!(fonts.has_glyphs(&font, text), "{key:?} in {lang:?}: {text}");
                }
            }
        });
    }

    #[test]
    fn the_journey_shows_lanes_of_a_running_session_and_a_hovered_span_its_duration() {
        use crate::trace::Category;
        let mut harness = settled_without_gpu("test");
        harness.get_by_label("Run").click();
        assert!(
            step_until(&mut harness, Duration::from_secs(30), |app| {
                app.columns[0].trace.steps.len() >= 20
            }),
            "no steps were recorded"
        );
        harness.get_by_label("Batch journey").click();
        // One frame takes the click, the next draws the view.
        harness.run_steps(2);
        // The lanes of the CPU's run, while it runs.
        for lane in ["training thread", "host→device copy", "CPU kernels (rayon)"] {
            assert!(harness.query_by_label(lane).is_some(), "lane {lane}");
        }
        assert!(harness.query_by_label_contains("Step breakdown").is_some());
        // Hold the picture still, then hover a kernel span.
        harness.state_mut().apply(UiCommand::Pause);
        assert!(step_until(&mut harness, Duration::from_secs(10), |app| {
            !app.is_running()
        }));
        // Zoom onto one kernel span (a step the OS held up could make the followed window so
        // long that every span is a sliver).
        let span = harness.state().columns[0]
            .trace
            .spans
            .iter()
            .filter(|s| s.category == Category::Kernel)
            .max_by_key(|s| s.duration_ns)
            .cloned()
            .expect("a kernel span was recorded");
        let margin = span.duration_ns;
        harness.state_mut().journey.show_range(
            crate::device::Device::Cpu,
            span.start_ns.saturating_sub(margin),
            span.end_ns() + margin,
        );
        harness.run_steps(3);
        let hit = harness
            .state()
            .journey
            .hits
            .iter()
            .find(|h| h.span == span)
            .cloned()
            .expect("the kernel span is drawn");
        assert!(hit.rect.width() > 100.0, "{:?}", hit.rect);
        let duration = crate::units::format_ns(hit.span.duration_ns as f64);
        let tooltip = format!("{duration} · Kernel");
        assert!(harness.query_by_label(&tooltip).is_none());
        harness
            .ctx
            .global_style_mut(|s| s.interaction.tooltip_delay = 0.0);
        harness.hover_at(hit.rect.center());
        harness.run_steps(3);
        assert!(harness.query_by_label(hit.span.name).is_some());
        assert!(
            harness.query_by_label(&tooltip).is_some(),
            "the tooltip shows {tooltip} for {}",
            hit.span.name
        );
    }

    #[test]
    fn a_step_replays_on_the_hardware_diagram_slowly() {
        let mut harness = settled_without_gpu("test");
        harness.get_by_label("Step").click();
        assert!(step_until(&mut harness, Duration::from_secs(20), |app| {
            !app.columns[0].trace.steps.is_empty()
        }));
        harness.state_mut().apply(UiCommand::ShowTab(Tab::Journey));
        harness.run_steps(2);
        harness.get_by_label_contains("Replay step").click();
        // Each harness step is a quarter of a second: two seconds into an eight-second replay.
        harness.run_steps(8);
        let progress = harness.state().journey.replay_progress;
        assert!(
            progress.is_some_and(|p| (0.1..0.5).contains(&p)),
            "{progress:?}"
        );
        harness.run_steps(30);
        assert_eq!(harness.state().journey.replay_progress, None, "it ends");
    }

    #[test]
    fn export_trace_writes_the_recorded_steps_as_chrome_trace_json() {
        let mut harness = settled_without_gpu("test");
        for _ in 0..3 {
            harness.get_by_label("Step").click();
            harness.run_steps(2);
        }
        assert!(step_until(&mut harness, Duration::from_secs(20), |app| {
            app.columns[0].trace.steps.len() >= 3
        }));
        let path = std::env::temp_dir().join(format!("bs-app-trace-{}.json", std::process::id()));
        harness.state_mut().save_trace(&path);
        let message = harness.state().trace_export.clone().unwrap_or_default();
        assert!(message.starts_with("Trace saved to"), "{message}");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let _ = std::fs::remove_file(&path);
        let trace: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let events = trace["traceEvents"].as_array().cloned().unwrap_or_default();
        let steps = events
            .iter()
            .filter(|e| e["cat"] == "ProfilerStep" && e["pid"] == 1)
            .count();
        assert_eq!(steps, harness.state().columns[0].trace.steps.len());
        // A folder that does not exist: the message says so, and nothing else changes.
        harness
            .state_mut()
            .save_trace(std::path::Path::new("/nonexistent-dir/t.json"));
        let message = harness.state().trace_export.clone().unwrap_or_default();
        assert!(message.starts_with("Could not save the trace"), "{message}");
    }

    #[test]
    fn the_memory_panel_shows_roles_and_allocated_and_reserved_of_a_running_session() {
        let mut harness = settled_without_gpu("test");
        harness.get_by_label("Run").click();
        assert!(step_until(&mut harness, Duration::from_secs(30), |app| {
            app.columns[0].memory_history.len() >= 3
        }));
        harness.state_mut().apply(UiCommand::ShowTab(Tab::Memory));
        harness.run_steps(2);
        let m = harness.state().columns[0].memory.unwrap_or_default();
        for role in [
            "Parameters",
            "Gradients",
            "Optimizer state",
            "Activations",
            "Inputs",
        ] {
            assert!(
                harness.query_all_by_label_contains(role).next().is_some(),
                "role {role}"
            );
        }
        let allocated = format!("allocated {}", crate::units::format_bytes(m.allocated));
        let reserved = format!("reserved {}", crate::units::format_bytes(m.reserved));
        assert!(harness.query_by_label(&allocated).is_some(), "{allocated}");
        assert!(harness.query_by_label(&reserved).is_some(), "{reserved}");
        // The 2-D spiral model, 2,16,16,3 with Adam: 371 parameters, 3 × 371 × 4 B.
        assert_eq!(m.role(crate::memory::Role::Parameters), 371 * 4);
        assert!(
            harness
                .query_by_label_contains("Estimated for these settings")
                .is_some()
        );
    }

    #[test]
    fn out_of_memory_stops_the_column_with_the_message_and_a_smaller_batch_recovers() {
        let mut harness = settled_without_gpu("test");
        {
            let app = harness.state_mut();
            app.setup.config.source = DataSource::Shipped("mnist".into());
            app.setup.config.hidden = vec![128];
            app.setup.config.batch = 1024;
            app.setup.config.pipeline.host_budget = Some(8 << 20);
            app.apply(UiCommand::Reset);
        }
        assert!(
            step_until(&mut harness, Duration::from_secs(30), |app| {
                app.columns[0].error.is_some()
            }),
            "no out-of-memory error"
        );
        let error = harness.state().columns[0].error.clone().unwrap_or_default();
        assert!(
            error.starts_with("CPU out of memory: tried to allocate"),
            "{error}"
        );
        harness.run_steps(2);
        assert!(
            harness
                .query_by_label_contains("CPU out of memory")
                .is_some()
        );
        // A smaller batch fits the same budget, and training goes on.
        {
            let app = harness.state_mut();
            app.setup.config.batch = 32;
            app.apply(UiCommand::Reset);
            app.apply(UiCommand::Run);
        }
        assert!(
            step_until(&mut harness, Duration::from_secs(30), |app| {
                app.columns[0].steps() > 5
            }),
            "training did not resume"
        );
        assert!(harness.state().columns[0].error.is_none());
    }

    #[test]
    fn choosing_a_precision_labels_both_columns_after_reset() {
        let mut harness = settled_without_gpu("test");
        assert_eq!(harness.query_all_by_label("FP32").count(), 2);
        {
            let app = harness.state_mut();
            app.setup.config.precision = crate::precision::Precision::Mixed;
            app.apply(UiCommand::Reset);
        }
        harness.run_steps(2);
        // Both columns say mixed precision, and how it is stored and computed.
        assert_eq!(
            harness
                .query_all_by_label("mixed FP16 (16-bit storage, f32 arithmetic)")
                .count(),
            2
        );
        assert!(harness.query_by_label("FP32").is_none());
        harness.get_by_label("Step").click();
        assert!(step_until(&mut harness, Duration::from_secs(20), |app| {
            app.columns[0].steps() >= 1
        }));
        // The column trains with a loss scaler: its log carries the scale.
        let log = harness.state().columns[0].last_log.clone();
        assert!(log.and_then(|l| l.loss_scale).is_some());
    }

    #[test]
    fn switching_precision_changes_the_histograms_and_both_columns_labels() {
        use crate::precision::DType;
        let with_gpu = gpu_expected();
        let mut harness = harness(AppOptions::default());
        assert!(
            step_until(&mut harness, Duration::from_secs(20), devices_settled),
            "devices never came up"
        );
        let devices = if with_gpu { 2 } else { 1 };
        let has_values = |dtype: DType| {
            move |app: &BatchScopeApp| {
                app.columns[..devices].iter().all(|c| {
                    c.values
                        .as_ref()
                        .is_some_and(|v| v.gradients.dtype == dtype && v.step >= 1)
                })
            }
        };
        harness.get_by_label("Step").click();
        assert!(
            step_until(
                &mut harness,
                Duration::from_secs(30),
                has_values(DType::F32)
            ),
            "no values reported"
        );
        harness
            .state_mut()
            .apply(UiCommand::ShowTab(Tab::Precision));
        harness.run_steps(2);
        let caption = |dtype: &str| format!("Gradients (stored as {dtype}");
        assert_eq!(
            harness
                .query_all_by_label_contains(&caption("FP32, 4 bytes"))
                .count(),
            devices
        );
        let before = harness.state().columns[0].values.clone();
        // Choose FP16 in the setup's precision list, then Reset and one step.
        harness
            .get_by_role_and_label(egui::accesskit::Role::ComboBox, "Precision")
            .click();
        harness.run_steps(2);
        harness
            .get_by_label("FP16 (16-bit storage, f32 arithmetic)")
            .click();
        harness.run_steps(2);
        assert_eq!(
            harness.state().setup.config.precision,
            crate::precision::Precision::Fp16
        );
        // (The toolbar's Reset; the setup has one too.)
        if let Some(reset) = harness.get_all_by_label("Reset").next() {
            reset.click();
        }
        harness.run_steps(2);
        harness.get_by_label("Step").click();
        assert!(
            step_until(
                &mut harness,
                Duration::from_secs(30),
                has_values(DType::F16)
            ),
            "no FP16 values reported"
        );
        harness.run_steps(2);
        // Each device's histograms now describe 2-byte FP16 values, and they changed.
        assert_eq!(
            harness
                .query_all_by_label_contains(&caption("FP16, 2 bytes"))
                .count(),
            devices
        );
        assert!(harness.query_by_label_contains(&caption("FP32")).is_none());
        let after = harness.state().columns[0].values.clone();
        assert_ne!(
            before.map(|v| v.gradients),
            after.map(|v| v.gradients),
            "the gradients' histogram now describes FP16 values"
        );
        // Both columns say FP16 on the training view.
        harness.state_mut().apply(UiCommand::ShowTab(Tab::Training));
        harness.run_steps(2);
        let label = "FP16 (16-bit storage, f32 arithmetic)";
        assert!(harness.query_all_by_label(label).count() >= 2);
        assert!(harness.query_by_label("FP32").is_none());
    }

    #[test]
    fn comparing_formats_overlays_four_runs_of_the_same_seed() {
        let mut harness = settled_without_gpu("test");
        harness
            .state_mut()
            .apply(UiCommand::ShowTab(Tab::Precision));
        // The CPU worker reports the new model's values once it is built; they push the button
        // down when they come, and a click aimed at its old place would miss. Wait for them.
        assert!(
            step_until(&mut harness, Duration::from_secs(30), |app| {
                app.columns[0].values.is_some()
            }),
            "no values reported"
        );
        harness.run_steps(2);
        harness
            .get_by_label("Compare formats (600 steps each, CPU)")
            .click();
        assert!(
            step_until(&mut harness, Duration::from_secs(60), |app| {
                app.precision
                    .comparison
                    .as_ref()
                    .is_some_and(|c| !c.is_running() && c.runs.len() == 4)
            }),
            "the comparison did not finish"
        );
        harness.run_steps(2);
        for format in ["fp32", "fp16", "bf16", "mixed"] {
            assert!(
                harness.query_all_by_label(format).count() >= 2,
                "{format} row"
            );
        }
        assert!(
            harness
                .query_by_label_contains("Measured in this run on the CPU: 600 steps each, seed 1")
                .is_some()
        );
        let c = harness.state().precision.comparison.as_ref().map(|c| {
            c.runs
                .iter()
                .map(|r| r.losses.last().map_or(f64::NAN, |p| p[1]))
                .collect::<Vec<_>>()
        });
        // The spiral trains in every format from the same start (ln 3).
        assert!(c.is_some_and(|l| l.iter().all(|&v| v < 0.5)));
    }

    #[test]
    fn a_restored_precision_labels_both_columns_from_the_start() {
        let mut saved = settled_without_gpu("test").state().saved();
        saved.config.precision = crate::precision::Precision::Bf16;
        let app = BatchScopeApp::with_saved(
            AppOptions {
                gpu: GpuChoice::Unavailable("test".into()),
                ..AppOptions::default()
            },
            Some(saved),
        );
        let mut harness = harness_for(app);
        assert!(step_until(
            &mut harness,
            Duration::from_secs(20),
            devices_settled
        ));
        harness.run_steps(2);
        let label = "BF16 (16-bit storage, f32 arithmetic)";
        assert!(harness.query_all_by_label(label).count() >= 2, "{label}");
        assert!(harness.query_by_label("FP32").is_none());
    }

    #[test]
    fn the_leak_setting_is_not_remembered_across_starts() {
        let mut harness = settled_without_gpu("test");
        harness.state_mut().setup.applied.pipeline.keep_graphs = true;
        let saved = harness.state().saved();
        assert!(!saved.config.pipeline.keep_graphs);
        // Nor taken back from settings saved with it on.
        let mut old = saved;
        old.config.pipeline.keep_graphs = true;
        let app = BatchScopeApp::with_saved(
            AppOptions {
                gpu: GpuChoice::Unavailable("test".into()),
                ..AppOptions::default()
            },
            Some(old),
        );
        assert!(!app.setup.config.pipeline.keep_graphs);
        assert!(!app.setup.applied.pipeline.keep_graphs);
    }

    #[test]
    fn invalid_settings_are_refused_and_the_run_keeps_its_state() {
        let mut harness = settled_without_gpu("test");
        harness.state_mut().setup.config.batch = 4000;
        harness.step();
        harness.key_press(egui::Key::R);
        harness.step();
        harness.step();
        let app = harness.state();
        let error = app
            .setup
            .error
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(error.contains("batch size 4000"), "{error}");
        assert_eq!(
            app.setup.applied.batch, 32,
            "the run in progress kept its settings"
        );
        assert!(harness.query_by_label_contains("batch size 4000").is_some());
    }
}
