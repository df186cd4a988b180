//! Calibration: short probes on this machine's CPU that measure what the cost model needs (the
//! FMA peak, the memory bandwidth, a kernel's launch, the step's own overhead) and fit its
//! efficiency curves, giving a local profile; then a grid of training steps, predicted from that
//! profile and measured, with the error. The model earns trust by being right where it can be
//! checked.
//!
//! The probes' sizes are chosen apart from the grid's (widths 3…1536 and batches 2…6144 against
//! 16…1024 and 1…4096), so the grid checks the model between the points it was fitted on rather
//! than at them. They are dense, a factor of 2 to 4 apart, and include powers of two: kernels
//! work in tiles (a 16-wide vector register on this CPU, 16×16 workgroups in the shader), so 24
//! rows cost what 32 do, and a table probed only at 24 over-predicts 16 (lavapipe's batch-16
//! steps by 40–60%). With four batches and six shapes the grid's median error was 13–16% on the
//! CPU; with these seven batches and eighteen shapes it is about 9%.

use serde::Serialize;

pub use super::load_watch::LoadWatch;
use super::local_profile::{cpu_profile, gpu_profile, measured};
use super::{BenchPlan, median_of_sorted, time_layer_products, time_op};
use crate::backend::{AdamHyper, Backend, BackendError};
use crate::data::{Dataset, Synthetic};
use crate::nn::{ModelSpec, OptimizerKind};
use crate::precision::Precision;
use crate::sim::cost::{
    Efficiency, OpKind, Product, Products, Recipe, predict, step_ops, update_work,
};
use crate::sim::curve_fit::{Probe, ShapedProbe, Trend, fit_curve, fit_dispatch, fit_product};
use crate::sim::efficiency::{UpdateFit, Updates};
use crate::sim::grid_check::GridCheck;
use crate::sim::profile::Profile;
use crate::sim::steadiness::Steadiness;
use crate::train::{Session, TrainConfig};

/// What a calibration is probing, for its progress: English as [`std::fmt::Display`] (the
/// command line), and in the window's language by its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probing {
    /// Each update rule on this many values.
    UpdateRules {
        /// Values updated.
        values: usize,
    },
    /// A dense layer's three products.
    Products {
        /// The layer's inputs.
        fan_in: usize,
        /// Its outputs.
        fan_out: usize,
        /// Rows.
        batch: usize,
    },
    /// A layer's larger batches left out: a call would take over a second.
    TooSlow {
        /// The layer's inputs.
        fan_in: usize,
        /// Its outputs.
        fan_out: usize,
        /// The first batch left out.
        batch: usize,
    },
    /// Steps of tiny models (the host's cost per op and per step).
    TinySteps,
    /// Steps of small and mid-sized models (kernels inside a step).
    MidSteps,
    /// Steps with each update rule (their state read cold).
    RuleSteps,
    /// The grid check: its configuration `done` of `of`, predicted and measured.
    Grid {
        /// Configurations measured so far.
        done: usize,
        /// Configurations in the grid.
        of: usize,
    },
}

impl std::fmt::Display for Probing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Probing::UpdateRules { values } => write!(f, "the update rules on {values} values"),
            Probing::Products {
                fan_in,
                fan_out,
                batch,
            } => write!(
                f,
                "products of a layer of {fan_in} by {fan_out} at batch {batch}"
            ),
            Probing::TooSlow {
                fan_in,
                fan_out,
                batch,
            } => write!(
                f,
                "nothing more of {fan_in} by {fan_out}: a call at batch {batch} would take over \
                 a second"
            ),
            Probing::TinySteps => f.write_str("steps of tiny models"),
            Probing::MidSteps => f.write_str("steps of small and mid-sized models"),
            Probing::RuleSteps => f.write_str("steps with each update rule"),
            Probing::Grid { done, of } => {
                write!(
                    f,
                    "the model on its grid of training steps ({done} of {of})"
                )
            }
        }
    }
}

/// What a calibration measured and fitted (its profile records whether the machine's speed
/// held: [`Profile::steadiness`]).
#[derive(Clone, Debug, Serialize)]
pub struct Calibration {
    /// The local profile, its figures measured.
    pub profile: Profile,
    /// The matrix-product probes: which product, FLOPs, seconds and shape.
    pub compute_probes: Vec<(Product, ShapedProbe)>,
    /// The element-wise probes: bytes and seconds.
    pub memory_probes: Vec<Probe>,
}

