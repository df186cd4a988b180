//! Inference as a deployed model serves it: after training, predictions one request at a time
//! (copy the request in, run forward, read the answer back) and in batches, timed request by
//! request on the host clock. The latency percentiles are the deployment case's numbers: a GPU
//! that wins on throughput may lose on a single request, because every request pays its copies
//! and its sync.
//!
//! Each request size gets a model of its own whose buffers hold exactly that many rows (with
//! the trained weights copied in), so a single request computes one row, not an evaluation
//! chunk of a thousand.

use web_time::Instant;

use serde::Serialize;

use super::{median_of_sorted, percentile_of_sorted};
use crate::backend::{Backend, BackendError};
use crate::device::Device;
use crate::nn::{Network, OptimizerKind, Training};
use crate::precision::Precision;
use crate::trace::Category;
use crate::train::{Runner, Session};

/// How inference is measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InferPlan {
    /// Training steps before the requests (the model answers with trained weights).
    pub train_steps: u64,
    /// Timed requests per request size.
    pub requests: usize,
    /// Rows per request in the batched case.
    pub batch: usize,
    /// Untimed requests first (pipelines, caches, the allocator).
    pub warmup: usize,
    /// Characters a language model writes after each prompt, with and without a key-value
    /// cache (0: none; a model that reads no text writes none).
    pub tokens: usize,
    /// Only with (`Some(true)`) or only without (`Some(false)`) a key-value cache; both when
    /// `None`.
    pub kv_cache: Option<bool>,
}

/// The timings of one request size.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Latency {
    /// Rows per request.
    pub rows: usize,
    /// Timed requests.
    pub requests: usize,
    /// Median latency of a request, ms.
    pub p50_ms: f64,
    /// 99th percentile (nearest rank), ms.
    pub p99_ms: f64,
    /// Slowest request, ms.
    pub max_ms: f64,
    /// Rows answered per second over all timed requests.
    pub rows_per_s: f64,
    /// Spans of one recorded request by category (`Memcpy`, `Kernel`, `Sync`, …) with their
    /// count: what a request is made of, on this device.
    pub spans_per_request: Vec<(String, usize)>,
}

/// Inference on one device.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InferReport {
    /// Which device.
    pub device: Device,
    /// The backend's name.
    pub backend: String,
    /// Whether the GPU is a software adapter.
    pub software_adapter: bool,
    /// One request of one row.
    pub single: Latency,
    /// Requests of `batch` rows.
    pub batched: Latency,
    /// A language model's generation, one prompt and `batch` at once, without and with a
    /// key-value cache (empty for other models).
    pub generation: Vec<super::infer_tokens::Generation>,
}

/// What one device's serving measurement gave: its report, or why it could not run.
#[derive(Clone, Debug, PartialEq)]
pub enum ServingNews {
    /// The device was measured.
    Measured(Box<InferReport>),
    /// The device could not be measured: why.
    Failed(Device, crate::i18n::Said),
}

/// The window's serving measurement: each device's report as it comes.
#[derive(Clone, Debug, PartialEq)]
pub struct Serving {
    /// How it is measured.
    pub plan: InferPlan,
    /// The devices to measure, in order.
    pub devices: Vec<Device>,
    /// The devices measured.
    pub reports: Vec<InferReport>,
    /// The devices that could not be, and why.
    pub failures: Vec<(Device, crate::i18n::Said)>,
    /// It has ended (every device done, or cancelled).
    pub ended: bool,
    /// It was cancelled before every device was measured.
    pub cancelled: bool,
}

impl Serving {
    /// A measurement of `devices` with `plan`, nothing measured yet.
    pub fn new(plan: InferPlan, devices: Vec<Device>) -> Self {
        Self {
            plan,
            devices,
            reports: Vec::new(),
            failures: Vec::new(),
            ended: false,
            cancelled: false,
        }
    }

    /// Takes in one device's news.
    pub fn apply(&mut self, news: ServingNews) {
        match news {
            ServingNews::Measured(report) => self.reports.push(*report),
            ServingNews::Failed(device, why) => self.failures.push((device, why)),
        }
    }

    /// The share of the devices done, 0–1.
    pub fn progress(&self) -> f32 {
        let done = self.reports.len() + self.failures.len();
        done as f32 / self.devices.len().max(1) as f32
    }
}

/// Measures `devices` one after the other (never at once: each has the machine to itself),
/// each on a backend of its own from `open`, stopping between devices when `cancel` is set.
pub fn serve_each(
    session: &Session,
    devices: &[Device],
    plan: InferPlan,
    open: &dyn Fn(Device) -> Result<Box<dyn Backend>, crate::i18n::Said>,
    cancel: &std::sync::atomic::AtomicBool,
    report: &mut dyn FnMut(ServingNews),
) {
    for &device in devices {
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let mut backend = match open(device) {
            Ok(backend) => backend,
            Err(why) => {
                report(ServingNews::Failed(device, why));
                continue;
            }
        };
        let mut result = None;
        backend.enter(&mut |b| result = Some(measure(b, session, plan)));
        report(match result {
            Some(Ok(r)) => ServingNews::Measured(Box::new(r)),
            Some(Err(e)) => ServingNews::Failed(device, e.said()),
            None => ServingNews::Failed(
                device,
                crate::i18n::Said::new(crate::i18n::ErrKey::MeasurementDidNotRun, &[]),
            ),
        });
    }
}

