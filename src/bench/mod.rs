//! Benchmarks: repeated timed runs of the training step after a warm-up, and their statistics.
//!
//! Measuring and presenting live apart (as in hyperfine): [`measure`] returns the raw times of
//! each run, [`Summary`] turns them into statistics, and the CLI prints them.

pub mod calibrate;
pub mod calibrate_each;
pub mod gpu_products;
pub mod history;
pub mod infer;
pub mod infer_tokens;
mod load_watch;
mod local_profile;
pub mod peak;
pub mod sweep;
pub mod sweep_sim;

use web_time::Instant;

use serde::Serialize;

use crate::backend::{Backend, BackendError};
use crate::device::Device;
use crate::energy::{Energy, EnergySource};
use crate::nn::ModelSpec;
use crate::train::{Runner, Session};

/// How long to measure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BenchPlan {
    /// Steps before timing starts (caches, lazily compiled pipelines, the allocator).
    pub warmup_steps: u64,
    /// Timed runs.
    pub repeats: usize,
    /// Steps per timed run; 0 picks enough for about `target_run_s`.
    pub steps_per_run: u64,
    /// Length of a timed run when `steps_per_run` is 0, in seconds.
    pub target_run_s: f64,
}

impl Default for BenchPlan {
    fn default() -> Self {
        Self {
            warmup_steps: 20,
            repeats: 7,
            steps_per_run: 0,
            target_run_s: 0.2,
        }
    }
}

/// The raw measurement of one device.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// Which device.
    pub device: Device,
    /// Steps in each timed run.
    pub steps_per_run: u64,
    /// Wall-clock seconds of each timed run, each ending in a sync with the device.
    pub run_times_s: Vec<f64>,
    /// Kernels dispatched per step over the timed runs (GPU backends).
    pub dispatches_per_step: Option<f64>,
    /// The energy of all the timed runs together, measured or estimated (see [`energy`]);
    /// `None` where there is nothing to measure or estimate it with.
    pub energy: Option<Energy>,
}

impl Measurement {
    /// Time per step of each run, in ms, sorted.
    pub fn sorted_step_times_ms(&self) -> Vec<f64> {
        let mut per_step_ms: Vec<f64> = self
            .run_times_s
            .iter()
            .map(|t| t * 1e3 / self.steps_per_run as f64)
            .collect();
        per_step_ms.sort_by(f64::total_cmp);
        per_step_ms
    }
}

/// Multiply-add FLOPs of one training step: forward (`2·B·Σ in·out`, a convolution's over
/// every pixel's patch), weight gradients (the same again) and input gradients of every layer
/// but the first, which reads the batch. Element-wise work is not counted, so the figure is a
/// lower bound on what the device did.
pub fn flops_per_step(spec: &ModelSpec, batch: usize) -> f64 {
    let macs: f64 = spec
        .footprints()
        .iter()
        .enumerate()
        .map(|(i, f)| f.macs as f64 * if i == 0 { 2.0 } else { 3.0 })
        .sum();
    2.0 * batch as f64 * macs
}

/// Times training steps of `session` on `backend`, inside the backend's threads as the app's
/// worker runs them (on the CPU, measuring from outside its pool handed each split kernel to
/// the pool and back: 5.7 ms a step of 784,256,256,10 at batch 512 against 4.0 ms inside).
pub fn measure(
    backend: &mut dyn Backend,
    session: &Session,
    plan: BenchPlan,
) -> Result<Measurement, BackendError> {
    let mut result = Err(BackendError::Setup("the benchmark did not run".into()));
    backend.enter(&mut |b| result = measure_inside(b, session, plan));
    result
}