/// Calibrates `backend` (the CPU, or a GPU adapter) with probes of about `seconds_each` each.
/// `progress` hears what is being probed, for a long calibration (a software adapter's), and
/// answers whether to go on: `false` stops the calibration with [`CANCELLED`].
pub fn calibrate(
    backend: &mut dyn Backend,
    seconds_each: f64,
    progress: &mut (dyn FnMut(&Probing) -> bool + Send),
) -> Result<Calibration, BackendError> {
    // The machine's speed before, during and after the probes (see `sim::steadiness`).
    let mut watch = LoadWatch::start(backend);
    let mut result = None;
    backend.enter(&mut |b| {
        let mut watched = |what: &Probing| {
            watch.look();
            progress(what)
        };
        result = Some(calibrate_inside(b, seconds_each, &mut watched));
    });
    let mut calibration =
        result.unwrap_or_else(|| Err(BackendError::Setup("the calibration did not run".into())))?;
    calibration.profile.steadiness = Some(watch.finish(backend));
    Ok(calibration)
}

fn calibrate_inside(
    backend: &mut dyn Backend,
    seconds_each: f64,
    progress: &mut (dyn FnMut(&Probing) -> bool + Send),
) -> Result<Calibration, BackendError> {
    let adapter = backend.adapter_summary();
    let dispatch_s = probe_launch(backend, seconds_each)?;
    let update_probes = probe_updates(backend, seconds_each, progress)?;
    let memory_probes = update_probes[0].clone();
    // The memory's bandwidth: SGD's largest update, 120 MB, far beyond any cache.
    let bandwidth = memory_probes
        .last()
        .map_or(1e9, |p| p.size / p.seconds.max(1e-9));
    let compute_probes = probe_products(backend, seconds_each, progress)?;
    let all: Vec<Probe> = compute_probes.iter().map(|p| p.1.probe).collect();
    let mut profile = match &adapter {
        None => cpu_profile(backend),
        Some(adapter) => gpu_profile(backend, adapter, &all)?,
    };
    let peak_flops = profile.fp32_tflops.value * 1e12;
    let curves = Curves {
        peak_flops,
        bandwidth,
        dispatch_s,
    };
    profile.efficiency = Some(curves.fit(&compute_probes, &all, &update_probes));
    profile.mem_bw_gbs = measured(
        bandwidth / 1e9,
        "measured: an SGD update of 10^7 values (120 MB)",
    );
    profile.dispatch_us = measured(dispatch_s * 1e6, "measured: the update of one value");
    step(progress, &Probing::TinySteps)?;
    probe_op_overhead(backend, &mut profile, dispatch_s, seconds_each)?;
    probe_step_overhead(backend, &mut profile, seconds_each)?;
    probe_rule_calls(backend, &mut profile, seconds_each)?;
    step(progress, &Probing::MidSteps)?;
    probe_in_step(backend, &mut profile, seconds_each)?;
    step(progress, &Probing::RuleSteps)?;
    probe_rule_steps(backend, &mut profile, seconds_each)?;
    if let Some(e) = profile.efficiency.as_mut() {
        e.clamp_shares();
    }
    Ok(Calibration {
        profile,
        compute_probes,
        memory_probes,
    })
}

/// A launch: the update of one value, several times; the dispatch cost fitted to them.
fn probe_launch(backend: &mut dyn Backend, seconds_each: f64) -> Result<f64, BackendError> {
    let mut tiny = backend.filled("p", 1, 1)?;
    let tiny_grad = backend.filled("g", 1, 1)?;
    let mut launches = Vec::new();
    for _ in 0..3 {
        launches.push(time_op(backend, seconds_each, &mut |b| {
            b.sgd_step(&mut tiny, &tiny_grad, 1e-3)
        })?);
    }
    Ok(fit_dispatch(&launches))
}

/// The rules whose kernels are probed: `AdamW` runs Adam's kernel (one more multiply), and
/// takes its fit.
const PROBED_RULES: [OptimizerKind; 3] = [
    OptimizerKind::Sgd,
    OptimizerKind::Momentum,
    OptimizerKind::Adam,
];

