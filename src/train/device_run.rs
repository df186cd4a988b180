//! What the window knows of one device's run, folded from its worker's [`Event`]s: whether the
//! device is up, whether it trains, its latest measurements, its curves, its recorded steps, its
//! memory and its values. The app keeps one per device in its state; the panels read it.
//!
//! Every run has a generation. A reset starts a new one and forgets the old run's history; the
//! events of older runs still on their way are dropped, so no figure of the old run reaches the
//! new one and no curve joins an old point to a new one.

use super::report::{BoundaryGrid, EvalReport, StepLog, ValueHistograms};
use super::turns::Sharing;
use super::worker::{Event, EventKind, Reached};
use crate::backend::{AdapterSummary, TuningNote};
use crate::device::Device;
use crate::i18n::Said;
use crate::memory::MemorySnapshot;
use crate::precision::{Precision, RoundingCensus};
use crate::trace::TraceHistory;
use crate::trace::advice::Context;

/// Memory reports kept for the allocated-and-reserved plot.
const MEMORY_POINTS: usize = 2000;

/// Most points a curve keeps; older ones are thinned out by halving.
const MAX_CURVE_POINTS: usize = 2000;

/// Where a device stands.
#[derive(Clone, Debug, PartialEq)]
pub enum DeviceStatus {
    /// The worker is opening the device.
    Starting,
    /// The device is up.
    Ready {
        /// Backend name.
        name: String,
        /// The adapter, on the GPU.
        adapter: Option<AdapterSummary>,
        /// Kernel threads, on the CPU.
        cpu_threads: Option<usize>,
    },
    /// The device cannot train, and why.
    Unavailable(Said),
}

/// Whether a device's run is going.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RunState {
    /// Not training.
    #[default]
    Paused,
    /// Training.
    Running,
    /// Asked to pause; the worker has not stopped yet (a GPU step may still be running).
    Pausing,
}

/// A curve of `(step, value)` points that thins itself out as it grows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Curve {
    points: Vec<[f64; 2]>,
}

impl Curve {
    /// Adds a point (values that are not finite are left out).
    pub fn push(&mut self, step: u64, value: f32) {
        if !value.is_finite() {
            return;
        }
        self.points.push([step as f64, f64::from(value)]);
        if self.points.len() > MAX_CURVE_POINTS {
            self.points = self.points.iter().step_by(2).copied().collect();
        }
    }

    /// The points, oldest first.
    pub fn points(&self) -> &[[f64; 2]] {
        &self.points
    }
}

/// One device's run as the window shows it.
#[derive(Clone, Debug)]
pub struct DeviceRun {
    /// Which device.
    pub device: Device,
    /// Whether the device is up, as its worker reported.
    pub status: DeviceStatus,
    /// Whether the run in progress uses this device (the setup can turn it off).
    pub enabled: bool,
    /// Whether it trains.
    pub run_state: RunState,
    /// The run shown: events of other generations are dropped.
    pub generation: u64,
    /// The number format of the run.
    pub precision: Precision,
    /// The last interval's measurements.
    pub last_log: Option<StepLog>,
    /// GPU kernel time of the latest step whose kernels were timed, in ms; kept until a newer
    /// timed step replaces it.
    pub kernel_time_ms: Option<f64>,
    /// Each op of the latest step whose ops were timed, kept until a newer one is.
    pub kernels: Option<crate::backend::KernelTimes>,
    /// The last whole-set evaluation.
    pub last_eval: Option<EvalReport>,
    /// Training loss per logged interval.
    pub batch_loss: Curve,
    /// Whole training-set loss.
    pub train_loss: Curve,
    /// Test-set loss.
    pub test_loss: Curve,
    /// Whole training-set accuracy (classification) or R² (regression).
    pub train_metric: Curve,
    /// Test-set accuracy or R².
    pub test_metric: Curve,
    /// The last decision boundary.
    pub boundary: Option<BoundaryGrid>,
    /// Counts the boundaries received, so a view can tell a new one from the one it drew.
    pub boundary_version: u64,
    /// The error that stopped training, until the device trains again.
    pub error: Option<Said>,
    /// The last recorded steps and their spans.
    pub trace: TraceHistory,
    /// What the advice rules need to know of the recorded run.
    pub trace_context: Option<Context>,
    /// The memory accounting, as last reported.
    pub memory: Option<MemorySnapshot>,
    /// What went wrong with the GPU's kept kernel choice as it opened (the device's, like its
    /// status: kept from run to run).
    pub tuning_notes: Vec<TuningNote>,
    /// `memory` still describes the previous run's model: this run's has not been built on
    /// the device yet (the old tensors are still held there until it is).
    pub memory_stale: bool,
    /// `[step, allocated, reserved]` at each report (bytes), oldest first.
    pub memory_history: Vec<[f64; 3]>,
    /// The model's values at the last evaluation.
    pub values: Option<ValueHistograms>,
    /// The loss scale at each report (mixed precision).
    pub loss_scale: Curve,
    /// `[step, scale]` of the reports in which updates were skipped.
    pub skip_marks: Vec<[f64; 2]>,
    /// Skipped updates counted so far.
    pub skipped_seen: u64,
    /// What storing values in 16 bits lost since the run began.
    pub rounding: RoundingCensus,
    /// The stop condition reached, if it was.
    pub reached: Option<Reached>,
    /// How it shares the machine with the other device's run; `None` when it trains alone.
    pub sharing: Option<Sharing>,
    /// Training time measured over the whole run, in seconds, and the samples trained in it:
    /// the run's mean speed (the time of evaluations and of waits for a turn is not in it).
    pub timed: [f64; 2],
}

