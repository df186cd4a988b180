//! One named thread per device that owns that device's backend and trains on commands.
//!
//! The UI thread never waits on it: it sends [`Command`]s and drains [`Event`]s once per frame.
//! The worker calls the repaint callback after each event so the window wakes up to draw it.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Duration;
use web_time::Instant;

use super::config::{BOUNDARY_RESOLUTION, Pipeline, StopAt};
use super::report::{BoundaryGrid, EvalReport, StepLog, ValueHistograms};
use super::runner::Runner;
use super::session::Session;
use super::turns::{Take, Turns};

#[path = "worker_page.rs"]
mod page;
use crate::backend::Backend;
use crate::backend::{AdapterSummary, TuningNote};
use crate::device::Device;
use crate::i18n::{Arg, Said};
use crate::job::JobContext;
use crate::memory::MemorySnapshot;
use crate::trace::{TraceChunk, TraceHistory};
use page::Awaiting;

/// What the UI asks a worker to do.
#[derive(Debug)]
pub enum Command {
    /// Build a new model for these settings (and drop the old one); the worker pauses, and
    /// tags everything it reports of the new run with the generation.
    Configure(Arc<Session>, u64),
    /// Train continuously.
    Run,
    /// Stop after the current step.
    Pause,
    /// Train exactly one step, then report it.
    Step,
    /// Go on with new loader, sync, upload and recording settings (the model stays).
    Pipeline(Pipeline),
    /// Give the GPU pool's cached blocks back to the device.
    ReleaseCached,
    /// Write the model's weights to this file as safetensors, named as PyTorch's `state_dict`
    /// would name them for the model (training goes on after).
    SaveWeights(std::path::PathBuf, Arc<crate::nn::ModelSpec>),
    /// Replace the model's weights with these, read (and checked against the model) from this
    /// file.
    LoadWeights(Arc<crate::nn::LayerValues>, std::path::PathBuf),
    /// End the thread.
    Shutdown,
}

/// What a worker reports: about which device, for which run, and what.
#[derive(Clone, Debug)]
pub struct Event {
    /// Which device.
    pub device: Device,
    /// The run it belongs to: the generation of the [`Command::Configure`] that started it (0
    /// for what is about the device, not a run). A window that has moved on to a newer run
    /// drops the events of older ones still on their way.
    pub generation: u64,
    /// What happened.
    pub kind: EventKind,
}

/// What happened on a worker.
#[derive(Clone, Debug)]
pub enum EventKind {
    /// The backend is up.
    Ready {
        /// The backend's name.
        name: String,
        /// The adapter, for the GPU.
        adapter: Option<AdapterSummary>,
        /// Kernel threads, for the CPU.
        cpu_threads: Option<usize>,
    },
    /// The device cannot train, and why (what is missing and how to get it).
    Unavailable(Said),
    /// What went wrong with the GPU's kept kernel choice as it opened (sent after `Ready`
    /// when there is something to say).
    TuningNotes(Vec<TuningNote>),
    /// A training interval.
    Log(Box<StepLog>),
    /// Whole-set accuracy.
    Eval(EvalReport),
    /// The memory accounting, sent with each log and after each change.
    Memory {
        /// At which step.
        step: u64,
        /// The figures.
        snapshot: MemorySnapshot,
    },
    /// Recorded steps and their spans, sent with each log while recording.
    Trace {
        /// Rows per batch of the run.
        batch: usize,
        /// The loader's workers during these steps.
        workers: usize,
        /// The steps.
        chunk: TraceChunk,
    },
    /// The decision boundary.
    Boundary {
        /// At which step.
        step: u64,
        /// The grid.
        grid: BoundaryGrid,
    },
    /// The model's values binned by power of two, sent with each evaluation.
    Values(Box<ValueHistograms>),
    /// Training stopped because of an error: what went wrong.
    Error(Said),
    /// The worker is running (`true`) or paused.
    Running(bool),
    /// The run's stop condition was reached, and training stopped.
    Reached(Reached),
    /// What saving or loading the weights came to: where they went, or why not.
    Note(Said),
}

/// A stop condition reached: where, and how long it took.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reached {
    /// The condition.
    pub stop: StopAt,
    /// At which step.
    pub step: u64,
    /// The device's own wall time from its first step, end to end (loading, copies and the
    /// evaluations that checked the target included; waits for the other device's turn not).
    pub seconds: f64,
    /// The test accuracy or R² that reached the target.
    pub metric: Option<f32>,
}