fn measure_inside(
    backend: &mut dyn Backend,
    session: &Session,
    plan: BenchPlan,
) -> Result<Measurement, BackendError> {
    let mut runner = Runner::new(backend, session)?;
    // One timed run of the warm-up tells how many steps make a run of the wanted length.
    let start = Instant::now();
    for _ in 0..plan.warmup_steps.max(1) {
        runner.step(backend, false)?;
    }
    runner.log(backend)?;
    let per_step_s = start.elapsed().as_secs_f64() / plan.warmup_steps.max(1) as f64;
    let steps_per_run = if plan.steps_per_run > 0 {
        plan.steps_per_run
    } else {
        ((plan.target_run_s / per_step_s.max(1e-9)) as u64).clamp(3, 1_000_000)
    };
    let mut run_times_s = Vec::with_capacity(plan.repeats);
    let launched = backend.kernels_launched();
    let mut meter = crate::energy::meter_for(backend);
    let reading = meter.start();
    for _ in 0..plan.repeats.max(1) {
        let start = Instant::now();
        for _ in 0..steps_per_run {
            runner.step(backend, false)?;
        }
        // Reading the loss waits for the device: the run ends when its work has.
        runner.log(backend)?;
        run_times_s.push(start.elapsed().as_secs_f64());
    }
    // The device works through every timed step back to back: busy the whole time (for a GPU
    // without a counter, an upper bound, said in the estimate's basis).
    let energy = meter.since(reading, run_times_s.iter().sum(), 1.0);
    let steps = (plan.repeats.max(1) as u64 * steps_per_run) as f64;
    let dispatches_per_step = launched
        .zip(backend.kernels_launched())
        .map(|(before, after)| (after - before) as f64 / steps);
    Ok(Measurement {
        device: backend.device(),
        steps_per_run,
        run_times_s,
        dispatches_per_step,
        energy,
    })
}

/// Times runs of `session` with span recording off and on, alternately on one model so that
/// both see the same warm caches and clocks. Each recorded run also takes its trace (the
/// breakdowns are part of what recording costs).
pub fn measure_recording(
    backend: &mut dyn Backend,
    session: &Session,
    plan: BenchPlan,
) -> Result<(Measurement, Measurement), BackendError> {
    let mut runner = Runner::new(backend, session)?;
    let mut pipeline = runner.pipeline();
    let start = Instant::now();
    for record in [false, true] {
        pipeline.record = record;
        runner.set_pipeline(backend, pipeline)?;
        for _ in 0..plan.warmup_steps.max(1) {
            runner.step(backend, false)?;
        }
        runner.log(backend)?;
        let _ = runner.take_trace(backend);
    }
    let per_step_s = start.elapsed().as_secs_f64() / (2 * plan.warmup_steps.max(1)) as f64;
    let steps_per_run = if plan.steps_per_run > 0 {
        plan.steps_per_run
    } else {
        ((plan.target_run_s / per_step_s.max(1e-9)) as u64).clamp(3, 1_000_000)
    };
    let mut runs = [Vec::new(), Vec::new()];
    for _ in 0..plan.repeats.max(1) {
        for (i, record) in [false, true].into_iter().enumerate() {
            pipeline.record = record;
            runner.set_pipeline(backend, pipeline)?;
            let start = Instant::now();
            for _ in 0..steps_per_run {
                runner.step(backend, false)?;
            }
            runner.log(backend)?;
            if record {
                let _ = runner.take_trace(backend);
            }
            runs[i].push(start.elapsed().as_secs_f64());
        }
    }
    let [off, on] = runs;
    let device = backend.device();
    Ok((
        Measurement {
            device,
            steps_per_run,
            run_times_s: off,
            dispatches_per_step: None,
            energy: None,
        },
        Measurement {
            device,
            steps_per_run,
            run_times_s: on,
            dispatches_per_step: None,
            energy: None,
        },
    ))
}

/// Statistics of a measurement, as `batchscope bench` prints them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Which device.
    pub device: Device,
    /// Backend name (CPU threads, or the adapter and its API).
    pub backend: String,
    /// True on a software adapter, whose speed says nothing about a GPU.
    pub software_adapter: bool,
    /// Layer widths (after a CNN's convolution blocks, the dense layers').
    pub layers: Vec<usize>,
    /// The architecture, as [`ModelSpec::describe`] writes it.
    pub model: String,
    /// Rows each update learns from.
    pub batch: usize,
    /// Rows run at once: a micro-batch's (`batch` unless micro-batches are accumulated).
    pub micro_batch: usize,
    /// Optimizer name.
    pub optimizer: String,
    /// Kernel threads on the CPU (`None` on the GPU).
    pub threads: Option<usize>,
    /// What the inputs were.
    pub data: String,
    /// Timed runs.
    pub repeats: usize,
    /// Steps per timed run.
    pub steps_per_run: u64,
    /// Median time of one step over the runs, in milliseconds.
    pub step_time_median_ms: f64,
    /// Fastest run's time per step.
    pub step_time_min_ms: f64,
    /// Slowest run's time per step.
    pub step_time_max_ms: f64,
    /// Rows per second at the median step time.
    pub samples_per_s: f64,
    /// Matrix FLOPs per second at the median step time (see [`flops_per_step`]).
    pub gflop_per_s: f64,
    /// Kernels dispatched per step (GPU backends).
    pub dispatches_per_step: Option<f64>,
    /// Joules a step, over the timed runs: measured by a counter or estimated, as
    /// `energy_source` says.
    pub energy_j: Option<f64>,
    /// Samples trained per joule.
    pub samples_per_j: Option<f64>,
    /// `rapl`, `nvml` or `estimated`.
    pub energy_source: Option<EnergySource>,
    /// What was read, or the power figure an estimate stands on and its source.
    pub energy_basis: Option<String>,
}

