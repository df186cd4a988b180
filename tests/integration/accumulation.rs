//! Gradient accumulation: micro-batches whose gradients one update sums give the weights one
//! batch of them all would, on both devices (the same rows in the same order).

use batchscope::backend::{Activation, Backend};
use batchscope::nn::{Loss, ModelSpec, Network, OptimizerKind};

use crate::common::Rng64;

const MICRO: usize = 8;
const PARTS: u32 = 4;
const STEPS: usize = 20;

/// `STEPS` batches of `PARTS · MICRO` rows of 5 inputs and a class of 3.
fn batches() -> Vec<(Vec<f32>, Vec<f32>)> {
    let mut rng = Rng64::new(11);
    let rows = MICRO * PARTS as usize;
    (0..STEPS)
        .map(|_| {
            let x: Vec<f32> = (0..rows * 5).map(|_| rng.next() as f32).collect();
            let y: Vec<f32> = x
                .chunks(5)
                .map(|r| {
                    if r[0] + r[1] > 0.0 {
                        0.0
                    } else if r[2] > 0.0 {
                        1.0
                    } else {
                        2.0
                    }
                })
                .collect();
            (x, y)
        })
        .collect()
}

fn spec() -> ModelSpec {
    ModelSpec {
        conv: None,
        list: None,
        layers: vec![5, 16, 16, 3],
        activation: Activation::Tanh,
        loss: Loss::SoftmaxCrossEntropy,
    }
}

/// The largest difference between two models' parameters over the largest value: their
/// relative distance.
fn distance(a: &[(Vec<f32>, Vec<f32>)], b: &[(Vec<f32>, Vec<f32>)]) -> f64 {
    let values = |m: &[(Vec<f32>, Vec<f32>)]| -> Vec<f64> {
        m.iter()
            .flat_map(|(w, b)| w.iter().chain(b))
            .map(|&v| f64::from(v))
            .collect()
    };
    let (a, b) = (values(a), values(b));
    assert_eq!(a.len(), b.len());
    let largest = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let diff = a
        .iter()
        .zip(&b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    diff / largest
}

/// With SGD, four micro-batches of 8 accumulated give the weights of one batch of 32 within
/// 1e-6 relative after 20 updates; the statistics count every row; and a model that merely
/// updated after each micro-batch ends elsewhere (the check can fail).
fn micro_batches_sum_to_one_batch(b: &mut dyn Backend) {
    let data = batches();
    let lr = 0.2;
    let mut whole =
        Network::new(b, &spec(), OptimizerKind::Sgd, MICRO * PARTS as usize, 3).expect("model");
    for (x, y) in &data {
        whole.load_batch(b, x, y).expect("batch");
        whole.train_step(b, lr).expect("step");
    }
    let mut parts = Network::new(b, &spec(), OptimizerKind::Sgd, MICRO, 3).expect("model");
    parts.set_micro_batches(b, PARTS).expect("sums fit");
    let mut each = Network::new(b, &spec(), OptimizerKind::Sgd, MICRO, 3).expect("model");
    for (x, y) in &data {
        for k in 0..PARTS as usize {
            let rows = k * MICRO..(k + 1) * MICRO;
            let (xk, yk) = (&x[rows.start * 5..rows.end * 5], &y[rows]);
            parts.load_batch(b, xk, yk).expect("batch");
            parts.accumulate(b, k as u32).expect("micro-batch");
            each.load_batch(b, xk, yk).expect("batch");
            each.train_step(b, lr).expect("step");
        }
        parts.update(b, lr).expect("update");
    }
    let stats = parts.take_stats(b).expect("stats");
    assert_eq!(stats.rows, STEPS * MICRO * PARTS as usize);
    let (w, p, e) = (
        whole.read_parameters(b).expect("read"),
        parts.read_parameters(b).expect("read"),
        each.read_parameters(b).expect("read"),
    );
    let d = distance(&w, &p);
    assert!(d <= 1e-6, "accumulated vs one batch: {d:e} relative");
    let apart = distance(&w, &e);
    assert!(
        apart > 1e-3,
        "updating each micro-batch should differ: {apart:e}"
    );
    // A micro-batch past the count is refused, a whole step on an accumulating model, and a
    // count of zero.
    assert!(parts.accumulate(b, PARTS).is_err());
    assert!(parts.train_step(b, lr).is_err());
    assert!(parts.set_micro_batches(b, 0).is_err());
}

on_both_devices! {
    micro_batches => super::micro_batches_sum_to_one_batch;
}

/// A run set to accumulate: four micro-batches of 16 from the loader train the weights one
/// batch of 64 does (the loader hands out the same rows in the same order), each step counts
/// 64 samples, the gradients' sums are allocated and counted exactly as the estimator says,
/// and the activations are a micro-batch's.
fn a_run_accumulates_as_set(b: &mut dyn Backend) {
    use batchscope::data::source::DataSource;
    use batchscope::memory::Role;
    use batchscope::train::{Pipeline, Runner, Session, TrainConfig};
    let config = |batch, accumulate| TrainConfig {
        source: DataSource::Shipped("mnist".into()),
        hidden: vec![32],
        optimizer: OptimizerKind::Sgd,
        lr: 0.05,
        batch,
        accumulate,
        pipeline: Pipeline {
            record: false,
            ..Pipeline::default()
        },
        ..TrainConfig::default()
    };
    let run = |b: &mut dyn Backend, config: TrainConfig| {
        let session = Session::new(config).expect("valid");
        assert!(session.data.train_rows() >= STEPS * 64, "one epoch");
        let mut runner = Runner::new(b, &session).expect("fits");
        let memory = b.memory();
        let estimate = session.config.estimate(&session.data);
        for _ in 0..STEPS {
            runner.step(b, false).expect("step");
        }
        let log = runner.log(b).expect("log");
        let weights = runner.model().read_parameters(b).expect("read");
        (
            runner.batch(),
            runner.micro_batch(),
            memory,
            estimate,
            log,
            weights,
        )
    };
    let (batch, micro, whole_memory, _, whole_log, whole) = run(b, config(64, 1));
    assert_eq!((batch, micro), (64, 64));
    let (batch, micro, memory, estimate, log, parts) = run(b, config(16, 4));
    assert_eq!((batch, micro), (64, 16), "the batch is the update's");
    let d = distance(&whole, &parts);
    assert!(d <= 1e-6, "accumulated run vs one batch: {d:e} relative");
    assert_eq!(log.step, whole_log.step);
    let per_step = |l: &batchscope::train::StepLog| l.samples_per_s * l.step_time_ms / 1e3;
    assert!((per_step(&log) - 64.0).abs() < 1e-6, "{}", per_step(&log));
    let params = whole_memory.role(Role::Parameters);
    assert_eq!(
        memory.role(Role::Gradients),
        2 * params,
        "a sum beside each"
    );
    for role in [Role::Gradients, Role::Activations] {
        assert_eq!(memory.role(role), estimate.bytes(role), "{}", role.as_str());
    }
    assert_eq!(
        memory.role(Role::Activations) * 4,
        whole_memory.role(Role::Activations),
        "a micro-batch's activations"
    );
}

on_both_devices! {
    runner_accumulates => super::a_run_accumulates_as_set;
}