/// Builds the backend on the worker thread: a GPU device belongs to the thread that made it.
pub type BackendFactory = Box<dyn FnOnce() -> Result<Box<dyn Backend>, crate::i18n::Said> + Send>;

/// How often a running worker reports: often enough for smooth curves, rarely enough that the
/// sync each report costs stays small beside the training.
const LOG_INTERVAL: Duration = Duration::from_millis(100);
/// How often the whole-set accuracy and the boundary are recomputed.
const EVAL_INTERVAL: Duration = Duration::from_millis(500);
/// How long a running worker waits for its turn before it looks at its commands again.
const TURN_PATIENCE: Duration = Duration::from_millis(20);
/// How long a single step waits for its turn: the other device's turn ends at its next report.
const STEP_PATIENCE: Duration = Duration::from_secs(10);

/// What a worker keeps between two slices of its loop (see [`State::resume`]).
pub(super) struct Saved {
    runner: Option<Runner>,
    generation: u64,
    running: bool,
    last_log: Instant,
    last_eval: Instant,
    own_time: Duration,
    checked_epoch: u64,
    pending: Option<Awaiting>,
}

impl Default for Saved {
    fn default() -> Self {
        Self {
            runner: None,
            generation: 0,
            running: false,
            last_log: Instant::now(),
            last_eval: Instant::now(),
            own_time: Duration::ZERO,
            checked_epoch: 0,
            pending: None,
        }
    }
}

pub(super) struct State<'a> {
    device: Device,
    backend: &'a mut dyn Backend,
    /// Whether it may wait for its turn (a thread of its own may; a loop sharing the page's
    /// thread may not, and tries again at its next slice).
    patient: bool,
    runner: Option<Runner>,
    /// The run the runner trains, from the last `Configure`.
    generation: u64,
    running: bool,
    last_log: Instant,
    last_eval: Instant,
    turns: &'a Turns,
    /// This run's own training time so far (see [`Reached::seconds`]).
    own_time: Duration,
    /// The epoch whose end was last checked against the stop condition.
    checked_epoch: u64,
    /// What a loop that may not wait for its device waits for: a read or an evaluation
    /// started and not yet answered (see [`State::step_then_read`]).
    pending: Option<Awaiting>,
    ctx: &'a JobContext<Event>,
}

