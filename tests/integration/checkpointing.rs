//! Activation checkpointing: a checkpointed network trains as the unchecked one does, step by
//! step, on both devices, while holding fewer activation bytes — exactly as many as the
//! estimator says.

use batchscope::backend::{Activation, Backend};
use batchscope::data::ImageShape;
use batchscope::memory::Role;
use batchscope::nn::{
    ConvStack, GptShape, LayerSpec, Loss, ModelSpec, Network, OptimizerKind, Shape, Training,
    gpt_layers,
};
use batchscope::precision::Precision;
use batchscope::sim::estimate::{self, Levers};

use crate::common::Rng64;

const STEPS: usize = 50;
const BATCH: usize = 6;

/// An MLP of four hidden layers, whose segments are two layers each.
fn mlp() -> ModelSpec {
    ModelSpec {
        conv: None,
        list: None,
        layers: vec![5, 16, 16, 16, 16, 3],
        activation: Activation::Tanh,
        loss: Loss::SoftmaxCrossEntropy,
    }
}

/// A two-block CNN on 8×8 grey images.
fn cnn() -> ModelSpec {
    ModelSpec {
        conv: Some(ConvStack {
            image: ImageShape {
                height: 8,
                width: 8,
                channels: 1,
            },
            channels: vec![3, 4],
            kernel: 3,
        }),
        list: None,
        layers: vec![64, 12, 3],
        activation: Activation::Relu,
        loss: Loss::SoftmaxCrossEntropy,
    }
}

/// A three-block GPT over windows of 5 tokens of a vocabulary of 7.
fn gpt() -> ModelSpec {
    let shape = GptShape {
        vocab: 7,
        width: 8,
        heads: 2,
        blocks: 3,
    };
    let mut list = gpt_layers(shape);
    list.push(LayerSpec::Dense { units: shape.vocab });
    ModelSpec::from_layers(Shape::Flat(5), list, Loss::SoftmaxCrossEntropy).expect("fits")
}

/// `STEPS` seeded batches for `spec`, three distinct ones in turn (which the models learn by
/// heart, so that the loss falls): features in [-1, 1] (token ids for a GPT) and a class a row
/// (a next token a position).
fn batches(spec: &ModelSpec) -> Vec<(Vec<f32>, Vec<f32>)> {
    let mut rng = Rng64::new(17);
    let features = spec.inputs();
    let tokens = batchscope::nn::reads_tokens(&spec.layer_specs());
    // A class a row, or a token a position: the width of the last layer's rows.
    let classes = spec.footprints().last().expect("layers").shape.row_width();
    let targets = if tokens { BATCH * features } else { BATCH };
    let distinct: Vec<(Vec<f32>, Vec<f32>)> = (0..3)
        .map(|_| {
            let mut draw = |n: usize, ids: bool| -> Vec<f32> {
                (0..n)
                    .map(|_| {
                        let v = rng.next() as f32;
                        if ids {
                            (((v + 1.0) * 0.5 * classes as f32) as usize % classes) as f32
                        } else {
                            v
                        }
                    })
                    .collect()
            };
            (draw(BATCH * features, tokens), draw(targets, true))
        })
        .collect();
    distinct.iter().cycle().take(STEPS).cloned().collect()
}

/// Each step's loss of `spec` trained with Adam at `checkpoint` blocks a segment, and the
/// activation bytes the device holds.
fn run(b: &mut dyn Backend, spec: &ModelSpec, checkpoint: u32) -> (Vec<f32>, u64) {
    let before = b.memory().role(Role::Activations);
    let training = Training {
        optimizer: OptimizerKind::Adam,
        batch: BATCH,
        seed: 4,
        precision: Precision::Fp32,
        eval_rows: BATCH,
        checkpoint,
    };
    let mut net = Network::with_precision(b, spec, training).expect("model");
    let held = b.memory().role(Role::Activations) - before;
    let mut losses = Vec::with_capacity(STEPS);
    for (x, y) in batches(spec) {
        net.load_batch(b, &x, &y).expect("batch");
        net.train_step(b, 3e-3).expect("step");
        losses.push(net.take_stats(b).expect("stats").loss);
    }
    assert_eq!(net.checkpoints(), checkpoint > 0);
    (losses, held)
}

/// For each model: 50 steps checkpointed give the unchecked losses within 1e-6 relative,
/// the activations held fall, and they are the estimator's bytes exactly (both ways).
fn checkpointed_runs_train_alike(b: &mut dyn Backend) {
    for (name, spec) in [("mlp", mlp()), ("cnn", cnn()), ("gpt", gpt())] {
        let (plain, plain_bytes) = run(b, &spec, 0);
        let (checked, checked_bytes) = run(b, &spec, 1);
        for (step, (p, c)) in plain.iter().zip(&checked).enumerate() {
            let rel = (p - c).abs() / p.abs().max(1e-12);
            assert!(
                rel <= 1e-6,
                "{name} step {}: {p} against {c} checkpointed",
                step + 1
            );
        }
        assert!(
            plain.last() < plain.first(),
            "{name} learns: {:?}",
            (plain.first(), plain.last())
        );
        assert!(
            checked_bytes < plain_bytes,
            "{name}: {checked_bytes} bytes checkpointed, {plain_bytes} not"
        );
        for (checkpoint, held) in [(0, plain_bytes), (1, checked_bytes)] {
            let levers = Levers {
                checkpoint,
                ..Levers::NONE
            };
            let e = estimate::network_with(
                &spec,
                OptimizerKind::Adam,
                BATCH,
                Precision::Fp32,
                BATCH,
                levers,
            );
            assert_eq!(e.bytes(Role::Activations), held, "{name} at {checkpoint}");
        }
    }
}

on_both_devices! {
    checkpointed_runs => super::checkpointed_runs_train_alike;
}
