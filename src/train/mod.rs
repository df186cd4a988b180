//! Training: a [`Runner`] drives one model on one backend through the data, and a worker thread
//! per device runs a runner on commands from the UI and reports what happened as events.

pub mod compare;
pub mod worker;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::backend::{Activation, Backend, BackendError, KernelTimes, Tensor, UploadMode};
use crate::data::dataloader::{Augment, BatchLoader, LoaderConfig};
use crate::data::formats::no_progress;
use crate::data::source::DataSource;
use crate::data::{Dataset, DatasetSpec, Table, Task};
use crate::device::Device;
use crate::memory::Role;
use crate::nn::{Loss, Mlp, ModelSpec, OptimizerKind, Stats};
use crate::precision::DType;
use crate::precision::{Half, Log2Histogram, Precision, RangeReport, RoundingCensus};
use crate::trace::{Breakdown, Category, Lane, Span, StepTrace, TraceChunk};

/// When the training thread reads the loss back to the host: on the GPU a sync point, where
/// the host waits for every kernel submitted so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncPolicy {
    /// When the display needs a new point (about ten times a second).
    #[default]
    WhenShown,
    /// After every step, as `loss.item()` in every iteration of a PyTorch loop does.
    EveryStep,
    /// After every N steps.
    EverySteps(u32),
}

impl SyncPolicy {
    /// Whether step number `step` (1-based) ends in a sync; `display_due` says whether the
    /// display wants a new point.
    pub fn syncs(self, step: u64, display_due: bool) -> bool {
        match self {
            SyncPolicy::WhenShown => display_due,
            SyncPolicy::EveryStep => true,
            SyncPolicy::EverySteps(n) => step.is_multiple_of(u64::from(n.max(1))),
        }
    }

    /// Parses `auto`, `1` or a step count.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "auto" | "shown" => Some(SyncPolicy::WhenShown),
            _ => match text.parse::<u32>().ok()? {
                0 => None,
                1 => Some(SyncPolicy::EveryStep),
                n => Some(SyncPolicy::EverySteps(n)),
            },
        }
    }
}

/// Settings that change how fast training runs and what is recorded, never what it computes:
/// they apply while a model trains, without starting over.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Pipeline {
    /// The data loader's threads, queue and storage.
    pub loader: LoaderConfig,
    /// When the loss is read back.
    pub sync: SyncPolicy,
    /// How batches travel to the GPU.
    pub upload: UploadMode,
    /// Record spans for the timeline and the step breakdown.
    pub record: bool,
    /// Keep every step's layer outputs, as keeping each step's loss with its graph does in
    /// PyTorch: memory grows step after step until it runs out. Turning it off frees them.
    pub keep_graphs: bool,
    /// Memory budget of the GPU in bytes (`None`: only the adapter's own limits).
    pub vram_budget: Option<u64>,
    /// Memory budget of the CPU's tensors in bytes (`None`: only the system's).
    pub host_budget: Option<u64>,
    /// While recording, time the GPU's kernels in one stretch between two syncs of this many
    /// (1: always; 0: always on a hardware GPU, one in [`SOFTWARE_KERNEL_SAMPLING`] on a
    /// software adapter).
    pub kernel_timing_every: u32,
}

/// The budget that applies while `keep_graphs` is on and none is set: the leak then stops with
/// an out-of-memory error before it takes the machine's memory.
pub const LEAK_SAFETY_BUDGET: u64 = 1 << 30;

/// Smallest memory budget accepted: below it even a tiny model cannot start.
pub const MIN_BUDGET: u64 = 64 << 10;

/// Sync windows per kernel-timed window on a software adapter when the choice is automatic.
/// On lavapipe each timestamp costs about 12 µs (measured: timing the 20 passes of an Iris step
/// added 0.5 ms to a 1.5 ms step), a third of a small model's step if every pass of every step
/// were timed; one window in 16 keeps recording within a few percent (measured −0.3% to +1.5%).
pub const SOFTWARE_KERNEL_SAMPLING: u32 = 16;

impl Default for Pipeline {
    fn default() -> Self {
        Self {
            loader: LoaderConfig::default(),
            sync: SyncPolicy::default(),
            upload: UploadMode::default(),
            record: true,
            keep_graphs: false,
            vram_budget: None,
            host_budget: None,
            kernel_timing_every: 0,
        }
    }
}

impl Pipeline {
    /// The memory budget of `device`: the one set, or [`LEAK_SAFETY_BUDGET`] while the leak
    /// setting is on.
    pub fn budget(&self, device: Device) -> Option<u64> {
        let set = match device {
            Device::Gpu => self.vram_budget,
            Device::Cpu => self.host_budget,
        };
        set.or(self.keep_graphs.then_some(LEAK_SAFETY_BUDGET))
    }