impl<'a> State<'a> {
    /// The loop's state from what was `saved`, on `backend`.
    pub(super) fn resume(
        (device, backend): (Device, &'a mut dyn Backend),
        turns: &'a Turns,
        ctx: &'a JobContext<Event>,
        patient: bool,
        saved: Saved,
    ) -> Self {
        Self {
            device,
            backend,
            patient,
            runner: saved.runner,
            generation: saved.generation,
            running: saved.running,
            last_log: saved.last_log,
            last_eval: saved.last_eval,
            turns,
            own_time: saved.own_time,
            checked_epoch: saved.checked_epoch,
            pending: saved.pending,
            ctx,
        }
    }

    /// What the loop keeps until its next slice.
    pub(super) fn suspend(self) -> Saved {
        Saved {
            runner: self.runner,
            generation: self.generation,
            running: self.running,
            last_log: self.last_log,
            last_eval: self.last_eval,
            own_time: self.own_time,
            checked_epoch: self.checked_epoch,
            pending: self.pending,
        }
    }

    /// Whether a read of the loss is on its way (the loop looks again at its next slice).
    pub(super) fn reading(&self) -> bool {
        self.pending.is_some()
    }

    /// Whether this loop may wait for its device: a thread of its own may, and the CPU's
    /// values are there at once; a GPU's loop sharing a page's thread may not (its reads are
    /// started, then looked at in later slices).
    fn may_wait(&self) -> bool {
        self.patient || self.device == Device::Cpu
    }

    /// Leaves `time` that was not the device's (the page drawing between two slices) out of
    /// the interval being measured.
    pub(super) fn exclude(&mut self, time: Duration) {
        if let Some(runner) = self.runner.as_mut() {
            runner.exclude(time);
        }
    }

    /// Counts `time` between two slices as the run's own (a page's GPU works meanwhile).
    pub(super) fn count_own(&mut self, time: Duration) {
        if self.running || self.pending.is_some() {
            self.own_time += time;
        }
    }

    /// Whether it trains on without a command.
    pub(super) fn running(&self) -> bool {
        self.running
    }

    /// Says the backend is up (and what its kernel choice had to say).
    pub(super) fn announce(&self) {
        let adapter = self.backend.adapter_summary();
        self.send(EventKind::Ready {
            name: self.backend.name(),
            adapter,
            cpu_threads: self.backend.threads(),
        });
        let notes = self.backend.tuning_notes();
        if !notes.is_empty() {
            self.send(EventKind::TuningNotes(notes));
        }
    }

    fn send(&self, kind: EventKind) {
        self.ctx.send(Event {
            device: self.device,
            generation: self.generation,
            kind,
        });
    }

    fn set_running(&mut self, running: bool) {
        self.running = running && self.runner.is_some();
        if !self.running {
            self.turns.leave(self.device);
        }
        self.send(EventKind::Running(self.running));
    }

    fn fail(&mut self, message: Said) {
        self.send(EventKind::Error(message));
        self.send_memory();
        self.set_running(false);
    }

    /// Writes the model's weights to `path` as safetensors and says where (or why not).
    fn save_weights(&mut self, path: &std::path::Path, spec: &crate::nn::ModelSpec) {
        use crate::i18n::LayerKey;
        let Some(runner) = self.runner.as_ref() else {
            return self.send(EventKind::Note(Said::new(LayerKey::NoModelToSave, &[])));
        };
        let written = runner
            .model()
            .read_parameters(&mut *self.backend)
            .map_err(|e| e.said())
            .and_then(|params| {
                let tensors = crate::nn::torch_tensors(spec, &params);
                let bytes = crate::nn::to_safetensors(&tensors).map_err(Said::verbatim)?;
                crate::files::write_atomic(path, &bytes)
            });
        let shown = path.display().to_string();
        self.send(EventKind::Note(match written {
            Ok(()) => Said::new(LayerKey::WeightsSaved, &[("path", &shown)]),
            Err(why) => Said::with(
                LayerKey::WeightsNotSaved,
                &[("path", Arg::Plain(&shown)), ("why", Arg::Said(&why))],
            ),
        }));
    }

    /// Overwrites the model's weights with `values` (read from `path`) and says so.
    fn load_weights(&mut self, values: &crate::nn::LayerValues, path: &std::path::Path) {
        use crate::i18n::LayerKey;
        let Some(runner) = self.runner.as_mut() else {
            return self.send(EventKind::Note(Said::new(LayerKey::NoModelToSave, &[])));
        };
        let shown = path.display().to_string();
        match runner.write_parameters(&mut *self.backend, values) {
            Ok(()) => {
                let device = self.device.to_string();
                self.send(EventKind::Note(Said::new(
                    LayerKey::WeightsLoaded,
                    &[("path", &shown), ("device", &device)],
                )));
                // The views show the loaded model at once.
                self.report(true);
            }
            Err(e) => self.fail(e.said()),
        }
    }

    fn configure(&mut self, session: &Session, generation: u64) {
        // A new run starts paused; the window knows it, so there is nothing to report.
        self.generation = generation;
        self.running = false;
        self.turns.leave(self.device);
        self.runner = None;
        self.pending = None;
        self.own_time = Duration::ZERO;
        self.checked_epoch = 0;
        // The old model's working copies go before the peaks start over.
        if let Err(e) = self.backend.clear_caches() {
            self.fail(e.said());
            return;
        }
        self.backend.reset_peak_memory();
        match Runner::new(&mut *self.backend, session) {
            Ok(runner) => {
                self.runner = Some(runner);
                self.report(true);
            }
            Err(e) => self.fail(e.said()),
        }
        self.send_memory();
    }

    /// Reports an interval, and the memory with it; the next interval's report is due from
    /// now.
    fn send_log(&mut self, log: StepLog) {
        self.last_log = Instant::now();
        self.send(EventKind::Log(Box::new(log)));
        self.send_memory();
    }

    fn send_memory(&self) {
        self.send(EventKind::Memory {
            step: self.runner.as_ref().map_or(0, Runner::steps),
            snapshot: self.backend.memory(),
        });
    }

    /// Trains one step, and reports when an interval has passed (or `force`).
    fn train_step(&mut self, force: bool) {
        let Some(runner) = self.runner.as_mut() else {
            return;
        };
        // Taking turns, a device trains only in its turn, which lasts until its next report;
        // the time it waited for the turn is not its own, so its clock starts over.
        let patience = if !self.patient {
            Duration::ZERO
        } else if self.running && !force {
            TURN_PATIENCE
        } else {
            STEP_PATIENCE
        };
        match self.turns.take(self.device, patience) {
            Take::NotYet => return,
            Take::Held { waited: true } => {
                runner.restart_clock();
                // A loop sharing a page's thread comes back to its turn with its last report
                // long past: without this its turn would end after one step (and the GPU's
                // samples/s would measure little but the read's round trip).
                if !self.patient {
                    self.last_log = Instant::now();
                }
            }
            Take::Held { waited: false } | Take::Free => {}
        }
        let begun = Instant::now();
        self.step_and_report(force);
        self.own_time += begun.elapsed();
        self.check_stop();
    }

    /// Trains one step and reports it when due, in the device's turn.
    fn step_and_report(&mut self, force: bool) {
        if !self.may_wait() {
            return self.step_then_read(force);
        }
        let Some(runner) = self.runner.as_mut() else {
            return;
        };
        let due = force || self.last_log.elapsed() >= LOG_INTERVAL;
        // A report needs the loss, so it comes at a sync: the step syncs for it when the sync
        // policy leaves that to the display, and otherwise the report waits for the policy's
        // next sync (unless forced, by a single step or a pause).
        let backend = &mut *self.backend;
        let result = runner.step(backend, due).and_then(|synced| {
            if !due || !(synced || force) {
                return Ok(None);
            }
            if !synced {
                runner.sync(backend)?;
            }
            let log = runner.log(backend)?;
            let trace = backend.recorder().enabled().then(|| EventKind::Trace {
                batch: runner.batch(),
                workers: runner.pipeline().loader.workers,
                chunk: trimmed(runner.take_trace(backend)),
            });
            Ok(Some((log, trace)))
        });
        match result {
            Ok(Some((log, trace))) => {
                self.send_log(log);
                if let Some(trace) = trace {
                    self.send(trace);
                }
                self.report(force);
                self.turns.pass(self.device);
            }
            Ok(None) => {}
            Err(e) => self.fail(e.said()),
        }
    }

    /// Stops the run once its stop condition holds: after N epochs, or once the test metric,
    /// checked at the end of each epoch, reaches the target. The check's evaluation counts as
    /// the device's own time: the target is measured end to end.
    fn check_stop(&mut self) {
        // Checking reads back as it goes: not where the loop may not wait (see step_then_read).
        if !self.may_wait() {
            return;
        }
        let Some(runner) = self.runner.as_mut() else {
            return;
        };
        let stop = runner.pipeline().stop;
        let epoch = runner.epoch();
        if stop == StopAt::Never || epoch == self.checked_epoch {
            return;
        }
        self.checked_epoch = epoch;
        let begun = Instant::now();
        let backend = &mut *self.backend;
        let outcome = match stop {
            StopAt::Never => return,
            StopAt::Epochs(n) => {
                if epoch < u64::from(n) {
                    return;
                }
                // The last epoch's work has ended once its loss is read back.
                runner.sync(backend).map(|()| (true, None))
            }
            StopAt::TestMetric(goal) => runner.evaluate(backend).map(|eval| {
                let metric = eval.test.accuracy.or(eval.test.r2);
                (metric.is_some_and(|m| m >= goal), metric)
            }),
        };
        self.own_time += begun.elapsed();
        runner.exclude(begun.elapsed());
        match outcome {
            Ok((true, metric)) => self.reach(metric, false),
            Ok((false, _)) => {}
            Err(e) => self.fail(e.said()),
        }
    }

    /// The run's stop condition holds (with `metric`, the test figure that met a target):
    /// the last interval, the whole-set figures at the stop, then the news, and a pause.
    /// `evaluated`: the whole-set figures at the stop were just sent.
    fn reach(&mut self, metric: Option<f32>, evaluated: bool) {
        let Some(runner) = self.runner.as_mut() else {
            return;
        };
        let reached = Reached {
            stop: runner.pipeline().stop,
            step: runner.steps(),
            seconds: self.own_time.as_secs_f64(),
            metric,
        };
        if runner.window_steps() > 0 {
            match runner.log(&mut *self.backend) {
                Ok(log) => {
                    self.send_log(log);
                }
                Err(e) => return self.fail(e.said()),
            }
        }
        if !evaluated {
            self.report(true);
        }
        self.send(EventKind::Reached(reached));
        self.set_running(false);
    }

    /// Whole-set accuracy and the boundary, when due; not counted as training time.
    fn report(&mut self, force: bool) {
        if !force && self.last_eval.elapsed() < EVAL_INTERVAL {
            return;
        }
        // Where the loop may not wait, the evaluation's reads are started and taken in later.
        if !self.may_wait() {
            return self.start_evaluation(false);
        }
        let Some(runner) = self.runner.as_mut() else {
            return;
        };
        let backend = &mut *self.backend;
        let result = runner.evaluate(backend).and_then(|eval| {
            let grid = runner.boundary(backend, BOUNDARY_RESOLUTION)?;
            let values = runner.value_histograms(backend)?;
            Ok((eval, grid, values))
        });
        runner.restart_clock();
        self.last_eval = Instant::now();
        match result {
            Ok((eval, grid, values)) => {
                let step = eval.step;
                self.send(EventKind::Eval(eval));
                self.send(EventKind::Values(Box::new(values)));
                if let Some(grid) = grid {
                    self.send(EventKind::Boundary { step, grid });
                }
            }
            Err(e) => self.fail(e.said()),
        }
    }
}

/// The part of a chunk the UI keeps (a fast CPU makes thousands of steps between two reports):
/// trimmed here, on the worker's thread, rather than sent and dropped by the UI's.
fn trimmed(chunk: TraceChunk) -> TraceChunk {
    let mut history = TraceHistory::default();
    history.extend(chunk);
    TraceChunk {
        steps: history.steps.into(),
        spans: history.spans,
    }
}

pub(super) fn run(
    device: Device,
    factory: BackendFactory,
    turns: &Turns,
    inbox: Receiver<Command>,
    ctx: &JobContext<Event>,
) {
    let backend = match factory() {
        Ok(backend) => backend,
        Err(reason) => {
            ctx.send(Event {
                device,
                generation: 0,
                kind: EventKind::Unavailable(reason),
            });
            // Stay alive until told to stop, so the UI's handle behaves the same either way.
            while !matches!(inbox.recv(), Ok(Command::Shutdown) | Err(_)) {}
            return;
        }
    };
    let mut backend = backend;
    let mut inbox = inbox;
    // The whole loop runs inside the backend's context (the CPU's own thread pool).
    backend.enter(&mut |backend| command_loop(device, backend, turns, &mut inbox, ctx));
    turns.leave(device);
}

/// Trains on commands until told to stop.
fn command_loop(
    device: Device,
    backend: &mut dyn Backend,
    turns: &Turns,
    inbox: &mut Receiver<Command>,
    ctx: &JobContext<Event>,
) {
    let mut state = State::resume((device, backend), turns, ctx, true, Saved::default());
    state.announce();
    loop {
        let command = if state.running {
            match inbox.try_recv() {
                Ok(c) => Some(c),
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Disconnected) => return,
            }
        } else {
            match inbox.recv() {
                Ok(c) => Some(c),
                Err(_) => return,
            }
        };
        if !obey(&mut state, command) {
            return;
        }
    }
}

