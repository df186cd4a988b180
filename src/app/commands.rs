//! Carrying out what the user asked for, in one place: what a panel, the keyboard or a dropped
//! file asks is a [`UiCommand`], and [`BatchScopeApp::apply`] does it.

use std::sync::Arc;

use super::BatchScopeApp;
use super::jobs::AfterLoad;
use super::restore::RestoreNote;
use super::state::DataState;
use crate::data::formats::DataError;
use crate::data::source::{DataSource, LoadJob, Loaded};
use crate::device::Device;
use crate::i18n::{ErrKey, Key, Said};
use crate::setting::SettingError;
use crate::train::compare::{self, Comparison};
use crate::train::worker::Command;
use crate::train::{DeviceStatus, RunState, Session, SessionError, TrainConfig};
use crate::ui::mismatch::MismatchView;
use crate::ui::open::OpenKind;
use crate::ui::{Tab, UiCommand};

impl BatchScopeApp {
    /// Carries out `commands`, in order.
    pub(super) fn run_commands(&mut self, commands: Vec<UiCommand>) {
        for command in commands {
            self.apply(command);
        }
    }

    /// Carries out one command.
    pub fn apply(&mut self, command: UiCommand) {
        let lang = self.state.lang;
        match command {
            UiCommand::Run => self.run(),
            UiCommand::Pause => self.pause(),
            UiCommand::Step => self.step(),
            UiCommand::SetLanguage(lang) => self.state.lang = lang,
            UiCommand::Reset => self.reset(),
            UiCommand::Open(kind) => self.panels.opener.start(kind, lang, self.notify()),
            UiCommand::OpenPath(path) => self.open_path(path),
            UiCommand::Load(source) => self.start_load(source, AfterLoad::Preview),
            UiCommand::CancelLoad => {
                if let Some((job, _)) = &self.jobs.loading {
                    job.cancel();
                }
            }
            UiCommand::DismissDataError => self.state.data.error = None,
            UiCommand::DismissRestoreNotes => self.state.restore_notes.clear(),
            UiCommand::UseLoaded => self.use_loaded(),
            UiCommand::ShowTab(tab) => self.state.tab = tab,
            UiCommand::SetPipeline(pipeline) => self.set_pipeline(pipeline),
            UiCommand::ReleaseCached => self.send_all(|| Command::ReleaseCached),
            UiCommand::ComparePrecisions => self.compare_precisions(),
            UiCommand::DemonstrateMismatch => self.demonstrate_mismatch(),
            UiCommand::RunSweep(sweep) => self.run_sweep(sweep),
            UiCommand::SetSharing(sharing) => self.set_sharing(sharing),
            UiCommand::DeleteEntry(id) => {
                self.state.history.delete(id);
            }
            UiCommand::RestoreEntry(id) => self.restore_entry(id),
            UiCommand::TimeRequests => self.time_requests(),
            UiCommand::CancelRequests => self.cancel_serving(),
            UiCommand::SimulateSweepOn(profile) => {
                self.state.sweep_profile = profile;
                self.simulate_sweep();
            }
            UiCommand::Calibrate => self.calibrate_machine(),
            UiCommand::CancelCalibration => self.cancel_calibration(),
            UiCommand::Lesson(command) => self.lesson_command(command),
            UiCommand::SetPresenter(on) => self.set_presenter(on),
            UiCommand::ToggleBlank => self.state.presenter.blank ^= true,
            UiCommand::ToggleSpeakerNotes => self.state.presenter.notes ^= true,
            UiCommand::ExportScreenshot | UiCommand::ExportPlotScreenshot(_) => {
                // The whole window, or the plot's rectangle alone.
                self.state.screenshot_crop = match command {
                    UiCommand::ExportPlotScreenshot(rect) => Some(rect),
                    _ => None,
                };
                self.ask_path(OpenKind::SaveScreenshot);
            }
            UiCommand::SaveScreenshot(path) => {
                let crop = self.state.screenshot_crop.take();
                self.save_screenshot(path, crop);
            }
            UiCommand::AskSession { save: true } => self.ask_path(OpenKind::SaveSession),
            UiCommand::AskSession { save: false } => self.ask_path(OpenKind::Session),
            UiCommand::SaveSession(path) => self.save_session(path),
            UiCommand::OpenSession(path) => self.open_session(&path),
            UiCommand::SaveModel(path) => self.save_model(path),
            UiCommand::LoadModel(path) => self.load_model(&path),
            UiCommand::ToggleFullscreen => self.toggle_fullscreen(),
            UiCommand::CancelSweep => self.cancel_sweep(),
            UiCommand::CancelComparison => self.cancel_comparison(),
            UiCommand::SaveTrace(path) => self.save_trace(&path),
            UiCommand::ExportSweep => self.ask_path(OpenKind::SaveSweep),
            UiCommand::SaveSweep(path) => self.save_sweep(&path),
            UiCommand::ExportTrace => self.ask_path(OpenKind::SaveTrace),
        }
    }