impl Summary {
    /// Statistics of `m` for a model `spec` at `batch` rows.
    pub fn new(m: &Measurement, backend: &dyn Backend, session: &Session) -> Self {
        let spec = session.config.model_spec(&session.data);
        let batch = session.config.effective_batch();
        let per_step_ms = m.sorted_step_times_ms();
        let median = median_of_sorted(&per_step_ms);
        let steps = (m.run_times_s.len() as u64 * m.steps_per_run).max(1) as f64;
        let per_step_j = m.energy.as_ref().map(|e| e.joules / steps);
        Self {
            device: m.device,
            backend: backend.name(),
            software_adapter: backend.adapter_summary().is_some_and(|a| a.software),
            batch,
            micro_batch: session.config.batch,
            optimizer: session.config.optimizer.as_str().to_owned(),
            threads: backend.threads(),
            data: session.data.name.clone(),
            repeats: per_step_ms.len(),
            steps_per_run: m.steps_per_run,
            step_time_median_ms: median,
            step_time_min_ms: per_step_ms.first().copied().unwrap_or(f64::NAN),
            step_time_max_ms: per_step_ms.last().copied().unwrap_or(f64::NAN),
            samples_per_s: batch as f64 / (median / 1e3),
            gflop_per_s: flops_per_step(&spec, batch) / (median / 1e3) / 1e9,
            dispatches_per_step: m.dispatches_per_step,
            energy_j: per_step_j,
            samples_per_j: per_step_j.filter(|&j| j > 0.0).map(|j| batch as f64 / j),
            energy_source: m.energy.as_ref().map(|e| e.source),
            energy_basis: m.energy.as_ref().map(|e| e.basis.clone()),
            model: spec.describe(),
            layers: spec.layers,
        }
    }
}

/// The median of sorted values (mean of the two middle ones for an even count).
pub fn median_of_sorted(v: &[f64]) -> f64 {
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => f64::midpoint(v[n / 2 - 1], v[n / 2]),
    }
}

/// The percentile `q` (0–1) of sorted values, by nearest rank.
pub fn percentile_of_sorted(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let rank = (q * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile_of_sorted(&v, 0.99), 99.0);
        assert_eq!(percentile_of_sorted(&v, 0.5), 50.0);
        assert_eq!(percentile_of_sorted(&[3.0], 0.99), 3.0);
        assert!(percentile_of_sorted(&[], 0.5).is_nan());
    }

    #[test]
    fn median_and_flops() {
        assert_eq!(median_of_sorted(&[1.0, 2.0, 10.0]), 2.0);
        assert_eq!(median_of_sorted(&[1.0, 2.0, 4.0, 10.0]), 3.0);
        let spec = ModelSpec {
            conv: None,
            list: None,
            loss: crate::nn::Loss::SoftmaxCrossEntropy,
            layers: vec![784, 128, 10],
            activation: crate::backend::Activation::Relu,
        };
        // Forward 784·128 + 128·10 MACs, weight grads the same, input grads 128·10 (layer 2 only).
        let macs = 784 * 128 + 128 * 10;
        assert_eq!(
            flops_per_step(&spec, 2),
            2.0 * 2.0 * f64::from(2 * macs + 128 * 10)
        );
    }
}

