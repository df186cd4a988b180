//! Every layer, loss and optimizer of both backends against central finite differences in f64.
//!
//! The analytic gradients come from the backend in f32; the numerical ones from an independent
//! f64 reference of the same function, so a wrong formula shared by both backends still fails.

use crate::common;

use batchscope::backend::{Activation, AdamHyper, Backend};
use batchscope::nn::{Loss, ModelSpec, Network, OptimizerKind};
use common::reference::cross_entropy64;
use common::{
    Params64, Rng64, act64, assert_close, assert_layer_gradients, central_differences,
    gradient_check_parameters, to_f32, upload,
};

const H: f64 = 1e-4;
const ABS: f64 = 2e-4;
const REL: f64 = 2e-3;

/// `act(x · w + b)` in f64, `x` is `[rows, fan_in]`, `w` is `[fan_in, fan_out]`.
fn dense64(
    x: &[f64],
    w: &[f64],
    b: &[f64],
    fan_in: usize,
    fan_out: usize,
    act: Activation,
) -> Vec<f64> {
    let rows = x.len() / fan_in;
    let mut out = vec![0.0; rows * fan_out];
    for r in 0..rows {
        for j in 0..fan_out {
            let z: f64 = (0..fan_in)
                .map(|k| x[r * fan_in + k] * w[k * fan_out + j])
                .sum::<f64>()
                + b[j];
            out[r * fan_out + j] = act64(act, z);
        }
    }
    out
}

/// A dense layer with activation `act` followed by a linear layer, under the loss
/// `L = Σ out ⊙ R`. Checks ∂L/∂w1, ∂L/∂b1, ∂L/∂w2, ∂L/∂b2 and ∂L/∂x, which exercises
/// `linear_forward`, `linear_backward_params` and `linear_backward_input` with `act'`.
fn dense_layer_case(b: &mut dyn Backend, act: Activation) {
    dense_layers_case(b, act, (5, 4, 6, 3));
}

/// As [`dense_layer_case`] with the given `(rows, inputs, hidden, outputs)`.
fn dense_layers_case(
    b: &mut dyn Backend,
    act: Activation,
    (rows, n_in, n_hid, n_out): (usize, usize, usize, usize),
) {
    let mut rng = Rng64::new(act.code() as u64 + 11);
    let x = rng.vec(rows * n_in, 1.0);
    let w1 = rng.vec(n_in * n_hid, 0.8);
    let b1 = rng.vec(n_hid, 0.3);
    let w2 = rng.vec(n_hid * n_out, 0.8);
    let b2 = rng.vec(n_out, 0.3);
    let r = rng.vec(rows * n_out, 1.0);
    // f64 reference: L(x, w1, b1, w2, b2) = Σ dense(dense(x, w1, b1, act), w2, b2, id) ⊙ R.
    let loss = |x: &[f64], w1: &[f64], b1: &[f64], w2: &[f64], b2: &[f64]| -> f64 {
        let h = dense64(x, w1, b1, n_in, n_hid, act);
        let o = dense64(&h, w2, b2, n_hid, n_out, Activation::Identity);
        o.iter().zip(&r).map(|(o, r)| o * r).sum()
    };
    let tx = upload(b, "x", rows, n_in, &x);
    let tw1 = upload(b, "w1", n_in, n_hid, &w1);
    let tb1 = upload(b, "b1", 1, n_hid, &b1);
    let tw2 = upload(b, "w2", n_hid, n_out, &w2);
    let tb2 = upload(b, "b2", 1, n_out, &b2);
    // dL/d out = R, so the output layer's dz is R itself.
    let dz2 = upload(b, "dz2", rows, n_out, &r);
    let mut h = b.zeros("h", rows, n_hid).expect("alloc");
    let mut out = b.zeros("out", rows, n_out).expect("alloc");
    let mut dz1 = b.zeros("dz1", rows, n_hid).expect("alloc");
    let mut dx = b.zeros("dx", rows, n_in).expect("alloc");
    let mut dw1 = b.zeros("dw1", n_in, n_hid).expect("alloc");
    let mut db1 = b.zeros("db1", 1, n_hid).expect("alloc");
    let mut dw2 = b.zeros("dw2", n_hid, n_out).expect("alloc");
    let mut db2 = b.zeros("db2", 1, n_out).expect("alloc");
    b.linear_forward(&tx, &tw1, &tb1, act, &mut h)
        .expect("forward 1");
    b.linear_forward(&h, &tw2, &tb2, Activation::Identity, &mut out)
        .expect("forward 2");
    b.linear_backward_params(&h, &dz2, &mut dw2, &mut db2)
        .expect("params 2");
    b.linear_backward_input(&dz2, &tw2, &h, act, &mut dz1)
        .expect("input 2");
    b.linear_backward_params(&tx, &dz1, &mut dw1, &mut db1)
        .expect("params 1");
    // The input has no activation before it: act' = 1.
    b.linear_backward_input(&dz1, &tw1, &tx, Activation::Identity, &mut dx)
        .expect("input 1");

    let want_out = dense64(
        &dense64(&x, &w1, &b1, n_in, n_hid, act),
        &w2,
        &b2,
        n_hid,
        n_out,
        Activation::Identity,
    );
    assert_close("forward", &b.read(&out).expect("read"), &want_out, ABS, REL);
    let name = act.as_str();
    let checks: [(&str, &batchscope::backend::Tensor, Vec<f64>); 5] = [
        (
            "dw1",
            &dw1,
            central_differences(&w1, H, |v| loss(&x, v, &b1, &w2, &b2)),
        ),
        (
            "db1",
            &db1,
            central_differences(&b1, H, |v| loss(&x, &w1, v, &w2, &b2)),
        ),
        (
            "dw2",
            &dw2,
            central_differences(&w2, H, |v| loss(&x, &w1, &b1, v, &b2)),
        ),
        (
            "db2",
            &db2,
            central_differences(&b2, H, |v| loss(&x, &w1, &b1, &w2, v)),
        ),
        (
            "dx",
            &dx,
            central_differences(&x, H, |v| loss(v, &w1, &b1, &w2, &b2)),
        ),
    ];
    for (what, tensor, numeric) in checks {
        assert_close(
            &format!("{name} {what}"),
            &b.read(tensor).expect("read"),
            &numeric,
            ABS,
            REL,
        );
    }
}