/// Element-wise: each update rule on 10² to 10⁷ values, a quarter-decade apart (SGD's probes
/// also give the memory curve), in [`PROBED_RULES`]' order.
fn probe_updates(
    backend: &mut dyn Backend,
    seconds_each: f64,
    progress: &mut (dyn FnMut(&Probing) -> bool + Send),
) -> Result<[Vec<Probe>; 3], BackendError> {
    let mut update_probes = [Vec::new(), Vec::new(), Vec::new()];
    for k in 0..=20 {
        let n = 10f64.powf(2.0 + f64::from(k) / 4.0) as usize;
        step(progress, &Probing::UpdateRules { values: n })?;
        for (rule, probes) in PROBED_RULES.into_iter().zip(&mut update_probes) {
            let seconds = time_update(backend, rule, n, seconds_each)?;
            probes.push(Probe {
                size: update_work(rule).1 * 4.0 * n as f64,
                seconds,
            });
        }
    }
    Ok(update_probes)
}

/// The shapes whose products are probed: square, thin and wide, apart from the grid's sizes;
/// and a wide input into a narrow layer and back, as an image's pixels into a classroom MLP's
/// first layer (without them, 784,32,10 at batch 16 was predicted 2.5× too slow, read from
/// square products of 512 and 1536).
const PRODUCT_SHAPES: [(usize, usize); 20] = [
    (8, 8),
    (24, 24),
    (32, 32),
    (96, 96),
    (128, 128),
    (384, 384),
    (512, 512),
    (1536, 1536),
    (3, 8),
    (3, 32),
    (3, 128),
    (3, 512),
    (3, 1536),
    (8, 3),
    (32, 3),
    (128, 3),
    (512, 3),
    (1536, 3),
    (1024, 24),
    (24, 1024),
];

/// Products of each kind at [`PRODUCT_SHAPES`]; a shape's larger batches are left out where
/// the smaller one's time says a call would take longer than [`longest_call_s`] (a software
/// adapter's large products), and the fit reads between the others.
fn probe_products(
    backend: &mut dyn Backend,
    seconds_each: f64,
    progress: &mut (dyn FnMut(&Probing) -> bool + Send),
) -> Result<Vec<(Product, ShapedProbe)>, BackendError> {
    let mut compute_probes = Vec::new();
    let longest = longest_call_s(seconds_each);
    for (fan_in, fan_out) in PRODUCT_SHAPES {
        let mut last: Option<(usize, f64)> = None;
        for batch in [2, 8, 32, 128, 512, 2048, 6144] {
            if let Some((last_batch, seconds)) = last
                && seconds * batch as f64 / last_batch as f64 > longest
            {
                let too_slow = Probing::TooSlow {
                    fan_in,
                    fan_out,
                    batch,
                };
                step(progress, &too_slow)?;
                break;
            }
            let products = Probing::Products {
                fan_in,
                fan_out,
                batch,
            };
            step(progress, &products)?;
            let probes = product_probes(backend, (batch, fan_in, fan_out), seconds_each)?;
            let slowest = probes.iter().map(|p| p.1.probe.seconds).fold(0.0, f64::max);
            last = Some((batch, slowest));
            compute_probes.extend(probes);
        }
    }
    Ok(compute_probes)
}

/// The longest one call of a product probe may take: a second, or twenty probes' time where
/// the probes are shorter than 50 ms. A quick calibration (`--seconds 0.005`) on a software
/// adapter spent most of its minute in calls of a quarter to a whole second each.
fn longest_call_s(seconds_each: f64) -> f64 {
    (20.0 * seconds_each).clamp(0.1, 1.0)
}

/// What the efficiency curves are fitted against: the device's peak, its memory's bandwidth
/// and the cost of a launch.
struct Curves {
    peak_flops: f64,
    bandwidth: f64,
    dispatch_s: f64,
}

