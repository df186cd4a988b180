//! Layer normalisation and the activation layers (GELU above all) on both devices: the forward
//! values against f64 references written from the definitions, the gradients against central
//! finite differences of those references.

use crate::common;

use batchscope::backend::{Activation, Backend, Tensor};
use common::{Rng64, act64, assert_close, central_differences, upload};

const H: f64 = 1e-4;
const ABS: f64 = 2e-4;
const REL: f64 = 2e-3;
/// PyTorch's `LayerNorm` ε.
const EPS: f64 = 1e-5;

/// `LayerNorm` over each row of `x` (`[rows, n]`): `(x − μ) / √(σ² + ε) · gamma + beta`, the
/// biased variance, in f64.
fn layer_norm64(x: &[f64], gamma: &[f64], beta: &[f64], n: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(x.len());
    for row in x.chunks(n) {
        let (mean, r) = stats64(row);
        out.extend(
            row.iter()
                .zip(gamma.iter().zip(beta))
                .map(|(v, (g, b))| (v - mean) * r * g + b),
        );
    }
    out
}

/// A row's mean and `1 / √(σ² + ε)`.
fn stats64(row: &[f64]) -> (f64, f64) {
    let n = row.len() as f64;
    let mean = row.iter().sum::<f64>() / n;
    let variance = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    (mean, 1.0 / (variance + EPS).sqrt())
}

fn read(b: &mut dyn Backend, t: &Tensor) -> Vec<f32> {
    b.read(t).expect("read")
}

/// `LayerNorm` of `rows × n` under the loss `L = Σ LN(x) ⊙ R`: the output and the statistics
/// against the reference, `dx`, `dgamma` and `dbeta` against central differences. With
/// `constant_row`, the first row's features are all one value (a variance of zero).
fn layer_norm_case(b: &mut dyn Backend, (rows, n): (usize, usize), constant_row: bool) {
    let mut rng = Rng64::new(n as u64 + 7);
    let mut x = rng.vec(rows * n, 2.0);
    if constant_row {
        x[..n].fill(0.75);
    }
    let gamma: Vec<f64> = rng.vec(n, 0.5).iter().map(|g| 1.0 + g).collect();
    let beta = rng.vec(n, 0.5);
    let r = rng.vec(rows * n, 1.0);
    let loss = |x: &[f64], gamma: &[f64], beta: &[f64]| -> f64 {
        let out = layer_norm64(x, gamma, beta, n);
        out.iter().zip(&r).map(|(o, r)| o * r).sum()
    };
    let tx = upload(b, "x", rows, n, &x);
    let tg = upload(b, "gamma", 1, n, &gamma);
    let tb = upload(b, "beta", 1, n, &beta);
    let dout = upload(b, "dout", rows, n, &r);
    let mut out = b.zeros("out", rows, n).expect("alloc");
    let mut stats = b.zeros("stats", rows, 2).expect("alloc");
    let mut dx = b.zeros("dx", rows, n).expect("alloc");
    let mut dg = b.zeros("dgamma", 1, n).expect("alloc");
    let mut db = b.zeros("dbeta", 1, n).expect("alloc");
    b.layer_norm(&tx, (&tg, &tb), &mut out, &mut stats)
        .expect("layer_norm");
    b.layer_norm_backward(&tx, &dout, (&tg, &stats), &mut dx, (&mut dg, &mut db))
        .expect("layer_norm_backward");
    let what = |w: &str| format!("{rows}×{n} {w}");
    let want = layer_norm64(&x, &gamma, &beta, n);
    assert_close(&what("out"), &read(b, &out), &want, ABS, REL);
    let want_stats: Vec<f64> = x
        .chunks(n)
        .flat_map(|row| {
            let (mean, r) = stats64(row);
            [mean, r]
        })
        .collect();
    assert_close(&what("stats"), &read(b, &stats), &want_stats, ABS, REL);
    let checks = [
        (
            "dx",
            &dx,
            central_differences(&x, H, |v| loss(v, &gamma, &beta)),
        ),
        (
            "dgamma",
            &dg,
            central_differences(&gamma, H, |v| loss(&x, v, &beta)),
        ),
        (
            "dbeta",
            &db,
            central_differences(&beta, H, |v| loss(&x, &gamma, v)),
        ),
    ];
    for (name, tensor, numeric) in checks {
        assert_close(&what(name), &read(b, tensor), &numeric, ABS, REL);
    }
}

/// Widths below, at and past the GPU's 64 invocations a row (its strided loop running once,
/// exactly, and several times), a single feature, and a row of zero variance.
fn layer_norm(b: &mut dyn Backend) {
    for (shape, constant) in [
        ((5, 3), false),
        ((4, 64), false),
        ((3, 100), true),
        ((2, 300), false),
        ((3, 1), false),
        ((6, 16), true),
    ] {
        layer_norm_case(b, shape, constant);
    }
}