    /// One step: a running device stops after its step, and says when.
    fn step(&mut self) {
        for run in &mut self.state.runs {
            if run.run_state == RunState::Running {
                run.run_state = RunState::Pausing;
            }
        }
        self.send_all(|| Command::Step);
    }

    /// Loads a file to preview it; opening the file that is loaded again keeps the way it was
    /// read.
    fn open_path(&mut self, path: std::path::PathBuf) {
        let options = self
            .state
            .data
            .loaded
            .as_ref()
            .and_then(|l| match &l.source {
                DataSource::File { path: p, options } if *p == path => Some(options.clone()),
                _ => None,
            })
            .unwrap_or_default();
        self.start_load(DataSource::File { path, options }, AfterLoad::Preview);
    }

    /// Trains on the data set previewed, and shows the training when the settings take it.
    fn use_loaded(&mut self) {
        if let Some(loaded) = &self.state.data.loaded {
            self.state.settings.config.source = loaded.source.clone();
            self.reset();
            if self.state.settings.error.is_none() {
                self.state.tab = Tab::Training;
            }
        }
    }

    /// A new input pipeline for the running workers, or why it is refused.
    fn set_pipeline(&mut self, pipeline: crate::train::Pipeline) {
        match pipeline.validate() {
            Ok(()) => {
                self.state.settings.applied.pipeline = pipeline;
                self.send_all(|| Command::Pipeline(pipeline));
            }
            Err(e) => self.state.settings.error = Some(e.into()),
        }
    }

    /// Presenter mode on or off; its clock starts when it is turned on.
    fn set_presenter(&mut self, on: bool) {
        let presenter = &mut self.state.presenter;
        if on && !presenter.on {
            presenter.since = Some(web_time::Instant::now());
        }
        presenter.on = on;
        presenter.blank = false;
        if !on {
            presenter.notes = false;
        }
    }

    /// Asks where to save, or what to open (the dialog, or the in-app browser).
    fn ask_path(&mut self, kind: OpenKind) {
        let (lang, notify) = (self.state.lang, self.notify());
        self.panels.opener.start(kind, lang, notify);
    }

    fn toggle_fullscreen(&self) {
        if let Some(ctx) = &self.ctx {
            let full = ctx.input(|i| i.viewport().fullscreen.unwrap_or(false));
            ctx.send_viewport_cmd(egui::ViewportCommand::Fullscreen(!full));
        }
    }

    /// Dropping the sweep's job cancels it; what was measured stays.
    fn cancel_sweep(&mut self) {
        self.jobs.sweep = None;
        self.jobs.pending_sweep = None;
        if let Some(results) = self.state.sweep.as_mut()
            && !results.ended
        {
            results.ended = true;
            results.notes.push(crate::bench::sweep::Note::Cancelled);
            self.keep_sweep();
        }
    }