    /// Checks the ranges; the message names the setting and its limit.
    pub fn validate(&self) -> Result<(), String> {
        self.loader.validate()?;
        if let Some(b) = [self.vram_budget, self.host_budget]
            .into_iter()
            .flatten()
            .find(|&b| b < MIN_BUDGET)
        {
            return Err(format!(
                "memory budget of {b} bytes: choose at least {MIN_BUDGET} (64 KiB)"
            ));
        }
        if self.kernel_timing_every > 1000 {
            return Err(format!(
                "time kernels every {} steps: choose at most 1000",
                self.kernel_timing_every
            ));
        }
        if let SyncPolicy::EverySteps(n) = self.sync
            && !(1..=10_000).contains(&n)
        {
            return Err(format!(
                "read the loss every {n} steps: choose between 1 and 10000"
            ));
        }
        Ok(())
    }
}

/// Everything a training run is made of; the same config on both devices gives the same run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    /// The generator's settings (used when `source` is `Generated`); its test share, seed and
    /// standardisation apply to every source.
    pub data: DatasetSpec,
    /// Where the data comes from: a generator, a shipped real set, or the user's own file.
    #[serde(default)]
    pub source: DataSource,
    /// Hidden-layer widths; the input and output widths come from the data set.
    pub hidden: Vec<usize>,
    /// Hidden activation.
    pub activation: Activation,
    /// Update rule.
    pub optimizer: OptimizerKind,
    /// Learning rate.
    pub lr: f32,
    /// Rows per batch.
    pub batch: usize,
    /// Seed of the initial weights and of the batch order.
    pub seed: u64,
    /// Random changes to the training samples.
    #[serde(default)]
    pub augment: Augment,
    /// The number format of training (16-bit formats stored in 2 bytes, computed in f32).
    #[serde(default)]
    pub precision: Precision,
    /// The loss is multiplied by this before backward, and so is every gradient: 1 normally;
    /// 1e-6 makes the designed case of tiny gradients that FP16 loses to zero. Adam's steps do
    /// not depend on the gradients' size, so in FP32 it trains as before. The loss shown is the
    /// loss before the weight.
    #[serde(default = "one")]
    pub loss_weight: f32,
    /// How the data loader, the transfers and the syncs run (changeable while training).
    #[serde(default)]
    pub pipeline: Pipeline,
}

impl Default for TrainConfig {
    fn default() -> Self {
        Self {
            data: DatasetSpec::default(),
            source: DataSource::Generated,
            hidden: vec![16, 16],
            activation: Activation::Relu,
            optimizer: OptimizerKind::Adam,
            lr: 0.01,
            batch: 32,
            seed: 1,
            augment: Augment::default(),
            precision: Precision::Fp32,
            loss_weight: 1.0,
            pipeline: Pipeline::default(),
        }
    }
}

fn one() -> f32 {
    1.0
}

/// The smallest loss weight: below it even FP32 loses the gradients (f32's smallest normal is
/// 1.2e-38).
pub const MIN_LOSS_WEIGHT: f32 = 1e-12;

/// Largest batch and widths the app accepts, so one typo cannot ask for gigabytes.
pub const MAX_BATCH: usize = 65_536;
/// Widest layer the app accepts.
pub const MAX_WIDTH: usize = 8192;

impl TrainConfig {
    /// The model these settings describe for `data`.
    pub fn model_spec(&self, data: &Dataset) -> ModelSpec {
        let mut layers = vec![data.features];
        layers.extend(&self.hidden);
        layers.push(data.outputs());
        ModelSpec {
            layers,
            activation: self.activation,
            loss: Loss::for_task(data.task),
        }
    }

    /// Checks the settings against the data set; the message names the setting and its limit.
    pub fn validate(&self, data: &Dataset) -> Result<(), String> {
        if !(self.lr.is_finite() && self.lr > 0.0 && self.lr <= 10.0) {
            return Err(format!(
                "learning rate {}: choose a value above 0 and at most 10",
                self.lr
            ));
        }
        if !(self.loss_weight.is_finite() && (MIN_LOSS_WEIGHT..=1.0).contains(&self.loss_weight)) {
            return Err(format!(
                "loss weight {}: choose a value from {MIN_LOSS_WEIGHT:e} to 1",
                self.loss_weight
            ));
        }
        if self.batch == 0 || self.batch > MAX_BATCH {
            return Err(format!(
                "batch size {}: choose between 1 and {MAX_BATCH}",
                self.batch
            ));
        }
        if self.batch > data.train_rows() {
            return Err(format!(
                "batch size {} is larger than the {} training rows of {}: choose at most {}",
                self.batch,
                data.train_rows(),
                data.name,
                data.train_rows()
            ));
        }
        if let Some(w) = self.hidden.iter().find(|&&w| w == 0 || w > MAX_WIDTH) {
            return Err(format!("layer width {w}: choose between 1 and {MAX_WIDTH}"));
        }
        self.augment.validate()?;
        self.pipeline.validate()?;
        self.pipeline
            .loader
            .check_queues(((data.features + 1) * self.batch * 4) as u64)
    }
}

/// A data set and the settings to train on it, shared by both devices' workers.
#[derive(Clone, Debug)]
pub struct Session {
    /// The settings.
    pub config: TrainConfig,
    /// The generated data.
    pub data: Arc<Dataset>,
    /// The origin of every recorded span of runs of this session, shared by both devices so
    /// their timelines (and an exported trace) share one time axis.
    pub epoch: Instant,
}