impl DeviceRun {
    /// A device that is starting, with no run yet.
    pub fn new(device: Device) -> Self {
        Self {
            device,
            status: DeviceStatus::Starting,
            enabled: true,
            run_state: RunState::Paused,
            generation: 0,
            precision: Precision::Fp32,
            last_log: None,
            kernel_time_ms: None,
            kernels: None,
            last_eval: None,
            batch_loss: Curve::default(),
            train_loss: Curve::default(),
            test_loss: Curve::default(),
            train_metric: Curve::default(),
            test_metric: Curve::default(),
            boundary: None,
            boundary_version: 0,
            error: None,
            trace: TraceHistory::default(),
            trace_context: None,
            memory: None,
            tuning_notes: Vec::new(),
            memory_stale: false,
            memory_history: Vec::new(),
            values: None,
            loss_scale: Curve::default(),
            skip_marks: Vec::new(),
            skipped_seen: 0,
            rounding: RoundingCensus::default(),
            reached: None,
            sharing: None,
            timed: [0.0; 2],
        }
    }

    /// Mean samples per second over the run's measured training time.
    pub fn mean_samples_per_s(&self) -> Option<f64> {
        let [seconds, samples] = self.timed;
        (seconds > 0.0).then(|| samples / seconds)
    }

    /// Steps trained so far in this run, as last reported.
    pub fn steps(&self) -> u64 {
        self.last_log
            .as_ref()
            .map_or(0, |l| l.step)
            .max(self.last_eval.as_ref().map_or(0, |e| e.step))
    }

    /// Whether the run is going (or has not stopped yet).
    pub fn is_running(&self) -> bool {
        self.enabled && self.run_state != RunState::Paused
    }

    /// Whether the device can train (it is up and used by the run).
    pub fn can_train(&self) -> bool {
        self.enabled && matches!(self.status, DeviceStatus::Ready { .. })
    }

    /// The adapter, on a GPU that is up.
    pub fn adapter(&self) -> Option<&AdapterSummary> {
        match &self.status {
            DeviceStatus::Ready { adapter, .. } => adapter.as_ref(),
            _ => None,
        }
    }

    /// Starts run `generation` in `precision`: everything the old run reported is forgotten
    /// (the device's status and memory are the device's, and stay).
    pub fn start_run(&mut self, generation: u64, precision: Precision, enabled: bool) {
        *self = Self {
            status: std::mem::replace(&mut self.status, DeviceStatus::Starting),
            enabled,
            generation,
            precision,
            memory: self.memory,
            memory_stale: self.memory.is_some(),
            tuning_notes: std::mem::take(&mut self.tuning_notes),
            sharing: self.sharing,
            // A new number, so a view redraws rather than reusing the old run's picture.
            boundary_version: self.boundary_version + 1,
            ..Self::new(self.device)
        };
    }