/// An activation as a layer of its own under `L = Σ act(x) ⊙ R`: the values against the
/// definition, `dx` against central differences. The inputs reach ±12, where GELU's tanh
/// saturates.
fn activation_case(b: &mut dyn Backend, act: Activation) {
    let (rows, n) = (7, 300);
    let mut rng = Rng64::new(act.code() as u64 + 101);
    let mut x = rng.vec(rows * n, 3.0);
    x[..4].copy_from_slice(&[0.25, 12.0, -12.0, 1e-3]);
    let r = rng.vec(rows * n, 1.0);
    let loss = |x: &[f64]| -> f64 { x.iter().zip(&r).map(|(&v, r)| act64(act, v) * r).sum() };
    let tx = upload(b, "x", rows, n, &x);
    let dout = upload(b, "dout", rows, n, &r);
    let mut out = b.zeros("out", rows, n).expect("alloc");
    let mut dx = b.zeros("dx", rows, n).expect("alloc");
    b.activation_forward(&tx, act, &mut out).expect("forward");
    b.activation_backward(&tx, &dout, act, &mut dx)
        .expect("backward");
    let want: Vec<f64> = x.iter().map(|&v| act64(act, v)).collect();
    let name = act.as_str();
    assert_close(&format!("{name} out"), &read(b, &out), &want, ABS, REL);
    let numeric = central_differences(&x, H, loss);
    assert_close(&format!("{name} dx"), &read(b, &dx), &numeric, ABS, REL);
}

fn gelu(b: &mut dyn Backend) {
    activation_case(b, Activation::Gelu);
}

/// Every other activation works as a layer of its own too.
fn other_activations(b: &mut dyn Backend) {
    for act in [Activation::Relu, Activation::Tanh, Activation::Sigmoid] {
        activation_case(b, act);
    }
}

/// GELU's derivative cannot come from its output: the ops that take it from there refuse it
/// with a typed error instead of a wrong gradient.
fn gelu_is_not_fused_backward(b: &mut dyn Backend) {
    let x = b.zeros("x", 2, 3).expect("alloc");
    let w = b.zeros("w", 3, 4).expect("alloc");
    let dz = b.zeros("dz", 2, 4).expect("alloc");
    let mut dx = b.zeros("dx", 2, 3).expect("alloc");
    let err = b
        .linear_backward_input(&dz, &w, &x, Activation::Gelu, &mut dx)
        .expect_err("GELU from its output");
    assert!(err.to_string().contains("gelu"), "{err}");
}

on_both_devices! {
    layer_norm_gradients => super::layer_norm;
    gelu_gradients => super::gelu;
    activation_layer_gradients => super::other_activations;
    gelu_is_refused_where_fused => super::gelu_is_not_fused_backward;
}

/// An MLP with `LayerNorm` and GELU between its dense layers, 100 steps of Adam in FP32 on each
/// device from the same weights and batches, with Adam and with `AdamW`: the losses agree within
/// 1e-4 relative at every step, and they fall.
#[test]
fn an_mlp_with_layer_norm_and_gelu_trains_alike_on_both_devices() {
    use batchscope::nn::{LayerSpec, Loss, ModelSpec, Network, OptimizerKind};
    let Some(mut gpu) = common::gpu() else { return };
    let mut cpu = common::cpu();
    let gelu = LayerSpec::Activation {
        function: Activation::Gelu,
    };
    let list = vec![
        LayerSpec::Dense { units: 32 },
        LayerSpec::LayerNorm,
        gelu,
        LayerSpec::Dense { units: 32 },
        LayerSpec::LayerNorm,
        gelu,
        LayerSpec::Dense { units: 3 },
    ];
    let (features, batch) = (8, 64);
    let input = batchscope::nn::Shape::Flat(features);
    let spec = ModelSpec::from_layers(input, list, Loss::SoftmaxCrossEntropy).expect("fits");
    // Each row's class is its largest of the first three features: something to learn.
    let mut rng = Rng64::new(5);
    let inputs: Vec<f32> = rng
        .vec(batch * features, 1.0)
        .iter()
        .map(|&v| v as f32)
        .collect();
    let targets: Vec<f32> = inputs
        .chunks(features)
        .map(|row| (0..3).fold(0, |best, j| if row[j] > row[best] { j } else { best }) as f32)
        .collect();
    let run = |b: &mut dyn Backend, optimizer| -> Vec<f32> {
        let mut net = Network::new(b, &spec, optimizer, batch, 3).expect("model");
        net.load_batch(b, &inputs, &targets).expect("batch");
        (0..100)
            .map(|_| {
                net.train_step(b, 0.01).expect("step");
                net.take_stats(b).expect("stats").loss
            })
            .collect()
    };
    // Adam, and AdamW (its decay on the dense weights only, not on LayerNorm's scale).
    for optimizer in [OptimizerKind::Adam, OptimizerKind::AdamW] {
        let (on_cpu, on_gpu) = (run(&mut cpu, optimizer), run(&mut gpu, optimizer));
        for (step, (c, g)) in on_cpu.iter().zip(&on_gpu).enumerate() {
            let rel = ((c - g) / c).abs();
            assert!(
                rel <= 1e-4,
                "{optimizer:?} step {step}: cpu {c} gpu {g} (relative {rel:e})"
            );
        }
        assert!(
            on_cpu[99] < 0.5 * on_cpu[0],
            "{optimizer:?}: {} → {}",
            on_cpu[0],
            on_cpu[99]
        );
    }
}