impl Session {
    /// Generates or loads the data set and checks the settings. (The app loads files on a
    /// thread of its own and calls [`Session::from_table`].)
    pub fn new(config: TrainConfig) -> Result<Self, String> {
        if config.source == DataSource::Generated {
            let data = Dataset::generate(&config.data)?;
            return Self::with_data(config, data);
        }
        let table = config
            .source
            .load(&no_progress)
            .map_err(|e| e.to_string())?;
        Self::from_table(config, &table)
    }

    /// Splits and scales a loaded table as the settings say, and checks the settings.
    pub fn from_table(config: TrainConfig, table: &Table) -> Result<Self, String> {
        config.data.validate_split()?;
        let data = table.to_dataset(config.data.split());
        Self::with_data(config, data)
    }

    /// Checks the settings against a data set made elsewhere (benchmarks, files).
    pub fn with_data(config: TrainConfig, data: Dataset) -> Result<Self, String> {
        config.validate(&data)?;
        Ok(Self {
            config,
            data: Arc::new(data),
            epoch: Instant::now(),
        })
    }
}

/// What one logging interval measured. Every time is from this run's clocks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepLog {
    /// Which device.
    pub device: Device,
    /// Optimizer steps so far.
    pub step: u64,
    /// Full passes over the training set so far.
    pub epoch: u64,
    /// Mean training loss over the batches since the previous log.
    pub loss: f32,
    /// Share of those batches' rows classified correctly (classification).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<f32>,
    /// Mean absolute error of those batches, in the target's own units (regression).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mae: Option<f32>,
    /// Training rows per second since the previous log (wall clock, ending in a sync).
    pub samples_per_s: f64,
    /// Mean wall-clock time of one step since the previous log, in milliseconds.
    pub step_time_ms: f64,
    /// The loss scale (mixed precision).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss_scale: Option<f32>,
    /// Updates skipped so far because a gradient overflowed (mixed precision).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_steps: Option<u64>,
    /// GPU time of the kernels of the last step, from timestamp queries, in milliseconds.
    /// `None` on the CPU and on adapters without timestamps.
    pub kernel_time_ms: Option<f64>,
    /// What storing values in 16 bits lost since the previous log, by role, counted where the
    /// rounding happened (16-bit precisions only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rounding: Option<RoundingCensus>,
}

/// The values of one kind at one step: how they are stored, binned by power of two, and what
/// storing them in each 16-bit format would lose.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ValueSample {
    /// How they are stored.
    pub dtype: DType,
    /// |value| by power of two.
    pub histogram: Log2Histogram,
    /// What FP16 would do to them as they are now.
    pub in_fp16: RangeReport,
    /// What BF16 would do to them as they are now.
    pub in_bf16: RangeReport,
}

impl ValueSample {
    fn of(values: &[f32], dtype: DType) -> Self {
        Self {
            dtype,
            histogram: Log2Histogram::of(values),
            in_fp16: RangeReport::of(values, Half::Fp16),
            in_bf16: RangeReport::of(values, Half::Bf16),
        }
    }
}

/// The values of a model at one step: what the precision panel draws against the 16-bit
/// formats' ranges.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ValueHistograms {
    /// At which step.
    pub step: u64,
    /// Weights and biases as stored (mixed precision: the FP32 masters).
    pub weights: ValueSample,
    /// Every layer's outputs of the last forward pass, as stored.
    pub activations: ValueSample,
    /// The parameters' gradients of the last backward pass, as stored (mixed precision: FP32,
    /// unscaled).
    pub gradients: ValueSample,
}

/// How well the model does on one part of the data.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Score {
    /// Mean loss (cross-entropy; or squared error of the standardised target).
    pub loss: f32,
    /// Share of rows classified correctly (classification).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<f32>,
    /// Coefficient of determination `1 − Σ(y − ŷ)² / Σ(y − ȳ)²` (regression): 1 is perfect,
    /// 0 is no better than always predicting the mean.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r2: Option<f32>,
    /// Mean absolute error in the target's own units (regression).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mae: Option<f32>,
}

/// Test rows by true class (row) and predicted class (column).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Confusion {
    /// Classes per side.
    pub classes: usize,
    /// `classes × classes` counts, row-major.
    pub counts: Vec<u32>,
}

impl Confusion {
    /// Rows of class `truth` predicted as `predicted`.
    pub fn count(&self, truth: usize, predicted: usize) -> u32 {
        self.counts[truth * self.classes + predicted]
    }
}

/// Most test rows whose prediction an evaluation sends back for the regression plot.
pub const MAX_PREDICTION_POINTS: usize = 1000;

/// Loss and accuracy (or R² and error) of the whole training and test sets with the current
/// parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EvalReport {
    /// Which device.
    pub device: Device,
    /// Step at which it was measured.
    pub step: u64,
    /// On the training set.
    pub train: Score,
    /// On the test set.
    pub test: Score,
    /// The test set's confusion matrix (classification).
    #[serde(skip)]
    pub confusion: Option<Confusion>,
    /// `(true, predicted)` target values of up to [`MAX_PREDICTION_POINTS`] test rows, in the
    /// target's own units (regression).
    #[serde(skip)]
    pub predictions: Vec<[f32; 2]>,
}