    /// Dropping the comparison's job tells its thread to stop after its current step.
    fn cancel_comparison(&mut self) {
        self.jobs.comparison = None;
        if let Some(c) = self.state.comparison.as_mut() {
            c.ended();
        }
    }

    /// Every device of the run trains continuously. A sweep measuring meanwhile would share
    /// the cores with training: it stops, and says why.
    pub(super) fn run(&mut self) {
        if self.jobs.serving.is_some() || self.jobs.pending_serving {
            self.cancel_serving();
        }
        if self.jobs.calibration.is_some() || self.jobs.pending_calibration {
            self.cancel_calibration();
        }
        if self.jobs.sweep.is_some() || self.jobs.pending_sweep.is_some() {
            self.jobs.sweep = None;
            self.jobs.pending_sweep = None;
            if let Some(results) = self.state.sweep.as_mut()
                && !results.ended
            {
                results.ended = true;
                results
                    .notes
                    .push(crate::bench::sweep::Note::CancelledByRun);
                self.keep_sweep();
            }
        }
        for run in &mut self.state.runs {
            if run.can_train() {
                run.run_state = RunState::Running;
            }
        }
        self.send_all(|| Command::Run);
    }

    /// Every running device stops after its current step; until it says it has, it is
    /// "pausing".
    pub(super) fn pause(&mut self) {
        for run in &mut self.state.runs {
            if run.run_state == RunState::Running {
                run.run_state = RunState::Pausing;
            }
        }
        self.send_all(|| Command::Pause);
    }

    /// A session of the default settings on the data set of the settings (with a batch no
    /// larger than its training rows), if one can start.
    fn defaults_that_fit(&self) -> Option<Session> {
        let config = TrainConfig {
            source: self.state.settings.config.source.clone(),
            data: self.state.settings.config.data.clone(),
            ..TrainConfig::default()
        };
        let start = |config: TrainConfig| {
            if config.source == DataSource::Generated {
                Some(Session::new(config))
            } else {
                let loaded = self.state.data.loaded.as_ref()?;
                Some(Session::from_table(config, &loaded.table))
            }
        };
        match start(config.clone())? {
            Ok(session) => Some(session),
            Err(SessionError::Setting(SettingError::BatchLargerThanData { rows, .. })) => {
                start(TrainConfig {
                    batch: rows.max(1),
                    ..config
                })?
                .ok()
            }
            Err(_) => None,
        }
    }

    /// Applies the settings and starts a new run from the initial weights: a new generation,
    /// so nothing of the old run reaches the new one. A run that was going goes on.
    pub(super) fn reset(&mut self) {
        let settings = &self.state.settings;
        if !settings.enabled.contains(&true) {
            self.state.settings.error = Some(SettingError::NoDevice.into());
            return;
        }
        let config = settings.config.clone();
        let session = if config.source == DataSource::Generated {
            Session::new(config)
        } else if let Some(loaded) = self
            .state
            .data
            .loaded
            .as_ref()
            .filter(|l| l.source == config.source)
        {
            Session::from_table(config, &loaded.table)
        } else {
            // The data is not in memory (yet): read it, and apply when it is.
            self.start_load(config.source, AfterLoad::Apply);
            return;
        };
        let session = match session {
            Ok(s) => Arc::new(s),
            Err(e) if self.session.is_none() => {
                // Nothing runs whose settings could be kept (restored settings that do not fit
                // their data set): rather than a Run button that does nothing, start from the
                // defaults that fit, and say so.
                let Some(session) = self.defaults_that_fit() else {
                    self.state.settings.error = Some(e);
                    return;
                };
                self.state.restore_notes.push(RestoreNote::DidNotFit {
                    data: session.data.name.clone(),
                    why: e,
                });
                self.state.settings.config = session.config.clone();
                Arc::new(session)
            }
            Err(e) => {
                // The run in progress keeps going with its old settings.
                self.state.settings.error = Some(e);
                return;
            }
        };
        let keep_running = self.state.is_running();
        self.finish_run();
        let settings = &mut self.state.settings;
        settings.error = None;
        settings.applied = settings.config.clone();
        settings.applied_enabled = settings.enabled;
        self.state.show_sharing();
        self.state.generation += 1;
        let generation = self.state.generation;
        let precision = session.config.precision;
        for run in &mut self.state.runs {
            let enabled = self.state.settings.applied_enabled(run.device);
            run.start_run(generation, precision, enabled);
        }
        // Every worker stops (a device the new run leaves out keeps its old model, paused);
        // those of the new run build it.
        for w in &self.jobs.workers {
            w.send(Command::Pause);
        }
        self.send_all(|| Command::Configure(Arc::clone(&session), generation));
        self.session = Some(session);
        if keep_running {
            self.run();
        }
    }

