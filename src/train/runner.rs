//! A [`Runner`] drives one model through the data on one backend: it takes batches from the
//! `DataLoader`, trains, reads the loss back when the sync policy says, records the step's spans
//! and reports what each interval measured.

#[path = "evaluation.rs"]
mod evaluation;
#[path = "staged_eval.rs"]
mod staged_eval;
pub use staged_eval::{Evaluated, StagedEval};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use web_time::Instant;

use super::batch_fit::with_advice;
use super::config::{Pipeline, SOFTWARE_KERNEL_SAMPLING, batch_bytes, eval_rows};
use super::metrics::extent_of;
use super::report::{StepEnergy, StepLog, ValueHistograms, ValueSample};
use super::session::Session;
use crate::backend::{Backend, BackendError, KernelTimes, Tensor};
use crate::data::Dataset;
use crate::data::dataloader::BatchLoader;
use crate::device::Device;
use crate::energy::{Meter, Reading};
use crate::memory::Role;
use crate::nn::{Network, Stats, Training};
use crate::precision::{Precision, RoundingCensus};
use crate::trace::{Breakdown, Category, Lane, Span, StepTrace, TraceChunk};

/// The CPU times each op of one step in this many (see `Runner::step`).
const CPU_OPS_TIMED_EVERY: u64 = 256;