/// The class the model predicts over a grid covering the 2-D data.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundaryGrid {
    /// Cells per side.
    pub resolution: usize,
    /// `[x_min, x_max]` in standardised units.
    pub x_range: [f32; 2],
    /// `[y_min, y_max]` in standardised units.
    pub y_range: [f32; 2],
    /// Predicted class per cell, row-major from `y_min` upwards.
    pub class: Vec<u8>,
    /// Softmax probability of that class per cell.
    pub confidence: Vec<f32>,
}

/// Drives one model through the data on one backend.
pub struct Runner {
    device: Device,
    model: Mlp,
    data: Arc<Dataset>,
    lr: f32,
    loader: BatchLoader,
    pipeline: Pipeline,
    /// Raised while spans are recorded (the loader's workers read it).
    recording: Arc<AtomicBool>,
    /// The origin of every span of this run.
    epoch_clock: Instant,
    window_start: Instant,
    window_steps: u64,
    /// Loss statistics read at the syncs since the last log, summed.
    stats: StatsSum,
    /// Steps recorded since the trace was last taken.
    marks: Vec<StepTrace>,
    /// Spans of steps not yet complete (batches the loader made ahead).
    carried: Vec<Span>,
    /// What storing values in 16 bits lost since the run began.
    rounding_total: RoundingCensus,
    /// Kernel timing of one sync window in this many, while recording (from the setting).
    kernel_sampling: u64,
    /// Syncs so far: they divide the run into windows, each starting with an empty queue.
    syncs: u64,
    /// Whether the kernels of the current window are timed.
    window_timed: bool,
    /// Layer outputs kept from every step while `keep_graphs` is on.
    kept: Vec<Tensor>,
    extent: ([f32; 2], [f32; 2]),
}

/// Loss statistics summed over several reads.
#[derive(Clone, Copy, Debug, Default)]
struct StatsSum {
    loss: f64,
    second: f64,
    rows: usize,
    classification: bool,
}

impl StatsSum {
    fn add(&mut self, s: Stats) {
        let rows = s.rows as f64;
        self.loss += f64::from(s.loss) * rows;
        self.classification = s.accuracy.is_some();
        self.second += f64::from(s.accuracy.or(s.mean_abs_error).unwrap_or(0.0)) * rows;
        self.rows += s.rows;
    }

    fn take(&mut self) -> Stats {
        let sum = std::mem::take(self);
        let rows = sum.rows.max(1) as f64;
        let second = (sum.second / rows) as f32;
        Stats {
            loss: (sum.loss / rows) as f32,
            accuracy: sum.classification.then_some(second),
            mean_abs_error: (!sum.classification).then_some(second),
            rows: sum.rows,
        }
    }
}

impl Runner {
    /// Allocates the model on `backend` and starts the data loader.
    pub fn new(backend: &mut dyn Backend, session: &Session) -> Result<Self, BackendError> {
        let config = &session.config;
        let data = Arc::clone(&session.data);
        let spec = config.model_spec(&data);
        // A new model starts clean: no bind groups or f32 working copies of an earlier one.
        backend.clear_caches()?;
        // The budget applies to the model's own allocations too.
        backend.set_memory_budget(config.pipeline.budget(backend.device()));
        let mut model = Mlp::with_precision(
            backend,
            &spec,
            (config.optimizer, config.batch, config.seed),
            config.precision,
        )?;
        model.set_loss_weight(config.loss_weight);
        let extent = extent_of(&data);
        let epoch_clock = session.epoch;
        let recording = Arc::new(AtomicBool::new(false));
        let loader = BatchLoader::new(
            Arc::clone(&data),
            config.batch,
            config.seed,
            config.augment,
            config.pipeline.loader,
            epoch_clock,
            Arc::clone(&recording),
        )
        .map_err(|e| BackendError::Setup(format!("cannot start the data loader: {e}")))?;
        let mut runner = Self {
            device: backend.device(),
            model,
            data,
            lr: config.lr,
            loader,
            pipeline: config.pipeline,
            recording,
            epoch_clock,
            window_start: Instant::now(),
            window_steps: 0,
            stats: StatsSum::default(),
            marks: Vec::new(),
            carried: Vec::new(),
            rounding_total: RoundingCensus::default(),
            kernel_sampling: 1,
            syncs: 0,
            window_timed: true,
            kept: Vec::new(),
            extent,
        };
        // Whatever the backend recorded before (another model's run) is not this run's.
        backend.stop_recording()?;
        runner.apply_pipeline(backend)?;
        Ok(runner)
    }

    /// Optimizer steps taken.
    pub fn steps(&self) -> u64 {
        u64::from(self.model.steps())
    }

    /// The model.
    pub fn model(&self) -> &Mlp {
        &self.model
    }

    /// The pipeline settings in use.
    pub fn pipeline(&self) -> Pipeline {
        self.pipeline
    }