impl Curves {
    /// The compute and memory curves, one per product kind and one per update rule; `all` is
    /// every compute probe, whatever its kind.
    fn fit(
        &self,
        compute_probes: &[(Product, ShapedProbe)],
        all: &[Probe],
        update_probes: &[Vec<Probe>; 3],
    ) -> Efficiency {
        let Curves {
            peak_flops,
            bandwidth,
            dispatch_s,
        } = *self;
        let [forward, weight_gradient, input_gradient] = Product::ALL.map(|kind| {
            let own: Vec<ShapedProbe> = compute_probes
                .iter()
                .filter(|p| p.0 == kind)
                .map(|p| p.1)
                .collect();
            fit_product(&own, peak_flops, dispatch_s)
        });
        let [sgd, momentum, adam] = update_probes.each_ref().map(|p| UpdateFit {
            curve: fit_curve(p, bandwidth, dispatch_s, 20.0, Trend::Free),
            call_us: 0.0,
            in_step: 1.0,
        });
        Efficiency {
            compute: fit_curve(all, peak_flops, dispatch_s, 1.0, Trend::Rising),
            memory: fit_curve(&update_probes[0], bandwidth, dispatch_s, 20.0, Trend::Free),
            products: Some(Products {
                forward,
                weight_gradient,
                input_gradient,
            }),
            updates: Some(Updates {
                sgd,
                momentum,
                adam,
            }),
        }
    }
}

/// What each op costs the host inside a step, beyond the kernel itself (finding its operands,
/// checking shapes, a cold cache): the steps of a tiny model and a deeper one at batch 1, whose
/// difference is 25 ops (five layers of three products and two updates).
fn probe_op_overhead(
    backend: &mut dyn Backend,
    profile: &mut Profile,
    dispatch_s: f64,
    seconds_each: f64,
) -> Result<(), BackendError> {
    let shallow = session(&[2, 4, 3], 1, OptimizerKind::Sgd)?;
    let deep = session(&[2, 4, 4, 4, 4, 4, 4, 3], 1, OptimizerKind::Sgd)?;
    let extra_ms = step_time_ms(backend, &deep, seconds_each)?
        - step_time_ms(backend, &shallow, seconds_each)?
        - (predict_ms(profile, &deep) - predict_ms(profile, &shallow));
    // The prediction already counts each op's launch: the difference is on top of it.
    profile.dispatch_us = measured(
        dispatch_s * 1e6 + (extra_ms * 1e3 / 25.0).max(0.0),
        "measured: the update of one value, plus what steps of layers 2,4,3 and \
         2,4,4,4,4,4,4,3 at batch 1 take beyond their predicted kernels, per op of the \
         difference",
    );
    Ok(())
}

/// What a step costs beyond its kernels, once and per row: a tiny model's steps at batch 1 and
/// 2000, less their predicted kernels.
fn probe_step_overhead(
    backend: &mut dyn Backend,
    profile: &mut Profile,
    seconds_each: f64,
) -> Result<(), BackendError> {
    let mut beyond = Vec::new();
    for batch in [1, 2000] {
        let tiny = session(&[2, 4, 3], batch, OptimizerKind::Sgd)?;
        let measured_ms = step_time_ms(backend, &tiny, seconds_each)?;
        beyond.push(((measured_ms - predict_ms(profile, &tiny)) * 1e3).max(0.0));
    }
    let per_row_us = ((beyond[1] - beyond[0]) / 1999.0).max(0.0);
    profile.step_overhead_us = Some(measured(
        (beyond[0] - per_row_us).max(0.001),
        "measured: steps of layers 2,4,3 at batch 1 and 2000, less their predicted kernels",
    ));
    profile.row_overhead_ns = Some(measured(
        (per_row_us * 1e3).max(0.001),
        "measured: steps of layers 2,4,3 at batch 1 and 2000, less their predicted kernels",
    ));
    Ok(())
}

/// What each other rule's update of a tensor costs in a step beyond SGD's: steps of the tiny
/// model (four parameter tensors) less their prediction.
fn probe_rule_calls(
    backend: &mut dyn Backend,
    profile: &mut Profile,
    seconds_each: f64,
) -> Result<(), BackendError> {
    for rule in [OptimizerKind::Momentum, OptimizerKind::Adam] {
        let tiny = session(&[2, 4, 3], 1, rule)?;
        let measured_ms = step_time_ms(backend, &tiny, seconds_each)?;
        let beyond_us = (measured_ms - predict_ms(profile, &tiny)) * 1e3;
        if let Some(updates) = profile.efficiency.as_mut().and_then(|e| e.updates.as_mut()) {
            updates.get_mut(rule).call_us = (beyond_us / 4.0).max(0.0);
        }
    }
    Ok(())
}