fn dense_identity(b: &mut dyn Backend) {
    dense_layer_case(b, Activation::Identity);
}
fn dense_relu(b: &mut dyn Backend) {
    dense_layer_case(b, Activation::Relu);
}
fn dense_tanh(b: &mut dyn Backend) {
    dense_layer_case(b, Activation::Tanh);
}
fn dense_sigmoid(b: &mut dyn Backend) {
    dense_layer_case(b, Activation::Sigmoid);
}
/// Large enough that the CPU takes its `gemm` path (and its parallel epilogue) for every
/// product, and the GPU runs several tiles with partial edges.
fn dense_wide_tanh(b: &mut dyn Backend) {
    dense_layers_case(b, Activation::Tanh, (40, 30, 50, 20));
}

/// Softmax cross-entropy: the loss in `stats` against the f64 formula, and
/// `dlogits` against central differences of the mean loss.
fn softmax_cross_entropy(b: &mut dyn Backend) {
    // 300 rows: more than the shader's 256-wide workgroup, so its strided loop runs twice.
    let (rows, classes) = (300, 4);
    let mut rng = Rng64::new(3);
    let logits = rng.vec(rows * classes, 3.0);
    let targets: Vec<usize> = (0..rows).map(|r| (r * 7 + 1) % classes).collect();
    let tl = upload(b, "logits", rows, classes, &logits);
    let tt = upload(
        b,
        "targets",
        rows,
        1,
        &targets.iter().map(|&t| t as f64).collect::<Vec<_>>(),
    );
    let mut dl = b.zeros("dlogits", rows, classes).expect("alloc");
    let mut stats = b.zeros("stats", 1, 3).expect("alloc");
    b.softmax_cross_entropy(&tl, &tt, &mut dl, &mut stats, 1.0)
        .expect("loss");
    let s = b.read(&stats).expect("read");
    let want_loss = cross_entropy64(&logits, &targets, classes);
    assert_close("mean loss", &[s[0] / s[2]], &[want_loss], 1e-5, 1e-5);
    assert_eq!(s[2], rows as f32);
    let correct = (0..rows)
        .filter(|&r| {
            let row = &logits[r * classes..(r + 1) * classes];
            let best = (0..classes).fold(0, |best, j| if row[j] > row[best] { j } else { best });
            best == targets[r]
        })
        .count();
    assert_eq!(s[1], correct as f32, "correct count");
    let numeric = central_differences(&logits, H, |v| cross_entropy64(v, &targets, classes));
    assert_close("dlogits", &b.read(&dl).expect("read"), &numeric, 1e-6, REL);
    // Statistics accumulate across calls until read and reset.
    b.softmax_cross_entropy(&tl, &tt, &mut dl, &mut stats, 1.0)
        .expect("loss");
    assert_eq!(b.read(&stats).expect("read")[2], 2.0 * rows as f32);
}