    /// Rows per batch.
    pub fn batch(&self) -> usize {
        self.model.batch()
    }

    /// The origin of this run's span times.
    pub fn epoch_clock(&self) -> Instant {
        self.epoch_clock
    }

    /// Runs the following steps with new pipeline settings; the model and the batches stay.
    pub fn set_pipeline(
        &mut self,
        backend: &mut dyn Backend,
        pipeline: Pipeline,
    ) -> Result<(), BackendError> {
        pipeline.validate().map_err(BackendError::Setup)?;
        let batch_bytes = ((self.data.features + 1) * self.model.batch() * 4) as u64;
        pipeline
            .loader
            .check_queues(batch_bytes)
            .map_err(BackendError::Setup)?;
        self.loader
            .reconfigure(pipeline.loader)
            .map_err(|e| BackendError::Setup(format!("cannot start the data loader: {e}")))?;
        self.pipeline = pipeline;
        self.apply_pipeline(backend)
    }

    fn apply_pipeline(&mut self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        backend.set_upload_mode(self.pipeline.upload)?;
        backend.set_memory_budget(self.pipeline.budget(self.device));
        if !self.pipeline.keep_graphs {
            // Dropping them gives their memory back (to the GPU's cache).
            self.kept.clear();
        }
        let software = backend.adapter_summary().is_some_and(|a| a.software);
        self.kernel_sampling = match self.pipeline.kernel_timing_every {
            0 if software => u64::from(SOFTWARE_KERNEL_SAMPLING),
            0 => 1,
            n => u64::from(n),
        };
        let recording = backend.recorder().enabled();
        if self.pipeline.record && !recording {
            backend.start_recording(self.epoch_clock)?;
        } else if !self.pipeline.record && recording {
            backend.stop_recording()?;
            self.marks.clear();
            self.carried.clear();
        }
        self.recording
            .store(self.pipeline.record, Ordering::Relaxed);
        Ok(())
    }

    /// Whether the next step will end in a sync, when the display does or does not want a point.
    pub fn next_step_syncs(&self, display_due: bool) -> bool {
        self.pipeline.sync.syncs(self.steps() + 1, display_due)
    }

    /// Trains on the next batch: takes it from the loader, uploads it, runs (CPU) or records and
    /// submits (GPU) forward, backward and update, and reads the loss back if the sync policy
    /// says so — with [`SyncPolicy::WhenShown`], if `display_due`. Returns whether it synced.
    pub fn step(
        &mut self,
        backend: &mut dyn Backend,
        display_due: bool,
    ) -> Result<bool, BackendError> {
        let step = self.steps() + 1;
        let synced = self.next_step_syncs(display_due);
        let gpu = self.device == Device::Gpu;
        // On the CPU the phases are the kernels; on the GPU they only record commands.
        let (lane, category) = if gpu {
            (Lane::Main, Category::CpuExec)
        } else {
            (Lane::Kernels, Category::Kernel)
        };
        // The CPU's kernels are timed by the host clock, always. The GPU's are timed in sampled
        // windows while spans are recorded, and otherwise in the steps whose loss is shown.
        let kernels_timed = if !gpu {
            true
        } else if backend.recorder().enabled() {
            self.window_timed
        } else {
            display_due && synced
        };
        backend.time_kernels(kernels_timed);
        let recorder = backend.recorder();
        recorder.set_step(step);
        let start_ns = recorder.now_ns();
        let batch = self.loader.next_batch(recorder);
        let batch_bytes =
            (std::mem::size_of_val(&batch.x[..]) + std::mem::size_of_val(&batch.y[..])) as u64;
        self.model.load_batch(backend, &batch.x, &batch.y)?;
        let phases: [(&'static str, &'static str); 3] = [
            ("record forward", "forward"),
            ("record backward", "backward"),
            ("record optimizer update", "optimizer update"),
        ];
        for (phase, (gpu_name, cpu_name)) in phases.into_iter().enumerate() {
            let t = backend.recorder().now_ns();
            match phase {
                0 => {
                    self.model.forward(backend)?;
                    if self.pipeline.keep_graphs {
                        self.keep_activations(backend, step)?;
                    }
                }
                1 => self.model.backward(backend)?,
                _ => self.model.update(backend, self.lr)?,
            }
            let name = if gpu { gpu_name } else { cpu_name };
            backend.recorder().span(lane, category, name, t, 0);
        }
        backend.flush()?;
        if synced {
            let stats = self.model.take_stats(backend)?;
            self.add_stats(stats)?;
            self.end_window();
        }
        let recorder = backend.recorder();
        if recorder.enabled() {
            self.marks.push(StepTrace {
                step,
                start_ns,
                end_ns: recorder.now_ns(),
                breakdown: Breakdown::default(),
                synced,
                kernels_timed,
                batch_bytes,
            });
        }
        // Work between steps (logging, evaluation) belongs to no step, and is not timed.
        recorder.set_step(0);
        backend.time_kernels(false);
        self.window_steps += 1;
        Ok(synced)
    }