/// Trains `session` for the plan's steps, then times requests of one row and of `batch` rows.
pub fn measure(
    backend: &mut dyn Backend,
    session: &Session,
    plan: InferPlan,
) -> Result<InferReport, BackendError> {
    let mut runner = Runner::new(backend, session)?;
    for _ in 0..plan.train_steps {
        runner.step(backend, false)?;
    }
    runner.log(backend)?;
    let trained = runner.model().read_parameters(backend)?;
    drop(runner);
    let single = serve(backend, session, &trained, 1, plan)?;
    let batched = serve(backend, session, &trained, plan.batch.max(1), plan)?;
    let mut generation = Vec::new();
    if plan.tokens > 0 && session.data.is_text() {
        let mut sizes = vec![1, plan.batch.max(1)];
        sizes.dedup();
        let caches = plan.kv_cache.map_or(vec![false, true], |on| vec![on]);
        for rows in sizes {
            generation.extend(super::infer_tokens::time_generation(
                backend,
                session,
                &trained,
                (rows, plan.tokens),
                &caches,
            )?);
        }
    }
    Ok(InferReport {
        device: backend.device(),
        backend: backend.name(),
        software_adapter: backend.adapter_summary().is_some_and(|a| a.software),
        single,
        batched,
        generation,
    })
}

/// Times `plan.requests` requests of `rows` rows each, taken from the test set in turn.
fn serve(
    backend: &mut dyn Backend,
    session: &Session,
    trained: &[(Vec<f32>, Vec<f32>)],
    rows: usize,
    plan: InferPlan,
) -> Result<Latency, BackendError> {
    let spec = session.config.model_spec(&session.data);
    // A model whose buffers hold exactly `rows` rows; SGD keeps no optimizer state.
    let training = Training {
        optimizer: OptimizerKind::Sgd,
        batch: rows,
        seed: session.config.seed,
        precision: Precision::Fp32,
        eval_rows: rows,
        checkpoint: 0,
    };
    let mut model = Network::with_precision(backend, &spec, training)?;
    model.write_parameters(backend, trained)?;
    let data = &session.data;
    let features = data.features;
    let pool = if data.test_rows() > 0 {
        &data.test_x
    } else {
        &data.train_x
    };
    let available = pool.len() / features.max(1);
    let request = |i: usize| -> Vec<f32> {
        (0..rows)
            .flat_map(|r| {
                let row = (i * rows + r) % available.max(1);
                pool[row * features..(row + 1) * features].iter().copied()
            })
            .collect()
    };
    for i in 0..plan.warmup {
        model.predict(backend, &request(i))?;
    }
    let mut times_ms = Vec::with_capacity(plan.requests);
    let all = Instant::now();
    for i in 0..plan.requests.max(1) {
        let input = request(i);
        let start = Instant::now();
        // Copy in, forward, read back: the answer is on the host when this returns.
        let answer = model.predict(backend, &input)?;
        times_ms.push(start.elapsed().as_secs_f64() * 1e3);
        debug_assert_eq!(answer.len(), rows * spec.layers[spec.layers.len() - 1]);
    }
    let total_s = all.elapsed().as_secs_f64();
    // One more request, recorded, shows what a request is made of.
    let spans = recorded_request(backend, &mut model, &request(0))?;
    times_ms.sort_by(f64::total_cmp);
    Ok(Latency {
        rows,
        requests: times_ms.len(),
        p50_ms: median_of_sorted(&times_ms),
        p99_ms: percentile_of_sorted(&times_ms, 0.99),
        max_ms: times_ms.last().copied().unwrap_or(f64::NAN),
        rows_per_s: (times_ms.len() * rows) as f64 / total_s.max(1e-12),
        spans_per_request: spans,
    })
}

/// The spans of one request by category, in the order of [`Category::ALL`].
fn recorded_request(
    backend: &mut dyn Backend,
    model: &mut Network,
    input: &[f32],
) -> Result<Vec<(String, usize)>, BackendError> {
    let was_recording = backend.recorder().enabled();
    if !was_recording {
        backend.start_recording(Instant::now())?;
    }
    backend.time_kernels(true);
    let _ = backend.recorder().drain();
    model.predict(backend, input)?;
    backend.flush()?;
    let spans = backend.recorder().drain();
    backend.time_kernels(false);
    if !was_recording {
        backend.stop_recording()?;
    }
    Ok(Category::ALL
        .iter()
        .map(|&c| {
            let n = spans.iter().filter(|s| s.category == c).count();
            (c.as_str().to_owned(), n)
        })
        .filter(|(_, n)| *n > 0)
        .collect())
}