/// Mean squared error over all elements in f64: `Σ (p − y)² / n`.
fn mse64(pred: &[f64], targets: &[f64]) -> f64 {
    pred.iter()
        .zip(targets)
        .map(|(p, y)| (p - y).powi(2))
        .sum::<f64>()
        / pred.len() as f64
}

/// Mean squared error: the loss and mean absolute error in `stats` against the f64 formulas, and
/// `dpred` against central differences of the mean loss (`∂L/∂p = 2 (p − y) / n`).
fn mse_loss(b: &mut dyn Backend) {
    // 300 rows of 2 outputs: more rows than the shader's workgroup, and more than one output per
    // row, so the per-row averaging is exercised too.
    let (rows, outputs) = (300, 2);
    let mut rng = Rng64::new(4);
    let pred = rng.vec(rows * outputs, 3.0);
    let targets = rng.vec(rows * outputs, 2.0);
    let tp = upload(b, "pred", rows, outputs, &pred);
    let tt = upload(b, "targets", rows, outputs, &targets);
    let mut dp = b.zeros("dpred", rows, outputs).expect("alloc");
    let mut stats = b.zeros("stats", 1, 3).expect("alloc");
    b.mse_loss(&tp, &tt, &mut dp, &mut stats, 1.0)
        .expect("loss");
    let s = b.read(&stats).expect("read");
    assert_eq!(s[2], rows as f32);
    assert_close(
        "mean loss",
        &[s[0] / s[2]],
        &[mse64(&pred, &targets)],
        1e-5,
        1e-5,
    );
    let mae = pred
        .iter()
        .zip(&targets)
        .map(|(p, y)| (p - y).abs())
        .sum::<f64>()
        / pred.len() as f64;
    assert_close("mean absolute error", &[s[1] / s[2]], &[mae], 1e-5, 1e-5);
    let numeric = central_differences(&pred, H, |v| mse64(v, &targets));
    assert_close("dpred", &b.read(&dp).expect("read"), &numeric, 1e-6, REL);
    // A target tensor of the wrong shape is refused, not read past its end.
    let short = b.zeros("short", rows, 1).expect("alloc");
    assert!(b.mse_loss(&tp, &short, &mut dp, &mut stats, 1.0).is_err());
}

/// The i-th term of the objective: `½ a_i (v − c_i)² + sin(v)`, a bowl with some curvature.
fn summand(i: usize, v: f64) -> f64 {
    let a = 1.0 + (i % 10) as f64 * 0.1;
    let c = (i as f64 * 0.37).sin();
    0.5 * a * (v - c).powi(2) + v.sin()
}

/// `f(p) = Σ_i summand(i, p_i)`. The tests take its gradient by central differences and hand it
/// to the optimizer, whose update is checked against the formula in f64.
fn objective(p: &[f64]) -> f64 {
    p.iter().enumerate().map(|(i, &v)| summand(i, v)).sum()
}