/// The measured speed of one of a layer's matrix products.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProductRate {
    /// `forward`, `weight_grad` or `input_grad`, and the layer index.
    pub name: String,
    /// `[m, k, n]` of the product.
    pub shape: [usize; 3],
    /// Median over the timed runs.
    pub gflop_per_s: f64,
}

/// Times each matrix product of one training step (with its fused epilogue) on `backend`.
/// CPU only: GPU ops return before they run, so their wall-clock time means nothing.
pub fn measure_products(
    backend: &mut dyn Backend,
    spec: &ModelSpec,
    batch: usize,
    seconds_each: f64,
) -> Result<Vec<ProductRate>, BackendError> {
    if backend.device() != Device::Cpu {
        return Err(BackendError::Setup(
            "product timings are measured on the CPU only".into(),
        ));
    }
    let mut result = None;
    backend.enter(&mut |b| result = Some(measure_products_inside(b, spec, batch, seconds_each)));
    result.unwrap_or_else(|| Err(BackendError::Setup("the benchmark did not run".into())))
}

fn measure_products_inside(
    backend: &mut dyn Backend,
    spec: &ModelSpec,
    batch: usize,
    seconds_each: f64,
) -> Result<Vec<ProductRate>, BackendError> {
    // The convolutions' own kernels first, then each dense layer's three products.
    let mut rates = measure_convolutions(backend, spec, batch, seconds_each)?;
    let products = spec.footprints().into_iter().filter(|f| f.macs > 0);
    for (l, f) in products.enumerate() {
        let Some([(fan_in, fan_out), _]) = f.param_shapes.filter(|_| f.convolution.is_none())
        else {
            continue;
        };
        let rows = batch * (f.macs / (fan_in * fan_out).max(1));
        let macs = (rows * fan_in * fan_out) as f64;
        let seconds = time_layer_products(backend, (rows, fan_in, fan_out), seconds_each)?;
        let shapes = [
            [rows, fan_in, fan_out],
            [fan_in, rows, fan_out],
            [rows, fan_out, fan_in],
        ];
        let names = ["forward", "weight_grad", "input_grad"];
        for ((name, shape), seconds) in names.into_iter().zip(shapes).zip(seconds) {
            rates.push(ProductRate {
                name: format!("{name} {l}"),
                shape,
                gflop_per_s: 2.0 * macs / seconds / 1e9,
            });
        }
    }
    Ok(rates)
}

/// Each convolution's kernels on `backend` (either device), as its training step runs them:
/// the forward pass, the parameter gradients and (but where it reads the images) the input
/// gradient, each in GFLOP/s of the equivalent product.
pub fn measure_convolutions(
    backend: &mut dyn Backend,
    spec: &ModelSpec,
    batch: usize,
    seconds_each: f64,
) -> Result<Vec<ProductRate>, BackendError> {
    let mut rates = Vec::new();
    let footprints = spec.footprints();
    let products = footprints.iter().filter(|f| f.macs > 0);
    for (l, f) in products.enumerate() {
        let Some(conv) = f.convolution else {
            continue;
        };
        let (rows, fan_in, fan_out) = (batch * conv.pixels(), conv.patch(), conv.channels_out);
        let macs = (rows * fan_in * fan_out) as f64;
        // A first layer's input is the images: no input gradient.
        let reads_batch = footprints
            .first()
            .is_some_and(|first| std::ptr::eq(f, first));
        let seconds = time_convolution(backend, conv, batch, seconds_each, !reads_batch)?;
        let names = ["convolution", "conv weight_grad", "conv input_grad"];
        let shapes = [
            [rows, fan_in, fan_out],
            [fan_in, rows, fan_out],
            [rows, fan_out, fan_in],
        ];
        for ((name, shape), seconds) in names.into_iter().zip(shapes).zip(seconds) {
            rates.push(ProductRate {
                name: format!("{name} {l}"),
                shape,
                gflop_per_s: 2.0 * macs / seconds / 1e9,
            });
        }
    }
    Ok(rates)
}