    /// The run in progress has finished (a new one replaces it): into the history, if it
    /// trained.
    pub(super) fn finish_run(&mut self) {
        if let Some(entry) = self.current_entry() {
            self.state.history.push(entry);
        }
    }

    /// Puts a history entry's settings and devices into the setup and starts a run of them.
    fn restore_entry(&mut self, id: u64) {
        let Some(entry) = self.state.history.get(id) else {
            return;
        };
        let settings = &mut self.state.settings;
        settings.config = entry.config.clone();
        // Leak mode is a lesson to switch on, never one to restore into.
        settings.config.pipeline.keep_graphs = false;
        settings.enabled = entry.enabled;
        self.reset();
        if self.state.settings.error.is_none() {
            self.state.tab = Tab::Training;
        }
    }

    /// Loads `source` on the loader's job (replacing a load in progress), then does `after`.
    pub(super) fn start_load(&mut self, source: DataSource, after: AfterLoad) {
        if let Some((job, _)) = self.jobs.loading.take() {
            job.cancel();
        }
        self.state.data.loading = None;
        if self.ctx.is_none() {
            // Before the first frame nothing could wake the window: load once it exists.
            self.queued_load = Some((source, after));
            return;
        }
        match LoadJob::spawn(source.clone(), self.notify()) {
            Ok(job) => {
                self.state.data.loading = Some((DataState::loading_name(&source), 0.0));
                self.jobs.loading = Some((job, after));
            }
            Err(e) => {
                self.state.data.error = Some(Said::new(Key::NoLoadingThread, &[("why", &e)]));
            }
        }
    }

    /// Takes in the load's progress, and its table once it is in: the preview and the source
    /// on success, the banner on failure.
    pub(super) fn poll_load(&mut self) {
        let Some((job, _)) = self.jobs.loading.as_mut() else {
            return;
        };
        let result = job.poll();
        if let Some(loading) = self.state.data.loading.as_mut() {
            loading.1 = job.progress();
        }
        let Some(result) = result else {
            return;
        };
        let Some((job, after)) = self.jobs.loading.take() else {
            return;
        };
        self.state.data.loading = None;
        self.on_loaded(job.source, result, after);
    }

    fn on_loaded(
        &mut self,
        source: DataSource,
        result: Result<crate::data::Table, DataError>,
        after: AfterLoad,
    ) {
        match result {
            Ok(table) => {
                self.state.data.error = None;
                let loaded = Loaded {
                    source,
                    table: Arc::new(table),
                };
                self.state.settings.config.source = loaded.source.clone();
                let text = loaded.table.format == crate::data::text_data::FORMAT;
                self.state.settings.config.suit_data(text);
                self.state.data.loaded = Some(loaded);
                // Nothing trains yet (a load at start was replaced by this one): train on it.
                if matches!(after, AfterLoad::Apply | AfterLoad::ApplyAndPreview)
                    || self.session.is_none()
                {
                    self.reset();
                }
                if matches!(after, AfterLoad::Preview | AfterLoad::ApplyAndPreview) {
                    self.state.tab = Tab::Data;
                }
            }
            Err(DataError::Cancelled { .. }) => {}
            Err(e) => {
                self.state.data.error = Some(e.said());
                let settings = &mut self.state.settings;
                if self.session.is_none() {
                    // Nothing was running to keep (a file restored at start has gone): train on
                    // the generator, so the app is usable at once.
                    settings.config.source = DataSource::Generated;
                    settings.applied.source = DataSource::Generated;
                    self.reset();
                } else if settings.config.source == source {
                    settings.config.source = settings.applied.source.clone();
                }
            }
        }
    }