    /// Copies this step's layer outputs into tensors of their own that stay alive: what keeping
    /// a loss with its graph does. Each copy is a real allocation, under the budget.
    fn keep_activations(
        &mut self,
        backend: &mut dyn Backend,
        step: u64,
    ) -> Result<(), BackendError> {
        for (l, a) in self.model.activations().iter().enumerate().skip(1) {
            let label = format!("step {step} layer{}.output (kept)", l - 1);
            let shape = (a.rows(), a.cols());
            let mut copy = backend.alloc_as(Role::Activations, &label, shape, a.dtype())?;
            backend.copy(a, &mut copy)?;
            self.kept.push(copy);
        }
        Ok(())
    }

    /// Tensors kept by `keep_graphs` so far.
    pub fn kept_tensors(&self) -> usize {
        self.kept.len()
    }

    /// [`Runner::step`], returning with whether it synced the kernel times of the latest step
    /// whose kernels the GPU timed (this one, when it synced and was timed).
    pub fn timed_step(
        &mut self,
        backend: &mut dyn Backend,
        display_due: bool,
    ) -> Result<(bool, Option<KernelTimes>), BackendError> {
        let synced = self.step(backend, display_due)?;
        Ok((synced, backend.kernel_times().cloned()))
    }

    /// Waits for the device and reads the loss statistics, outside any step (before a log
    /// that the sync policy would not have synced for).
    pub fn sync(&mut self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        let stats = self.model.take_stats(backend)?;
        self.add_stats(stats)?;
        self.end_window();
        Ok(())
    }

    /// Counts statistics read back; a loss that is no longer finite stops the run.
    fn add_stats(&mut self, stats: Stats) -> Result<(), BackendError> {
        if stats.rows > 0 && !stats.loss.is_finite() {
            return Err(BackendError::Diverged {
                step: self.steps(),
                loss: stats.loss,
                lr: self.lr,
                lower: self.lr / 10.0,
            });
        }
        self.stats.add(stats);
        Ok(())
    }

    /// A sync has emptied the device's queue: a new window begins. Kernel timing is sampled by
    /// whole windows, never by single steps: a step's interval also holds kernels that earlier
    /// steps submitted, and only a window that starts on an empty queue has every kernel that
    /// runs in each of its steps timed.
    fn end_window(&mut self) {
        self.syncs += 1;
        self.window_timed = self.syncs.is_multiple_of(self.kernel_sampling.max(1));
    }

    /// The steps recorded since the last call, with their breakdowns, and their spans. Call it
    /// after a sync, when every kernel of those steps has finished and been timed.
    pub fn take_trace(&mut self, backend: &mut dyn Backend) -> TraceChunk {
        let mut spans = std::mem::take(&mut self.carried);
        spans.extend(backend.recorder().drain());
        let Some(last) = self.marks.last().map(|m| m.step) else {
            self.carried = spans.into_iter().filter(|s| s.step != 0).collect();
            return TraceChunk::default();
        };
        // Spans of no step (evaluation) are dropped; those of later steps wait for them.
        let (mut spans, later): (Vec<Span>, Vec<Span>) = spans
            .into_iter()
            .filter(|s| s.step != 0)
            .partition(|s| s.step <= last);
        self.carried = later;
        spans.sort_unstable_by_key(|s| s.start_ns);
        let longest = spans
            .iter()
            .filter(|s| s.in_breakdown())
            .map(|s| s.duration_ns)
            .max()
            .unwrap_or(0);
        let mut steps = std::mem::take(&mut self.marks);
        for mark in &mut steps {
            // Only spans that start at most `longest` before the step can reach into it.
            let from = spans.partition_point(|s| s.start_ns + longest < mark.start_ns);
            let to = spans.partition_point(|s| s.start_ns < mark.end_ns);
            mark.breakdown = Breakdown::of(mark.start_ns, mark.end_ns, &spans[from..to]);
        }
        TraceChunk { steps, spans }
    }

    /// The loss statistics read since the last log (reading them now if no step has since)
    /// and the speed over the interval since the last log.
    pub fn log(&mut self, backend: &mut dyn Backend) -> Result<StepLog, BackendError> {
        if self.stats.rows == 0 {
            let stats = self.model.take_stats(backend)?;
            self.add_stats(stats)?;
        }
        let stats = self.stats.take();
        let rounding = if self.model.precision() == Precision::Fp32 {
            None
        } else {
            let census = backend.take_rounding_census()?;
            self.rounding_total.add(&census);
            Some(census)
        };
        let elapsed_s = self.window_start.elapsed().as_secs_f64();
        let steps = self.window_steps.max(1);
        let log = StepLog {
            device: self.device,
            step: self.steps(),
            epoch: self.loader.epoch(),
            loss: stats.loss,
            accuracy: stats.accuracy,
            mae: stats
                .mean_abs_error
                .map(|e| (f64::from(e) * self.data.target_scale.std) as f32),
            samples_per_s: (steps * self.model.batch() as u64) as f64 / elapsed_s.max(1e-9),
            step_time_ms: elapsed_s * 1e3 / steps as f64,
            loss_scale: self.model.scaler().map(|s| s.scale),
            skipped_steps: self.model.scaler().map(|s| s.skipped),
            kernel_time_ms: backend.kernel_times().map(|k| k.total_ns as f64 / 1e6),
            rounding,
        };
        self.restart_clock();
        Ok(log)
    }