/// Median seconds per call of a convolution's kernels on `batch` images as the training step
/// runs them (see `ComputeOps::conv_forward`): the forward pass with bias and activation, the
/// parameter gradients, and the input gradient if `input_grad`.
fn time_convolution(
    backend: &mut dyn Backend,
    conv: crate::backend::ConvShape,
    batch: usize,
    seconds_each: f64,
    input_grad: bool,
) -> Result<Vec<f64>, BackendError> {
    use crate::backend::Activation;
    let x = backend.filled("images", batch, conv.image_in())?;
    let weight = backend.filled("w", conv.patch(), conv.channels_out)?;
    let bias = backend.filled("b", 1, conv.channels_out)?;
    let rows = batch * conv.pixels();
    let dz = backend.filled("dz", rows, conv.channels_out)?;
    let mut out = backend.zeros("out", rows, conv.channels_out)?;
    let mut dw = backend.zeros("dw", conv.patch(), conv.channels_out)?;
    let mut db = backend.zeros("db", 1, conv.channels_out)?;
    let params = (&weight, &bias, Activation::Relu);
    let forward = time_op(backend, seconds_each, &mut |b| {
        b.conv_forward(&x, conv, params, &mut out)
    })?;
    let weight_grad = time_op(backend, seconds_each, &mut |b| {
        b.conv_backward_params(&x, conv, &dz, (&mut dw, &mut db))
    })?;
    if !input_grad {
        return Ok(vec![forward, weight_grad]);
    }
    let mut dx = backend.zeros("dx", batch, conv.image_in())?;
    let input_grad = time_op(backend, seconds_each, &mut |b| {
        b.conv_backward_input(&dz, &weight, conv, &mut dx)
    })?;
    Ok(vec![forward, weight_grad, input_grad])
}

/// Median seconds per call of a layer's three products on `(batch, in, out)` as the training
/// step runs them (with their fused epilogues): forward, weight gradient, input gradient.
pub(crate) fn time_layer_products(
    backend: &mut dyn Backend,
    (batch, fan_in, fan_out): (usize, usize, usize),
    seconds_each: f64,
) -> Result<[f64; 3], BackendError> {
    use crate::backend::Activation;
    let x = backend.filled("x", batch, fan_in)?;
    let weight = backend.filled("w", fan_in, fan_out)?;
    let bias = backend.filled("b", 1, fan_out)?;
    let dz = backend.filled("dz", batch, fan_out)?;
    let mut out = backend.zeros("out", batch, fan_out)?;
    let mut dw = backend.zeros("dw", fan_in, fan_out)?;
    let mut db = backend.zeros("db", 1, fan_out)?;
    let mut dx = backend.zeros("dx", batch, fan_in)?;
    let forward = time_op(backend, seconds_each, &mut |b| {
        b.linear_forward(&x, &weight, &bias, Activation::Relu, &mut out)
    })?;
    let weight_grad = time_op(backend, seconds_each, &mut |b| {
        b.linear_backward_params(&x, &dz, &mut dw, &mut db)
    })?;
    let input_grad = time_op(backend, seconds_each, &mut |b| {
        b.linear_backward_input(&dz, &weight, &x, Activation::Relu, &mut dx)
    })?;
    Ok([forward, weight_grad, input_grad])
}

/// Median seconds per call of `op` over 5 runs of about `seconds / 5` each; an op whose first
/// call takes longer than `seconds` (a large product on a software adapter) is timed once more,
/// warm, instead.
pub(crate) fn time_op(
    backend: &mut dyn Backend,
    seconds: f64,
    op: &mut dyn FnMut(&mut dyn Backend) -> Result<(), BackendError>,
) -> Result<f64, BackendError> {
    let first = Instant::now();
    op(backend)?;
    backend.flush()?;
    if first.elapsed().as_secs_f64() > seconds {
        let again = Instant::now();
        op(backend)?;
        backend.flush()?;
        return Ok(again.elapsed().as_secs_f64());
    }
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed().as_secs_f64() < seconds / 10.0 {
        op(backend)?;
        // A GPU queues work faster than it runs it: waiting for each call here counts the
        // calls that ran in the time, not those queued.
        backend.flush()?;
        calls += 1;
    }
    backend.flush()?;
    let per_run = calls.max(1);
    let mut per_call = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        for _ in 0..per_run {
            op(backend)?;
        }
        backend.flush()?;
        per_call.push(start.elapsed().as_secs_f64() / per_run as f64);
    }
    per_call.sort_by(f64::total_cmp);
    Ok(median_of_sorted(&per_call))
}