    /// Pauses training and has `sweep` start once every device has stopped: a sweep shares
    /// its cores with nothing.
    fn run_sweep(&mut self, sweep: crate::bench::sweep::Sweep) {
        if self.session.is_none() {
            return;
        }
        self.pause();
        let devices = self.sweep_devices();
        self.state.sweep = Some(crate::bench::sweep::Results::new(sweep.clone(), &devices));
        self.simulate_sweep();
        self.jobs.sweep = None;
        self.jobs.pending_sweep = Some(sweep);
        self.start_pending_sweep();
    }

    /// Predicts the sweep's values on the profile chosen for it (none chosen: no line).
    fn simulate_sweep(&mut self) {
        let state = &self.state;
        self.state.sweep_simulated = match (&state.sweep, &self.session, &state.sweep_profile) {
            (Some(results), Some(session), Some(id)) => {
                state.profiles.iter().find(|p| &p.id == id).map(|p| {
                    crate::bench::sweep_sim::SimulatedSweep::new(&results.sweep, session, p)
                })
            }
            _ => None,
        };
    }

    /// How the window's own measurements (sweeps, serving, calibration) open a device: the
    /// kernel threads the app was started with, each kernel split by its size.
    pub(super) fn measuring_options(&self) -> crate::backend::OpenOptions {
        crate::backend::OpenOptions {
            cpu_threads: self.options.cpu_threads,
            split: crate::backend::cpu::Split::BySize,
            gpu: self.options.gpu.clone(),
            tuning: self.options.tuning_cache.clone(),
        }
    }

    /// The devices a sweep measures: those of the run in progress.
    pub(super) fn sweep_devices(&self) -> Vec<Device> {
        Device::ALL
            .into_iter()
            .filter(|&d| self.state.settings.applied_enabled(d))
            .collect()
    }

    /// Starts the sweep asked for once no device trains any more (called every frame).
    pub(super) fn start_pending_sweep(&mut self) {
        use crate::bench::sweep::{self, PointPlan};
        if self.state.is_running() {
            return;
        }
        let (Some(sweep), Some(session)) = (self.jobs.pending_sweep.take(), self.session.clone())
        else {
            return;
        };
        let devices = self.sweep_devices();
        let options = self.measuring_options();
        let work = {
            let (sweep, devices) = (sweep.clone(), devices.clone());
            move |ctx: crate::job::JobContext<sweep::Report>| {
                let open = |device, threads: Option<usize>| {
                    let options = crate::backend::OpenOptions {
                        cpu_threads: threads.unwrap_or(options.cpu_threads),
                        ..options.clone()
                    };
                    crate::backend::open(device, &options)
                };
                let plan = PointPlan::default();
                sweep::run(
                    &sweep,
                    &session,
                    &devices,
                    plan,
                    &open,
                    ctx.cancel_flag(),
                    &mut |r| {
                        ctx.send(r);
                    },
                );
            }
        };
        match crate::job::Job::spawn("sweep", self.notify(), work) {
            Ok(job) => self.jobs.sweep = Some(job),
            Err(e) => {
                if let Some(results) = self.state.sweep.as_mut() {
                    results.notes.push(crate::bench::sweep::Note::LeftOut {
                        device: Device::Cpu,
                        why: Said::new(ErrKey::NoSweepThread, &[("why", &e)]),
                    });
                    results.ended = true;
                }
            }
        }
    }