    /// The model's weights, last activations and last gradients, binned by power of two (reads
    /// them back: a sync on the GPU).
    pub fn value_histograms(
        &mut self,
        backend: &mut dyn Backend,
    ) -> Result<ValueHistograms, BackendError> {
        let flat = |layers: crate::nn::LayerValues| -> Vec<f32> {
            layers
                .into_iter()
                .flat_map(|(w, b)| w.into_iter().chain(b))
                .collect()
        };
        let weights = flat(self.model.read_parameters(backend)?);
        let gradients = flat(self.model.read_gradients(backend)?);
        let mut activations = Vec::new();
        for a in &self.model.activations()[1..] {
            activations.extend(backend.read(a)?);
        }
        let (weights_dtype, gradients_dtype, activations_dtype) = self.model.dtypes();
        Ok(ValueHistograms {
            step: self.steps(),
            weights: ValueSample::of(&weights, weights_dtype),
            activations: ValueSample::of(&activations, activations_dtype),
            gradients: ValueSample::of(&gradients, gradients_dtype),
        })
    }

    /// What storing values in 16 bits lost since the run began (empty in FP32).
    pub fn rounding_total(&self) -> &RoundingCensus {
        &self.rounding_total
    }

    /// The loss scaler (mixed precision).
    pub fn scaler(&self) -> Option<&crate::precision::GradScaler> {
        self.model.scaler()
    }

    /// Starts a new measuring interval (after work that is not training, such as evaluation).
    pub fn restart_clock(&mut self) {
        self.window_start = Instant::now();
        self.window_steps = 0;
    }

    /// Loss and accuracy (or R² and error) on the whole training and test sets.
    pub fn evaluate(&mut self, backend: &mut dyn Backend) -> Result<EvalReport, BackendError> {
        let data = Arc::clone(&self.data);
        let train = self.model.predict(backend, &data.train_x)?;
        let test = self.model.predict(backend, &data.test_x)?;
        let confusion = (data.task == Task::Classification)
            .then(|| confusion(&test, &data.test_y, data.classes()));
        let predictions = match data.task {
            Task::Regression => test
                .iter()
                .zip(&data.test_y)
                .take(MAX_PREDICTION_POINTS)
                .map(|(&p, &y)| {
                    let scale = data.target_scale;
                    [scale.invert(y) as f32, scale.invert(p) as f32]
                })
                .collect(),
            Task::Classification => Vec::new(),
        };
        Ok(EvalReport {
            device: self.device,
            step: self.steps(),
            train: score(&train, &data.train_y, &data),
            test: score(&test, &data.test_y, &data),
            confusion,
            predictions,
        })
    }

    /// The predicted class over a `resolution²` grid (2-D data sets only).
    pub fn boundary(
        &mut self,
        backend: &mut dyn Backend,
        resolution: usize,
    ) -> Result<Option<BoundaryGrid>, BackendError> {
        if self.data.features != 2 || self.data.task != Task::Classification {
            return Ok(None);
        }
        let (xr, yr) = self.extent;
        let mut points = Vec::with_capacity(resolution * resolution * 2);
        for iy in 0..resolution {
            for ix in 0..resolution {
                let fx = (ix as f32 + 0.5) / resolution as f32;
                let fy = (iy as f32 + 0.5) / resolution as f32;
                points.push(xr[0] + fx * (xr[1] - xr[0]));
                points.push(yr[0] + fy * (yr[1] - yr[0]));
            }
        }
        let logits = self.model.predict(backend, &points)?;
        let classes = self.data.classes();
        let mut class = Vec::with_capacity(resolution * resolution);
        let mut confidence = Vec::with_capacity(resolution * resolution);
        for row in logits.chunks_exact(classes) {
            let (best, p) = softmax_max(row);
            class.push(best as u8);
            confidence.push(p);
        }
        Ok(Some(BoundaryGrid {
            resolution,
            x_range: xr,
            y_range: yr,
            class,
            confidence,
        }))
    }
}

/// The first index of the largest logit and its softmax probability.
fn softmax_max(row: &[f32]) -> (usize, f32) {
    let (mut best, mut max) = (0, f32::NEG_INFINITY);
    for (j, &v) in row.iter().enumerate() {
        if v > max {
            best = j;
            max = v;
        }
    }
    let sum: f32 = row.iter().map(|v| (v - max).exp()).sum();
    (best, 1.0 / sum)
}