/// Kernels inside a step run slower than probed alone, their operands no longer in the caches:
/// the median ratio of measured to predicted steps of four models apart from the grid's sizes.
fn probe_in_step(
    backend: &mut dyn Backend,
    profile: &mut Profile,
    seconds_each: f64,
) -> Result<(), BackendError> {
    let mut ratios = Vec::new();
    for (layers, batch) in [
        (&[2, 24, 24, 3][..], 200),
        (&[2, 96, 96, 3][..], 24),
        (&[2, 96, 96, 3][..], 2000),
        (&[2, 384, 384, 3][..], 200),
    ] {
        let s = session(layers, batch, OptimizerKind::Sgd)?;
        ratios.push(step_time_ms(backend, &s, seconds_each)? / predict_ms(profile, &s));
    }
    ratios.sort_by(f64::total_cmp);
    profile.in_step_factor = Some(measured(
        median_of_sorted(&ratios).clamp(0.5, 4.0),
        "measured: steps of layers 2,24,24,3 (batch 200), 2,96,96,3 (24 and 2000) and \
         2,384,384,3 (200), median of measured over predicted",
    ));
    Ok(())
}

/// A rule with state reads it cold inside a step, the backward pass having pushed it out of the
/// caches: what steps with the rule take beyond their prediction, less what the same steps with
/// SGD do, scales the rule's memory traffic. Batch 2, where the update is much of the step, at
/// two widths apart from the grid's; the mean of the two.
fn probe_rule_steps(
    backend: &mut dyn Backend,
    profile: &mut Profile,
    seconds_each: f64,
) -> Result<(), BackendError> {
    for rule in [OptimizerKind::Momentum, OptimizerKind::Adam] {
        let mut factors = Vec::new();
        for width in [96, 384] {
            let layers = [2, width, width, 3];
            let (with_rule, with_sgd) = (
                session(&layers, 2, rule)?,
                session(&layers, 2, OptimizerKind::Sgd)?,
            );
            let extra_ms = step_time_ms(backend, &with_rule, seconds_each)?
                - predict_ms(profile, &with_rule)
                - (step_time_ms(backend, &with_sgd, seconds_each)?
                    - predict_ms(profile, &with_sgd));
            factors.push(1.0 + extra_ms / updates_ms(profile, &with_rule, rule).max(1e-9));
        }
        if let Some(updates) = profile.efficiency.as_mut().and_then(|e| e.updates.as_mut()) {
            updates.get_mut(rule).in_step =
                (factors.iter().sum::<f64>() / factors.len() as f64).clamp(0.5, 4.0);
        }
    }
    Ok(())
}

/// The predicted time of a step's updates with `rule`, in ms.
fn updates_ms(profile: &Profile, session: &Session, rule: OptimizerKind) -> f64 {
    let c = &session.config;
    let spec = c.model_spec(&session.data);
    let ops = step_ops(&spec, c.batch, Recipe::fp32(rule), profile.device());
    predict(profile, &ops, Precision::Fp32, c.batch, (0.0, true))
        .ops
        .iter()
        .filter(|cost| cost.op.kind == OpKind::Update)
        .map(|cost| cost.time_ms)
        .sum()
}

/// The error of a calibration stopped by its `progress`.
pub const CANCELLED: &str = "the calibration was cancelled";

/// Tells `progress` what comes next; an error if it says stop.
fn step(
    progress: &mut (dyn FnMut(&Probing) -> bool + Send),
    what: &Probing,
) -> Result<(), BackendError> {
    if progress(what) {
        Ok(())
    } else {
        Err(BackendError::Setup(CANCELLED.into()))
    }
}