/// Does what `command` says, or trains a step when there is none; `false` once told to stop.
pub(super) fn obey(state: &mut State<'_>, command: Option<Command>) -> bool {
    let device = state.device;
    match command {
        Some(Command::Shutdown) => return false,
        Some(Command::Configure(session, generation)) => state.configure(&session, generation),
        Some(Command::Pipeline(pipeline)) => {
            if let Some(runner) = state.runner.as_mut()
                && let Err(e) = runner.set_pipeline(&mut *state.backend, pipeline)
            {
                state.fail(e.said());
            }
            state.send_memory();
        }
        Some(Command::SaveWeights(path, spec)) => state.save_weights(&path, &spec),
        Some(Command::LoadWeights(values, path)) => state.load_weights(&values, &path),
        Some(Command::ReleaseCached) => {
            if let Err(e) = state.backend.release_cached() {
                state.fail(e.said());
            }
            state.send_memory();
        }
        Some(Command::Run) => {
            if let Some(r) = state.runner.as_mut() {
                r.restart_clock();
            }
            state.last_log = Instant::now();
            state.set_running(true);
        }
        Some(Command::Pause) => {
            // Report the interval that was running, then stop. (A device waiting for its
            // turn reported its last one when its turn ended.)
            if state.running && !state.turns.waits(device) {
                state.train_step(true);
            }
            state.set_running(false);
        }
        Some(Command::Step) => {
            state.set_running(false);
            if let Some(r) = state.runner.as_mut() {
                r.restart_clock();
            }
            state.train_step(true);
        }
        None => state.train_step(false),
    }
    true
}