/// The models of the estimator's test: one with every kind of layer (convolutions, an
/// activation fused and one not, pooling, flattening, dense layers, `LayerNorm`, GELU), one
/// that starts with a `LayerNorm`, and a GPT (embedding, attention, residual connections).
fn every_kind_models() -> Vec<(batchscope::nn::ModelSpec, usize)> {
    use batchscope::data::ImageShape;
    use batchscope::nn::{LayerSpec, Loss, ModelSpec, Shape};
    let act = |function| LayerSpec::Activation { function };
    let image = Shape::Image(ImageShape {
        width: 8,
        height: 8,
        channels: 1,
    });
    let every_kind = vec![
        LayerSpec::Conv2d {
            filters: 4,
            kernel: 3,
        },
        act(Activation::Relu),
        LayerSpec::MaxPool2d,
        LayerSpec::Conv2d {
            filters: 6,
            kernel: 3,
        },
        act(Activation::Gelu),
        LayerSpec::MaxPool2d,
        LayerSpec::Flatten,
        LayerSpec::Dense { units: 16 },
        LayerSpec::LayerNorm,
        act(Activation::Tanh),
        LayerSpec::Dense { units: 10 },
    ];
    let norm_first = vec![
        LayerSpec::LayerNorm,
        LayerSpec::Dense { units: 8 },
        act(Activation::Gelu),
        LayerSpec::Dense { units: 3 },
    ];
    // A one-block GPT: an embedding, attention, residual connections, sequences throughout.
    let mut gpt = batchscope::nn::gpt_layers(batchscope::nn::GptShape {
        vocab: 7,
        width: 8,
        heads: 2,
        blocks: 1,
    });
    gpt.push(LayerSpec::Dense { units: 7 });
    [
        (image, every_kind, 10),
        (Shape::Flat(5), norm_first, 3),
        (Shape::Flat(5), gpt, 7),
    ]
    .into_iter()
    .map(|(input, list, classes)| {
        let loss = Loss::SoftmaxCrossEntropy;
        (
            ModelSpec::from_layers(input, list, loss).expect("fits"),
            classes,
        )
    })
    .collect()
}

/// After a training step on a fresh backend, the estimator's bytes equal the allocated ones,
/// role by role.
fn estimator_case(
    b: &mut dyn Backend,
    (spec, classes): &(batchscope::nn::ModelSpec, usize),
    precision: batchscope::precision::Precision,
) {
    use batchscope::nn::{Network, OptimizerKind, Training};
    use batchscope::sim::estimate;
    let batch = 6;
    let training = Training {
        optimizer: OptimizerKind::Adam,
        batch,
        seed: 1,
        precision,
        eval_rows: 1024,
        checkpoint: 0,
    };
    let mut net = Network::with_precision(b, spec, training).expect("model");
    let inputs = vec![0.5f32; batch * spec.inputs()];
    // A target a row of the output: a language model's, one a position.
    let per = if batchscope::nn::reads_tokens(&spec.layer_specs()) {
        spec.inputs()
    } else {
        1
    };
    let targets: Vec<f32> = (0..batch * per).map(|r| (r % classes) as f32).collect();
    net.load_batch(b, &inputs, &targets).expect("batch");
    net.train_step(b, 0.01).expect("step");
    let e = estimate::network(spec, OptimizerKind::Adam, batch, precision, 1024);
    let measured = b.memory();
    for line in &e.lines {
        assert_eq!(
            line.bytes,
            measured.role(line.role),
            "{:?} {precision:?} {}: {}",
            spec.list,
            line.role.as_str(),
            line.formula
        );
    }
}

#[test]
fn the_estimator_counts_every_kind_on_the_cpu() {
    use batchscope::precision::Precision;
    for model in every_kind_models() {
        for precision in Precision::ALL {
            estimator_case(&mut common::cpu(), &model, precision);
        }
    }
}

#[test]
fn the_estimator_counts_every_kind_on_the_gpu() {
    use batchscope::precision::Precision;
    for model in every_kind_models() {
        for precision in Precision::ALL {
            let Some(mut gpu) = common::gpu() else { return };
            estimator_case(&mut gpu, &model, precision);
        }
    }
}