/// Seconds per call of `rule`'s update of `n` values, as one tensor.
fn time_update(
    backend: &mut dyn Backend,
    rule: OptimizerKind,
    n: usize,
    seconds: f64,
) -> Result<f64, BackendError> {
    let mut p = backend.filled("p", 1, n)?;
    let g = backend.filled("g", 1, n)?;
    let mut m = backend.zeros("m", 1, n)?;
    let mut v = backend.zeros("v", 1, n)?;
    let hyper = AdamHyper::defaults(1e-3, 1);
    time_op(backend, seconds, &mut |b| match rule {
        OptimizerKind::Sgd => b.sgd_step(&mut p, &g, 1e-3),
        OptimizerKind::Momentum => {
            b.momentum_step(&mut p, &g, &mut m, 1e-3, OptimizerKind::MOMENTUM)
        }
        OptimizerKind::Adam => b.adam_step(&mut p, &g, &mut m, &mut v, hyper),
        OptimizerKind::AdamW => {
            let hyper = AdamHyper {
                weight_decay: OptimizerKind::WEIGHT_DECAY,
                ..hyper
            };
            b.adam_step(&mut p, &g, &mut m, &mut v, hyper)
        }
    })
}

/// Times the three products of a layer of `(batch, in, out)`, as the step runs them.
fn product_probes(
    backend: &mut dyn Backend,
    (batch, fan_in, fan_out): (usize, usize, usize),
    seconds_each: f64,
) -> Result<Vec<(Product, ShapedProbe)>, BackendError> {
    let (b, i, o) = (batch as f64, fan_in as f64, fan_out as f64);
    let [forward, params, input] =
        time_layer_products(backend, (batch, fan_in, fan_out), seconds_each)?;
    // The FLOPs and shapes the cost model gives each (see `step_ops`).
    let probe = |kind, size, seconds, dims| {
        (
            kind,
            ShapedProbe {
                probe: Probe { size, seconds },
                dims,
            },
        )
    };
    Ok(vec![
        probe(
            Product::Forward,
            2.0 * b * i * o + 2.0 * b * o,
            forward,
            [b, o, i],
        ),
        probe(
            Product::WeightGradient,
            2.0 * b * i * o + b * o,
            params,
            [i, o, b],
        ),
        probe(
            Product::InputGradient,
            2.0 * b * i * o + b * i,
            input,
            [b, i, o],
        ),
    ])
}

/// A session of `layers` on the spiral, large enough for `batch`; on random inputs of their
/// width where the first layer takes more than the spiral's two.
pub fn session(
    layers: &[usize],
    batch: usize,
    optimizer: OptimizerKind,
) -> Result<Session, BackendError> {
    let mut config = TrainConfig {
        batch,
        optimizer,
        hidden: layers[1..layers.len() - 1].to_vec(),
        ..TrainConfig::default()
    };
    config.data.kind = Synthetic::Spiral;
    config.data.classes = *layers.last().unwrap_or(&3);
    let share = f64::from(config.data.test_fraction);
    config.data.samples = config
        .data
        .samples
        .max((batch as f64 / (1.0 - share)).ceil() as usize + 1);
    let data = if layers[0] == 2 {
        Dataset::generate(&config.data).map_err(|e| BackendError::Setup(e.to_string()))?
    } else {
        // A tenth held out for testing, as `Dataset::random` splits.
        let rows = config
            .data
            .samples
            .max((batch as f64 / 0.9).ceil() as usize + 1);
        Dataset::random(layers[0], config.data.classes, rows, config.data.seed)
    };
    Session::with_data(config, data).map_err(|e| BackendError::Setup(e.to_string()))
}

/// The median measured step time of `session`, ms.
fn step_time_ms(
    backend: &mut dyn Backend,
    session: &Session,
    seconds: f64,
) -> Result<f64, BackendError> {
    let plan = BenchPlan {
        warmup_steps: 5,
        repeats: 5,
        steps_per_run: 0,
        target_run_s: seconds,
    };
    let m = super::measure(backend, session, plan)?;
    Ok(median_of_sorted(&m.sorted_step_times_ms()))
}

/// The predicted step time of `session` on `profile`, ms.
fn predict_ms(profile: &Profile, session: &Session) -> f64 {
    let c = &session.config;
    predicted_ms(profile, &c.model_spec(&session.data), c.batch, c.optimizer)
}

/// The predicted FP32 step time of `spec` at `batch` rows with `optimizer`, the loader hidden,
/// ms.
fn predicted_ms(
    profile: &Profile,
    spec: &ModelSpec,
    batch: usize,
    optimizer: OptimizerKind,
) -> f64 {
    let ops = step_ops(spec, batch, Recipe::fp32(optimizer), profile.device());
    predict(profile, &ops, Precision::Fp32, batch, (0.0, true)).step_time_ms
}

