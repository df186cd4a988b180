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