fn optimizer_case(b: &mut dyn Backend, kind: OptimizerKind) {
    // 70,000 values: several hundred workgroups, and a partial last one.
    let n = 70_000;
    let start = Rng64::new(5).vec(n, 2.0);
    let mut p64 = start.clone();
    let mut tp = upload(b, "p", 1, n, &p64);
    let mut tg = b.zeros("g", 1, n).expect("alloc");
    let mut s1 = b.zeros("s1", 1, n).expect("alloc");
    let mut s2 = b.zeros("s2", 1, n).expect("alloc");
    let (mut m64, mut v64) = (vec![0.0f64; n], vec![0.0f64; n]);
    let (lr, mu, b1, b2, eps) = (0.05f64, 0.9f64, 0.9f64, 0.999f64, 1e-8f64);
    for step in 1..=3u32 {
        // The objective is separable, so the central difference along p_i needs only its term.
        let grad: Vec<f64> = (0..n)
            .map(|i| (summand(i, p64[i] + H) - summand(i, p64[i] - H)) / (2.0 * H))
            .collect();
        // Cross-check the separable shortcut against full central differences on a few entries.
        if step == 1 {
            let head: Vec<f64> = p64[..8].to_vec();
            let full = central_differences(&head, H, objective);
            for (i, (g, f)) in grad.iter().zip(&full).enumerate() {
                assert!((g - f).abs() < 1e-6, "gradient shortcut {i}: {g} vs {f}");
            }
        }
        b.write(&mut tg, &to_f32(&grad)).expect("write grad");
        // Round the reference inputs the way the device sees them.
        let g32: Vec<f64> = grad.iter().map(|&g| f64::from(g as f32)).collect();
        match kind {
            OptimizerKind::Sgd => {
                b.sgd_step(&mut tp, &tg, lr as f32).expect("sgd");
                for (p, g) in p64.iter_mut().zip(&g32) {
                    *p -= lr * g;
                }
            }
            OptimizerKind::Momentum => {
                b.momentum_step(&mut tp, &tg, &mut s1, lr as f32, mu as f32)
                    .expect("momentum");
                for ((p, g), v) in p64.iter_mut().zip(&g32).zip(&mut m64) {
                    *v = mu * *v + g;
                    *p -= lr * *v;
                }
            }
            OptimizerKind::Adam | OptimizerKind::AdamW => {
                // torch.optim.AdamW: the value shrinks by 1 − lr·decay, then Adam's step.
                let decay = if kind == OptimizerKind::AdamW {
                    0.01
                } else {
                    0.0
                };
                let hyper = AdamHyper {
                    lr: lr as f32,
                    beta1: b1 as f32,
                    beta2: b2 as f32,
                    eps: eps as f32,
                    step,
                    weight_decay: decay as f32,
                };
                b.adam_step(&mut tp, &tg, &mut s1, &mut s2, hyper)
                    .expect("adam");
                for (((p, g), m), v) in p64.iter_mut().zip(&g32).zip(&mut m64).zip(&mut v64) {
                    *p *= 1.0 - lr * decay;
                    *m = b1 * *m + (1.0 - b1) * g;
                    *v = b2 * *v + (1.0 - b2) * g * g;
                    let m_hat = *m / (1.0 - b1.powi(step as i32));
                    let v_hat = *v / (1.0 - b2.powi(step as i32));
                    *p -= lr * m_hat / (v_hat.sqrt() + eps);
                }
            }
        }
        let got = b.read(&tp).expect("read");
        assert_close(
            &format!("{} step {step}", kind.as_str()),
            &got,
            &p64,
            1e-5,
            1e-5,
        );
        p64 = got.iter().map(|&v| f64::from(v)).collect();
    }
    // Descending: the objective went down.
    assert!(
        objective(&p64) < objective(&start),
        "{} did not descend",
        kind.as_str()
    );
}

fn sgd(b: &mut dyn Backend) {
    optimizer_case(b, OptimizerKind::Sgd);
}
fn momentum(b: &mut dyn Backend) {
    optimizer_case(b, OptimizerKind::Momentum);
}
fn adam(b: &mut dyn Backend) {
    optimizer_case(b, OptimizerKind::Adam);
}
fn adamw(b: &mut dyn Backend) {
    optimizer_case(b, OptimizerKind::AdamW);
}

/// `AdamW` through a layer's update (the GPU's one dispatch for both tensors, the CPU's one
/// after the other): with no gradient Adam's step is zero, so the weights shrink by exactly
/// `1 − lr · decay` and the biases do not move.
fn adamw_decays_the_weights_not_the_biases(b: &mut dyn Backend) {
    use batchscope::backend::{ParamTensors, UpdateStep};
    let (lr, decay) = (0.1f32, 0.01f32);
    let w0: Vec<f32> = (0..300).map(|i| i as f32 * 0.01 - 1.5).collect();
    let b0: Vec<f32> = (0..30).map(|i| i as f32 * 0.1 - 1.0).collect();
    let mut w = b.zeros("w", 10, 30).expect("alloc");
    let mut bias = b.zeros("b", 1, 30).expect("alloc");
    b.write(&mut w, &w0).expect("write");
    b.write(&mut bias, &b0).expect("write");
    let (gw, gb) = (
        b.zeros("gw", 10, 30).expect("alloc"),
        b.zeros("gb", 1, 30).expect("alloc"),
    );
    let mut sw = [
        b.zeros("mw", 10, 30).expect("alloc"),
        b.zeros("vw", 10, 30).expect("alloc"),
    ];
    let mut sb = [
        b.zeros("mb", 1, 30).expect("alloc"),
        b.zeros("vb", 1, 30).expect("alloc"),
    ];
    let hyper = AdamHyper {
        weight_decay: decay,
        ..AdamHyper::defaults(lr, 1)
    };
    let layer = [
        ParamTensors {
            value: &mut w,
            grad: &gw,
            state: &mut sw,
        },
        ParamTensors {
            value: &mut bias,
            grad: &gb,
            state: &mut sb,
        },
    ];
    b.update_layer(UpdateStep::Adam(hyper), layer)
        .expect("update");
    let shrink = 1.0 - lr * decay;
    let want: Vec<f32> = w0.iter().map(|v| v * shrink).collect();
    assert_eq!(b.read(&w).expect("read"), want, "the weights shrink");
    assert_eq!(b.read(&bias).expect("read"), b0, "the biases stay");
}