/// One configuration of the check: predicted and measured.
#[derive(Clone, Debug, Serialize)]
pub struct GridRow {
    /// The layers.
    pub layers: Vec<usize>,
    /// Rows per step.
    pub batch: usize,
    /// The optimizer.
    pub optimizer: OptimizerKind,
    /// Predicted from the calibrated profile, ms (simulated).
    pub predicted_ms: f64,
    /// Measured in this run, ms.
    pub measured_ms: f64,
    /// `predicted / measured - 1`.
    pub error: f64,
}

/// The summary of a grid check's `rows`, taken now, with how the machine's speed went while
/// they were measured.
pub fn grid_check(rows: &[GridRow], steadiness: Steadiness) -> GridCheck {
    let pairs: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (r.predicted_ms, r.measured_ms))
        .collect();
    let now = jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .unwrap_or_else(|_| jiff::Timestamp::now());
    GridCheck::of(&pairs, now.to_string(), Some(steadiness))
}

/// The check's grid: widths 16 to 1024, batches 1 to 4096, SGD and Adam, on the spiral; and an
/// MNIST-shaped narrow network, 784 inputs through 32 units, whose large batches move far more
/// activations than they multiply (its step at batch 4096 was predicted 3× too fast when only
/// products and updates were probed).
pub fn grid() -> Vec<GridPoint> {
    let mut grid = Vec::new();
    for width in [16, 64, 256, 1024] {
        for batch in [1, 16, 256, 4096] {
            for optimizer in [OptimizerKind::Sgd, OptimizerKind::Adam] {
                grid.push((vec![2, width, width, 3], batch, optimizer));
            }
        }
    }
    for batch in [16, 256, 4096] {
        grid.push((vec![784, 32, 10], batch, OptimizerKind::Sgd));
    }
    grid
}

/// Splits `grid` into the configurations whose step `profile` predicts under `limit_ms`, and
/// those left out: on a software adapter a 1024-wide layer at batch 4096 takes many seconds a
/// step, too long to time a dozen of.
pub fn affordable(
    grid: Vec<GridPoint>,
    profile: &Profile,
    limit_ms: f64,
) -> (Vec<GridPoint>, Vec<GridPoint>) {
    grid.into_iter().partition(|(layers, batch, optimizer)| {
        // The model `session` trains on the spiral, without generating the data.
        let spec = ModelSpec {
            conv: None,
            list: None,
            layers: layers.clone(),
            activation: crate::backend::Activation::Relu,
            loss: crate::nn::Loss::SoftmaxCrossEntropy,
        };
        predicted_ms(profile, &spec, *batch, *optimizer) < limit_ms
    })
}

/// One configuration of the grid: layers, batch, optimizer.
pub type GridPoint = (Vec<usize>, usize, OptimizerKind);

/// Predicts and measures each configuration of `grid` on `backend` with `profile`, reporting
/// each row as it is measured and checking the machine's speed between rows with `watch`.
pub fn check(
    backend: &mut dyn Backend,
    profile: &Profile,
    grid: &[GridPoint],
    seconds_each: f64,
    watch: &mut LoadWatch,
    report: &mut dyn FnMut(&GridRow),
) -> Result<Vec<GridRow>, BackendError> {
    let mut rows = Vec::new();
    for (layers, batch, optimizer) in grid {
        let s = session(layers, *batch, *optimizer)?;
        let mut measured = None;
        // Inside the backend's context (the CPU's own thread pool), one configuration at a
        // time, so each row is reported as it comes.
        backend.enter(&mut |b| {
            measured = Some(step_time_ms(b, &s, seconds_each));
            watch.look();
        });
        let measured_ms =
            measured.unwrap_or_else(|| Err(BackendError::Setup("the step did not run".into())))?;
        let predicted_ms = predict_ms(profile, &s);
        let row = GridRow {
            layers: layers.clone(),
            batch: *batch,
            optimizer: *optimizer,
            predicted_ms,
            measured_ms,
            error: predicted_ms / measured_ms - 1.0,
        };
        report(&row);
        rows.push(row);
    }
    Ok(rows)
}