    /// Takes in one event of this device's worker. Events of another run are dropped.
    pub fn apply(&mut self, event: Event) {
        let Event {
            generation, kind, ..
        } = event;
        match kind {
            EventKind::Ready {
                name,
                adapter,
                cpu_threads,
            } => {
                self.status = DeviceStatus::Ready {
                    name,
                    adapter,
                    cpu_threads,
                };
            }
            EventKind::Unavailable(reason) => self.status = DeviceStatus::Unavailable(reason),
            EventKind::TuningNotes(notes) => self.tuning_notes = notes,
            _ if generation != self.generation => {}
            kind => self.apply_run_event(kind),
        }
    }

    fn apply_run_event(&mut self, kind: EventKind) {
        match kind {
            // Notes go to the window's status bar.
            EventKind::Ready { .. }
            | EventKind::Unavailable(_)
            | EventKind::TuningNotes(_)
            | EventKind::Note(_) => {}
            EventKind::Log(log) => {
                // It trains again: whatever stopped it before is no longer the news.
                self.error = None;
                self.batch_loss.push(log.step, log.loss);
                if let Some(scale) = log.loss_scale {
                    let skipped = log.skipped_steps.unwrap_or(0);
                    if skipped > self.skipped_seen {
                        self.skip_marks.push([log.step as f64, f64::from(scale)]);
                        self.skipped_seen = skipped;
                    }
                    self.loss_scale.push(log.step, scale);
                }
                if let Some(census) = &log.rounding {
                    self.rounding.add(census);
                }
                if log.kernel_time_ms.is_some() {
                    self.kernel_time_ms = log.kernel_time_ms;
                }
                if log.kernels.is_some() {
                    self.kernels.clone_from(&log.kernels);
                }
                let steps = log
                    .step
                    .saturating_sub(self.last_log.as_ref().map_or(0, |l| l.step));
                let seconds = steps as f64 * log.step_time_ms / 1e3;
                self.timed[0] += seconds;
                self.timed[1] += log.samples_per_s * seconds;
                self.last_log = Some(*log);
            }
            EventKind::Eval(eval) => {
                self.train_loss.push(eval.step, eval.train.loss);
                self.test_loss.push(eval.step, eval.test.loss);
                if let Some(v) = eval.train.accuracy.or(eval.train.r2) {
                    self.train_metric.push(eval.step, v);
                }
                if let Some(v) = eval.test.accuracy.or(eval.test.r2) {
                    self.test_metric.push(eval.step, v);
                }
                self.last_eval = Some(eval);
            }
            EventKind::Boundary { grid, .. } => {
                self.boundary = Some(grid);
                self.boundary_version += 1;
            }
            EventKind::Error(message) => {
                self.error = Some(message);
                self.run_state = RunState::Paused;
            }
            EventKind::Values(values) => self.values = Some(*values),
            EventKind::Reached(reached) => self.reached = Some(reached),
            EventKind::Running(running) => {
                self.run_state = match (running, self.run_state) {
                    // A pause was asked for: a late "running" does not undo it.
                    (true, RunState::Pausing) => RunState::Pausing,
                    (true, _) => {
                        self.error = None;
                        RunState::Running
                    }
                    (false, _) => RunState::Paused,
                };
            }
            EventKind::Memory { step, snapshot } => {
                self.memory_history.push([
                    step as f64,
                    snapshot.allocated_bytes as f64,
                    snapshot.reserved_bytes as f64,
                ]);
                if self.memory_history.len() > MEMORY_POINTS {
                    self.memory_history.remove(0);
                }
                self.memory = Some(snapshot);
                self.memory_stale = false;
            }
            EventKind::Trace {
                batch,
                workers,
                chunk,
            } => {
                self.trace.extend(chunk);
                self.trace_context = Some(Context {
                    gpu: self.device == Device::Gpu,
                    batch,
                    workers,
                });
            }
        }
    }
}