/// Drives one model through the data on one backend.
pub struct Runner {
    device: Device,
    model: Network,
    data: Arc<Dataset>,
    /// Seeds the weights, and the draws of a language model's writing.
    seed: u64,
    lr: f32,
    /// Adam's moments are kept in pure FP16 (a divergence is then FP16's range, not the lr).
    fp16_adam: bool,
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
    /// Reads (or estimates) the device's energy; the reading at the window's start; joules
    /// since the run began.
    meter: Meter,
    energy_start: Reading,
    energy_total_j: f64,
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

/// Refuses a model whose largest buffer (a weight matrix, or `rows` rows of its input, a
/// convolution's output or a layer's values, as f32) is more than the adapter can bind, before
/// anything is allocated: wgpu would otherwise fail with a validation error that says nothing
/// useful. `Ok` carries the most rows that fit, for a message naming the setting to change.
pub fn check_buffers(
    spec: &crate::nn::ModelSpec,
    rows: usize,
    adapter: &crate::backend::AdapterSummary,
) -> Result<usize, BackendError> {
    let limit = adapter
        .max_buffer_size_bytes
        .min(adapter.max_storage_buffer_binding_size_bytes);
    let (weights, weights_what) = spec.largest_weights();
    let (row, row_what) = spec.largest_row();
    let max_rows = usize::try_from(limit / row.max(1)).unwrap_or(usize::MAX);
    let activations = row.saturating_mul(rows as u64);
    let (bytes, what) = if weights >= activations {
        (weights, weights_what)
    } else {
        (activations, format!("{rows} rows of {row_what}"))
    };
    if bytes > limit {
        return Err(BackendError::BufferTooLarge {
            what,
            bytes_shown: crate::units::format_bytes(bytes),
            limit_shown: crate::units::format_bytes(limit),
        });
    }
    Ok(max_rows)
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
        if let Some(adapter) = backend.adapter_summary() {
            let rows = config.batch.max(spec.eval_rows(eval_rows(&data)));
            check_buffers(&spec, rows, &adapter)?;
        }
        let training = Training {
            optimizer: config.optimizer,
            batch: config.batch,
            seed: config.seed,
            precision: config.precision,
            eval_rows: eval_rows(&data),
            checkpoint: config.checkpoint,
        };
        let mut model = Network::with_precision(backend, &spec, training)
            .map_err(|e| with_advice(e, config, &data))?;
        model.set_loss_weight(config.loss_weight);
        model
            .set_micro_batches(backend, config.accumulate)
            .map_err(|e| with_advice(e, config, &data))?;
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
        let mut meter = crate::energy::meter_for(backend);
        let mut runner = Self {
            device: backend.device(),
            model,
            data,
            lr: config.lr,
            seed: config.seed,
            fp16_adam: config.precision == Precision::Fp16
                && config.optimizer == crate::nn::OptimizerKind::Adam,
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
            energy_start: meter.start(),
            meter,
            energy_total_j: 0.0,
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

    /// Full passes over the training set so far.
    pub fn epoch(&self) -> u64 {
        self.loader.epoch()
    }

    /// The model.
    pub fn model(&self) -> &Network {
        &self.model
    }

    /// Overwrites the model's parameters (`(weights, biases)` per layer that has them), as
    /// weights loaded from a file.
    pub fn write_parameters(
        &mut self,
        backend: &mut dyn Backend,
        values: &[(Vec<f32>, Vec<f32>)],
    ) -> Result<(), BackendError> {
        self.model.write_parameters(backend, values)
    }

    /// The pipeline settings in use.
    pub fn pipeline(&self) -> Pipeline {
        self.pipeline
    }

    /// Rows each update learns from: the micro-batches' rows, when several are accumulated.
    pub fn batch(&self) -> usize {
        self.model.batch() * self.model.micro_batches() as usize
    }

    /// Rows loaded and run at once: a micro-batch's.
    pub fn micro_batch(&self) -> usize {
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
        pipeline
            .validate()
            .map_err(|e| BackendError::Setup(e.to_string()))?;
        pipeline
            .loader
            .check_queues(batch_bytes(self.data.features, self.model.batch()))
            .map_err(|e| BackendError::Setup(e.to_string()))?;
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
    /// says so — with [`SyncPolicy::WhenShown`](super::SyncPolicy::WhenShown), if `display_due`. Returns whether it synced.
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
        // Each op of a CPU step timed on its own costs about 50 ns an op, a third of the smallest
        // steps, so only some steps are, for the breakdown by kind of op: steps 1, 2, 4 … 256,
        // then every 256th. Not the steps whose loss is shown: those follow the logging and the
        // evaluation, with the caches cold, and would show a slower step than the run's.
        let ops_timed = step.is_power_of_two() && step <= CPU_OPS_TIMED_EVERY
            || step.is_multiple_of(CPU_OPS_TIMED_EVERY);
        backend.time_kernels(if gpu { kernels_timed } else { ops_timed });
        let recorder = backend.recorder();
        recorder.set_step(step);
        let start_ns = recorder.now_ns();
        // Accumulating, a step is several micro-batches, each loaded, run forward and backward
        // and its gradients summed, then one update.
        let mut batch_bytes = 0;
        for micro in 0..self.model.micro_batches() {
            let batch = self.loader.next_batch(backend.recorder());
            batch_bytes +=
                (std::mem::size_of_val(&batch.x[..]) + std::mem::size_of_val(&batch.y[..])) as u64;
            self.model.load_batch(backend, &batch.x, &batch.y)?;
            let t = backend.recorder().now_ns();
            self.model.forward(backend)?;
            if self.pipeline.keep_graphs {
                self.keep_activations(backend, step)?;
            }
            let name = if gpu { "record forward" } else { "forward" };
            backend.recorder().span(lane, category, name, t, 0);
            let t = backend.recorder().now_ns();
            self.model.sum_gradients(backend, micro)?;
            // A checkpointed backward records its recomputation and backward spans itself.
            if !self.model.checkpoints() {
                let name = if gpu { "record backward" } else { "backward" };
                backend.recorder().span(lane, category, name, t, 0);
            }
        }
        let t = backend.recorder().now_ns();
        self.model.update(backend, self.lr)?;
        let name = if gpu {
            "record optimizer update"
        } else {
            "optimizer update"
        };
        backend.recorder().span(lane, category, name, t, 0);
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
        for a in self.model.activations() {
            let label = format!("step {step} {} (kept)", a.label());
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

    /// The device tensor the loss statistics are summed in, for a read awaited outside the
    /// runner (a browser's GPU); its values then go to [`Runner::take_read`].
    pub fn stats_tensor(&self) -> &Tensor {
        self.model.stats_tensor()
    }

    /// [`Runner::sync`] with the statistics' values read elsewhere (see
    /// [`Runner::stats_tensor`]).
    pub fn take_read(
        &mut self,
        backend: &mut dyn Backend,
        values: &[f32],
    ) -> Result<(), BackendError> {
        let stats = self.model.stats_read(backend, values)?;
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
                // A tenth, rounded to two significant digits so that it reads as the user
                // would type it (0.001, not 0.0009999999).
                lower: format!("{:.1e}", self.lr / 10.0)
                    .parse()
                    .unwrap_or(self.lr / 10.0),
                fp16_adam: self.fp16_adam,
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
        let kernel_time_ms = (self.device == Device::Gpu)
            .then(|| backend.kernel_times().map(|k| k.total_ns as f64 / 1e6))
            .flatten();
        let energy = self.window_energy((self.window_steps, elapsed_s), kernel_time_ms);
        let log = StepLog {
            device: self.device,
            step: self.steps(),
            epoch: self.loader.epoch(),
            batch: self.batch(),
            micro_batch: self.micro_batch(),
            loss: stats.loss,
            accuracy: stats.accuracy,
            mae: stats
                .mean_abs_error
                .map(|e| (f64::from(e) * self.data.target_scale.std) as f32),
            samples_per_s: (steps * self.batch() as u64) as f64 / elapsed_s.max(1e-9),
            tokens_per_s: self.data.is_text().then(|| {
                (steps * self.batch() as u64) as f64 * self.data.features as f64
                    / elapsed_s.max(1e-9)
            }),
            step_time_ms: elapsed_s * 1e3 / steps as f64,
            loss_scale: self.model.scaler().map(|s| s.scale),
            skipped_steps: self.model.scaler().map(|s| s.skipped),
            kernel_time_ms,
            kernels: backend.kernel_times().cloned(),
            rounding,
            energy,
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
        let mut values: [Vec<f32>; 3] = Default::default();
        for (tensors, values) in self.model.value_tensors().into_iter().zip(&mut values) {
            for t in tensors {
                values.extend(backend.read(t)?);
            }
        }
        Ok(self.histograms_of(values))
    }

    /// The histograms of the values of [`Network::value_tensors`]'s three lists, each read
    /// back and put end to end.
    fn histograms_of(&self, [weights, gradients, activations]: [Vec<f32>; 3]) -> ValueHistograms {
        let (weights_dtype, gradients_dtype, activations_dtype) = self.model.dtypes();
        ValueHistograms {
            step: self.steps(),
            weights: ValueSample::of(&weights, weights_dtype),
            activations: ValueSample::of(&activations, activations_dtype),
            gradients: ValueSample::of(&gradients, gradients_dtype),
        }
    }

    /// What storing values in 16 bits lost since the run began (empty in FP32).
    pub fn rounding_total(&self) -> &RoundingCensus {
        &self.rounding_total
    }

    /// The loss scaler (mixed precision).
    pub fn scaler(&self) -> Option<&crate::precision::GradScaler> {
        self.model.scaler()
    }

    /// Leaves `time` spent on work that is not training (a check of the stop condition) out of
    /// the measuring interval in progress, whose steps stay in it.
    pub fn exclude(&mut self, time: std::time::Duration) {
        self.window_start = (self.window_start + time).min(Instant::now());
    }

    /// Steps in the measuring interval in progress (not yet in a log).
    pub fn window_steps(&self) -> u64 {
        self.window_steps
    }

    /// Starts a new measuring interval (after work that is not training, such as evaluation).
    pub fn restart_clock(&mut self) {
        self.window_start = Instant::now();
        self.window_steps = 0;
        self.energy_start = self.meter.start();
    }

    /// The energy of the `steps` steps of the window that took `elapsed_s`: a counter's, or an
    /// estimate over the device's busy share (the kernels' share of the step on a GPU whose
    /// kernels were timed, else all of it: an upper bound).
    fn window_energy(
        &mut self,
        (steps, elapsed_s): (u64, f64),
        kernel_time_ms: Option<f64>,
    ) -> Option<StepEnergy> {
        let step_ms = elapsed_s * 1e3 / steps.max(1) as f64;
        let busy = kernel_time_ms.map_or(1.0, |k| (k / step_ms.max(1e-9)).min(1.0));
        let e = self.meter.since(self.energy_start, elapsed_s, busy)?;
        self.energy_total_j += e.joules;
        let per_step_j = e.joules / steps.max(1) as f64;
        Some(StepEnergy {
            per_step_j,
            samples_per_j: if per_step_j > 0.0 {
                self.batch() as f64 / per_step_j
            } else {
                0.0
            },
            total_j: self.energy_total_j,
            source: e.source,
            basis: self.meter.describe(),
            rated: self.meter.rated().map(|p| (p.watts, p.stand_in)),
        })
    }
}