/// How `outputs` (the model's, one row per target) fare against `targets`, in f64 on the host.
pub fn score(outputs: &[f32], targets: &[f32], data: &Dataset) -> Score {
    match data.task {
        Task::Classification => {
            let (loss, accuracy) = loss_and_accuracy(outputs, targets, data.classes());
            Score {
                loss,
                accuracy: Some(accuracy),
                r2: None,
                mae: None,
            }
        }
        Task::Regression => {
            let n = targets.len().max(1) as f64;
            let mean = targets.iter().map(|&y| f64::from(y)).sum::<f64>() / n;
            let (mut squared, mut total, mut abs) = (0.0f64, 0.0f64, 0.0f64);
            for (&p, &y) in outputs.iter().zip(targets) {
                let e = f64::from(p) - f64::from(y);
                squared += e * e;
                abs += e.abs();
                total += (f64::from(y) - mean).powi(2);
            }
            Score {
                loss: (squared / n) as f32,
                accuracy: None,
                r2: Some(if total > 0.0 {
                    (1.0 - squared / total) as f32
                } else {
                    0.0
                }),
                // The target was standardised for training: its errors scale back by its deviation.
                mae: Some((abs / n * data.target_scale.std) as f32),
            }
        }
    }
}

/// Mean cross-entropy and accuracy of `logits` against `targets`, in f64 on the host.
pub fn loss_and_accuracy(logits: &[f32], targets: &[f32], classes: usize) -> (f32, f32) {
    let rows = targets.len().max(1);
    let mut loss = 0.0f64;
    let mut correct = 0usize;
    for (row, &y) in logits.chunks_exact(classes).zip(targets) {
        let (best, _) = softmax_max(row);
        let max = f64::from(row[best]);
        let sum: f64 = row.iter().map(|&v| (f64::from(v) - max).exp()).sum();
        let target = y as usize;
        loss += sum.ln() - (f64::from(row.get(target).copied().unwrap_or(row[best])) - max);
        correct += usize::from(best == target);
    }
    ((loss / rows as f64) as f32, correct as f32 / rows as f32)
}

/// Counts of (true class, predicted class) over the rows of `logits`.
fn confusion(logits: &[f32], targets: &[f32], classes: usize) -> Confusion {
    let mut counts = vec![0u32; classes * classes];
    for (row, &y) in logits.chunks_exact(classes).zip(targets) {
        let (best, _) = softmax_max(row);
        if let Some(c) = counts.get_mut(y as usize * classes + best) {
            *c += 1;
        }
    }
    Confusion { classes, counts }
}

/// The rectangle the boundary grid covers: the data's extent plus a margin.
fn extent_of(data: &Dataset) -> ([f32; 2], [f32; 2]) {
    let mut lo = [f32::INFINITY; 2];
    let mut hi = [f32::NEG_INFINITY; 2];
    if data.features == 2 {
        for p in data
            .train_x
            .chunks_exact(2)
            .chain(data.test_x.chunks_exact(2))
        {
            for d in 0..2 {
                lo[d] = lo[d].min(p[d]);
                hi[d] = hi[d].max(p[d]);
            }
        }
    }
    let range = |d: usize| {
        if lo[d].is_finite() && hi[d] > lo[d] {
            let margin = 0.1 * (hi[d] - lo[d]);
            [lo[d] - margin, hi[d] + margin]
        } else {
            [-2.0, 2.0]
        }
    };
    (range(0), range(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Scale;

    fn regression_data(std: f64) -> Dataset {
        Dataset {
            name: "r".into(),
            features: 1,
            task: Task::Regression,
            class_names: Vec::new(),
            target_name: "y".into(),
            target_scale: Scale { mean: 50.0, std },
            standardised: true,
            feature_names: vec!["x".into()],
            image: None,
            train_x: Vec::new(),
            train_y: Vec::new(),
            test_x: Vec::new(),
            test_y: Vec::new(),
        }
    }

    #[test]
    fn r2_and_mean_absolute_error_follow_their_definitions() {
        let data = regression_data(10.0);
        let targets = [-1.0, 0.0, 1.0, 2.0];
        let perfect = score(&targets, &targets, &data);
        assert_eq!(
            (perfect.r2, perfect.mae, perfect.accuracy),
            (Some(1.0), Some(0.0), None)
        );
        // Always predicting the mean (0.5) explains nothing: R² = 0.
        let mean = score(&[0.5; 4], &targets, &data);
        assert_eq!(mean.r2, Some(0.0));
        // Errors of 1 standardised unit are 10 units of the target (its deviation).
        let off = score(&[0.0, 1.0, 2.0, 3.0], &targets, &data);
        assert_eq!(off.mae, Some(10.0));
        assert_eq!(off.loss, 1.0);
        // R² = 1 − Σ(y − ŷ)² / Σ(y − ȳ)² = 1 − 4 / 5.
        assert!((off.r2.unwrap_or(0.0) - 0.2).abs() < 1e-6);
    }

    #[test]
    fn the_confusion_matrix_counts_true_against_predicted() {
        // Three rows: class 0 predicted 0, class 1 predicted 0, class 1 predicted 1.
        let logits = [2.0, 1.0, 3.0, 0.0, 0.0, 5.0];
        let m = confusion(&logits, &[0.0, 1.0, 1.0], 2);
        assert_eq!(m.counts, [1, 0, 1, 1]);
        assert_eq!((m.count(1, 0), m.count(1, 1)), (1, 1));
    }
}
