//! The app: owns the UI state, starts one training worker per device, and turns what the
//! panels ask for into commands for the workers.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use egui::RichText;

use crate::backend::cpu::CpuBackend;
use crate::backend::gpu::GpuBackend;
use crate::backend::{Backend, Device};
use crate::i18n::{Key, Lang};
use crate::train::worker::{BackendFactory, Command, Event, Worker};
use crate::train::{Session, TrainConfig};
use crate::ui::UiCommand;
use crate::ui::column::{ColumnStatus, DeviceColumn};
use crate::ui::setup::SetupPanel;

/// How the app finds its GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuChoice {
    /// Open the adapter wgpu prefers, on the training thread.
    Auto,
    /// Act as if no adapter exists, with this reason (tests, `--no-gpu`).
    None(String),
}

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

/// The whole app state. The UI thread owns it; workers only see commands.
pub struct BatchScopeApp {
    /// UI language.
    pub lang: Lang,
    /// The setup panel.
    pub setup: SetupPanel,
    /// CPU column, then GPU column.
    pub columns: [DeviceColumn; 2],
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
            // Settings that no longer validate (an older version's limits) are dropped.
            if let Ok(session) = Session::new(saved.config.clone()) {
                app.setup.config = saved.config.clone();
                app.setup.applied = saved.config;
                app.setup.enabled = saved.enabled;
                app.setup.applied_enabled = saved.enabled;
                app.session = Some(Arc::new(session));
            }
            if !lang_given {
                app.lang = saved.lang;
            }
        }
        app
    }

    /// What [`BatchScopeApp::with_saved`] takes back next time.
    pub fn saved(&self) -> Saved {
        Saved {
            lang: self.lang,
            config: self.setup.applied.clone(),
            enabled: self.setup.applied_enabled,
        }
    }

    /// A new app; its workers start on the first frame, when a context exists to wake the UI.
    pub fn new(options: AppOptions) -> Self {
        let (events_tx, events) = mpsc::channel();
        let mut app = Self {
            lang: options.lang,
            setup: SetupPanel::default(),
            columns: [
                DeviceColumn::new(Device::Cpu),
                DeviceColumn::new(Device::Gpu),
            ],
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
            let factory: BackendFactory = match (device, &self.options.gpu) {
                (Device::Cpu, _) => {
                    let threads = self.options.cpu_threads;
                    Box::new(move || {
                        CpuBackend::new(threads)
                            .map(|b| Box::new(b) as Box<dyn Backend>)
                            .map_err(|e| e.to_string())
                    })
                }
                (Device::Gpu, GpuChoice::Auto) => Box::new(|| {
                    GpuBackend::new()
                        .map(|b| Box::new(b) as Box<dyn Backend>)
                        .map_err(|e| e.reason)
                }),
                (Device::Gpu, GpuChoice::None(reason)) => {
                    let reason = reason.clone();
                    Box::new(move || Err(reason))
                }
            };
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
        }
    }

    fn reset(&mut self) {
        let session = match Session::new(self.setup.config.clone()) {
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
        }
        self.send_all(|| Command::Configure(Arc::clone(&session)));
        self.session = Some(session);
    }

    /// Takes in what the workers reported since the last frame.
    pub fn drain_events(&mut self) {
        while let Ok(event) = self.events.try_recv() {
            let device = match &event {
                Event::Ready { device, .. }
                | Event::Unavailable { device, .. }
                | Event::Error { device, .. }
                | Event::Boundary { device, .. }
                | Event::Running { device, .. } => *device,
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
        if ctx.egui_wants_keyboard_input() {
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
        self.drain_events();
        let mut commands = Vec::new();
        self.keyboard(&ctx, &mut commands);
        let lang = self.lang;
        egui::Panel::top("toolbar").show(ui, |ui| self.toolbar_ui(ui, &mut commands));
        egui::Panel::bottom("status").show(ui, |ui| {
            ui.label(RichText::new(lang.tr(Key::Measured)).small().weak());
        });
        egui::Panel::left("setup")
            .resizable(true)
            .default_size(260.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| self.setup.ui(ui, lang, &mut commands));
            });
        let data = self.session.as_ref().map(|s| Arc::clone(&s.data));
        egui::CentralPanel::default().show(ui, |ui| {
            ui.columns(2, |cols| {
                for (column, ui) in self.columns.iter_mut().zip(cols.iter_mut()) {
                    egui::ScrollArea::vertical()
                        .id_salt(("column", column.device))
                        .show(ui, |ui| column.ui(ui, lang, data.as_deref()));
                }
            });
        });
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
                    "train_accuracy": c.last_eval.as_ref().map(|e| e.train_accuracy),
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

    use super::{AppOptions, BatchScopeApp, GpuChoice};
    use crate::backend::gpu::GpuBackend;
    use crate::ui::column::ColumnStatus;

    fn harness(options: AppOptions) -> Harness<'static, BatchScopeApp> {
        let mut harness = Harness::builder()
            .with_size(egui::vec2(1280.0, 900.0))
            .build_ui_state(
                |ui, app: &mut BatchScopeApp| app.ui_root(ui),
                BatchScopeApp::new(options),
            );
        harness.step();
        harness
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
            gpu: GpuChoice::None(reason.into()),
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
            gpu: GpuChoice::None("test".into()),
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

    #[test]
    fn a_shipped_real_data_set_trains_from_the_setup_panel() {
        let mut harness = settled_without_gpu("test");
        harness.get_by_label("Source").click();
        // The popup opens on the frame after the click.
        harness.step();
        harness.step();
        harness.get_by_label("Iris flowers").click();
        harness.step();
        assert_eq!(
            harness.state().setup.config.shipped.as_deref(),
            Some("iris")
        );
        // 4 inputs, 16, 16, 3 classes: 4·16+16 + 16·16+16 + 16·3+3.
        assert!(harness.query_by_label("Parameters: 403").is_some());
        harness.key_press(egui::Key::R);
        harness.step();
        let session = harness.state().session().expect("session");
        assert_eq!((session.data.features, session.data.classes), (4, 3));
        harness.key_press(egui::Key::Space);
        assert!(step_until(&mut harness, Duration::from_secs(30), |app| {
            app.columns[0]
                .last_eval
                .as_ref()
                .is_some_and(|e| e.step > 0)
        }));
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
        let error = app.setup.error.as_deref().unwrap_or_default();
        assert!(error.contains("batch size 4000"), "{error}");
        assert_eq!(
            app.setup.applied.batch, 32,
            "the run in progress kept its settings"
        );
        assert!(harness.query_by_label_contains("batch size 4000").is_some());
    }
}