    /// Runs the device-mismatch lesson's op on a thread of its own (opening a GPU takes a
    /// moment, longer on a software adapter).
    fn demonstrate_mismatch(&mut self) {
        let options = self.measuring_options();
        let work = move |ctx: crate::job::JobContext<Result<_, Said>>| {
            ctx.send(crate::train::mismatch::demonstrate(&options));
        };
        match crate::job::Job::spawn("mismatch", self.notify(), work) {
            Ok(job) => {
                self.state.mismatch = MismatchView::Running;
                self.jobs.mismatch = Some(job);
            }
            Err(e) => {
                self.state.mismatch =
                    MismatchView::Unavailable(Said::new(ErrKey::NoLessonThread, &[("why", &e)]));
            }
        }
    }

    /// Trains the applied settings in every number format, one after the other on the CPU.
    fn compare_precisions(&mut self) {
        let Some(session) = &self.session else {
            return;
        };
        match compare::spawn(Arc::clone(session), self.notify()) {
            Ok(job) => {
                self.state.comparison = Some(Comparison::new(session.config.clone()));
                self.jobs.comparison = Some(job);
            }
            Err(e) => {
                let mut failed = Comparison::new(session.config.clone());
                failed.failed = Some(Said::new(ErrKey::NoComparisonThread, &[("why", &e)]));
                failed.ended();
                self.state.comparison = Some(failed);
            }
        }
    }

    /// Writes the recorded steps of both devices to `path` as Chrome trace JSON.
    pub fn save_trace(&mut self, path: &std::path::Path) {
        use crate::trace::chrome::{DeviceTrace, to_chrome};
        let runs = &self.state.runs;
        let names: Vec<String> = runs
            .iter()
            .map(|r| match &r.status {
                DeviceStatus::Ready { name, .. } => format!("{}: {name}", r.device),
                _ => r.device.to_string(),
            })
            .collect();
        let steps: Vec<Vec<crate::trace::StepTrace>> = runs
            .iter()
            .map(|r| r.trace.steps.iter().cloned().collect())
            .collect();
        let traces: Vec<DeviceTrace<'_>> = runs
            .iter()
            .zip(&names)
            .zip(&steps)
            .filter(|((r, _), _)| !r.trace.steps.is_empty())
            .map(|((r, name), steps)| DeviceTrace {
                pid: r.device as u32 + 1,
                name,
                gpu: r.device == Device::Gpu,
                steps,
                spans: &r.trace.spans,
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
        let lang = self.state.lang;
        let written = crate::files::write_atomic(path, value.to_string().as_bytes())
            .map_err(|e| e.text(lang).to_owned());
        self.state.trace_export = Some(match written {
            Ok(()) => lang.fmt(Key::TraceSaved, &[("path", &shown)]),
            Err(e) => lang.fmt(Key::TraceSaveFailed, &[("path", &shown), ("error", &e)]),
        });
    }

    /// Saves the sweep's points as CSV at `path`, and says where (or why not).
    pub fn save_sweep(&mut self, path: &std::path::Path) {
        let Some(results) = &self.state.sweep else {
            return;
        };
        let mut text = crate::bench::sweep::to_csv(results.sweep.parameter, &results.points);
        if let Some(simulated) = &self.state.sweep_simulated {
            text.push_str(&simulated.csv_rows());
        }
        let shown = path.display();
        let lang = self.state.lang;
        let written =
            crate::files::write_atomic(path, text.as_bytes()).map_err(|e| e.text(lang).to_owned());
        self.state.sweep_export = Some(match written {
            Ok(()) => lang.fmt(Key::SweepSaved, &[("path", &shown)]),
            Err(e) => lang.fmt(Key::SweepSaveFailed, &[("path", &shown), ("error", &e)]),
        });
    }
}