/// The whole model: every parameter gradient of a 3-layer MLP under `loss` (softmax
/// cross-entropy over 4 classes, or the mean squared error of one target), against central
/// differences of an f64 reference of the same network.
fn whole_model_case(b: &mut dyn Backend, loss_kind: Loss) {
    let outputs = match loss_kind {
        Loss::SoftmaxCrossEntropy => 4,
        Loss::MeanSquaredError => 1,
    };
    for activation in [Activation::Relu, Activation::Tanh, Activation::Sigmoid] {
        let spec = ModelSpec {
            conv: None,
            list: None,
            layers: vec![3, 7, 5, outputs],
            activation,
            loss: loss_kind,
        };
        let rows = 6;
        let mut model = Network::new(b, &spec, OptimizerKind::Sgd, rows, 42).expect("model");
        let mut rng = Rng64::new(9);
        let x = rng.vec(rows * 3, 1.5);
        let targets: Vec<usize> = (0..rows).map(|r| r % 4).collect();
        // Class indices, or real targets around the outputs' scale.
        let y64: Vec<f64> = match loss_kind {
            Loss::SoftmaxCrossEntropy => targets.iter().map(|&t| t as f64).collect(),
            Loss::MeanSquaredError => rng.vec(rows, 1.5),
        };
        let y = to_f32(&y64);
        let params = gradient_check_parameters(&mut model, b);
        model.load_batch(b, &to_f32(&x), &y).expect("batch");
        model.forward(b).expect("forward");
        model.backward(b).expect("backward");
        let grads = model.read_gradients(b).expect("grads");
        let layers = spec.layers.clone();
        let loss = |params: &Params64| {
            let mut h = x.clone();
            for (l, (w, bias)) in params.iter().enumerate() {
                let act = if l + 1 == params.len() {
                    Activation::Identity
                } else {
                    activation
                };
                h = dense64(&h, w, bias, layers[l], layers[l + 1], act);
            }
            match loss_kind {
                Loss::SoftmaxCrossEntropy => cross_entropy64(&h, &targets, 4),
                Loss::MeanSquaredError => mse64(&h, &y64),
            }
        };
        let name = activation.as_str();
        assert_layer_gradients(name, &grads, &params, loss, (H, ABS, REL));
    }
}

fn whole_model(b: &mut dyn Backend) {
    whole_model_case(b, Loss::SoftmaxCrossEntropy);
}
fn whole_model_regression(b: &mut dyn Backend) {
    whole_model_case(b, Loss::MeanSquaredError);
}

on_both_devices! {
    dense_identity_gradients => super::dense_identity;
    dense_relu_gradients => super::dense_relu;
    dense_tanh_gradients => super::dense_tanh;
    dense_sigmoid_gradients => super::dense_sigmoid;
    dense_wide_tanh_gradients => super::dense_wide_tanh;
    softmax_cross_entropy_gradients => super::softmax_cross_entropy;
    mse_loss_gradients => super::mse_loss;
    sgd_follows_the_gradient => super::sgd;
    momentum_follows_the_gradient => super::momentum;
    adam_follows_the_gradient => super::adam;
    adamw_follows_the_gradient_and_decays => super::adamw;
    adamw_decays_only_the_weights => super::adamw_decays_the_weights_not_the_biases;
    whole_model_gradients => super::whole_model;
    whole_model_regression_gradients => super::whole_model_regression;
}
